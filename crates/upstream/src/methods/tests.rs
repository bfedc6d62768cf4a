use super::*;
use crate::peers::UpstreamError;
use crate::{PeerConf, Upstream};

fn peers(spec: &[(&str, u32)]) -> Vec<PeerConf> {
    spec.iter()
        .map(|&(n, w)| PeerConf {
            weight: w,
            ..PeerConf::new(n)
        })
        .collect()
}

fn group(spec: &[(&str, u32)], method: Method) -> Upstream {
    Upstream::new("g", peers(spec), method, 7).unwrap()
}

/// One request with a successful first attempt: the peer's name.
fn once(u: &mut Upstream, key: Key<'_>, now: u64) -> String {
    let mut a = u.start(key);
    let id = u.get(&mut a, now).expect("a peer");
    let name = u.peer(id).0.name.clone();
    u.free(&mut a, false, now);
    name
}

#[test]
fn smooth_weighted_round_robin_spreads_the_heavy_peer() {
    // The sequence of nginx's smooth weighted round robin for 5, 1, 1.
    let mut u = group(&[("a", 5), ("b", 1), ("c", 1)], Method::RoundRobin);
    let got: Vec<String> = (0..14).map(|_| once(&mut u, Key::None, 0)).collect();
    let want = ["a", "a", "b", "a", "c", "a", "a"];
    assert_eq!(got[..7], want);
    assert_eq!(got[7..], want);
}

#[test]
fn a_failed_peer_rests_for_fail_timeout_then_returns() {
    let mut spec = peers(&[("a", 1), ("b", 1)]);
    spec[0].fail_timeout = 10;
    let mut u = Upstream::new("g", spec, Method::RoundRobin, 1).unwrap();
    let mut a = u.start(Key::None);
    let first = u.get(&mut a, 100).unwrap();
    assert_eq!(u.peer(first).0.name, "a");
    let freed = u.free(&mut a, true, 100);
    assert!(freed.disabled, "max_fails=1: disabled by one failure");
    // The next try of the same request goes to b; then a rests.
    let second = u.get(&mut a, 100).unwrap();
    assert_eq!(u.peer(second).0.name, "b");
    u.free(&mut a, false, 100);
    for t in [101, 105, 110] {
        assert_eq!(once(&mut u, Key::None, t), "b", "at {t}");
    }
    // fail_timeout over: a is tried again and its success clears it.
    let names: Vec<String> = (0..4).map(|_| once(&mut u, Key::None, 111)).collect();
    assert!(names.contains(&"a".to_string()), "{names:?}");
    assert_eq!(u.tier(false).state[0].fails, 0);
}

#[test]
fn a_request_tries_each_live_peer_once_then_the_backups() {
    let mut spec = peers(&[("a", 1), ("b", 1), ("c", 1), ("d", 1)]);
    spec[2].down = true;
    spec[3].backup = true;
    let mut u = Upstream::new("g", spec, Method::RoundRobin, 1).unwrap();
    let mut a = u.start(Key::None);
    assert_eq!(a.tries(), 3, "a, b and the backup d; c is down");
    let mut seen = Vec::new();
    while let Some(id) = u.get(&mut a, 0) {
        seen.push(u.peer(id).0.name.clone());
        u.free(&mut a, true, 0);
    }
    seen.sort();
    assert_eq!(seen, ["a", "b", "d"]);
    assert_eq!(a.tries(), 0);
}

#[test]
fn one_peer_honours_down_and_max_conns() {
    let mut spec = peers(&[("a", 1)]);
    spec[0].max_conns = 2;
    let mut u = Upstream::new("g", spec, Method::RoundRobin, 1).unwrap();
    let (mut x, mut y, mut z) = (u.start(Key::None), u.start(Key::None), u.start(Key::None));
    assert!(u.get(&mut x, 0).is_some());
    assert!(u.get(&mut y, 0).is_some());
    assert!(u.get(&mut z, 0).is_none(), "max_conns=2 reached");
    u.free(&mut x, false, 0);
    assert!(u.get(&mut z, 0).is_some());
    let mut down = peers(&[("a", 1)]);
    down[0].down = true;
    let mut u = Upstream::new("g", down, Method::RoundRobin, 1).unwrap();
    let mut a = u.start(Key::None);
    assert!(u.get(&mut a, 0).is_none());
}

#[test]
fn least_conn_prefers_the_least_loaded_per_weight() {
    let mut u = group(&[("a", 1), ("b", 2)], Method::LeastConn);
    // Hold attempts open: b (weight 2) takes two for each of a's one.
    let mut open = Vec::new();
    let mut names = Vec::new();
    for _ in 0..6 {
        let mut at = u.start(Key::None);
        let id = u.get(&mut at, 0).unwrap();
        names.push(u.peer(id).0.name.clone());
        open.push(at);
    }
    let b = names.iter().filter(|n| *n == "b").count();
    assert_eq!((6 - b, b), (2, 4), "{names:?}");
    // Freeing two of b's makes b the least loaded.
    let mut freed = 0;
    for at in open.iter_mut() {
        if freed < 2 && at.current().is_some_and(|id| id.index == 1) {
            u.free(at, false, 0);
            freed += 1;
        }
    }
    assert_eq!(once(&mut u, Key::None, 0), "b");
}

#[test]
fn ip_hash_keeps_a_network_on_one_peer() {
    // 127.0.0.x hashes to 4040 (see hash.rs): peer 4040 % 3 = 2.
    let mut u = group(&[("a", 1), ("b", 1), ("c", 1)], Method::IpHash);
    for last in [1u8, 2, 250] {
        assert_eq!(once(&mut u, Key::Addr(&[127, 0, 0, last]), 0), "c");
    }
    // Another /24 may land elsewhere, but always on the same peer.
    let other = once(&mut u, Key::Addr(&[10, 1, 2, 3]), 0);
    for _ in 0..5 {
        assert_eq!(once(&mut u, Key::Addr(&[10, 1, 2, 99]), 0), other);
    }
    // c down: the rehash moves 127.0.0.0/24 to another peer, steadily.
    let mut spec = peers(&[("a", 1), ("b", 1), ("c", 1)]);
    spec[2].down = true;
    let mut u = Upstream::new("g", spec, Method::IpHash, 1).unwrap();
    let moved = once(&mut u, Key::Addr(&[127, 0, 0, 1]), 0);
    assert_ne!(moved, "c");
    assert_eq!(once(&mut u, Key::Addr(&[127, 0, 0, 9]), 0), moved);
}

#[test]
fn hash_sends_a_key_to_one_peer_and_spreads_keys() {
    let mut u = group(
        &[("a", 1), ("b", 1), ("c", 1)],
        Method::Hash { consistent: false },
    );
    let mut count = std::collections::HashMap::new();
    for k in 0..3000 {
        let key = format!("/item/{k}");
        let first = once(&mut u, Key::Bytes(key.as_bytes()), 0);
        assert_eq!(once(&mut u, Key::Bytes(key.as_bytes()), 0), first);
        *count.entry(first).or_insert(0) += 1;
    }
    for (peer, n) in &count {
        assert!((700..1300).contains(n), "{peer}: {n} of 3000");
    }
    // The first round's peer is (crc32 >> 16 & 0x7fff) % 3.
    let expect = ["a", "b", "c"][(memcached_hash(0, b"/x") % 3) as usize];
    assert_eq!(once(&mut u, Key::Bytes(b"/x"), 0), expect);
}

#[test]
fn consistent_hash_moves_only_the_keys_of_a_removed_server() {
    let spec = [("10.0.0.1:80", 1), ("10.0.0.2:80", 1), ("10.0.0.3:80", 1)];
    let mut all = group(&spec, Method::Hash { consistent: true });
    let mut two = group(&spec[..2], Method::Hash { consistent: true });
    let mut moved = 0;
    let mut on_third = 0;
    for k in 0..2000 {
        let key = format!("user{k}");
        let before = once(&mut all, Key::Bytes(key.as_bytes()), 0);
        let after = once(&mut two, Key::Bytes(key.as_bytes()), 0);
        if before == "10.0.0.3:80" {
            on_third += 1;
        } else {
            assert_eq!(before, after, "{key} moved between surviving servers");
        }
        moved += usize::from(before != after);
    }
    assert_eq!(moved, on_third);
    assert!(
        (400..900).contains(&on_third),
        "{on_third} of 2000 on one of three"
    );
}

#[test]
fn consistent_hash_ring_has_160_points_per_weight() {
    let u = group(&[("a:1", 2), ("b:1", 1)], Method::Hash { consistent: true });
    // Collisions among 480 32-bit hashes are possible but unlikely.
    assert!(u.ring.points.len() > 470 && u.ring.points.len() <= 480);
    assert!(u.ring.points.windows(2).all(|w| w[0].0 < w[1].0));
}

#[test]
fn random_spreads_by_weight_and_two_prefers_the_less_loaded() {
    let mut u = group(&[("a", 3), ("b", 1)], Method::Random { two: false });
    let a = (0..4000)
        .filter(|_| once(&mut u, Key::None, 0) == "a")
        .count();
    assert!((2700..3300).contains(&a), "{a} of 4000 for weight 3 of 4");
    let mut u = group(&[("a", 1), ("b", 1)], Method::Random { two: true });
    // Hold one attempt on whichever peer; the next goes to the other.
    let mut held = u.start(Key::None);
    let first = u.get(&mut held, 0).unwrap();
    for _ in 0..20 {
        let next = once(&mut u, Key::None, 0);
        assert_ne!(next, u.peer(first).0.name);
    }
}

#[test]
fn configuration_errors_in_nginx_words() {
    let mut only_backup = peers(&[("a", 1)]);
    only_backup[0].backup = true;
    assert_eq!(
        Upstream::new("up", only_backup, Method::RoundRobin, 1).unwrap_err(),
        UpstreamError::NoServers("up".into())
    );
    assert_eq!(
        Upstream::new("up", peers(&[("a", 0)]), Method::RoundRobin, 1).unwrap_err(),
        UpstreamError::Invalid("weight=0".into())
    );
}

/// A hash method's round-robin fallback reaches the backups, as nginx's
/// (a configuration may list `backup` before the method).
#[test]
fn hash_fallback_uses_the_backup_tier() {
    let mut spec = peers(&[("a", 1), ("b", 1), ("c", 1)]);
    spec[0].down = true;
    spec[1].down = true;
    spec[2].backup = true;
    let mut u = Upstream::new("g", spec, Method::Hash { consistent: false }, 1).unwrap();
    assert_eq!(once(&mut u, Key::Bytes(b"k"), 0), "c");
}
