//! `limit_conn`: the requests in flight per client in a zone shared by the
//! workers. A slow response (`limit_rate`) holds its slot: a second request
//! is rejected (503, nginx's `limiting connections by zone` line); when
//! the first client vanishes mid-response the slot is given back. Checked
//! against nginx (`E2E_SERVER=nginx`).

use std::io::{Read, Write};
use std::time::{Duration, Instant};

use crate::support::{Prefix, Server, conf_with, wait_for_lines};

#[test]
fn a_slot_is_held_while_a_response_goes_out_and_given_back_when_the_client_goes() {
    let p = Prefix::new("limit_conn");
    p.write("html/big/f.bin", vec![b'x'; 1 << 20]);
    p.write("html/big/small.txt", "small\n");
    let s = Server::start(
        p,
        &conf_with(
            "    limit_conn_zone $binary_remote_addr zone=addr:1m;\n\
             server {\n        listen 127.0.0.1:PORT;\n        root html;\n\
             location /big/ { limit_conn addr 1; limit_rate 20k;\n\
                 add_header X-Status $limit_conn_status always; }\n    }\n",
        ),
    );
    let mut first = s.connect();
    first
        .write_all(b"GET /big/f.bin HTTP/1.1\r\nHost: x\r\n\r\n")
        .unwrap();
    let mut head = [0u8; 12];
    first.read_exact(&mut head).unwrap();
    assert_eq!(&head, b"HTTP/1.1 200");
    let second = s.get("/big/small.txt");
    assert_eq!(second.status, 503);
    assert_eq!(second.header("X-Status"), Some("REJECTED"));
    let lines = wait_for_lines(&s.prefix.dir.join("logs/error.log"), 1, |l| {
        l.contains("limiting connections by zone \"addr\"")
    });
    assert!(lines[0].contains("[error]") && lines[0].contains("client: 127.0.0.1"));
    // The first client vanishes: its slot comes back once the server
    // sees it gone.
    drop(first);
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let r = s.get("/big/small.txt");
        if r.status == 200 {
            assert_eq!(r.header("X-Status"), Some("PASSED"));
            break;
        }
        assert!(Instant::now() < deadline, "the slot was not given back");
        std::thread::sleep(Duration::from_millis(100));
    }
}
