//! `split_clients`: a client's share by the MurmurHash2 of a value, as
//! nginx computes it (so a client keeps its A/B variant across a move from
//! nginx). The expected shares come from a separate implementation of
//! `ngx_murmur_hash2` (hashes in the comments); checked against nginx
//! (`E2E_SERVER=nginx`).

use crate::support::{Prefix, Server, conf_with};

#[test]
fn shares_by_murmur_hash2_as_nginx() {
    let p = Prefix::new("split-clients");
    let s = Server::start(
        p,
        &conf_with(
            "    split_clients \"$arg_k\" $half { 50% first; * second; }\n\
             split_clients \"x${arg_k}\" $tiny { 0.01% rare; }\n\
             server {\n        listen 127.0.0.1:PORT;\n\
             location / { return 200 \"[$half][$tiny]\\n\"; }\n    }\n",
        ),
    );
    // 50 % ends at 5000 * 0xffffffff / 10000 = 2,147,483,647.
    for (k, half) in [
        ("", "first"),              // hash 0
        ("a", "second"),            // 0x9268_5f5e
        ("abcd", "first"),          // 0x2687_3021
        ("hello", "second"),        // 0xe561_29cb
        ("hello%20world", "first"), // the raw argument: 0x3b64_58e8
        ("127.0.0.1", "second"),    // 0xb613_1d91
    ] {
        let r = s.get(&format!("/?k={k}"));
        assert_eq!(
            String::from_utf8_lossy(&r.body),
            format!("[{half}][]\n"),
            "k={k}: a share below 100% without * leaves the rest empty"
        );
    }
}
