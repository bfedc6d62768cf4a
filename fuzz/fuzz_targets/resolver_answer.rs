//! Fuzzes the resolver's reading of a name server's datagram: the input,
//! its first two bytes replaced by the id of the pending A query, answers
//! a lookup of `a.example.net` (AAAA off). No panic; a lookup that ends
//! has addresses or an error, and the same datagram twice ends it once.
#![no_main]

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use libfuzzer_sys::fuzz_target;
use peregrine_resolver::{Lookup, Resolver, Settings};

fuzz_target!(|data: &[u8]| {
    let now = Instant::now();
    let mut r = Resolver::new(
        Settings {
            servers: vec![SocketAddr::from(([127, 0, 0, 1], 53))],
            valid: None,
            ipv4: true,
            ipv6: false,
        },
        1,
    );
    assert_eq!(r.lookup("a.example.net", now, Duration::from_secs(5)), Lookup::Pending);
    let query: Vec<(usize, Vec<u8>)> = r.transmit().collect();
    let mut datagram = data.to_vec();
    if datagram.len() >= 2 {
        datagram[..2].copy_from_slice(&query[0].1[..2]);
    }
    let first = r.on_datagram(0, &datagram, now);
    if let Some(done) = &first {
        assert_eq!(done.name, "a.example.net");
        if let Ok(a) = &done.result {
            assert!(!a.is_empty());
        }
        assert!(r.on_datagram(0, &datagram, now).is_none());
    }
});
