//! Fixtures shared by the store's integration tests.
#![allow(dead_code, clippy::unwrap_used)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;

use jiff::Timestamp;
use memory_core::{Clock, Store, StoreOptions};

/// A clock that starts at 2026-10-01T00:00:01Z and advances one second per reading, so
/// `modified` values and snapshot names are deterministic and strictly increasing.
pub fn stepping_clock() -> Clock {
    let start: Timestamp = "2026-10-01T00:00:01Z".parse().unwrap();
    let n = Arc::new(AtomicI64::new(0));
    Clock::from_fn(move || {
        let i = n.fetch_add(1, Ordering::SeqCst);
        start
            .checked_add(jiff::SignedDuration::from_secs(i))
            .unwrap()
    })
}

pub fn options() -> StoreOptions {
    StoreOptions {
        lock_timeout: Duration::from_millis(300),
        clock: stepping_clock(),
        ..StoreOptions::default()
    }
}

pub struct Fixture {
    pub tmp: tempfile::TempDir,
    pub store: Store,
}

impl Fixture {
    pub fn new() -> Self {
        Self::with(options())
    }

    pub fn with(opts: StoreOptions) -> Self {
        let tmp = tempfile::tempdir().unwrap();
        let store = Store::new(tmp.path().join("mem"), opts);
        Fixture { tmp, store }
    }

    pub fn dir(&self) -> PathBuf {
        self.store.dir().to_path_buf()
    }

    pub fn write(&self, file: &str, text: &str) {
        std::fs::create_dir_all(self.dir()).unwrap();
        std::fs::write(self.dir().join(file), text).unwrap();
    }

    pub fn read(&self, file: &str) -> String {
        std::fs::read_to_string(self.dir().join(file)).unwrap()
    }

    pub fn exists(&self, file: &str) -> bool {
        self.dir().join(file).exists()
    }

    pub fn index(&self) -> String {
        std::fs::read_to_string(self.dir().join("MEMORY.md")).unwrap_or_default()
    }

    /// Every file under the memory directory (recursively) with its bytes.
    pub fn tree(&self) -> BTreeMap<String, Vec<u8>> {
        tree(&self.dir())
    }
}

pub fn tree(root: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, Vec<u8>>) {
        let Ok(rd) = std::fs::read_dir(dir) else {
            return;
        };
        for e in rd {
            let e = e.unwrap();
            let path = e.path();
            let rel = path
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            let ft = e.file_type().unwrap();
            if ft.is_dir() {
                out.insert(format!("{rel}/"), Vec::new());
                walk(root, &path, out);
            } else if ft.is_file() {
                out.insert(rel, std::fs::read(&path).unwrap());
            } else {
                out.insert(format!("{rel}@"), Vec::new());
            }
        }
    }
    walk(root, root, &mut out);
    out
}

/// An entry file in pi-memory's format.
pub fn entry_text(name: &str, description: &str, ty: &str, modified: &str, body: &str) -> String {
    format!(
        "---\nname: {name}\ndescription: {description}\ntype: {ty}\ncreated: 2026-10-01\nmodified: {modified}\n---\n\n{body}\n"
    )
}
