use super::*;
use crate::table::TABLE;

#[test]
fn every_nginx_directive_has_one_status() {
    let names = nginx_names();
    assert!(names.len() > 500, "{}", names.len());
    for name in names {
        let s = status(name).unwrap_or_else(|| panic!("{name}"));
        let in_table = table::lookup(name).is_some();
        assert_eq!(s == Status::Refused, !in_table, "{name}");
    }
}

#[test]
fn every_table_row_is_nginx_or_peregrine_own() {
    for spec in TABLE {
        let nginx = entries(spec.name).next().is_some();
        let own = OWN.contains(&spec.name);
        assert!(
            nginx != own,
            "{}: nginx's {nginx}, Peregrine's {own}",
            spec.name
        );
    }
    for name in OWN {
        assert!(table::lookup(name).is_some(), "{name}");
    }
}

/// A row takes nginx's contexts, as far as Peregrine can be in them (inside
/// `if { }` nginx's own contexts apply, see `build::check`), and nginx's
/// argument counts and block-ness in each of those contexts.
#[test]
fn table_rows_agree_with_nginx() {
    let r = reachable() & !(ctx::SIF | ctx::LIF);
    for spec in TABLE {
        let nginx: Vec<_> = entries(spec.name).filter(|e| e.contexts & r != 0).collect();
        if nginx.is_empty() {
            continue;
        }
        let contexts = nginx.iter().fold(0, |acc, e| acc | e.contexts) & r;
        assert_eq!(spec.contexts & r, contexts, "contexts of {}", spec.name);
        for e in nginx {
            assert_eq!(spec.block, e.block(), "block of {}", spec.name);
            for n in 0..=arg::MAX_ARGS + 2 {
                assert_eq!(
                    spec.args.accepts(n),
                    e.accepts(n),
                    "{} with {n} arguments",
                    spec.name
                );
            }
        }
    }
}

#[test]
fn nginx_argument_counts() {
    let d = |args| NginxDirective {
        name: "x",
        contexts: ctx::HTTP,
        args,
        module: "m",
    };
    assert!(d(arg::FLAG).accepts(1) && !d(arg::FLAG).accepts(0) && !d(arg::FLAG).accepts(2));
    let t13 = d(arg::TAKE1 | arg::TAKE3);
    assert!(t13.accepts(1) && !t13.accepts(2) && t13.accepts(3) && !t13.accepts(0));
    assert!(d(arg::NOARGS | arg::BLOCK).accepts(0) && !d(arg::NOARGS).accepts(1));
    assert!(d(arg::MORE1).accepts(30) && !d(arg::MORE1).accepts(0));
    assert!(d(arg::MORE2).accepts(2) && !d(arg::MORE2).accepts(1));
    assert!(d(arg::ANY_ARGS).accepts(0) && d(arg::ANY_ARGS).accepts(9));
    // nginx checks the TAKEn bits only up to NGX_CONF_MAX_ARGS.
    assert!(d(0xff).accepts(7) && !d(0xff).accepts(8));
}

#[test]
fn upstream_entries_do_not_count_for_http_rows() {
    // keepalive_timeout has a row for http; upstream's own does not count.
    let ups = entries("keepalive_timeout")
        .find(|e| e.module == "http_upstream_keepalive")
        .expect("upstream's keepalive_timeout");
    assert!(!entry_has_row(ups));
    // The block reads its own directives: the module is there with the proxy.
    assert!(module_present("http_upstream_keepalive"));
    let http = entries("keepalive_timeout")
        .find(|e| e.module == "http_core")
        .expect("http's keepalive_timeout");
    assert!(entry_has_row(http));
}

#[test]
fn modules_present_and_missing() {
    assert!(module_present("http_gzip_static"));
    assert!(module_present("http_stub_status"));
    assert!(module_present("http_gzip_filter"));
    assert!(module_present("http_index"));
    assert!(module_present("http_rewrite"));
    assert_eq!(status("rewrite"), Some(Status::Implemented));
    assert!(module_present("http_proxy"));
    assert!(module_present("http_access"));
    assert!(module_present("http_map"));
    assert!(module_present("http_geo"));
    for m in ["http_limit_req", "http_limit_conn", "http_realip"] {
        assert!(module_present(m), "{m}");
    }
    assert!(module_present("http_ssl"));
    let (with, without) = configure_switches();
    assert!(with.contains(&"http_gzip_static") && with.contains(&"http_stub_status"));
    assert!(with.contains(&"http_ssl") && with.contains(&"http_v2"));
    assert!(!without.contains(&"http_proxy") && !without.contains(&"http_geo"));
    assert!(!without.contains(&"http_access") && !without.contains(&"http_map"));
    assert!(!without.contains(&"http_gzip") && !without.contains(&"http_rewrite"));
    // A switch is listed once.
    let mut all: Vec<_> = with.iter().chain(&without).collect();
    let n = all.len();
    all.dedup();
    assert_eq!(all.len(), n);
}

#[test]
fn load_module_names() {
    assert_eq!(loadable("ngx_http_gzip_static_module"), Loadable::BuiltIn);
    assert_eq!(loadable("ngx_http_brotli_filter_module"), Loadable::BuiltIn);
    assert_eq!(loadable("ngx_http_geoip_module"), Loadable::StockMissing);
    // Debian's: no directives outside stream { }, still nginx's.
    assert_eq!(loadable("ngx_stream_geoip_module"), Loadable::StockMissing);
    assert_eq!(loadable("ngx_stream_module"), Loadable::BuiltIn);
    assert_eq!(loadable("ngx_http_lua_module"), Loadable::Foreign);
    assert_eq!(loadable("libfoo"), Loadable::Foreign);
}

#[test]
fn removed_in_current_nginx_still_refused() {
    // `ssl on` is the one removed directive; Peregrine has a row for it
    // (real configurations use it), so it counts as implemented.
    assert!(entries("ssl").next().is_some());
    assert_eq!(status("ssl"), Some(Status::Implemented));
    assert_eq!(status("frobnicate"), None);
}
