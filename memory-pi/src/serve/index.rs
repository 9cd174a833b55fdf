//! The session's lexical index: warmed up off the critical path at `session/start`, kept
//! warm by file-system notifications, persisted for the next session.

use memory_agent::LiveIndex;

use super::session::Session;

/// Runs right after `session/start`, on a background task, while pi finishes starting:
/// watches the memory directory (so later listings `lstat` only what changed), loads the
/// persisted index (or builds one from the files) and hands it to the session's surfacer,
/// then persists it if anything changed since it was written, and tidies temp files left by
/// killed processes (dot files, invisible to listings).
pub(super) fn warm(session: &Session) {
    let Some(p) = session.project_if_open() else {
        return;
    };
    let store = &p.store;
    store.watch();
    if let Ok((live, _)) = LiveIndex::open(store) {
        // A surfacing that started before we got here built its own index: keep it.
        session.surfacer.lock().install_index(live);
    }
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
