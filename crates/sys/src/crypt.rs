//! The system's password hashing, `crypt_rn(3)` of libxcrypt, as nginx's
//! `ngx_libc_crypt` calls crypt(3) for the htpasswd entries it does not
//! hash itself: traditional DES, `$1$` MD5, `$5$`/`$6$` SHA-crypt, `$2y$`
//! bcrypt, and whatever else the system's library knows, with its answers.

use std::ffi::{CStr, CString, c_char, c_int, c_void};

/// `sizeof(struct crypt_data)` in libxcrypt 4 (crypt.h: output 384 +
/// passphrase 512 + reserved 767 + internal 30720, rounded up to 32768):
/// the work area `crypt_rn` is given.
const CRYPT_DATA_SIZE: usize = 32768;

#[link(name = "crypt")]
unsafe extern "C" {
    fn crypt_rn(
        phrase: *const c_char,
        setting: *const c_char,
        data: *mut c_void,
        size: c_int,
    ) -> *mut c_char;
}

/// The hash of `phrase` with `setting` (an existing hash, whose prefix
/// names the method and salt), or `None` when the library refuses the
/// setting or either has a NUL.
pub fn crypt(phrase: &[u8], setting: &[u8]) -> Option<Vec<u8>> {
    let phrase = CString::new(phrase).ok()?;
    let setting = CString::new(setting).ok()?;
    let mut data = vec![0u8; CRYPT_DATA_SIZE];
    // SAFETY: both strings are NUL-terminated and outlive the call; `data`
    // is a writable, zeroed buffer of exactly the size passed, which
    // crypt_rn uses as its `struct crypt_data` and writes only within; it
    // returns NULL or a pointer into `data`.
    let out = unsafe {
        crypt_rn(
            phrase.as_ptr(),
            setting.as_ptr(),
            data.as_mut_ptr().cast(),
            CRYPT_DATA_SIZE as c_int,
        )
    };
    if out.is_null() {
        return None;
    }
    // SAFETY: `out` points into `data` (still alive), at a NUL-terminated
    // string crypt_rn wrote there.
    let hash = unsafe { CStr::from_ptr(out) }.to_bytes().to_vec();
    // libxcrypt's failure token (`*0`/`*1`) starts with `*`, never a hash.
    (!hash.starts_with(b"*")).then_some(hash)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_systems_methods() {
        // Traditional DES: "sa" + 11 characters.
        let des = crypt(b"password", b"salt").unwrap();
        assert_eq!(des.len(), 13);
        assert_eq!(crypt(b"password", &des).unwrap(), des);
        assert_ne!(crypt(b"passwore", &des).unwrap(), des);
        let md5 = crypt(b"password", b"$1$salt$").unwrap();
        assert!(md5.starts_with(b"$1$salt$"));
        assert_eq!(crypt(b"password", &md5).unwrap(), md5);
        let sha512 = crypt(b"password", b"$6$salt$").unwrap();
        assert!(sha512.starts_with(b"$6$salt$"));
        assert!(crypt(b"a\0b", b"$1$salt$").is_none());
        assert!(crypt(b"password", b"$9$nonsense").is_none());
    }
}
