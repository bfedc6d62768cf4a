//! `auth_request` and `auth_request_set` (`ngx_http_auth_request_module`):
//! the access phase makes a subrequest to the configured URI
//! (`filters::subrequest`, which runs a proxied one through the engine)
//! and its status decides: 2xx lets the request on, 401 (with the
//! subrequest's `WWW-Authenticate` challenges) and 403 are the answer,
//! anything else is 500 ("auth request unexpected status"). The
//! subrequest's body is not used. `auth_request_set` values are read in
//! the subrequest's context (its `$upstream_http_*`) and set in the
//! request's, whatever the status, as `ngx_http_auth_request_set_variables`
//! does before it looks at the status.

use std::borrow::Cow;

use peregrine_conf::model::{LogLevel, SetTarget};

use crate::filters::subrequest::{self, SubResponse};
use crate::http::{Ctx, HttpCore, Step};
use crate::special::Special;

impl HttpCore {
    /// The access check (`ngx_http_auth_request_handler`): `None` lets
    /// the request on, else the step that refuses it.
    pub(crate) fn auth_request(&mut self, ctx: &mut Ctx<'_>) -> Option<Step> {
        let uri = ctx.conf.auth_request.clone()?;
        let servers = self.servers.clone();
        let sub = subrequest::run(self, ctx, &servers, &uri);
        if self.has_subrequest() {
            // A proxied subrequest is still to run: this pass is dropped
            // and the request runs again with its answer.
            return Some(Step::Special(Special::status(500)));
        }
        if !ctx.conf.auth_request_set.is_empty() {
            self.auth_request_set(ctx, &servers, &uri, &sub);
        }
        match sub.status {
            200..=299 => None,
            403 => Some(Step::Special(Special::status(403))),
            401 => Some(Step::Special(Special {
                status: 401,
                www_authenticate: challenges(&sub),
                ..Special::default()
            })),
            s => {
                self.push_log_line(
                    LogLevel::Error,
                    format!("auth request unexpected status: {s}"),
                );
                Some(Step::Special(Special::status(500)))
            }
        }
    }

    /// `auth_request_set`: each value read in the subrequest's context,
    /// then all set in the request's.
    fn auth_request_set(
        &mut self,
        ctx: &mut Ctx<'_>,
        servers: &[crate::http::ServerRt],
        uri: &str,
        sub: &SubResponse,
    ) {
        let sets = ctx.conf.auth_request_set.clone();
        let values: Vec<(SetTarget, String)> = {
            let (path, args) = crate::http::split_args(uri);
            let mut sctx = HttpCore::sub_ctx(&servers[ctx.server], ctx, path, args);
            sctx.upstream = sub.upstream.as_ref();
            sets.iter()
                .map(|s| {
                    let v = crate::rewrite::eval::eval(self, &sctx, &s.value, false);
                    (s.target, v)
                })
                .collect()
        };
        for (target, v) in values {
            match target {
                SetTarget::Var(i) => ctx.sets.store(i, v),
                SetTarget::Args => ctx.args = Some(Cow::Owned(v)),
            }
        }
    }
}

/// The subrequest's `WWW-Authenticate` challenges, for the 401: its
/// upstream's when it was proxied, else its own response's; one field
/// each.
fn challenges(sub: &SubResponse) -> Vec<String> {
    match &sub.upstream {
        Some(up) => up
            .headers
            .iter()
            .filter(|(n, _)| up.head[n.clone()].eq_ignore_ascii_case(b"www-authenticate"))
            .map(|(_, v)| String::from_utf8_lossy(&up.head[v.clone()]).into_owned())
            .collect(),
        None => sub
            .head
            .fields()
            .iter()
            .filter(|f| f.is("WWW-Authenticate"))
            .map(|f| String::from_utf8_lossy(&f.value).into_owned())
            .collect(),
    }
}
