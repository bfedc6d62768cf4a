//! What the workers run as, and what the master prepares for them.
//!
//! nginx's master stays root and its worker processes run as `user`
//! (`ngx_worker_process_init`), by default nobody and nogroup when the
//! master is root (the `NGX_USER`/`NGX_GROUP` Debian's build leaves; not
//! yet Peregrine's default, see `DEFAULT_USER_APPLIES`). Peregrine's
//! workers are threads of the master's process: each worker thread gives up
//! root for itself when it starts (`peregrine_sys::drop_thread_privileges`),
//! and the main thread keeps it, so that a reload can re-read keys only root
//! can read and bind ports below 1024, and the logs can be reopened as
//! nginx's master reopens them. Everything the workers must write (the
//! temporary directories, the access logs) is handed to the workers' user,
//! as `ngx_create_paths` and `ngx_reopen_files` do.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use peregrine_conf::model::Config;
use peregrine_sys::Credentials;

use crate::EngineError;

/// nginx's user when the master is root and `user` is not set.
const DEFAULT_USER: &str = "nobody";
/// Whether [`DEFAULT_USER`] applies without `user`, as in nginx. Off until
/// every file a worker creates (proxy cache levels, a location's
/// `error_log`, the stream module's logs) is created or handed over by the
/// master as `ngx_create_paths` does: with it on, those fail as nobody.
const DEFAULT_USER_APPLIES: bool = false;
/// nginx's group then: Debian's `nogroup`; `nobody` where that is the
/// name (nginx's configure picks whichever the build host has).
const DEFAULT_GROUPS: [&str; 2] = ["nogroup", "nobody"];

/// The workers' credentials: `None` when the master is not root (then
/// nothing changes, and `user` is nginx's warning at load).
pub fn workers(conf: &Config) -> Result<Option<Arc<Credentials>>, EngineError> {
    if !peregrine_sys::is_root() {
        return Ok(None);
    }
    // Without `user`, nginx's workers are nobody:nogroup; Peregrine's stay
    // root for now: the proxy cache directories, location error logs and
    // stream logs are still made by the workers themselves, and nobody
    // could not write them (see DEFAULT_USER; /work notes, session 18).
    if conf.main.user.is_none() && !DEFAULT_USER_APPLIES {
        return Ok(None);
    }
    let (user, group) = match &conf.main.user {
        Some(u) => (u.user.as_str(), u.group.as_deref()),
        None => (DEFAULT_USER, None),
    };
    let mut ids = peregrine_sys::lookup_user(user)
        .ok()
        .flatten()
        .ok_or_else(|| EngineError::NoUser(user.to_string()))?;
    match (group, &conf.main.user) {
        (Some(g), _) => {
            ids.gid = peregrine_sys::lookup_group(g)
                .ok()
                .flatten()
                .ok_or_else(|| EngineError::NoGroup(g.to_string()))?;
        }
        (None, None) => {
            let found = DEFAULT_GROUPS
                .iter()
                .find_map(|g| peregrine_sys::lookup_group(g).ok().flatten());
            ids.gid = found.ok_or_else(|| EngineError::NoGroup(DEFAULT_GROUPS[0].into()))?;
        }
        // `user www-data;`: the user's own primary group, as nginx.
        (None, Some(_)) => {}
    }
    let cred = peregrine_sys::credentials(user, ids).map_err(|source| privileges(user, source))?;
    check(user, &cred)?;
    Ok(Some(Arc::new(cred)))
}

fn privileges(user: &str, source: std::io::Error) -> EngineError {
    EngineError::Privileges {
        user: user.to_string(),
        source,
    }
}

/// Drops privileges once in a throw-away thread, so that a refusal is the
/// start's (or the reload's) error rather than every worker's.
fn check(user: &str, cred: &Credentials) -> Result<(), EngineError> {
    let c = cred.clone();
    std::thread::Builder::new()
        .name("credentials".into())
        .spawn(move || peregrine_sys::drop_thread_privileges(&c))
        .map_err(EngineError::Spawn)?
        .join()
        .unwrap_or_else(|_| Err(std::io::Error::other("panicked")))
        .map_err(|source| privileges(user, source))
}

/// Gives up root in the calling thread (a worker's or a helper's first
/// step); the error is the worker's to report.
pub fn enter(cred: Option<&Credentials>) -> Result<(), String> {
    match cred {
        Some(c) => peregrine_sys::drop_thread_privileges(c)
            .map_err(|e| crate::errlog::with_os_error("setuid()/setgid() failed", &e)),
        None => Ok(()),
    }
}

/// `*_temp_path` directories, created as nginx's `ngx_create_paths` does
/// at start: the directory itself (not its parents), mode 0700, then
/// given to the workers' user (with u+rwx) so that they can write there.
pub fn create_temp_paths(paths: &[PathBuf], cred: Option<&Credentials>) -> Result<(), EngineError> {
    use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
    let err = |path: &Path, source| EngineError::TempPath {
        path: path.to_path_buf(),
        source,
    };
    for path in paths {
        match std::fs::DirBuilder::new().mode(0o700).create(path) {
            Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => return Err(err(path, e)),
            _ => {}
        }
        let Some(c) = cred else { continue };
        let meta = std::fs::metadata(path).map_err(|e| err(path, e))?;
        if meta.uid() != c.uid {
            std::os::unix::fs::chown(path, Some(c.uid), None).map_err(|e| err(path, e))?;
        }
        if meta.mode() & 0o700 != 0o700 {
            let mode = std::fs::Permissions::from_mode((meta.mode() | 0o700) & 0o7777);
            std::fs::set_permissions(path, mode).map_err(|e| err(path, e))?;
        }
    }
    Ok(())
}

/// Before USR1 reaches the workers: every access log file of `conf`
/// exists and belongs to the workers' user, as `ngx_reopen_files` leaves
/// them (it opens as root, then `chown`s). A file that cannot be made is
/// left to the worker's own reopen, which logs nginx's `open() failed`.
pub fn prepare_reopen(conf: &Config, cred: Option<&Credentials>) {
    use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
    let (Some(c), Some(http)) = (cred, conf.http.as_ref()) else {
        return;
    };
    let Ok(paths) = peregrine_log::AccessLogs::file_paths(http) else {
        return;
    };
    for path in paths {
        let opened = std::fs::OpenOptions::new()
            .append(true)
            .create(true)
            .mode(0o644)
            .open(&path);
        if let Ok(meta) = opened.and_then(|f| f.metadata())
            && meta.uid() != c.uid
        {
            let _ = std::os::unix::fs::chown(&path, Some(c.uid), None);
        }
    }
}
