//! Rollback points under `<dir>/.backups/` (PM-52..PM-55, vectors N1..N12).
//!
//! A snapshot is a flat directory `<stamp>-<label>` (`2026-10-01T00-00-01-000Z-write`: the
//! ISO time with `:` and `.` turned into `-`, so name order is time order), holding copies of
//! the files a write is about to touch, by basename. A name already taken gets `-2`, `-3`, …
//! After each snapshot the newest `keep` directories by name are kept; `migrate-*`
//! directories (whole-directory snapshots of a 1.x migration) are never pruned.
//!
//! Snapshots **hard-link** the current files instead of copying them. Every write of this
//! workspace replaces a file by `rename` (a new inode), so the linked inode is never written
//! again: the snapshot keeps the old bytes at the cost of a directory entry, and no data is
//! copied or synced (this is what keeps a write within 2x of its raw atomic writes). Where
//! hard links are impossible (another file system, `EPERM`), the file is copied to a private
//! 0600 file and `fsync`ed instead. Directories are created private (0700).
//!
//! Once `keep` snapshots exist, the oldest one (which retention would delete next) is
//! emptied and renamed to become the new one, so steady-state writes create no directory
//! inode either (N4/N5 retention is unchanged: the same directories remain).
//!
//! Durability: a rollback point survives any process crash. After a power cut the memory
//! files themselves are intact (they are written with fsync + rename), but the newest
//! snapshot's directory entries may be missing, since they are not `fsync`ed. A file that a
//! write snapshots but then leaves unchanged (e.g. `MEMORY.md` of a `remove` whose entry
//! had no index line) shares its inode with the live file: a later in-place edit by another
//! tool shows in both — harmless for rolling back that write, which did not change it.
//!
//! Any failure is an error: the caller must then abort its write (PM-53, fail-closed).

use std::ffi::{OsStr, OsString};
use std::fs::{self, DirBuilder, File};
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};

use jiff::Timestamp;

use crate::durable::{DIR_MODE, create_private, ensure_private_dir, retry_transient, sync_dir};
use memory_js::iso_millis;

/// Directory of the snapshots inside a memory directory.
pub const BACKUPS_DIR: &str = ".backups";
/// Prefix of migration snapshots, which retention never removes (PM-54).
pub const MIGRATE_PREFIX: &str = "migrate-";

/// Why a snapshot could not be taken. The caller aborts its write (PM-53).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SnapshotError {
    /// `.backups/` or the snapshot directory could not be created (e.g. `.backups` is a file).
    #[error("Cannot create snapshot directory {}: {source}", path.display())]
    CreateDir {
        /// The directory that could not be created.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: io::Error,
    },
    /// The memory directory could not be listed (whole-directory snapshot).
    #[error("Cannot list {} for a snapshot: {source}", path.display())]
    List {
        /// The memory directory.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: io::Error,
    },
    /// A file could not be copied (a missing file is skipped, not an error).
    #[error("Cannot copy {} into snapshot {}: {source}", from.display(), to.display())]
    Copy {
        /// The file in the memory directory.
        from: PathBuf,
        /// Its copy in the snapshot.
        to: PathBuf,
        /// The underlying error.
        #[source]
        source: io::Error,
    },
    /// The snapshot could not be made durable.
    #[error("Cannot sync snapshot {}: {source}", path.display())]
    Sync {
        /// The snapshot directory.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: io::Error,
    },
    /// An old snapshot could not be removed by retention.
    #[error("Cannot prune snapshots in {}: {source}", path.display())]
    Prune {
        /// `<dir>/.backups`.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: io::Error,
    },
}

/// `2026-10-01T00-00-01-000Z` for `2026-10-01T00:00:01.000Z`.
pub fn snapshot_stamp(now: Timestamp) -> String {
    iso_millis(now).replace([':', '.'], "-")
}

/// Copies `files` (paths relative to `dir`; missing ones skipped) into a new snapshot
/// `<dir>/.backups/<stamp>-<label>[-n]/`, then prunes to `keep`. Returns the snapshot path
/// (already pruned again when `keep` is 0, N10).
pub fn snapshot_files(
    dir: &Path,
    label: &str,
    files: &[&str],
    keep: usize,
    now: Timestamp,
) -> Result<PathBuf, SnapshotError> {
    let files: Vec<&OsStr> = files.iter().map(OsStr::new).collect();
    snapshot_names(dir, label, &files, keep, now)
}

/// One snapshot of every top-level regular file of `dir` whose name does not start with
/// `.` (N12: entries, `MEMORY.md`, even `notes.txt`; never `.lock`, `.dream-meta.json`,
/// `.backups/` or `sessions/`). Symlinks are not followed and not copied.
pub fn snapshot_all(
    dir: &Path,
    label: &str,
    keep: usize,
    now: Timestamp,
) -> Result<PathBuf, SnapshotError> {
    let list_err = |source| SnapshotError::List {
        path: dir.to_path_buf(),
        source,
    };
    let mut names: Vec<OsString> = Vec::new();
    for entry in fs::read_dir(dir).map_err(list_err)? {
        let entry = entry.map_err(list_err)?;
        let name = entry.file_name();
        if name.as_bytes().first() == Some(&b'.') {
            continue;
        }
        if entry.file_type().map_err(list_err)?.is_file() {
            names.push(name);
        }
    }
    names.sort();
    let names: Vec<&OsStr> = names.iter().map(OsString::as_os_str).collect();
    snapshot_names(dir, label, &names, keep, now)
}

fn snapshot_names(
    dir: &Path,
    label: &str,
    files: &[&OsStr],
    keep: usize,
    now: Timestamp,
) -> Result<PathBuf, SnapshotError> {
    let root = dir.join(BACKUPS_DIR);
    ensure_private_dir(&root).map_err(|source| SnapshotError::CreateDir {
        path: root.clone(),
        source,
    })?;
    let base = format!("{}-{label}", snapshot_stamp(now));
    let snap = match recycle_oldest(&root, keep, &base) {
        Some(snap) => snap,
        None => unique_dir(&root, &base)?,
    };
    let copied = match copy_all(dir, &snap, files) {
        Ok(copied) => copied,
        Err(err) => {
            // Best effort: do not leave a partial rollback point behind.
            let _ = fs::remove_dir_all(&snap);
            return Err(err);
        }
    };
    if copied {
        // Copies (not links) carry data of their own: make the rollback point durable.
        let sync_err = |source| SnapshotError::Sync {
            path: snap.clone(),
            source,
        };
        retry_transient(|| sync_dir(&snap)).map_err(sync_err)?;
        retry_transient(|| sync_dir(&root)).map_err(sync_err)?;
    }
    prune_snapshots(dir, keep).map_err(|source| SnapshotError::Prune { path: root, source })?;
    Ok(snap)
}

/// When retention is about to delete the oldest snapshot anyway (there are already `keep`),
/// empties it and renames it to the new snapshot's name instead: a rename allocates no inode
/// and a `mkdir` does, which on ext4 is a large share of a write's cost. Only flat
/// directories (ours) are recycled; `None` means "make a new one".
fn recycle_oldest(root: &Path, keep: usize, base: &str) -> Option<PathBuf> {
    use rustix::fs::{CWD, RenameFlags, renameat_with};
    if keep == 0 {
        return None;
    }
    let names = snapshot_dirs(root).ok()?;
    if names.len() < keep {
        return None;
    }
    let oldest = root.join(&names[0]);
    let entries: Vec<fs::DirEntry> = fs::read_dir(&oldest).ok()?.collect::<Result<_, _>>().ok()?;
    if entries
        .iter()
        .any(|e| e.file_type().map_or(true, |t| t.is_dir()))
    {
        return None;
    }
    for e in &entries {
        fs::remove_file(e.path()).ok()?;
    }
    for n in 1u32..1000 {
        let target = if n == 1 {
            root.join(base)
        } else {
            root.join(format!("{base}-{n}"))
        };
        match renameat_with(CWD, &oldest, CWD, &target, RenameFlags::NOREPLACE) {
            Ok(()) => return Some(target),
            Err(rustix::io::Errno::EXIST) => continue,
            Err(_) => return None, // the emptied directory is pruned as before
        }
    }
    None
}

/// The snapshot directories of `root` that retention counts (everything but `migrate-*`
/// and non-directories), sorted by name (= time).
fn snapshot_dirs(root: &Path) -> io::Result<Vec<OsString>> {
    let mut names: Vec<OsString> = Vec::new();
    for entry in fs::read_dir(root)? {
        let Ok(entry) = entry else { continue };
        let name = entry.file_name();
        if name.as_bytes().starts_with(MIGRATE_PREFIX.as_bytes()) {
            continue;
        }
        if fs::metadata(entry.path()).is_ok_and(|meta| meta.is_dir()) {
            names.push(name);
        }
    }
    names.sort();
    Ok(names)
}

fn unique_dir(root: &Path, base: &str) -> Result<PathBuf, SnapshotError> {
    for n in 1u32.. {
        let candidate = if n == 1 {
            root.join(base)
        } else {
            root.join(format!("{base}-{n}"))
        };
        match retry_transient(|| DirBuilder::new().mode(DIR_MODE).create(&candidate)) {
            Ok(()) => return Ok(candidate),
            Err(err) if err.kind() == io::ErrorKind::AlreadyExists => {}
            Err(source) => {
                return Err(SnapshotError::CreateDir {
                    path: candidate,
                    source,
                });
            }
        }
    }
    Err(SnapshotError::CreateDir {
        path: root.join(base),
        source: io::Error::other("no free snapshot name"),
    })
}

/// Links (or copies) every file into `snap`; returns whether any file had to be copied.
fn copy_all(dir: &Path, snap: &Path, files: &[&OsStr]) -> Result<bool, SnapshotError> {
    let mut copied = false;
    for file in files {
        let from = dir.join(file);
        // Flat, by basename; a path without one (`..`, empty) names no file to copy.
        let Some(name) = Path::new(file).file_name() else {
            continue;
        };
        let to = snap.join(name);
        match link_or_copy(&from, &to) {
            Ok(Kept::Copied) => copied = true,
            Ok(Kept::Linked | Kept::Missing) => {}
            Err(source) => return Err(SnapshotError::Copy { from, to, source }),
        }
    }
    Ok(copied)
}

enum Kept {
    Linked,
    Copied,
    Missing,
}

/// Hard-links the regular file `from` as `to`, or copies it into a new 0600 file and
/// `fsync`s it where links are impossible. Missing files and anything that is not a regular
/// file (symlinks are never followed) are skipped.
fn link_or_copy(from: &Path, to: &Path) -> io::Result<Kept> {
    match fs::symlink_metadata(from) {
        Ok(meta) if meta.file_type().is_file() => {}
        Ok(_) => return Ok(Kept::Missing),
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(Kept::Missing),
        Err(err) => return Err(err),
    }
    match retry_transient(|| fs::hard_link(from, to)) {
        Ok(()) => return Ok(Kept::Linked),
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(Kept::Missing),
        Err(_) => {} // EPERM, EXDEV, EMLINK, no hard links: copy instead
    }
    let mut source = match retry_transient(|| File::open(from)) {
        Ok(file) => file,
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(Kept::Missing),
        Err(err) => return Err(err),
    };
    let mut target = retry_transient(|| create_private(to))?;
    io::copy(&mut source, &mut target)?;
    target.sync_all()?;
    Ok(Kept::Copied)
}

/// Keeps the newest `keep` snapshot directories of `<dir>/.backups` by name order and
/// removes the rest (PM-54). `migrate-*` directories and non-directories are never touched;
/// a hand-made directory is ordered by its name like any other (N11). A missing or
/// unlistable `.backups` is not an error.
pub fn prune_snapshots(dir: &Path, keep: usize) -> io::Result<()> {
    let root = dir.join(BACKUPS_DIR);
    let Ok(names) = snapshot_dirs(&root) else {
        return Ok(());
    };
    let excess = names.len().saturating_sub(keep);
    for name in &names[..excess] {
        let path = root.join(name);
        match retry_transient(|| fs::remove_dir_all(&path)) {
            Ok(()) => {}
            Err(err) if err.kind() == io::ErrorKind::NotFound => {}
            Err(err) => return Err(err),
        }
    }
    Ok(())
}
