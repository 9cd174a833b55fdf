//! Rounds (one holder of the logical lock for many writes) and [`Target`] (where a write
//! goes: standalone, or inside a round).

use std::sync::Arc;

use camino::Utf8PathBuf;
use memory_lock::{LogicalGuard, acquire, ensure_private_dir, snapshot_all};

use super::Store;
use super::types::{
    AddRequest, RebuildOutcome, RemoveOutcome, ReplaceRequest, StoredEntry, Version, WriteOutcome,
};
use super::write::{Mode, STANDALONE};
use crate::error::StoreError;

/// A whole-round holder of the logical lock (dream, extraction).
///
/// Writes through a round skip the logical lock (the round holds it) and, after
/// [`Round::snapshot_all`], skip per-write snapshots (one round, one rollback point, PM-55).
///
/// A round never hands out its [`Store`]: while a round is alive, a write through the store
/// would wait for this very round (and time out after `lock_timeout`). Its reads and writes go
/// through [`Round::target`].
pub struct Round<'s> {
    store: &'s Store,
    _guard: LogicalGuard,
    skip_snapshots: bool,
}

impl std::fmt::Debug for Round<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Round")
            .field("dir", &self.store.dir)
            .field("skip_snapshots", &self.skip_snapshots)
            .finish()
    }
}

impl<'s> Round<'s> {
    pub(super) fn new(store: &'s Store, guard: LogicalGuard) -> Self {
        Round {
            store,
            _guard: guard,
            skip_snapshots: false,
        }
    }

    fn mode(&self) -> Mode {
        Mode {
            logical_held: true,
            skip_snapshot: self.skip_snapshots,
        }
    }

    /// Snapshots every top-level non-dot regular file under `.backups/<ts>-<label>/` while
    /// holding `.lock`, and makes later writes of this round skip their own snapshots.
    pub fn snapshot_all(&mut self, label: &str) -> Result<Utf8PathBuf, StoreError> {
        let store = self.store;
        let dir = store.dir.as_std_path();
        ensure_private_dir(dir).map_err(|e| StoreError::io("creating", &store.dir, e))?;
        let _guard = acquire(dir, label, &store.lock_options())?;
        let path = snapshot_all(dir, label, store.opts.snapshot_keep, store.opts.clock.now())?;
        let path = Utf8PathBuf::from_path_buf(path).map_err(|p| {
            StoreError::io(
                "snapshotting",
                store.dir.clone(),
                std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    format!("snapshot path is not UTF-8: {}", p.display()),
                ),
            )
        })?;
        self.skip_snapshots = true;
        Ok(path)
    }

    /// Where this round's reads and writes go (`Target::Round(self)`).
    pub fn target(&self) -> Target<'_, 's> {
        Target::Round(self)
    }
}

/// Where writes go: directly to a store (each write takes the logical lock), or inside a
/// held [`Round`]. Reads go to the store either way.
#[derive(Debug, Clone, Copy)]
pub enum Target<'a, 's> {
    /// Standalone writes.
    Store(&'a Store),
    /// Writes inside a round (dream, extraction).
    Round(&'a Round<'s>),
}

impl<'a> Target<'a, '_> {
    fn parts(&self) -> (&'a Store, Mode) {
        match *self {
            Target::Store(s) => (s, STANDALONE),
            Target::Round(r) => (r.store, r.mode()),
        }
    }

    /// The memory directory.
    pub fn dir(&self) -> &'a camino::Utf8Path {
        self.parts().0.dir()
    }

    /// The store's options (clock, limits).
    pub fn options(&self) -> &'a crate::StoreOptions {
        self.parts().0.options()
    }

    /// [`Store::list`].
    pub fn list(&self) -> Result<Vec<Arc<StoredEntry>>, StoreError> {
        self.parts().0.list()
    }

    /// [`Store::read`].
    pub fn read(&self, reference: &str) -> Result<Option<Arc<StoredEntry>>, StoreError> {
        self.parts().0.read(reference)
    }

    /// [`Store::search`].
    pub fn search(&self, query: &str) -> Result<Vec<Arc<StoredEntry>>, StoreError> {
        self.parts().0.search(query)
    }

    /// [`Store::add`].
    pub fn add(&self, req: AddRequest) -> Result<WriteOutcome, StoreError> {
        let (store, mode) = self.parts();
        store.add_in(req, mode)
    }

    /// [`Store::replace`].
    pub fn replace(&self, req: ReplaceRequest) -> Result<WriteOutcome, StoreError> {
        let (store, mode) = self.parts();
        store.replace_in(req, mode)
    }

    /// [`Store::rename`].
    pub fn rename(
        &self,
        reference: &str,
        new_name: &str,
        expected_version: Option<&Version>,
    ) -> Result<WriteOutcome, StoreError> {
        let (store, mode) = self.parts();
        store.rename_in(reference, new_name, expected_version, mode)
    }

    /// [`Store::remove`].
    pub fn remove(
        &self,
        reference: &str,
        expected_version: Option<&Version>,
    ) -> Result<RemoveOutcome, StoreError> {
        let (store, mode) = self.parts();
        store.remove_in(reference, expected_version, mode)
    }

    /// [`Store::rebuild_index`].
    pub fn rebuild_index(&self) -> Result<RebuildOutcome, StoreError> {
        let (store, mode) = self.parts();
        store.rebuild_in(mode)
    }
}
