//! nginx's error-log line shapes.
//!
//! A line is `YYYY/MM/DD HH:MM:SS [level] PID#TID: *CID message, client:
//! ADDR, server: NAME, request: "LINE", host: "HOST"` (nginx's
//! `ngx_log_error_core` + `ngx_http_log_error`). The engine builds the part
//! from `*CID` on; the writer (the log crate, or [`format_error_line`] by
//! default) adds the time, level and `PID#TID` prefix.

use std::fmt::Write as _;
use std::net::SocketAddr;
use std::time::SystemTime;

use peregrine_conf::model::{LogLevel, ServerName};

/// nginx's spelling of a level inside `[...]`.
pub fn level_name(level: LogLevel) -> &'static str {
    match level {
        LogLevel::Debug => "debug",
        LogLevel::Info => "info",
        LogLevel::Notice => "notice",
        LogLevel::Warn => "warn",
        LogLevel::Error => "error",
        LogLevel::Crit => "crit",
        LogLevel::Alert => "alert",
        LogLevel::Emerg => "emerg",
    }
}

/// The whole line (without newline) for `msg` logged now on this thread.
pub fn format_error_line(level: LogLevel, msg: &str) -> String {
    let secs = peregrine_codec::date::unix_secs(SystemTime::now());
    let mut ts = [0u8; 19];
    // Peregrine logs in UTC (nginx uses local time; servers run in UTC).
    peregrine_codec::date::fmt_error_log(secs, 0, &mut ts);
    format!(
        "{} [{}] {}#{}: {}",
        String::from_utf8_lossy(&ts),
        level_name(level),
        peregrine_sys::getpid(),
        peregrine_sys::gettid(),
        msg
    )
}

/// What a connection-scoped message adds after the text.
pub struct Context<'a> {
    pub id: u64,
    pub peer: SocketAddr,
    pub server: &'a str,
    pub request: Option<&'a str>,
    pub host: Option<&'a str>,
}

/// `*CID text, client: ..., server: ...[, request: "..."][, host: "..."]`.
pub fn conn_message(ctx: &Context<'_>, text: &str) -> String {
    let mut s = String::with_capacity(text.len() + 64);
    let _ = write!(
        s,
        "*{} {}, client: {}, server: {}",
        ctx.id,
        text,
        peregrine_conf::model::IpText(ctx.peer),
        ctx.server
    );
    if let Some(r) = ctx.request {
        let _ = write!(s, ", request: \"{r}\"");
    }
    if let Some(h) = ctx.host {
        let _ = write!(s, ", host: \"{h}\"");
    }
    s
}

/// `text (errno: strerror)` as nginx prints system errors.
pub fn with_os_error(text: &str, err: &std::io::Error) -> String {
    match err.raw_os_error() {
        Some(code) => {
            let full = err.to_string();
            // std renders "Description (os error N)"; nginx prints "(N: Description)".
            let desc = full.split(" (os error").next().unwrap_or(&full);
            format!("{text} ({code}: {desc})")
        }
        None => format!("{text} ({err})"),
    }
}

/// The text of a caught panic's payload.
pub fn panic_text(p: &(dyn std::any::Any + Send)) -> String {
    p.downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into())
}

/// nginx's text of a server name in log lines.
pub fn server_name_text(n: &ServerName) -> String {
    match n {
        ServerName::Exact(s) => s.clone(),
        ServerName::WildcardStart {
            suffix,
            also_bare: true,
        } => suffix.clone(),
        ServerName::WildcardStart {
            suffix,
            also_bare: false,
        } => format!("*{suffix}"),
        ServerName::WildcardEnd(p) => format!("{p}*"),
        ServerName::Regex(r) => format!("~{}", r.as_str()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connection_message_like_nginx() {
        let ctx = Context {
            id: 8,
            peer: "127.0.0.1:5555".parse().unwrap(),
            server: "",
            request: Some("GET / HTTP/1.1"),
            host: Some("x"),
        };
        let err = std::io::Error::from_raw_os_error(libc::ETIMEDOUT);
        let text = with_os_error("client timed out", &err);
        assert_eq!(
            conn_message(
                &ctx,
                &format!("{text} while reading client request headers")
            ),
            "*8 client timed out (110: Connection timed out) while reading client request \
             headers, client: 127.0.0.1, server: , request: \"GET / HTTP/1.1\", host: \"x\""
        );
    }

    #[test]
    fn line_prefix() {
        let line = format_error_line(LogLevel::Warn, "hello");
        let pid = peregrine_sys::getpid();
        assert!(line.contains(&format!(" [warn] {pid}#")), "{line}");
        assert!(line.ends_with(": hello"));
        assert_eq!(line.as_bytes()[4], b'/');
    }
}
