//! The cross-process `.lock` file of a memory directory (PM-45..PM-47, PM-49).
//!
//! # Record
//! `<dir>/.lock` holds one JSON object, keys in this order:
//! `{"pid":N,"hostname":"h","startedAt":"2026-10-02T00:00:00.000Z","op":"add"}` — the same
//! record pi-memory 2.5 writes, so the TypeScript and Rust implementations exclude each
//! other and show each other's holders.
//!
//! # Protocol
//! **Acquire.** The contender writes its JSON record into a private temp file (mode 0600,
//! dot-prefixed), takes an exclusive kernel lock on that descriptor ([`File::try_lock`],
//! `flock(2)` on Linux), `fsync`s it, and hard-links it to `.lock` (`link(2)` is exclusive:
//! `EEXIST` means taken and never follows a symlink). So `.lock` never exists without a
//! complete record and its holder's kernel lock. File systems without hard links fall back
//! to the original `O_CREAT|O_EXCL`-then-write, whose brief 0-byte state every reader
//! treats as "being written" (PM-47) and never reclaims.
//!
//! **Contention.** If creation fails with `EEXIST` the record is read (without following a
//! symlink, without blocking on a FIFO):
//! - absent (the holder just released) → try to create again at once;
//! - 0 bytes → being written: poll until the timeout, then [`FileLockError::BeingWritten`];
//! - not a regular file, unreadable, or not a valid record → fail at once with
//!   [`FileLockError::AbandonedUnreadable`] (unreadable records are never reclaimed);
//! - another host, or this host with a live pid → poll every `poll` until the timeout, then
//!   [`FileLockError::Held`] (hard exclusion, never reclaimed);
//! - this host, dead pid → with `reclaim_dead` off: [`FileLockError::Abandoned`] at once
//!   (the original behaviour); with it on, try to reclaim (below).
//!
//! **Reclaim** (this crate's addition). The contender opens the path (`O_NOFOLLOW`) and
//! `try_lock`s the descriptor. It unlinks the path only if all of these hold *while it holds
//! the kernel lock*: the lock was free; the path still names the very file it locked (same
//! device and inode, via `lstat`); the content read through the locked descriptor is still
//! the same dead record it saw; and that pid is still dead. Then it drops the kernel lock
//! and goes back to creating. Why this is safe:
//! - A live holder keeps the kernel lock from before its record exists until after it has
//!   unlinked the file, so no reclaimer can ever lock a file with a live record. This also
//!   covers a holder whose pid is invisible to us (another pid namespace on the same
//!   kernel): its pid looks dead, but its kernel lock is held, so it is treated as live.
//! - Two reclaimers of the same dead file serialise on its kernel lock. The first unlinks;
//!   the second, once it gets the lock, finds the path absent or naming a different inode
//!   and goes back to the start. A path is only ever unlinked by a process holding the
//!   kernel lock of the inode it names, so nobody can unlink a newer record by mistake.
//! - If the file cannot be opened for writing or the file system refuses the kernel lock,
//!   nothing is reclaimed and the original [`FileLockError::Abandoned`] is returned.
//!
//! **Release** ([`FileLockGuard`]'s `Drop`): while still holding the kernel lock, the holder
//! unlinks the path only if it still names its own inode and that holds its own
//! pid + hostname record; then it closes the descriptor, releasing the kernel lock.
//!
//! # Decisions
//! - VECTORS §Z 9: the stored TypeScript lock used `link()` of a complete temp file; README
//!   2.5 documents `open(…, "wx")` with a visible 0-byte state. We follow README 2.5 (and
//!   PM-47): the record is written after creation, and an empty file means "being written".
//! - M15 ("a dead-pid lock is never auto-reclaimed") holds only with `reclaim_dead` off; with
//!   the default (on) the next write on this host removes it and reports it through
//!   [`FileLockGuard::reclaimed`].
//!
//! # Limitations
//! - Records written by pi-memory (TypeScript) carry no kernel lock. A *live* TypeScript
//!   holder whose pid is invisible to us (another pid namespace with the same hostname)
//!   would look dead and be reclaimed; set `lock.reclaimDead` off when mixing the two
//!   implementations across containers that share a hostname.
//! - Hosts are told apart by hostname only; two machines with the same hostname sharing a
//!   directory look like one host. A holder on another host is never reclaimed, so a crash
//!   there still needs `/memory unlock`.
//! - On NFS and similar, `flock` may be emulated or local to one client; exclusion then
//!   rests on `O_EXCL` creation as in the original, and reclaim is only as safe as the kernel
//!   lock the file system provides. Keep `lock.reclaimDead` off on such mounts.
//! - A dead holder's pid may be reused by an unrelated process before anybody looks; the
//!   record then looks live and blocks until a human runs `/memory unlock` (the original
//!   behaviour). A zombie (exited, not yet reaped) counts as alive.
//! - Only on file systems without hard links: a crash between creating the file and writing
//!   the record leaves a 0-byte `.lock`, which is never reclaimed (PM-47). A 0-byte lock
//!   written by another implementation is treated the same way.
//! - Creation and removal of `.lock` are not followed by a directory `fsync`: after a power
//!   cut a stale record may reappear and is handled like any dead holder.

use std::fs::{self, File, OpenOptions, TryLockError};
use std::io::{self, Read, Seek, Write};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use jiff::Timestamp;
use memory_js::iso_millis;
use rustix::fs::OFlags;
use serde::{Deserialize, Serialize};

use crate::durable::{create_private, retry_transient};

/// File name of the cross-process lock inside a memory directory.
pub const LOCK_FILE: &str = ".lock";

/// The record stored in `.lock` (PM-45). Serialises to exactly
/// `{"pid":N,"hostname":"h","startedAt":"ISO","op":"add"}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Holder {
    /// Process id of the holder.
    pub pid: u32,
    /// `gethostname()` of the holder's machine.
    pub hostname: String,
    /// When the holder started waiting, ISO 8601 with milliseconds (`…T00:00:00.000Z`).
    pub started_at: String,
    /// The operation: `add`, `replace`, `remove`, `rename`, `rebuild`, `dream`, …
    pub op: String,
}

impl Holder {
    /// A record for this process, started at `now`.
    pub fn current(op: &str, now: Timestamp) -> Holder {
        Holder {
            pid: std::process::id(),
            hostname: hostname(),
            started_at: iso_millis(now),
            op: op.to_owned(),
        }
    }

    /// `<op> (pid N on <host>, started <ISO>)`, as shown by `/memory` and `/memory unlock`
    /// (M12, M13).
    pub fn describe(&self) -> String {
        format!(
            "{} (pid {} on {}, started {})",
            self.op, self.pid, self.hostname, self.started_at
        )
    }

    /// The record as written to `.lock` (compact JSON, fixed key order).
    pub fn to_json(&self) -> String {
        // Serialising four plain fields cannot fail; fall back to a manual rendering anyway.
        serde_json::to_string(self).unwrap_or_else(|_| {
            format!(
                "{{\"pid\":{},\"hostname\":{:?},\"startedAt\":{:?},\"op\":{:?}}}",
                self.pid, self.hostname, self.started_at, self.op
            )
        })
    }

    /// Parses a `.lock` record; `None` unless it is a JSON object with a non-negative
    /// integer `pid` and string `hostname`, `startedAt` and `op` (extra keys ignored).
    pub fn parse(bytes: &[u8]) -> Option<Holder> {
        serde_json::from_slice(bytes).ok()
    }

    fn is_same_host(&self) -> bool {
        self.hostname == hostname()
    }
}

/// What `.lock` currently says (the `/memory` view, PM-75).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LockState {
    /// No `.lock` file.
    Free,
    /// A valid record.
    Held(Holder),
    /// Present but not a valid record: 0 bytes (`empty`, PM-47), garbage, a symlink, a
    /// directory, or unreadable. `/memory` shows `unreadable — run /memory unlock`.
    Unreadable {
        /// The file is exactly 0 bytes (being written, or a crash mid-creation).
        empty: bool,
    },
}

enum Observation {
    Absent,
    Empty,
    Unreadable,
    Record(Holder),
}

fn nofollow_read_flags() -> i32 {
    // O_NONBLOCK: never hang on a FIFO planted as `.lock` (no effect on regular files).
    (OFlags::NOFOLLOW | OFlags::NONBLOCK).bits() as i32
}

/// Reads `.lock` without following a symlink. `Err` only for errors about the directory
/// itself (not a directory); everything else that is not a record is "unreadable".
fn observe(path: &Path) -> io::Result<Observation> {
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(nofollow_read_flags())
        .open(path);
    let mut file = match file {
        Ok(file) => file,
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(Observation::Absent),
        Err(err) if err.kind() == io::ErrorKind::NotADirectory => return Err(err),
        Err(_) => return Ok(Observation::Unreadable),
    };
    Ok(read_observation(&mut file))
}

fn read_observation(file: &mut File) -> Observation {
    match file.metadata() {
        Ok(meta) if meta.is_file() => {}
        _ => return Observation::Unreadable,
    }
    let mut bytes = Vec::new();
    if file.read_to_end(&mut bytes).is_err() {
        return Observation::Unreadable;
    }
    if bytes.is_empty() {
        return Observation::Empty;
    }
    match Holder::parse(&bytes) {
        Some(holder) => Observation::Record(holder),
        None => Observation::Unreadable,
    }
}

/// The state of `<dir>/.lock` for diagnostics (`/memory`). Never waits, never removes.
pub fn inspect(dir: &Path) -> io::Result<LockState> {
    Ok(match observe(&dir.join(LOCK_FILE))? {
        Observation::Absent => LockState::Free,
        Observation::Empty => LockState::Unreadable { empty: true },
        Observation::Unreadable => LockState::Unreadable { empty: false },
        Observation::Record(holder) => LockState::Held(holder),
    })
}

/// How [`acquire`] waits and whether it reclaims dead holders.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LockOptions {
    /// Longest wait for a live holder or a 0-byte record (`lock.timeoutMs`, 5000 ms).
    pub timeout: Duration,
    /// Pause between attempts (50 ms).
    pub poll: Duration,
    /// Reclaim a same-host record whose pid is dead and whose kernel lock is free
    /// (`lock.reclaimDead`, default on). Off: such a record fails with the PM-46 text.
    pub reclaim_dead: bool,
}

impl Default for LockOptions {
    fn default() -> Self {
        LockOptions {
            timeout: Duration::from_millis(5000),
            poll: Duration::from_millis(50),
            reclaim_dead: true,
        }
    }
}

/// Why `.lock` could not be taken. Texts are pi-memory's (PM-46, PM-47).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FileLockError {
    /// A live (or other-host) holder kept it for the whole timeout.
    #[error("Memory is locked by {} (pid {}, started {})", holder.op, holder.pid, holder.started_at)]
    Held {
        /// The last record seen.
        holder: Holder,
    },
    /// A same-host record of a dead process (reclaim off, or not possible).
    #[error(
        "Memory lock at {} is abandoned by {} (pid {}, started {}) — delete the file to clear it",
        path.display(), holder.op, holder.pid, holder.started_at
    )]
    Abandoned {
        /// `<dir>/.lock`.
        path: PathBuf,
        /// The dead holder's record.
        holder: Holder,
    },
    /// The file is not a valid record (garbage, symlink, directory, unreadable).
    #[error(
        "Memory lock at {} is abandoned by an unreadable record — delete the file to clear it",
        path.display()
    )]
    AbandonedUnreadable {
        /// `<dir>/.lock`.
        path: PathBuf,
    },
    /// The file stayed 0 bytes for the whole timeout.
    #[error(
        "Memory lock at {} is still being written (0 bytes) — if no other process is writing, delete the file or run /memory unlock",
        path.display()
    )]
    BeingWritten {
        /// `<dir>/.lock`.
        path: PathBuf,
    },
    /// A file-system error while creating, writing or reclaiming the lock.
    #[error("Cannot take memory lock at {}: {source}", path.display())]
    Io {
        /// `<dir>/.lock`.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: io::Error,
    },
}

/// Proof of holding `<dir>/.lock`. Dropping it releases the lock (see the module docs);
/// [`FileLockGuard::release`] does the same and reports errors.
#[must_use = "the lock is released as soon as the guard is dropped"]
#[derive(Debug)]
pub struct FileLockGuard {
    file: Option<File>,
    /// Whether `file` is a dup of this process's reusable record file (see [`enable_lock_slots`]).
    slot: bool,
    path: PathBuf,
    holder: Holder,
    dev: u64,
    ino: u64,
    reclaimed: Option<Holder>,
}

impl FileLockGuard {
    /// The dead holder whose lock this acquisition removed, if any; the caller shows a
    /// notice such as `Reclaimed a memory lock left by <describe()>`.
    pub fn reclaimed(&self) -> Option<&Holder> {
        self.reclaimed.as_ref()
    }

    /// Our own record, as written to `.lock`.
    pub fn holder(&self) -> &Holder {
        &self.holder
    }

    /// `<dir>/.lock`.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Releases the lock now, reporting a failure to remove the file.
    pub fn release(mut self) -> io::Result<()> {
        self.release_inner()
    }

    fn release_inner(&mut self) -> io::Result<()> {
        let result = self.unlink_if_ours();
        if std::mem::take(&mut self.slot) {
            free_slot(&self.path);
        }
        result
    }

    fn unlink_if_ours(&mut self) -> io::Result<()> {
        let Some(mut file) = self.file.take() else {
            return Ok(());
        };
        // The kernel lock (held by `file`) stays until after the unlink.
        let still_ours = match fs::symlink_metadata(&self.path) {
            Ok(meta) => meta.dev() == self.dev && meta.ino() == self.ino,
            Err(err) if err.kind() == io::ErrorKind::NotFound => false,
            Err(err) => return Err(err),
        };
        if !still_ours {
            return Ok(());
        }
        file.rewind()?;
        let record = match read_observation(&mut file) {
            Observation::Record(holder) => holder,
            _ => return Ok(()),
        };
        if record.pid != self.holder.pid || record.hostname != self.holder.hostname {
            return Ok(());
        }
        match retry_transient(|| fs::remove_file(&self.path)) {
            Ok(()) => Ok(()),
            Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(()),
            Err(err) => Err(err),
        }
    }
}

impl Drop for FileLockGuard {
    fn drop(&mut self) {
        let _ = self.release_inner();
    }
}

/// `gethostname()`, the same value as Node's `os.hostname()`.
pub fn hostname() -> String {
    rustix::system::uname()
        .nodename()
        .to_string_lossy()
        .into_owned()
}

/// Whether process `pid` exists on this host (`kill(pid, 0)` succeeds or fails with
/// anything but `ESRCH`). Pids that are not valid process ids (0, > `i32::MAX`) count as
/// alive, so a strange record is never reclaimed.
pub fn pid_alive(pid: u32) -> bool {
    let Some(pid) = i32::try_from(pid)
        .ok()
        .and_then(rustix::process::Pid::from_raw)
    else {
        return true;
    };
    !matches!(
        rustix::process::test_kill_process(pid),
        Err(rustix::io::Errno::SRCH)
    )
}

/// Removes `<dir>/.lock` whoever holds it (`/memory unlock`, PM-77). `Ok(false)` when there
/// was no lock.
pub fn remove_lock(dir: &Path) -> io::Result<bool> {
    crate::durable::remove_file(&dir.join(LOCK_FILE))
}

/// Creates `.lock` and makes it ours. `Ok(None)` when it already exists.
///
/// The record is complete before `.lock` exists: it is written to a private temp file that
/// we kernel-lock first, and that inode is then hard-linked to `.lock` (`link(2)` fails with
/// `EEXIST` when the lock is taken, so creation stays exclusive). A crash therefore never
/// leaves a 0-byte `.lock` behind (only a dot-prefixed temp file, see
/// [`clean_stale_temps`](crate::clean_stale_temps)), and a reclaimer can never observe our
/// record without our kernel lock.
// Decision (VECTORS §Z 9): the stored 2.x source used `link()` and README 2.5 documents
// `open(wx)` then write. We use `link()` because the `open(wx)` window (file created, record
// not yet written) is hit by the crash-torture test: a writer killed there leaves a 0-byte
// lock that PM-47 says must block every writer until a human removes it. 0-byte locks left
// by other implementations still follow PM-47. File systems without hard links fall back
// to `open(wx)` then write.
fn try_create(path: &Path, holder: &Holder) -> io::Result<Option<FileLockGuard>> {
    match try_create_from_slot(path, holder)? {
        SlotAttempt::Taken(guard) => return Ok(Some(*guard)),
        SlotAttempt::Contended => return Ok(None),
        SlotAttempt::Unavailable => {}
    }
    let temp = crate::durable::temp_path_for(path);
    let mut file = retry_transient(|| create_private(&temp))?;
    let prepared = (|| {
        // Nobody else knows this file yet, so the kernel lock is immediate.
        file.try_lock().map_err(|e| match e {
            TryLockError::WouldBlock => io::Error::new(
                io::ErrorKind::WouldBlock,
                "the kernel lock of a fresh private file is taken",
            ),
            TryLockError::Error(err) => err,
        })?;
        // No fsync: a record only matters while its process lives. A power cut kills the
        // holder anyway; the file it may leave (with or without its record) is then cleared
        // by reclaim or, if its pid was reused after the reboot, by `/memory unlock`.
        file.write_all(holder.to_json().as_bytes())?;
        file.metadata()
    })();
    let meta = match prepared {
        Ok(meta) => meta,
        Err(err) => {
            let _ = fs::remove_file(&temp);
            return Err(err);
        }
    };
    let linked = retry_transient(|| fs::hard_link(&temp, path));
    let _ = fs::remove_file(&temp);
    match linked {
        Ok(()) => {}
        Err(err) if err.kind() == io::ErrorKind::AlreadyExists => return Ok(None),
        Err(err) if links_unsupported(&err) => return try_create_in_place(path, holder),
        Err(err) => return Err(err),
    }
    Ok(Some(FileLockGuard {
        file: Some(file),
        slot: false,
        path: path.to_path_buf(),
        holder: holder.clone(),
        dev: meta.dev(),
        ino: meta.ino(),
        reclaimed: None,
    }))
}

/// Reusable record files, one per lock path, for long-lived processes.
struct Slot {
    /// The private record file; its kernel lock is held for the life of the process.
    file: File,
    path: PathBuf,
    dev: u64,
    ino: u64,
    in_use: bool,
}

static SLOTS_ENABLED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
static SLOTS: std::sync::Mutex<Vec<(PathBuf, Slot)>> = std::sync::Mutex::new(Vec::new());

fn slots() -> std::sync::MutexGuard<'static, Vec<(PathBuf, Slot)>> {
    SLOTS.lock().unwrap_or_else(|p| p.into_inner())
}

/// Makes this process keep one private record file per lock path and hard-link it to
/// `.lock` on every acquisition, instead of creating (and deleting) a fresh inode each time.
///
/// For long-lived processes (the pi sidecar): inode creation dominates a write's cost on
/// ext4, and this removes one of the three per write. The record files are dot-prefixed
/// temp files (`.lock.<pid>.<n>.tmp`), kernel-locked for the life of the process, so other
/// processes treat a `.lock` linked to one as live. Call [`release_lock_slots`] before exit;
/// after a crash they are removed by [`clean_stale_temps`](crate::clean_stale_temps).
pub fn enable_lock_slots() {
    SLOTS_ENABLED.store(true, std::sync::atomic::Ordering::SeqCst);
}

/// Deletes the record files kept by [`enable_lock_slots`] (those not holding a lock now) and
/// stops keeping new ones.
pub fn release_lock_slots() {
    SLOTS_ENABLED.store(false, std::sync::atomic::Ordering::SeqCst);
    let mut slots = slots();
    slots.retain(|(_, slot)| {
        if slot.in_use {
            return true;
        }
        let _ = fs::remove_file(&slot.path);
        false
    });
}

enum SlotAttempt {
    Taken(Box<FileLockGuard>),
    Contended,
    Unavailable,
}

fn try_create_from_slot(path: &Path, holder: &Holder) -> io::Result<SlotAttempt> {
    use std::os::unix::fs::FileExt;
    if !SLOTS_ENABLED.load(std::sync::atomic::Ordering::SeqCst) {
        return Ok(SlotAttempt::Unavailable);
    }
    let mut slots = slots();
    let index = match slots.iter().position(|(p, _)| p == path) {
        Some(i) if slots[i].1.in_use => return Ok(SlotAttempt::Unavailable),
        Some(i) => i,
        None => {
            let temp = crate::durable::temp_path_for(path);
            let file = retry_transient(|| create_private(&temp))?;
            if file.try_lock().is_err() {
                let _ = fs::remove_file(&temp);
                return Ok(SlotAttempt::Unavailable);
            }
            let meta = file.metadata()?;
            slots.push((
                path.to_path_buf(),
                Slot {
                    file,
                    path: temp,
                    dev: meta.dev(),
                    ino: meta.ino(),
                    in_use: false,
                },
            ));
            slots.len() - 1
        }
    };
    let slot = &mut slots[index].1;
    let record = holder.to_json();
    slot.file.set_len(0)?;
    slot.file.write_all_at(record.as_bytes(), 0)?;
    match retry_transient(|| fs::hard_link(&slot.path, path)) {
        Ok(()) => {}
        Err(err) if err.kind() == io::ErrorKind::AlreadyExists => {
            return Ok(SlotAttempt::Contended);
        }
        Err(_) => {
            // The record file vanished (someone tidied dot files) or links are unsupported:
            // forget the slot and let the caller use a fresh file.
            let (_, slot) = slots.remove(index);
            let _ = fs::remove_file(&slot.path);
            return Ok(SlotAttempt::Unavailable);
        }
    }
    let file = match slot.file.try_clone() {
        Ok(file) => file,
        Err(err) => {
            let _ = fs::remove_file(path);
            return Err(err);
        }
    };
    slot.in_use = true;
    Ok(SlotAttempt::Taken(Box::new(FileLockGuard {
        file: Some(file),
        slot: true,
        path: path.to_path_buf(),
        holder: holder.clone(),
        dev: slot.dev,
        ino: slot.ino,
        reclaimed: None,
    })))
}

fn free_slot(path: &Path) {
    let mut slots = slots();
    if let Some((_, slot)) = slots.iter_mut().find(|(p, _)| p == path) {
        slot.in_use = false;
    }
}

/// Whether `link(2)` failed because the file system has no hard links.
fn links_unsupported(err: &io::Error) -> bool {
    matches!(
        rustix::io::Errno::from_io_error(err),
        Some(rustix::io::Errno::PERM | rustix::io::Errno::OPNOTSUPP | rustix::io::Errno::MLINK)
    )
}

/// `open(wx)`, kernel lock, write: the original's protocol, for file systems without hard
/// links. A crash between create and write leaves a 0-byte `.lock` (PM-47).
fn try_create_in_place(path: &Path, holder: &Holder) -> io::Result<Option<FileLockGuard>> {
    let file = retry_transient(|| create_private(path));
    let mut file = match file {
        Ok(file) => file,
        Err(err) if err.kind() == io::ErrorKind::AlreadyExists => return Ok(None),
        Err(err) => return Err(err),
    };
    let meta = file.metadata()?;
    let (dev, ino) = (meta.dev(), meta.ino());
    let written = (|| {
        // A reclaimer may hold our empty file's kernel lock for an instant.
        let spin_until = Instant::now() + Duration::from_secs(1);
        loop {
            match file.try_lock() {
                Ok(()) => break,
                Err(TryLockError::WouldBlock) if Instant::now() < spin_until => {
                    std::thread::sleep(Duration::from_millis(1));
                }
                Err(TryLockError::WouldBlock) => {
                    return Err(io::Error::new(
                        io::ErrorKind::WouldBlock,
                        "another process kept the kernel lock of the new lock file",
                    ));
                }
                Err(TryLockError::Error(err)) => return Err(err),
            }
        }
        file.write_all(holder.to_json().as_bytes())?;
        file.sync_all()
    })();
    if let Err(err) = written {
        if let Ok(now) = fs::symlink_metadata(path)
            && now.dev() == dev
            && now.ino() == ino
        {
            let _ = fs::remove_file(path);
        }
        return Err(err);
    }
    Ok(Some(FileLockGuard {
        file: Some(file),
        slot: false,
        path: path.to_path_buf(),
        holder: holder.clone(),
        dev,
        ino,
        reclaimed: None,
    }))
}

enum Reclaim {
    /// We unlinked the dead record.
    Done,
    /// The path changed under us (gone, other inode, other content, pid alive): look again.
    Changed,
    /// Someone alive holds the record's kernel lock: treat as a live holder.
    KernelLocked,
    /// Reclaim is impossible here (cannot open for writing, no kernel locks).
    Impossible,
}

fn try_reclaim(path: &Path, seen: &Holder) -> io::Result<Reclaim> {
    // Read-write: emulated `flock` (NFS) needs a writable descriptor for an exclusive lock.
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(nofollow_read_flags())
        .open(path);
    let mut file = match file {
        Ok(file) => file,
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(Reclaim::Changed),
        Err(_) => return Ok(Reclaim::Impossible),
    };
    match file.try_lock() {
        Ok(()) => {}
        Err(TryLockError::WouldBlock) => return Ok(Reclaim::KernelLocked),
        Err(TryLockError::Error(_)) => return Ok(Reclaim::Impossible),
    }
    let locked = file.metadata()?;
    match fs::symlink_metadata(path) {
        Ok(now) if now.dev() == locked.dev() && now.ino() == locked.ino() => {}
        Ok(_) => return Ok(Reclaim::Changed),
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(Reclaim::Changed),
        Err(err) => return Err(err),
    }
    match read_observation(&mut file) {
        Observation::Record(holder) if holder == *seen => {}
        _ => return Ok(Reclaim::Changed),
    }
    if !seen.is_same_host() || pid_alive(seen.pid) {
        return Ok(Reclaim::Changed);
    }
    match retry_transient(|| fs::remove_file(path)) {
        Ok(()) => {}
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(Reclaim::Changed),
        Err(err) => return Err(err),
    }
    // Kernel lock released only now, after the unlink.
    drop(file);
    Ok(Reclaim::Done)
}

/// Immediate retries before an observation that keeps changing is waited on like a holder.
const FAST_RETRIES: u32 = 3;

enum Waiting {
    Live(Holder),
    BeingWritten,
    Vanishing,
}

/// Takes `<dir>/.lock` for `op`, waiting as described in the module docs.
pub fn acquire(dir: &Path, op: &str, opts: &LockOptions) -> Result<FileLockGuard, FileLockError> {
    let path = dir.join(LOCK_FILE);
    let io_err = |source: io::Error| FileLockError::Io {
        path: path.clone(),
        source,
    };
    let holder = Holder::current(op, Timestamp::now());
    let deadline = Instant::now().checked_add(opts.timeout);
    let mut reclaimed = None;
    // Consecutive "look again at once" rounds (lock vanished or changed under us).
    let mut fast_retries = 0u32;
    loop {
        if let Some(mut guard) = try_create(&path, &holder).map_err(io_err)? {
            guard.reclaimed = reclaimed;
            return Ok(guard);
        }
        let waiting = match observe(&path).map_err(io_err)? {
            Observation::Absent => {
                // Released between our create and our read: retry at once, but do not
                // spin if the file keeps flickering.
                fast_retries += 1;
                if fast_retries < FAST_RETRIES {
                    continue;
                }
                Waiting::Vanishing
            }
            Observation::Unreadable => return Err(FileLockError::AbandonedUnreadable { path }),
            Observation::Empty => Waiting::BeingWritten,
            Observation::Record(seen) => {
                if seen.is_same_host() && !pid_alive(seen.pid) {
                    if !opts.reclaim_dead {
                        return Err(FileLockError::Abandoned { path, holder: seen });
                    }
                    match try_reclaim(&path, &seen).map_err(io_err)? {
                        Reclaim::Done => {
                            reclaimed = Some(seen);
                            fast_retries = 0;
                            continue;
                        }
                        Reclaim::Changed => {
                            fast_retries += 1;
                            if fast_retries < FAST_RETRIES {
                                continue;
                            }
                            Waiting::Vanishing
                        }
                        Reclaim::KernelLocked => Waiting::Live(seen),
                        Reclaim::Impossible => {
                            return Err(FileLockError::Abandoned { path, holder: seen });
                        }
                    }
                } else {
                    Waiting::Live(seen)
                }
            }
        };
        let expired = deadline.is_some_and(|deadline| Instant::now() >= deadline);
        if expired {
            match waiting {
                Waiting::Live(holder) => return Err(FileLockError::Held { holder }),
                Waiting::BeingWritten => return Err(FileLockError::BeingWritten { path }),
                Waiting::Vanishing => {}
            }
        }
        std::thread::sleep(opts.poll);
        fast_retries = 0;
    }
}

/// One attempt, no waiting (pi-memory's `tryWithLock`): `Ok(None)` while a live holder (or a
/// record being written) has it; abandoned and unreadable records are still errors, since
/// they would never clear by themselves.
pub fn try_acquire(
    dir: &Path,
    op: &str,
    reclaim_dead: bool,
) -> Result<Option<FileLockGuard>, FileLockError> {
    let opts = LockOptions {
        timeout: Duration::ZERO,
        poll: Duration::ZERO,
        reclaim_dead,
    };
    match acquire(dir, op, &opts) {
        Ok(guard) => Ok(Some(guard)),
        Err(FileLockError::Held { .. } | FileLockError::BeingWritten { .. }) => Ok(None),
        Err(err) => Err(err),
    }
}
