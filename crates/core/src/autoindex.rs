//! `autoindex on`: the HTML directory listing of
//! `ngx_http_autoindex_html`, byte for byte (exact sizes, GMT dates).
//!
//! Format per entry: `<a href="NAME">NAME</a>`, padded to 50 columns (names
//! longer than 50 are cut to 47 and end in `..&gt;`), a space, the date
//! `DD-Mon-YYYY HH:MM`, a space, the size right-aligned in 19 columns (`-`
//! for directories). Directories first, then byte order; names starting
//! with `.` are hidden. With `charset utf-8` widths count characters.

use std::fs;
use std::os::unix::fs::MetadataExt;

use crate::date::push_autoindex_date;

/// nginx's `NGX_HTTP_AUTOINDEX_NAME_LEN`.
const NAME_LEN: usize = 50;

pub(crate) struct Entry {
    pub name: Vec<u8>,
    pub dir: bool,
    /// A regular file (nginx's `ngx_de_is_file`): neither is `other`.
    pub file: bool,
    pub mtime: i64,
    pub size: u64,
}

/// An `errno` (maps to 404/403/500 as nginx).
pub(crate) type Errno = i32;

/// Why a listing could not be produced: the `errno`, and whether it was
/// opening the directory that failed (the failure nginx's error line
/// names: `opendir() "DIR" failed`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ListError {
    pub opendir: bool,
    pub errno: Errno,
}

impl From<Errno> for ListError {
    /// A failure after the directory was opened.
    fn from(errno: Errno) -> ListError {
        ListError {
            opendir: false,
            errno,
        }
    }
}

fn errno(e: &std::io::Error) -> Errno {
    e.raw_os_error().unwrap_or(libc::EIO)
}

/// Reads `dir` and renders the listing page for `uri`.
pub(crate) fn render(dir: &str, uri: &str, utf8: bool) -> Result<Vec<u8>, ListError> {
    Ok(html(uri, &entries(dir)?, utf8))
}

/// The entries of `dir` nginx lists, directories first, then by name.
pub(crate) fn entries(dir: &str) -> Result<Vec<Entry>, ListError> {
    use std::os::unix::ffi::OsStrExt;
    let rd = fs::read_dir(dir).map_err(|e| ListError {
        opendir: true,
        errno: errno(&e),
    })?;
    let mut entries = Vec::new();
    for ent in rd {
        let ent = ent.map_err(|e| ListError::from(errno(&e)))?;
        let name = ent.file_name().as_bytes().to_vec();
        if name.first() == Some(&b'.') {
            continue;
        }
        // nginx stats through symlinks and falls back to lstat for broken ones;
        // entries it may not stat (EACCES) are skipped.
        let meta = match fs::metadata(ent.path()) {
            Ok(m) => m,
            Err(e) if errno(&e) == libc::EACCES => continue,
            Err(e) if matches!(errno(&e), libc::ENOENT | libc::ELOOP) => {
                match fs::symlink_metadata(ent.path()) {
                    Ok(m) => m,
                    Err(e) => return Err(errno(&e).into()),
                }
            }
            Err(e) => return Err(errno(&e).into()),
        };
        entries.push(Entry {
            name,
            dir: meta.is_dir(),
            file: meta.is_file(),
            mtime: meta.mtime(),
            size: meta.len(),
        });
    }
    entries.sort_by(|a, b| b.dir.cmp(&a.dir).then_with(|| a.name.cmp(&b.name)));
    Ok(entries)
}

fn html(uri: &str, entries: &[Entry], utf8: bool) -> Vec<u8> {
    use std::io::Write;
    let mut b = Vec::with_capacity(256 + entries.len() * 120);
    b.extend_from_slice(b"<html>\r\n<head><title>Index of ");
    escape_html(&mut b, uri.as_bytes());
    b.extend_from_slice(b"</title></head>\r\n<body>\r\n<h1>Index of ");
    escape_html(&mut b, uri.as_bytes());
    b.extend_from_slice(b"</h1><hr><pre><a href=\"../\">../</a>\r\n");
    for e in entries {
        b.extend_from_slice(b"<a href=\"");
        escape_uri_component(&mut b, &e.name);
        if e.dir {
            b.push(b'/');
        }
        b.extend_from_slice(b"\">");
        let chars = if utf8 {
            utf8_len(&e.name)
        } else {
            e.name.len()
        };
        let mut len = chars;
        if len > NAME_LEN {
            escape_html(&mut b, prefix_units(&e.name, NAME_LEN - 3, utf8));
            b.extend_from_slice(b"..&gt;</a>");
        } else {
            escape_html(&mut b, &e.name);
            if e.dir && NAME_LEN > len {
                b.push(b'/');
                len += 1;
            }
            b.extend_from_slice(b"</a>");
            b.resize(b.len() + NAME_LEN.saturating_sub(len), b' ');
        }
        b.push(b' ');
        push_autoindex_date(&mut b, e.mtime);
        b.push(b' ');
        if e.dir {
            b.extend_from_slice(b"                  -");
        } else {
            let _ = write!(b, "{:>19}", e.size);
        }
        b.extend_from_slice(b"\r\n");
    }
    b.extend_from_slice(b"</pre><hr></body>\r\n</html>\r\n");
    b
}

/// The first `n` characters (UTF-8) or bytes of `name`.
fn prefix_units(name: &[u8], n: usize, utf8: bool) -> &[u8] {
    if !utf8 {
        return &name[..n.min(name.len())];
    }
    match std::str::from_utf8(name) {
        Ok(s) => match s.char_indices().nth(n) {
            Some((i, _)) => &name[..i],
            None => name,
        },
        Err(_) => &name[..n.min(name.len())],
    }
}

/// `ngx_utf8_length`: characters, or bytes when not valid UTF-8.
fn utf8_len(name: &[u8]) -> usize {
    match std::str::from_utf8(name) {
        Ok(s) => s.chars().count(),
        Err(_) => name.len(),
    }
}

/// `ngx_escape_html`.
pub(crate) fn escape_html(out: &mut Vec<u8>, s: &[u8]) {
    for &c in s {
        match c {
            b'<' => out.extend_from_slice(b"&lt;"),
            b'>' => out.extend_from_slice(b"&gt;"),
            b'&' => out.extend_from_slice(b"&amp;"),
            b'"' => out.extend_from_slice(b"&quot;"),
            _ => out.push(c),
        }
    }
}

/// `ngx_escape_uri(..., NGX_ESCAPE_URI_COMPONENT)`: everything but
/// unreserved characters (RFC 3986 §2.3) is percent-encoded.
fn escape_uri_component(out: &mut Vec<u8>, s: &[u8]) {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    for &c in s {
        if c.is_ascii_alphanumeric() || matches!(c, b'-' | b'.' | b'_' | b'~') {
            out.push(c);
        } else {
            out.extend_from_slice(&[b'%', HEX[usize::from(c >> 4)], HEX[usize::from(c & 15)]]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testdir::TestDir;

    /// Sets a file's mtime (no `unsafe`: through `File::set_modified`).
    fn touch(path: &str, secs: u64) {
        let f = fs::OpenOptions::new()
            .write(true)
            .open(path)
            .or_else(|_| fs::File::open(path))
            .unwrap();
        f.set_modified(std::time::UNIX_EPOCH + std::time::Duration::from_secs(secs))
            .unwrap();
    }

    #[test]
    fn listing_matches_nginx_byte_for_byte() {
        // Expected text captured from nginx 1.22.1 on the same names.
        let d = TestDir::new("autoindex");
        let t = 1_796_037_120; // 30-Nov-2026 11:12
        d.dir("sub dir");
        touch(&d.path("sub dir"), t);
        for (name, content) in [
            ("a b&\"<>?#%+\u{e9}.txt", &b""[..]),
            ("size3", b"abc"),
            (".hidden", b""),
            (&format!("{}.txt", "L".repeat(60)), b""),
            (&"&".repeat(55).to_string(), b""),
            (&"\u{e9}".repeat(55).to_string(), b""),
        ] {
            let p = d.file(name, content);
            touch(&p, t);
        }
        let out = String::from_utf8_lossy(&render(d.root(), "/ai/", false).unwrap()).into_owned();
        let date = "30-Nov-2026 11:12";
        let mut want = String::from(
            "<html>\r\n<head><title>Index of /ai/</title></head>\r\n<body>\r\n\
             <h1>Index of /ai/</h1><hr><pre><a href=\"../\">../</a>\r\n",
        );
        want += &format!(
            "<a href=\"sub%20dir/\">sub dir/</a>{}{date}                   -\r\n",
            " ".repeat(42 + 1)
        );
        want += &format!(
            "<a href=\"{}\">{}..&gt;</a> {date}                   0\r\n",
            "%26".repeat(55),
            "&amp;".repeat(47)
        );
        want += &format!(
            "<a href=\"{}.txt\">{}..&gt;</a> {date}                   0\r\n",
            "L".repeat(60),
            "L".repeat(47)
        );
        want += &format!(
            "<a href=\"a%20b%26%22%3C%3E%3F%23%25%2B%C3%A9.txt\">a b&amp;&quot;&lt;&gt;?#%+\u{e9}.txt</a>{}{date}                   0\r\n",
            " ".repeat(33 + 1)
        );
        want += &format!(
            "<a href=\"size3\">size3</a>{}{date}                   3\r\n",
            " ".repeat(45 + 1)
        );
        want += &format!(
            "<a href=\"{}\">{}\u{fffd}..&gt;</a> {date}                   0\r\n",
            "%C3%A9".repeat(55),
            "\u{e9}".repeat(23)
        );
        want += "</pre><hr></body>\r\n</html>\r\n";
        assert_eq!(out, want);
    }

    #[test]
    fn utf8_counts_characters() {
        let d = TestDir::new("autoindex-utf8");
        let long = "\u{e9}".repeat(55);
        let p = d.file(&long, b"");
        touch(&p, 0);
        let p = d.file("\u{e9}.txt", b"");
        touch(&p, 0);
        let out = String::from_utf8(render(d.root(), "/", true).unwrap()).unwrap();
        assert!(out.contains(&format!(
            ">{}..&gt;</a> 01-Jan-1970 00:00",
            "\u{e9}".repeat(47)
        )));
        assert!(out.contains(&format!(">\u{e9}.txt</a>{}01-Jan-1970", " ".repeat(45 + 1))));
    }

    #[test]
    fn missing_directory_is_opendirs_errno() {
        assert_eq!(
            render("/nonexistent/peregrine", "/", false).unwrap_err(),
            ListError {
                opendir: true,
                errno: libc::ENOENT
            }
        );
    }
}
