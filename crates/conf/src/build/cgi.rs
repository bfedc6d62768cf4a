//! The gateway modules' directives: `fastcgi_*` (`ngx_http_fastcgi_module`),
//! `uwsgi_*` (`ngx_http_uwsgi_module`) and `scgi_*`
//! (`ngx_http_scgi_module`). Their upstream settings are the proxy's
//! (`*_connect_timeout`, `*_buffering`, `*_next_upstream`...) and are read
//! by the proxy's own functions on the module's [`RawProxy`]; what is
//! theirs is the pass, the parameters and FastCGI's script name and
//! connection handling. The run-time side is `peregrine_core::gateway`.

use std::sync::Arc;

use super::Env;
use super::handlers::{arg, bufs, flag, msg, set, set_with, size};
use super::proxy::{self as px, RawProxy};
use super::raw::RawLoc;
use crate::cgi::{CgiConf, CgiParam, Gateway};
use crate::error::Result;
use crate::model::{ProxyPass, ProxyTarget, Regex};
use crate::syntax::Directive;

/// One level's settings of one gateway module as written.
#[derive(Debug, Clone, Default)]
pub struct RawCgi {
    pub up: RawProxy,
    pub params: Option<Vec<CgiParam>>,
    pub index: Option<String>,
    pub split_path_info: Option<Regex>,
    pub keep_conn: Option<bool>,
    pub catch_stderr: Option<Vec<String>>,
    pub modifier1: Option<u8>,
    pub modifier2: Option<u8>,
    /// `*_buffers`, `*_busy_buffers_size`, `*_max_temp_file_size`,
    /// `*_temp_file_write_size`: checked, kept, unused (the answer is
    /// streamed through one buffer, as the proxy's).
    pub buffers: Option<(usize, usize)>,
    pub busy_buffers_size: Option<usize>,
    pub max_temp_file_size: Option<usize>,
    pub temp_file_write_size: Option<usize>,
}

impl RawCgi {
    /// nginx's merge: everything inherits but the pass; the parameter
    /// list is a level's own or its parent's, whole.
    pub fn merge(&self, p: &CgiConf) -> CgiConf {
        CgiConf {
            up: Arc::new(self.up.merge(&p.up)),
            params: match &self.params {
                Some(own) => own.clone().into(),
                None => p.params.clone(),
            },
            index: self.index.clone().or_else(|| p.index.clone()),
            split_path_info: self
                .split_path_info
                .clone()
                .or_else(|| p.split_path_info.clone()),
            keep_conn: self.keep_conn.unwrap_or(p.keep_conn),
            catch_stderr: match &self.catch_stderr {
                Some(own) => own.clone().into(),
                None => p.catch_stderr.clone(),
            },
            modifier1: self.modifier1.unwrap_or(p.modifier1),
            modifier2: self.modifier2.unwrap_or(p.modifier2),
        }
    }
}

fn raw(l: &mut RawLoc, g: Gateway) -> &mut RawCgi {
    match g {
        Gateway::FastCgi => &mut l.fastcgi,
        Gateway::Uwsgi => &mut l.uwsgi,
        Gateway::Scgi => &mut l.scgi,
    }
}

/// `fastcgi_pass ADDRESS` (`ngx_http_fastcgi_pass`): `host:port`,
/// `unix:/path`, an `upstream` name, or variables evaluated per request;
/// uwsgi also takes `uwsgi://` (`suwsgi://` is TLS, not here yet).
fn pass(l: &mut RawLoc, d: &Directive, g: Gateway) -> Result<()> {
    let r = raw(l, g);
    if r.up.pass.is_some() {
        return Err(msg(d, format!("\"{}\" directive is duplicate", d.name)));
    }
    let url = arg(d, 0);
    let mut rest = url;
    if g == Gateway::Uwsgi {
        if let Some(s) = strip_scheme(url, "uwsgi://") {
            rest = s;
        } else if strip_scheme(url, "suwsgi://").is_some() {
            return Err(msg(
                d,
                "\"uwsgi_pass suwsgi://\" is not supported by Peregrine yet (TLS to upstreams)",
            ));
        }
    }
    let target = if rest.contains('$') {
        ProxyTarget::Vars
    } else {
        let (t, _) = px::parse_target(rest).map_err(|m| msg(d, format!("{m} in \"{url}\"")))?;
        t
    };
    r.up.pass = Some(Arc::new(ProxyPass {
        url: rest.to_string(),
        target,
        uri: None,
        tls: false,
    }));
    Ok(())
}

fn strip_scheme<'a>(url: &'a str, scheme: &str) -> Option<&'a str> {
    let head = url.get(..scheme.len())?;
    head.eq_ignore_ascii_case(scheme)
        .then(|| &url[scheme.len()..])
}

/// `fastcgi_param NAME VALUE [if_not_empty]` (`ngx_http_upstream_param_set_slot`).
fn param(l: &mut RawLoc, d: &Directive, g: Gateway) -> Result<()> {
    let if_not_empty = match d.args.get(2) {
        None => false,
        Some(a) if a == "if_not_empty" => true,
        Some(a) => return Err(msg(d, format!("invalid parameter \"{a}\""))),
    };
    raw(l, g)
        .params
        .get_or_insert_with(Vec::new)
        .push(CgiParam {
            name: arg(d, 0).to_string(),
            value: arg(d, 1).to_string(),
            if_not_empty,
        });
    Ok(())
}

/// `fastcgi_split_path_info REGEX` (`ngx_http_fastcgi_split_path_info`):
/// its two captures become `$fastcgi_script_name` and `$fastcgi_path_info`.
fn split_path_info(l: &mut RawLoc, d: &Directive) -> Result<()> {
    let re = Regex::new(arg(d, 0)).map_err(|e| msg(d, e.to_string()))?;
    set(&mut l.fastcgi.split_path_info, re, d)
}

/// `uwsgi_modifier1 N`: a number 0..255 (`ngx_conf_set_num_slot` into a
/// byte of the packet header).
fn modifier(d: &Directive) -> Result<u8> {
    arg(d, 0)
        .parse::<u8>()
        .map_err(|_| msg(d, format!("\"{}\" directive invalid number", d.name)))
}

/// The directive's name with the module's prefix as the proxy's, so the
/// proxy's functions read it (with nginx's messages in the real name).
fn shared(l: &mut RawLoc, d: &Directive, e: &Env<'_>, g: Gateway) -> Result<()> {
    let suffix = &d.name[g.prefix().len() + 1..];
    let f: fn(&mut RawLoc, &Directive, &Env<'_>) -> Result<()> = match suffix {
        "connect_timeout" => px::proxy_connect_timeout,
        "send_timeout" => px::proxy_send_timeout,
        "read_timeout" => px::proxy_read_timeout,
        "next_upstream" => px::proxy_next_upstream,
        "next_upstream_tries" => px::proxy_next_upstream_tries,
        "next_upstream_timeout" => px::proxy_next_upstream_timeout,
        "pass_request_headers" => px::proxy_pass_request_headers,
        "pass_request_body" => px::proxy_pass_request_body,
        "intercept_errors" => px::proxy_intercept_errors,
        "buffering" => px::proxy_buffering,
        "request_buffering" => px::proxy_request_buffering,
        "ignore_client_abort" => px::proxy_ignore_client_abort,
        "limit_rate" => px::proxy_limit_rate,
        "buffer_size" => px::proxy_buffer_size,
        "hide_header" => px::proxy_hide_header,
        "pass_header" => px::proxy_pass_header,
        "ignore_headers" => px::proxy_ignore_headers,
        _ => return Err(msg(d, format!("unknown directive \"{}\"", d.name))),
    };
    // The proxy's functions write `l.proxy`: lend them this module's.
    let mut own = std::mem::take(&mut raw(l, g).up);
    std::mem::swap(&mut l.proxy, &mut own);
    let r = f(l, d, e);
    std::mem::swap(&mut l.proxy, &mut own);
    raw(l, g).up = own;
    r
}

/// The sizes kept unused (see [`RawCgi::buffers`]).
fn sizes(l: &mut RawLoc, d: &Directive, g: Gateway) -> Result<()> {
    let r = raw(l, g);
    let suffix = &d.name[g.prefix().len() + 1..];
    match suffix {
        "buffers" => set_with(&mut r.buffers, d, || bufs(d)),
        "busy_buffers_size" => set_with(&mut r.busy_buffers_size, d, || size(d, arg(d, 0))),
        "max_temp_file_size" => set_with(&mut r.max_temp_file_size, d, || size(d, arg(d, 0))),
        _ => set_with(&mut r.temp_file_write_size, d, || size(d, arg(d, 0))),
    }
}

/// The handlers of one module, by name (the table's rows).
macro_rules! gateway_handlers {
    ($m:ident, $g:expr) => {
        pub mod $m {
            use super::*;
            pub fn pass(l: &mut RawLoc, d: &Directive, _: &Env<'_>) -> Result<()> {
                super::pass(l, d, $g)
            }
            pub fn param(l: &mut RawLoc, d: &Directive, _: &Env<'_>) -> Result<()> {
                super::param(l, d, $g)
            }
            pub fn shared(l: &mut RawLoc, d: &Directive, e: &Env<'_>) -> Result<()> {
                super::shared(l, d, e, $g)
            }
            pub fn sizes(l: &mut RawLoc, d: &Directive, _: &Env<'_>) -> Result<()> {
                super::sizes(l, d, $g)
            }
        }
    };
}

gateway_handlers!(fastcgi, Gateway::FastCgi);
gateway_handlers!(uwsgi, Gateway::Uwsgi);
gateway_handlers!(scgi, Gateway::Scgi);

pub fn fastcgi_index(l: &mut RawLoc, d: &Directive, _: &Env<'_>) -> Result<()> {
    set(&mut l.fastcgi.index, arg(d, 0).to_string(), d)
}

pub fn fastcgi_split_path_info(l: &mut RawLoc, d: &Directive, _: &Env<'_>) -> Result<()> {
    split_path_info(l, d)
}

pub fn fastcgi_keep_conn(l: &mut RawLoc, d: &Directive, _: &Env<'_>) -> Result<()> {
    set_with(&mut l.fastcgi.keep_conn, d, || flag(d))
}

pub fn fastcgi_catch_stderr(l: &mut RawLoc, d: &Directive, _: &Env<'_>) -> Result<()> {
    l.fastcgi
        .catch_stderr
        .get_or_insert_with(Vec::new)
        .push(arg(d, 0).to_string());
    Ok(())
}

pub fn uwsgi_modifier1(l: &mut RawLoc, d: &Directive, _: &Env<'_>) -> Result<()> {
    set_with(&mut l.uwsgi.modifier1, d, || modifier(d))
}

pub fn uwsgi_modifier2(l: &mut RawLoc, d: &Directive, _: &Env<'_>) -> Result<()> {
    set_with(&mut l.uwsgi.modifier2, d, || modifier(d))
}

/// After the whole `http { }` block: each gateway's host that names no
/// `upstream` must resolve, as `proxy_pass`'s ([`px::check_hosts`]).
pub fn check_hosts(
    conf: &crate::model::LocConf,
    upstreams: &[crate::model::UpstreamConf],
) -> Result<()> {
    for c in [&conf.fastcgi, &conf.uwsgi, &conf.scgi] {
        px::check_pass(c.up.pass.as_deref(), upstreams, "")?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uwsgi_scheme_is_optional_and_caseless() {
        assert_eq!(strip_scheme("uwsgi://h:1", "uwsgi://"), Some("h:1"));
        assert_eq!(strip_scheme("UWSGI://h:1", "uwsgi://"), Some("h:1"));
        assert_eq!(strip_scheme("h:1", "uwsgi://"), None);
    }

    #[test]
    fn params_inherit_whole() {
        let parent = RawCgi {
            params: Some(vec![CgiParam {
                name: "A".into(),
                value: "1".into(),
                if_not_empty: false,
            }]),
            ..RawCgi::default()
        }
        .merge(&CgiConf::base());
        let child = RawCgi::default().merge(&parent);
        assert_eq!(child.params.len(), 1);
        let own = RawCgi {
            params: Some(vec![CgiParam {
                name: "B".into(),
                value: "".into(),
                if_not_empty: true,
            }]),
            ..RawCgi::default()
        }
        .merge(&parent);
        assert_eq!(own.params.len(), 1);
        assert_eq!(own.params[0].name, "B");
    }
}
