//! OCSP stapling from the responder (`ssl_stapling on` without
//! `ssl_stapling_file`): the request for a certificate (RFC 6960, 4.1),
//! its fetch over HTTP/1.0 GET (appendix A.1, as nginx's
//! `ngx_ssl_ocsp_create_request` sends it) and the check of the answer
//! before it is stapled (`ngx_ssl_stapling_ocsp_handler`: a successful
//! response whose status for the certificate is `good`).
//!
//! Hand-written over [`crate::der`]: no well-kept OCSP crate is in the
//! build, the request is a handful of fixed elements, and the response is
//! read only as far as the certificate's status and `nextUpdate`.
//!
//! The fetch blocks: [`Stapler::refresh`] runs on its own thread (see the
//! engine's `tls::spawn_stapling`), never on a worker's, and what it gets
//! is swapped into the certificate that handshakes pick
//! ([`crate::certs::Resolver::staple`]).

use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::sync::{Arc, Weak};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use aws_lc_rs::digest;
use rustls::pki_types::CertificateDer;
use x509_parser::certificate::X509Certificate;
use x509_parser::extensions::{GeneralName, ParsedExtension};

use crate::certs::Resolver;
use crate::der::{self, Der, TAG_ENUMERATED, TAG_OCTETS, TAG_OID, TAG_SEQUENCE};

/// How long a responder has to connect and to answer (nginx's
/// `ssl_stapling_responder` uses the resolver and a 60-second timeout:
/// `NGX_SSL_OCSP_TIMEOUT` is not a directive either).
pub const FETCH_TIMEOUT: Duration = Duration::from_secs(60);

/// The largest response read (nginx's `ngx_ssl_ocsp_request` buffer).
pub const MAX_RESPONSE: usize = 16384;

/// A good response is asked again this long before its `nextUpdate`, and
/// after this long when it has none (nginx: 5 minutes before, or 1 hour).
pub const REFRESH_BEFORE: u64 = 300;
pub const REFRESH_DEFAULT: u64 = 3600;

/// After a failure the responder is asked again this much later (nginx's
/// 5 minutes).
pub const RETRY_AFTER: u64 = 300;

/// SHA-1 (1.3.14.3.2.26), the CertID hash nginx's OpenSSL uses
/// (`OCSP_cert_to_id` with a NULL digest).
const OID_SHA1: &[u8] = &[0x2b, 0x0e, 0x03, 0x02, 0x1a];
/// id-pkix-ocsp-basic (1.3.6.1.5.5.7.48.1.1).
const OID_OCSP_BASIC: &[u8] = &[0x2b, 0x06, 0x01, 0x05, 0x05, 0x07, 0x30, 0x01, 0x01];

/// Where the responder is: `http://HOST[:PORT][/PATH]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Responder {
    pub host: String,
    pub port: u16,
    pub path: String,
}

impl Responder {
    pub fn parse(url: &str) -> Option<Responder> {
        let rest = url
            .get(..7)
            .filter(|p| p.eq_ignore_ascii_case("http://"))
            .map(|_| &url[7..])?;
        let (authority, path) = match rest.find('/') {
            Some(i) => (&rest[..i], &rest[i..]),
            None => (rest, "/"),
        };
        let (host, port) = match authority.rsplit_once(':') {
            Some((h, p)) if !h.ends_with(']') || authority.starts_with('[') => (h, p.parse().ok()?),
            _ => (authority, 80),
        };
        if host.is_empty() {
            return None;
        }
        Some(Responder {
            host: host
                .trim_start_matches('[')
                .trim_end_matches(']')
                .to_string(),
            port,
            path: path.to_string(),
        })
    }
}

/// One certificate's question to its responder.
#[derive(Debug, Clone)]
pub struct Query {
    pub responder: Responder,
    /// The DER `OCSPRequest`.
    pub request: Vec<u8>,
    /// The DER `CertID` the answer must name.
    cert_id: Vec<u8>,
    /// For the error log: the certificate's file.
    pub cert_name: String,
    /// `ssl_stapling_verify`: the issuer's key (SubjectPublicKeyInfo DER)
    /// a response must be signed with, directly or through a responder
    /// certificate it issued for OCSP signing.
    verify: Option<Vec<u8>>,
}

/// The question for `leaf`, whose issuer is the chain's next certificate
/// or one of `trusted`; `Err` is nginx's warning for why there is none
/// (stapling is then left off for the certificate).
pub fn query(
    chain: &[CertificateDer<'_>],
    trusted: &[CertificateDer<'_>],
    responder: Option<&str>,
    cert_name: &str,
    verify: bool,
) -> Result<Query, String> {
    let leaf = chain
        .first()
        .and_then(|c| parse(c))
        .ok_or("no certificate")?;
    let issuer = chain
        .iter()
        .skip(1)
        .chain(trusted.iter())
        .filter_map(|c| parse(c))
        .find(|c| c.subject() == leaf.issuer())
        .ok_or_else(|| {
            format!("\"ssl_stapling\" ignored, issuer certificate not found for certificate \"{cert_name}\"")
        })?;
    let url = match responder {
        Some(u) => u.to_string(),
        None => ocsp_url(&leaf).ok_or_else(|| {
            format!(
                "\"ssl_stapling\" ignored, no OCSP responder URL in the certificate \"{cert_name}\""
            )
        })?,
    };
    let responder = Responder::parse(&url)
        .ok_or_else(|| format!("invalid URL prefix in OCSP responder \"{url}\""))?;
    let cert_id = cert_id(&leaf, &issuer);
    // OCSPRequest { tbsRequest { requestList { Request { reqCert } } } }
    let request = der::tlv(
        TAG_SEQUENCE,
        &der::tlv(
            TAG_SEQUENCE,
            &der::tlv(TAG_SEQUENCE, &der::tlv(TAG_SEQUENCE, &cert_id)),
        ),
    );
    Ok(Query {
        responder,
        request,
        cert_id,
        cert_name: cert_name.to_string(),
        verify: verify.then(|| issuer.public_key().raw.to_vec()),
    })
}

fn parse<'a>(c: &'a CertificateDer<'_>) -> Option<X509Certificate<'a>> {
    x509_parser::parse_x509_certificate(c.as_ref())
        .ok()
        .map(|(_, p)| p)
}

/// The certificate's `authorityInfoAccess` OCSP URI.
fn ocsp_url(leaf: &X509Certificate<'_>) -> Option<String> {
    leaf.extensions()
        .iter()
        .find_map(|e| match e.parsed_extension() {
            ParsedExtension::AuthorityInfoAccess(aia) => {
                aia.accessdescs
                    .iter()
                    .find_map(|d| match (&d.access_method, &d.access_location) {
                        (m, GeneralName::URI(u))
                            if *m == x509_parser::oid_registry::OID_PKIX_ACCESS_DESCRIPTOR_OCSP =>
                        {
                            Some(u.to_string())
                        }
                        _ => None,
                    })
            }
            _ => None,
        })
}

/// `CertID` (RFC 6960, 4.1.1) under SHA-1: the issuer's name and key
/// hashed, the leaf's serial.
fn cert_id(leaf: &X509Certificate<'_>, issuer: &X509Certificate<'_>) -> Vec<u8> {
    let sha1 = |b: &[u8]| digest::digest(&digest::SHA1_FOR_LEGACY_USE_ONLY, b);
    let name_hash = sha1(issuer.subject().as_raw());
    let key_hash = sha1(&issuer.public_key().subject_public_key.data);
    let mut alg = der::tlv(TAG_OID, OID_SHA1);
    alg.extend_from_slice(&[der::TAG_NULL, 0]);
    let mut id = der::tlv(TAG_SEQUENCE, &alg);
    id.extend(der::tlv(TAG_OCTETS, name_hash.as_ref()));
    id.extend(der::tlv(TAG_OCTETS, key_hash.as_ref()));
    id.extend(der::tlv(der::TAG_INTEGER, leaf.raw_serial()));
    der::tlv(TAG_SEQUENCE, &id)
}

/// Standard base64 with its padding (RFC 4648, 4).
fn base64(bytes: &[u8]) -> String {
    const ABC: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ABC[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

impl Query {
    /// The HTTP/1.0 GET nginx sends: the path, then the request in base64
    /// with `+`, `/`, `=` escaped (`NGX_ESCAPE_URI_COMPONENT`).
    pub fn http_request(&self) -> String {
        let mut uri = self.responder.path.clone();
        if !uri.ends_with('/') {
            uri.push('/');
        }
        for c in base64(&self.request).chars() {
            match c {
                '+' => uri.push_str("%2B"),
                '/' => uri.push_str("%2F"),
                '=' => uri.push_str("%3D"),
                c => uri.push(c),
            }
        }
        format!(
            "GET {uri} HTTP/1.0\r\nHost: {}\r\n\r\n",
            self.responder.host
        )
    }

    /// Asks the responder (blocking: see the module's note); the DER
    /// response body.
    pub fn fetch(&self) -> Result<Vec<u8>, String> {
        let r = &self.responder;
        let addr = (r.host.as_str(), r.port)
            .to_socket_addrs()
            .map_err(|e| format!("{} could not be resolved ({e})", r.host))?
            .next()
            .ok_or_else(|| format!("{} could not be resolved", r.host))?;
        let mut s = TcpStream::connect_timeout(&addr, FETCH_TIMEOUT)
            .map_err(|e| format!("connect() to {addr} failed ({e})"))?;
        s.set_read_timeout(Some(FETCH_TIMEOUT))
            .and_then(|()| s.set_write_timeout(Some(FETCH_TIMEOUT)))
            .and_then(|()| s.write_all(self.http_request().as_bytes()))
            .map_err(|e| format!("send() to {addr} failed ({e})"))?;
        let mut got = Vec::new();
        (&mut s)
            .take(MAX_RESPONSE as u64 + 1)
            .read_to_end(&mut got)
            .map_err(|e| format!("recv() from {addr} failed ({e})"))?;
        if got.len() > MAX_RESPONSE {
            return Err("OCSP responder sent too long response".into());
        }
        let (end, body) = head_end(&got).ok_or("OCSP responder sent invalid response")?;
        let head = String::from_utf8_lossy(&got[..end]);
        let status = head
            .split(' ')
            .nth(1)
            .ok_or("OCSP responder sent invalid response")?;
        if status != "200" {
            return Err(format!("OCSP responder sent invalid status {status}"));
        }
        Ok(got[body..].to_vec())
    }

    /// Checks `resp` for this certificate: `Ok(next_update)` (Unix
    /// seconds) when its status is good.
    pub fn check(&self, resp: &[u8], now: u64) -> Result<Option<u64>, String> {
        let bad = |_| "OCSP response is malformed".to_string();
        let mut outer = Der(Der(resp).next(TAG_SEQUENCE).map_err(bad)?);
        let status = outer.next(TAG_ENUMERATED).map_err(bad)?;
        if status != [0] {
            return Err(format!(
                "OCSP response not successful ({})",
                status.first().unwrap_or(&0xff)
            ));
        }
        let mut bytes = Der(Der(outer.next(0xa0).map_err(bad)?)
            .next(TAG_SEQUENCE)
            .map_err(bad)?);
        if bytes.next(TAG_OID).map_err(bad)? != OID_OCSP_BASIC {
            return Err("OCSP response is not basic".into());
        }
        let basic = bytes.next(TAG_OCTETS).map_err(bad)?;
        let mut basic = Der(Der(basic).next(TAG_SEQUENCE).map_err(bad)?);
        let (_, data, signed) = basic.any().map_err(bad)?;
        if let Some(issuer_key) = &self.verify {
            verify(&mut basic, signed, issuer_key)?;
        }
        let mut data = Der(data);
        if data.peek() == Some(0xa0) {
            data.any().map_err(bad)?; // version
        }
        data.any().map_err(bad)?; // responderID
        data.next(0x18).map_err(bad)?; // producedAt
        let mut responses = Der(data.next(TAG_SEQUENCE).map_err(bad)?);
        while !responses.0.is_empty() {
            let mut single = Der(responses.next(TAG_SEQUENCE).map_err(bad)?);
            let (_, _, id) = single.any().map_err(bad)?;
            if id != self.cert_id.as_slice() {
                continue;
            }
            let (tag, _, _) = single.any().map_err(bad)?;
            match tag {
                0x80 => {}
                0xa1 => return Err("certificate status \"revoked\" in the OCSP response".into()),
                _ => return Err("certificate status \"unknown\" in the OCSP response".into()),
            }
            single.next(0x18).map_err(bad)?; // thisUpdate
            let next = match single.peek() {
                Some(0xa0) => {
                    let t = Der(single.next(0xa0).map_err(bad)?)
                        .next(0x18)
                        .map_err(bad)?;
                    Some(generalized_time(t).ok_or("OCSP response is malformed")?)
                }
                _ => None,
            };
            if next.is_some_and(|n| n < now) {
                return Err("OCSP response has expired".into());
            }
            return Ok(next);
        }
        Err("certificate status not found in the OCSP response".into())
    }
}

/// id-kp-OCSPSigning (1.3.6.1.5.5.7.3.9).
const OID_OCSP_SIGNING: &[u8] = &[0x2b, 0x06, 0x01, 0x05, 0x05, 0x07, 0x03, 0x09];

/// `ssl_stapling_verify`: the response (`signed`, then in `rest` its
/// signature algorithm, signature and certificates) must be signed by
/// the certificate's issuer, or by a certificate the issuer signed for
/// OCSP signing and sent along (RFC 6960, 4.2.2.2). OpenSSL's
/// `OCSP_basic_verify` refuses any other signer unless trusted for OCSP
/// explicitly, which `ssl_trusted_certificate` does not do.
fn verify(rest: &mut Der<'_>, signed: &[u8], issuer_key: &[u8]) -> Result<(), String> {
    use x509_parser::prelude::FromDer;
    use x509_parser::x509::{AlgorithmIdentifier, SubjectPublicKeyInfo};
    let bad = |_| "OCSP response is malformed".to_string();
    let refused = || "OCSP_basic_verify() failed (SSL: root ca not trusted)".to_string();
    let (_, _, alg) = rest.any().map_err(bad)?;
    let sig = rest.next(0x03).map_err(bad)?;
    let (_, alg) = AlgorithmIdentifier::from_der(alg).map_err(|_| bad(der::Malformed))?;
    let (unused, sig) = sig.split_first().ok_or_else(|| bad(der::Malformed))?;
    let sig = x509_parser::asn1_rs::BitString::new(*unused, sig);
    let (_, issuer) =
        SubjectPublicKeyInfo::from_der(issuer_key).map_err(|_| bad(der::Malformed))?;
    let signed_by = |key: &SubjectPublicKeyInfo<'_>| {
        x509_parser::verify::verify_signature(key, &alg, &sig, signed).is_ok()
    };
    if signed_by(&issuer) {
        return Ok(());
    }
    let certs = match rest.peek() {
        Some(0xa0) => Der(rest.next(0xa0).map_err(bad)?)
            .next(TAG_SEQUENCE)
            .map_err(bad)?,
        _ => return Err(refused()),
    };
    let mut certs = Der(certs);
    while !certs.0.is_empty() {
        let (_, _, whole) = certs.any().map_err(bad)?;
        let Ok((_, c)) = x509_parser::parse_x509_certificate(whole) else {
            continue;
        };
        let delegated = c.verify_signature(Some(&issuer)).is_ok()
            && c.extended_key_usage().ok().flatten().is_some_and(|e| {
                e.value.ocsp_signing
                    || e.value
                        .other
                        .iter()
                        .any(|o| o.as_bytes() == OID_OCSP_SIGNING)
            });
        if delegated && c.validity().is_valid() && signed_by(c.public_key()) {
            return Ok(());
        }
    }
    Err(refused())
}

/// Where a response's head ends and its body starts: the first empty
/// line, CR LF or a bare LF as nginx's parser takes them.
fn head_end(got: &[u8]) -> Option<(usize, usize)> {
    let mut line_start = 0;
    for (i, &b) in got.iter().enumerate() {
        if b != b'\n' {
            continue;
        }
        let line = &got[line_start..i];
        if line.is_empty() || line == b"\r" {
            return Some((line_start, i + 1));
        }
        line_start = i + 1;
    }
    None
}

/// `YYYYMMDDHHMMSS[.f]Z` as Unix seconds.
fn generalized_time(t: &[u8]) -> Option<u64> {
    let s = std::str::from_utf8(t).ok()?;
    let digits = |r: std::ops::Range<usize>| s.get(r)?.parse::<u64>().ok();
    let (y, mo, d) = (digits(0..4)?, digits(4..6)?, digits(6..8)?);
    let (h, mi, sec) = (digits(8..10)?, digits(10..12)?, digits(12..14)?);
    if !s.ends_with('Z') || !(1..=12).contains(&mo) || !(1..=31).contains(&d) {
        return None;
    }
    // Days from the civil date (H. Hinnant's algorithm).
    let (y, m) = if mo <= 2 {
        (y - 1, mo + 9)
    } else {
        (y, mo - 3)
    };
    let era = y / 400;
    let yoe = y - era * 400;
    let doy = (153 * m + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = (era * 146_097 + doe).checked_sub(719_468)?;
    Some(days * 86_400 + h * 3600 + mi * 60 + sec)
}

pub fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// One certificate of a server block kept stapled: its question, and the
/// resolver (weakly: a reload that drops the block ends the stapling).
#[derive(Debug)]
pub struct Stapler {
    pub query: Query,
    pub resolver: Weak<Resolver>,
    /// The certificate's place in the resolver.
    pub index: usize,
    /// When to ask next (Unix seconds).
    pub due: u64,
}

impl Stapler {
    pub fn new(query: Query, resolver: &Arc<Resolver>, index: usize) -> Stapler {
        Stapler {
            query,
            resolver: Arc::downgrade(resolver),
            index,
            due: 0,
        }
    }

    /// Asks the responder and staples a good answer (or unstaples: a
    /// revoked certificate is not stapled, as nginx). `Err` is the line
    /// to log. `None` when the block is gone.
    pub fn refresh(&mut self) -> Option<Result<(), String>> {
        let resolver = self.resolver.upgrade()?;
        let now = unix_now();
        let outcome = self
            .query
            .fetch()
            .and_then(|resp| Ok((self.query.check(&resp, now)?, resp)));
        Some(match outcome {
            Ok((next, resp)) => {
                resolver.staple(self.index, Some(resp));
                self.due = match next {
                    Some(n) if n > now + 2 * REFRESH_BEFORE => n - REFRESH_BEFORE,
                    Some(_) => now + RETRY_AFTER.min(REFRESH_BEFORE),
                    None => now + REFRESH_DEFAULT,
                };
                Ok(())
            }
            Err(e) => {
                resolver.staple(self.index, None);
                self.due = now + RETRY_AFTER;
                Err(e)
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls() {
        assert_eq!(
            Responder::parse("http://127.0.0.1:8081/"),
            Some(Responder {
                host: "127.0.0.1".into(),
                port: 8081,
                path: "/".into()
            })
        );
        let r = Responder::parse("HTTP://ocsp.example/x").unwrap();
        assert_eq!(
            (r.host.as_str(), r.port, r.path.as_str()),
            ("ocsp.example", 80, "/x")
        );
        assert_eq!(Responder::parse("https://a/"), None);
        assert_eq!(Responder::parse("http://:80/"), None);
    }

    #[test]
    fn heads_end_at_an_empty_line() {
        assert_eq!(
            head_end(b"HTTP/1.0 200 OK\r\nA: b\r\n\r\nbody"),
            Some((23, 25))
        );
        assert_eq!(head_end(b"HTTP/1.1 200 OK\nA: b\n\nbody"), Some((21, 22)));
        assert_eq!(head_end(b"HTTP/1.1 200 OK\r\n"), None);
    }

    #[test]
    fn base64_and_times() {
        assert_eq!(base64(b""), "");
        assert_eq!(base64(b"f"), "Zg==");
        assert_eq!(base64(b"fo"), "Zm8=");
        assert_eq!(base64(b"foob"), "Zm9vYg==");
        assert_eq!(generalized_time(b"19700101000000Z"), Some(0));
        assert_eq!(generalized_time(b"20000301000000Z"), Some(951_868_800));
        assert_eq!(generalized_time(b"2000030100000"), None);
    }
}
