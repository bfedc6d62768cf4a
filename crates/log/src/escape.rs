//! Escaping of variable values, byte for byte as nginx 1.22
//! (`ngx_http_log_escape`, `ngx_escape_json`).

use peregrine_conf::model::LogEscape;

const HEX: &[u8; 16] = b"0123456789ABCDEF";

/// Bytes the default mode writes as `\xHH`: controls, `"`, `\`, DEL and
/// everything ≥ 0x80 (the table in `ngx_http_log_escape`).
fn needs_default_escape(b: u8) -> bool {
    b < 0x20 || b == b'"' || b == b'\\' || b >= 0x7f
}

/// Appends `value` escaped as `mode` demands.
#[inline]
pub(crate) fn push_escaped(out: &mut Vec<u8>, mode: LogEscape, value: &[u8]) {
    match mode {
        LogEscape::None => out.extend_from_slice(value),
        LogEscape::Default => push_default(out, value),
        LogEscape::Json => push_json(out, value),
    }
}

fn push_default(out: &mut Vec<u8>, value: &[u8]) {
    let mut rest = value;
    while let Some(pos) = rest.iter().position(|&b| needs_default_escape(b)) {
        out.extend_from_slice(&rest[..pos]);
        let b = rest[pos];
        out.extend_from_slice(&[
            b'\\',
            b'x',
            HEX[usize::from(b >> 4)],
            HEX[usize::from(b & 15)],
        ]);
        rest = &rest[pos + 1..];
    }
    out.extend_from_slice(rest);
}

/// `ngx_escape_json`: `"` and `\` backslashed, the C escapes for \b \f \n
/// \r \t, other controls as `\u00XX` (uppercase hex, as nginx wrote
/// `\u001F`); bytes ≥ 0x7f are copied (the value is assumed UTF-8).
fn push_json(out: &mut Vec<u8>, value: &[u8]) {
    let mut rest = value;
    while let Some(pos) = rest
        .iter()
        .position(|&b| b < 0x20 || b == b'"' || b == b'\\')
    {
        out.extend_from_slice(&rest[..pos]);
        let b = rest[pos];
        match b {
            b'"' | b'\\' => out.extend_from_slice(&[b'\\', b]),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            b'\t' => out.extend_from_slice(b"\\t"),
            0x08 => out.extend_from_slice(b"\\b"),
            0x0c => out.extend_from_slice(b"\\f"),
            _ => out.extend_from_slice(&[
                b'\\',
                b'u',
                b'0',
                b'0',
                HEX[usize::from(b >> 4)],
                HEX[usize::from(b & 15)],
            ]),
        }
        rest = &rest[pos + 1..];
    }
    out.extend_from_slice(rest);
}

/// What a "not found" variable renders as: nginx's `-` in the default mode,
/// nothing with `escape=json` and `escape=none`.
pub(crate) fn missing(mode: LogEscape) -> &'static [u8] {
    match mode {
        LogEscape::Default => b"-",
        LogEscape::Json | LogEscape::None => b"",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn esc(mode: LogEscape, v: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        push_escaped(&mut out, mode, v);
        out
    }

    // Expected strings are what nginx 1.22.1 (Debian) wrote for the header
    // `User-Agent: Moz "q" \ <01><7f><c3><a9> end` (raw request over a
    // socket, formats `$http_user_agent` with each escape mode).
    const UA: &[u8] = b"Moz \"q\" \\ \x01\x7f\xc3\xa9 end";

    #[test]
    fn default_mode() {
        assert_eq!(
            esc(LogEscape::Default, UA),
            b"Moz \\x22q\\x22 \\x5C \\x01\\x7F\\xC3\\xA9 end"
        );
        assert_eq!(esc(LogEscape::Default, b"a\tb"), b"a\\x09b");
        assert_eq!(esc(LogEscape::Default, b""), b"");
    }

    #[test]
    fn json_mode() {
        assert_eq!(
            esc(LogEscape::Json, UA),
            b"Moz \\\"q\\\" \\\\ \\u0001\x7f\xc3\xa9 end"
        );
        assert_eq!(
            esc(LogEscape::Json, b"\n\r\t\x08\x0c\x1f\x0b"),
            b"\\n\\r\\t\\b\\f\\u001F\\u000B"
        );
    }

    #[test]
    fn none_mode() {
        assert_eq!(esc(LogEscape::None, UA), UA);
    }

    #[test]
    fn every_byte_default() {
        for b in 0u8..=255 {
            let got = esc(LogEscape::Default, &[b]);
            if needs_default_escape(b) {
                assert_eq!(got, format!("\\x{b:02X}").into_bytes());
            } else {
                assert_eq!(got, [b]);
            }
        }
    }
}
