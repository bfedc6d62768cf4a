//! peregrine-sys: the only crate of Peregrine that calls the operating system
//! through `unsafe` code.
//!
//! It owns thin, safe wrappers over Linux system calls that neither `std`,
//! `mio` nor `socket2` expose the way the server needs them: `sendfile(2)`,
//! `TCP_NODELAY`/`SO_LINGER`/`TCP_DEFER_ACCEPT` on an existing descriptor
//! (`tcp_nopush` is `MSG_MORE` on the send, see the engine's writer), CPU
//! affinity, `RLIMIT_NOFILE`, dropping privileges (`user` directive),
//! process identity and signals (blocking them and reading them from a
//! `signalfd(2)`), `daemon on` (fork + setsid), the system's `crypt(3)`
//! for htpasswd files ([`crypt`]), and the hot path's socket
//! reads and writes without glibc's cancellation-point wrappers
//! ([`sock_io`], through rustix's direct system calls).
//!
//! It does not own any policy: which socket gets which option, when to drop
//! privileges, what a signal means, all that is the engine's. Every `unsafe`
//! block carries a `// SAFETY:` comment saying why the call is sound.

pub mod cpu;
pub mod crypt;
pub mod inherit;
pub mod net;
pub mod process;
pub mod rlimit;
pub mod signal;
pub mod sock_io;
pub mod user;

pub use cpu::{allowed_cpus, num_cpus, set_thread_affinity};
pub use inherit::{inherited_listener, set_cloexec};
pub use net::{sendfile, set_linger_zero, set_tcp_defer_accept, set_tcp_nodelay, tcp_segs_in};
pub use process::{daemonize, getpid, gettid, kill, signal_thread};
pub use rlimit::{get_nofile, set_nofile};
pub use signal::{SignalFd, block_signals};
pub use sock_io::{peek, recv, send, send_vectored};
pub use user::{
    Credentials, Ids, credentials, drop_thread_privileges, is_root, lookup_group, lookup_user,
};
