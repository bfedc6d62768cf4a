//! Real temporary directories for tests (no mocks): unique per test and
//! process, removed on drop.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

static COUNTER: AtomicU64 = AtomicU64::new(0);

pub(crate) struct TestDir {
    root: PathBuf,
}

impl TestDir {
    pub(crate) fn new(name: &str) -> TestDir {
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let root =
            std::env::temp_dir().join(format!("peregrine-core-{name}-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(&root).expect("create test dir");
        TestDir { root }
    }

    pub(crate) fn root(&self) -> &str {
        self.root.to_str().expect("utf-8 temp dir")
    }

    pub(crate) fn path(&self, rel: &str) -> String {
        format!("{}/{rel}", self.root())
    }

    /// Writes a file (creating parent directories); returns its path.
    pub(crate) fn file(&self, rel: &str, content: &[u8]) -> String {
        let p = self.path(rel);
        if let Some(parent) = Path::new(&p).parent() {
            std::fs::create_dir_all(parent).expect("create parent");
        }
        std::fs::write(&p, content).expect("write test file");
        p
    }

    pub(crate) fn dir(&self, rel: &str) -> String {
        let p = self.path(rel);
        std::fs::create_dir_all(&p).expect("create dir");
        p
    }
}

impl Drop for TestDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.root);
    }
}
