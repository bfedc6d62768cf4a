//! Evidence from the server's error log: the failures a limit causes are
//! logged there before anyone measures them. nginx (and Peregrine) log a
//! connect to a unix-socket upstream whose accept queue is full as
//! `(11: Resource temporarily unavailable) while connecting to upstream`
//! (Linux returns EAGAIN, not ECONNREFUSED, for a full unix socket
//! queue: `ngx_event_connect_peer`), and a worker out of descriptors as
//! `(24: Too many open files)` from accept4(), socket() or connect().

use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

/// How much of the end of each error log is read: recent evidence only,
/// and a bounded read whatever the log's size.
pub const TAIL_BYTES: u64 = 8 << 20;

/// What the error logs say.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct LogEvidence {
    /// Connects to an upstream refused with EAGAIN (a full backlog).
    pub upstream_eagain: u64,
    /// Calls that failed with EMFILE.
    pub emfile: u64,
}

/// Counts the evidence in a log text.
pub fn scan(text: &str) -> LogEvidence {
    let mut e = LogEvidence::default();
    for line in text.lines() {
        if line.contains("(11: Resource temporarily unavailable) while connecting to upstream") {
            e.upstream_eagain += 1;
        } else if line.contains("(24: Too many open files)") {
            e.emfile += 1;
        }
    }
    e
}

/// The evidence of the last [`TAIL_BYTES`] of each readable log (a log
/// that cannot be read adds nothing: tune reports, it does not fail).
pub fn gather(paths: &[std::path::PathBuf]) -> LogEvidence {
    let mut total = LogEvidence::default();
    for p in paths {
        if let Some(text) = tail(p) {
            let e = scan(&text);
            total.upstream_eagain += e.upstream_eagain;
            total.emfile += e.emfile;
        }
    }
    total
}

fn tail(path: &Path) -> Option<String> {
    let mut f = std::fs::File::open(path).ok()?;
    let len = f.metadata().ok()?.len();
    f.seek(SeekFrom::Start(len.saturating_sub(TAIL_BYTES)))
        .ok()?;
    let mut buf = Vec::new();
    f.read_to_end(&mut buf).ok()?;
    Some(String::from_utf8_lossy(&buf).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_backlog_and_descriptor_failures() {
        let log = "2026/12/05 09:10:04 [error] 1#2: *3 connect() to unix:/run/php/fpm.sock failed \
                   (11: Resource temporarily unavailable) while connecting to upstream, client: x\n\
                   2026/12/05 09:11:43 [alert] 1#2: accept4() failed (24: Too many open files)\n\
                   2026/12/05 09:11:43 [error] 1#2: *9 connect() failed (24: Too many open files) \
                   while connecting to upstream\n\
                   2026/12/05 09:11:44 [error] 1#2: *4 connect() failed (111: Connection refused) \
                   while connecting to upstream\n";
        assert_eq!(
            scan(log),
            LogEvidence {
                upstream_eagain: 1,
                emfile: 2
            }
        );
    }

    #[test]
    fn reads_only_the_tail_of_a_log() {
        let dir = std::env::temp_dir().join(format!("tune-errlog-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("error.log");
        let mut text = "accept4() failed (24: Too many open files)\n".repeat(3);
        text.push_str(&"x".repeat(TAIL_BYTES as usize));
        text.push_str("\naccept4() failed (24: Too many open files)\n");
        std::fs::write(&p, text).unwrap();
        assert_eq!(gather(&[p, dir.join("missing.log")]).emfile, 1);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
