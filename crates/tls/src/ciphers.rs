//! `ssl_ciphers`: OpenSSL's cipher-string language, evaluated as OpenSSL
//! 3.0 evaluates it (`ssl_create_cipher_list` in ssl/ssl_ciph.c), then
//! mapped onto the TLS 1.2 suites rustls has.
//!
//! Hand-written because no crate reads OpenSSL cipher strings, and nginx
//! users' configurations are full of them (`HIGH:!aNULL:!MD5`,
//! `EECDH+AESGCM:EDH+AESGCM`, Mozilla's lists). The evaluation runs over
//! OpenSSL's whole table ([`crate::cipher_table`]), not only the suites
//! rustls has, so that a string OpenSSL accepts is accepted here and
//! `no cipher match` is said exactly when OpenSSL would say it.
//!
//! The language: elements separated by `:`, `,`, `;` or spaces; an element
//! is a suite name or aliases joined by `+` (all must hold), optionally
//! prefixed by `!` (remove for good), `-` (remove; a later element may add
//! it back) or `+` (move to the end); `@STRENGTH` sorts by key bits;
//! `@SECLEVEL=N` is accepted; `DEFAULT` at the start stands for OpenSSL's
//! default list. Unknown names are ignored, as OpenSSL ignores them.

use crate::cipher_table::{A, CIPHERS, Cipher, E, K, M, V};

/// OpenSSL 3.0's `OSSL_default_cipher_list()`.
pub const OPENSSL_DEFAULT: &str = "ALL:!COMPLEMENTOFDEFAULT:!eNULL";

/// nginx's default `ssl_ciphers`.
pub const NGINX_DEFAULT: &str = "HIGH:!aNULL:!MD5";

/// What a `+`-joined part of an element tests.
type Test = fn(&Cipher) -> bool;

/// The tests of one alias, all of which must hold; `None`: not an alias.
fn alias(name: &str) -> Option<&'static [Test]> {
    Some(match name {
        "ALL" => &[|c| c.enc != E::Null],
        "COMPLEMENTOFALL" | "eNULL" | "NULL" => &[|c| c.enc == E::Null],
        // The suites OpenSSL 3.0 marks `SSL_NOT_DEFAULT`: anonymous and
        // DSS authentication, Camellia, ARIA and AES-CCM.
        "COMPLEMENTOFDEFAULT" => &[|c| {
            matches!(c.au, A::Null | A::Dss)
                || matches!(c.enc, E::Camellia | E::AriaGcm | E::AesCcm | E::AesCcm8)
        }],
        "HIGH" => &[|c| c.enc != E::Null],
        // OpenSSL 3.0 builds no MEDIUM, LOW or export suites by default.
        "MEDIUM" | "LOW" | "EXP" | "EXPORT" | "3DES" | "DES" | "RC4" | "RC2" | "IDEA" | "SEED"
        | "GOST89" | "GOST94" | "aGOST" | "kGOST" => &[|_| false],
        "kRSA" | "RSA" => &[|c| c.kx == K::Rsa],
        "aRSA" => &[|c| c.au == A::Rsa],
        "kEDH" | "kDHE" | "DH" => &[|c| c.kx == K::Dhe],
        "EDH" | "DHE" => &[|c| c.kx == K::Dhe, |c| c.au != A::Null],
        "ADH" => &[|c| c.kx == K::Dhe, |c| c.au == A::Null],
        "kEECDH" | "kECDHE" | "ECDH" => &[|c| c.kx == K::Ecdhe],
        "EECDH" | "ECDHE" => &[|c| c.kx == K::Ecdhe, |c| c.au != A::Null],
        "AECDH" => &[|c| c.kx == K::Ecdhe, |c| c.au == A::Null],
        "aNULL" => &[|c| c.au == A::Null],
        "aDSS" | "DSS" => &[|c| c.au == A::Dss],
        "aECDSA" | "ECDSA" => &[|c| c.au == A::Ecdsa],
        "PSK" => &[|c| matches!(c.kx, K::Psk | K::RsaPsk | K::DhePsk | K::EcdhePsk)],
        "kPSK" => &[|c| c.kx == K::Psk],
        "kRSAPSK" => &[|c| c.kx == K::RsaPsk],
        "kDHEPSK" => &[|c| c.kx == K::DhePsk],
        "kECDHEPSK" => &[|c| c.kx == K::EcdhePsk],
        "aPSK" => &[|c| c.au == A::Psk],
        "SRP" | "kSRP" => &[|c| c.kx == K::Srp],
        "aSRP" => &[|c| c.au == A::Srp],
        "AES" => &[is_aes],
        "AES128" => &[is_aes, |c| c.bits == 128],
        "AES256" => &[is_aes, |c| c.bits == 256],
        "AESGCM" => &[|c| c.enc == E::AesGcm],
        "AESCCM" => &[|c| matches!(c.enc, E::AesCcm | E::AesCcm8)],
        "AESCCM8" => &[|c| c.enc == E::AesCcm8],
        "CAMELLIA" => &[|c| c.enc == E::Camellia],
        "CAMELLIA128" => &[|c| c.enc == E::Camellia, |c| c.bits == 128],
        "CAMELLIA256" => &[|c| c.enc == E::Camellia, |c| c.bits == 256],
        "CHACHA20" => &[|c| c.enc == E::Chacha20],
        "ARIA" | "ARIAGCM" => &[|c| c.enc == E::AriaGcm],
        "ARIA128" => &[|c| c.enc == E::AriaGcm, |c| c.bits == 128],
        "ARIA256" => &[|c| c.enc == E::AriaGcm, |c| c.bits == 256],
        "MD5" => &[|c| c.mac == M::Md5],
        "SHA1" | "SHA" => &[|c| c.mac == M::Sha1],
        "SHA256" => &[|c| c.mac == M::Sha256],
        "SHA384" => &[|c| c.mac == M::Sha384],
        "SSLv3" => &[|c| c.version == V::Ssl3],
        "TLSv1" | "TLSv1.0" => &[|c| c.version == V::Tls1],
        "TLSv1.2" => &[|c| c.version == V::Tls12],
        _ => return None,
    })
}

fn is_aes(c: &Cipher) -> bool {
    matches!(c.enc, E::Aes | E::AesGcm | E::AesCcm | E::AesCcm8)
}

/// The suite named `name`, as a table index. (OpenSSL's old `EDH-`
/// spellings are aliases of 3DES suites it no longer builds: they match
/// nothing, as here.)
fn by_name(name: &str) -> Option<usize> {
    CIPHERS.iter().position(|c| c.name == name)
}

/// What an element does to the suites it selects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Add,
    Delete,
    Kill,
    MoveToEnd,
}

/// OpenSSL's working list: every suite in preference order, each active or
/// not; killed suites leave it.
struct List {
    /// (table index, active)
    items: Vec<(usize, bool)>,
}

impl List {
    fn new() -> List {
        List {
            items: (0..CIPHERS.len()).map(|i| (i, false)).collect(),
        }
    }

    /// `ssl_cipher_apply_rule`: adding appends newly active suites at the
    /// end; `+` moves active ones to the end; `-` deactivates and moves to
    /// the front (so a later add brings them back first, in order); `!`
    /// removes for good.
    fn apply(&mut self, op: Op, selected: impl Fn(usize) -> bool) {
        let (hit, rest): (Vec<_>, Vec<_>) = self.items.iter().partition(|&&(i, active)| {
            selected(i)
                && match op {
                    Op::Add => !active,
                    Op::Delete | Op::MoveToEnd => active,
                    Op::Kill => true,
                }
        });
        self.items = match op {
            Op::Add => rest
                .into_iter()
                .chain(hit.into_iter().map(|(i, _)| (i, true)))
                .collect(),
            Op::MoveToEnd => rest.into_iter().chain(hit).collect(),
            Op::Delete => hit
                .into_iter()
                .map(|(i, _)| (i, false))
                .chain(rest)
                .collect(),
            Op::Kill => rest,
        };
    }

    /// `@STRENGTH`: active suites by key bits, strongest first, stable.
    fn sort_by_strength(&mut self) {
        let (mut active, inactive): (Vec<_>, Vec<_>) = self.items.iter().partition(|&&(_, a)| a);
        active.sort_by_key(|&(i, _)| std::cmp::Reverse(CIPHERS[i].bits));
        self.items = inactive.into_iter().chain(active).collect();
    }

    fn active(&self) -> Vec<&'static Cipher> {
        self.items
            .iter()
            .filter(|&&(_, a)| a)
            .map(|&(i, _)| &CIPHERS[i])
            .collect()
    }
}

/// The error nginx logs when OpenSSL selects nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NoCipherMatch;

/// Evaluates a cipher string: the suites OpenSSL 3.0 would enable, in its
/// order; [`NoCipherMatch`] when that is none.
pub fn evaluate(spec: &str) -> Result<Vec<&'static Cipher>, NoCipherMatch> {
    let mut list = List::new();
    let rest = match spec.strip_prefix("DEFAULT") {
        Some(rest) => {
            run(&mut list, OPENSSL_DEFAULT);
            rest
        }
        None => spec,
    };
    run(&mut list, rest);
    let out = list.active();
    if out.is_empty() {
        Err(NoCipherMatch)
    } else {
        Ok(out)
    }
}

fn run(list: &mut List, spec: &str) {
    for element in spec.split([':', ',', ';', ' ']).filter(|e| !e.is_empty()) {
        if element == "@STRENGTH" {
            list.sort_by_strength();
            continue;
        }
        if element.starts_with('@') {
            // `@SECLEVEL=N` limits key sizes at handshake time, not suites.
            continue;
        }
        let (op, body) = match element.as_bytes()[0] {
            b'!' => (Op::Kill, &element[1..]),
            b'-' => (Op::Delete, &element[1..]),
            b'+' => (Op::MoveToEnd, &element[1..]),
            _ => (Op::Add, element),
        };
        if let Some(i) = by_name(body) {
            list.apply(op, |j| j == i);
            continue;
        }
        let mut tests: Vec<Test> = Vec::new();
        let mut known = true;
        for part in body.split('+') {
            match alias(part) {
                Some(t) => tests.extend_from_slice(t),
                None => known = false,
            }
        }
        // OpenSSL skips an element with an unknown part.
        if known && !tests.is_empty() {
            list.apply(op, |j| tests.iter().all(|t| t(&CIPHERS[j])));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(spec: &str) -> Vec<&'static str> {
        evaluate(spec)
            .map(|v| v.iter().map(|c| c.name).collect())
            .unwrap_or_default()
    }

    #[test]
    fn explicit_lists_keep_their_order() {
        assert_eq!(
            names("ECDHE-RSA-AES128-GCM-SHA256:AES128-SHA:ECDHE-ECDSA-AES256-GCM-SHA384"),
            [
                "ECDHE-RSA-AES128-GCM-SHA256",
                "AES128-SHA",
                "ECDHE-ECDSA-AES256-GCM-SHA384"
            ]
        );
    }

    #[test]
    fn unknown_names_are_skipped_and_nothing_is_no_match() {
        assert_eq!(names("DES-CBC3-SHA:AES128-SHA:FOO+BAR"), ["AES128-SHA"]);
        assert_eq!(evaluate("DES-CBC3-SHA:RC4"), Err(NoCipherMatch));
        assert_eq!(evaluate("HIGH:!HIGH"), Err(NoCipherMatch));
        assert_eq!(evaluate(""), Err(NoCipherMatch));
    }

    #[test]
    fn kill_is_final_delete_is_not() {
        let killed = names("!AES128-SHA:AES128-SHA");
        assert!(killed.is_empty());
        assert_eq!(names("AES128-SHA:-AES128-SHA:AES128-SHA"), ["AES128-SHA"]);
    }

    #[test]
    fn combinations_and_moves() {
        let gcm = names("EECDH+AESGCM");
        assert_eq!(gcm.len(), 4);
        assert!(
            gcm.iter()
                .all(|n| n.starts_with("ECDHE-") && n.contains("GCM"))
        );
        let moved = names("ECDHE-RSA-AES128-GCM-SHA256:ECDHE-RSA-AES256-GCM-SHA384:+AES128");
        assert_eq!(
            moved,
            ["ECDHE-RSA-AES256-GCM-SHA384", "ECDHE-RSA-AES128-GCM-SHA256"]
        );
    }

    #[test]
    fn strength_sort_is_stable() {
        let sorted = names("AES128-SHA:AES256-SHA:CAMELLIA128-SHA:@STRENGTH");
        assert_eq!(sorted, ["AES256-SHA", "AES128-SHA", "CAMELLIA128-SHA"]);
    }

    /// Holds the evaluation against the `openssl` command of this machine
    /// on the strings real configurations use (skipped without one).
    #[test]
    fn agrees_with_openssl() {
        let Ok(v) = std::process::Command::new("openssl")
            .arg("version")
            .output()
        else {
            eprintln!("skipped: no openssl command");
            return;
        };
        if !String::from_utf8_lossy(&v.stdout).starts_with("OpenSSL 3.") {
            eprintln!("skipped: not OpenSSL 3");
            return;
        }
        let real = real_configuration_strings();
        let specs = crate::testdata::CIPHER_STRINGS
            .iter()
            .copied()
            .chain(real.iter().map(String::as_str));
        for spec in specs {
            let out = std::process::Command::new("openssl")
                .args(["ciphers", "--", spec])
                .output()
                .unwrap();
            let theirs: Vec<String> = if out.status.success() {
                String::from_utf8_lossy(&out.stdout)
                    .trim()
                    .split(':')
                    .filter(|n| !n.starts_with("TLS_") && !is_null(n))
                    .map(str::to_string)
                    .collect()
            } else {
                Vec::new()
            };
            let ours: Vec<String> = names(spec)
                .iter()
                .filter(|n| !is_null(n))
                .map(|s| s.to_string())
                .collect();
            assert_eq!(ours, theirs, "{spec}");
        }
    }

    /// The table's order puts the NULL-encryption suites last (as `openssl
    /// ciphers ALL:COMPLEMENTOFALL` lists them), while OpenSSL's own list
    /// has them among the others: where they fall among suites of other
    /// groups is not compared. It never changes the order of the others,
    /// and rustls has none of them.
    fn is_null(name: &str) -> bool {
        name.contains("NULL")
    }

    /// The `ssl_ciphers` values of the real configurations collected in
    /// `../shared/realconf/corpus` (read there, never copied), if present.
    fn real_configuration_strings() -> Vec<String> {
        let dir = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../../shared/realconf/corpus"
        );
        let mut out = Vec::new();
        let mut stack = vec![std::path::PathBuf::from(dir)];
        while let Some(p) = stack.pop() {
            if let Ok(entries) = std::fs::read_dir(&p) {
                stack.extend(entries.flatten().map(|e| e.path()));
            } else if let Ok(text) = std::fs::read_to_string(&p) {
                for line in text.lines() {
                    let line = line.trim();
                    if let Some(v) = line.strip_prefix("ssl_ciphers ") {
                        let v = v.split(';').next().unwrap_or("");
                        out.push(v.trim().trim_matches(['"', '\'']).to_string());
                    }
                }
            }
        }
        out
    }
}
