//! The proxy module's `proxy_ssl_*` directives (`ngx_http_proxy_module`'s
//! SSL part): how TLS to an `https://` upstream is spoken. The settings
//! become [`ProxySslConf`]; the TLS client itself is the engine's
//! (`upstream::tls_client`), its rustls configuration peregrine-tls's
//! (`upstream`).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::Env;
use super::handlers::{arg, flag, msg, number, set, set_with};
use super::raw::{RawLoc, full_name};
use crate::error::Result;
use crate::model::ProxySslConf;
use crate::syntax::Directive;

/// nginx's `proxy_ssl_verify_depth` default.
pub const DEFAULT_VERIFY_DEPTH: u32 = 1;
/// nginx's `proxy_ssl_ciphers` default (OpenSSL's own default list).
pub const DEFAULT_CIPHERS: &str = "DEFAULT";
/// nginx's `proxy_ssl_protocols` default (1.23.4 and later).
pub const DEFAULT_PROTOCOLS: &[&str] = &["TLSv1.2", "TLSv1.3"];

/// One level's `proxy_ssl_*` as written.
#[derive(Debug, Clone, Default)]
pub struct RawProxySsl {
    pub server_name: Option<bool>,
    pub name: Option<String>,
    pub verify: Option<bool>,
    pub verify_depth: Option<u32>,
    pub trusted_certificate: Option<PathBuf>,
    pub crl: Option<PathBuf>,
    pub protocols: Option<Vec<String>>,
    pub ciphers: Option<String>,
    pub certificate: Option<String>,
    pub certificate_key: Option<String>,
    pub password_file: Option<PathBuf>,
    pub session_reuse: Option<bool>,
    /// Where the level's relative certificate names are resolved from.
    pub conf_dir: Option<PathBuf>,
}

/// The defaults every level merges onto.
pub fn nginx_default(prefix: &Path) -> ProxySslConf {
    ProxySslConf {
        server_name: false,
        name: None,
        verify: false,
        verify_depth: DEFAULT_VERIFY_DEPTH,
        trusted_certificate: None,
        crl: None,
        protocols: DEFAULT_PROTOCOLS.iter().map(|s| s.to_string()).collect(),
        ciphers: DEFAULT_CIPHERS.to_string(),
        certificate: None,
        password_file: None,
        session_reuse: true,
        conf_dir: prefix.to_path_buf(),
    }
}

impl RawProxySsl {
    /// nginx's merge: every setting inherits; the certificate and its key
    /// go together (`ngx_http_upstream_merge_ssl`... `conf->ssl_certificate
    /// == NULL`), an empty name cancelling an inherited pair.
    pub fn merge(&self, p: &Arc<ProxySslConf>) -> Arc<ProxySslConf> {
        let own_cert = self.certificate.is_some() || self.certificate_key.is_some();
        if !own_cert
            && self.server_name.is_none()
            && self.name.is_none()
            && self.verify.is_none()
            && self.verify_depth.is_none()
            && self.trusted_certificate.is_none()
            && self.crl.is_none()
            && self.protocols.is_none()
            && self.ciphers.is_none()
            && self.password_file.is_none()
            && self.session_reuse.is_none()
        {
            // The common case: one shared value (and one rustls
            // configuration per worker for all the locations under it).
            return p.clone();
        }
        let certificate = if own_cert {
            let c = self.certificate.clone().unwrap_or_default();
            let k = self.certificate_key.clone().unwrap_or_default();
            (!c.is_empty()).then_some((c, k))
        } else {
            p.certificate.clone()
        };
        Arc::new(ProxySslConf {
            server_name: self.server_name.unwrap_or(p.server_name),
            name: self.name.clone().or_else(|| p.name.clone()),
            verify: self.verify.unwrap_or(p.verify),
            verify_depth: self.verify_depth.unwrap_or(p.verify_depth),
            trusted_certificate: self
                .trusted_certificate
                .clone()
                .or_else(|| p.trusted_certificate.clone()),
            crl: self.crl.clone().or_else(|| p.crl.clone()),
            protocols: self
                .protocols
                .clone()
                .unwrap_or_else(|| p.protocols.clone()),
            ciphers: self.ciphers.clone().unwrap_or_else(|| p.ciphers.clone()),
            certificate,
            password_file: self
                .password_file
                .clone()
                .or_else(|| p.password_file.clone()),
            session_reuse: self.session_reuse.unwrap_or(p.session_reuse),
            conf_dir: if own_cert {
                self.conf_dir.clone().unwrap_or_else(|| p.conf_dir.clone())
            } else {
                p.conf_dir.clone()
            },
        })
    }
}

fn path(d: &Directive, env: &Env<'_>) -> PathBuf {
    PathBuf::from(full_name(env.conf_dir, arg(d, 0)))
}

/// A certificate name: resolved now without variables, per request with.
fn cert_name(d: &Directive, env: &Env<'_>) -> String {
    let v = arg(d, 0);
    if v.is_empty() || v.contains('$') {
        v.to_string()
    } else {
        full_name(env.conf_dir, v)
    }
}

pub fn proxy_ssl_server_name(l: &mut RawLoc, d: &Directive, _: &Env<'_>) -> Result<()> {
    set_with(&mut l.proxy_ssl.server_name, d, || flag(d))
}

pub fn proxy_ssl_name(l: &mut RawLoc, d: &Directive, _: &Env<'_>) -> Result<()> {
    set(&mut l.proxy_ssl.name, arg(d, 0).to_string(), d)
}

pub fn proxy_ssl_verify(l: &mut RawLoc, d: &Directive, _: &Env<'_>) -> Result<()> {
    set_with(&mut l.proxy_ssl.verify, d, || flag(d))
}

pub fn proxy_ssl_verify_depth(l: &mut RawLoc, d: &Directive, _: &Env<'_>) -> Result<()> {
    set_with(&mut l.proxy_ssl.verify_depth, d, || {
        number(d).map(|n| u32::try_from(n).unwrap_or(u32::MAX))
    })
}

pub fn proxy_ssl_trusted_certificate(l: &mut RawLoc, d: &Directive, env: &Env<'_>) -> Result<()> {
    set(&mut l.proxy_ssl.trusted_certificate, path(d, env), d)
}

pub fn proxy_ssl_crl(l: &mut RawLoc, d: &Directive, env: &Env<'_>) -> Result<()> {
    set(&mut l.proxy_ssl.crl, path(d, env), d)
}

/// `proxy_ssl_protocols NAME...` (a bitmask slot, as `ssl_protocols`).
pub fn proxy_ssl_protocols(l: &mut RawLoc, d: &Directive, _: &Env<'_>) -> Result<()> {
    const KNOWN: &[&str] = &["SSLv2", "SSLv3", "TLSv1", "TLSv1.1", "TLSv1.2", "TLSv1.3"];
    if let Some(bad) = d.args.iter().find(|a| !KNOWN.contains(&a.as_str())) {
        return Err(msg(d, format!("invalid value \"{bad}\"")));
    }
    let list = l.proxy_ssl.protocols.get_or_insert_with(Vec::new);
    for a in &d.args {
        if !list.contains(a) {
            list.push(a.clone());
        }
    }
    Ok(())
}

pub fn proxy_ssl_ciphers(l: &mut RawLoc, d: &Directive, _: &Env<'_>) -> Result<()> {
    set(&mut l.proxy_ssl.ciphers, arg(d, 0).to_string(), d)
}

pub fn proxy_ssl_certificate(l: &mut RawLoc, d: &Directive, env: &Env<'_>) -> Result<()> {
    l.proxy_ssl.conf_dir = Some(PathBuf::from(env.conf_dir));
    set(&mut l.proxy_ssl.certificate, cert_name(d, env), d)
}

pub fn proxy_ssl_certificate_key(l: &mut RawLoc, d: &Directive, env: &Env<'_>) -> Result<()> {
    l.proxy_ssl.conf_dir = Some(PathBuf::from(env.conf_dir));
    set(&mut l.proxy_ssl.certificate_key, cert_name(d, env), d)
}

/// `proxy_ssl_password_file FILE`: kept as `ssl_password_file` is (rustls
/// reads unencrypted keys only: an encrypted one is refused by name when
/// it is loaded).
pub fn proxy_ssl_password_file(l: &mut RawLoc, d: &Directive, env: &Env<'_>) -> Result<()> {
    set(&mut l.proxy_ssl.password_file, path(d, env), d)
}

pub fn proxy_ssl_session_reuse(l: &mut RawLoc, d: &Directive, _: &Env<'_>) -> Result<()> {
    set_with(&mut l.proxy_ssl.session_reuse, d, || flag(d))
}

/// `proxy_ssl_conf_command NAME VALUE`: OpenSSL's `SSL_CONF_cmd()`
/// settings, as `ssl_conf_command`: refused with that reason.
pub fn proxy_ssl_conf_command(_: &mut RawLoc, d: &Directive, _: &Env<'_>) -> Result<()> {
    Err(msg(
        d,
        "\"proxy_ssl_conf_command\" is not supported by Peregrine: its commands are OpenSSL's (SSL_CONF_cmd), rustls has no counterpart",
    ))
}

#[cfg(test)]
mod tests {
    fn loc(extra: &str) -> std::sync::Arc<crate::model::ProxySslConf> {
        let c = crate::parse_str(
            &format!(
                "events {{}} http {{ proxy_ssl_verify on; proxy_ssl_certificate a.crt; \
             proxy_ssl_certificate_key a.key; server {{ listen 127.0.0.1:8080; \
             location / {{ proxy_pass https://127.0.0.1:8443; {extra} }} }} }}"
            ),
            "/tmp/peregrine-proxy-ssl-test/nginx.conf",
        )
        .unwrap();
        c.http.as_ref().unwrap().servers[0].locations[0]
            .conf
            .proxy_ssl
            .clone()
    }

    #[test]
    fn inherits_and_cancels() {
        let l = loc("");
        assert!(l.verify && !l.server_name && l.session_reuse);
        assert!(l.certificate.as_ref().unwrap().0.ends_with("/a.crt"));
        let l = loc("proxy_ssl_certificate \"\"; proxy_ssl_certificate_key \"\";");
        assert!(l.certificate.is_none());
        let l = loc("proxy_ssl_certificate $arg_c.crt; proxy_ssl_certificate_key $arg_c.key;");
        assert_eq!(l.certificate.as_ref().unwrap().0, "$arg_c.crt");
    }
}
