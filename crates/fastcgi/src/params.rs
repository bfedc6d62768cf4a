//! Name-value pairs read back (FastCGI 1.0 §3.4): the content of a
//! `GET_VALUES_RESULT` record, or of the `PARAMS` records an encoder wrote.
//! Like PHP-FPM's `fcgi_get_params`, a block is read on its own: a pair that
//! does not end inside it is an error.

/// A pair's length runs past the end of its block.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("broken FastCGI name-value pair at byte {0}")]
pub struct PairError(pub usize);

/// The pairs of one block, in order; stops after the first error.
pub fn pairs(block: &[u8]) -> Pairs<'_> {
    Pairs { block, pos: 0 }
}

/// Iterator returned by [`pairs`].
pub struct Pairs<'a> {
    block: &'a [u8],
    pos: usize,
}

impl<'a> Pairs<'a> {
    fn len(&mut self) -> Option<usize> {
        let b = *self.block.get(self.pos)?;
        if b & 0x80 == 0 {
            self.pos += 1;
            return Some(usize::from(b));
        }
        let four = self.block.get(self.pos..self.pos + 4)?;
        self.pos += 4;
        let n = u32::from_be_bytes(four.try_into().ok()?) & 0x7fff_ffff;
        usize::try_from(n).ok()
    }

    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let s = self.block.get(self.pos..self.pos.checked_add(n)?)?;
        self.pos += n;
        Some(s)
    }

    fn pair(&mut self) -> Option<(&'a [u8], &'a [u8])> {
        let name_len = self.len()?;
        let value_len = self.len()?;
        Some((self.take(name_len)?, self.take(value_len)?))
    }
}

impl<'a> Iterator for Pairs<'a> {
    type Item = Result<(&'a [u8], &'a [u8]), PairError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.pos >= self.block.len() {
            return None;
        }
        let start = self.pos;
        match self.pair() {
            Some(p) => Some(Ok(p)),
            None => {
                self.pos = self.block.len();
                Some(Err(PairError(start)))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_long_and_broken() {
        let block = [
            &[1u8, 0x80, 0, 0, 2][..],
            b"ab\x01",
            b"\x00\x01c",
            b"\x02\x05ab",
        ]
        .concat();
        let got: Vec<_> = pairs(&block).collect();
        assert_eq!(
            got,
            [
                Ok((&b"a"[..], &b"b\x01"[..])),
                Ok((b"", b"c")),
                Err(PairError(11))
            ]
        );
        assert_eq!(pairs(b"").count(), 0);
        // A 4-byte length cut short, and one past the block.
        assert_eq!(pairs(b"\x80\x00").next(), Some(Err(PairError(0))));
        assert_eq!(
            pairs(b"\xff\xff\xff\xff\x00").next(),
            Some(Err(PairError(0)))
        );
    }
}
