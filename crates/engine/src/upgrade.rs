//! nginx's binary upgrade, on the master's side (`ngx_exec_new_binary`):
//! `SIGUSR2` renames the pid file to `NAME.oldbin` and starts the binary
//! the master was started as (its `argv`, so the file replaced on disk)
//! with every listening socket inherited through the `NGINX` environment
//! variable (`"3;4;"`, read by `inherit`). Both masters then serve from the
//! same sockets; `SIGWINCH` retires the old one's workers and `SIGQUIT`
//! the old master. A new binary that exits (a bad configuration, or
//! stopped) gives the pid file back and, after `SIGWINCH`, the old master
//! starts workers again: nothing stops serving.
//!
//! One difference: nginx honours `SIGWINCH` only when daemonized; here it
//! works in the foreground too (systemd's `Type=exec`, containers), where
//! the same retirement is wanted.

use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command};

use peregrine_conf::model::LogLevel;

use crate::ErrorLog;
use crate::inherit::NGINX_VAR;

/// The suffix of the old master's pid file (`NGX_OLDPID_EXT`).
pub const OLDPID_EXT: &str = ".oldbin";

pub struct Upgrade {
    /// The configuration's pid file (`None`: none is written).
    pid: Option<PathBuf>,
    /// The pid file is renamed to its `.oldbin` name.
    renamed: bool,
    /// The new binary, while it runs.
    child: Option<Child>,
    /// The old master this binary was started by, while it lives: no
    /// upgrade from a new binary before the old one is gone (nginx).
    parent: Option<u32>,
    /// `SIGWINCH` took the workers away.
    pub noaccepting: bool,
}

impl Upgrade {
    pub fn new(pid: Option<PathBuf>) -> Upgrade {
        let upgraded = std::env::var_os(NGINX_VAR).is_some();
        Upgrade {
            pid,
            renamed: false,
            child: None,
            parent: upgraded.then(std::os::unix::process::parent_id),
            noaccepting: false,
        }
    }

    fn oldbin(&self) -> Option<PathBuf> {
        self.pid.as_ref().map(|p| {
            let mut s = p.clone().into_os_string();
            s.push(OLDPID_EXT);
            PathBuf::from(s)
        })
    }

    /// The pid file this master owns (removed when it exits).
    pub fn pid_file(&self) -> Option<PathBuf> {
        if self.renamed {
            self.oldbin()
        } else {
            self.pid.clone()
        }
    }

    /// Whether the listening sockets' files are this master's to remove at
    /// exit: not while a new binary it started has them, nor while the old
    /// master it inherited them from still runs (nginx's
    /// `ngx_close_listening_sockets`).
    pub fn owns_sockets(&self) -> bool {
        let parent_alive = self
            .parent
            .is_some_and(|p| std::os::unix::process::parent_id() == p);
        self.child.is_none() && !self.renamed && !parent_alive
    }

    /// `SIGUSR2`: starts the new binary with `sockets`.
    pub fn start(&mut self, sockets: &[&TcpListener], errlog: &ErrorLog) {
        let parent_alive = self
            .parent
            .is_some_and(|p| std::os::unix::process::parent_id() == p);
        if self.child.is_some() || parent_alive {
            errlog(
                LogLevel::Crit,
                "the changing binary signal is ignored: you should shutdown or terminate \
                 before either old or new binary's process",
            );
            return;
        }
        errlog(LogLevel::Notice, "changing binary");
        if let (Some(pid), Some(old)) = (&self.pid, self.oldbin()) {
            if let Err(e) = std::fs::rename(pid, &old) {
                let msg = format!(
                    "rename() {} to {} failed, the new binary is not started",
                    pid.display(),
                    old.display()
                );
                errlog(LogLevel::Alert, &crate::errlog::with_os_error(&msg, &e));
                return;
            }
            self.renamed = true;
        }
        match spawn(sockets) {
            Ok(child) => {
                let msg = format!("start new binary process {}", child.id());
                errlog(LogLevel::Notice, &msg);
                self.child = Some(child);
            }
            Err((argv0, e)) => {
                let msg = format!("execve() failed while executing new binary process \"{argv0}\"");
                errlog(LogLevel::Alert, &crate::errlog::with_os_error(&msg, &e));
                self.rename_back(errlog);
            }
        }
    }

    /// Whether the new binary has exited (then the pid file is this
    /// master's again).
    pub fn reap(&mut self, errlog: &ErrorLog) -> bool {
        let Some(child) = self.child.as_mut() else {
            return false;
        };
        let status = match child.try_wait() {
            Ok(Some(s)) => s,
            _ => return false,
        };
        let pid = child.id();
        self.child = None;
        let (level, how) = match (
            status.code(),
            std::os::unix::process::ExitStatusExt::signal(&status),
        ) {
            (Some(0), _) => (LogLevel::Notice, "exited with code 0".to_string()),
            (Some(c), _) => (LogLevel::Alert, format!("exited with code {c}")),
            (None, Some(s)) => (LogLevel::Alert, format!("exited on signal {s}")),
            (None, None) => (LogLevel::Alert, "exited".to_string()),
        };
        errlog(level, &format!("new binary process {pid} {how}"));
        self.rename_back(errlog);
        true
    }

    fn rename_back(&mut self, errlog: &ErrorLog) {
        if !self.renamed {
            return;
        }
        if let (Some(pid), Some(old)) = (&self.pid, self.oldbin())
            && let Err(e) = std::fs::rename(&old, pid)
        {
            let msg = format!(
                "rename() {} back to {} failed after the new binary process exited",
                old.display(),
                pid.display()
            );
            errlog(LogLevel::Alert, &crate::errlog::with_os_error(&msg, &e));
            return;
        }
        self.renamed = false;
    }
}

/// Starts this process's command line again with `sockets` inherited: their
/// close-on-exec flag is cleared for the spawn only.
fn spawn(sockets: &[&TcpListener]) -> Result<Child, (String, std::io::Error)> {
    use std::os::fd::AsRawFd;
    let mut args = std::env::args_os();
    let argv0 = args.next().unwrap_or_else(|| "peregrine".into());
    let shown = argv0.to_string_lossy().into_owned();
    let list: String = sockets
        .iter()
        .map(|s| format!("{};", s.as_raw_fd()))
        .collect();
    let mut cmd = Command::new(&argv0);
    cmd.args(args)
        .env(NGINX_VAR, &list)
        // systemd's variables were for this process only.
        .env_remove("LISTEN_FDS")
        .env_remove("LISTEN_PID")
        .env_remove("LISTEN_FDNAMES");
    for s in sockets {
        peregrine_sys::set_cloexec(s, false).map_err(|e| (shown.clone(), e))?;
    }
    let r = cmd.spawn();
    for s in sockets {
        let _ = peregrine_sys::set_cloexec(s, true);
    }
    r.map_err(|e| (shown, e))
}
