//! What the fuzz target checks, run in CI: random frame soups (real
//! request blocks among random types, flags, streams and payloads) give the
//! same outcome whole and split at every byte, and never panic.

use super::*;

/// xorshift64*, seeded: the soups are the same on every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

fn random_frame(r: &mut Rng) -> Vec<u8> {
    let stream = [0, 1, 1, 3, 3, 5, 2, 0x7fff_ffff][r.below(8) as usize];
    let flags = [
        0,
        flags::END_STREAM,
        flags::END_HEADERS,
        5,
        flags::PADDED,
        flags::PRIORITY,
        0x2d,
        0xff,
    ][r.below(8) as usize];
    match r.below(6) {
        0 => frame(
            Kind::Headers,
            flags | flags::END_HEADERS,
            stream,
            &block(&GET),
        ),
        1 => frame(Kind::Headers, flags, stream, &block(&POST)),
        _ => {
            let kind = Kind::from_u8(r.below(12) as u8);
            let len = [0, 1, 4, 5, 6, 8, 9, 12, 30][r.below(9) as usize];
            let payload: Vec<u8> = (0..len).map(|_| r.below(256) as u8).collect();
            frame(kind, flags, stream, &payload)
        }
    }
}

#[test]
fn random_frame_soups_agree_whole_and_split() {
    let mut r = Rng(0x9e37_79b9_7f4a_7c15);
    let mut verdicts = std::collections::HashMap::new();
    for _ in 0..300 {
        let mut input = start();
        for _ in 0..r.below(12) + 1 {
            input.extend(random_frame(&mut r));
        }
        let o = run(&input);
        *verdicts.entry(o.error.map(|e| e.0)).or_insert(0) += 1;
    }
    // The soups reach both clean runs and several different errors.
    assert!(verdicts.len() >= 4, "{verdicts:?}");
}
