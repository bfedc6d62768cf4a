//! `gzip_static`, `brotli_static`, `zstd_static`: serving a precompressed
//! sibling file (`FILE.gz`, `FILE.br`, `FILE.zst`).
//!
//! The three nginx handlers share one structure (ngx_http_gzip_static_module
//! and its copies in ngx_brotli and zstd-nginx-module): only `GET`/`HEAD`
//! of a URI not ending in `/`; with `on` the client must accept the coding
//! (for gzip: all of ngx_http_gzip_ok, including `gzip_proxied`,
//! `gzip_disable` and `gzip_http_version`), with `always` it is served
//! regardless. When the client does not accept it and `gzip_vary` is off,
//! the file is not even looked for. When the sibling exists and the mode is
//! `on`, the response varies on `Accept-Encoding` (`Vary` is added even if
//! the uncompressed file ends up served); with `always` it does not.
//!
//! Serving it (verified against nginx 1.22.1): status 200, the sibling's
//! size as `Content-Length`, the sibling's `Last-Modified` and (strong)
//! ETag, the `Content-Type` of the original name, `Content-Encoding` set,
//! no `Accept-Ranges`, and `Range` ignored.

use std::path::{Path, PathBuf};

use peregrine_conf::model::StaticMode;

use crate::coding::Coding;
use crate::decide::{Policy, RequestFacts, ResponseFacts, gzip_ok};

/// `path` with the coding's suffix appended (`/a/b.html` → `/a/b.html.gz`).
pub fn static_candidate(path: &Path, coding: Coding) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(coding.static_suffix());
    PathBuf::from(s)
}

/// One sibling to look for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StaticProbe {
    pub coding: Coding,
    /// Serve the sibling if it is a regular file. When `false` it is looked
    /// for only to decide `Vary`.
    pub serve: bool,
    /// If the sibling exists (whatever it is), the response varies on
    /// `Accept-Encoding` (effective only with `gzip_vary on`).
    pub vary_if_found: bool,
}

/// The siblings to look for, in order, before serving a static file.
///
/// Core's procedure, as nginx's handlers: for each probe, `stat` the
/// [`static_candidate`]. Missing (`ENOENT`, `ENOTDIR`, `ENAMETOOLONG`) or
/// unreadable → next probe. Found → if `vary_if_found`, remember to send
/// `Vary` (when `gzip_vary on`); if not `serve`, or a directory → next
/// probe; not a regular file → 404; else serve it as the module doc says
/// and stop. When no probe serves, serve the file normally and let
/// [`crate::decide`] compress it, passing [`StaticPlan::gzip_tested`] as
/// [`RequestFacts::gzip_tested`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StaticPlan {
    pub probes: Vec<StaticProbe>,
    /// ngx_http_gzip_ok's answer if `gzip_static on` computed it (with no
    /// response headers yet); the gzip filter reuses it.
    pub gzip_tested: Option<bool>,
}

/// Builds the plan for a request. `get_or_head`: the method is `GET` or
/// `HEAD`; `uri_ends_with_slash`: the (decoded) URI ends in `/`.
pub fn static_plan(
    req: &RequestFacts,
    policy: &Policy,
    get_or_head: bool,
    uri_ends_with_slash: bool,
) -> StaticPlan {
    let mut plan = StaticPlan::default();
    if !get_or_head || uri_ends_with_slash {
        return plan;
    }
    for coding in Coding::PREFERENCE {
        let mode = match coding {
            Coding::Gzip => policy.gzip.static_,
            Coding::Brotli => policy.brotli.static_,
            Coding::Zstd => policy.zstd.static_,
        };
        let accepted = match (mode, coding) {
            (StaticMode::Off, _) => continue,
            (StaticMode::Always, _) => true,
            (StaticMode::On, Coding::Gzip) => {
                let ok = gzip_ok(req, &ResponseFacts::default(), policy.gzip);
                plan.gzip_tested = Some(ok);
                ok
            }
            (StaticMode::On, _) => req.accepted.accepts(coding),
        };
        if !accepted && !policy.gzip.vary {
            continue;
        }
        plan.probes.push(StaticProbe {
            coding,
            serve: accepted,
            vary_if_found: mode == StaticMode::On,
        });
    }
    // Servable siblings first, by the client's preference (a stable sort
    // keeps br, zstd, gzip among equals).
    plan.probes.sort_by(|a, b| {
        let key = |p: &StaticProbe| (p.serve, req.accepted.q(p.coding));
        key(b)
            .partial_cmp(&key(a))
            .unwrap_or(std::cmp::Ordering::Equal)
    });
    plan
}

#[cfg(test)]
mod tests {
    use peregrine_conf::model::{CompressConf, GzipConf, GzipProxied};

    use super::*;
    use crate::coding::Accepted;

    fn gzip(static_: StaticMode, vary: bool) -> GzipConf {
        GzipConf {
            on: false,
            types: Vec::new(),
            min_length: 20,
            comp_level: 1,
            proxied: GzipProxied::default(),
            disable: Vec::new(),
            disable_msie6: false,
            vary,
            http_version: (1, 1),
            buffers: (32, 4096),
            static_,
        }
    }

    fn other(static_: StaticMode) -> CompressConf {
        CompressConf {
            on: false,
            types: Vec::new(),
            comp_level: 6,
            min_length: 20,
            static_,
        }
    }

    fn req(ae: &str) -> RequestFacts<'static> {
        RequestFacts {
            accepted: Accepted::from_header(Some(ae)),
            http_version: (1, 1),
            ..RequestFacts::default()
        }
    }

    fn probe(coding: Coding, serve: bool, vary_if_found: bool) -> StaticProbe {
        StaticProbe {
            coding,
            serve,
            vary_if_found,
        }
    }

    fn plan(g: &GzipConf, br: StaticMode, zstd: StaticMode, r: &RequestFacts) -> StaticPlan {
        let (br, zstd) = (other(br), other(zstd));
        static_plan(
            r,
            &Policy {
                gzip: g,
                brotli: &br,
                zstd: &zstd,
            },
            true,
            false,
        )
    }

    use StaticMode::{Always, Off, On};

    #[test]
    fn candidate_paths() {
        assert_eq!(
            static_candidate(Path::new("/srv/a.html"), Coding::Gzip),
            PathBuf::from("/srv/a.html.gz")
        );
        assert_eq!(
            static_candidate(Path::new("/srv/a.js"), Coding::Brotli),
            PathBuf::from("/srv/a.js.br")
        );
        assert_eq!(
            static_candidate(Path::new("a"), Coding::Zstd),
            PathBuf::from("a.zst")
        );
    }

    #[test]
    fn gzip_static_on() {
        let g = gzip(On, true);
        let p = plan(&g, Off, Off, &req("gzip"));
        assert_eq!(p.probes, vec![probe(Coding::Gzip, true, true)]);
        assert_eq!(p.gzip_tested, Some(true));
        // Not accepted, gzip_vary on: look only to decide Vary.
        let p = plan(&g, Off, Off, &req("deflate"));
        assert_eq!(p.probes, vec![probe(Coding::Gzip, false, true)]);
        assert_eq!(p.gzip_tested, Some(false));
        // Not accepted, gzip_vary off: do not look.
        let p = plan(&gzip(On, false), Off, Off, &req("deflate"));
        assert!(p.probes.is_empty());
        assert_eq!(p.gzip_tested, Some(false));
    }

    #[test]
    fn gzip_static_on_applies_gzip_ok_rules() {
        let g = gzip(On, true);
        // Via with gzip_proxied off (verified against nginx 1.22.1: the
        // uncompressed file is served, with Vary).
        let via = RequestFacts {
            via: true,
            ..req("gzip")
        };
        assert_eq!(
            plan(&g, Off, Off, &via).probes,
            vec![probe(Coding::Gzip, false, true)]
        );
        let old = RequestFacts {
            http_version: (1, 0),
            ..req("gzip")
        };
        assert_eq!(
            plan(&g, Off, Off, &old).probes,
            vec![probe(Coding::Gzip, false, true)]
        );
        // With a proxied flag, the empty early response falls through to ok.
        let g = GzipConf {
            proxied: GzipProxied {
                no_etag: true,
                ..GzipProxied::default()
            },
            ..g
        };
        assert_eq!(
            plan(&g, Off, Off, &via).probes,
            vec![probe(Coding::Gzip, true, true)]
        );
    }

    #[test]
    fn always_serves_without_vary() {
        let p = plan(&gzip(Always, false), Off, Off, &req(""));
        assert_eq!(p.probes, vec![probe(Coding::Gzip, true, false)]);
        assert_eq!(p.gzip_tested, None);
    }

    #[test]
    fn off_and_method_and_slash() {
        assert!(
            plan(&gzip(Off, true), Off, Off, &req("gzip"))
                .probes
                .is_empty()
        );
        let g = gzip(On, true);
        let (o, a) = (other(Off), other(Always));
        let pol = Policy {
            gzip: &g,
            brotli: &a,
            zstd: &o,
        };
        assert!(
            static_plan(&req("gzip, br"), &pol, false, false)
                .probes
                .is_empty()
        );
        assert!(
            static_plan(&req("gzip, br"), &pol, true, true)
                .probes
                .is_empty()
        );
        assert_eq!(
            static_plan(&req("gzip, br"), &pol, true, false)
                .probes
                .len(),
            2
        );
    }

    #[test]
    fn order_follows_client_preference() {
        let g = gzip(On, true);
        let p = plan(&g, On, On, &req("gzip, br, zstd"));
        let order: Vec<_> = p.probes.iter().map(|p| p.coding).collect();
        assert_eq!(order, [Coding::Brotli, Coding::Zstd, Coding::Gzip]);
        let p = plan(&g, On, On, &req("gzip, br;q=0.5, zstd;q=0.8"));
        let order: Vec<_> = p.probes.iter().map(|p| p.coding).collect();
        assert_eq!(order, [Coding::Gzip, Coding::Zstd, Coding::Brotli]);
        // Unservable probes go last.
        let p = plan(&g, On, Off, &req("gzip"));
        assert_eq!(
            p.probes,
            vec![
                probe(Coding::Gzip, true, true),
                probe(Coding::Brotli, false, true)
            ]
        );
    }
}
