use peregrine_conf::Regex;
use peregrine_conf::model::{CompressConf, GzipConf, GzipProxied, StaticMode};

use super::*;

fn gzip_conf() -> GzipConf {
    GzipConf {
        on: true,
        types: vec!["text/css".into(), "application/json".into()],
        min_length: 20,
        comp_level: 1,
        proxied: GzipProxied::default(),
        disable: Vec::new(),
        disable_msie6: false,
        vary: true,
        http_version: (1, 1),
        buffers: (32, 4096),
        static_: StaticMode::Off,
    }
}

fn other_conf(on: bool) -> CompressConf {
    CompressConf {
        on,
        types: vec!["text/css".into()],
        comp_level: 6,
        min_length: 20,
        static_: StaticMode::Off,
    }
}

fn req(ae: &str) -> RequestFacts<'static> {
    RequestFacts {
        accepted: Accepted::from_header(Some(ae)),
        http_version: (1, 1),
        ..RequestFacts::default()
    }
}

fn html() -> ResponseFacts<'static> {
    ResponseFacts {
        status: 200,
        content_type: Some("text/html"),
        content_length: Some(20_000),
        now: 1_796_037_047,
        ..ResponseFacts::default()
    }
}

/// Runs [`decide`] with gzip configured by `g` and brotli/zstd off.
fn gz_only(g: &GzipConf, r: &RequestFacts, resp: &ResponseFacts) -> Decision {
    let off = other_conf(false);
    decide(
        r,
        resp,
        &Policy {
            gzip: g,
            brotli: &off,
            zstd: &off,
        },
    )
}

const GZIP: Decision = Decision {
    coding: Some(Coding::Gzip),
    vary: true,
};
const VARY_ONLY: Decision = Decision {
    coding: None,
    vary: true,
};
const NOTHING: Decision = Decision {
    coding: None,
    vary: false,
};

#[test]
fn compresses_200_403_404_only() {
    let g = gzip_conf();
    for status in [200, 403, 404] {
        let resp = ResponseFacts { status, ..html() };
        assert_eq!(gz_only(&g, &req("gzip"), &resp), GZIP, "{status}");
    }
    for status in [201, 204, 206, 301, 304, 400, 500, 502] {
        let resp = ResponseFacts { status, ..html() };
        assert_eq!(gz_only(&g, &req("gzip"), &resp), NOTHING, "{status}");
    }
}

#[test]
fn gzip_off_does_nothing() {
    let g = GzipConf {
        on: false,
        ..gzip_conf()
    };
    assert_eq!(gz_only(&g, &req("gzip"), &html()), NOTHING);
}

#[test]
fn existing_content_encoding_is_left_alone() {
    let g = gzip_conf();
    let resp = ResponseFacts {
        content_encoding: Some("gzip"),
        ..html()
    };
    assert_eq!(gz_only(&g, &req("gzip"), &resp), NOTHING);
    let resp = ResponseFacts {
        content_encoding: Some(""),
        ..html()
    };
    assert_eq!(gz_only(&g, &req("gzip"), &resp), GZIP);
}

#[test]
fn types_text_html_always_and_star() {
    let g = gzip_conf();
    let with = |ct: Option<&'static str>| ResponseFacts {
        content_type: ct,
        ..html()
    };
    for ct in [
        "text/html",
        "TEXT/HTML; charset=utf-8",
        "text/css",
        "application/json ;x=y",
    ] {
        assert_eq!(gz_only(&g, &req("gzip"), &with(Some(ct))), GZIP, "{ct}");
    }
    for ct in [
        None,
        Some(""),
        Some("image/png"),
        Some("text/plain"),
        Some("text/htmlx"),
    ] {
        assert_eq!(gz_only(&g, &req("gzip"), &with(ct)), NOTHING, "{ct:?}");
    }
    let star = GzipConf {
        types: vec!["*".into()],
        ..gzip_conf()
    };
    for ct in [None, Some("image/png"), Some("application/octet-stream")] {
        assert_eq!(gz_only(&star, &req("gzip"), &with(ct)), GZIP, "{ct:?}");
    }
    // An empty list still has text/html.
    let none = GzipConf {
        types: Vec::new(),
        ..gzip_conf()
    };
    assert_eq!(gz_only(&none, &req("gzip"), &html()), GZIP);
    assert_eq!(
        gz_only(&none, &req("gzip"), &with(Some("text/css"))),
        NOTHING
    );
}

#[test]
fn min_length_applies_to_known_lengths_only() {
    let g = gzip_conf();
    let len = |l: Option<u64>| ResponseFacts {
        content_length: l,
        ..html()
    };
    // Below the minimum: no Vary either (nginx sets r->gzip_vary after it).
    assert_eq!(gz_only(&g, &req("gzip"), &len(Some(19))), NOTHING);
    assert_eq!(gz_only(&g, &req("gzip"), &len(Some(0))), NOTHING);
    assert_eq!(gz_only(&g, &req("gzip"), &len(Some(20))), GZIP);
    assert_eq!(gz_only(&g, &req("gzip"), &len(None)), GZIP);
    let zero = GzipConf {
        min_length: 0,
        ..gzip_conf()
    };
    assert_eq!(gz_only(&zero, &req("gzip"), &len(Some(0))), GZIP);
}

#[test]
fn http_version_threshold() {
    let g = gzip_conf();
    let v = |http_version| RequestFacts {
        http_version,
        ..req("gzip")
    };
    assert_eq!(gz_only(&g, &v((1, 0)), &html()), VARY_ONLY);
    assert_eq!(gz_only(&g, &v((0, 9)), &html()), VARY_ONLY);
    assert_eq!(gz_only(&g, &v((1, 1)), &html()), GZIP);
    assert_eq!(gz_only(&g, &v((2, 0)), &html()), GZIP);
    let g10 = GzipConf {
        http_version: (1, 0),
        ..gzip_conf()
    };
    assert_eq!(gz_only(&g10, &v((1, 0)), &html()), GZIP);
}

#[test]
fn not_accepted_still_varies() {
    let g = gzip_conf();
    for ae in ["", "*", "deflate", "gzip;q=0", "br"] {
        assert_eq!(gz_only(&g, &req(ae), &html()), VARY_ONLY, "{ae:?}");
    }
    let r = RequestFacts {
        accepted: Accepted::NONE,
        ..req("")
    };
    assert_eq!(gz_only(&g, &r, &html()), VARY_ONLY);
    let novary = GzipConf {
        vary: false,
        ..gzip_conf()
    };
    assert_eq!(gz_only(&novary, &req("br"), &html()), NOTHING);
    assert_eq!(
        gz_only(&novary, &req("gzip"), &html()),
        Decision {
            coding: Some(Coding::Gzip),
            vary: false
        }
    );
}

#[test]
fn gzip_disable_msie6() {
    let ie6 = "Mozilla/4.0 (compatible; MSIE 6.0; Windows NT 5.0)";
    let ie6sp2 = "Mozilla/4.0 (compatible; MSIE 6.0; Windows NT 5.1; SV1)";
    let g = GzipConf {
        disable_msie6: true,
        ..gzip_conf()
    };
    let ua = |u| RequestFacts {
        user_agent: Some(u),
        ..req("gzip")
    };
    assert_eq!(gz_only(&g, &ua(ie6), &html()), VARY_ONLY);
    assert_eq!(gz_only(&g, &ua(ie6sp2), &html()), GZIP);
    assert_eq!(gz_only(&g, &req("gzip"), &html()), GZIP);
    // Without the directive MSIE 6 gets gzip (verified against nginx 1.22).
    assert_eq!(gz_only(&gzip_conf(), &ua(ie6), &html()), GZIP);
}

#[test]
fn gzip_disable_regexes() {
    let g = GzipConf {
        disable: vec![
            Regex::new("(?i)curl/").unwrap(),
            Regex::new("^Bot").unwrap(),
        ],
        ..gzip_conf()
    };
    let ua = |u| RequestFacts {
        user_agent: Some(u),
        ..req("gzip")
    };
    assert_eq!(gz_only(&g, &ua("curl/8.0"), &html()), VARY_ONLY);
    assert_eq!(gz_only(&g, &ua("CURL/8.0"), &html()), VARY_ONLY);
    assert_eq!(gz_only(&g, &ua("Bot 1.0"), &html()), VARY_ONLY);
    assert_eq!(gz_only(&g, &ua("A Bot"), &html()), GZIP);
    assert_eq!(gz_only(&g, &ua("Mozilla/5.0"), &html()), GZIP);
    // No User-Agent: the regexes cannot match.
    assert_eq!(gz_only(&g, &req("gzip"), &html()), GZIP);
}

fn proxied(f: impl FnOnce(&mut GzipProxied)) -> GzipConf {
    let mut p = GzipProxied::default();
    f(&mut p);
    GzipConf {
        proxied: p,
        ..gzip_conf()
    }
}

fn via() -> RequestFacts<'static> {
    RequestFacts {
        via: true,
        ..req("gzip")
    }
}

#[test]
fn proxied_off_and_any() {
    // Default `gzip_proxied off`: no gzip through a proxy.
    assert_eq!(gz_only(&gzip_conf(), &via(), &html()), VARY_ONLY);
    // Without Via the setting is irrelevant.
    assert_eq!(gz_only(&gzip_conf(), &req("gzip"), &html()), GZIP);
    let any = proxied(|p| p.any = true);
    let resp = ResponseFacts {
        expires: Some("garbage"),
        etag: true,
        ..html()
    };
    assert_eq!(gz_only(&any, &via(), &resp), GZIP);
}

#[test]
fn proxied_auth() {
    let g = proxied(|p| p.auth = true);
    let auth = RequestFacts {
        authorization: true,
        ..via()
    };
    let resp = ResponseFacts {
        expires: Some("Thu, 01 Jan 2099 00:00:00 GMT"),
        ..html()
    };
    assert_eq!(gz_only(&g, &auth, &resp), GZIP);
    // Without Authorization, `auth` alone falls through to the other
    // checks: an Expires header declines (expired not set).
    assert_eq!(gz_only(&g, &via(), &resp), VARY_ONLY);
}

#[test]
fn proxied_expired() {
    let g = proxied(|p| p.expired = true);
    let exp = |e: &'static str| ResponseFacts {
        expires: Some(e),
        ..html()
    };
    // Past (relative to `now`) → compress; future or unparsable → not.
    assert_eq!(
        gz_only(&g, &via(), &exp("Thu, 01 Jan 1970 00:00:01 GMT")),
        GZIP
    );
    assert_eq!(
        gz_only(&g, &via(), &exp("Mon, 30 Nov 2026 11:10:46 GMT")),
        GZIP
    );
    assert_eq!(
        gz_only(&g, &via(), &exp("Mon, 30 Nov 2026 11:10:47 GMT")),
        VARY_ONLY
    );
    assert_eq!(
        gz_only(&g, &via(), &exp("Thu, 01 Jan 2099 00:00:00 GMT")),
        VARY_ONLY
    );
    assert_eq!(gz_only(&g, &via(), &exp("0")), VARY_ONLY);
    // The response's own Date is used when present.
    let with_date = ResponseFacts {
        date: Some("Fri, 01 Jan 2100 00:00:00 GMT"),
        ..exp("Thu, 01 Jan 2099 00:00:00 GMT")
    };
    assert_eq!(gz_only(&g, &via(), &with_date), GZIP);
    let bad_date = ResponseFacts {
        date: Some("nonsense"),
        ..exp("Thu, 01 Jan 1970 00:00:01 GMT")
    };
    assert_eq!(gz_only(&g, &via(), &bad_date), VARY_ONLY);
    // nginx's fall-through: no Expires, no Cache-Control → compress
    // (verified against nginx 1.22: `gzip_proxied expired` + Via).
    assert_eq!(gz_only(&g, &via(), &html()), GZIP);
    // Expires present but `expired` not set → no.
    let nc = proxied(|p| p.no_cache = true);
    let resp = ResponseFacts {
        cache_control: &["no-cache"],
        ..exp("Thu, 01 Jan 1970 00:00:01 GMT")
    };
    assert_eq!(gz_only(&nc, &via(), &resp), VARY_ONLY);
}

#[test]
fn proxied_cache_control_flags() {
    type SetFlag = fn(&mut GzipProxied);
    let cases: [(&str, SetFlag); 3] = [
        ("no-cache", |p| p.no_cache = true),
        ("no-store", |p| p.no_store = true),
        ("private", |p| p.private = true),
    ];
    for (name, set) in cases {
        let g = proxied(set);
        let values = [
            format!("max-age=0, {name}"),
            name.to_uppercase(),
            format!("{name} , x"),
        ];
        for v in &values {
            let cc = [v.as_str()];
            let resp = ResponseFacts {
                cache_control: &cc,
                ..html()
            };
            assert_eq!(gz_only(&g, &via(), &resp), GZIP, "{name}: {v}");
        }
        // Another directive, or the name with a value or as a prefix: no.
        for v in [
            "public",
            "max-age=60",
            &format!("{name}=\"x\""),
            &format!("{name}x"),
        ] {
            let cc = [v];
            let resp = ResponseFacts {
                cache_control: &cc,
                ..html()
            };
            assert_eq!(gz_only(&g, &via(), &resp), VARY_ONLY, "{name}: {v}");
        }
        // Found in a second Cache-Control header.
        let resp = ResponseFacts {
            cache_control: &["public", name],
            ..html()
        };
        assert_eq!(gz_only(&g, &via(), &resp), GZIP, "{name}: two headers");
    }
}

#[test]
fn proxied_no_last_modified_and_no_etag() {
    let g = proxied(|p| p.no_last_modified = true);
    assert_eq!(gz_only(&g, &via(), &html()), GZIP);
    let lm = ResponseFacts {
        last_modified: true,
        ..html()
    };
    assert_eq!(gz_only(&g, &via(), &lm), VARY_ONLY);
    let g = proxied(|p| p.no_etag = true);
    assert_eq!(gz_only(&g, &via(), &html()), GZIP);
    let et = ResponseFacts {
        etag: true,
        ..html()
    };
    assert_eq!(gz_only(&g, &via(), &et), VARY_ONLY);
    // A proxied response with both: `no_last_modified no_etag` declines it.
    let g = proxied(|p| {
        p.no_last_modified = true;
        p.no_etag = true;
    });
    let file = ResponseFacts {
        etag: true,
        last_modified: true,
        ..html()
    };
    assert_eq!(gz_only(&g, &via(), &file), VARY_ONLY);
}

#[test]
fn levels_come_from_the_policy() {
    let g = GzipConf {
        comp_level: 6,
        ..gzip_conf()
    };
    let br = CompressConf {
        comp_level: 11,
        ..other_conf(true)
    };
    let z = CompressConf {
        comp_level: u32::MAX,
        ..other_conf(true)
    };
    let p = Policy {
        gzip: &g,
        brotli: &br,
        zstd: &z,
    };
    assert_eq!(p.level(Coding::Gzip), 6);
    assert_eq!(p.level(Coding::Brotli), 11);
    assert_eq!(p.level(Coding::Zstd), i32::MAX);
    assert!(crate::Encoder::new(Coding::Zstd, p.level(Coding::Zstd)).is_err());
}

#[test]
fn cached_gzip_ok_is_reused() {
    let g = gzip_conf();
    let r = RequestFacts {
        gzip_tested: Some(false),
        ..req("gzip")
    };
    assert_eq!(gz_only(&g, &r, &html()), VARY_ONLY);
    // gzip_static's early test passed (no response headers then); the
    // filter does not re-test with the response's ETag.
    let g = proxied(|p| p.no_etag = true);
    let etag = ResponseFacts {
        etag: true,
        ..html()
    };
    assert_eq!(gz_only(&g, &via(), &etag), VARY_ONLY);
    let r = RequestFacts {
        gzip_tested: Some(true),
        ..via()
    };
    assert_eq!(gz_only(&g, &r, &etag), GZIP);
}

fn all_on(ae: &str, resp: &ResponseFacts) -> Decision {
    let g = gzip_conf();
    let on = other_conf(true);
    decide(
        &req(ae),
        resp,
        &Policy {
            gzip: &g,
            brotli: &on,
            zstd: &on,
        },
    )
}

#[test]
fn preference_between_codings() {
    let d = |ae| all_on(ae, &html()).coding;
    assert_eq!(d("gzip, deflate, br, zstd"), Some(Coding::Brotli));
    assert_eq!(d("gzip, zstd"), Some(Coding::Zstd));
    assert_eq!(d("gzip"), Some(Coding::Gzip));
    assert_eq!(d("gzip;q=1, br;q=0.5"), Some(Coding::Gzip));
    assert_eq!(d("gzip;q=0.5, br;q=0.5, zstd;q=0.5"), Some(Coding::Brotli));
    assert_eq!(d("gzip;q=0.5, br;q=0.4, zstd;q=0.6"), Some(Coding::Zstd));
    assert_eq!(d("br;q=0, zstd;q=0, gzip;q=0"), None);
    assert_eq!(d("identity"), None);
}

#[test]
fn brotli_and_zstd_ignore_gzip_only_rules() {
    let g = gzip_conf();
    let on = other_conf(true);
    let p = Policy {
        gzip: &g,
        brotli: &on,
        zstd: &on,
    };
    // Via with gzip_proxied off, HTTP/1.0: only gzip is ruled out.
    let r = RequestFacts {
        via: true,
        http_version: (1, 0),
        ..req("gzip, br")
    };
    assert_eq!(
        decide(&r, &html(), &p),
        Decision {
            coding: Some(Coding::Brotli),
            vary: true
        }
    );
    let r = RequestFacts {
        via: true,
        ..req("gzip")
    };
    assert_eq!(decide(&r, &html(), &p), VARY_ONLY);
}

#[test]
fn each_coding_has_its_own_types_and_min_length() {
    let g = GzipConf {
        min_length: 1000,
        ..gzip_conf()
    };
    let br = CompressConf {
        types: vec!["application/json".into()],
        ..other_conf(true)
    };
    let off = other_conf(false);
    let p = Policy {
        gzip: &g,
        brotli: &br,
        zstd: &off,
    };
    let small = ResponseFacts {
        content_length: Some(500),
        ..html()
    };
    assert_eq!(
        decide(&req("gzip, br"), &small, &p).coding,
        Some(Coding::Brotli)
    );
    let css = ResponseFacts {
        content_type: Some("text/css"),
        ..html()
    };
    assert_eq!(
        decide(&req("gzip, br"), &css, &p).coding,
        Some(Coding::Gzip)
    );
    // Only brotli passes its prechecks and the client refuses it: Vary
    // still comes from gzip_vary.
    let json = ResponseFacts {
        content_type: Some("application/json"),
        content_length: Some(500),
        ..html()
    };
    assert_eq!(decide(&req("gzip"), &json, &p), VARY_ONLY);
    assert_eq!(choose(&req("br"), &json, &p), Some(Coding::Brotli));
}

/// `may_change` is a shortcut of `decide`: whenever it says no, `decide`
/// answers "as is, no Vary", for every combination of filters on, Vary and
/// an eligible response, with and without `Accept-Encoding`.
#[test]
fn may_change_false_only_when_decide_changes_nothing() {
    let css = ResponseFacts {
        content_type: Some("text/css"),
        ..html()
    };
    for mask in 0..16u8 {
        let mut g = gzip_conf();
        g.on = mask & 1 != 0;
        g.vary = mask & 8 != 0;
        let (br, zs) = (other_conf(mask & 2 != 0), other_conf(mask & 4 != 0));
        let p = Policy {
            gzip: &g,
            brotli: &br,
            zstd: &zs,
        };
        for (has_ae, r) in [
            (false, RequestFacts::default()),
            (true, req("gzip, br, zstd")),
        ] {
            let d = decide(&r, &css, &p);
            if !p.may_change(has_ae) {
                assert_eq!((d.coding, d.vary), (None, false), "mask {mask} ae {has_ae}");
            }
        }
        assert_eq!(p.may_change(true), mask & 7 != 0, "mask {mask}");
    }
}
