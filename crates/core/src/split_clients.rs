//! `split_clients`'s variable at run time (`ngx_http_split_clients_variable`):
//! the source's MurmurHash2 (nginx's `ngx_murmur_hash2`, so a client lands
//! in the same share as under nginx) against the shares' bounds, in order.

use peregrine_conf::model::SplitClientsConf;

use crate::vars::VarCtx;

/// MurmurHash2, 32-bit, seed 0, as `ngx_murmur_hash2`.
pub(crate) fn murmur_hash2(data: &[u8]) -> u32 {
    const M: u32 = 0x5bd1_e995;
    let mut h = data.len() as u32;
    let mut chunks = data.chunks_exact(4);
    for c in chunks.by_ref() {
        let mut k = u32::from_le_bytes([c[0], c[1], c[2], c[3]]);
        k = k.wrapping_mul(M);
        k ^= k >> 24;
        k = k.wrapping_mul(M);
        h = h.wrapping_mul(M) ^ k;
    }
    let rest = chunks.remainder();
    if !rest.is_empty() {
        for (i, &b) in rest.iter().enumerate().rev() {
            h ^= u32::from(b) << (8 * i);
        }
        h = h.wrapping_mul(M);
    }
    h ^= h >> 13;
    h = h.wrapping_mul(M);
    h ^ (h >> 15)
}

/// Appends the value of `s`'s variable for this request (nothing when no
/// share takes the hash: the shares sum below 100 % without `*`).
pub(crate) fn push(vc: &VarCtx<'_>, s: &SplitClientsConf, out: &mut String) {
    let hash = murmur_hash2(vc.expand(&s.source).as_bytes());
    if let Some((_, v)) = s
        .parts
        .iter()
        .find(|(bound, _)| hash < *bound || *bound == 0)
    {
        out.push_str(v);
    }
}

#[cfg(test)]
mod tests {
    use super::murmur_hash2;

    #[test]
    fn murmur_hash2_reference_values() {
        // Austin Appleby's MurmurHash2, seed 0: values of a separate
        // implementation of ngx_murmur_hash2 (tails of 0 to 3 bytes).
        assert_eq!(murmur_hash2(b""), 0);
        assert_eq!(murmur_hash2(b"a"), 0x9268_5f5e);
        assert_eq!(murmur_hash2(b"abcd"), 0x2687_3021);
        assert_eq!(murmur_hash2(b"127.0.0.1"), 0xb613_1d91);
        assert_eq!(murmur_hash2(b"hello world"), 0x44a8_1419);
    }
}
