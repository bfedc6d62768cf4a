//! The ssl module's directives (ngx_http_ssl_module): `ssl_certificate`,
//! `ssl_certificate_key`, `ssl_protocols`, `ssl_ciphers`,
//! `ssl_prefer_server_ciphers`, `ssl_session_cache`, `ssl_session_timeout`,
//! `ssl_session_tickets`, at http and server level; merged per server into
//! [`SslConf`]. The files are read, and the cipher string checked, when the
//! engine builds each server's TLS configuration (peregrine-tls), which
//! `-t` does too.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use super::Env;
use super::handlers::{arg, flag, msg, set, set_with, size, time};
use super::raw::{RawSrv, full_name};
use crate::error::{ConfError, Result};
use crate::model::{ServerConf, SslConf, SslSessionCache};
use crate::syntax::Directive;

/// nginx's `ssl_ciphers` default.
pub const DEFAULT_CIPHERS: &str = "HIGH:!aNULL:!MD5";
/// nginx's `ssl_protocols` default (1.23.4 and later).
pub const DEFAULT_PROTOCOLS: &[&str] = &["TLSv1.2", "TLSv1.3"];
/// nginx's `ssl_session_timeout` default.
pub const DEFAULT_SESSION_TIMEOUT: Duration = Duration::from_secs(300);
/// The smallest `shared:NAME:SIZE` nginx takes: 8 pages of 4 KiB
/// (`session cache "..." is too small`).
pub const MIN_SHARED_CACHE: usize = 8 * 4096;

/// The ssl settings of one level as written.
#[derive(Debug, Clone, Default)]
pub struct RawSsl {
    /// `ssl_certificate` (nginx's array: a level that has some replaces
    /// the enclosing level's).
    pub certificates: Option<Vec<PathBuf>>,
    pub certificate_keys: Option<Vec<PathBuf>>,
    pub protocols: Option<Vec<String>>,
    pub ciphers: Option<String>,
    pub prefer_server_ciphers: Option<bool>,
    pub session_cache: Option<SslSessionCache>,
    pub session_timeout: Option<Duration>,
    pub session_tickets: Option<bool>,
}

impl RawSsl {
    /// Merges with the http level.
    pub fn merge(&self, http: &RawSsl) -> RawSsl {
        RawSsl {
            certificates: self.certificates.clone().or(http.certificates.clone()),
            certificate_keys: self
                .certificate_keys
                .clone()
                .or(http.certificate_keys.clone()),
            protocols: self.protocols.clone().or(http.protocols.clone()),
            ciphers: self.ciphers.clone().or(http.ciphers.clone()),
            prefer_server_ciphers: self.prefer_server_ciphers.or(http.prefer_server_ciphers),
            session_cache: self.session_cache.clone().or(http.session_cache.clone()),
            session_timeout: self.session_timeout.or(http.session_timeout),
            session_tickets: self.session_tickets.or(http.session_tickets),
        }
    }

    /// The merged settings with nginx's defaults. A certificate without a
    /// key of the same rank is left out here and refused by
    /// [`check_keys`] when the server listens with `ssl`.
    pub fn resolve(&self) -> SslConf {
        let certs = self.certificates.clone().unwrap_or_default();
        let keys = self.certificate_keys.clone().unwrap_or_default();
        SslConf {
            certificates: certs.into_iter().zip(keys).collect(),
            protocols: self
                .protocols
                .clone()
                .unwrap_or_else(|| DEFAULT_PROTOCOLS.iter().map(|s| s.to_string()).collect()),
            ciphers: self
                .ciphers
                .clone()
                .unwrap_or_else(|| DEFAULT_CIPHERS.to_string()),
            prefer_server_ciphers: self.prefer_server_ciphers.unwrap_or(false),
            session_cache: self.session_cache.clone().unwrap_or(SslSessionCache::None),
            session_timeout: self.session_timeout.unwrap_or(DEFAULT_SESSION_TIMEOUT),
            session_tickets: self.session_tickets.unwrap_or(true),
        }
    }

    /// nginx's merge check (ngx_http_ssl_merge_srv_conf): every
    /// certificate needs its key. `None` when they pair up, else the
    /// message (said for the first certificate without one).
    pub fn check_keys(&self) -> Option<String> {
        let certs = self.certificates.as_deref().unwrap_or_default();
        let keys = self.certificate_keys.as_deref().unwrap_or_default();
        certs.get(keys.len()).map(|c| {
            format!(
                "no \"ssl_certificate_key\" is defined for certificate \"{}\"",
                c.display()
            )
        })
    }
}

/// nginx's check of `listen ... ssl` (ngx_http_ssl_init): the default
/// server of an address that speaks TLS has a certificate.
pub fn check_listen(servers: &[Arc<ServerConf>]) -> Result<()> {
    for l in servers.iter().flat_map(|s| &s.listen).filter(|l| l.ssl) {
        let on_addr = |s: &&Arc<ServerConf>| s.listen.iter().any(|x| x.addr == l.addr);
        let default = servers
            .iter()
            .filter(on_addr)
            .find(|s| {
                s.listen
                    .iter()
                    .any(|x| x.addr == l.addr && x.default_server)
            })
            .or_else(|| servers.iter().find(on_addr));
        if let Some(s) = default
            && s.ssl.certificates.is_empty()
        {
            return Err(ConfError::at(
                &s.span,
                "no \"ssl_certificate\" is defined for the \"listen ... ssl\" directive",
            ));
        }
    }
    Ok(())
}

/// A file named relative to the configuration's directory, as nginx's
/// `ngx_conf_full_name(..., 1)` (the conf prefix).
fn path(d: &Directive, env: &Env<'_>) -> PathBuf {
    PathBuf::from(full_name(env.conf_dir, arg(d, 0)))
}

/// `ssl_certificate FILE` (several: one per key type).
pub fn ssl_certificate(s: &mut RawSrv, d: &Directive, env: &Env<'_>) -> Result<()> {
    s.ssl
        .certificates
        .get_or_insert_with(Vec::new)
        .push(path(d, env));
    Ok(())
}

pub fn ssl_certificate_key(s: &mut RawSrv, d: &Directive, env: &Env<'_>) -> Result<()> {
    s.ssl
        .certificate_keys
        .get_or_insert_with(Vec::new)
        .push(path(d, env));
    Ok(())
}

/// `ssl_protocols NAME...` (ngx_conf_set_bitmask_slot: a name it does not
/// know is `invalid value`).
pub fn ssl_protocols(s: &mut RawSrv, d: &Directive, _: &Env<'_>) -> Result<()> {
    const KNOWN: &[&str] = &["SSLv2", "SSLv3", "TLSv1", "TLSv1.1", "TLSv1.2", "TLSv1.3"];
    if let Some(bad) = d.args.iter().find(|a| !KNOWN.contains(&a.as_str())) {
        return Err(msg(d, format!("invalid value \"{bad}\"")));
    }
    set(&mut s.ssl.protocols, d.args.clone(), d)
}

pub fn ssl_ciphers(s: &mut RawSrv, d: &Directive, _: &Env<'_>) -> Result<()> {
    set(&mut s.ssl.ciphers, arg(d, 0).to_string(), d)
}

pub fn ssl_prefer_server_ciphers(s: &mut RawSrv, d: &Directive, _: &Env<'_>) -> Result<()> {
    set_with(&mut s.ssl.prefer_server_ciphers, d, || flag(d))
}

pub fn ssl_session_timeout(s: &mut RawSrv, d: &Directive, _: &Env<'_>) -> Result<()> {
    set_with(&mut s.ssl.session_timeout, d, || time(d, arg(d, 0)))
}

pub fn ssl_session_tickets(s: &mut RawSrv, d: &Directive, _: &Env<'_>) -> Result<()> {
    set_with(&mut s.ssl.session_tickets, d, || flag(d))
}

/// `ssl_session_cache off | none | [builtin[:size]] [shared:name:size]`
/// (ngx_http_ssl_session_cache, its checks and words).
pub fn ssl_session_cache(s: &mut RawSrv, d: &Directive, _: &Env<'_>) -> Result<()> {
    let mut out = None;
    for v in &d.args {
        let invalid = || msg(d, format!("invalid session cache \"{v}\""));
        let this = match v.as_str() {
            "off" => SslSessionCache::Off,
            "none" => SslSessionCache::None,
            "builtin" => SslSessionCache::Builtin(None),
            _ if v.len() > 8 && v.starts_with("builtin:") => {
                let n = v[8..].parse().map_err(|_| invalid())?;
                SslSessionCache::Builtin(Some(n))
            }
            _ if v.len() > 7 && v.starts_with("shared:") => {
                let (name, sz) = v[7..].split_once(':').ok_or_else(invalid)?;
                if name.is_empty() {
                    return Err(invalid());
                }
                let bytes = size(d, sz).map_err(|_| invalid())?;
                if bytes < MIN_SHARED_CACHE {
                    return Err(msg(d, format!("session cache \"{v}\" is too small")));
                }
                SslSessionCache::Shared {
                    name: name.to_string(),
                    size: bytes,
                }
            }
            _ => return Err(invalid()),
        };
        // `builtin shared:...`: the shared cache is what serves.
        out = match (out, this) {
            (Some(SslSessionCache::Shared { name, size }), SslSessionCache::Builtin(_)) => {
                Some(SslSessionCache::Shared { name, size })
            }
            (_, t) => Some(t),
        };
    }
    match out {
        Some(c) => set(&mut s.ssl.session_cache, c, d),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use crate::model::SslSessionCache;

    fn conf(http: &str) -> crate::error::Result<crate::model::Config> {
        crate::parse_str(
            &format!("events {{}} http {{ {http} }}"),
            "/tmp/peregrine-ssl-test/nginx.conf",
        )
    }

    #[test]
    fn settings_merge_and_default() {
        let c = conf(
            "ssl_certificate a.crt; ssl_certificate_key a.key; ssl_session_timeout 10m;
             server { listen 127.0.0.1:8443 ssl; ssl_protocols TLSv1.3; ssl_session_cache shared:S:1m; }
             server { listen 127.0.0.1:8443; ssl_certificate /b.crt; ssl_certificate_key /b.key; }",
        )
        .unwrap();
        let s = &c.http.as_ref().unwrap().servers;
        assert!(s[0].listen[0].ssl);
        assert!(!s[1].listen[0].ssl);
        let a = &s[0].ssl;
        assert_eq!(a.certificates.len(), 1);
        assert!(a.certificates[0].0.ends_with("a.crt"), "{a:?}");
        assert!(a.certificates[0].0.is_absolute(), "relative to the prefix");
        assert_eq!(a.protocols, ["TLSv1.3"]);
        assert_eq!(a.session_timeout.as_secs(), 600);
        assert_eq!(
            a.session_cache,
            SslSessionCache::Shared {
                name: "S".into(),
                size: 1 << 20
            }
        );
        let b = &s[1].ssl;
        assert_eq!(b.certificates[0].0.to_str(), Some("/b.crt"));
        assert_eq!(b.protocols, ["TLSv1.2", "TLSv1.3"]);
        assert_eq!(b.ciphers, "HIGH:!aNULL:!MD5");
        assert!(b.session_tickets);
        assert_eq!(b.session_cache, SslSessionCache::None);
    }

    #[test]
    fn nginx_errors() {
        let e = |t: &str| conf(t).unwrap_err().to_string();
        assert!(e("ssl_protocols TLSv1.2 TLSv9;").contains("invalid value \"TLSv9\""));
        assert!(e("ssl_session_cache shared:S;").contains("invalid session cache \"shared:S\""));
        assert!(e("ssl_session_cache bogus;").contains("invalid session cache \"bogus\""));
        assert!(e("ssl_session_cache shared:S:1k;").contains("is too small"));
        assert!(e("ssl_ciphers A; ssl_ciphers B;").contains("is duplicate"));
        assert!(
            e("server { listen 127.0.0.1:8443 ssl; ssl_certificate /a.crt; }")
                .contains("no \"ssl_certificate_key\" is defined for certificate \"/a.crt\"")
        );
        assert!(
            e("server { listen 127.0.0.1:8443 ssl; }")
                .contains("no \"ssl_certificate\" is defined for the \"listen ... ssl\" directive")
        );
    }
}
