//! The access phase's `auth_basic` (`ngx_http_auth_basic_handler`): the
//! `Authorization: Basic` credentials checked against the htpasswd file,
//! read at each request as nginx reads it (a changed file takes effect at
//! once); 401 with `WWW-Authenticate: Basic realm="..."` when they are
//! missing or wrong, with nginx's error lines. The settings are read by
//! `peregrine_conf::build::auth_basic`.

mod crypt;
mod user_file;

pub(crate) use user_file::UserFiles;

use crate::http::{Ctx, HttpCore, Step};
use crate::response::ErrorNote;
use crate::secure_link::decode_base64;
use crate::special::Special;

impl HttpCore {
    /// `None`: the request may go on; else the answer (401, 403, 500).
    pub(crate) fn auth_basic(&mut self, ctx: &Ctx<'_>) -> Option<Step> {
        let (realm, file) = (
            ctx.conf.auth_basic.as_deref()?,
            ctx.conf.auth_basic_user_file.as_ref()?,
        );
        let vars = ctx.vars();
        let realm = vars.expand_cow(realm);
        if realm == "off" {
            return None;
        }
        let Some((user, password)) = ctx.req.headers.get("authorization").and_then(credentials)
        else {
            // nginx logs this at info only.
            return Some(challenge(&realm));
        };
        let path = vars.expand_cow(&file.path);
        let path = if path.starts_with('/') {
            path
        } else {
            std::borrow::Cow::Owned(format!("{}/{path}", file.conf_dir.trim_end_matches('/')))
        };
        let text = match self.user_files.read(&path) {
            Ok(t) => t,
            Err(errno) => {
                self.note_failure(ErrorNote::Open {
                    call: "open()",
                    path: path.into_owned(),
                    errno,
                });
                let status = if errno == libc::ENOENT { 403 } else { 500 };
                return Some(Step::Special(Special::status(status)));
            }
        };
        let Some(entry) = find_entry(&text, &user) else {
            let user = String::from_utf8_lossy(&user).into_owned();
            self.note_failure(ErrorNote::UserNotFound {
                user,
                file: path.into_owned(),
            });
            return Some(challenge(&realm));
        };
        match crypt::matches(&password, entry) {
            Some(true) => None,
            Some(false) => {
                let user = String::from_utf8_lossy(&user).into_owned();
                self.note_failure(ErrorNote::PasswordMismatch { user });
                Some(challenge(&realm))
            }
            None => Some(Step::Special(Special::status(500))),
        }
    }
}

fn challenge(realm: &str) -> Step {
    Step::Special(Special {
        www_authenticate: vec![format!("Basic realm=\"{realm}\"")],
        ..Special::status(401)
    })
}

/// `ngx_http_auth_basic_user`: `Basic` (any case), spaces, base64 of
/// `user:password`; `None` when nginx would decline.
fn credentials(value: &str) -> Option<(Vec<u8>, Vec<u8>)> {
    let scheme = value.get(..6)?;
    if !scheme.eq_ignore_ascii_case("Basic ") {
        return None;
    }
    let encoded = value[6..].trim_start_matches(' ');
    if encoded.is_empty() {
        return None;
    }
    let decoded = decode_base64(encoded.as_bytes(), false)?;
    let colon = decoded.iter().position(|&c| c == b':')?;
    Some((decoded[..colon].to_vec(), decoded[colon + 1..].to_vec()))
}

/// The hash of `user`'s line, as nginx's scanner finds it: a line that
/// starts with the name and a colon (lines starting with `#` or CR are
/// skipped); the hash ends at a CR, LF or another colon.
fn find_entry<'t>(text: &'t [u8], user: &[u8]) -> Option<&'t [u8]> {
    text.split(|&c| c == b'\n').find_map(|line| {
        if line.first().is_some_and(|&c| c == b'#' || c == b'\r') {
            return None;
        }
        let rest = line.strip_prefix(user)?.strip_prefix(b":")?;
        let end = rest
            .iter()
            .position(|&c| matches!(c, b'\r' | b'\n' | b':'))
            .unwrap_or(rest.len());
        Some(&rest[..end])
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_as_nginx_reads_them() {
        // "user:pa:ss" -> the first colon splits.
        assert_eq!(
            credentials("Basic dXNlcjpwYTpzcw=="),
            Some((b"user".to_vec(), b"pa:ss".to_vec()))
        );
        assert_eq!(
            credentials("basic   dXNlcjpwYTpzcw=="),
            Some((b"user".to_vec(), b"pa:ss".to_vec()))
        );
        assert_eq!(credentials("Bearer abc"), None);
        assert_eq!(credentials("Basic "), None);
        assert_eq!(credentials("Basic dXNlcg=="), None, "no colon");
        assert_eq!(credentials("Basic !!!!"), None);
    }

    #[test]
    fn entries_found_as_nginx_scans() {
        let text = b"# comment\nalice:{PLAIN}a\r\nbob:{PLAIN}b:extra\nal:{PLAIN}x\ncarol:{PLAIN}c";
        assert_eq!(find_entry(text, b"alice"), Some(&b"{PLAIN}a"[..]));
        assert_eq!(find_entry(text, b"bob"), Some(&b"{PLAIN}b"[..]));
        assert_eq!(find_entry(text, b"al"), Some(&b"{PLAIN}x"[..]));
        assert_eq!(find_entry(text, b"carol"), Some(&b"{PLAIN}c"[..]));
        assert_eq!(find_entry(text, b"# comment"), None);
        assert_eq!(find_entry(text, b"dave"), None);
    }
}
