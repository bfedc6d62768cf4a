//! The variables an access log asks of core once a response is sent: the
//! ones the log does not compute itself (`map`, `geo`, `split_clients`
//! and module variables in a `log_format` or an `access_log ... if=`).
//! nginx evaluates a log's variables on the finished request
//! (`ngx_http_log_variable`); here the request's state is rebuilt in the
//! location that answered, with the status and the fields sent. What
//! lived only during the request's phases (`set` values, a location's
//! regex captures) is gone by then and logged as not found.

use std::time::SystemTime;

use peregrine_codec::fields::FieldList;

use crate::http::HttpCore;
use crate::response::{ConnInfo, Response};
use crate::vars::VarCtx;

impl HttpCore {
    /// Appends the value of variable `name` (lowercase) for the request
    /// `req` answered by `resp` with `status`; `false` when it has none
    /// (logged `-`). A `map`, `geo` or `split_clients` variable always
    /// has one, empty included (logged as nothing, as nginx logs a found
    /// empty value).
    #[allow(clippy::too_many_arguments)]
    pub fn log_variable(
        &self,
        conn: &ConnInfo,
        req: &peregrine_codec::Request,
        resp: &Response,
        status: u16,
        now: SystemTime,
        name: &str,
        out: &mut String,
    ) -> bool {
        let index = resp
            .server
            .as_ref()
            .and_then(|s| self.server_index(s))
            .unwrap_or(0);
        let Some(srv) = self.servers.get(index) else {
            return false;
        };
        let view = crate::proxy::view_of(req);
        let mut ctx = HttpCore::start_ctx(srv, index, &view, conn, now);
        if let Some(c) = &resp.conf {
            ctx.conf = c.clone();
        }
        let no_trailers = FieldList::new();
        let vars = VarCtx {
            sent: Some((&resp.head, &no_trailers)),
            sent_status: Some(status),
            ..ctx.vars()
        };
        let before = out.len();
        vars.push(out, name);
        let defined = srv.maps.iter().any(|m| m.var == name)
            || srv.geos.iter().any(|g| g.var == name)
            || srv.splits.iter().any(|c| c.var == name);
        out.len() > before || defined
    }
}
