//! Per-worker memo of the head lines of whole-file 200 answers that are
//! sent from the file (files above the memory cache's `max_file`, or with
//! no memory cache): Content-Type, Content-Length, Last-Modified, ETag and
//! Accept-Ranges are a function of the location's settings, the URI's
//! extension and the file's size and mtime, and formatting them (a type
//! lookup, a date, three numbers) was a fifth of such a request's
//! user-space work.
//!
//! An entry is used only while the open file cache's answer for the same
//! path shows the same file (inode, device, size, mtime): the memo makes no
//! system call and adds no staleness of its own. Keys are paths of regular
//! files that opened, so requests cannot grow it with made-up paths; at
//! [`HEAD_MEMO_MAX`] entries it starts over.

use std::sync::Arc;

use peregrine_codec::fields::SharedFields;

use crate::fcache::FileInfo;
use crate::fxhash::FxHashMap;
use crate::mcache::Owner;

/// Entries kept per worker before the memo is cleared: a few hundred
/// bytes each, and a site's hot large files are far fewer.
pub(crate) const HEAD_MEMO_MAX: usize = 1024;

#[derive(Debug)]
struct Memo {
    conf_id: usize,
    exten: Box<str>,
    size: u64,
    mtime: i64,
    ino: u64,
    dev: u64,
    head: Arc<SharedFields>,
}

#[derive(Debug, Default)]
pub(crate) struct HeadMemo {
    map: FxHashMap<Box<str>, Memo>,
}

impl Memo {
    fn matches(&self, owner: &Owner<'_>, info: &FileInfo) -> bool {
        self.conf_id == owner.conf_id
            && self.exten.eq_ignore_ascii_case(owner.exten)
            && self.size == info.size
            && self.mtime == info.mtime
            && self.ino == info.ino
            && self.dev == info.dev
    }
}

impl HeadMemo {
    /// The head fields remembered for `path`, if they were made
    /// for this location, extension and file.
    pub(crate) fn get(
        &self,
        path: &str,
        owner: &Owner<'_>,
        info: &FileInfo,
    ) -> Option<Arc<SharedFields>> {
        let m = self.map.get(path)?;
        m.matches(owner, info).then(|| m.head.clone())
    }

    /// Remembers the head fields of `path`'s 200.
    pub(crate) fn put(
        &mut self,
        path: &str,
        owner: &Owner<'_>,
        info: &FileInfo,
        head: Arc<SharedFields>,
    ) {
        if self.map.len() >= HEAD_MEMO_MAX && !self.map.contains_key(path) {
            self.map.clear();
        }
        let memo = Memo {
            conf_id: owner.conf_id,
            exten: owner.exten.into(),
            size: info.size,
            mtime: info.mtime,
            ino: info.ino,
            dev: info.dev,
            head,
        };
        self.map.insert(path.into(), memo);
    }

    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.map.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn owner(conf_id: usize, exten: &str) -> Owner<'_> {
        Owner { conf_id, exten }
    }

    fn info(size: u64, mtime: i64, ino: u64) -> FileInfo {
        FileInfo {
            file: None,
            is_dir: false,
            is_file: true,
            size,
            mtime,
            ino,
            dev: 1,
        }
    }

    #[test]
    fn used_only_for_the_same_file_location_and_extension() {
        let mut m = HeadMemo::default();
        let own = owner(7, "html");
        let f = info(100, 5, 9);
        let mut h = peregrine_codec::fields::FieldList::new();
        h.push_first("H", "1");
        m.put("/www/a.html", &own, &f, Arc::new(SharedFields::new(h)));
        assert_eq!(
            m.get("/www/a.html", &own, &f).map(|h| h.list().split()),
            Some(1)
        );
        let upper = owner(7, "HTML");
        assert!(
            m.get("/www/a.html", &upper, &f).is_some(),
            "types ignore case"
        );
        for other in [info(101, 5, 9), info(100, 6, 9), info(100, 5, 10)] {
            assert!(m.get("/www/a.html", &own, &other).is_none(), "{other:?}");
        }
        let png = owner(7, "png");
        assert!(m.get("/www/a.html", &png, &f).is_none());
        let other_loc = owner(8, "html");
        assert!(m.get("/www/a.html", &other_loc, &f).is_none());
        assert!(m.get("/www/b.html", &own, &f).is_none());
    }

    #[test]
    fn bounded() {
        let mut m = HeadMemo::default();
        let own = owner(1, "");
        for i in 0..HEAD_MEMO_MAX * 3 {
            m.put(
                &format!("/f{i}"),
                &own,
                &info(1, 1, 1),
                Arc::new(SharedFields::default()),
            );
            assert!(m.len() <= HEAD_MEMO_MAX);
        }
    }
}
