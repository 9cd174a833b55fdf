//! Liveness marks: a file a process keeps a kernel lock on for as long as it lives, so that
//! another process can *prove* it dead (the lock is free) instead of guessing from a pid that
//! may have been reused.
//!
//! The run log (`memory-runlog`) gives every recording process one mark; a run whose writer's
//! mark is no longer held was left behind by a dead writer (PX-08). The kernel drops an
//! `flock` when the last descriptor of its holder closes, which includes `SIGKILL`, so a
//! crashed holder can never leave its mark "held".
//!
//! ```
//! use memory_lock::{AliveMark, alive_mark_held};
//! let tmp = tempfile::tempdir()?;
//! let path = tmp.path().join("writer-1.alive");
//! let mark = AliveMark::hold(&path)?;
//! assert!(alive_mark_held(&path)?);      // another descriptor cannot lock it
//! mark.release()?;                       // a clean exit removes the mark
//! assert!(!alive_mark_held(&path)?);     // missing: nobody holds it
//! # Ok::<(), std::io::Error>(())
//! ```

use std::fs::{File, OpenOptions, TryLockError};
use std::io;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use crate::durable::{ensure_private_dir, remove_file};

/// A held liveness mark: the kernel lock lasts as long as this value (or the process).
#[derive(Debug)]
pub struct AliveMark {
    file: Option<File>,
    path: PathBuf,
}

impl AliveMark {
    /// Creates (or reuses) the mark file at `path`, its directory private, and locks it
    /// exclusively. Fails with `WouldBlock` when another live process holds it.
    pub fn hold(path: &Path) -> io::Result<AliveMark> {
        if let Some(dir) = path.parent() {
            ensure_private_dir(dir)?;
        }
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o600)
            .open(path)?;
        match file.try_lock() {
            Ok(()) => Ok(AliveMark {
                file: Some(file),
                path: path.to_owned(),
            }),
            Err(TryLockError::WouldBlock) => Err(io::Error::new(
                io::ErrorKind::WouldBlock,
                format!("{} is held by a live process", path.display()),
            )),
            Err(TryLockError::Error(e)) => Err(e),
        }
    }

    /// The mark's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Removes the mark file, then drops the kernel lock (a clean exit).
    pub fn release(mut self) -> io::Result<()> {
        let removed = remove_file(&self.path).map(|_| ());
        self.file = None;
        removed
    }
}

/// Whether a live process holds the mark at `path`. `Ok(false)` when the file is missing or
/// its lock could be taken (and was let go at once): its holder is dead. Errors other than
/// "missing" are returned, so an unreadable mark is never taken for a dead one.
pub fn alive_mark_held(path: &Path) -> io::Result<bool> {
    // Read-write: emulated `flock` (NFS) needs a writable descriptor for an exclusive lock.
    let file = match OpenOptions::new().read(true).write(true).open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(false),
        Err(e) => return Err(e),
    };
    match file.try_lock() {
        Ok(()) => Ok(false),
        Err(TryLockError::WouldBlock) => Ok(true),
        Err(TryLockError::Error(e)) => Err(e),
    }
}

/// Removes the mark of a dead holder (`Ok(false)` when it was held after all, or missing).
/// The file is removed while this process holds its lock, so a holder that (re)created it
/// meanwhile is never robbed of a live mark.
pub fn remove_dead_mark(path: &Path) -> io::Result<bool> {
    let file = match OpenOptions::new().read(true).write(true).open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(false),
        Err(e) => return Err(e),
    };
    match file.try_lock() {
        Ok(()) => {}
        Err(TryLockError::WouldBlock) => return Ok(false),
        Err(TryLockError::Error(e)) => return Err(e),
    }
    let removed = remove_file(path)?;
    drop(file);
    Ok(removed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_held_mark_is_seen_and_a_dropped_one_is_not() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("marks").join("w.alive");
        assert!(!alive_mark_held(&path).unwrap());
        let mark = AliveMark::hold(&path).unwrap();
        assert!(alive_mark_held(&path).unwrap());
        assert_eq!(
            AliveMark::hold(&path).unwrap_err().kind(),
            io::ErrorKind::WouldBlock
        );
        assert!(!remove_dead_mark(&path).unwrap());
        drop(mark); // a crash: the file stays, the lock goes
        assert!(path.exists());
        assert!(!alive_mark_held(&path).unwrap());
        assert!(remove_dead_mark(&path).unwrap());
        assert!(!path.exists());
    }
}
