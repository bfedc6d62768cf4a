//! Adapters from the engine's log hooks to peregrine-log, so the binary
//! wires nginx-format error and access logs with two calls.

use std::sync::Arc;
use std::time::Instant;

use peregrine_conf::model::{Config, LogLevel, ServerName};
use peregrine_log::{AccessLogs, ReopenSignal, RequestLog};

use crate::{AccessEntry, AccessLog, AccessLogFactory, ErrorLog};

/// The engine's error hook writing to `elog` (which adds the time, level
/// and `PID#TID` prefix).
pub fn error_log_hook(elog: Arc<peregrine_log::ErrorLog>) -> ErrorLog {
    Arc::new(move |level, msg| elog.log(level, None, format_args!("{msg}")))
}

/// Per-worker access logs from the configuration each worker serves; they
/// reopen their files when `reopen` is triggered (`SIGUSR1`).
pub fn access_log_factory(
    elog: Arc<peregrine_log::ErrorLog>,
    reopen: ReopenSignal,
) -> AccessLogFactory {
    Arc::new(move |conf: &Arc<Config>| -> Box<dyn AccessLog> {
        let Some(http) = conf.http.as_ref() else {
            return Box::new(Off);
        };
        match AccessLogs::new(http, elog.clone()) {
            // Nothing logs anywhere: `Off` tells the worker so, and it builds
            // no entry per request.
            Ok(logs) if logs.is_empty() => Box::new(Off),
            Ok(mut logs) => {
                logs.watch(&reopen);
                Box::new(Nginx { logs })
            }
            Err(e) => {
                elog.log(LogLevel::Alert, None, format_args!("{e}"));
                Box::new(Off)
            }
        }
    })
}

struct Off;

impl AccessLog for Off {
    fn log(&mut self, _: &AccessEntry<'_>) {}

    fn logs_nothing(&self) -> bool {
        true
    }
}

struct Nginx {
    logs: AccessLogs,
}

impl AccessLog for Nginx {
    fn log(&mut self, e: &AccessEntry<'_>) {
        let Some(conf) = &e.response.conf else { return };
        if conf.access_log.is_empty() {
            // `access_log off` (the common tuned setting): nothing is looked
            // up or built for a location that logs nowhere.
            return;
        }
        let Some(list) = self.logs.list_id(conf) else {
            return;
        };
        let sent: &peregrine_core::FieldList = &e.response.head;
        // An exact name (the usual case) is borrowed; wildcard and regex
        // names are rebuilt in nginx's spelling.
        let server_name: std::borrow::Cow<'_, str> = match e
            .response
            .server
            .as_ref()
            .and_then(|s| s.server_names.first())
        {
            Some(ServerName::Exact(name)) => std::borrow::Cow::Borrowed(name.as_str()),
            Some(other) => std::borrow::Cow::Owned(crate::errlog::server_name_text(other)),
            None => std::borrow::Cow::Borrowed(""),
        };
        let up = e.upstream.map(crate::upstream::LogVars);
        let modules = e
            .core
            .zip(e.request)
            .map(|(core, req)| CoreVars { core, req, e });
        let ssl = e.conn.ssl.as_deref().map(SslLog);
        let mut rec = RequestLog::new(e.conn.peer, e.conn.local, e.start, e.end);
        rec.conn_remote = e.conn_peer;
        // `$request_id`: the one core's variables gave this request.
        let rid = self
            .logs
            .needs_request_id(list)
            .then(|| peregrine_core::request_id(e.conn));
        if let Some(r) = e.request {
            rec = rec.with_request(r);
        }
        let rec = RequestLog {
            response_headers: sent,
            status: e.status,
            bytes_sent: e.bytes_sent,
            body_bytes_sent: e.body_bytes_sent,
            request_length: e.request_length,
            connection: e.conn.id,
            connection_requests: e.conn.requests,
            server_name: server_name.as_bytes(),
            pipelined: e.pipelined,
            upstream: up.as_ref().map(|u| u as &dyn peregrine_log::UpstreamValues),
            https: e.conn.https(),
            ssl: ssl.as_ref().map(|v| v as &dyn peregrine_log::SslValues),
            modules: modules
                .as_ref()
                .map(|v| v as &dyn peregrine_log::ModuleVars),
            proxy_protocol: e.conn.proxy.as_deref(),
            request_id: rid.as_deref().map(str::as_bytes),
            ..rec
        };
        self.logs.log_list(list, &rec);
    }

    fn flush(&mut self) {
        self.logs.tick(Instant::now());
    }
}

/// The variables a format asks of core (`map`, `geo`...), computed on the
/// finished request.
struct CoreVars<'a> {
    core: &'a peregrine_core::HttpCore,
    req: &'a peregrine_codec::Request,
    e: &'a AccessEntry<'a>,
}

impl peregrine_log::ModuleVars for CoreVars<'_> {
    fn value(&self, name: &str, out: &mut String) -> bool {
        let e = self.e;
        self.core
            .log_variable(e.conn, self.req, e.response, e.status, e.end, name, out)
    }
}

/// A TLS session's variables as the access log asks for them.
struct SslLog<'a>(&'a peregrine_core::ssl_vars::SslVars);

impl peregrine_log::SslValues for SslLog<'_> {
    fn ssl_value(&self, name: &str) -> Option<&str> {
        self.0.get(name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The worker's logger for `http_body` (file paths under `dir`), as the
    /// factory makes it.
    fn logger(dir: &std::path::Path, http_body: &str) -> Box<dyn AccessLog> {
        std::fs::create_dir_all(dir.join("logs")).unwrap();
        let text = format!("events {{}} http {{ {http_body} }}");
        let conf =
            peregrine_conf::parse_str(&text, &dir.join("nginx.conf").to_string_lossy()).unwrap();
        let elog = Arc::new(peregrine_log::ErrorLog::stderr(LogLevel::Crit));
        access_log_factory(elog, ReopenSignal::new())(&Arc::new(conf))
    }

    #[test]
    fn a_log_in_any_server_or_location_keeps_the_logger() {
        let dir = std::env::temp_dir().join(format!("peregrine-logging-{}", std::process::id()));
        let d = dir.display();
        let off = "access_log off; server { listen 8080; location / { } }";
        assert!(logger(&dir, off).logs_nothing());
        // nginx's default is logs/access.log: not saying anything logs.
        assert!(!logger(&dir, "server { listen 8080; }").logs_nothing());
        let in_server = format!("access_log off; server {{ listen 8080; access_log {d}/a.log; }}");
        assert!(!logger(&dir, &in_server).logs_nothing());
        let nested = format!(
            "access_log off; server {{ listen 8080; \
             location /a {{ location /a/b {{ access_log {d}/b.log; }} }} }}"
        );
        assert!(!logger(&dir, &nested).logs_nothing());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
