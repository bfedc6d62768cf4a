//! A response's header fields as a structured list, in nginx's order.
//!
//! nginx keeps a response's fields in `r->headers_out`: the header filter
//! (`ngx_http_header_filter`) writes Content-Type, Content-Length,
//! Last-Modified, an absolute Location and Transfer-Encoding first, then
//! `Connection` and `Keep-Alive`, then the list the modules added to (ETag,
//! Content-Range, Accept-Ranges, `add_header`...). A [`FieldList`] is that:
//! fields in order, the first [`FieldList::split`] of them the header
//! filter's own, written before `Connection`.
//!
//! Nothing here serializes: the protocol writers do (the engine's HTTP/1
//! writer as `Name: value` lines, its HTTP/2 session with HPACK). A list a
//! cache shares between responses carries a slot ([`FieldList::wire`]) where
//! the HTTP/1 writer keeps its serialization, so a cache hit is serialized
//! once, not per response.

use std::sync::{Arc, OnceLock};

/// The longest text held inline: an IMF-fixdate (29 bytes), an ETag of
/// two 64-bit hex numbers, most field names and media types.
pub const INLINE_TEXT: usize = 30;

/// A field name or value. Names are tokens (ASCII); values may hold any
/// byte but CR and LF, as a backend sent them.
#[derive(Clone)]
pub enum Text {
    Static(&'static [u8]),
    Inline { len: u8, buf: [u8; INLINE_TEXT] },
    Shared(Arc<[u8]>),
    Owned(Box<[u8]>),
}

impl Text {
    /// A copy of `b`: inline when it is short.
    pub fn copy(b: &[u8]) -> Text {
        if b.len() <= INLINE_TEXT {
            let mut buf = [0u8; INLINE_TEXT];
            buf[..b.len()].copy_from_slice(b);
            Text::Inline {
                len: b.len() as u8,
                buf,
            }
        } else {
            Text::Owned(Box::from(b))
        }
    }
}

impl Text {
    /// `n` in decimal, inline (a Content-Length: no allocation).
    pub fn decimal(mut n: u64) -> Text {
        let mut buf = [0u8; 20];
        let mut i = buf.len();
        loop {
            i -= 1;
            buf[i] = b'0' + (n % 10) as u8;
            n /= 10;
            if n == 0 {
                break;
            }
        }
        Text::copy(&buf[i..])
    }

    /// Appends the text to `out`. An inline text is copied as its whole
    /// buffer, a fixed size the compiler copies without a call, then cut.
    #[inline]
    pub fn write_to(&self, out: &mut Vec<u8>) {
        match self {
            Text::Inline { len, buf } => {
                let end = out.len() + usize::from(*len);
                out.extend_from_slice(buf);
                out.truncate(end);
            }
            t => out.extend_from_slice(t),
        }
    }
}

impl std::ops::Deref for Text {
    type Target = [u8];

    #[inline]
    fn deref(&self) -> &[u8] {
        match self {
            Text::Static(b) => b,
            Text::Inline { len, buf } => &buf[..usize::from(*len)],
            Text::Shared(b) => b,
            Text::Owned(b) => b,
        }
    }
}

impl PartialEq for Text {
    fn eq(&self, other: &Text) -> bool {
        **self == **other
    }
}

impl Eq for Text {}

impl std::fmt::Debug for Text {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?}", String::from_utf8_lossy(self))
    }
}

/// One header field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Field {
    pub name: Text,
    pub value: Text,
}

impl Field {
    /// The name is `name`, in any case.
    #[inline]
    pub fn is(&self, name: &str) -> bool {
        self.name.eq_ignore_ascii_case(name.as_bytes())
    }
}

/// The HTTP/1 serialization of a list: the lines and the offset where
/// `Connection` goes.
pub type Wire = (Box<[u8]>, usize);

/// Room left for the fields a filter adds when a shared list is copied to
/// be changed (`add_header`, `Vary`, `Content-Encoding`...).
const EDIT_ROOM: usize = 4;

/// A response's header fields (without `Server`, `Date`, `Connection` and
/// `Keep-Alive`, which the protocol writer adds).
#[derive(Debug, Default, PartialEq, Eq)]
pub struct FieldList {
    fields: Vec<Field>,
    /// The first `split` fields are the header filter's own (before
    /// `Connection` in HTTP/1).
    split: usize,
    /// The protocol writer leaves out its own `Server` / `Date`: a
    /// backend's, passed on, stands for it (nginx's header filter writes
    /// them only while `r->headers_out.server` / `date` are unset).
    own_server: Omit,
    own_date: Omit,
}

/// Whether the writer leaves out one of the fields it adds.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
struct Omit(bool);

impl Clone for FieldList {
    fn clone(&self) -> Self {
        let mut fields = Vec::with_capacity(self.fields.len() + EDIT_ROOM);
        fields.extend(self.fields.iter().cloned());
        FieldList {
            fields,
            split: self.split,
            own_server: self.own_server,
            own_date: self.own_date,
        }
    }
}

/// A list a cache shares between responses, with the HTTP/1 writer's
/// serialization of it once made.
#[derive(Debug, Default)]
pub struct SharedFields {
    list: FieldList,
    wire: OnceLock<Wire>,
}

impl SharedFields {
    pub fn new(list: FieldList) -> Self {
        SharedFields {
            list,
            wire: OnceLock::new(),
        }
    }

    #[inline]
    pub fn list(&self) -> &FieldList {
        &self.list
    }

    /// The HTTP/1 writer's slot (see the module doc).
    #[inline]
    pub fn wire(&self) -> &OnceLock<Wire> {
        &self.wire
    }
}

impl FieldList {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn with_capacity(n: usize) -> Self {
        FieldList {
            fields: Vec::with_capacity(n),
            ..FieldList::default()
        }
    }

    /// Every field, in order.
    #[inline]
    pub fn fields(&self) -> &[Field] {
        &self.fields
    }

    /// The writer adds no `Server` of its own.
    pub fn omit_own_server(&mut self) {
        self.own_server = Omit(true);
    }

    /// The writer adds no `Date` of its own.
    pub fn omit_own_date(&mut self) {
        self.own_date = Omit(true);
    }

    /// Whether the writer adds its `Server` and its `Date`.
    #[inline]
    pub fn own_server_and_date(&self) -> (bool, bool) {
        (!self.own_server.0, !self.own_date.0)
    }

    /// How many of the fields go before `Connection`.
    #[inline]
    pub fn split(&self) -> usize {
        self.split
    }

    /// The header filter's fields (before `Connection`).
    #[inline]
    pub fn first(&self) -> &[Field] {
        &self.fields[..self.split]
    }

    /// The modules' fields (after `Connection`).
    #[inline]
    pub fn rest(&self) -> &[Field] {
        &self.fields[self.split..]
    }

    pub fn len(&self) -> usize {
        self.fields.len()
    }

    pub fn is_empty(&self) -> bool {
        self.fields.is_empty()
    }

    /// Adds a field to the header filter's part (before `Connection`).
    pub fn push_first(&mut self, name: impl IntoText, value: impl IntoText) {
        let f = Field {
            name: name.into_text(),
            value: value.into_text(),
        };
        self.fields.insert(self.split, f);
        self.split += 1;
    }

    /// Adds a field first of all (a Content-Type that replaces the one
    /// removed).
    pub fn push_front(&mut self, name: impl IntoText, value: impl IntoText) {
        let f = Field {
            name: name.into_text(),
            value: value.into_text(),
        };
        self.fields.insert(0, f);
        self.split += 1;
    }

    /// Adds a field at the end.
    pub fn push(&mut self, name: impl IntoText, value: impl IntoText) {
        self.fields.push(Field {
            name: name.into_text(),
            value: value.into_text(),
        });
    }

    /// Inserts a field at `at` (a position in [`FieldList::fields`]); a
    /// position before the split puts it in the first part.
    pub fn insert(&mut self, at: usize, name: impl IntoText, value: impl IntoText) {
        let at = at.min(self.fields.len());
        if at < self.split {
            self.split += 1;
        }
        self.fields.insert(
            at,
            Field {
                name: name.into_text(),
                value: value.into_text(),
            },
        );
    }

    /// The position of the first field named `name` (any case).
    pub fn position(&self, name: &str) -> Option<usize> {
        self.fields.iter().position(|f| f.is(name))
    }

    /// The value of the first field named `name` (any case).
    pub fn get(&self, name: &str) -> Option<&[u8]> {
        self.fields.iter().find(|f| f.is(name)).map(|f| &*f.value)
    }

    /// [`FieldList::get`] as text (`None` when not UTF-8).
    pub fn get_str(&self, name: &str) -> Option<&str> {
        self.get(name).and_then(|v| std::str::from_utf8(v).ok())
    }

    /// Whether a field named `name` is there.
    pub fn has(&self, name: &str) -> bool {
        self.position(name).is_some()
    }

    /// Removes the field at `at`.
    pub fn remove_at(&mut self, at: usize) -> Field {
        if at < self.split {
            self.split -= 1;
        }
        self.fields.remove(at)
    }

    /// Removes every field named `name`; says whether there was one.
    pub fn remove(&mut self, name: &str) -> bool {
        let before = self.fields.len();
        self.retain(|f| !f.is(name));
        before != self.fields.len()
    }

    /// Keeps the fields `keep` says yes to, in order.
    pub fn retain(&mut self, mut keep: impl FnMut(&Field) -> bool) {
        let mut i = 0;
        let mut split = self.split;
        let old_split = self.split;
        self.fields.retain(|f| {
            let k = keep(f);
            if !k && i < old_split {
                split -= 1;
            }
            i += 1;
            k
        });
        self.split = split;
    }

    /// Gives the first field named `name` the value `value` in place, or
    /// adds it at the end.
    pub fn set(&mut self, name: impl IntoText, value: impl IntoText) {
        let name = name.into_text();
        let found = self
            .fields
            .iter_mut()
            .find(|f| f.name.eq_ignore_ascii_case(&name));
        match found {
            Some(f) => f.value = value.into_text(),
            None => self.fields.push(Field {
                name,
                value: value.into_text(),
            }),
        }
    }

    /// Gives the field at `at` the value `value`.
    pub fn set_value(&mut self, at: usize, value: impl IntoText) {
        self.fields[at].value = value.into_text();
    }

    /// `Content-Length: n` in the header filter's place (after
    /// Content-Type), or none (`None`).
    pub fn set_content_length(&mut self, len: Option<u64>) {
        let at = self.position("Content-Length");
        match (at, len) {
            (Some(at), Some(n)) => self.set_value(at, Text::decimal(n)),
            (Some(at), None) => {
                self.remove_at(at);
            }
            (None, Some(n)) => {
                let at = self.position("Content-Type").map_or(0, |i| i + 1);
                let at = at.min(self.split);
                self.insert(at, "Content-Length", Text::decimal(n));
                if at == self.split {
                    // `insert` at the split puts it after Connection.
                    self.split += 1;
                }
            }
            (None, None) => {}
        }
    }

    /// Moves the split to just after the field at `at` (a field the
    /// header filter writes, such as a Location made absolute).
    pub fn set_split(&mut self, split: usize) {
        self.split = split.min(self.fields.len());
    }
}

/// What a field's name or value can be made from.
pub trait IntoText {
    fn into_text(self) -> Text;
}

// Constants are held inline too when short: the HTTP/1 writer copies an
// inline text as a whole fixed-size array (no call to memcpy) and cuts
// the copy to its length.
impl IntoText for &'static str {
    #[inline]
    fn into_text(self) -> Text {
        self.as_bytes().into_text()
    }
}

impl IntoText for &'static [u8] {
    #[inline]
    fn into_text(self) -> Text {
        if self.len() <= INLINE_TEXT {
            Text::copy(self)
        } else {
            Text::Static(self)
        }
    }
}

impl<const N: usize> IntoText for &'static [u8; N] {
    #[inline]
    fn into_text(self) -> Text {
        self[..].into_text()
    }
}

impl IntoText for Vec<u8> {
    #[inline]
    fn into_text(self) -> Text {
        if self.len() <= INLINE_TEXT {
            Text::copy(&self)
        } else {
            Text::Owned(self.into_boxed_slice())
        }
    }
}

impl IntoText for String {
    #[inline]
    fn into_text(self) -> Text {
        self.into_bytes().into_text()
    }
}

impl IntoText for Arc<[u8]> {
    #[inline]
    fn into_text(self) -> Text {
        Text::Shared(self)
    }
}

impl IntoText for Text {
    #[inline]
    fn into_text(self) -> Text {
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(l: &FieldList) -> Vec<String> {
        l.fields()
            .iter()
            .map(|f| String::from_utf8_lossy(&f.name).into_owned())
            .collect()
    }

    #[test]
    fn first_part_and_rest_keep_their_order() {
        let mut l = FieldList::new();
        l.push("ETag", "\"1\"");
        l.push_first("Content-Type", "text/html");
        l.push_first("Last-Modified", "x");
        l.push("Accept-Ranges", "bytes");
        assert_eq!(
            names(&l),
            ["Content-Type", "Last-Modified", "ETag", "Accept-Ranges"]
        );
        assert_eq!(l.split(), 2);
        assert!(l.remove("last-modified"));
        assert_eq!(l.split(), 1);
        assert_eq!(l.get("etag"), Some(&b"\"1\""[..]));
    }

    #[test]
    fn content_length_goes_after_the_type_and_before_connection() {
        let mut l = FieldList::new();
        l.push_first("Content-Type", "text/html");
        l.push_first("Last-Modified", "x");
        l.push("ETag", "e");
        l.set_content_length(Some(12));
        assert_eq!(
            names(&l),
            ["Content-Type", "Content-Length", "Last-Modified", "ETag"]
        );
        assert_eq!(l.split(), 3);
        l.set_content_length(Some(7));
        assert_eq!(l.get_str("content-length"), Some("7"));
        l.set_content_length(None);
        assert_eq!(l.split(), 2);
        assert!(!l.has("Content-Length"));
        let mut only = FieldList::new();
        only.push("ETag", "e");
        only.set_content_length(Some(1));
        assert_eq!(names(&only), ["Content-Length", "ETag"]);
        assert_eq!(only.split(), 1);
    }

    #[test]
    fn set_replaces_in_place_or_adds() {
        let mut l = FieldList::new();
        l.push("A", "1");
        l.set("a", "2");
        l.set("B", "3");
        assert_eq!(l.get("A"), Some(&b"2"[..]));
        assert_eq!(names(&l), ["A", "B"]);
    }

    #[test]
    fn short_text_is_inline_and_long_text_owned() {
        let date = b"Sun, 06 Nov 1994 08:49:37 GMT".to_vec();
        assert!(matches!(
            date.clone().into_text(),
            Text::Inline { len: 29, .. }
        ));
        assert_eq!(&*date.clone().into_text(), &date[..]);
        let long = vec![b'x'; INLINE_TEXT + 1];
        assert!(matches!(long.clone().into_text(), Text::Owned(_)));
        assert_eq!(&*long.clone().into_text(), &long[..]);
        assert!(matches!(Text::copy(b""), Text::Inline { len: 0, .. }));
        for n in [0, 7, 10, 12_345, u64::MAX] {
            assert_eq!(&*Text::decimal(n), n.to_string().as_bytes());
        }
        assert_eq!(Text::copy(b"ab"), "ab".into_text());
        let mut out = b"x".to_vec();
        "Content-Type".into_text().write_to(&mut out);
        long.clone().into_text().write_to(&mut out);
        Text::copy(b"").write_to(&mut out);
        assert_eq!(out, [&b"xContent-Type"[..], &long].concat());
    }
}
