//! Locks, durable writes and snapshots for a memory directory — the only crate that makes
//! locking and durable-write system calls (PM-44..PM-55).
//!
//! A write to a memory directory goes through four layers, outermost first:
//!
//! 1. [`lock_logical`] → [`LogicalGuard`]: the in-process lock of the directory, a FIFO
//!    queue with a timed wait (`lock.timeoutMs`). It carries the *logical* scope — one
//!    primitive call, or a whole dream round — so that long scopes never hold a file lock.
//!    Busy: `Memory operations for <dir>/MEMORY.md are already running in this process
//!    (waited 5000ms)` (PM-48). [`try_lock_logical`] never waits (the extractor's skip).
//! 2. [`acquire`] → [`FileLockGuard`]: the cross-process `<dir>/.lock` holding the JSON
//!    [`Holder`] record, held only for the milliseconds of the physical write, with
//!    pi-memory's exact error texts (PM-45..PM-47). The central type of the crate.
//! 3. [`snapshot_files`] / [`snapshot_all`]: the files about to change, hard-linked (copied
//!    where links are impossible) under `.backups/<stamp>-<label>/`, with retention
//!    (PM-52..PM-55). A failed snapshot is an error and the caller aborts its write.
//! 4. [`atomic_write`] / [`remove_file`] / [`move_file`]: temp file in the same directory,
//!    `fsync`, `rename`, directory `fsync`; moves never replace (`renameat2(NOREPLACE)`);
//!    transient errors retried by [`retry_transient`] (PM-50).
//!
//! Beside them, [`AliveMark`]: a file a process keeps kernel-locked for its whole life, so
//! that others can prove it dead (the run log's writers, PX-08).
//!
//! And [`lock_gate`] → [`Gate`]: a reader/writer kernel lock on a lock file next to
//! a small configuration file (the memory switch, PA-13): commits hold its shared side while
//! they check the switch and write, the process rewriting the switch holds the exclusive side.
//!
//! # Key decisions
//! - **Dead holders are reclaimed, safely.** pi-memory never reclaims a stale `.lock`
//!   because a "check then remove" takeover cannot be made safe with paths alone. Here the
//!   holder also keeps a kernel lock (`File::lock`, `flock`) on the `.lock` descriptor for
//!   its whole hold, and a contender removes a record only while holding that same kernel
//!   lock, after checking that the path still names that inode and the record's pid is
//!   dead on this host. A crash therefore no longer blocks writes until a human runs
//!   `/memory unlock`; a live holder, or any holder on another host, keeps the original hard
//!   exclusion and texts. [`LockOptions::reclaim_dead`] (`lock.reclaimDead`, default on)
//!   switches the reclaim off. The protocol and its proof are in [`file_lock`].
//! - **`.lock` is born complete.** The record is written into a private, kernel-locked temp
//!   file which is then hard-linked to `.lock` (`link(2)` is as exclusive as `O_EXCL`), so a
//!   crash never leaves the 0-byte lock PM-47 would make a human remove. Long-lived
//!   processes reuse that record file ([`enable_lock_slots`]): one inode creation fewer per
//!   write.
//! - **Snapshots are hard links.** Every write replaces files by `rename`, so the snapshot's
//!   inode is never written again: a rollback point costs a directory entry, not a copy.
//! - **Private by default.** Directories are created 0700, files 0600 (umask still
//!   narrows further). [`atomic_write`] leaves its target 0600 whatever its old mode was.
//! - **Errors unchanged.** [`retry_transient`] returns the last original error, never a
//!   wrapper (PM-50); lock and snapshot errors carry the path they are about.
//! - **The logical lock is FIFO**, like pi-memory's promise queue, so concurrent writers of
//!   one process land in arrival order and a timed-out waiter does not stall the queue.
//!
//! # Example
//! ```
//! use std::time::Duration;
//! use memory_lock::{LockOptions, acquire, atomic_write, lock_logical, snapshot_files};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let tmp = tempfile::tempdir()?;
//! let dir = tmp.path();
//! atomic_write(&dir.join("MEMORY.md"), b"# Memory Index\n")?;
//!
//! let _logical = lock_logical(dir, Duration::from_millis(5000))?;
//! let file_lock = acquire(dir, "add", &LockOptions::default())?;
//! assert!(file_lock.reclaimed().is_none());
//! let now: jiff::Timestamp = "2026-10-01T00:00:01Z".parse()?;
//! let snap = snapshot_files(dir, "write", &["MEMORY.md", "a.md"], 5, now)?;
//! assert!(snap.ends_with(".backups/2026-10-01T00-00-01-000Z-write"));
//! atomic_write(&dir.join("a.md"), b"---\nname: a\n---\nbody\n")?;
//! atomic_write(&dir.join("MEMORY.md"), b"# Memory Index\n\n- [a](a.md) \xe2\x80\x94 a\n")?;
//! drop(file_lock);
//! assert!(!dir.join(".lock").exists());
//! # Ok(())
//! # }
//! ```
//!
//! # Limitations
//! - Unix only (file modes, inode identity, `O_NOFOLLOW`). Windows would need its own
//!   identity check and share modes.
//! - Other hosts: hosts are told apart by hostname. A holder on another host is never
//!   reclaimed (its liveness cannot be checked), so a crash there still needs
//!   `/memory unlock`. On NFS and similar, `flock` may be emulated or client-local: keep
//!   `lock.reclaimDead` off there and rely on `O_EXCL` creation as the original did.
//! - Records written by the TypeScript pi-memory carry no kernel lock, so a live one in
//!   another pid namespace with the same hostname would be reclaimed; see [`file_lock`].
//! - Pid reuse: if the dead holder's pid now belongs to another process, the record looks
//!   live and blocks until removed by hand (the original behaviour). A zombie counts as
//!   alive.
//! - A 0-byte `.lock` (left by another implementation, or on a file system without hard
//!   links) is never reclaimed (PM-47).
//! - A crash inside [`atomic_write`] leaves the target intact but may leave its hidden temp
//!   file (`.<name>.<pid>.<n>.tmp`); [`clean_stale_temps`] removes those of dead processes
//!   once they are a minute old (memory-core calls it after a reclaim, the sidecar at
//!   session start).
//! - Snapshot directory entries are not `fsync`ed: after a power cut the newest rollback
//!   point may be missing (the memory files themselves are durable).
//! - The logical lock is keyed by the lexical absolute path: two spellings of one directory
//!   through a symlink are two locks (the `.lock` file still excludes their writes).
//! - The logical lock is not re-entrant; asking again on the same thread times out.
#![forbid(unsafe_code)]
// This crate owns durable writes, renames and kernel locks (clippy.toml).
#![allow(clippy::disallowed_methods)]
#![cfg(unix)]

pub mod alive;
pub mod durable;
pub mod file_lock;
pub mod gate;
pub mod logical;
pub mod snapshot;

pub use alive::*;
pub use durable::*;
pub use file_lock::*;
pub use gate::*;
pub use logical::*;
pub use snapshot::*;
