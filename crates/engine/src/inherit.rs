//! Listening sockets a process starts with: the ones an old master hands a
//! new binary (nginx's `NGINX` environment variable, `ngx_add_inherited_sockets`)
//! and the ones systemd passes (`LISTEN_FDS`/`LISTEN_PID`, sd_listen_fds(3)).
//! The master's `Listeners` use them for their addresses instead of
//! binding, so no connection waiting in their queues is lost.

use std::net::TcpListener;

use peregrine_conf::model::LogLevel;

use crate::ErrorLog;

/// The variable nginx passes inherited descriptors in (`NGINX_VAR`):
/// numbers separated by `;` (or `:`), as `"3;4;"`.
pub const NGINX_VAR: &str = "NGINX";

/// systemd's first passed descriptor (`SD_LISTEN_FDS_START`).
const SD_LISTEN_FDS_START: i32 = 3;

/// The sockets of this start, and whether they came from an old master
/// (then the process stays in the foreground: nginx does not daemonize an
/// inherited start, so the old master can watch it).
pub struct Inherited {
    pub sockets: Vec<TcpListener>,
    pub upgrade: bool,
}

/// Reads the environment: `NGINX` first, else systemd's variables.
pub fn from_env(errlog: &ErrorLog) -> Inherited {
    if let Ok(list) = std::env::var(NGINX_VAR) {
        let msg = format!("using inherited sockets from \"{list}\"");
        errlog(LogLevel::Notice, &msg);
        return Inherited {
            sockets: take(nginx_fds(&list, errlog), errlog),
            upgrade: true,
        };
    }
    let fds = systemd_fds(
        std::env::var("LISTEN_PID").ok().as_deref(),
        std::env::var("LISTEN_FDS").ok().as_deref(),
        peregrine_sys::getpid(),
    );
    Inherited {
        sockets: take(fds, errlog),
        upgrade: false,
    }
}

/// `ngx_add_inherited_sockets`: the numbers up to the first that is not one.
pub fn nginx_fds(list: &str, errlog: &ErrorLog) -> Vec<i32> {
    let mut out = Vec::new();
    for part in list.split([';', ':']).filter(|p| !p.is_empty()) {
        match part.parse::<i32>() {
            Ok(fd) if fd >= 0 => out.push(fd),
            _ => {
                let msg = format!(
                    "invalid socket number \"{part}\" in {NGINX_VAR} environment variable, \
                     ignoring the rest of the variable"
                );
                errlog(LogLevel::Emerg, &msg);
                break;
            }
        }
    }
    out
}

/// sd_listen_fds(3): `LISTEN_FDS` descriptors from 3 when `LISTEN_PID` is
/// this process (a variable meant for another process is ignored).
pub fn systemd_fds(pid: Option<&str>, fds: Option<&str>, me: u32) -> Vec<i32> {
    let ours = pid.and_then(|p| p.parse::<u32>().ok()) == Some(me);
    let n = fds.and_then(|n| n.parse::<i32>().ok()).unwrap_or(0);
    if !ours || n <= 0 {
        return Vec::new();
    }
    (SD_LISTEN_FDS_START..SD_LISTEN_FDS_START.saturating_add(n)).collect()
}

/// The descriptors that are listening sockets; the others are logged and left.
fn take(fds: Vec<i32>, errlog: &ErrorLog) -> Vec<TcpListener> {
    let mut out = Vec::new();
    for fd in fds {
        match peregrine_sys::inherited_listener(fd) {
            Ok(l) => out.push(l),
            Err(e) => {
                let msg = crate::errlog::with_os_error(
                    &format!("inherited descriptor {fd} is not a listening TCP socket"),
                    &e,
                );
                errlog(LogLevel::Alert, &msg);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    #[test]
    fn nginx_list_up_to_the_first_bad_number() {
        let lines = Arc::new(Mutex::new(Vec::new()));
        let l2 = lines.clone();
        let log: ErrorLog = Arc::new(move |_, m: &str| l2.lock().unwrap().push(m.to_string()));
        assert_eq!(nginx_fds("3;4;", &log), [3, 4]);
        assert_eq!(nginx_fds("5:6", &log), [5, 6]);
        assert!(lines.lock().unwrap().is_empty());
        assert_eq!(nginx_fds("3;x;4;", &log), [3]);
        assert_eq!(
            lines.lock().unwrap()[0],
            "invalid socket number \"x\" in NGINX environment variable, ignoring the rest of the variable"
        );
    }

    #[test]
    fn systemd_only_for_this_process() {
        assert_eq!(systemd_fds(Some("42"), Some("2"), 42), [3, 4]);
        assert!(systemd_fds(Some("41"), Some("2"), 42).is_empty());
        assert!(systemd_fds(None, Some("2"), 42).is_empty());
        assert!(systemd_fds(Some("42"), Some("0"), 42).is_empty());
    }

    #[test]
    fn a_descriptor_that_is_no_listening_socket_is_refused() {
        let file = std::fs::File::open("/proc/self/status").unwrap();
        use std::os::fd::AsRawFd;
        assert!(peregrine_sys::inherited_listener(file.as_raw_fd()).is_err());
        assert!(peregrine_sys::inherited_listener(-1).is_err());
    }
}
