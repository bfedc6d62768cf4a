//! The cache file's layout, as nginx's `ngx_http_file_cache_header_t`
//! lays it out: a fixed header (the time the answer is valid until, its
//! date and `Last-Modified`, its `ETag` for revalidation, where the head
//! and body start), then `\nKEY: ` and the key, then the upstream's
//! response head as received, then the body. A hit reads the header, the
//! key (an md5 collision is a miss) and the head; the body is sent from
//! the file itself. Hand-written: the format is a few fixed fields.

use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

/// Peregrine's header version (nginx's `NGX_HTTP_CACHE_VERSION` is a
/// number too: files of another version are not read).
pub const MAGIC: &[u8; 8] = b"PRGCACH1";
/// The longest `ETag` kept for revalidation (`NGX_HTTP_CACHE_ETAG_LEN`).
pub const ETAG_MAX: usize = 128;
/// The fixed header: magic, valid, date, last-modified, head and body
/// offsets, the ETag's length and bytes.
pub const HEADER_LEN: usize = 8 + 8 + 8 + 8 + 4 + 4 + 1 + ETAG_MAX;
/// The most a stored head and key may take (a longer answer head is not
/// cached): bounds what a hit reads before its body.
pub const MAX_HEAD: usize = 64 * 1024;

/// What a cache file's header says.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Meta {
    /// Unix seconds the answer is fresh until.
    pub valid_sec: i64,
    pub date: i64,
    pub last_modified: i64,
    pub etag: Vec<u8>,
}

/// A cache file opened for a hit (or a stale answer).
#[derive(Debug)]
pub struct Cached {
    pub file: File,
    pub meta: Meta,
    /// The upstream's head as stored (status line to the blank line).
    pub head: Vec<u8>,
    pub body_start: u64,
    pub body_len: u64,
}

/// The file's bytes before the body: header, key line, head.
pub fn prefix(meta: &Meta, key: &str, head: &[u8]) -> Vec<u8> {
    let key_line = format!("\nKEY: {key}\n");
    let head_start = HEADER_LEN + key_line.len();
    let body_start = head_start + head.len();
    let mut out = Vec::with_capacity(body_start);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&meta.valid_sec.to_le_bytes());
    out.extend_from_slice(&meta.date.to_le_bytes());
    out.extend_from_slice(&meta.last_modified.to_le_bytes());
    out.extend_from_slice(&(head_start as u32).to_le_bytes());
    out.extend_from_slice(&(body_start as u32).to_le_bytes());
    let etag = &meta.etag[..meta.etag.len().min(ETAG_MAX)];
    out.push(etag.len() as u8);
    out.extend_from_slice(etag);
    out.resize(HEADER_LEN, 0);
    out.extend_from_slice(key_line.as_bytes());
    out.extend_from_slice(head);
    out
}

/// Rewrites the validity of a stored answer in place (a 304 from the
/// upstream revalidated it: `ngx_http_file_cache_update_header`).
pub fn set_valid(path: &Path, valid_sec: i64) -> io::Result<()> {
    use std::io::{Seek, SeekFrom, Write};
    let mut f = std::fs::OpenOptions::new().write(true).open(path)?;
    f.seek(SeekFrom::Start(MAGIC.len() as u64))?;
    f.write_all(&valid_sec.to_le_bytes())
}

fn le64(b: &[u8], at: usize) -> i64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[at..at + 8]);
    i64::from_le_bytes(a)
}

fn le32(b: &[u8], at: usize) -> usize {
    let mut a = [0u8; 4];
    a.copy_from_slice(&b[at..at + 4]);
    u32::from_le_bytes(a) as usize
}

/// Reads a cache file's header alone (the loader, at start).
pub fn read_meta(path: &Path) -> Option<(Meta, u64)> {
    let mut f = File::open(path).ok()?;
    let mut h = [0u8; HEADER_LEN];
    f.read_exact(&mut h).ok()?;
    let meta = parse_header(&h)?.0;
    Some((meta, f.metadata().ok()?.len()))
}

fn parse_header(h: &[u8]) -> Option<(Meta, usize, usize)> {
    if h.len() < HEADER_LEN || &h[..8] != MAGIC {
        return None;
    }
    let etag_len = (h[40] as usize).min(ETAG_MAX);
    let meta = Meta {
        valid_sec: le64(h, 8),
        date: le64(h, 16),
        last_modified: le64(h, 24),
        etag: h[41..41 + etag_len].to_vec(),
    };
    Some((meta, le32(h, 32), le32(h, 36)))
}

/// Opens the cache file of `key` at `path`: `None` when it is missing,
/// of another format, or another key's (an md5 collision, which nginx
/// logs as a critical error and answers as a miss).
pub fn open(path: &Path, key: &str) -> Option<Cached> {
    let mut file = File::open(path).ok()?;
    let len = file.metadata().ok()?.len();
    let mut h = vec![0u8; HEADER_LEN];
    file.read_exact(&mut h).ok()?;
    let (meta, head_start, body_start) = parse_header(&h)?;
    if body_start > MAX_HEAD + HEADER_LEN || head_start > body_start || body_start as u64 > len {
        return None;
    }
    let mut rest = vec![0u8; body_start - HEADER_LEN];
    file.read_exact(&mut rest).ok()?;
    let key_line = format!("\nKEY: {key}\n");
    if rest.get(..head_start - HEADER_LEN) != Some(key_line.as_bytes()) {
        return None;
    }
    let head = rest.split_off(head_start - HEADER_LEN);
    Some(Cached {
        file,
        meta,
        head,
        body_start: body_start as u64,
        body_len: len - body_start as u64,
    })
}

/// The file of the key with md5 `md5` under `dir` with `levels`
/// (`ngx_create_hashed_filename`: each level's name is taken from the
/// end of the hex digest).
pub fn path_of(dir: &Path, levels: &[u8], md5: &[u8; 16]) -> PathBuf {
    let hex = hex(md5);
    let mut p = dir.to_path_buf();
    let mut end = hex.len();
    for l in levels {
        let l = *l as usize;
        p.push(&hex[end - l..end]);
        end -= l;
    }
    p.push(&hex);
    p
}

pub fn hex(md5: &[u8; 16]) -> String {
    use std::fmt::Write;
    let mut s = String::with_capacity(32);
    for b in md5 {
        let _ = write!(s, "{b:02x}");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_take_the_digest_from_its_end() {
        let md5 = [0xab; 16];
        let mut m = md5;
        m[15] = 0x12;
        m[14] = 0x34;
        let p = path_of(Path::new("/c"), &[1, 2], &m);
        assert_eq!(p, Path::new("/c/2/41/abababababababababababababab3412"));
    }

    #[test]
    fn a_file_round_trips_and_another_key_is_a_miss() {
        let dir = std::env::temp_dir().join(format!("pg-cache-file-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("f");
        let meta = Meta {
            valid_sec: 1234,
            date: 5,
            last_modified: 6,
            etag: b"\"x\"".to_vec(),
        };
        let mut bytes = prefix(&meta, "k", b"HTTP/1.1 200 OK\r\n\r\n");
        bytes.extend_from_slice(b"body");
        std::fs::write(&path, &bytes).unwrap();
        let c = open(&path, "k").unwrap();
        assert_eq!(c.meta, meta);
        assert_eq!(c.head, b"HTTP/1.1 200 OK\r\n\r\n");
        assert_eq!(c.body_len, 4);
        assert!(open(&path, "other").is_none());
        set_valid(&path, 99).unwrap();
        assert_eq!(read_meta(&path).unwrap().0.valid_sec, 99);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
