//! Certificates named by variables (`ssl_certificate $ssl_server_name.crt;`,
//! `ssl_certificate_key data:$var;`): nginx's `ngx_http_ssl_certificate`,
//! which expands each pair at every handshake, once the SNI has chosen
//! the server block, and loads what the values name.
//!
//! Loading a pair costs parsing PEM and a key (an RSA key's checks most),
//! so the pairs loaded are kept in a bounded cache shared by the workers
//! ([`DYNAMIC_CERTIFICATES`] entries), keyed by the expanded values. An
//! entry is used again only while its files are unchanged (size, time and
//! inode as when loaded): nginx's default, `ssl_certificate_cache off`,
//! reads the files at each handshake, so a changed file is served from
//! the next one, as here.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use peregrine_tls::certs::{CertPair, DATA_PREFIX};
use rustls::ServerConfig;

use crate::tls::{ServerEntry, TlsTable};

/// The most sets of certificates named by variables kept loaded (all the
/// configuration's server blocks together); past it the oldest loaded is
/// dropped.
pub const DYNAMIC_CERTIFICATES: usize = 256;

/// A server block's certificates named by variables.
#[derive(Debug)]
pub struct Dynamic {
    /// The block's index in the configuration (its variables' context).
    pub server: usize,
    /// `ssl_certificate` and `ssl_certificate_key` values as written.
    pub pairs: Vec<(PathBuf, PathBuf)>,
    /// `ssl_password_file`'s passwords, for encrypted keys.
    pub passwords: Vec<String>,
    /// Where a relative value's file is (nginx's conf prefix).
    pub conf_dir: PathBuf,
}

/// A handshake's certificate could not be loaded: nginx's `cannot load
/// certificate "NAME": ...`, logged at `error` (the handshake then fails).
#[derive(Debug, thiserror::Error)]
#[error(transparent)]
pub struct CertificateFailed(#[from] pub peregrine_tls::error::TlsError);

/// What identifies a loaded file again: unchanged while these are.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Stamp {
    len: u64,
    modified: Option<std::time::SystemTime>,
    inode: u64,
}

fn stamp(path: &Path) -> Option<Stamp> {
    use std::os::unix::fs::MetadataExt;
    if path.to_str().is_some_and(|p| p.starts_with(DATA_PREFIX)) {
        return None;
    }
    let m = std::fs::metadata(path).ok()?;
    Some(Stamp {
        len: m.len(),
        modified: m.modified().ok(),
        inode: m.ino(),
    })
}

struct Loaded {
    config: Arc<ServerConfig>,
    /// Each file's stamp when loaded, in the pairs' order.
    stamps: Vec<Option<Stamp>>,
    /// When it was loaded, in insertions (the oldest goes first).
    serial: u64,
}

type Key = (usize, Vec<CertPair>);

/// The loaded sets (see the module's comment).
#[derive(Default)]
pub struct CertCache {
    inner: Mutex<CacheInner>,
}

#[derive(Default)]
struct CacheInner {
    entries: HashMap<Key, Loaded>,
    serial: u64,
}

impl CertCache {
    fn get(&self, key: &Key, stamps: &[Option<Stamp>]) -> Option<Arc<ServerConfig>> {
        let inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        let e = inner.entries.get(key)?;
        (e.stamps == stamps).then(|| e.config.clone())
    }

    fn put(&self, key: Key, config: Arc<ServerConfig>, stamps: Vec<Option<Stamp>>) {
        let mut inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        if inner.entries.len() >= DYNAMIC_CERTIFICATES && !inner.entries.contains_key(&key) {
            let oldest = inner
                .entries
                .iter()
                .min_by_key(|(_, e)| e.serial)
                .map(|(k, _)| k.clone());
            if let Some(k) = oldest {
                inner.entries.remove(&k);
            }
        }
        inner.serial += 1;
        let serial = inner.serial;
        inner.entries.insert(
            key,
            Loaded {
                config,
                stamps,
                serial,
            },
        );
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.inner
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .entries
            .len()
    }
}

/// A value expanded: `data:` PEM as it is, a file name made full from the
/// configuration's directory (nginx's `ngx_get_full_name` with the conf
/// prefix, at the handshake).
fn full(conf_dir: &Path, value: String) -> PathBuf {
    if value.starts_with('/') || value.starts_with(DATA_PREFIX) {
        PathBuf::from(value)
    } else {
        conf_dir.join(value)
    }
}

impl TlsTable {
    /// The configuration serving `entry`'s certificates for one
    /// handshake, `expand` giving each value's text (the variables
    /// evaluated in the block's context). An empty value names no file,
    /// as in nginx, where it fails to load.
    pub fn certificates_for(
        &self,
        entry: &ServerEntry,
        base: &ServerConfig,
        expand: impl Fn(usize, &str) -> String,
    ) -> Result<Arc<ServerConfig>, CertificateFailed> {
        let Some(d) = entry.dynamic.as_deref() else {
            return Ok(Arc::new(base.clone()));
        };
        let text = |p: &Path| expand(d.server, &p.to_string_lossy());
        let pairs: Vec<CertPair> = d
            .pairs
            .iter()
            .map(|(c, k)| CertPair {
                cert: full(&d.conf_dir, text(c)),
                key: full(&d.conf_dir, text(k)),
            })
            .collect();
        let stamps: Vec<Option<Stamp>> = pairs
            .iter()
            .flat_map(|p| [stamp(&p.cert), stamp(&p.key)])
            .collect();
        let key = (d.server, pairs);
        if let Some(c) = self.loaded.get(&key, &stamps) {
            return Ok(c);
        }
        let config = peregrine_tls::config::with_certificates(base, &key.1, &d.passwords)?;
        self.loaded.put(key, config.clone(), stamps);
        Ok(config)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config() -> Arc<ServerConfig> {
        let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
        let resolver = Arc::new(peregrine_tls::certs::Resolver::new(Vec::new()));
        Arc::new(
            ServerConfig::builder_with_provider(provider)
                .with_safe_default_protocol_versions()
                .unwrap()
                .with_no_client_auth()
                .with_cert_resolver(resolver),
        )
    }

    #[test]
    fn the_cache_is_bounded_and_checks_stamps() {
        let cache = CertCache::default();
        let c = config();
        let pair = |i: usize| CertPair {
            cert: PathBuf::from(format!("/c{i}")),
            key: PathBuf::from(format!("/k{i}")),
        };
        for i in 0..DYNAMIC_CERTIFICATES + 10 {
            cache.put((0, vec![pair(i)]), c.clone(), vec![None, None]);
        }
        assert_eq!(cache.len(), DYNAMIC_CERTIFICATES);
        // The oldest went first.
        assert!(cache.get(&(0, vec![pair(0)]), &[None, None]).is_none());
        let last = (0, vec![pair(DYNAMIC_CERTIFICATES + 9)]);
        assert!(cache.get(&last, &[None, None]).is_some());
        // A file changed since: loaded again.
        let changed = Some(Stamp {
            len: 1,
            modified: None,
            inode: 1,
        });
        assert!(cache.get(&last, &[changed, None]).is_none());
    }

    #[test]
    fn values_are_made_full() {
        let dir = Path::new("/etc/peregrine");
        assert_eq!(
            full(dir, "a.crt".into()),
            PathBuf::from("/etc/peregrine/a.crt")
        );
        assert_eq!(full(dir, "/x/a.crt".into()), PathBuf::from("/x/a.crt"));
        assert_eq!(full(dir, "data:PEM".into()), PathBuf::from("data:PEM"));
    }
}
