//! The few DER (X.690) reads and writes the hand-written parts of this
//! crate need ([`crate::keys`]'s PKCS #8, [`crate::ocsp`]'s requests and
//! responses): definite lengths up to four bytes, tags of one byte.

/// A DER element that does not read as expected.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Malformed;

pub const TAG_INTEGER: u8 = 0x02;
pub const TAG_OCTETS: u8 = 0x04;
pub const TAG_NULL: u8 = 0x05;
pub const TAG_OID: u8 = 0x06;
pub const TAG_ENUMERATED: u8 = 0x0a;
pub const TAG_SEQUENCE: u8 = 0x30;

/// A DER reader: one tag-length-value after another.
pub struct Der<'a>(pub &'a [u8]);

impl<'a> Der<'a> {
    /// The next element's tag, contents and whole encoding.
    pub fn any(&mut self) -> Result<(u8, &'a [u8], &'a [u8]), Malformed> {
        let whole = self.0;
        let [t, first, rest @ ..] = whole else {
            return Err(Malformed);
        };
        let (len, rest) = if *first < 0x80 {
            (usize::from(*first), rest)
        } else {
            let n = usize::from(first & 0x7f);
            if n == 0 || n > 4 || rest.len() < n {
                return Err(Malformed);
            }
            let len = rest[..n]
                .iter()
                .fold(0usize, |a, &b| (a << 8) | usize::from(b));
            (len, &rest[n..])
        };
        if rest.len() < len {
            return Err(Malformed);
        }
        self.0 = &rest[len..];
        let used = whole.len() - self.0.len();
        Ok((*t, &rest[..len], &whole[..used]))
    }

    /// The next element's contents, which must have `tag`.
    pub fn next(&mut self, tag: u8) -> Result<&'a [u8], Malformed> {
        match self.any()? {
            (t, contents, _) if t == tag => Ok(contents),
            _ => Err(Malformed),
        }
    }

    pub fn peek(&self) -> Option<u8> {
        self.0.first().copied()
    }
}

/// One element: `tag`, the length, `contents`.
pub fn tlv(tag: u8, contents: &[u8]) -> Vec<u8> {
    let len = contents.len();
    let mut out = Vec::with_capacity(contents.len() + 6);
    out.push(tag);
    if len < 0x80 {
        out.push(len as u8);
    } else {
        let bytes = (len as u32).to_be_bytes();
        let skip = bytes.iter().take_while(|&&b| b == 0).count();
        out.push(0x80 | (4 - skip) as u8);
        out.extend_from_slice(&bytes[skip..]);
    }
    out.extend_from_slice(contents);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lengths_both_ways() {
        for n in [0usize, 5, 127, 128, 300, 70_000] {
            let body = vec![7u8; n];
            let enc = tlv(TAG_OCTETS, &body);
            let mut d = Der(&enc);
            let (t, c, whole) = d.any().unwrap();
            assert_eq!((t, c.len(), whole.len()), (TAG_OCTETS, n, enc.len()));
            assert!(d.0.is_empty());
        }
        assert_eq!(Der(&[0x30, 0x05, 1]).any(), Err(Malformed));
        assert_eq!(Der(&[0x30, 0x80]).any(), Err(Malformed));
        assert_eq!(Der(&[0x04, 0x00]).next(TAG_SEQUENCE), Err(Malformed));
    }
}
