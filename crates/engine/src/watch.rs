//! `config_watch TIME;` (Peregrine's, beyond nginx): the master reads the
//! configuration's files again every TIME and, when one's text changed,
//! reloads as HUP does: the new configuration is checked as `-t` checks it
//! and applied only if it passes (otherwise the old one serves on, and the
//! broken text is not retried until it changes again). Texts are compared,
//! not times, so a Kubernetes ConfigMap's update (a `..data` symlink
//! swapped to a new directory) is seen whatever the files' mtimes say.
//! A file that a glob `include` would newly match is seen at the next
//! change of a file already read.

use std::path::PathBuf;
use std::time::Instant;

use peregrine_conf::model::Config;

pub struct Watch {
    /// Each file read by the configuration and its text then.
    seen: Vec<(PathBuf, Option<Vec<u8>>)>,
    /// When to look next (`None`: `config_watch` is off).
    pub next: Option<Instant>,
}

impl Watch {
    pub fn new(conf: &Config) -> Watch {
        let mut w = Watch {
            seen: Vec::new(),
            next: None,
        };
        w.remember(conf);
        w
    }

    /// The files of `conf` as they are now, and the next look (after every
    /// reload, with the configuration then serving).
    pub fn remember(&mut self, conf: &Config) {
        self.seen = conf
            .files
            .iter()
            .map(|f| (f.path.clone(), std::fs::read(&f.path).ok()))
            .collect();
        self.next = conf.main.config_watch.map(|d| Instant::now() + d);
    }

    /// Whether it is time to look and a file changed since the last look
    /// (the caller reloads, which remembers the files again).
    pub fn changed(&mut self, conf: &Config) -> bool {
        if self.next.is_none_or(|t| t > Instant::now()) {
            return false;
        }
        let changed = self
            .seen
            .iter()
            .any(|(path, text)| std::fs::read(path).ok() != *text);
        self.next = conf.main.config_watch.map(|d| Instant::now() + d);
        changed
    }
}
