//! v2 TLVs (proxy-protocol.txt §2.2.1–2.2.7) and the lookup behind nginx's
//! `$proxy_protocol_tlv_NAME` (`ngx_proxy_protocol_get_tlv`). As in nginx,
//! the block is checked only as far as a lookup walks it.

use super::{Addresses, ProxyHeader};
use std::borrow::Cow;

/// Type and 2-byte length before each value.
const TLV_HEADER: usize = 3;

/// `PP2_TYPE_SSL`'s fixed part: the client flags byte and the 4-byte verify result.
const SSL_FIXED: usize = 5;

/// TLV types by nginx's names (`ngx_proxy_protocol_tlv_entries`).
pub const TLV_NAMES: [(&str, u8); 5] = [
    ("alpn", 0x01),
    ("authority", 0x02),
    ("unique_id", 0x05),
    ("ssl", 0x20),
    ("netns", 0x30),
];

/// Sub-TLVs of `ssl` by nginx's names, after `ssl_` (`ngx_proxy_protocol_tlv_ssl_entries`).
pub const SSL_TLV_NAMES: [(&str, u8); 5] = [
    ("version", 0x21),
    ("cn", 0x22),
    ("cipher", 0x23),
    ("sig_alg", 0x24),
    ("key_alg", 0x25),
];

/// The `ssl` TLV type.
const SSL: u8 = 0x20;

/// Why a lookup failed, in nginx's error-log words (level `error`).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TlvError {
    /// A TLV's length runs past its block (checked as the lookup walks it).
    #[error("broken PROXY protocol TLV")]
    Broken,
    /// `0x` followed by something `ngx_hextoi` refuses.
    #[error("invalid PROXY protocol TLV \"{0}\"")]
    Invalid(String),
    /// A name nginx does not know (nginx: the variable is not found).
    #[error("unknown PROXY protocol TLV \"{0}\"")]
    Unknown(String),
    /// An `ssl` TLV shorter than its fixed part (nginx fails the variable
    /// without a log line).
    #[error("PROXY protocol ssl TLV too short")]
    SslTooShort,
}

/// One TLV: its type and value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tlv<'a> {
    pub kind: u8,
    pub value: &'a [u8],
}

/// The TLVs of a block in order; stops after a broken one.
pub fn tlvs(block: &[u8]) -> impl Iterator<Item = Result<Tlv<'_>, TlvError>> {
    let mut rest = Some(block);
    std::iter::from_fn(move || {
        let b = rest.filter(|b| !b.is_empty())?;
        let value_len = b
            .get(1..TLV_HEADER)
            .map(|l| usize::from(u16::from_be_bytes([l[0], l[1]])));
        match value_len.and_then(|n| b.get(TLV_HEADER..TLV_HEADER + n)) {
            Some(value) => {
                rest = Some(&b[TLV_HEADER + value.len()..]);
                Some(Ok(Tlv { kind: b[0], value }))
            }
            None => {
                rest = None;
                Some(Err(TlvError::Broken))
            }
        }
    })
}

/// `ngx_proxy_protocol_lookup_tlv`: the first TLV of type `kind`.
fn lookup(block: &[u8], kind: u64) -> Result<Option<&[u8]>, TlvError> {
    for t in tlvs(block) {
        let t = t?;
        if u64::from(t.kind) == kind {
            return Ok(Some(t.value));
        }
    }
    Ok(None)
}

/// `ngx_hextoi`: hex digits (at least one), refusing what would pass
/// `NGX_MAX_INT_T_VALUE`.
fn hextoi(s: &[u8]) -> Option<u64> {
    const CUTOFF: u64 = (i64::MAX as u64) / 16;
    if s.is_empty() {
        return None;
    }
    s.iter().try_fold(0u64, |v, &c| {
        if v > CUTOFF {
            return None;
        }
        Some(v * 16 + u64::from((c as char).to_digit(16)?))
    })
}

impl ProxyHeader {
    /// The TLVs after the address block (empty where nginx keeps none).
    pub fn tlv_list(&self) -> impl Iterator<Item = Result<Tlv<'_>, TlvError>> {
        tlvs(self.nginx_tlvs())
    }

    /// nginx keeps TLVs only with IPv4/IPv6 addresses.
    fn nginx_tlvs(&self) -> &[u8] {
        match self.addresses {
            Addresses::Inet { .. } => &self.tlvs,
            _ => &[],
        }
    }

    /// The value of `$proxy_protocol_tlv_NAME` for `name` (what follows the
    /// prefix): `alpn`, `authority`, `unique_id`, `ssl`, `netns`, `0xNN`;
    /// `ssl_verify` (the verify result in decimal), `ssl_version`, `ssl_cn`,
    /// `ssl_cipher`, `ssl_sig_alg`, `ssl_key_alg`, `ssl_0xNN` from the `ssl`
    /// TLV's sub-TLVs. `Ok(None)`: not there (the variable is empty).
    pub fn tlv(&self, name: &str) -> Result<Option<Cow<'_, [u8]>>, TlvError> {
        let mut block = self.nginx_tlvs();
        let mut names = &TLV_NAMES;
        let mut n = name;
        if let Some(sub) = name.strip_prefix("ssl_") {
            let Some(ssl) = lookup(block, u64::from(SSL))? else {
                return Ok(None);
            };
            if ssl.len() < SSL_FIXED {
                return Err(TlvError::SslTooShort);
            }
            if sub == "verify" {
                let verify = u32::from_be_bytes([ssl[1], ssl[2], ssl[3], ssl[4]]);
                return Ok(Some(Cow::Owned(verify.to_string().into_bytes())));
            }
            block = &ssl[SSL_FIXED..];
            names = &SSL_TLV_NAMES;
            n = sub;
        }
        if let Some(hex) = n.strip_prefix("0x") {
            let kind = hextoi(hex.as_bytes()).ok_or_else(|| TlvError::Invalid(name.to_owned()))?;
            return Ok(lookup(block, kind)?.map(Cow::Borrowed));
        }
        match names.iter().find(|(known, _)| *known == n) {
            Some(&(_, kind)) => Ok(lookup(block, u64::from(kind))?.map(Cow::Borrowed)),
            None => Err(TlvError::Unknown(name.to_owned())),
        }
    }
}
