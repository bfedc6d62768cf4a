//! `error_page` for the requests the codec refused (400, 414, 494, 501,
//! 505...): nginx's `ngx_http_special_response_handler` looks the status up
//! in the default server's `error_page`s as for any other error, and an
//! internal redirect then serves the page with the error's status.

use std::sync::Arc;
use std::time::SystemTime;

use peregrine_conf::model::ServerConf;

use crate::http::HttpCore;
use crate::request::{Method, RequestView};
use crate::response::{ConnInfo, Response};
use crate::special::{Special, find_error_page};

impl HttpCore {
    /// The answer to a request that did not parse, with `status`, in
    /// `server` (the default server of the address): its `error_page` for
    /// the status, else nginx's built-in page. Never keeps the connection.
    #[cold]
    pub fn bad_request_response(
        &mut self,
        conn: &ConnInfo,
        server: Option<&Arc<ServerConf>>,
        status: u16,
        now: SystemTime,
    ) -> Response {
        let servers = self.servers.clone();
        let found = server.and_then(|s| servers.iter().position(|r| Arc::ptr_eq(&r.conf, s)));
        // 495-497 are answered once the head was read and the server
        // known (`ngx_http_process_request` finalizes with them), so the
        // server's `add_header ... always` applies to the page.
        let Some(index) = found.filter(|&i| {
            matches!(status, 495..=497) || find_error_page(&servers[i].conf.conf, status).is_some()
        }) else {
            return self.error_response(status);
        };
        // What nginx knows of a refused request: nothing to trust. The
        // page is fetched as a GET of `/` would be, with no headers.
        let headers: Vec<(&str, &str)> = Vec::new();
        let view = RequestView {
            method: Method::Get,
            method_name: "GET",
            version: (1, 0),
            path: "/",
            args: None,
            target: "/",
            host: None,
            content_length: None,
            headers: &headers,
        };
        let srv = &servers[index];
        let mut ctx = Self::start_ctx(srv, index, &view, conn, now);
        ctx.status = self.status_source();
        let step = self.special(&mut ctx, Special::status(status));
        let mut resp = self.drive(&mut ctx, &servers, step);
        resp.status = peregrine_codec::response::wire_status(resp.status);
        resp.keepalive = false;
        resp.server = Some(srv.conf.clone());
        resp
    }
}
