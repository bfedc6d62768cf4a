//! The gateway modules' rows of the directive table (`fastcgi_*`,
//! `uwsgi_*`, `scgi_*`: `crate::build::cgi`), kept beside
//! [`crate::table::TABLE`] and searched after it. The three modules share
//! the shape; their `*_pass` is a location's content handler (never on
//! the static fast path), the rest shapes only the requests they pass.
//! `*_cache*`, `*_store*`, `*_bind` and the socket options have no row
//! (refused by name until they land).

use crate::build::Handler;
use crate::build::cgi;
use crate::fast::Fast::{self, *};
use crate::table::{Args, Spec, ctx::*};

const ONE: Args = Args::Range(1, 1);
const TWO: Args = Args::Range(2, 2);
const PARAM: Args = Args::Range(2, 3);
const MORE: Args = Args::AtLeast(1);

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

/// The rows every gateway module has, `$p` its prefix and `$m` its
/// handlers' module in `crate::build::cgi`.
macro_rules! common_rows {
    ($p:literal, $m:ident) => {
        &[
            row(
                concat!($p, "_pass"),
                LOCATION | LIF,
                ONE,
                Handler::Loc(cgi::$m::pass),
                Never,
            ),
            row(
                concat!($p, "_param"),
                HSL,
                PARAM,
                Handler::Loc(cgi::$m::param),
                Neutral,
            ),
            row(
                concat!($p, "_connect_timeout"),
                HSL,
                ONE,
                Handler::Loc(cgi::$m::shared),
                Neutral,
            ),
            row(
                concat!($p, "_send_timeout"),
                HSL,
                ONE,
                Handler::Loc(cgi::$m::shared),
                Neutral,
            ),
            row(
                concat!($p, "_read_timeout"),
                HSL,
                ONE,
                Handler::Loc(cgi::$m::shared),
                Neutral,
            ),
            row(
                concat!($p, "_next_upstream"),
                HSL,
                MORE,
                Handler::Loc(cgi::$m::shared),
                Neutral,
            ),
            row(
                concat!($p, "_next_upstream_tries"),
                HSL,
                ONE,
                Handler::Loc(cgi::$m::shared),
                Neutral,
            ),
            row(
                concat!($p, "_next_upstream_timeout"),
                HSL,
                ONE,
                Handler::Loc(cgi::$m::shared),
                Neutral,
            ),
            row(
                concat!($p, "_pass_request_headers"),
                HSL,
                ONE,
                Handler::Loc(cgi::$m::shared),
                Neutral,
            ),
            row(
                concat!($p, "_pass_request_body"),
                HSL,
                ONE,
                Handler::Loc(cgi::$m::shared),
                Neutral,
            ),
            row(
                concat!($p, "_intercept_errors"),
                HSL,
                ONE,
                Handler::Loc(cgi::$m::shared),
                Neutral,
            ),
            row(
                concat!($p, "_buffering"),
                HSL,
                ONE,
                Handler::Loc(cgi::$m::shared),
                Neutral,
            ),
            row(
                concat!($p, "_request_buffering"),
                HSL,
                ONE,
                Handler::Loc(cgi::$m::shared),
                Neutral,
            ),
            row(
                concat!($p, "_ignore_client_abort"),
                HSL,
                ONE,
                Handler::Loc(cgi::$m::shared),
                Neutral,
            ),
            row(
                concat!($p, "_limit_rate"),
                HSL,
                ONE,
                Handler::Loc(cgi::$m::shared),
                Neutral,
            ),
            row(
                concat!($p, "_buffer_size"),
                HSL,
                ONE,
                Handler::Loc(cgi::$m::shared),
                Neutral,
            ),
            row(
                concat!($p, "_hide_header"),
                HSL,
                ONE,
                Handler::Loc(cgi::$m::shared),
                Neutral,
            ),
            row(
                concat!($p, "_pass_header"),
                HSL,
                ONE,
                Handler::Loc(cgi::$m::shared),
                Neutral,
            ),
            row(
                concat!($p, "_ignore_headers"),
                HSL,
                MORE,
                Handler::Loc(cgi::$m::shared),
                Neutral,
            ),
            row(
                concat!($p, "_buffers"),
                HSL,
                TWO,
                Handler::Loc(cgi::$m::sizes),
                Neutral,
            ),
            row(
                concat!($p, "_busy_buffers_size"),
                HSL,
                ONE,
                Handler::Loc(cgi::$m::sizes),
                Neutral,
            ),
            row(
                concat!($p, "_max_temp_file_size"),
                HSL,
                ONE,
                Handler::Loc(cgi::$m::sizes),
                Neutral,
            ),
            row(
                concat!($p, "_temp_file_write_size"),
                HSL,
                ONE,
                Handler::Loc(cgi::$m::sizes),
                Neutral,
            ),
        ]
    };
}

static FASTCGI: &[Spec] = common_rows!("fastcgi", fastcgi);
static UWSGI: &[Spec] = common_rows!("uwsgi", uwsgi);
static SCGI: &[Spec] = common_rows!("scgi", scgi);

/// The module-specific rows.
static OWN: &[Spec] = &[
    row(
        "fastcgi_index",
        HSL,
        ONE,
        Handler::Loc(cgi::fastcgi_index),
        Neutral,
    ),
    row(
        "fastcgi_split_path_info",
        HSL,
        ONE,
        Handler::Loc(cgi::fastcgi_split_path_info),
        Neutral,
    ),
    row(
        "fastcgi_keep_conn",
        HSL,
        ONE,
        Handler::Loc(cgi::fastcgi_keep_conn),
        Neutral,
    ),
    row(
        "fastcgi_catch_stderr",
        HSL,
        ONE,
        Handler::Loc(cgi::fastcgi_catch_stderr),
        Neutral,
    ),
    row(
        "uwsgi_modifier1",
        HSL,
        ONE,
        Handler::Loc(cgi::uwsgi_modifier1),
        Neutral,
    ),
    row(
        "uwsgi_modifier2",
        HSL,
        ONE,
        Handler::Loc(cgi::uwsgi_modifier2),
        Neutral,
    ),
];

/// Every gateway row, in the order searched.
pub static TABLES: &[&[Spec]] = &[FASTCGI, UWSGI, SCGI, OWN];
