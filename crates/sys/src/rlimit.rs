//! `RLIMIT_NOFILE` (`worker_rlimit_nofile`).

use std::io;

/// The (soft, hard) open-file limits of the process.
pub fn get_nofile() -> io::Result<(u64, u64)> {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `lim` is a live rlimit the kernel fills in.
    let rc = unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) };
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok((lim.rlim_cur, lim.rlim_max))
}

/// Sets the (soft, hard) open-file limits. Raising the hard limit needs
/// `CAP_SYS_RESOURCE`; nginx sets both to the directive's value.
pub fn set_nofile(soft: u64, hard: u64) -> io::Result<()> {
    let lim = libc::rlimit {
        rlim_cur: soft,
        rlim_max: hard,
    };
    // SAFETY: `lim` is a live, initialised rlimit read by the kernel.
    let rc = unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &lim) };
    if rc < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_soft_limit() {
        let (soft, hard) = get_nofile().unwrap();
        let lower = soft.min(hard).saturating_sub(1).max(64);
        set_nofile(lower, hard).unwrap();
        assert_eq!(get_nofile().unwrap(), (lower, hard));
        set_nofile(soft, hard).unwrap();
        assert_eq!(get_nofile().unwrap(), (soft, hard));
    }

    #[test]
    fn soft_above_hard_is_refused() {
        let (_, hard) = get_nofile().unwrap();
        if hard != libc::RLIM_INFINITY {
            assert!(set_nofile(hard + 1, hard).is_err());
        }
    }
}
