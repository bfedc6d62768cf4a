//! The client-body layer (nginx's `ngx_http_request_body.c`): a request's
//! body as the proxy and the gateways (FastCGI, uwsgi, SCGI) read it. In
//! memory while it fits `client_body_buffer_size`, then in a temporary
//! file under `client_body_temp_path` ([`temp`]); always in a file with
//! `client_body_in_file_only`. `client_max_body_size` is checked as the
//! decoded bytes arrive (a chunked body's length is known only then; a
//! `Content-Length` over it was refused before reading). HTTP/1 feeds it
//! from the connection's read buffer ([`read`]).
//!
//! A request without a body never makes one: [`ClientBody::default`]
//! allocates nothing.

pub mod read;
pub mod temp;

use std::sync::Arc;

use peregrine_conf::model::{InFileOnly, LocConf};

pub use temp::{TempError, TempFile};

/// A body being read or read whole.
#[derive(Debug, Default)]
pub struct ClientBody {
    /// The bytes while they fit the buffer (empty once they went to the file).
    mem: Vec<u8>,
    pub file: Option<TempFile>,
    /// Decoded bytes so far.
    pub total: u64,
}

/// Why pushing a piece failed.
#[derive(Debug)]
pub enum PushError {
    /// Over `client_max_body_size` (a chunked body; 413): the text for
    /// the error log, nginx's.
    TooLarge(String),
    /// The temporary file could not be made or written (500).
    Temp(TempError),
}

impl ClientBody {
    /// Adds `data`; `Ok(Some(path))` when the body just moved to a
    /// temporary file (the caller logs nginx's line about it).
    pub fn push(&mut self, conf: &LocConf, data: &[u8]) -> Result<Option<String>, PushError> {
        self.count(conf, data.len())?;
        if let Some(f) = self.file.as_mut() {
            return f.write(data).map(|()| None).map_err(PushError::Temp);
        }
        let cb = &conf.client_body;
        if cb.in_file_only == InFileOnly::Off
            && self.mem.len() + data.len() <= conf.client_body_buffer_size
        {
            self.mem.extend_from_slice(data);
            return Ok(None);
        }
        self.spill(conf).map_err(PushError::Temp)?;
        if let Some(f) = self.file.as_mut() {
            f.write(data).map_err(PushError::Temp)?;
        }
        Ok(self.file.as_ref().map(TempFile::path_str))
    }

    /// Counts `n` more bytes against `client_max_body_size`.
    fn count(&mut self, conf: &LocConf, n: usize) -> Result<(), PushError> {
        let limit = conf.client_max_body_size;
        if limit > 0 && self.total + n as u64 > limit {
            // `ngx_http_request_body_chunked_filter`: what was read, then
            // the size that would go over.
            return Err(PushError::TooLarge(format!(
                "client intended to send too large chunked body: {}+{n} bytes",
                self.total
            )));
        }
        self.total += n as u64;
        Ok(())
    }

    /// Moves what is in memory to a new temporary file.
    fn spill(&mut self, conf: &LocConf) -> Result<(), TempError> {
        let cb = &conf.client_body;
        let mut f = TempFile::create(&cb.temp_path, cb.in_file_only == InFileOnly::On)?;
        f.write(&self.mem)?;
        self.mem = Vec::new();
        self.file = Some(f);
        Ok(())
    }

    /// The body read whole: `client_body_in_file_only` makes a file of a
    /// body too small to have spilled; `Ok(Some(path))` as for [`push`].
    pub fn finish(&mut self, conf: &LocConf) -> Result<Option<String>, TempError> {
        if self.file.is_none() && conf.client_body.in_file_only != InFileOnly::Off {
            self.spill(conf)?;
            return Ok(self.file.as_ref().map(TempFile::path_str));
        }
        Ok(None)
    }

    /// The in-memory bytes, taken for `$request_body` and the upstream
    /// (`None` when the body is in a file).
    pub fn take_mem(&mut self) -> Option<Arc<Vec<u8>>> {
        if self.file.is_some() {
            return None;
        }
        Some(Arc::new(std::mem::take(&mut self.mem)))
    }

    /// Counts `data` passed on unbuffered, keeping a copy while the body
    /// fits the buffer (nginx's `$request_body` of an unbuffered body is
    /// its one buffer); never a file (`client_body_in_file_only` does not
    /// apply unbuffered).
    pub fn tee(&mut self, conf: &LocConf, data: &[u8]) -> Result<(), PushError> {
        self.count(conf, data.len())?;
        if self.total <= conf.client_body_buffer_size as u64 {
            self.mem.extend_from_slice(data);
        } else if !self.mem.is_empty() {
            self.mem = Vec::new();
        }
        Ok(())
    }

    /// The copy [`ClientBody::tee`] kept, when the whole body fit.
    pub fn take_small(&mut self, conf: &LocConf) -> Option<Arc<Vec<u8>>> {
        (self.total <= conf.client_body_buffer_size as u64)
            .then(|| Arc::new(std::mem::take(&mut self.mem)))
    }

    /// The log level of the "buffered to a temporary file" line: nginx's
    /// `request_body_file_log_level`, notice when the file was asked for.
    pub fn spill_level(conf: &LocConf) -> peregrine_conf::model::LogLevel {
        match conf.client_body.in_file_only {
            InFileOnly::Off => peregrine_conf::model::LogLevel::Warn,
            _ => peregrine_conf::model::LogLevel::Notice,
        }
    }
}

/// nginx's text for a body moved to a file (`ngx_create_temp_file`).
pub fn spill_text(path: &str) -> String {
    format!("a client request body is buffered to a temporary file {path}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use peregrine_conf::model::TempPath;

    fn conf(
        tag: &str,
        buffer: usize,
        max: u64,
        in_file: InFileOnly,
    ) -> (LocConf, std::path::PathBuf) {
        let dir = std::env::temp_dir().join(format!("pg-cb-{tag}-{}", std::process::id()));
        let mut c = LocConf::nginx_default(&dir);
        c.client_body_buffer_size = buffer;
        c.client_max_body_size = max;
        c.client_body.in_file_only = in_file;
        c.client_body.temp_path = Arc::new(TempPath {
            dir: dir.clone(),
            levels: vec![1],
        });
        (c, dir)
    }

    #[test]
    fn small_body_stays_in_memory_large_one_spills() {
        let (c, dir) = conf("spill", 8, 0, InFileOnly::Off);
        let mut b = ClientBody::default();
        assert_eq!(b.push(&c, b"0123").unwrap(), None);
        assert_eq!(b.push(&c, b"4567").unwrap(), None);
        let path = b.push(&c, b"89").unwrap().expect("spilled");
        assert_eq!(std::fs::read(&path).unwrap(), b"0123456789");
        assert_eq!(b.push(&c, b"ab").unwrap(), None);
        assert_eq!(b.total, 12);
        assert!(b.take_mem().is_none());
        drop(b);
        assert!(!std::path::Path::new(&path).exists());
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn in_file_only_on_keeps_even_a_small_body() {
        let (c, dir) = conf("only", 1024, 0, InFileOnly::On);
        let mut b = ClientBody::default();
        let path = b.push(&c, b"tiny").unwrap().expect("a file at once");
        assert_eq!(b.finish(&c).unwrap(), None);
        drop(b);
        assert_eq!(std::fs::read(&path).unwrap(), b"tiny");
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn over_the_limit_is_too_large_with_nginx_text() {
        let (c, dir) = conf("limit", 1024, 10, InFileOnly::Off);
        let mut b = ClientBody::default();
        b.push(&c, b"012345").unwrap();
        match b.push(&c, b"67890") {
            Err(PushError::TooLarge(t)) => assert_eq!(
                t,
                "client intended to send too large chunked body: 6+5 bytes"
            ),
            other => panic!("{other:?}"),
        }
        assert!(matches!(b.tee(&c, b"67890"), Err(PushError::TooLarge(_))));
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn unwritable_temp_path_is_an_open_error() {
        let (mut c, _) = conf("bad", 1, 0, InFileOnly::Off);
        c.client_body.temp_path = Arc::new(TempPath {
            dir: "/proc/no-such-dir".into(),
            levels: Vec::new(),
        });
        let mut b = ClientBody::default();
        match b.push(&c, b"xy") {
            Err(PushError::Temp(e)) => {
                assert!(
                    e.text().starts_with("open() \"/proc/no-such-dir/"),
                    "{}",
                    e.text()
                );
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn tee_keeps_only_a_body_that_fits() {
        let (c, dir) = conf("tee", 4, 0, InFileOnly::On);
        let mut b = ClientBody::default();
        b.tee(&c, b"ab").unwrap();
        b.tee(&c, b"cd").unwrap();
        assert_eq!(
            b.take_small(&c).as_deref().map(Vec::as_slice),
            Some(&b"abcd"[..])
        );
        b.tee(&c, b"e").unwrap();
        assert!(b.take_small(&c).is_none());
        assert!(b.file.is_none());
        let _ = std::fs::remove_dir_all(dir);
    }
}
