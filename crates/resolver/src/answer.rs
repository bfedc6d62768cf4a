//! The messages: an A or AAAA query for a name, and what a response to it
//! says (RFC 1035 4.1; simple-dns reads and writes the wire format).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use simple_dns::rdata::RData;
use simple_dns::{CLASS, Name, Packet, PacketFlag, Question, RCODE, TYPE};

use crate::ResolveError;

/// CNAMEs followed inside one answer, at most (a loop guard).
const MAX_CHAIN: usize = 16;

/// What a response to one family's query says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// The addresses at the end of the name's CNAME chain (none: the name
    /// has no address of this family), with the smallest TTL of the
    /// records used.
    Addrs {
        addrs: Vec<IpAddr>,
        ttl: u32,
    },
    /// The chain ends in a name the answer has no address for: ask for it.
    Alias {
        target: String,
        ttl: u32,
    },
    Error(ResolveError),
}

/// The query of `name`'s A (AAAA when `v6`) records, recursion desired.
pub fn query(id: u16, name: &str, v6: bool) -> Option<Vec<u8>> {
    let mut p = Packet::new_query(id);
    p.set_flags(PacketFlag::RECURSION_DESIRED);
    let qtype = if v6 { TYPE::AAAA } else { TYPE::A };
    p.questions.push(Question::new(
        Name::new(name).ok()?,
        qtype.into(),
        CLASS::IN.into(),
        false,
    ));
    p.build_bytes_vec().ok()
}

/// A response to the query of `asking`, or `None` for a datagram to
/// ignore: not a response, not parseable, not about `asking`'s family, a
/// format error (nginx logs it and waits for the resend) or truncated
/// (nginx would ask again over TCP; here the resend goes by UDP).
pub fn read(data: &[u8], asking: &str, v6: bool) -> Option<Answer> {
    let p = Packet::parse(data).ok()?;
    if !p.has_flags(PacketFlag::RESPONSE) || p.has_flags(PacketFlag::TRUNCATION) {
        return None;
    }
    let qtype = if v6 { TYPE::AAAA } else { TYPE::A };
    let q = p.questions.first()?;
    if p.questions.len() != 1 || !same_name(&q.qname.to_string(), asking) || q.qtype != qtype.into()
    {
        return None;
    }
    match p.rcode() {
        RCODE::NoError => {}
        RCODE::FormatError => return None,
        RCODE::NameError => return Some(Answer::Error(ResolveError::NotFound)),
        other => return Some(Answer::Error(ResolveError::of_rcode(other as u8))),
    }
    Some(walk(&p, asking, v6))
}

/// Follows `asking`'s CNAME chain through the answer section.
fn walk(p: &Packet<'_>, asking: &str, v6: bool) -> Answer {
    let mut current = asking.to_string();
    let mut ttl = u32::MAX;
    for _ in 0..MAX_CHAIN {
        let mut addrs = Vec::new();
        let mut alias = None;
        for rr in &p.answers {
            if !same_name(&rr.name.to_string(), &current) {
                continue;
            }
            match (&rr.rdata, v6) {
                (RData::A(a), false) => {
                    addrs.push(IpAddr::V4(Ipv4Addr::from(a.address)));
                    ttl = ttl.min(rr.ttl);
                }
                (RData::AAAA(a), true) => {
                    addrs.push(IpAddr::V6(Ipv6Addr::from(a.address)));
                    ttl = ttl.min(rr.ttl);
                }
                (RData::CNAME(c), _) if alias.is_none() => alias = Some((c.0.to_string(), rr.ttl)),
                _ => {}
            }
        }
        if !addrs.is_empty() {
            return Answer::Addrs { addrs, ttl };
        }
        match alias {
            Some((target, t)) => {
                ttl = ttl.min(t);
                current = target;
            }
            None if current == asking => {
                return Answer::Addrs { addrs, ttl };
            }
            None => {
                return Answer::Alias {
                    target: current,
                    ttl,
                };
            }
        }
    }
    Answer::Error(ResolveError::ServerFailure)
}

fn same_name(a: &str, b: &str) -> bool {
    a.trim_end_matches('.')
        .eq_ignore_ascii_case(b.trim_end_matches('.'))
}
