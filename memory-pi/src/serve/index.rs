//! The session's lexical index: warmed up off the critical path at `session/start`, kept
//! warm by file-system notifications, persisted for the next session.

use std::sync::Arc;
use std::time::{Duration, Instant};

use memory_agent::LiveIndex;
use parking_lot::{Condvar, Mutex};

use super::session::Session;

/// Longest wait of a surfacing for the warm-up (then it builds its own index, as before).
const WARM_WAIT: Duration = Duration::from_secs(10);

/// Whether the warm-up is loading the session's index.
///
/// Decision (issue 17, part 5): the first surfacing of a session waits for the warm-up
/// instead of listing and indexing the store a second time next to it. The warm-up started
/// at `session/start`, earlier, and does the same work; two copies of it competing for the
/// CPU (pi's own startup is using the other core) made the first turn's surfacing slower
/// than waiting.
#[derive(Default)]
pub(crate) struct Warming {
    busy: Mutex<bool>,
    done: Condvar,
}

impl Warming {
    /// Marks the warm-up as running until the returned guard is dropped (also when the task
    /// never runs).
    pub(super) fn begin(session: Arc<Session>) -> WarmingGuard {
        *session.warming.busy.lock() = true;
        WarmingGuard(session)
    }

    /// Waits until no warm-up is running, at most [`WARM_WAIT`].
    pub(super) fn wait(&self) {
        let deadline = Instant::now() + WARM_WAIT;
        let mut busy = self.busy.lock();
        while *busy {
            if self.done.wait_until(&mut busy, deadline).timed_out() {
                break;
            }
        }
    }
}

/// Ends the warm-up's [`Warming`] state when dropped.
pub(super) struct WarmingGuard(Arc<Session>);

impl Drop for WarmingGuard {
    fn drop(&mut self) {
        *self.0.warming.busy.lock() = false;
        self.0.warming.done.notify_all();
    }
}

/// Runs right after `session/start`, on a background task, while pi finishes starting:
/// watches the memory directory (so later listings `lstat` only what changed), loads the
/// persisted index (or builds one from the files) and hands it to the session's surfacer,
/// then persists it if anything changed since it was written, and tidies temp files left by
/// killed processes (dot files, invisible to listings).
pub(super) fn warm(session: &Session, warming: WarmingGuard) {
    let Some(p) = session.project_if_open() else {
        return;
    };
    let store = &p.store;
    super::trace::mark("warm", "");
    store.watch();
    super::trace::mark("watching", "");
    if let Ok((live, _)) = LiveIndex::open(store) {
        // A surfacing that started before we got here built its own index: keep it.
        session.surfacer.lock().install_index(live);
    }
    // A session's first ranking builds the lazily initialised word tables (synonyms, the
    // glossary, stems of everyday words) and faults in the query path: ~3 ms on the first
    // turn's critical path in the startup timeline. Pay it here, in the idle time before
    // the first prompt (an English and a Chinese word reach every table).
    let _ = session
        .surfacer
        .lock()
        .index()
        .index()
        .rank("deploy config 数据库", 3, &|_| false);
    drop(warming);
    super::trace::mark("warmed", "");
    persist(session);
    store.clean_stale_temps();
}

/// Writes the session's index if it changed since it was loaded or written (encoded under
/// the surfacer's lock, written outside it). Best effort: the index is only an
/// optimisation, and a failed write leaves the files, the truth, untouched.
pub(super) fn persist(session: &Session) {
    let Some(p) = session.project_if_open().filter(|_| !session.info.child) else {
        return;
    };
    let bytes = session.surfacer.lock().index_mut().snapshot(&p.store);
    if let Ok(Some(bytes)) = bytes {
        let _ = LiveIndex::write_snapshot(&p.store, &bytes);
    }
}
