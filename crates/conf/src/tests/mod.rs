//! Tests of the whole pipeline (text → Config). Messages were checked against
//! `nginx -t` (nginx 1.22.1) where nginx has the same directive.

mod access;
mod cache;
mod cgi;
mod descriptions;
mod directives;
mod docs;
mod errors;
mod fast;
mod files;
mod fuzzish;
// http2
mod http2;
mod inherit;
mod limits;
mod map;
mod modules;
mod refused;
mod request;
mod soup;
mod split_clients;
// stream
mod stream;
mod upstream;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::*;

/// The file name used by [`parse`] and [`err`].
pub const NAME: &str = "/p/conf/nginx.conf";

pub fn parse(text: &str) -> Config {
    match parse_str(text, NAME) {
        Ok(c) => c,
        Err(e) => panic!("unexpected error: {e}\n---\n{text}"),
    }
}

pub fn err(text: &str) -> String {
    match parse_str(text, NAME) {
        Ok(_) => panic!("expected an error for:\n{text}"),
        Err(e) => e.to_string(),
    }
}

/// `events {}` on line 1, `http {` on line 2, `body` from line 3.
pub fn http(body: &str) -> String {
    format!("events {{}}\nhttp {{\n{body}\n}}\n")
}

/// Like [`http`] with `server {` on line 3, `body` from line 4.
pub fn server(body: &str) -> String {
    http(&format!("server {{\n{body}\n}}"))
}

pub fn only_server(c: &Config) -> &ServerConf {
    let http = c.http.as_ref().expect("http");
    assert_eq!(http.servers.len(), 1);
    &http.servers[0]
}

/// A directory under the system temp dir, removed on drop.
pub struct TempPrefix(pub PathBuf);

static COUNTER: AtomicUsize = AtomicUsize::new(0);

impl TempPrefix {
    pub fn new() -> Self {
        let n = COUNTER.fetch_add(1, Ordering::SeqCst);
        let dir =
            std::env::temp_dir().join(format!("peregrine-conf-test-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("conf")).expect("mkdir");
        TempPrefix(dir)
    }

    pub fn write(&self, rel: &str, text: &str) -> PathBuf {
        let p = self.0.join(rel);
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent).expect("mkdir");
        }
        std::fs::write(&p, text).expect("write");
        p
    }

    pub fn opts(&self, conf: &str) -> LoadOptions {
        LoadOptions {
            prefix: self.0.clone(),
            conf_file: PathBuf::from(conf),
            globals: None,
        }
    }

    pub fn path(&self, rel: &str) -> String {
        self.0.join(rel).to_string_lossy().into_owned()
    }

    pub fn root(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempPrefix {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Workers share the configuration across threads.
#[test]
fn config_is_send_and_sync() {
    fn check<T: Send + Sync + Clone>() {}
    check::<Config>();
    check::<ConfError>();
}
