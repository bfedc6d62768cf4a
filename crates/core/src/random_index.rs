//! `random_index on` (ngx_http_random_index_module): a URI ending in `/`
//! is answered by an internal redirect to a randomly chosen regular file of
//! the directory (names starting with `.` skipped, symbolic links followed),
//! before the index module looks.

use std::cell::Cell;

use crate::http::{Ctx, HttpCore, Step};
use crate::phases::{escapes_root, map_uri};
use crate::request::Method;
use crate::special::Special;

thread_local! {
    /// xorshift64 state (nginx uses `random()`; any uniform pick will do).
    static STATE: Cell<u64> = Cell::new(seed());
}

fn seed() -> u64 {
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    // Never zero: xorshift stays at zero.
    (t ^ u64::from(std::process::id()).rotate_left(32)) | 1
}

/// A number in `0..n` (n > 0).
fn pick(n: usize) -> usize {
    STATE.with(|s| {
        let mut x = s.get();
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        s.set(x);
        ((u128::from(x) * n as u128) >> 64) as usize
    })
}

impl HttpCore {
    /// `ngx_http_random_index_handler`: `None` to decline (not a directory
    /// URI, another method, no regular file in the directory).
    pub(crate) fn random_index(&mut self, ctx: &mut Ctx<'_>) -> Option<Step> {
        if !matches!(ctx.method, Method::Get | Method::Head | Method::Post) {
            return None;
        }
        let mut dir = String::new();
        map_uri(&mut dir, ctx, &ctx.uri);
        if dir.len() > 1 {
            dir.pop();
        }
        if escapes_root(&dir) {
            return Some(Step::Special(Special::status(404)));
        }
        let entries = match std::fs::read_dir(&dir) {
            Ok(e) => e,
            Err(e) => {
                let errno = e.raw_os_error().unwrap_or(libc::EIO);
                let e = crate::autoindex::ListError {
                    opendir: true,
                    errno,
                };
                return Some(self.list_failed(&dir, e));
            }
        };
        let mut names: Vec<String> = Vec::new();
        for e in entries.flatten() {
            let name = e.file_name();
            let Some(name) = name.to_str() else { continue };
            if name.starts_with('.') {
                continue;
            }
            // A link (or an unknown type) is looked at through stat, as
            // nginx's ngx_de_info; a dangling link is skipped.
            let is_file = match e.file_type() {
                Ok(t) if t.is_symlink() => std::fs::metadata(e.path()).is_ok_and(|m| m.is_file()),
                Ok(t) => t.is_file(),
                Err(_) => false,
            };
            if is_file {
                names.push(name.to_string());
            }
        }
        if names.is_empty() {
            return None;
        }
        let name = &names[pick(names.len())];
        let uri = format!("{}{name}", ctx.uri);
        let args = ctx.args.as_deref().map(str::to_string);
        Some(Step::Redirect(uri, args))
    }
}

#[cfg(test)]
mod tests {
    use super::pick;

    #[test]
    fn picks_stay_in_range_and_vary() {
        let mut seen = [false; 3];
        for _ in 0..200 {
            let p = pick(3);
            assert!(p < 3);
            seen[p] = true;
        }
        assert!(seen.iter().all(|s| *s));
    }
}
