//! `autoindex_format xml | json | jsonp`: the listings of
//! `ngx_http_autoindex_xml` and `ngx_http_autoindex_json`, byte for byte
//! (`html` is [`crate::autoindex`]).

use std::io::Write as _;

use crate::autoindex::{Entry, escape_html};
use crate::date::push_http_date;

/// nginx's limit on a `callback` name (longer: 400).
pub(crate) const MAX_CALLBACK_LEN: usize = 128;

/// `ngx_http_autoindex_jsonp_callback`: the `callback` argument, if it is
/// a valid name (`[A-Za-z0-9_.]`, at most [`MAX_CALLBACK_LEN`]); `Err` for
/// an invalid one (nginx answers 400). An empty or absent one is `Ok(None)`:
/// the listing is plain JSON then.
pub(crate) fn jsonp_callback(args: Option<&str>) -> Result<Option<&str>, ()> {
    let Some(cb) = args.and_then(|a| crate::vars::arg(a, "callback")) else {
        return Ok(None);
    };
    if cb.len() > MAX_CALLBACK_LEN {
        return Err(());
    }
    if !cb
        .bytes()
        .all(|c| c.is_ascii_alphanumeric() || c == b'_' || c == b'.')
    {
        return Err(());
    }
    Ok((!cb.is_empty()).then_some(cb))
}

fn kind(e: &Entry) -> &'static str {
    if e.dir {
        "directory"
    } else if e.file {
        "file"
    } else {
        "other"
    }
}

/// `ngx_escape_json`: `\` and `"` escaped, control bytes as `\n`-style or
/// `\u00XX` escapes; other bytes (UTF-8 included) as they are.
fn escape_json(out: &mut Vec<u8>, s: &[u8]) {
    for &c in s {
        match c {
            b'\\' | b'"' => out.extend_from_slice(&[b'\\', c]),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            b'\t' => out.extend_from_slice(b"\\t"),
            0x08 => out.extend_from_slice(b"\\b"),
            0x0c => out.extend_from_slice(b"\\f"),
            0..=0x1f => {
                let _ = write!(out, "\\u{c:04X}");
            }
            _ => out.push(c),
        }
    }
}

/// The JSON listing, wrapped in `/* callback */\r\nNAME(...);` for JSONP.
pub(crate) fn json(entries: &[Entry], callback: Option<&str>) -> Vec<u8> {
    let mut b = Vec::with_capacity(16 + entries.len() * 100);
    if let Some(cb) = callback {
        b.extend_from_slice(b"/* callback */\r\n");
        b.extend_from_slice(cb.as_bytes());
        b.push(b'(');
    }
    b.push(b'[');
    for (i, e) in entries.iter().enumerate() {
        if i > 0 {
            b.push(b',');
        }
        b.extend_from_slice(b"\r\n{ \"name\":\"");
        escape_json(&mut b, &e.name);
        b.extend_from_slice(b"\", \"type\":\"");
        b.extend_from_slice(kind(e).as_bytes());
        b.extend_from_slice(b"\", \"mtime\":\"");
        push_http_date(&mut b, e.mtime);
        if e.file {
            let _ = write!(b, "\", \"size\":{}", e.size);
        } else {
            b.push(b'"');
        }
        b.extend_from_slice(b" }");
    }
    b.extend_from_slice(b"\r\n]");
    if callback.is_some() {
        b.extend_from_slice(b");");
    }
    b
}

/// The XML listing.
pub(crate) fn xml(entries: &[Entry]) -> Vec<u8> {
    let mut b = Vec::with_capacity(64 + entries.len() * 100);
    b.extend_from_slice(b"<?xml version=\"1.0\"?>\r\n<list>\r\n");
    for e in entries {
        let kind = kind(e);
        let (y, mo, d) = peregrine_codec::date::civil_from_days(e.mtime.div_euclid(86_400));
        let rem = e.mtime.rem_euclid(86_400);
        let _ = write!(
            b,
            "<{kind} mtime=\"{y:04}-{mo:02}-{d:02}T{:02}:{:02}:{:02}Z",
            rem / 3600,
            rem % 3600 / 60,
            rem % 60
        );
        if e.file {
            let _ = write!(b, "\" size=\"{}", e.size);
        }
        b.extend_from_slice(b"\">");
        escape_html(&mut b, &e.name);
        let _ = write!(b, "</{kind}>\r\n");
    }
    b.extend_from_slice(b"</list>\r\n");
    b
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entries() -> Vec<Entry> {
        vec![
            Entry {
                name: b"d".to_vec(),
                dir: true,
                file: false,
                mtime: 784_111_777,
                size: 4096,
            },
            Entry {
                name: b"a\"<\x01".to_vec(),
                dir: false,
                file: true,
                mtime: 0,
                size: 42,
            },
        ]
    }

    #[test]
    fn json_as_nginx() {
        let j = json(&entries(), None);
        assert_eq!(
            String::from_utf8(j).unwrap(),
            "[\r\n{ \"name\":\"d\", \"type\":\"directory\", \"mtime\":\"Sun, 06 Nov 1994 08:49:37 GMT\" },\
             \r\n{ \"name\":\"a\\\"<\\u0001\", \"type\":\"file\", \"mtime\":\"Thu, 01 Jan 1970 00:00:00 GMT\", \"size\":42 }\r\n]"
        );
        let p = json(&[], Some("cb.x"));
        assert_eq!(p, b"/* callback */\r\ncb.x([\r\n]);");
    }

    #[test]
    fn xml_as_nginx() {
        let x = String::from_utf8(xml(&entries())).unwrap();
        assert_eq!(
            x,
            "<?xml version=\"1.0\"?>\r\n<list>\r\n\
             <directory mtime=\"1994-11-06T08:49:37Z\">d</directory>\r\n\
             <file mtime=\"1970-01-01T00:00:00Z\" size=\"42\">a&quot;&lt;\x01</file>\r\n\
             </list>\r\n"
        );
    }

    #[test]
    fn callbacks() {
        assert_eq!(jsonp_callback(Some("callback=foo")), Ok(Some("foo")));
        assert_eq!(jsonp_callback(Some("a=1&callback=")), Ok(None));
        assert_eq!(jsonp_callback(None), Ok(None));
        assert_eq!(jsonp_callback(Some("callback=a(b)")), Err(()));
        let long = format!("callback={}", "x".repeat(MAX_CALLBACK_LEN + 1));
        assert_eq!(jsonp_callback(Some(&long)), Err(()));
    }
}
