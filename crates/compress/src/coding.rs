//! The three content codings Peregrine produces, and what the client accepts.

use crate::accept;

/// A content coding (RFC 9110 §8.4.1) that Peregrine can produce.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Coding {
    /// `gzip` (RFC 1952), as ngx_http_gzip_filter_module writes it.
    Gzip,
    /// `br` (RFC 7932), as ngx_brotli's filter writes it.
    Brotli,
    /// `zstd` (RFC 8878), as zstd-nginx-module writes it.
    Zstd,
}

impl Coding {
    /// The order in which equally preferred codings are chosen: the smallest
    /// output first (brotli, then zstd, then gzip).
    pub const PREFERENCE: [Coding; 3] = [Coding::Brotli, Coding::Zstd, Coding::Gzip];

    /// The `Content-Encoding` value.
    pub fn token(self) -> &'static str {
        match self {
            Coding::Gzip => "gzip",
            Coding::Brotli => "br",
            Coding::Zstd => "zstd",
        }
    }

    /// The suffix `gzip_static` / `brotli_static` / `zstd_static` append to
    /// the file's path to find its precompressed sibling.
    pub fn static_suffix(self) -> &'static str {
        match self {
            Coding::Gzip => ".gz",
            Coding::Brotli => ".br",
            Coding::Zstd => ".zst",
        }
    }
}

/// The client's preference for each coding: its q-value, `0.0` meaning
/// refused (RFC 9110 §12.5.3).
///
/// [`Accepted::from_header`] fills it with what nginx and its modules
/// actually accept, quirks included (for instance nginx never treats `*` as
/// gzip).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Accepted {
    pub gzip: f32,
    pub br: f32,
    pub zstd: f32,
}

impl Accepted {
    /// Nothing accepted (no `Accept-Encoding` header).
    pub const NONE: Accepted = Accepted {
        gzip: 0.0,
        br: 0.0,
        zstd: 0.0,
    };

    /// Reads the first `Accept-Encoding` header's value the way nginx
    /// does: gzip is accepted by ngx_http_gzip_accept_encoding's rules, br by
    /// ngx_brotli's, zstd by zstd-nginx-module's (except that an explicit
    /// `zstd;q=0` is honoured as a refusal, where that module ignores it).
    /// The q-value of an accepted coding ranks it against the others.
    pub fn from_header(value: Option<&str>) -> Accepted {
        let Some(value) = value else {
            return Accepted::NONE;
        };
        let v = value.as_bytes();
        let q_if = |ok: bool, token: &[u8]| {
            if ok {
                accept::token_q(v, token).unwrap_or(1.0)
            } else {
                0.0
            }
        };
        Accepted {
            gzip: q_if(accept::gzip_accepted(v), b"gzip"),
            br: q_if(accept::brotli_accepted(v), b"br"),
            zstd: q_if(accept::zstd_accepted(v), b"zstd"),
        }
    }

    /// The q-value for `coding`.
    pub fn q(&self, coding: Coding) -> f32 {
        match coding {
            Coding::Gzip => self.gzip,
            Coding::Brotli => self.br,
            Coding::Zstd => self.zstd,
        }
    }

    /// Whether `coding` is accepted at all (q > 0).
    pub fn accepts(&self, coding: Coding) -> bool {
        self.q(coding) > 0.0
    }
}

/// Of `candidates`, the one the client prefers: highest q-value, ties broken
/// by [`Coding::PREFERENCE`].
pub fn preferred(accepted: &Accepted, candidates: impl Fn(Coding) -> bool) -> Option<Coding> {
    let mut best: Option<(Coding, f32)> = None;
    for coding in Coding::PREFERENCE {
        let q = accepted.q(coding);
        if q <= 0.0 || !candidates(coding) {
            continue;
        }
        // Strictly greater: an equal q keeps the earlier (preferred) coding.
        if best.is_none_or(|(_, bq)| q > bq) {
            best = Some((coding, q));
        }
    }
    best.map(|(c, _)| c)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn acc(gzip: f32, br: f32, zstd: f32) -> Accepted {
        Accepted { gzip, br, zstd }
    }

    #[test]
    fn highest_q_wins() {
        let a = acc(1.0, 0.5, 0.8);
        assert_eq!(preferred(&a, |_| true), Some(Coding::Gzip));
        let a = acc(0.3, 0.5, 0.8);
        assert_eq!(preferred(&a, |_| true), Some(Coding::Zstd));
    }

    #[test]
    fn ties_prefer_br_then_zstd_then_gzip() {
        assert_eq!(
            preferred(&acc(1.0, 1.0, 1.0), |_| true),
            Some(Coding::Brotli)
        );
        assert_eq!(preferred(&acc(1.0, 0.0, 1.0), |_| true), Some(Coding::Zstd));
        assert_eq!(preferred(&acc(1.0, 0.5, 1.0), |_| true), Some(Coding::Zstd));
        assert_eq!(preferred(&acc(1.0, 0.0, 0.0), |_| true), Some(Coding::Gzip));
    }

    #[test]
    fn ineligible_and_refused_codings_are_skipped() {
        let a = acc(0.2, 1.0, 0.0);
        assert_eq!(preferred(&a, |c| c != Coding::Brotli), Some(Coding::Gzip));
        assert_eq!(preferred(&a, |c| c == Coding::Zstd), None);
        assert_eq!(preferred(&Accepted::NONE, |_| true), None);
    }

    #[test]
    fn from_header_reads_q_values() {
        let a = Accepted::from_header(Some("gzip;q=0.5, br;q=0.9, zstd"));
        assert_eq!(a, acc(0.5, 0.9, 1.0));
        assert_eq!(preferred(&a, |_| true), Some(Coding::Zstd));
        assert_eq!(Accepted::from_header(None), Accepted::NONE);
        // nginx does not treat `*` as accepting anything.
        assert_eq!(Accepted::from_header(Some("*")), Accepted::NONE);
        let a = Accepted::from_header(Some("gzip;q=0, br;q=0, zstd;q=0"));
        assert_eq!(a, Accepted::NONE);
    }

    #[test]
    fn tokens_and_suffixes() {
        assert_eq!(Coding::Gzip.token(), "gzip");
        assert_eq!(Coding::Brotli.token(), "br");
        assert_eq!(Coding::Zstd.token(), "zstd");
        assert_eq!(Coding::Gzip.static_suffix(), ".gz");
        assert_eq!(Coding::Brotli.static_suffix(), ".br");
        assert_eq!(Coding::Zstd.static_suffix(), ".zst");
    }
}
