//! `worker_rlimit_nofile`: nginx sets it in each worker process; Peregrine's
//! workers are threads sharing one descriptor table, so its process gets
//! the value once per worker, and each worker can hold as many
//! descriptors as an nginx worker.

use crate::support::{Prefix, Server, is_nginx};

const PER_WORKER: u64 = 1500;

/// The `Max open files` soft and hard limits of a process.
fn nofile(pid: u32) -> (u64, u64) {
    let text = std::fs::read_to_string(format!("/proc/{pid}/limits")).unwrap();
    let line = text
        .lines()
        .find(|l| l.starts_with("Max open files"))
        .unwrap();
    let mut n = line
        .split_whitespace()
        .filter_map(|w| w.parse::<u64>().ok());
    (n.next().unwrap(), n.next().unwrap())
}

/// nginx's worker processes: the children of its master.
fn children(pid: u32) -> Vec<u32> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children")).unwrap();
    text.split_whitespace()
        .filter_map(|w| w.parse().ok())
        .collect()
}

#[test]
fn each_worker_gets_worker_rlimit_nofile() {
    let conf = format!(
        "worker_processes 2;\nworker_rlimit_nofile {PER_WORKER};\nerror_log logs/error.log;\n\
         pid logs/test.pid;\nevents {{ worker_connections 64; }}\n\
         http {{ access_log off; server {{ listen 127.0.0.1:PORT; }} }}\n"
    );
    let s = Server::start(Prefix::new("rlimit"), &conf);
    let pid = s.child.id();
    if is_nginx() {
        let workers = children(pid);
        assert_eq!(workers.len(), 2);
        for w in workers {
            assert_eq!(nofile(w), (PER_WORKER, PER_WORKER));
        }
    } else {
        assert_eq!(nofile(pid), (2 * PER_WORKER, 2 * PER_WORKER));
    }
    let log = std::fs::read_to_string(s.prefix.dir.join("logs/error.log")).unwrap_or_default();
    assert!(!log.contains("setrlimit"), "{log}");
}
