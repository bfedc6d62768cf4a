//! CPU counting and thread affinity (`worker_processes auto`,
//! `worker_cpu_affinity`).
//!
//! Affinity applies to the calling thread: Peregrine's workers are threads,
//! so each worker pins itself (nginx pins each worker process).

use std::io;

/// Bits per mask word: masks are `[u64]`, bit N of word W is CPU `64*W + N`.
const WORD_BITS: usize = 64;

fn empty_set() -> libc::cpu_set_t {
    // SAFETY: cpu_set_t is a plain bit array for which all-zero is the valid
    // empty set (what CPU_ZERO produces).
    unsafe { std::mem::zeroed() }
}

/// The CPUs this process may run on, in increasing order.
pub fn allowed_cpus() -> io::Result<Vec<usize>> {
    let mut set = empty_set();
    // SAFETY: pid 0 is the calling thread; `set` is a live cpu_set_t and its
    // exact size is passed.
    let rc =
        unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) };
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    let max = libc::CPU_SETSIZE as usize;
    // SAFETY: CPU_ISSET only reads `set` for indexes below CPU_SETSIZE.
    Ok((0..max)
        .filter(|&i| unsafe { libc::CPU_ISSET(i, &set) })
        .collect())
}

/// The number of CPUs usable by this process (its affinity mask, as
/// `nproc`), falling back to the online count, and at least 1.
pub fn num_cpus() -> usize {
    match allowed_cpus() {
        Ok(v) if !v.is_empty() => v.len(),
        _ => {
            // SAFETY: sysconf has no memory-safety preconditions.
            let n = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) };
            usize::try_from(n).ok().filter(|&n| n > 0).unwrap_or(1)
        }
    }
}

/// Pins the calling thread to the CPUs whose bits are set in `mask`.
///
/// An empty mask, or one naming only CPUs beyond `CPU_SETSIZE`, is
/// `InvalidInput`; the kernel rejects (EINVAL) a mask with no usable CPU.
pub fn set_thread_affinity(mask: &[u64]) -> io::Result<()> {
    let mut set = empty_set();
    let mut any = false;
    for (w, word) in mask.iter().enumerate() {
        for b in 0..WORD_BITS {
            let cpu = w * WORD_BITS + b;
            if word & (1u64 << b) != 0 && cpu < libc::CPU_SETSIZE as usize {
                // SAFETY: `cpu` < CPU_SETSIZE, so CPU_SET writes inside `set`.
                unsafe { libc::CPU_SET(cpu, &mut set) };
                any = true;
            }
        }
    }
    if !any {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "empty CPU mask",
        ));
    }
    // SAFETY: pid 0 is the calling thread; `set` is a live cpu_set_t and its
    // exact size is passed.
    let rc = unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) };
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
    fn counts_cpus() {
        let cpus = allowed_cpus().unwrap();
        assert!(!cpus.is_empty());
        assert_eq!(num_cpus(), cpus.len());
    }

    #[test]
    fn pins_a_thread_to_one_cpu() {
        let first = allowed_cpus().unwrap()[0];
        std::thread::spawn(move || {
            let mut mask = vec![0u64; first / 64 + 1];
            mask[first / 64] |= 1 << (first % 64);
            set_thread_affinity(&mask).unwrap();
            assert_eq!(allowed_cpus().unwrap(), vec![first]);
        })
        .join()
        .unwrap();
    }

    #[test]
    fn rejects_empty_and_impossible_masks() {
        std::thread::spawn(|| {
            assert_eq!(
                set_thread_affinity(&[]).unwrap_err().kind(),
                io::ErrorKind::InvalidInput
            );
            assert_eq!(
                set_thread_affinity(&[0, 0]).unwrap_err().kind(),
                io::ErrorKind::InvalidInput
            );
            // CPU 1000 exists on no test machine: the kernel refuses it.
            let mut mask = vec![0u64; 16];
            mask[15] = 1 << 40;
            assert!(set_thread_affinity(&mask).is_err());
        })
        .join()
        .unwrap();
    }
}
