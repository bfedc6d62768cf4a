//! Virtual server selection, as `ngx_http_find_virtual_server`: first by the
//! address the connection was accepted on (an exact `IP:port` listen wins
//! over the `*:port` wildcard one), then by Host among the servers listening
//! there: exact name, longest `*.`-wildcard, longest `.*`-wildcard, first
//! matching regex in configuration order, else the address's default server
//! (`default_server`, else the first server listening there).

use std::net::SocketAddr;

use peregrine_conf::model::{ServerConf, ServerName};

use crate::fxhash::FxHashMap;

/// Longest Host kept in a stack buffer for lowercasing; longer ones (nginx
/// allows up to the header buffer size) are lowercased on the heap.
const HOST_STACK_LEN: usize = 256;
/// Longest Host the [`HostMemo`] keeps: its buffer is reserved this large
/// once, so remembering a Host never allocates on the request path. Longer
/// ones (rare, and beyond any DNS name's 253 bytes) are looked up each time.
const HOST_MEMO_LEN: usize = 256;

/// The servers listening on one address, with their names indexed.
#[derive(Debug)]
struct AddrTable {
    addr: SocketAddr,
    default: usize,
    /// Whether more than one server listens here; nginx skips the name
    /// lookup otherwise (`ngx_http_optimize_servers`).
    several: bool,
    exact: FxHashMap<String, usize>,
    /// (suffix like `.example.com`, also matches the bare name, server),
    /// longest first.
    wild_start: Vec<(String, bool, usize)>,
    /// (prefix like `www.example.`, server), longest first.
    wild_end: Vec<(String, usize)>,
    regex: Vec<(peregrine_conf::Regex, usize)>,
}

/// The last (address, Host) looked up and the server found: a keep-alive
/// connection's requests, and most clients', repeat their Host, and the
/// answer depends on nothing else (the tables never change). Hosts up to
/// [`HOST_MEMO_LEN`] bytes are kept.
#[derive(Debug)]
pub(crate) struct HostMemo {
    local: Option<SocketAddr>,
    host: String,
    server: Option<usize>,
}

impl Default for HostMemo {
    fn default() -> Self {
        HostMemo {
            local: None,
            host: String::with_capacity(HOST_MEMO_LEN),
            server: None,
        }
    }
}

/// Server lookup tables for all listen addresses (`repr(C)`: the field
/// every request reads first, see [`crate::HttpCore`]).
#[derive(Debug, Default)]
#[repr(C)]
pub(crate) struct ServerIndex {
    /// The server every lookup finds, when there is one: no address holds
    /// several servers and all addresses default to the same one (a
    /// single `server` block, however many `listen`s). A connection's
    /// address always selects some table (the last resort is the first),
    /// so neither the address nor the Host can change the answer.
    only: Option<usize>,
    tables: Vec<AddrTable>,
}

impl ServerIndex {
    /// Builds the tables; server `i` is `servers[i]`.
    pub(crate) fn new(servers: &[std::sync::Arc<ServerConf>]) -> ServerIndex {
        let mut tables: Vec<AddrTable> = Vec::new();
        for (si, server) in servers.iter().enumerate() {
            for listen in &server.listen {
                let pos = match tables.iter().position(|t| t.addr == listen.addr) {
                    Some(p) => p,
                    None => {
                        tables.push(AddrTable {
                            addr: listen.addr,
                            default: si,
                            several: false,
                            exact: FxHashMap::default(),
                            wild_start: Vec::new(),
                            wild_end: Vec::new(),
                            regex: Vec::new(),
                        });
                        tables.len() - 1
                    }
                };
                let t = &mut tables[pos];
                if t.default != si {
                    t.several = true;
                }
                if listen.default_server {
                    t.default = si;
                }
                add_names(t, server, si);
            }
        }
        for t in &mut tables {
            t.wild_start.sort_by_key(|w| std::cmp::Reverse(w.0.len()));
            t.wild_end.sort_by_key(|w| std::cmp::Reverse(w.0.len()));
        }
        let only = tables
            .first()
            .map(|t| t.default)
            .filter(|&d| tables.iter().all(|t| !t.several && t.default == d));
        ServerIndex { tables, only }
    }

    /// The index of the server for a connection accepted on `local` with
    /// this Host (`None`: no Host, looked up as the empty name as nginx does).
    pub(crate) fn find(&self, local: SocketAddr, host: Option<&str>) -> Option<usize> {
        if self.only.is_some() {
            return self.only;
        }
        self.look_up(local, host)
    }

    /// [`ServerIndex::find`], asking for the Host only when it can matter,
    /// and answering a repeated (address, Host) from `memo`.
    #[inline]
    pub(crate) fn find_lazy<'h>(
        &self,
        memo: &mut HostMemo,
        local: SocketAddr,
        host: impl FnOnce() -> Option<&'h str>,
    ) -> Option<usize> {
        if self.only.is_some() {
            return self.only;
        }
        // `look_up` takes a missing Host as the empty name.
        let host = host().unwrap_or("");
        if memo.local == Some(local) && memo.host == host {
            return memo.server;
        }
        let found = self.look_up(local, Some(host));
        if host.len() <= HOST_MEMO_LEN {
            memo.local = Some(local);
            memo.host.clear();
            memo.host.push_str(host);
            memo.server = found;
        }
        found
    }

    fn look_up(&self, local: SocketAddr, host: Option<&str>) -> Option<usize> {
        let table = self
            .tables
            .iter()
            .find(|t| t.addr == local)
            .or_else(|| {
                self.tables.iter().find(|t| {
                    t.addr.ip().is_unspecified()
                        && t.addr.port() == local.port()
                        && t.addr.is_ipv4() == local.is_ipv4()
                })
            })
            .or_else(|| self.tables.iter().find(|t| t.addr.port() == local.port()))
            .or(self.tables.first())?;
        if !table.several {
            return Some(table.default);
        }
        let raw = host.unwrap_or("");
        let mut buf = [0u8; HOST_STACK_LEN];
        let heap;
        let name = if raw.len() <= HOST_STACK_LEN {
            let b = &mut buf[..raw.len()];
            b.copy_from_slice(raw.as_bytes());
            b.make_ascii_lowercase();
            std::str::from_utf8(b).unwrap_or("")
        } else {
            heap = raw.to_ascii_lowercase();
            heap.as_str()
        };
        Some(lookup(table, normalize_host(name)).unwrap_or(table.default))
    }
}

fn add_names(t: &mut AddrTable, server: &ServerConf, si: usize) {
    for name in &server.server_names {
        match name {
            // nginx: the first server defining a name keeps it
            // ("conflicting server name ... ignored").
            ServerName::Exact(n) => {
                t.exact.entry(n.to_ascii_lowercase()).or_insert(si);
            }
            ServerName::WildcardStart { suffix, also_bare } => {
                let suffix = suffix.to_ascii_lowercase();
                if *also_bare {
                    let bare = suffix.trim_start_matches('.').to_string();
                    t.exact.entry(bare).or_insert(si);
                }
                if !t.wild_start.iter().any(|w| w.0 == suffix) {
                    t.wild_start.push((suffix, *also_bare, si));
                }
            }
            ServerName::WildcardEnd(prefix) => {
                let prefix = prefix.to_ascii_lowercase();
                if !t.wild_end.iter().any(|w| w.0 == prefix) {
                    t.wild_end.push((prefix, si));
                }
            }
            ServerName::Regex(re) => t.regex.push((re.clone(), si)),
        }
    }
}

/// A regex among the server's names has named groups.
pub(crate) fn has_named_captures(server: &ServerConf) -> bool {
    server.server_names.iter().any(|n| match n {
        ServerName::Regex(re) => !re.capture_names().is_empty(),
        _ => false,
    })
}

/// The named captures of the first of the server's regex names that
/// matches the Host (lowercase, without port), as nginx's
/// `ngx_http_regex_exec` sets them as variables on choosing the server.
pub(crate) fn named_captures(server: &ServerConf, host: Option<&str>) -> Vec<(String, String)> {
    let host = host.unwrap_or("").to_ascii_lowercase();
    let host = normalize_host(&host);
    for name in &server.server_names {
        if let ServerName::Regex(re) = name
            && let Some(c) = re.captures(host)
        {
            return re
                .capture_names()
                .into_iter()
                .map(|(n, i)| (n, c.get(i).cloned().unwrap_or_default()))
                .collect();
        }
    }
    Vec::new()
}

/// Strips the port and one trailing dot, as `ngx_http_validate_host`.
fn normalize_host(host: &str) -> &str {
    let host = if host.starts_with('[') {
        match host.find(']') {
            Some(end) => &host[..=end],
            None => host,
        }
    } else {
        match host.rfind(':') {
            Some(colon) => &host[..colon],
            None => host,
        }
    };
    host.strip_suffix('.').unwrap_or(host)
}

fn lookup(t: &AddrTable, name: &str) -> Option<usize> {
    if let Some(&si) = t.exact.get(name) {
        return Some(si);
    }
    for (suffix, _, si) in &t.wild_start {
        // `*.example.com` needs at least one label before the suffix.
        if name.len() > suffix.len() && name.ends_with(suffix.as_str()) {
            return Some(*si);
        }
    }
    for (prefix, si) in &t.wild_end {
        if name.len() > prefix.len() && name.starts_with(prefix.as_str()) {
            return Some(*si);
        }
    }
    t.regex
        .iter()
        .find(|(re, _)| re.is_match(name))
        .map(|(_, si)| *si)
}

// tls
/// The server-name lookup for another crate (the engine chooses a TLS
/// server block by SNI before any request exists, as nginx's
/// `ngx_http_ssl_servername`): the same tables and rules as for a Host.
#[derive(Debug)]
pub struct ServerNames(ServerIndex);

impl ServerNames {
    /// Server `i` is `servers[i]`.
    pub fn new(servers: &[std::sync::Arc<ServerConf>]) -> ServerNames {
        ServerNames(ServerIndex::new(servers))
    }

    /// The index of the server for a connection accepted on `local`
    /// naming `name` (`None`: the address's default server, as for no Host).
    #[inline(never)]
    pub fn find(&self, local: SocketAddr, name: Option<&str>) -> Option<usize> {
        self.0.find(local, name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::{ListenSpec, server};

    fn idx(specs: &[(&[ListenSpec], &[&str])]) -> ServerIndex {
        let servers: Vec<_> = specs
            .iter()
            .map(|(l, n)| std::sync::Arc::new(server(l, n, Vec::new())))
            .collect();
        ServerIndex::new(&servers)
    }

    fn a(s: &str) -> SocketAddr {
        s.parse().unwrap()
    }

    #[test]
    fn name_order_exact_then_wildcards_then_regex() {
        let l: &[ListenSpec] = &[("0.0.0.0:80", false)];
        let i = idx(&[
            (l, &["default.test"]),
            (l, &["~^www\\d+\\.example\\.com$"]),
            (l, &["*.example.com"]),
            (l, &["*.a.example.com"]),
            (l, &["www.example.*"]),
            (l, &["www.example.com"]),
            (l, &[".bare.org"]),
        ]);
        let f = |h| i.find(a("127.0.0.1:80"), Some(h));
        assert_eq!(f("www.example.com"), Some(5));
        assert_eq!(f("WWW.Example.COM."), Some(5));
        assert_eq!(f("www.example.com:80"), Some(5));
        assert_eq!(f("x.a.example.com"), Some(3));
        assert_eq!(f("www1.example.com"), Some(2), "wildcard beats regex");
        assert_eq!(f("www.example.org"), Some(4));
        assert_eq!(f("example.com"), Some(0));
        assert_eq!(f("bare.org"), Some(6));
        assert_eq!(f("x.bare.org"), Some(6));
        assert_eq!(f("nothing"), Some(0));
        assert_eq!(i.find(a("127.0.0.1:80"), None), Some(0));
    }

    #[test]
    fn regex_in_config_order_and_default_server_flag() {
        let l: &[ListenSpec] = &[("0.0.0.0:80", false)];
        let d: &[ListenSpec] = &[("0.0.0.0:80", true)];
        let i = idx(&[
            (l, &["a.test"]),
            (l, &["~^b"]),
            (l, &["~^bc"]),
            (d, &["z.test"]),
        ]);
        let f = |h| i.find(a("10.0.0.1:80"), Some(h));
        assert_eq!(f("bcd"), Some(1));
        assert_eq!(f("unknown"), Some(3));
        assert_eq!(f("a.test"), Some(0));
    }

    #[test]
    fn address_specific_listen_wins_over_wildcard() {
        let w: &[ListenSpec] = &[("0.0.0.0:80", false)];
        let s: &[ListenSpec] = &[("127.0.0.1:80", false)];
        let o: &[ListenSpec] = &[("0.0.0.0:81", false)];
        let i = idx(&[(w, &["a.test"]), (s, &["b.test"]), (o, &["a.test"])]);
        assert_eq!(i.find(a("127.0.0.1:80"), Some("a.test")), Some(1));
        assert_eq!(i.find(a("10.1.1.1:80"), Some("b.test")), Some(0));
        assert_eq!(i.find(a("10.1.1.1:81"), Some("b.test")), Some(2));
    }

    #[test]
    fn first_server_keeps_a_duplicate_name() {
        let l: &[ListenSpec] = &[("0.0.0.0:80", false)];
        let i = idx(&[(l, &["x"]), (l, &["dup"]), (l, &["dup"])]);
        assert_eq!(i.find(a("1.1.1.1:80"), Some("dup")), Some(1));
    }

    #[test]
    fn empty_name_serves_requests_without_host() {
        let l: &[ListenSpec] = &[("0.0.0.0:80", false)];
        let i = idx(&[(l, &["a.test"]), (l, &[""])]);
        assert_eq!(i.find(a("1.1.1.1:80"), None), Some(1));
    }

    /// One server, or one default everywhere: every address and Host
    /// finds it; two addresses with their own servers still choose by
    /// address.
    #[test]
    fn a_single_answer_is_taken_without_looking() {
        let two: &[ListenSpec] = &[("127.0.0.1:80", false), ("0.0.0.0:81", false)];
        let i = idx(&[(two, &["a.test"])]);
        assert_eq!(i.only, Some(0));
        assert_eq!(i.find(a("10.0.0.1:82"), Some("other")), Some(0));
        assert_eq!(i.find(a("[::1]:80"), None), Some(0));
        let (l80, l81): (&[ListenSpec], &[ListenSpec]) =
            (&[("0.0.0.0:80", false)], &[("0.0.0.0:81", false)]);
        let i = idx(&[(l80, &["a.test"]), (l81, &["a.test"])]);
        assert_eq!(i.only, None);
        assert_eq!(i.find(a("10.0.0.1:81"), Some("a.test")), Some(1));
        let i = idx(&[(l80, &["a.test"]), (l80, &["b.test"])]);
        assert_eq!(i.only, None);
        assert_eq!(i.find(a("10.0.0.1:80"), Some("b.test")), Some(1));
    }

    /// The memo answers a repeated (address, Host) as the tables do, and
    /// looks again when either differs (a missing Host is the empty name).
    #[test]
    fn a_repeated_host_is_answered_from_the_memo() {
        let l: &[ListenSpec] = &[("0.0.0.0:80", false)];
        let s: &[ListenSpec] = &[("127.0.0.1:80", false)];
        let i = idx(&[
            (l, &["a.test"]),
            (l, &["b.test"]),
            (s, &["a.test"]),
            (l, &[""]),
        ]);
        let mut memo = HostMemo::default();
        let cases = [
            ("10.0.0.1:80", Some("b.test")),
            ("10.0.0.1:80", Some("b.test")),
            ("10.0.0.1:80", Some("a.test")),
            ("127.0.0.1:80", Some("a.test")),
            ("10.0.0.1:80", Some("a.test")),
            ("10.0.0.1:80", None),
            ("10.0.0.1:80", Some("")),
            ("10.0.0.1:80", Some("b.test")),
        ];
        for (local, host) in cases {
            let want = i.find(a(local), host);
            assert_eq!(
                i.find_lazy(&mut memo, a(local), || host),
                want,
                "{local} {host:?}"
            );
        }
        assert_eq!(memo.server, Some(1), "the last answer is kept");
        let long = "x".repeat(HOST_MEMO_LEN + 1);
        assert_eq!(
            i.find_lazy(&mut memo, a("10.0.0.1:80"), || Some(&long)),
            Some(0)
        );
        assert_eq!(memo.host, "b.test", "a long Host is not kept");
        assert!(memo.host.capacity() >= HOST_MEMO_LEN, "reserved once");
    }
}
