use std::net::{IpAddr, Ipv4Addr};
use std::time::{Duration, Instant};

use simple_dns::rdata::{A, AAAA, CNAME, RData};
use simple_dns::{CLASS, Name, Packet, PacketFlag, RCODE, ResourceRecord};

use super::*;

fn settings(servers: usize, ipv6: bool) -> Settings {
    Settings {
        servers: (0..servers)
            .map(|i| SocketAddr::from(([127, 0, 0, 1], 5300 + i as u16)))
            .collect(),
        valid: None,
        ipv4: true,
        ipv6,
    }
}

/// The queries sent: (server, id, name, is AAAA).
fn sent(r: &mut Resolver) -> Vec<(usize, u16, String, bool)> {
    r.transmit()
        .map(|(s, b)| {
            let p = Packet::parse(&b).expect("our query parses");
            assert!(p.has_flags(PacketFlag::RECURSION_DESIRED));
            let q = &p.questions[0];
            let v6 = q.qtype == simple_dns::TYPE::AAAA.into();
            (s, p.id(), q.qname.to_string(), v6)
        })
        .collect()
}

/// A response to query `id` for `name`, with `records` as answers.
fn reply(id: u16, name: &str, v6: bool, rcode: RCODE, records: &[(&str, u32, Rec)]) -> Vec<u8> {
    let mut p = Packet::new_reply(id);
    *p.rcode_mut() = rcode;
    let qtype = if v6 {
        simple_dns::TYPE::AAAA
    } else {
        simple_dns::TYPE::A
    };
    p.questions.push(simple_dns::Question::new(
        Name::new_unchecked(name),
        qtype.into(),
        simple_dns::QCLASS::CLASS(CLASS::IN),
        false,
    ));
    for (n, ttl, rec) in records {
        let rdata = match rec {
            Rec::A(ip) => RData::A(A::from(*ip)),
            Rec::Aaaa(v) => RData::AAAA(AAAA { address: *v }),
            Rec::Cname(t) => RData::CNAME(CNAME(Name::new_unchecked(t))),
        };
        p.answers.push(ResourceRecord::new(
            Name::new_unchecked(n),
            CLASS::IN,
            *ttl,
            rdata,
        ));
    }
    p.build_bytes_vec_compressed().expect("reply builds")
}

enum Rec {
    A(Ipv4Addr),
    Aaaa(u128),
    Cname(&'static str),
}

fn ip(last: u8) -> Ipv4Addr {
    Ipv4Addr::new(127, 0, 0, last)
}

const T: Duration = Duration::from_secs(30);

#[test]
fn a_and_aaaa_are_asked_and_merged() {
    let now = Instant::now();
    let mut r = Resolver::new(settings(1, true), 7);
    assert_eq!(r.lookup("Example.NET.", now, T), Lookup::Pending);
    let q = sent(&mut r);
    assert_eq!(q.len(), 2);
    assert_eq!(q[0].2, "example.net");
    assert!(!q[0].3 && q[1].3);
    assert_ne!(q[0].1, q[1].1, "each family has its own id");
    let a = reply(
        q[0].1,
        "example.net",
        false,
        RCODE::NoError,
        &[("example.net", 60, Rec::A(ip(2)))],
    );
    assert_eq!(r.on_datagram(0, &a, now), None, "AAAA still out");
    let six = reply(
        q[1].1,
        "example.net",
        true,
        RCODE::NoError,
        &[("example.net", 30, Rec::Aaaa(1))],
    );
    let done = r.on_datagram(0, &six, now).expect("both answered");
    assert_eq!(done.name, "example.net");
    let addrs = done.result.expect("addresses");
    assert_eq!(addrs.len(), 2);
    assert_eq!(addrs[0], IpAddr::V4(ip(2)));
    // Cached for the smaller TTL (30 s), then asked again.
    assert!(matches!(
        r.lookup("example.net", now + Duration::from_secs(29), T),
        Lookup::Ready(_)
    ));
    assert!(sent(&mut r).is_empty());
    assert_eq!(
        r.lookup("example.net", now + Duration::from_secs(31), T),
        Lookup::Pending
    );
    assert_eq!(sent(&mut r).len(), 2);
}

#[test]
fn ipv6_off_asks_a_only_and_valid_overrides_ttl() {
    let now = Instant::now();
    let mut s = settings(1, false);
    s.valid = Some(Duration::from_secs(100));
    let mut r = Resolver::new(s, 1);
    r.lookup("ttl.example.net", now, T);
    let q = sent(&mut r);
    assert_eq!(q.len(), 1);
    let a = reply(
        q[0].1,
        "ttl.example.net",
        false,
        RCODE::NoError,
        &[("ttl.example.net", 1, Rec::A(ip(1)))],
    );
    assert!(r.on_datagram(0, &a, now).unwrap().result.is_ok());
    assert!(matches!(
        r.lookup("ttl.example.net", now + Duration::from_secs(99), T),
        Lookup::Ready(_)
    ));
}

#[test]
fn zero_ttl_is_not_cached() {
    let now = Instant::now();
    let mut r = Resolver::new(settings(1, false), 2);
    r.lookup("ttl0.example.net", now, T);
    let q = sent(&mut r);
    let a = reply(
        q[0].1,
        "ttl0.example.net",
        false,
        RCODE::NoError,
        &[("ttl0.example.net", 0, Rec::A(ip(1)))],
    );
    assert!(r.on_datagram(0, &a, now).unwrap().result.is_ok());
    assert_eq!(r.lookup("ttl0.example.net", now, T), Lookup::Pending);
}

#[test]
fn nxdomain_fails_and_is_not_remembered() {
    let now = Instant::now();
    let mut r = Resolver::new(settings(1, false), 3);
    r.lookup("nx.example.net", now, T);
    let q = sent(&mut r);
    let nx = reply(q[0].1, "nx.example.net", false, RCODE::NameError, &[]);
    let done = r.on_datagram(0, &nx, now).unwrap();
    assert_eq!(done.result, Err(ResolveError::NotFound));
    assert_eq!(ResolveError::NotFound.to_string(), "3: Host not found");
    assert_eq!(r.lookup("nx.example.net", now, T), Lookup::Pending);
}

#[test]
fn an_error_of_one_family_fails_the_name() {
    let now = Instant::now();
    let mut r = Resolver::new(settings(1, true), 10);
    r.lookup("n-e.example.net", now, T);
    let q = sent(&mut r);
    let a = reply(
        q[0].1,
        "n-e.example.net",
        false,
        RCODE::NoError,
        &[("n-e.example.net", 60, Rec::A(ip(1)))],
    );
    assert_eq!(r.on_datagram(0, &a, now), None);
    let e = reply(q[1].1, "n-e.example.net", true, RCODE::ServerFailure, &[]);
    let done = r.on_datagram(0, &e, now).unwrap();
    assert_eq!(done.result, Err(ResolveError::ServerFailure));
}

#[test]
fn cname_chain_in_the_answer_and_by_a_new_query() {
    let now = Instant::now();
    let mut r = Resolver::new(settings(1, false), 4);
    r.lookup("cname.example.net", now, T);
    let q = sent(&mut r);
    let a = reply(
        q[0].1,
        "cname.example.net",
        false,
        RCODE::NoError,
        &[
            ("cname.example.net", 60, Rec::Cname("alias.example.net")),
            ("alias.example.net", 60, Rec::A(ip(1))),
        ],
    );
    assert_eq!(
        &*r.on_datagram(0, &a, now).unwrap().result.unwrap(),
        &[IpAddr::V4(ip(1))]
    );

    r.lookup("cname-a.example.net", now, T);
    let q = sent(&mut r);
    let only = reply(
        q[0].1,
        "cname-a.example.net",
        false,
        RCODE::NoError,
        &[("cname-a.example.net", 60, Rec::Cname("target.example.net"))],
    );
    assert_eq!(
        r.on_datagram(0, &only, now),
        None,
        "the target is asked for"
    );
    let q = sent(&mut r);
    assert_eq!(q[0].2, "target.example.net");
    let t = reply(
        q[0].1,
        "target.example.net",
        false,
        RCODE::NoError,
        &[("target.example.net", 60, Rec::A(ip(3)))],
    );
    let done = r.on_datagram(0, &t, now).unwrap();
    assert_eq!(
        done.name, "cname-a.example.net",
        "the lookup's own name ends"
    );
    assert_eq!(&*done.result.unwrap(), &[IpAddr::V4(ip(3))]);
}

#[test]
fn datagrams_not_answering_a_query_are_ignored() {
    let now = Instant::now();
    let mut r = Resolver::new(settings(1, false), 5);
    r.lookup("a.example.net", now, T);
    let q = sent(&mut r);
    let id = q[0].1;
    let good = reply(
        id,
        "a.example.net",
        false,
        RCODE::NoError,
        &[("a.example.net", 60, Rec::A(ip(1)))],
    );
    // Another id, another question, a format error, every truncation.
    let wrong_id = reply(
        id.wrapping_add(1),
        "a.example.net",
        false,
        RCODE::NoError,
        &[],
    );
    assert_eq!(r.on_datagram(0, &wrong_id, now), None);
    let other = reply(
        id,
        "b.example.net",
        false,
        RCODE::NoError,
        &[("b.example.net", 60, Rec::A(ip(9)))],
    );
    assert_eq!(r.on_datagram(0, &other, now), None);
    let fe = reply(id, "a.example.net", false, RCODE::FormatError, &[]);
    assert_eq!(r.on_datagram(0, &fe, now), None);
    let mut query = good.clone();
    query[2] &= 0x7f; // not a response
    assert_eq!(r.on_datagram(0, &query, now), None);
    for cut in 0..good.len() {
        assert_eq!(r.on_datagram(0, &good[..cut], now), None, "{cut} bytes");
    }
    assert!(r.on_datagram(0, &good, now).unwrap().result.is_ok());
}

#[test]
fn resend_to_the_next_server_then_time_out() {
    let now = Instant::now();
    let mut r = Resolver::new(settings(2, false), 6);
    r.lookup("2.example.net", now, Duration::from_secs(8));
    let first = sent(&mut r);
    assert_eq!(first[0].0, 0);
    assert_eq!(r.next_deadline(), Some(now + RESEND_TIMEOUT));
    assert!(r.on_tick(now + RESEND_TIMEOUT).is_empty());
    let again = sent(&mut r);
    assert_eq!(again[0].0, 1, "the next server");
    assert_ne!(again[0].1, first[0].1, "a fresh id");
    let stale = reply(
        first[0].1,
        "2.example.net",
        false,
        RCODE::NoError,
        &[("2.example.net", 60, Rec::A(ip(1)))],
    );
    assert_eq!(
        r.on_datagram(0, &stale, now),
        None,
        "the old id is forgotten"
    );
    let done = r.on_tick(now + Duration::from_secs(8));
    assert_eq!(done.len(), 1);
    assert_eq!(done[0].result, Err(ResolveError::TimedOut));
    assert_eq!(
        r.lookup("2.example.net", now + Duration::from_secs(8), T),
        Lookup::Pending,
        "a timeout is not cached"
    );
    // The next lookup starts on the other server (nginx's round robin).
    assert_eq!(sent(&mut r)[0].0, 1);
}

#[test]
fn a_pending_lookup_joins_the_query_in_flight() {
    let now = Instant::now();
    let mut r = Resolver::new(settings(1, false), 8);
    r.lookup("x.example.net", now, Duration::from_secs(1));
    sent(&mut r);
    assert_eq!(
        r.lookup("X.example.net", now, Duration::from_secs(4)),
        Lookup::Pending
    );
    assert!(sent(&mut r).is_empty(), "no second query");
    assert!(
        r.on_tick(now + Duration::from_secs(2)).is_empty(),
        "the longer timeout holds"
    );
}

#[test]
fn bad_names_fail_at_once() {
    let now = Instant::now();
    let mut r = Resolver::new(settings(1, false), 9);
    assert_eq!(r.lookup("", now, T), Lookup::Failed(ResolveError::Format));
    let long = "a".repeat(MAX_NAME + 1);
    assert_eq!(
        r.lookup(&long, now, T),
        Lookup::Failed(ResolveError::Format)
    );
}
