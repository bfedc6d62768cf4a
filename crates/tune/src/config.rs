//! Reading the configuration for the checks: peregrine-conf loads and
//! merges nginx.conf; this module maps its typed model onto [`TuneInputs`].

use std::path::Path;

use peregrine_conf::model::LogTarget;
use peregrine_conf::{Config, CpuAffinity, LocConf, LocationConf, WorkerProcesses};

use crate::error::TuneError;
use crate::inputs::{Affinity, ListenInput, TuneInputs};

/// Loads the configuration named by `-p`/`-c` (defaults as the server's).
/// Without `-c`, a missing default file is not an error (`Ok(None)`: kernel
/// checks against nginx's defaults); a file named explicitly must load.
pub fn load(prefix: Option<&Path>, conf: Option<&Path>) -> Result<Option<TuneInputs>, TuneError> {
    let mut opts = peregrine_conf::LoadOptions::default();
    if let Some(p) = prefix {
        opts.prefix = p.to_path_buf();
    }
    if let Some(c) = conf {
        opts.conf_file = c.to_path_buf();
    }
    if conf.is_none() && !opts.prefix.join(&opts.conf_file).exists() {
        return Ok(None);
    }
    let config = peregrine_conf::load(&opts).map_err(|e| TuneError::Config(e.to_string()))?;
    Ok(Some(from_config(&config)))
}

/// Maps the typed configuration onto the facts the checks use.
pub fn from_config(c: &Config) -> TuneInputs {
    let servers = c
        .http
        .as_ref()
        .map(|h| h.servers.as_slice())
        .unwrap_or_default();
    let listens = servers
        .iter()
        .flat_map(|s| s.listen.iter())
        .map(|l| ListenInput {
            addr: l.addr.to_string(),
            // nginx passes -1 on the BSDs only; a negative backlog asks the
            // kernel for somaxconn, so it can never exceed it.
            backlog: u64::try_from(l.backlog).unwrap_or(0),
        })
        .collect();
    let mut cache_max = 0u64;
    for s in servers {
        cache_max = cache_max.max(open_file_cache(&s.conf));
        for l in &s.locations {
            cache_max = cache_max.max(location_cache(l));
        }
    }
    TuneInputs {
        conf_file: c.conf_file.clone(),
        worker_processes: match c.main.worker_processes {
            WorkerProcesses::Auto => None,
            WorkerProcesses::Count(n) => Some(n),
        },
        worker_cpu_affinity: match &c.main.worker_cpu_affinity {
            None => Affinity::None,
            Some(CpuAffinity::Masks(m)) => Affinity::Masks(m.iter().map(|m| m.0.clone()).collect()),
            Some(CpuAffinity::Auto(m)) => Affinity::Auto(m.as_ref().map(|m| m.0.clone())),
        },
        worker_rlimit_nofile: c.main.worker_rlimit_nofile,
        worker_connections: c.events.worker_connections as u64,
        listens,
        proxying: c.files.iter().any(|f| proxies(&f.text)),
        open_file_cache_max: cache_max,
        pid_file: c.main.pid.clone(),
        error_logs: c
            .main
            .error_log
            .iter()
            .filter_map(|e| match &e.target {
                LogTarget::File(p) => Some(p.clone()),
                _ => None,
            })
            .collect(),
    }
}

fn open_file_cache(l: &LocConf) -> u64 {
    l.open_file_cache.map_or(0, |o| o.max as u64)
}

fn location_cache(l: &LocationConf) -> u64 {
    l.locations
        .iter()
        .map(|n| location_cache(n))
        .fold(open_file_cache(&l.conf), u64::max)
}

/// The directives that hand a request to an upstream: each client then
/// may hold an upstream connection too.
const PASSES: [&str; 6] = [
    "proxy_pass",
    "fastcgi_pass",
    "uwsgi_pass",
    "scgi_pass",
    "grpc_pass",
    "memcached_pass",
];

/// Whether a configuration text passes requests to upstreams (read from
/// the text: the typed model keeps no trace of modules Peregrine lacks).
fn proxies(text: &str) -> bool {
    text.lines().any(|l| {
        l.split_whitespace()
            .next()
            .is_some_and(|d| PASSES.contains(&d))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proxy_detection() {
        assert!(proxies(
            "http {\n  location / {\n    proxy_pass http://b;\n"
        ));
        assert!(!proxies("# proxy_pass http://b;\nproxy_buffers 4 8k;\n"));
        assert!(proxies(
            "location ~ \\.php$ {\n    fastcgi_pass unix:/run/php.sock;\n"
        ));
    }
}
