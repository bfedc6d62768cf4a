//! The merged settings of the gateway modules nginx builds on its upstream
//! machinery besides the proxy: FastCGI (`ngx_http_fastcgi_module`), uwsgi
//! (`ngx_http_uwsgi_module`) and SCGI (`ngx_http_scgi_module`). They share
//! the proxy's upstream settings (timeouts, buffering, `*_next_upstream`,
//! hidden and passed headers: one [`ProxyConf`] each) and add the
//! parameters they send instead of an HTTP head. Read by
//! `crate::build::cgi`.

use std::sync::Arc;

use crate::model::{ProxyConf, Regex};

/// Which gateway protocol a location speaks upstream.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Gateway {
    FastCgi,
    Uwsgi,
    Scgi,
}

impl Gateway {
    /// The directives' prefix (`fastcgi`, `uwsgi`, `scgi`).
    pub fn prefix(self) -> &'static str {
        match self {
            Gateway::FastCgi => "fastcgi",
            Gateway::Uwsgi => "uwsgi",
            Gateway::Scgi => "scgi",
        }
    }

    /// The scheme nginx shows in the error log's `upstream: "..."`.
    pub fn scheme(self) -> &'static str {
        match self {
            Gateway::FastCgi => "fastcgi://",
            Gateway::Uwsgi => "uwsgi://",
            Gateway::Scgi => "scgi://",
        }
    }
}

/// One `fastcgi_param NAME VALUE [if_not_empty]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CgiParam {
    pub name: String,
    /// With variables.
    pub value: String,
    /// Sent only when the value is not empty.
    pub if_not_empty: bool,
}

/// One gateway module's merged settings of one level.
#[derive(Debug, Clone)]
pub struct CgiConf {
    /// The upstream settings shared with the proxy: `up.pass` is
    /// `fastcgi_pass` (not inherited), the timeouts, buffering,
    /// `*_next_upstream*`, `*_hide_header`, `*_pass_header`,
    /// `*_ignore_headers`, `*_intercept_errors`, `*_pass_request_*`.
    pub up: Arc<ProxyConf>,
    /// `*_param`s in effect: a level's own list, else its parent's
    /// (nginx inherits the array only where a level sets none).
    pub params: Arc<[CgiParam]>,
    /// `fastcgi_index`: appended to a URI ending in `/` for
    /// `$fastcgi_script_name`.
    pub index: Option<String>,
    /// `fastcgi_split_path_info`: two captures, the script and the path info.
    pub split_path_info: Option<Regex>,
    /// `fastcgi_keep_conn`: `FCGI_KEEP_CONN` and the keepalive pool.
    pub keep_conn: bool,
    /// `fastcgi_catch_stderr`: a STDERR text containing one of these is
    /// an invalid answer (next upstream or 502).
    pub catch_stderr: Arc<[String]>,
    /// `uwsgi_modifier1` and `uwsgi_modifier2`.
    pub modifier1: u8,
    pub modifier2: u8,
}

impl CgiConf {
    /// A level's settings before any directive (nginx's create/merge
    /// defaults): the proxy's upstream defaults without its request
    /// headers and redirects, which only the proxy uses.
    pub fn base() -> CgiConf {
        let up = ProxyConf {
            set_headers: Arc::from([]),
            redirect: crate::model::ProxyRedirect::Off,
            ..ProxyConf::default()
        };
        CgiConf {
            up: Arc::new(up),
            params: Arc::from([]),
            index: None,
            split_path_info: None,
            keep_conn: false,
            catch_stderr: Arc::from([]),
            modifier1: 0,
            modifier2: 0,
        }
    }
}

impl Default for CgiConf {
    fn default() -> Self {
        CgiConf::base()
    }
}
