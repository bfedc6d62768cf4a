//! The charset filter's recoding (`ngx_http_charset_filter_module`):
//! `charset TO; source_charset FROM;` recodes a static file's body through
//! the `charset_map` between the two, in either direction. Between
//! single-byte charsets the length is kept, so ranges still apply; to or
//! from utf-8 the length changes and ranges are off (nginx clears the
//! Content-Length, which turns its range filter off).
//!
//! Deliberate differences: the recoded body is sent with a Content-Length
//! (nginx streams it chunked when utf-8 is involved), and a multipart range
//! request on a recoded file gets the whole file (200).

use std::sync::Arc;

use peregrine_conf::model::{CharsetMap, LocConf};

use crate::conditional::Verdict;
use crate::fcache::FileInfo;
use crate::head::{HeadSpec, charset_for, content_type, etag_value};
use crate::http::{Ctx, HttpCore, Step};
use crate::range::{self, Ranges};
use crate::response::Body;
use crate::special::Special;

/// Files larger than this are sent as they are, not recoded: the recoding
/// reads the whole file into memory (nginx recodes buffer by buffer).
pub const MAX_RECODE_SIZE: u64 = 16 * 1024 * 1024;

/// How a body is recoded.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Recoding<'m> {
    map: &'m CharsetMap,
    /// The file is in the map's `to` charset (the second column).
    reverse: bool,
}

/// The recoding of the location for a file at `uri`, if any: `charset` and
/// a different `source_charset`, the type in `charset_types`, and a map
/// between the two (the configuration check makes sure there is one).
pub(crate) fn recoding<'m>(
    conf: &LocConf,
    uri: &str,
    maps: &'m [CharsetMap],
) -> Option<Recoding<'m>> {
    let from = conf.request.source_charset.as_deref()?;
    let to = conf.charset.as_deref()?;
    if from.eq_ignore_ascii_case(to) {
        return None;
    }
    let (ty, _) = content_type(conf, uri);
    charset_for(conf, ty)?;
    between(from, to, maps)
}

/// The map between charsets `from` and `to`, in the direction it is used.
fn between<'m>(from: &str, to: &str, maps: &'m [CharsetMap]) -> Option<Recoding<'m>> {
    maps.iter().find_map(|m| {
        if m.from.eq_ignore_ascii_case(from) && m.to.eq_ignore_ascii_case(to) {
            Some(Recoding {
                map: m,
                reverse: false,
            })
        } else if m.from.eq_ignore_ascii_case(to) && m.to.eq_ignore_ascii_case(from) {
            Some(Recoding {
                map: m,
                reverse: true,
            })
        } else {
            None
        }
    })
}

/// `override_charset on` and a proxied answer whose Content-Type names a
/// charset other than the location's `charset`: recoded to it through a
/// `charset_map` between the two (`ngx_http_charset_header_filter` takes
/// the answer's charset as the source then). Returns the recoding and the
/// Content-Type to send.
pub(crate) fn proxied_recoding<'m>(
    conf: &LocConf,
    content_type: &str,
    maps: &'m [CharsetMap],
) -> Option<(Recoding<'m>, String)> {
    if !conf.request.override_charset {
        return None;
    }
    let to = conf.charset.as_deref()?;
    if to.contains('$') || to.eq_ignore_ascii_case("off") {
        return None;
    }
    let (ty, params) = content_type.split_once(';')?;
    let ty = ty.trim();
    let from = params.split(';').find_map(|p| {
        let (k, v) = p.split_once('=')?;
        k.trim()
            .eq_ignore_ascii_case("charset")
            .then(|| v.trim().trim_matches('"'))
    })?;
    if from.eq_ignore_ascii_case(to) {
        return None;
    }
    charset_for(conf, ty)?;
    let r = between(from, to, maps)?;
    Some((r, format!("{ty}; charset={to}")))
}

/// `charset` with variables (`charset $arg_c`): the head's writers put
/// the template after Content-Type's type; this request's value goes in
/// its place, and an empty value leaves no charset parameter
/// (`ngx_http_destination_charset` reads the variable per request).
///
/// Inlined up to the test that the location has a `charset` at all: every
/// response passes here and most locations have none.
#[inline(always)]
pub(crate) fn expand_in_head(ctx: &Ctx<'_>, r: &mut crate::Response) {
    if let Some(tpl) = ctx.conf.charset.as_deref() {
        expand_charset_var(ctx, r, tpl);
    }
}

#[inline(never)]
fn expand_charset_var(ctx: &Ctx<'_>, r: &mut crate::Response, tpl: &str) {
    if !tpl.contains('$') {
        return;
    }
    let needle = format!("; charset={tpl}");
    let Some(ct) = r.head.get_str("Content-Type") else {
        return;
    };
    let Some(at) = ct.find(&needle) else {
        return;
    };
    let value = ctx.vars().expand(tpl);
    let mut new = ct[..at].to_string();
    if !value.is_empty() {
        new.push_str("; charset=");
        new.push_str(&value);
    }
    new.push_str(&ct[at + needle.len()..]);
    r.head.to_mut().set("Content-Type", new);
}

impl Recoding<'_> {
    /// Whether the length changes (utf-8 on either side).
    pub(crate) fn changes_length(&self) -> bool {
        self.map.to_utf8
    }

    pub(crate) fn recode(&self, src: &[u8]) -> Vec<u8> {
        let mut out = Vec::with_capacity(src.len() + src.len() / 2);
        match (self.reverse, self.map.to_utf8) {
            (false, _) => {
                for &b in src {
                    out.extend_from_slice(&self.map.forward[usize::from(b)]);
                }
            }
            (true, false) => {
                let table = self.reverse_bytes();
                out.extend(src.iter().map(|&b| table[usize::from(b)]));
            }
            (true, true) => self.recode_from_utf8(src, &mut out),
        }
        out
    }

    /// nginx's single-byte `dst2src`: identity below 0x80, `?` above, then
    /// the block's pairs.
    fn reverse_bytes(&self) -> [u8; 256] {
        let mut t = [b'?'; 256];
        for (i, v) in t.iter_mut().enumerate().take(0x80) {
            *v = i as u8;
        }
        for &m in &self.map.mapped {
            if let Some(&d) = self.map.forward[usize::from(m)].first() {
                t[usize::from(d)] = m;
            }
        }
        t
    }

    /// utf-8 to the single-byte charset: a character the map lacks becomes
    /// an HTML entity `&#N;`, bytes that are not utf-8 a `?`
    /// (`ngx_http_charset_recode_from_utf8`).
    fn recode_from_utf8(&self, src: &[u8], out: &mut Vec<u8>) {
        let mut back = std::collections::HashMap::new();
        for &m in &self.map.mapped {
            let seq = &self.map.forward[usize::from(m)];
            if let Some(c) = std::str::from_utf8(seq).ok().and_then(|s| s.chars().next()) {
                back.insert(c, m);
            }
        }
        for chunk in src.utf8_chunks() {
            for c in chunk.valid().chars() {
                match back.get(&c) {
                    Some(&b) => out.push(b),
                    None if c.is_ascii() => out.push(c as u8),
                    None => out.extend_from_slice(format!("&#{};", u32::from(c)).as_bytes()),
                }
            }
            if !chunk.invalid().is_empty() {
                out.push(b'?');
            }
        }
    }
}

impl HttpCore {
    /// A static file answered recoded: the whole file, or one range of it
    /// when the length is kept.
    pub(crate) fn recoded_file(
        &mut self,
        ctx: &Ctx<'_>,
        info: &FileInfo,
        rc: Recoding<'_>,
    ) -> Option<Step> {
        if info.size > MAX_RECODE_SIZE {
            return None;
        }
        let status = ctx.status(200);
        let etag_text = etag_value(info.mtime, info.size);
        // `etag off`: no ETag to send or to compare with.
        let etag = ctx.conf.etag.then_some(etag_text.as_str());
        if status == 200 {
            match crate::static_file::conditions(ctx).evaluate(etag, info.mtime) {
                Verdict::Send => {}
                Verdict::PreconditionFailed => return Some(Step::Special(Special::status(412))),
                Verdict::NotModified => return Some(Step::Done(self.not_modified(ctx, info))),
            }
        }
        let file = info.file.as_ref()?;
        let mut raw = Vec::new();
        std::io::Read::read_to_end(&mut &**file, &mut raw).ok()?;
        let body = rc.recode(&raw);
        let size = body.len() as u64;
        let ranges =
            status == 200 && !rc.changes_length() && ctx.conf.request.max_ranges != Some(0);
        let range = ctx.req.header("Range").filter(|_| ranges).filter(|_| {
            ctx.req
                .header("If-Range")
                .is_none_or(|ir| range::if_range_matches(ir, etag, Some(info.mtime)))
        });
        let (ty, cs) = content_type(&ctx.conf, &ctx.uri);
        let mut spec = HeadSpec {
            content_type: (!ty.is_empty()).then_some(ty),
            charset: cs,
            content_length: Some(size),
            last_modified: (status == 200).then_some(info.mtime),
            etag: ctx.conf.etag.then_some((info.mtime, info.size)),
            accept_ranges: ranges,
            ..HeadSpec::default()
        };
        let (status, cr, slice) =
            match range.map(|v| range::parse_max(v, size, ctx.conf.request.max_ranges)) {
                Some(Ranges::Unsatisfiable) => {
                    return Some(Step::Special(Special {
                        status: 416,
                        content_range: Some(format!("bytes */{size}")),
                        ..Special::default()
                    }));
                }
                Some(Ranges::Satisfiable(r)) if r.len() == 1 => {
                    let (start, end) = r[0];
                    let cr = format!("bytes {}-{}/{}", start, end - 1, size);
                    (206, Some(cr), start as usize..end as usize)
                }
                _ => (status, None, 0..body.len()),
            };
        if let Some(cr) = &cr {
            spec.content_range = Some(cr);
            spec.accept_ranges = false;
            spec.content_length = Some(slice.len() as u64);
        }
        let len = slice.len() as u64;
        let body = if ctx.header_only() || len == 0 {
            Body::Empty
        } else {
            Body::Shared(Arc::from(&body[slice]))
        };
        let head = spec.write().into();
        Some(Step::Done(
            self.file_response(ctx, status, head, body, len, false),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(to: &str, pairs: &[(u8, &[u8])]) -> CharsetMap {
        let mut m = CharsetMap::new("a", to);
        for &(s, d) in pairs {
            m.forward[usize::from(s)] = d.to_vec();
            m.mapped.push(s);
        }
        m
    }

    #[test]
    fn single_byte_both_ways() {
        let m = map("b", &[(0x58, b"Y"), (0xc1, &[0xe1])]);
        let fwd = Recoding {
            map: &m,
            reverse: false,
        };
        assert_eq!(fwd.recode(b"X1\xc1\xc2"), b"Y1\xe1?");
        let back = Recoding {
            map: &m,
            reverse: true,
        };
        assert_eq!(back.recode(b"Y1\xe1\xe2X"), b"X1\xc1?X");
        assert!(!fwd.changes_length());
    }

    /// koi8-r's 0xC1 is U+0430 (`а`, D0 B0 in utf-8), as /etc/nginx/koi-utf.
    #[test]
    fn to_and_from_utf8() {
        let m = map("utf-8", &[(0xc1, &[0xd0, 0xb0])]);
        let fwd = Recoding {
            map: &m,
            reverse: false,
        };
        assert_eq!(fwd.recode(b"x\xc1\xc2"), "xа?".as_bytes());
        let back = Recoding {
            map: &m,
            reverse: true,
        };
        assert_eq!(back.recode("xаб\u{ff}".as_bytes()), b"x\xc1&#1073;&#255;");
        assert_eq!(back.recode(b"x\xd0"), b"x?");
        assert!(fwd.changes_length());
    }
}
