//! File-system notifications for the listing cache ([`Store::watch`]): a long-lived process
//! (the pi sidecar) learns which entry files changed from the kernel instead of `lstat`ing
//! every file on every listing.
//!
//! The stat scan stays the source of truth: the watch only narrows it to the names the
//! kernel reported. Whenever the watch cannot vouch for the directory (not started, no
//! barrier support, queue overflow, an error, the directory itself moved or deleted, a
//! network file system) the next listing is the full stat scan.
//!
//! **Barrier.** Events reach the watcher's thread a little after the change happened. So
//! that a change finished before a listing starts is always part of that listing, the
//! listing first opens the directory (which makes the kernel queue an `IN_OPEN` event for
//! it, behind every event already queued) and waits until the watcher thread has seen that
//! event: everything queued before it has been seen too. The watch is only trusted after a
//! first barrier succeeded; a barrier that does not arrive within [`BARRIER_TIMEOUT`] falls
//! back to the full scan.
//!
//! Limitation: another process opening the directory at the same moment produces the same
//! kind of event and may end the wait early; a change made within those microseconds is
//! then seen by the following listing instead.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use notify::event::{AccessKind, EventKind, ModifyKind};
use notify::{Event, RecommendedWatcher, RecursiveMode, Watcher};
use parking_lot::{Condvar, Mutex};

/// Longest wait for the barrier event before a listing falls back to the full scan.
pub(super) const BARRIER_TIMEOUT: Duration = Duration::from_millis(250);

/// What the watcher thread has seen since the last listing took it.
#[derive(Debug, Default)]
struct Seen {
    /// Names (in the directory) the kernel reported a change for.
    dirty: HashSet<String>,
    /// Something the names cannot describe happened: rescan everything.
    rescan: bool,
    /// The watch is unusable from now on (the directory went away, an error).
    broken: bool,
    /// Open events of the directory itself seen so far.
    barriers: u64,
}

#[derive(Debug)]
struct Shared {
    seen: Mutex<Seen>,
    arrived: Condvar,
}

/// The changes a listing must look at.
#[derive(Debug)]
pub(super) enum Changes {
    /// Only these names changed since the last listing.
    Names(HashSet<String>),
    /// Unknown: do the full stat scan.
    Everything,
}

/// A watch on one memory directory.
pub(super) struct Watch {
    dir: PathBuf,
    shared: Arc<Shared>,
    /// Dropping it stops the watcher thread.
    _watcher: RecommendedWatcher,
}

impl std::fmt::Debug for Watch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Watch").field("dir", &self.dir).finish()
    }
}

/// File-system types whose changes made on another machine never reach the local kernel's
/// notifications (NFS, SMB/CIFS, FUSE, 9p, Ceph, AFS): their directories are never watched.
#[cfg(target_os = "linux")]
fn remote_file_system(dir: &Path) -> bool {
    const REMOTE: &[i64] = &[
        0x6969,                 // NFS
        0x517B,                 // SMB
        0xFF53_4D42_u32 as i64, // CIFS
        0xFE53_4D42_u32 as i64, // SMB2
        0x6573_5546,            // FUSE
        0x0102_1997,            // 9p
        0x00C3_6400,            // Ceph
        0x5346_414F,            // AFS
    ];
    match rustix::fs::statfs(dir) {
        #[allow(clippy::unnecessary_cast)]
        Ok(st) => REMOTE.contains(&(st.f_type as i64)),
        Err(_) => true,
    }
}

#[cfg(not(target_os = "linux"))]
fn remote_file_system(_dir: &Path) -> bool {
    false
}

impl Watch {
    /// Starts watching `dir` (not recursively) and proves the barrier works. `None` when the
    /// platform, the file system or the directory does not allow it.
    pub(super) fn start(dir: &Path) -> Option<Watch> {
        if remote_file_system(dir) {
            return None;
        }
        let shared = Arc::new(Shared {
            seen: Mutex::new(Seen::default()),
            arrived: Condvar::new(),
        });
        let sink = Arc::clone(&shared);
        let watched = dir.to_path_buf();
        let mut watcher = notify::recommended_watcher(move |res: notify::Result<Event>| {
            record(&sink, &watched, res);
        })
        .ok()?;
        watcher.watch(dir, RecursiveMode::NonRecursive).ok()?;
        let watch = Watch {
            dir: dir.to_path_buf(),
            shared,
            _watcher: watcher,
        };
        // Only a backend that reports opening the directory can give the barrier.
        watch.barrier().then_some(watch)
    }

    /// Opens the directory and waits until the watcher thread has seen that open.
    fn barrier(&self) -> bool {
        let before = self.shared.seen.lock().barriers;
        if std::fs::File::open(&self.dir).is_err() {
            return false;
        }
        let deadline = Instant::now() + BARRIER_TIMEOUT;
        let mut seen = self.shared.seen.lock();
        while seen.barriers == before && !seen.broken {
            if self
                .shared
                .arrived
                .wait_until(&mut seen, deadline)
                .timed_out()
            {
                break;
            }
        }
        seen.barriers != before
    }

    /// Whether the watch can still vouch for the directory.
    pub(super) fn healthy(&self) -> bool {
        !self.shared.seen.lock().broken
    }

    /// The changes since the last call (after a barrier).
    pub(super) fn take(&self) -> Changes {
        if !self.barrier() {
            return Changes::Everything;
        }
        let mut seen = self.shared.seen.lock();
        if seen.broken || seen.rescan {
            seen.rescan = false;
            seen.dirty.clear();
            return Changes::Everything;
        }
        Changes::Names(std::mem::take(&mut seen.dirty))
    }

    /// Forgets pending changes: a full scan is about to look at everything.
    pub(super) fn clear(&self) {
        let mut seen = self.shared.seen.lock();
        seen.dirty.clear();
        seen.rescan = false;
    }

    /// Marks a name as changed (our own writes, before the kernel says so).
    pub(super) fn touch(&self, name: &str) {
        self.shared.seen.lock().dirty.insert(name.to_owned());
    }
}

/// Runs on the watcher's thread for every event.
fn record(shared: &Shared, dir: &Path, res: notify::Result<Event>) {
    let mut seen = shared.seen.lock();
    match res {
        Err(_) => seen.rescan = true,
        Ok(event) if event.need_rescan() => seen.rescan = true,
        Ok(event) => {
            for path in &event.paths {
                if path == dir {
                    match event.kind {
                        EventKind::Access(AccessKind::Open(_)) => seen.barriers += 1,
                        EventKind::Access(_) | EventKind::Modify(ModifyKind::Metadata(_)) => {}
                        // The directory itself was removed or moved away.
                        EventKind::Remove(_) | EventKind::Modify(_) => seen.broken = true,
                        _ => seen.rescan = true,
                    }
                    continue;
                }
                if matches!(event.kind, EventKind::Access(_)) {
                    continue; // reads (ours included) change nothing
                }
                match (path.parent(), path.file_name().and_then(|n| n.to_str())) {
                    (Some(parent), Some(name)) if parent == dir => {
                        seen.dirty.insert(name.to_owned());
                    }
                    // A name that is not UTF-8 is never an entry; anything else is unexpected.
                    (Some(parent), None) if parent == dir => {}
                    _ => seen.rescan = true,
                }
            }
        }
    }
    drop(seen);
    shared.arrived.notify_all();
}
