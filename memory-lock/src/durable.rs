//! Durable, private file writes: atomic replace, tolerant removal, private directories and
//! the transient-error retry of PM-50.
//!
//! Every byte that lands in a memory directory goes through [`atomic_write`]: a temp file in
//! the same directory (mode 0600, hidden name `.<target>.<pid>.<n>.tmp`), `write`, `fsync`,
//! `rename` over the target, then `fsync` of the directory. A reader therefore sees the old
//! content or the new content, never a torn mix, and after `atomic_write` returns the new
//! content survives a power cut (on file systems that honour `fsync`).

use std::fs::{self, DirBuilder, File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use rustix::io::Errno;

/// Mode of every file this crate creates (owner read/write only).
pub const FILE_MODE: u32 = 0o600;
/// Mode of every directory this crate creates (owner only).
pub const DIR_MODE: u32 = 0o700;

/// Which platform's transient-error set applies (PM-50).
///
/// `EBUSY EMFILE ENFILE ENOTEMPTY` are transient everywhere; `EPERM`/`EACCES` only on
/// Windows, where virus scanners and indexers raise them briefly. On POSIX they are permanent
/// permission errors, and retrying them would only delay the fail-closed answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Platform {
    /// Linux, macOS and other Unix systems.
    Posix,
    /// Windows (classification only; this crate itself builds for Unix).
    Windows,
}

impl Platform {
    /// The platform this binary runs on.
    pub const CURRENT: Platform = if cfg!(windows) {
        Platform::Windows
    } else {
        Platform::Posix
    };
}

/// Whether `err` is a transient file-system error on `platform` (PM-50, vector M16).
///
/// Classified by errno (`raw_os_error`) and, for errors built without one, by
/// [`io::ErrorKind`]: `ResourceBusy` (EBUSY), `DirectoryNotEmpty` (ENOTEMPTY) and, on Windows
/// only, `PermissionDenied` (EPERM/EACCES).
pub fn is_transient_on(err: &io::Error, platform: Platform) -> bool {
    if let Some(raw) = err.raw_os_error() {
        let errno = Errno::from_raw_os_error(raw);
        if [Errno::BUSY, Errno::MFILE, Errno::NFILE, Errno::NOTEMPTY].contains(&errno) {
            return true;
        }
        if platform == Platform::Windows && [Errno::PERM, Errno::ACCESS].contains(&errno) {
            return true;
        }
    }
    match err.kind() {
        io::ErrorKind::ResourceBusy | io::ErrorKind::DirectoryNotEmpty => true,
        io::ErrorKind::PermissionDenied => platform == Platform::Windows,
        _ => false,
    }
}

/// [`is_transient_on`] for the current platform.
pub fn is_transient(err: &io::Error) -> bool {
    is_transient_on(err, Platform::CURRENT)
}

/// Backoff of [`retry_transient`]: `retries` extra attempts after the first, waiting
/// `min(max_delay, base_delay * 2^attempt)` before each.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Extra attempts after the first call (6).
    pub retries: u32,
    /// First wait (20 ms); doubled per attempt.
    pub base_delay: Duration,
    /// Cap of a single wait (300 ms).
    pub max_delay: Duration,
    /// Which transient set applies.
    pub platform: Platform,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            retries: 6,
            base_delay: Duration::from_millis(20),
            max_delay: Duration::from_millis(300),
            platform: Platform::CURRENT,
        }
    }
}

impl RetryPolicy {
    /// The wait before retry number `attempt + 1` (0-based): 20, 40, 80, 160, 300, 300 ms
    /// with the defaults.
    pub fn delay(&self, attempt: u32) -> Duration {
        let factor = 1u32.checked_shl(attempt).unwrap_or(u32::MAX);
        self.base_delay
            .checked_mul(factor)
            .unwrap_or(self.max_delay)
            .min(self.max_delay)
    }
}

/// Runs `f` until it succeeds, fails with a non-transient error, or the retry budget is
/// spent (PM-50). The last error is returned unchanged, never wrapped.
pub fn retry_transient<T>(f: impl FnMut() -> io::Result<T>) -> io::Result<T> {
    retry_with(&RetryPolicy::default(), std::thread::sleep, f)
}

/// [`retry_transient`] with an explicit policy and sleep function (a test seam).
pub fn retry_with<T>(
    policy: &RetryPolicy,
    mut sleep: impl FnMut(Duration),
    mut f: impl FnMut() -> io::Result<T>,
) -> io::Result<T> {
    let mut attempt = 0u32;
    loop {
        match f() {
            Ok(value) => return Ok(value),
            Err(err) => {
                if attempt >= policy.retries || !is_transient_on(&err, policy.platform) {
                    return Err(err);
                }
                sleep(policy.delay(attempt));
                attempt += 1;
            }
        }
    }
}

/// Creates `path` and any missing parents with mode 0700 (umask still applies); existing
/// directories keep their mode. Fails if `path` exists and is not a directory.
pub fn ensure_private_dir(path: &Path) -> io::Result<()> {
    // The common case (it exists) costs one stat instead of a failing mkdir.
    if fs::metadata(path).is_ok_and(|m| m.is_dir()) {
        return Ok(());
    }
    retry_transient(|| {
        DirBuilder::new()
            .recursive(true)
            .mode(DIR_MODE)
            .create(path)
    })?;
    if fs::metadata(path)?.is_dir() {
        Ok(())
    } else {
        Err(io::Error::new(
            io::ErrorKind::NotADirectory,
            format!("{} is not a directory", path.display()),
        ))
    }
}

/// Directory that contains `path` (`.` for a bare file name).
pub(crate) fn parent_dir(path: &Path) -> &Path {
    match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    }
}

/// `fsync` on a directory, so that a rename or unlink inside it is durable.
pub fn sync_dir(dir: &Path) -> io::Result<()> {
    File::open(dir)?.sync_all()
}

static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// A fresh temp-file path next to `target`: `.<name>.<pid>.<n>.tmp`. Dot-prefixed so that
/// listings of entries and whole-directory snapshots skip it.
pub(crate) fn temp_path_for(target: &Path) -> PathBuf {
    let n = TEMP_COUNTER.fetch_add(1, Ordering::Relaxed);
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    parent_dir(target).join(format!(".{name}.{}.{n}.tmp", std::process::id()))
}

/// Creates a new private file (`O_CREAT|O_EXCL`, mode 0600; never follows a symlink), open
/// for reading and writing.
pub(crate) fn create_private(path: &Path) -> io::Result<File> {
    OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .mode(FILE_MODE)
        .open(path)
}

/// Replaces `path` with `bytes` atomically and durably.
///
/// Temp file in the same directory (0600), write, `fsync`, `rename` over the target, `fsync`
/// of the directory. On any failure the temp file is removed and the target is untouched.
/// The target ends up with mode 0600 even if it had another mode before; a symlink at
/// `path` is replaced by a regular file (the link target is not written through).
pub fn atomic_write(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let dir = parent_dir(path);
    let (temp, mut file) = retry_transient(|| {
        let temp = temp_path_for(path);
        create_private(&temp).map(|file| (temp, file))
    })?;
    let result = (|| {
        file.write_all(bytes)?;
        file.sync_all()?;
        drop(file);
        retry_transient(|| fs::rename(&temp, path))
    })();
    if let Err(err) = result {
        let _ = fs::remove_file(&temp);
        return Err(err);
    }
    retry_transient(|| sync_dir(dir))
}

/// Removes `path` (a file or symlink, never a directory's contents) and `fsync`s its
/// directory. `Ok(false)` when it did not exist (`ENOENT` tolerated, PM-37); other errors,
/// after the transient retries, are returned unchanged.
pub fn remove_file(path: &Path) -> io::Result<bool> {
    match retry_transient(|| fs::remove_file(path)) {
        Ok(()) => {
            retry_transient(|| sync_dir(parent_dir(path)))?;
            Ok(true)
        }
        Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(false),
        Err(err) => Err(err),
    }
}

/// Temp files younger than this are never cleaned: a writer on another host sharing the
/// directory may still be using one whose pid happens to be dead here.
const STALE_TEMP_AGE: Duration = Duration::from_secs(60);

/// Whether `name` is one of our temp files (`.<name>.<pid>.<n>.tmp`); returns the pid.
pub fn temp_file_pid(name: &str) -> Option<u32> {
    let inner = name.strip_prefix('.')?.strip_suffix(".tmp")?;
    let mut parts = inner.rsplitn(3, '.');
    let n = parts.next()?;
    let pid = parts.next()?;
    parts.next().filter(|stem| !stem.is_empty())?;
    if n.is_empty() || !n.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    pid.parse().ok()
}

/// Removes temp files left in `dir` by crashed writers of this host (pid dead, older than a
/// minute). Returns how many were removed. Never follows symlinks; errors on single files
/// are ignored (the file is simply left for the next attempt).
pub fn clean_stale_temps(dir: &Path) -> io::Result<usize> {
    let mut removed = 0;
    for dirent in fs::read_dir(dir)? {
        let Ok(dirent) = dirent else { continue };
        let name = dirent.file_name();
        let Some(pid) = name.to_str().and_then(temp_file_pid) else {
            continue;
        };
        let Ok(meta) = dirent.metadata() else {
            continue;
        };
        let old = meta
            .modified()
            .ok()
            .and_then(|m| m.elapsed().ok())
            .is_some_and(|age| age >= STALE_TEMP_AGE);
        if meta.file_type().is_file()
            && old
            && !crate::file_lock::pid_alive(pid)
            && fs::remove_file(dirent.path()).is_ok()
        {
            removed += 1;
        }
    }
    Ok(removed)
}

#[cfg(test)]
mod temp_tests {
    use super::*;

    #[test]
    fn temp_names_parse_back_to_their_pid() {
        let path = temp_path_for(Path::new("/x/MEMORY.md"));
        let name = path.file_name().unwrap().to_str().unwrap();
        assert_eq!(temp_file_pid(name), Some(std::process::id()));
        assert_eq!(temp_file_pid(".lock.123.4.tmp"), Some(123));
        for not_temp in [
            "a.md",
            ".lock",
            ".x.tmp",
            ".x.12.tmp",
            "..1.2.tmp",
            ".x.1.a.tmp",
            "x.1.2.tmp",
        ] {
            assert_eq!(temp_file_pid(not_temp), None, "{not_temp}");
        }
    }

    #[test]
    fn only_old_temps_of_dead_pids_are_cleaned() {
        let dir = tempfile::tempdir().unwrap();
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let dead = child.id();
        child.wait().unwrap();
        let old = std::time::SystemTime::now() - Duration::from_secs(120);
        let mk = |name: &str, mtime: std::time::SystemTime| {
            let p = dir.path().join(name);
            fs::write(&p, "x").unwrap();
            File::options()
                .write(true)
                .open(&p)
                .unwrap()
                .set_modified(mtime)
                .unwrap();
        };
        mk(&format!(".MEMORY.md.{dead}.0.tmp"), old);
        mk(&format!(".a.md.{dead}.1.tmp"), std::time::SystemTime::now());
        mk(&format!(".b.md.{}.2.tmp", std::process::id()), old);
        mk("c.md", old);
        assert_eq!(clean_stale_temps(dir.path()).unwrap(), 1);
        let mut left: Vec<_> = fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        left.sort();
        assert_eq!(left.len(), 3);
        assert!(!left.iter().any(|n| n.starts_with(".MEMORY.md")));
    }
}

/// Moves `from` to `to` in one atomic step, refusing to replace an existing `to`
/// (`renameat2(RENAME_NOREPLACE)`; where the file system lacks it, a plain `rename` after an
/// existence check), then `fsync`s the directory. A crash leaves the file under exactly one
/// of the two names, never both and never neither.
pub fn move_file(from: &Path, to: &Path) -> io::Result<()> {
    use rustix::fs::{CWD, RenameFlags, renameat_with};
    let result = retry_transient(|| {
        renameat_with(CWD, from, CWD, to, RenameFlags::NOREPLACE).map_err(io::Error::from)
    });
    match result {
        Ok(()) => {}
        Err(err)
            if matches!(
                Errno::from_io_error(&err),
                Some(Errno::INVAL | Errno::NOSYS | Errno::OPNOTSUPP)
            ) =>
        {
            if fs::symlink_metadata(to).is_ok() {
                return Err(io::Error::new(
                    io::ErrorKind::AlreadyExists,
                    format!("{} already exists", to.display()),
                ));
            }
            retry_transient(|| fs::rename(from, to))?;
        }
        Err(err) => return Err(err),
    }
    retry_transient(|| sync_dir(parent_dir(to)))
}

#[cfg(test)]
mod move_tests {
    use super::*;

    #[test]
    fn move_file_never_replaces() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a.md");
        let b = dir.path().join("b.md");
        fs::write(&a, "a").unwrap();
        fs::write(&b, "b").unwrap();
        let err = move_file(&a, &b).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::AlreadyExists);
        assert_eq!(fs::read_to_string(&b).unwrap(), "b");
        fs::remove_file(&b).unwrap();
        move_file(&a, &b).unwrap();
        assert!(!a.exists());
        assert_eq!(fs::read_to_string(&b).unwrap(), "a");
    }
}
