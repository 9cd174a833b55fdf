//! Fixtures shared by the store's integration tests (the rest lives in `testkit`).
#![allow(dead_code, clippy::unwrap_used)]

use std::collections::BTreeMap;
use std::time::Duration;

use camino::Utf8PathBuf;
use memory_core::{Store, StoreOptions};
pub use testkit::{entry_text, stepping_clock, tree};

pub fn options() -> StoreOptions {
    StoreOptions {
        lock_timeout: Duration::from_millis(300),
        clock: stepping_clock(),
        ..StoreOptions::default()
    }
}

/// A store over `<sandbox>/mem`.
pub struct Fixture {
    pub sb: testkit::Sandbox,
    pub store: Store,
}

impl Fixture {
    pub fn new() -> Self {
        Self::with(options())
    }

    pub fn with(opts: StoreOptions) -> Self {
        let sb = testkit::Sandbox::new();
        let store = Store::new(sb.path("mem"), opts);
        Fixture { sb, store }
    }

    pub fn dir(&self) -> Utf8PathBuf {
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
        tree(self.dir().as_std_path())
    }
}
