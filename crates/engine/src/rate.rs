//! `limit_rate` and `limit_rate_after`: a response's bytes are paced by the
//! connection's own timer, with nginx's arithmetic (`ngx_http_write_filter`):
//! by second `t` of the request at most `rate * (t + 1)` bytes past the
//! first `limit_rate_after` may have been sent; after a write the
//! connection waits as long as its bytes take at `rate`.

use std::time::Duration;

use crate::write::Output;

/// Bytes that may still be sent now (negative: how far ahead the sending is).
pub fn allowance(rate: u64, after: u64, sent: u64, elapsed_secs: u64) -> i128 {
    let paced = i128::from(sent.saturating_sub(after));
    i128::from(rate) * (i128::from(elapsed_secs) + 1) - paced
        + i128::from(after.saturating_sub(sent))
}

/// How long `bytes` take at `rate` bytes a second (nginx adds 1 ms when
/// waiting to catch up, so the timer never fires early).
pub fn wait(rate: u64, bytes: u64) -> Duration {
    Duration::from_millis(bytes.saturating_mul(1000) / rate.max(1))
}

/// Before a write of `out` under `limit_rate`, `elapsed_secs` into its
/// request: sets the write's byte budget and returns the bytes counted as
/// sent (to pace what the write sends), or, when the response is ahead of
/// its pace, how long to wait first.
#[inline(never)]
pub fn gate(out: &mut Output, rate: u64, after: u64, elapsed_secs: u64) -> Result<u64, Duration> {
    let sent = out.head_bytes + out.body_bytes;
    let limit = allowance(rate, after, sent, elapsed_secs);
    if limit <= 0 {
        let ahead = u64::try_from(-limit).unwrap_or(u64::MAX);
        return Err(wait(rate, ahead) + Duration::from_millis(1));
    }
    out.limit(usize::try_from(limit).unwrap_or(usize::MAX));
    Ok(sent)
}

/// After a write of `out` under `limit_rate` spent its budget (`before`
/// bytes had been sent): how long the paced bytes it sent take at `rate`.
#[inline(never)]
pub fn pause(out: &Output, rate: u64, after: u64, before: u64) -> Duration {
    let now = out.head_bytes + out.body_bytes;
    let paced =
        now.saturating_sub(after) - before.saturating_sub(after).min(now.saturating_sub(after));
    wait(rate, paced)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nginx_pacing() {
        // 15 bytes a second: 15 in second 0, 30 by second 1.
        assert_eq!(allowance(15, 0, 0, 0), 15);
        assert_eq!(allowance(15, 0, 15, 0), 0);
        assert_eq!(allowance(15, 0, 15, 1), 15);
        // The first `after` bytes are free.
        assert_eq!(allowance(10, 100, 0, 0), 110);
        assert_eq!(allowance(10, 100, 105, 0), 5);
        assert_eq!(allowance(10, 100, 120, 0), -10);
        assert_eq!(wait(10, 10), Duration::from_secs(1));
        assert_eq!(wait(1000, 1), Duration::from_millis(1));
    }
}
