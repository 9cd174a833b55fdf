//! Shared helpers: a writer on a sandboxed run log, event shorthands.

use camino::Utf8PathBuf;
use memory_runlog::{Event, SessionStart, Stamped, Writer};

pub(crate) fn session(id: &str) -> SessionStart {
    SessionStart {
        pi_session: id.into(),
        session_file: Some(format!("/sessions/{id}.jsonl")),
        reason: "startup".into(),
        cwd: "/app".into(),
    }
}

pub(crate) fn at(at: i64, event: Event) -> Stamped {
    Stamped { at, event }
}

pub(crate) fn assistant(text: &str, stop: &str) -> Event {
    Event::Assistant {
        text: text.into(),
        stop_reason: Some(stop.into()),
        error: (stop == "error").then(|| "boom".to_owned()),
        model: Some("fake/fake-model".into()),
    }
}

pub(crate) fn prompt(text: &str) -> Event {
    Event::Prompt { text: text.into() }
}

/// A sandbox and its run log directory.
pub(crate) fn dir() -> (testkit::Sandbox, Utf8PathBuf) {
    let sb = testkit::Sandbox::new();
    let dir = memory_runlog::runlog_dir(&sb.path("memory/local/app"));
    (sb, dir)
}

/// A writer with a started session.
pub(crate) fn writer(dir: &Utf8PathBuf, id: &str) -> Writer {
    let mut w = Writer::open(dir, 1).unwrap();
    w.start_session(&session(id), 1).unwrap();
    w
}
