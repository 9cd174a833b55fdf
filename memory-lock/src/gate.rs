//! Reader/writer kernel locks on a lock file beside a small configuration file (PA-13,
//! PA-15): many holders of the shared side at once (every memory commit checking a switch),
//! one holder of the exclusive side (the process rewriting the switch), and the exclusive side
//! waits until every shared holder has let go.
//!
//! The lock file itself carries no data; it is created empty and private (0600) on first use
//! and never removed, so its inode is stable and the kernel lock (`flock`) always guards the
//! same file. A crashed holder's kernel lock dies with its process: there is nothing to
//! reclaim.

use std::fs::{File, OpenOptions, TryLockError};
use std::io;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// How often a waiter retries a busy gate.
const POLL: Duration = Duration::from_millis(5);

/// Which side of a [`Gate`] to hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GateMode {
    /// Many holders at once (readers, commits).
    Shared,
    /// One holder, no shared holders (writers).
    Exclusive,
}

/// A held side of the gate at `path`; released on drop.
#[derive(Debug)]
pub struct Gate {
    _file: File,
    path: PathBuf,
    mode: GateMode,
}

impl Gate {
    /// The lock file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The side held.
    pub fn mode(&self) -> GateMode {
        self.mode
    }
}

/// Takes `mode` on the lock file `path` (created empty, 0600, when missing; its parent
/// directory must exist), waiting at most `timeout`.
///
/// # Errors
/// The error of opening the file, or [`io::ErrorKind::TimedOut`] when the other side was
/// held for the whole `timeout`.
pub fn lock_gate(path: &Path, mode: GateMode, timeout: Duration) -> io::Result<Gate> {
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32)
        .open(path)?;
    let deadline = Instant::now() + timeout;
    loop {
        let tried = match mode {
            GateMode::Shared => file.try_lock_shared(),
            GateMode::Exclusive => file.try_lock(),
        };
        match tried {
            Ok(()) => {
                return Ok(Gate {
                    _file: file,
                    path: path.to_path_buf(),
                    mode,
                });
            }
            Err(TryLockError::WouldBlock) => {}
            Err(TryLockError::Error(e)) => return Err(e),
        }
        if Instant::now() >= deadline {
            return Err(io::Error::new(
                io::ErrorKind::TimedOut,
                format!(
                    "{} is held by another process (waited {} ms)",
                    path.display(),
                    timeout.as_millis()
                ),
            ));
        }
        std::thread::sleep(POLL);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shared_holders_coexist_and_exclude_the_writer() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.lock");
        let a = lock_gate(&path, GateMode::Shared, Duration::ZERO).unwrap();
        let b = lock_gate(&path, GateMode::Shared, Duration::ZERO).unwrap();
        let err = lock_gate(&path, GateMode::Exclusive, Duration::from_millis(20)).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::TimedOut);
        drop(a);
        drop(b);
        let w = lock_gate(&path, GateMode::Exclusive, Duration::ZERO).unwrap();
        assert_eq!(w.mode(), GateMode::Exclusive);
        let err = lock_gate(&path, GateMode::Shared, Duration::ZERO).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::TimedOut);
        drop(w);
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
    }

    #[test]
    fn a_symlinked_lock_file_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("elsewhere");
        std::fs::File::create(&target).unwrap();
        let path = dir.path().join("x.lock");
        std::os::unix::fs::symlink(&target, &path).unwrap();
        assert!(lock_gate(&path, GateMode::Shared, Duration::ZERO).is_err());
    }
}
