//! `empty_gif` (ngx_http_empty_gif_module): the location answers every GET
//! and HEAD with a 1×1 transparent GIF.

use crate::head::HeadSpec;
use crate::http::{Ctx, HttpCore, Step};
use crate::phases::simple;
use crate::request::Method;
use crate::response::Body;
use crate::special::Special;

/// nginx's `ngx_empty_gif`: a 43-byte GIF89a, one transparent pixel.
pub(crate) const EMPTY_GIF: [u8; 43] = [
    b'G', b'I', b'F', b'8', b'9', b'a', // header
    0x01, 0x00, 0x01, 0x00, // width, height: 1
    0x80, 0x01, 0x00, // global colour table of 2, background 1, aspect 0
    0x00, 0x00, 0x00, // colour 0: black
    0xff, 0xff, 0xff, // colour 1: white
    0x21, 0xf9, 0x04, 0x01, 0x00, 0x00, 0x01, 0x00, // graphic control: transparent 1
    0x2c, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x01, 0x00, 0x00, // image descriptor
    0x02, 0x02, 0x4c, 0x01, 0x00, // LZW min size 2, 2 bytes of data, end
    0x3b, // trailer
];

/// The Last-Modified nginx gives it (`last_modified_time = 23349600`:
/// Mon, 28 Sep 1970 06:00:00 GMT).
pub(crate) const EMPTY_GIF_MTIME: i64 = 23_349_600;

impl HttpCore {
    /// `ngx_http_empty_gif_handler`: GET and HEAD only (405 otherwise),
    /// sent as `ngx_http_send_response` sends a complex value, with
    /// `Content-Type: image/gif` and nginx's fixed Last-Modified.
    pub(crate) fn empty_gif(&mut self, ctx: &mut Ctx<'_>) -> Step {
        if !matches!(ctx.method, Method::Get | Method::Head) {
            return Step::Special(Special::status(405));
        }
        let len = EMPTY_GIF.len() as u64;
        let head = HeadSpec {
            content_type: Some("image/gif"),
            content_length: Some(len),
            last_modified: Some(EMPTY_GIF_MTIME),
            ..HeadSpec::default()
        };
        let body = if ctx.header_only() {
            Body::Empty
        } else {
            Body::Static(&EMPTY_GIF)
        };
        let status = ctx.status(200);
        Step::Done(simple(ctx, status, head, body, Some(len)))
    }
}

#[cfg(test)]
mod tests {
    use super::EMPTY_GIF;

    #[test]
    fn the_gif_is_wellformed() {
        assert_eq!(&EMPTY_GIF[..6], b"GIF89a");
        assert_eq!(EMPTY_GIF.len(), 43);
        assert_eq!(EMPTY_GIF[42], b';');
    }
}
