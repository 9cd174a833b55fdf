//! [`Store::hold`]: the store's locks held for a writer outside the store (`pimem sync`, which
//! lets git rewrite memory files and must not see or cause a half-done write).

use memory_lock::{FileLockGuard, LogicalGuard, acquire, lock_logical};

use super::Store;
use crate::error::StoreError;

/// Both locks of one memory directory, held until dropped: no write of this process
/// (logical lock) or another one (`.lock`) runs meanwhile.
#[must_use = "the locks are released as soon as the hold is dropped"]
#[derive(Debug)]
pub struct DirHold {
    // Field order is drop order: `.lock` first, then the logical lock (the reverse of taking).
    _file: FileLockGuard,
    _logical: LogicalGuard,
}

impl Store {
    /// Takes the logical lock and `.lock` of an existing memory directory the way every write
    /// does (waiting up to the lock timeout, reclaiming dead holders), for `op` (the holder
    /// record's operation). The directory is not created.
    pub fn hold(&self, op: &str) -> Result<DirHold, StoreError> {
        let logical = lock_logical(self.dir.as_std_path(), self.opts.lock_timeout)?;
        let file = acquire(self.dir.as_std_path(), op, &self.lock_options())?;
        Ok(DirHold {
            _file: file,
            _logical: logical,
        })
    }
}
