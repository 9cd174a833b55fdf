//! Locks, durable writes and snapshots for a memory directory.
//!
//! Not built yet (issue 3). This crate will own the in-process logical lock, the
//! cross-process `.lock` file, atomic file replacement and `.backups/` snapshots.
#![forbid(unsafe_code)]
