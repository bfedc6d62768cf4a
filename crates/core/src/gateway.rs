//! The gateway modules' content handler (`ngx_http_fastcgi_handler`,
//! `ngx_http_uwsgi_handler`, `ngx_http_scgi_handler`): the parameters
//! (`*_param`, then the client's headers as `HTTP_*`) encoded in the
//! module's record format and handed to the engine as a [`ProxyJob`] of
//! that [`Proto`], on the proxy's upstream machinery. Also
//! `$fastcgi_script_name` and `$fastcgi_path_info`
//! (`fastcgi_split_path_info`, `fastcgi_index`).

use std::borrow::Cow;
use std::sync::Arc;

use peregrine_conf::cgi::{CgiConf, Gateway};
use peregrine_conf::model::{LocConf, ProxyTarget};

use crate::http::{Ctx, HttpCore, Step};
use crate::proxy::{JobBody, LateParams, Proto, ProxyJob, UpstreamVars};
use crate::response::ErrorNote;
use crate::special::Special;
use crate::vars::VarCtx;

/// The largest uwsgi packet: its size is a 16-bit field
/// (`ngx_http_uwsgi_create_request`: "uwsgi request is too big").
pub const UWSGI_MAX_PACKET: usize = u16::MAX as usize;

/// The gateway a location passes to, if any (at most one has a pass: the
/// content handler is one per location in nginx).
#[inline]
pub(crate) fn which(conf: &LocConf) -> Option<Gateway> {
    if conf.fastcgi.up.pass.is_some() {
        Some(Gateway::FastCgi)
    } else if conf.uwsgi.up.pass.is_some() {
        Some(Gateway::Uwsgi)
    } else if conf.scgi.up.pass.is_some() {
        Some(Gateway::Scgi)
    } else {
        None
    }
}

pub(crate) fn conf_of(conf: &LocConf, g: Gateway) -> &Arc<CgiConf> {
    match g {
        Gateway::FastCgi => &conf.fastcgi,
        Gateway::Uwsgi => &conf.uwsgi,
        Gateway::Scgi => &conf.scgi,
    }
}

/// The script name and path info of `uri` (`ngx_http_fastcgi_split`):
/// the regex's two captures, else the whole URI and nothing.
fn split<'u>(uri: &'u str, f: &CgiConf) -> (Cow<'u, str>, Cow<'u, str>) {
    if let Some(re) = &f.split_path_info
        && let Some(caps) = re.captures(uri)
        && caps.len() >= 3
    {
        return (Cow::Owned(caps[1].clone()), Cow::Owned(caps[2].clone()));
    }
    (Cow::Borrowed(uri), Cow::Borrowed(""))
}

/// `$fastcgi_script_name` (with `fastcgi_index` after a `/`) and
/// `$fastcgi_path_info`.
pub(crate) fn push_var(v: &VarCtx<'_>, out: &mut String, name: &str) {
    let f = &v.conf.fastcgi;
    let (script, info) = split(v.uri, f);
    if name == "fastcgi_path_info" {
        out.push_str(&info);
        return;
    }
    out.push_str(&script);
    if script.ends_with('/')
        && let Some(i) = &f.index
    {
        out.push_str(i);
    }
}

/// A parameter whose value waits for the body's length.
fn waits_for_length(template: &str) -> bool {
    template.contains("content_length")
}

/// The parameters as (name, value) pairs, in the order nginx sends them:
/// the `*_param`s (an `if_not_empty` one only with a value, `expand`
/// giving parameter `i`'s value), then the client's headers unless a
/// parameter of the same `HTTP_` name was set; repeated headers joined by
/// `, ` (`; ` for Cookie), as current nginx.
fn pairs(
    ctx: &Ctx<'_>,
    c: &CgiConf,
    expand: &mut dyn FnMut(usize, &str) -> String,
) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut out: Vec<(Vec<u8>, Vec<u8>)> = Vec::with_capacity(c.params.len() + 16);
    for (i, p) in c.params.iter().enumerate() {
        let val = expand(i, &p.value);
        if p.if_not_empty && val.is_empty() {
            continue;
        }
        out.push((p.name.as_bytes().to_vec(), val.into_bytes()));
    }
    if c.up.pass_request_headers {
        let set = out.len();
        let mut headers: Vec<(Vec<u8>, Vec<u8>)> = Vec::new();
        ctx.req.headers.each(&mut |n, val| {
            let mut name = b"HTTP_".to_vec();
            name.extend(n.bytes().map(|b| match b {
                b'-' => b'_',
                b => b.to_ascii_uppercase(),
            }));
            if out[..set].iter().any(|(p, _)| *p == name) {
                return;
            }
            match headers.iter_mut().find(|(h, _)| *h == name) {
                Some((_, prev)) => {
                    let sep: &[u8] = if n.eq_ignore_ascii_case("cookie") {
                        b"; "
                    } else {
                        b", "
                    };
                    prev.extend_from_slice(sep);
                    prev.extend_from_slice(val);
                }
                None => headers.push((name, val.to_vec())),
            }
        });
        out.extend(headers);
    }
    out
}

/// The request's records before its body: FastCGI's `BEGIN_REQUEST` and
/// `PARAMS`; uwsgi's packet header and vars; SCGI's pairs (the engine
/// puts `CONTENT_LENGTH` first and the netstring around them once the
/// body's length is known). `Err` in nginx's words.
fn encode(g: Gateway, c: &CgiConf, pairs: &[(Vec<u8>, Vec<u8>)]) -> Result<Vec<u8>, String> {
    let mut out = Vec::with_capacity(1024);
    match g {
        Gateway::FastCgi => {
            let id = peregrine_fastcgi::NGINX_REQUEST_ID;
            peregrine_fastcgi::begin_request(&mut out, id, c.keep_conn);
            let mut enc = peregrine_fastcgi::ParamsEncoder::new(&mut out, id);
            for (n, v) in pairs {
                enc.push(n, v).map_err(|e| e.to_string())?;
            }
            enc.finish();
        }
        Gateway::Uwsgi => {
            out.extend_from_slice(&[c.modifier1, 0, 0, c.modifier2]);
            for (n, v) in pairs {
                for part in [n, v] {
                    let len = u16::try_from(part.len())
                        .map_err(|_| "uwsgi request is too big".to_string())?;
                    out.extend_from_slice(&len.to_le_bytes());
                    out.extend_from_slice(part);
                }
            }
            let size = out.len() - 4;
            if size > UWSGI_MAX_PACKET {
                return Err(format!("uwsgi request is too big: {size}"));
            }
            out[1..3].copy_from_slice(&(size as u16).to_le_bytes());
        }
        Gateway::Scgi => {
            for (n, v) in pairs {
                out.extend_from_slice(n);
                out.push(0);
                out.extend_from_slice(v);
                out.push(0);
            }
        }
    }
    Ok(out)
}

impl HttpCore {
    /// The content handler of a location with `fastcgi_pass`, `uwsgi_pass`
    /// or `scgi_pass`.
    pub(crate) fn gateway(&mut self, ctx: &mut Ctx<'_>, g: Gateway) -> Step {
        let c = Arc::clone(conf_of(&ctx.conf, g));
        let Some(pass) = c.up.pass.clone() else {
            return Step::Special(Special::status(500));
        };
        let (target, vars) = match &pass.target {
            ProxyTarget::Vars => {
                let url = ctx.vars().expand(&pass.url);
                let rest = match g {
                    Gateway::Uwsgi => url.strip_prefix("uwsgi://").unwrap_or(&url),
                    _ => &url,
                };
                match peregrine_conf::build::proxy::parse_target(rest) {
                    Ok((t, _)) => (t, true),
                    Err(m) => {
                        self.note_failure(ErrorNote::Upstream(format!(
                            "{m} in upstream \"{rest}\""
                        )));
                        return Step::Special(Special::status(500));
                    }
                }
            }
            t => (t.clone(), false),
        };
        let resolver = ctx.conf.resolver.is_some();
        let (target, host, port) = match self.target_of(&target, vars, resolver) {
            Ok(t) => t,
            Err(host) => {
                self.note_failure(ErrorNote::Upstream(format!(
                    "no resolver defined to resolve {host}"
                )));
                return Step::Special(Special::status(502));
            }
        };
        let uv = UpstreamVars {
            proxy_host: host.clone(),
            proxy_port: port.clone(),
            ..UpstreamVars::default()
        };
        let v = VarCtx {
            upstream: Some(&uv),
            ..ctx.vars()
        };
        let body = if c.up.pass_request_body
            && (ctx.req.content_length.is_some_and(|n| n > 0)
                || ctx.req.headers.get("Transfer-Encoding").is_some())
        {
            JobBody::Client
        } else {
            JobBody::None
        };
        // A chunked body read whole first: `$content_length` is known
        // only then (uwsgi and SCGI always read such a body whole).
        let late_length = body == JobBody::Client
            && ctx.req.content_length.is_none()
            && (c.up.request_buffering || g != Gateway::FastCgi)
            && c.params.iter().any(|p| waits_for_length(&p.value));
        let mut kept = Vec::new();
        let list = pairs(ctx, &c, &mut |_, t| {
            let val = v.expand(t);
            if late_length {
                kept.push((!waits_for_length(t)).then(|| val.clone()));
            }
            val
        });
        let late = late_length.then(|| Box::new(LateParams { values: kept }));
        let head = match encode(g, &c, &list) {
            Ok(h) => h,
            Err(m) => {
                self.note_failure(ErrorNote::Upstream(m));
                return Step::Special(Special::status(500));
            }
        };
        let hash_key = match &target {
            crate::proxy::Target::Group(i) => self.upstreams[*i]
                .hash_key
                .as_ref()
                .map(|k| v.expand(k).into_bytes()),
            _ => None,
        };
        let method = ctx.req.method_name;
        // The gateways' key has no default: nginx warns at load and keys
        // every answer by "".
        let cache = crate::cache::decide(
            &self.caches,
            &c.up.cache,
            method,
            ctx.req.header("Range"),
            "",
            &|t| v.expand(t),
            peregrine_codec::date::unix_secs(ctx.now),
        );
        let job = ProxyJob {
            err_status: ctx.err_status,
            limits: ctx.limits,
            conf: ctx.conf.clone(),
            server: Arc::clone(&self.servers[ctx.server].conf),
            server_index: ctx.server,
            target,
            proxy_host: host,
            proxy_port: port,
            head,
            body,
            head_request: method.eq_ignore_ascii_case("HEAD"),
            idempotent: crate::proxy::idempotent(method),
            uri: ctx.uri.to_string(),
            args: ctx.args.as_deref().map(str::to_string),
            name_len: ctx.name_len,
            hash_key,
            redirects: Vec::new(),
            cookies: None,
            origin: ctx.origin(),
            proto: match g {
                Gateway::FastCgi => Proto::FastCgi,
                Gateway::Uwsgi => Proto::Uwsgi,
                Gateway::Scgi => Proto::Scgi,
            },
            tls: None,
            cache: crate::cache::CacheSlot(cache),
            late,
            sets: ctx.sets.values.clone(),
        };
        Step::Upstream(Box::new(job))
    }

    /// The gateway's records built again once the body was read whole
    /// ([`LateParams`], made here): `up.request_body_len` is the body's length for
    /// `$content_length`. `Err` in nginx's words (a uwsgi packet grown
    /// over its size field).
    pub fn late_gateway_head(
        &mut self,
        job: &mut ProxyJob,
        conn: &crate::ConnInfo,
        req: &peregrine_codec::Request,
        now: std::time::SystemTime,
        up: &UpstreamVars,
    ) -> Result<(), String> {
        let Some(late) = job.late.take() else {
            return Ok(());
        };
        let g = match job.proto {
            Proto::FastCgi => Gateway::FastCgi,
            Proto::Uwsgi => Gateway::Uwsgi,
            Proto::Scgi => Gateway::Scgi,
            Proto::Http => return Ok(()),
        };
        let servers = self.servers.clone();
        let Some(srv) = servers.get(job.server_index) else {
            return Ok(());
        };
        let c = Arc::clone(conf_of(&job.conf, g));
        let view = crate::proxy::view_of(req);
        let ctx = self.job_ctx(srv, job, &view, conn, now, up);
        let v = ctx.vars();
        let list = pairs(&ctx, &c, &mut |i, t| match late.values.get(i) {
            Some(Some(early)) => early.clone(),
            _ => v.expand(t),
        });
        let head = encode(g, &c, &list)?;
        job.head = head;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use peregrine_conf::cgi::CgiParam;
    use peregrine_conf::model::Regex;

    fn fcgi(split: Option<&str>, index: Option<&str>) -> CgiConf {
        CgiConf {
            split_path_info: split.map(|s| Regex::new(s).expect("regex")),
            index: index.map(str::to_string),
            ..CgiConf::base()
        }
    }

    #[test]
    fn split_path_info_as_debian_writes_it() {
        let f = fcgi(Some("^(.+?\\.php)(/.*)$"), Some("index.php"));
        let (s, i) = split("/a/b.php/c/d", &f);
        assert_eq!((&*s, &*i), ("/a/b.php", "/c/d"));
        let (s, i) = split("/a/", &f);
        assert_eq!((&*s, &*i), ("/a/", ""));
        let (s, i) = split("/x", &fcgi(None, None));
        assert_eq!((&*s, &*i), ("/x", ""));
    }

    #[test]
    fn uwsgi_packet_header_and_vars() {
        let c = CgiConf {
            modifier1: 5,
            modifier2: 7,
            params: Arc::from([CgiParam {
                name: "A".into(),
                value: "bc".into(),
                if_not_empty: false,
            }]),
            ..CgiConf::base()
        };
        let p = vec![(b"A".to_vec(), b"bc".to_vec())];
        let out = encode(Gateway::Uwsgi, &c, &p).expect("encode");
        assert_eq!(out, [5, 7, 0, 7, 1, 0, b'A', 2, 0, b'b', b'c']);
        let out = encode(Gateway::Scgi, &c, &p).expect("encode");
        assert_eq!(out, b"A\0bc\0");
    }

    #[test]
    fn uwsgi_refuses_a_packet_over_its_size_field() {
        let p = vec![
            (b"A".to_vec(), vec![b'x'; 40_000]),
            (b"B".to_vec(), vec![b'y'; 40_000]),
        ];
        let e = encode(Gateway::Uwsgi, &CgiConf::base(), &p).unwrap_err();
        assert!(e.starts_with("uwsgi request is too big"), "{e}");
    }
}
