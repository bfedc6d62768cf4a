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
use super::handlers::{arg, flag, msg, number, set, set_with, size, time};
use super::raw::{RawSrv, full_name};
use crate::error::{ConfError, Result};
use crate::model::{ServerConf, SslConf, SslSessionCache, SslVerifyClient};
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

/// nginx's `ssl_buffer_size` default (`NGX_SSL_BUFSIZE`).
pub const DEFAULT_BUFFER_SIZE: usize = 16384;
/// nginx's `ssl_verify_depth` default.
pub const DEFAULT_VERIFY_DEPTH: u32 = 1;

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
    /// `ssl_session_ticket_key` (an array, like the certificates).
    pub ticket_keys: Option<Vec<PathBuf>>,
    pub ecdh_curve: Option<String>,
    pub buffer_size: Option<usize>,
    pub stapling: Option<bool>,
    pub stapling_file: Option<PathBuf>,
    pub stapling_responder: Option<String>,
    pub stapling_verify: Option<bool>,
    pub verify_client: Option<SslVerifyClient>,
    pub verify_depth: Option<u32>,
    pub client_certificate: Option<PathBuf>,
    pub trusted_certificate: Option<PathBuf>,
    pub crl: Option<PathBuf>,
    pub reject_handshake: Option<bool>,
    pub early_data: Option<bool>,
    pub password_file: Option<PathBuf>,
    /// The deprecated `ssl on;`.
    pub on: Option<bool>,
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
            ticket_keys: self.ticket_keys.clone().or(http.ticket_keys.clone()),
            ecdh_curve: self.ecdh_curve.clone().or(http.ecdh_curve.clone()),
            buffer_size: self.buffer_size.or(http.buffer_size),
            stapling: self.stapling.or(http.stapling),
            stapling_file: self.stapling_file.clone().or(http.stapling_file.clone()),
            stapling_responder: self
                .stapling_responder
                .clone()
                .or(http.stapling_responder.clone()),
            stapling_verify: self.stapling_verify.or(http.stapling_verify),
            verify_client: self.verify_client.or(http.verify_client),
            verify_depth: self.verify_depth.or(http.verify_depth),
            client_certificate: self
                .client_certificate
                .clone()
                .or(http.client_certificate.clone()),
            trusted_certificate: self
                .trusted_certificate
                .clone()
                .or(http.trusted_certificate.clone()),
            crl: self.crl.clone().or(http.crl.clone()),
            reject_handshake: self.reject_handshake.or(http.reject_handshake),
            early_data: self.early_data.or(http.early_data),
            password_file: self.password_file.clone().or(http.password_file.clone()),
            on: self.on.or(http.on),
        }
    }

    /// The merged settings with nginx's defaults. A certificate without a
    /// key of the same rank is left out here and refused by
    /// [`check_keys`] when the server listens with `ssl`.
    pub fn resolve(&self) -> SslConf {
        let certs = self.certificates.clone().unwrap_or_default();
        let keys = self.certificate_keys.clone().unwrap_or_default();
        let dynamic = certs
            .iter()
            .chain(&keys)
            .any(|p| p.to_str().is_some_and(has_variables));
        SslConf {
            certificates: certs.into_iter().zip(keys).collect(),
            dynamic_certificates: dynamic,
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
            ticket_keys: self.ticket_keys.clone().unwrap_or_default(),
            ecdh_curve: self
                .ecdh_curve
                .clone()
                .unwrap_or_else(|| "auto".to_string()),
            buffer_size: self.buffer_size.unwrap_or(DEFAULT_BUFFER_SIZE),
            stapling: self.stapling.unwrap_or(false),
            stapling_file: self.stapling_file.clone(),
            stapling_responder: self.stapling_responder.clone(),
            stapling_verify: self.stapling_verify.unwrap_or(false),
            verify_client: self.verify_client.unwrap_or(SslVerifyClient::Off),
            verify_depth: self.verify_depth.unwrap_or(DEFAULT_VERIFY_DEPTH),
            client_certificate: self.client_certificate.clone(),
            trusted_certificate: self.trusted_certificate.clone(),
            crl: self.crl.clone(),
            reject_handshake: self.reject_handshake.unwrap_or(false),
            early_data: self.early_data.unwrap_or(false),
            password_file: self.password_file.clone(),
            on: self.on.unwrap_or(false),
        }
    }

    /// nginx's merge check (ngx_http_ssl_merge_srv_conf): every
    /// certificate needs its key. `None` when they pair up, else the
    /// message (said for the first certificate without one).
    pub fn check_keys(&self) -> Option<String> {
        if self.verify_client.is_some_and(|v| v.verifies())
            && self.client_certificate.is_none()
            && self.trusted_certificate.is_none()
            && (self.certificates.is_some() || self.reject_handshake == Some(true))
        {
            return Some(
                "no ssl_client_certificate or ssl_trusted_certificate for ssl_verify_client".into(),
            );
        }
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

/// The deprecated `ssl on;`: TLS on the addresses whose default server has
/// it (nginx's `ngx_http_init_connection` reads the default server's
/// `ssl` flag; a server with `ssl on` that is not an address's default
/// server is reached there in plain HTTP).
pub fn apply_ssl_on(servers: &mut [Arc<ServerConf>]) {
    let mut tls = Vec::new();
    for (i, s) in servers.iter().enumerate() {
        for l in &s.listen {
            if default_of(servers, l.addr) == Some(i) && s.ssl.on {
                tls.push(l.addr);
            }
        }
    }
    for s in servers.iter_mut() {
        if let Some(s) = Arc::get_mut(s) {
            s.listen
                .iter_mut()
                .filter(|l| tls.contains(&l.addr))
                .for_each(|l| l.ssl = true);
        }
    }
}

/// The default server of `addr`: the one with `default_server`, else the
/// first listing it.
fn default_of(servers: &[Arc<ServerConf>], addr: std::net::SocketAddr) -> Option<usize> {
    let on_addr = |s: &Arc<ServerConf>| s.listen.iter().any(|x| x.addr == addr);
    servers
        .iter()
        .position(|s| s.listen.iter().any(|x| x.addr == addr && x.default_server))
        .or_else(|| servers.iter().position(on_addr))
}

/// nginx's check of `listen ... ssl` (ngx_http_ssl_init): the default
/// server of an address that speaks TLS has a certificate (or rejects
/// handshakes: `ssl_reject_handshake on`).
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
            && !s.ssl.reject_handshake
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

/// Whether a certificate or key value names variables (nginx's
/// `ngx_http_script_variables_count`): it is then expanded at each
/// handshake, a relative result taken from the configuration's directory.
pub fn has_variables(value: &str) -> bool {
    !super::vars::names(value).is_empty()
}

/// `ssl_certificate`'s and `ssl_certificate_key`'s value: a value with
/// variables or inline `data:` PEM kept as written, a file name made
/// full.
fn certificate_value(d: &Directive, env: &Env<'_>) -> PathBuf {
    let v = arg(d, 0);
    if has_variables(v) || v.starts_with("data:") {
        PathBuf::from(v)
    } else {
        path(d, env)
    }
}

/// `ssl_certificate FILE` (several: one per key type).
pub fn ssl_certificate(s: &mut RawSrv, d: &Directive, env: &Env<'_>) -> Result<()> {
    s.ssl
        .certificates
        .get_or_insert_with(Vec::new)
        .push(certificate_value(d, env));
    Ok(())
}

pub fn ssl_certificate_key(s: &mut RawSrv, d: &Directive, env: &Env<'_>) -> Result<()> {
    s.ssl
        .certificate_keys
        .get_or_insert_with(Vec::new)
        .push(certificate_value(d, env));
    Ok(())
}

/// `ssl_protocols NAME...` (ngx_conf_set_bitmask_slot: a name it does not
/// know is `invalid value`).
pub fn ssl_protocols(s: &mut RawSrv, d: &Directive, _: &Env<'_>) -> Result<()> {
    const KNOWN: &[&str] = &["SSLv2", "SSLv3", "TLSv1", "TLSv1.1", "TLSv1.2", "TLSv1.3"];
    if let Some(bad) = d.args.iter().find(|a| !KNOWN.contains(&a.as_str())) {
        return Err(msg(d, format!("invalid value \"{bad}\"")));
    }
    // A bitmask slot in nginx (`ngx_conf_set_bitmask_slot`): a second
    // `ssl_protocols` at one level adds its protocols, no "duplicate"
    // (certbot's options-ssl-nginx.conf, included beside a server's own,
    // relies on it).
    let list = s.ssl.protocols.get_or_insert_with(Vec::new);
    for a in &d.args {
        if !list.contains(a) {
            list.push(a.clone());
        }
    }
    Ok(())
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
    // `ngx_http_ssl_session_cache` has no duplicate check: a second line
    // at a level replaces the first (certbot's options file beside a
    // server's own line).
    if out.is_some() {
        s.ssl.session_cache = out;
    }
    Ok(())
}

/// `ssl_session_ticket_key FILE` (several: the first seals, all open).
pub fn ssl_session_ticket_key(s: &mut RawSrv, d: &Directive, env: &Env<'_>) -> Result<()> {
    s.ssl
        .ticket_keys
        .get_or_insert_with(Vec::new)
        .push(path(d, env));
    Ok(())
}

/// `ssl_ecdh_curve auto | NAME[:NAME...]` (checked when the server's TLS
/// configuration is built, as OpenSSL checks it then).
pub fn ssl_ecdh_curve(s: &mut RawSrv, d: &Directive, _: &Env<'_>) -> Result<()> {
    set(&mut s.ssl.ecdh_curve, arg(d, 0).to_string(), d)
}

/// `ssl_buffer_size SIZE`: the largest record the server writes (nginx
/// fills a buffer of that size before `SSL_write`, so its records are at
/// most that long).
pub fn ssl_buffer_size(s: &mut RawSrv, d: &Directive, _: &Env<'_>) -> Result<()> {
    set_with(&mut s.ssl.buffer_size, d, || size(d, arg(d, 0)))
}

/// `ssl_dhparam FILE`: accepted, with a notice once per configuration:
/// rustls has no finite-field Diffie-Hellman (`DHE-*` suites), the only
/// thing the file configures.
pub fn ssl_dhparam(_: &mut RawSrv, d: &Directive, env: &Env<'_>) -> Result<()> {
    const NOTICE: &str = "\"ssl_dhparam\" has no effect in Peregrine";
    if !env.warnings.borrow().iter().any(|w| w.starts_with(NOTICE)) {
        env.warn(
            d,
            format!("{NOTICE}: rustls has no finite-field DH (DHE) cipher suites"),
        );
    }
    Ok(())
}

pub fn ssl_stapling(s: &mut RawSrv, d: &Directive, _: &Env<'_>) -> Result<()> {
    set_with(&mut s.ssl.stapling, d, || flag(d))
}

/// `ssl_stapling_file FILE`: a DER OCSP response stapled as it is.
pub fn ssl_stapling_file(s: &mut RawSrv, d: &Directive, env: &Env<'_>) -> Result<()> {
    set(&mut s.ssl.stapling_file, path(d, env), d)
}

/// `ssl_stapling_responder URL`: the OCSP responder asked instead of the
/// certificate's (`http://` only, as nginx's `ngx_ssl_stapling_responder`).
pub fn ssl_stapling_responder(s: &mut RawSrv, d: &Directive, _: &Env<'_>) -> Result<()> {
    let url = arg(d, 0);
    if !url
        .get(..7)
        .is_some_and(|p| p.eq_ignore_ascii_case("http://"))
    {
        return Err(msg(
            d,
            format!("invalid URL prefix in OCSP responder \"{url}\""),
        ));
    }
    set(&mut s.ssl.stapling_responder, url.to_string(), d)
}

/// `ssl_stapling_verify on | off`: check the responder's signature before
/// stapling (against `ssl_trusted_certificate` and the chain).
pub fn ssl_stapling_verify(s: &mut RawSrv, d: &Directive, _: &Env<'_>) -> Result<()> {
    set_with(&mut s.ssl.stapling_verify, d, || flag(d))
}

/// `ssl_verify_client on | off | optional | optional_no_ca`.
pub fn ssl_verify_client(s: &mut RawSrv, d: &Directive, _: &Env<'_>) -> Result<()> {
    set_with(&mut s.ssl.verify_client, d, || {
        Ok(match arg(d, 0) {
            "off" => SslVerifyClient::Off,
            "on" => SslVerifyClient::On,
            "optional" => SslVerifyClient::Optional,
            "optional_no_ca" => SslVerifyClient::OptionalNoCa,
            v => return Err(msg(d, format!("invalid value \"{v}\""))),
        })
    })
}

pub fn ssl_verify_depth(s: &mut RawSrv, d: &Directive, _: &Env<'_>) -> Result<()> {
    set_with(&mut s.ssl.verify_depth, d, || {
        number(d).map(|n| u32::try_from(n).unwrap_or(u32::MAX))
    })
}

pub fn ssl_client_certificate(s: &mut RawSrv, d: &Directive, env: &Env<'_>) -> Result<()> {
    set(&mut s.ssl.client_certificate, path(d, env), d)
}

pub fn ssl_trusted_certificate(s: &mut RawSrv, d: &Directive, env: &Env<'_>) -> Result<()> {
    set(&mut s.ssl.trusted_certificate, path(d, env), d)
}

pub fn ssl_crl(s: &mut RawSrv, d: &Directive, env: &Env<'_>) -> Result<()> {
    set(&mut s.ssl.crl, path(d, env), d)
}

pub fn ssl_reject_handshake(s: &mut RawSrv, d: &Directive, _: &Env<'_>) -> Result<()> {
    set_with(&mut s.ssl.reject_handshake, d, || flag(d))
}

/// `ssl_early_data on`: accepted with a notice. Peregrine offers no 0-RTT
/// (rustls can, but early data is replayable, and nginx's `$ssl_early_data`
/// and 425 handling would be needed first): clients send their request
/// after the handshake instead, which is always correct.
pub fn ssl_early_data(s: &mut RawSrv, d: &Directive, env: &Env<'_>) -> Result<()> {
    set_with(&mut s.ssl.early_data, d, || flag(d))?;
    if s.ssl.early_data == Some(true) {
        env.warn(
            d,
            "\"ssl_early_data\" is not offered by Peregrine: clients send after the handshake",
        );
    }
    Ok(())
}

/// `ssl_password_file FILE`: the passwords of encrypted keys. rustls reads
/// unencrypted keys only; the file is kept so that an encrypted key is
/// refused with that reason when it is loaded (an unencrypted one works).
pub fn ssl_password_file(s: &mut RawSrv, d: &Directive, env: &Env<'_>) -> Result<()> {
    set(&mut s.ssl.password_file, path(d, env), d)
}

/// The deprecated `ssl on | off` (nginx 1.22 has it, 1.25.1 removed it;
/// real configurations still carry it): `on` makes every `listen` of the
/// server (of every server, at http level) speak TLS, with 1.22's warning.
pub fn ssl(s: &mut RawSrv, d: &Directive, env: &Env<'_>) -> Result<()> {
    set_with(&mut s.ssl.on, d, || flag(d))?;
    env.warn(
        d,
        "the \"ssl\" directive is deprecated, use the \"listen ... ssl\" directive instead",
    );
    Ok(())
}

/// `ssl_certificate_cache off | max=N [inactive=TIME] [valid=TIME]`:
/// caches certificates named with variables; Peregrine reads its
/// certificates when the configuration loads, so the cache has nothing to
/// hold. The arguments are checked as nginx checks them.
pub fn ssl_certificate_cache(_: &mut RawSrv, d: &Directive, _: &Env<'_>) -> Result<()> {
    for a in &d.args {
        let ok = match a.split_once('=') {
            None => a == "off" && d.args.len() == 1,
            Some(("max", n)) => n.parse::<u64>().is_ok_and(|n| n > 0),
            Some(("inactive" | "valid", t)) => super::handlers::time(d, t).is_ok(),
            Some(_) => false,
        };
        if !ok {
            return Err(msg(d, format!("invalid parameter \"{a}\"")));
        }
    }
    Ok(())
}

/// `ssl_certificate_compression on | off`: `on` is accepted with a
/// notice (rustls compresses certificates only with codecs not built in).
pub fn ssl_certificate_compression(_: &mut RawSrv, d: &Directive, env: &Env<'_>) -> Result<()> {
    if flag(d)? {
        env.warn(
            d,
            "\"ssl_certificate_compression\" is not offered by Peregrine: certificates go uncompressed",
        );
    }
    Ok(())
}

/// `ssl_ocsp off | on | leaf`: checking client certificates with OCSP is
/// not implemented (rustls checks revocation by CRL only: `ssl_crl`), so
/// anything but `off` is refused rather than silently not checked.
pub fn ssl_ocsp(_: &mut RawSrv, d: &Directive, _: &Env<'_>) -> Result<()> {
    match arg(d, 0) {
        "off" => Ok(()),
        "on" | "leaf" => Err(msg(
            d,
            "\"ssl_ocsp\" is not supported by Peregrine: client certificates are checked against \"ssl_crl\" only",
        )),
        v => Err(msg(d, format!("invalid value \"{v}\""))),
    }
}

/// `ssl_ocsp_responder`, `ssl_ocsp_cache`: used by `ssl_ocsp` only.
pub fn ssl_ocsp_unused(_: &mut RawSrv, _: &Directive, _: &Env<'_>) -> Result<()> {
    Ok(())
}

/// `ssl_conf_command NAME VALUE`: OpenSSL's `SSL_CONF_cmd()` settings,
/// which have no meaning to rustls: refused with that reason.
pub fn ssl_conf_command(_: &mut RawSrv, d: &Directive, _: &Env<'_>) -> Result<()> {
    Err(msg(
        d,
        "\"ssl_conf_command\" is not supported by Peregrine: its commands are OpenSSL's (SSL_CONF_cmd), rustls has no counterpart",
    ))
}

/// `ssl_ech_file FILE`: Encrypted Client Hello keys; rustls serves no ECH.
pub fn ssl_ech_file(_: &mut RawSrv, d: &Directive, _: &Env<'_>) -> Result<()> {
    Err(msg(
        d,
        "\"ssl_ech_file\" is not supported by Peregrine: rustls has no server-side Encrypted Client Hello",
    ))
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

    /// nginx checks no duplicate `ssl_session_cache`: the last line at a
    /// level is the one in force (certbot's options file and a server's
    /// own line; `nginx -t` accepts both).
    #[test]
    fn a_second_session_cache_replaces_the_first() {
        let c = conf(
            "server { listen 127.0.0.1:8443; ssl_session_cache shared:A:10m; \
             ssl_session_cache shared:B:1m; }",
        )
        .unwrap();
        let s = &c.http.as_ref().unwrap().servers[0].ssl;
        assert_eq!(
            s.session_cache,
            SslSessionCache::Shared {
                name: "B".into(),
                size: 1 << 20
            }
        );
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
