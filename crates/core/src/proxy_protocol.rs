//! What the PROXY protocol header of a connection gives a request
//! (`ngx_http_variable_proxy_protocol_*`, the realip module's
//! `real_ip_header proxy_protocol`). The header is read by the engine
//! (`peregrine_engine::proxy_protocol`) and parsed by
//! `peregrine_codec::proxy_protocol`.

use std::fmt::Write as _;
use std::net::SocketAddr;

use peregrine_conf::model::RealIpConf;

use crate::response::ConnInfo;

/// `$proxy_protocol_addr`, `_port`, `_server_addr`, `_server_port` and
/// `$proxy_protocol_tlv_NAME`: empty without a header or without addresses
/// in it (v1 UNKNOWN, v2 LOCAL), as nginx's (not found).
pub(crate) fn push(conn: &ConnInfo, name: &str, out: &mut String) {
    let Some(h) = conn.proxy.as_deref() else {
        return;
    };
    let field = &name["proxy_protocol_".len()..];
    if let Some(tlv) = field.strip_prefix("tlv_") {
        // A broken block or an unknown name: nginx logs it and the
        // variable is not found; empty here.
        if let Ok(Some(v)) = h.tlv(tlv) {
            // Bytes as Latin-1 chars, as `$binary_remote_addr`: a TLV is
            // binary (`ssl`), matched by regexes byte for byte.
            out.extend(v.iter().map(|&b| char::from(b)));
        }
        return;
    }
    let Some((src, dst)) = h.inet() else {
        return;
    };
    let _ = match field {
        "addr" => write!(out, "{}", src.addr),
        "port" => write!(out, "{}", src.port),
        "server_addr" => write!(out, "{}", dst.addr),
        "server_port" => write!(out, "{}", dst.port),
        _ => Ok(()),
    };
}

/// `ngx_http_realip_handler` for `real_ip_header proxy_protocol`: the
/// header's source address (and port) when the connection's peer is
/// trusted; nothing for a header without addresses or with v1 text that is
/// no address (nginx's `ngx_parse_addr` fails the same way).
pub(crate) fn real_addr(conn: &ConnInfo, conf: &RealIpConf) -> Option<SocketAddr> {
    let (src, _) = conn.proxy.as_deref()?.inet()?;
    let a = crate::realip::forwarded(conn.peer, &[src.addr.as_str()], &conf.from, false)?;
    Some(SocketAddr::new(a.ip(), src.port))
}

#[cfg(test)]
mod tests {
    use super::*;
    use peregrine_codec::proxy_protocol::{Parsed, parse};
    use std::sync::Arc;

    fn with_header(bytes: &[u8]) -> ConnInfo {
        let mut c = crate::fixtures::conn("127.0.0.1:8080");
        c.peer = "127.0.0.1:5000".parse().unwrap();
        let Ok(Parsed::Header(h)) = parse(bytes, 4096) else {
            panic!("test header does not parse");
        };
        c.proxy = Some(Arc::new(h));
        c
    }

    fn var(c: &ConnInfo, name: &str) -> String {
        let mut s = String::new();
        push(c, name, &mut s);
        s
    }

    #[test]
    fn variables_of_v1_and_unknown() {
        let c = with_header(b"PROXY TCP6 2001:Db8::1 2001:db8::2 123 5678\r\n");
        assert_eq!(var(&c, "proxy_protocol_addr"), "2001:Db8::1");
        assert_eq!(var(&c, "proxy_protocol_port"), "123");
        assert_eq!(var(&c, "proxy_protocol_server_addr"), "2001:db8::2");
        assert_eq!(var(&c, "proxy_protocol_server_port"), "5678");
        let u = with_header(b"PROXY UNKNOWN 1 2\r\n");
        assert_eq!(var(&u, "proxy_protocol_addr"), "");
        let none = crate::fixtures::conn("127.0.0.1:8080");
        assert_eq!(var(&none, "proxy_protocol_port"), "");
    }

    #[test]
    fn tlv_variables() {
        // v2 PROXY TCP4 with an ALPN TLV "h2" and a custom 0xe0 one.
        let mut h = peregrine_codec::proxy_protocol::V2_SIGNATURE.to_vec();
        h.extend([0x21, 0x11, 0, 12 + 5 + 4]);
        h.extend([192, 0, 2, 1, 192, 0, 2, 2, 0, 123, 0x16, 0x2e]);
        h.extend([0x01, 0, 2, b'h', b'2', 0xe0, 0, 1, 0xff]);
        let c = with_header(&h);
        assert_eq!(var(&c, "proxy_protocol_addr"), "192.0.2.1");
        assert_eq!(var(&c, "proxy_protocol_tlv_alpn"), "h2");
        assert_eq!(var(&c, "proxy_protocol_tlv_0x01"), "h2");
        assert_eq!(var(&c, "proxy_protocol_tlv_0xe0"), "\u{ff}");
        assert_eq!(var(&c, "proxy_protocol_tlv_authority"), "");
        assert_eq!(var(&c, "proxy_protocol_tlv_nonsense"), "");
    }

    #[test]
    fn realip_trusts_the_peer_only() {
        let c = with_header(b"PROXY TCP4 192.0.2.1 192.0.2.2 123 5678\r\n");
        let mut conf = RealIpConf::default();
        assert_eq!(real_addr(&c, &conf), None);
        conf.from = Arc::from(vec![peregrine_conf::model::AccessNet::All]);
        assert_eq!(real_addr(&c, &conf), "192.0.2.1:123".parse().ok());
        let text = with_header(b"PROXY TCP4 1.2.3 192.0.2.2 123 5678\r\n");
        assert_eq!(real_addr(&text, &conf), None);
    }
}
