//! The upstream cache's rows of the directive table (`proxy_cache*`,
//! `proxy_no_cache` and the gateways' twins: `crate::build::cache`), kept
//! beside [`crate::table::TABLE`] and searched after it. A cached answer
//! is an upstream's: none of them is on the static fast path's way (the
//! pass that uses them is `Never`), so they are `Neutral`.

use crate::build::Handler;
use crate::build::cache;
use crate::fast::Fast::{self, *};
use crate::table::{Args, Spec, ctx::*};

const ONE: Args = Args::Range(1, 1);
const MORE: Args = Args::AtLeast(1);
const PATH: Args = Args::AtLeast(2);

const fn row(name: &'static str, contexts: u16, args: Args, handler: Handler, fast: Fast) -> Spec {
    Spec {
        name,
        contexts,
        args,
        block: false,
        handler,
        fast,
    }
}

/// The rows each module has, `$p` its prefix.
macro_rules! cache_rows {
    ($p:literal) => {
        &[
            row(
                concat!($p, "_cache_path"),
                HTTP,
                PATH,
                Handler::Loc(cache::path),
                Neutral,
            ),
            row(
                concat!($p, "_cache"),
                HSL,
                ONE,
                Handler::Loc(cache::directive),
                Neutral,
            ),
            row(
                concat!($p, "_cache_key"),
                HSL,
                ONE,
                Handler::Loc(cache::directive),
                Neutral,
            ),
            row(
                concat!($p, "_cache_valid"),
                HSL,
                MORE,
                Handler::Loc(cache::directive),
                Neutral,
            ),
            row(
                concat!($p, "_cache_methods"),
                HSL,
                MORE,
                Handler::Loc(cache::directive),
                Neutral,
            ),
            row(
                concat!($p, "_cache_min_uses"),
                HSL,
                ONE,
                Handler::Loc(cache::directive),
                Neutral,
            ),
            row(
                concat!($p, "_cache_bypass"),
                HSL,
                MORE,
                Handler::Loc(cache::directive),
                Neutral,
            ),
            row(
                concat!($p, "_no_cache"),
                HSL,
                MORE,
                Handler::Loc(cache::directive),
                Neutral,
            ),
            row(
                concat!($p, "_cache_use_stale"),
                HSL,
                MORE,
                Handler::Loc(cache::directive),
                Neutral,
            ),
            row(
                concat!($p, "_cache_revalidate"),
                HSL,
                ONE,
                Handler::Loc(cache::directive),
                Neutral,
            ),
            row(
                concat!($p, "_cache_background_update"),
                HSL,
                ONE,
                Handler::Loc(cache::directive),
                Neutral,
            ),
            row(
                concat!($p, "_cache_lock"),
                HSL,
                ONE,
                Handler::Loc(cache::directive),
                Neutral,
            ),
            row(
                concat!($p, "_cache_lock_timeout"),
                HSL,
                ONE,
                Handler::Loc(cache::directive),
                Neutral,
            ),
            row(
                concat!($p, "_cache_lock_age"),
                HSL,
                ONE,
                Handler::Loc(cache::directive),
                Neutral,
            ),
            row(
                concat!($p, "_cache_max_range_offset"),
                HSL,
                ONE,
                Handler::Loc(cache::directive),
                Neutral,
            ),
        ]
    };
}

static PROXY: &[Spec] = cache_rows!("proxy");
static FASTCGI: &[Spec] = cache_rows!("fastcgi");
static UWSGI: &[Spec] = cache_rows!("uwsgi");
static SCGI: &[Spec] = cache_rows!("scgi");

/// The proxy's own: a HEAD is sent as GET to fill the cache.
static OWN: &[Spec] = &[row(
    "proxy_cache_convert_head",
    HSL,
    ONE,
    Handler::Loc(cache::directive),
    Neutral,
)];

/// Every cache row, in the order searched.
pub static TABLES: &[&[Spec]] = &[PROXY, FASTCGI, UWSGI, SCGI, OWN];
