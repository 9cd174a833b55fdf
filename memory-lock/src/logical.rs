//! The in-process logical lock: one FIFO queue per memory directory (PM-44, PM-48).
//!
//! It carries the *logical* scope of a memory operation (one primitive call, or a whole
//! dream round lasting minutes), while the cross-process `.lock` file
//! ([`crate::file_lock`]) is only held for the milliseconds of a physical write. Waiters are
//! served in arrival order; a waiter that times out leaves the queue without blocking those
//! behind it. Different directories never block each other (M10).
//!
//! The registry is process-wide and keyed by the absolute form of the directory path
//! ([`std::path::absolute`], lexical: symlinks are not resolved), so `./mem` and
//! `/cwd/mem` share one lock. Entries are never removed: the number of entries is the number
//! of memory directories the process has seen, and removing one could let two callers hold
//! two different locks for the same directory.
//!
//! The lock is not re-entrant: a thread that already holds it and asks again waits for its
//! own release and fails with [`LogicalLockError::Busy`] after the timeout.

use std::collections::{HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::{Arc, LazyLock};
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};

/// Name of the index file; the contention message names it (PM-48).
pub const INDEX_FILE: &str = "MEMORY.md";

#[derive(Default)]
struct QueueState {
    held: bool,
    waiting: VecDeque<u64>,
    next_ticket: u64,
}

#[derive(Default)]
struct Slot {
    state: Mutex<QueueState>,
    changed: Condvar,
}

static REGISTRY: LazyLock<Mutex<HashMap<PathBuf, Arc<Slot>>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));

fn registry_key(dir: &Path) -> PathBuf {
    std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf())
}

fn slot_for(dir: &Path) -> Arc<Slot> {
    let mut registry = REGISTRY.lock();
    Arc::clone(registry.entry(registry_key(dir)).or_default())
}

/// Proof of holding the logical lock of one memory directory; dropping it releases the lock
/// and wakes the next waiter. `Send`, so it may be held across threads or `await` points.
#[must_use = "the logical lock is released as soon as the guard is dropped"]
pub struct LogicalGuard {
    slot: Arc<Slot>,
    dir: PathBuf,
}

impl LogicalGuard {
    /// The memory directory this guard locks (as passed by the caller).
    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

impl std::fmt::Debug for LogicalGuard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LogicalGuard")
            .field("dir", &self.dir)
            .finish()
    }
}

impl Drop for LogicalGuard {
    fn drop(&mut self) {
        let mut state = self.slot.state.lock();
        state.held = false;
        drop(state);
        self.slot.changed.notify_all();
    }
}

/// The logical lock could not be taken in time (PM-48, M7, M8).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum LogicalLockError {
    /// Another operation in this process held the lock for the whole timeout.
    #[error(
        "Memory operations for {} are already running in this process (waited {waited_ms}ms)",
        index_path.display()
    )]
    Busy {
        /// `<dir>/MEMORY.md`.
        index_path: PathBuf,
        /// The timeout that was waited, in milliseconds.
        waited_ms: u64,
    },
}

fn guard(slot: Arc<Slot>, dir: &Path) -> LogicalGuard {
    LogicalGuard {
        slot,
        dir: dir.to_path_buf(),
    }
}

/// Takes the logical lock of `dir`, waiting in FIFO order for at most `timeout`.
///
/// A zero timeout only succeeds when the lock is free and nobody is queued.
pub fn lock_logical(dir: &Path, timeout: Duration) -> Result<LogicalGuard, LogicalLockError> {
    let slot = slot_for(dir);
    let busy = || LogicalLockError::Busy {
        index_path: dir.join(INDEX_FILE),
        waited_ms: u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX),
    };
    let mut state = slot.state.lock();
    if !state.held && state.waiting.is_empty() {
        state.held = true;
        drop(state);
        return Ok(guard(slot, dir));
    }
    let ticket = state.next_ticket;
    state.next_ticket += 1;
    state.waiting.push_back(ticket);
    // `None` when the deadline is beyond what `Instant` can represent: wait without limit.
    let deadline = Instant::now().checked_add(timeout);
    loop {
        let our_turn = !state.held && state.waiting.front() == Some(&ticket);
        if our_turn {
            state.waiting.pop_front();
            state.held = true;
            drop(state);
            // The next in line may need to re-check (it cannot proceed while we hold, but a
            // timed-out waiter ahead of it may have changed the front).
            slot.changed.notify_all();
            return Ok(guard(slot, dir));
        }
        let timed_out = match deadline {
            Some(deadline) => slot.changed.wait_until(&mut state, deadline).timed_out(),
            None => {
                slot.changed.wait(&mut state);
                false
            }
        };
        let our_turn = !state.held && state.waiting.front() == Some(&ticket);
        if timed_out && !our_turn {
            state.waiting.retain(|t| *t != ticket);
            drop(state);
            // Our leaving may make the next waiter the front of a free lock.
            slot.changed.notify_all();
            return Err(busy());
        }
    }
}

/// Takes the logical lock of `dir` only if nobody holds it or waits for it; never waits
/// (M9: the extractor skips its turn while a dream round holds the lock).
pub fn try_lock_logical(dir: &Path) -> Option<LogicalGuard> {
    let slot = slot_for(dir);
    let mut state = slot.state.lock();
    if state.held || !state.waiting.is_empty() {
        return None;
    }
    state.held = true;
    drop(state);
    Some(guard(slot, dir))
}

fn existing_slot(dir: &Path) -> Option<Arc<Slot>> {
    REGISTRY.lock().get(&registry_key(dir)).map(Arc::clone)
}

/// Whether someone in this process holds or waits for the logical lock of `dir`
/// (a diagnostic: a dream round asserts it wrapped itself in the lock).
pub fn is_logical_active(dir: &Path) -> bool {
    existing_slot(dir).is_some_and(|slot| {
        let state = slot.state.lock();
        state.held || !state.waiting.is_empty()
    })
}

/// How many callers of this process are queued for the logical lock of `dir` (diagnostics).
pub fn logical_queue_len(dir: &Path) -> usize {
    existing_slot(dir).map_or(0, |slot| slot.state.lock().waiting.len())
}
