//! The run log: a crash-safe SQLite record of what a coding agent did, run by run, with
//! summaries and an experience hierarchy on top (pi-experience, PX-01..PX-21).
//!
//! It answers "what did the agent actually do in that run, did it finish, and what did we
//! learn across sessions?" independently of the host's own session files, which it never
//! reads (PX-03).
//!
//! # Central types
//! * [`Writer`]: the recording side, one per recording process. `RunStart` opens a run (a
//!   UUID and the project's next number, `R01`, `R02`, …), events are appended as they
//!   happen, `Settled` ends the run with its terminal status ([`terminal_status`]).
//! * [`RunLog`]: one connection for reading (runs, events, search, diagnostics), recovery,
//!   summaries and experiences.
//!
//! # Key decisions
//! * **SQLite, in WAL mode with `synchronous=FULL`, foreign keys and one `BEGIN IMMEDIATE`
//!   transaction per batch of events** (PX-02): a committed event survives a crash or a
//!   power cut, a killed writer never tears the file, several processes record into one
//!   database (a busy timeout plus a bounded retry keep `SQLITE_BUSY` from users). This is
//!   the only crate that uses SQLite (`rusqlite` with the bundled library, FTS5 included).
//! * **Where it lives** ([`runlog_dir`]): `<project memory dir>/.experience/runlog.db`, per
//!   project beside its memories, in a dot directory that pi-memory's listings, index and
//!   snapshots ignore. The numbering `R01…` is therefore per project.
//! * **Dead writers are proven dead, not guessed.** Every writer keeps a kernel lock on its
//!   own liveness mark (`.experience/writers/<uuid>.alive`, memory-lock's [`AliveMark`]);
//!   a running run whose writer's mark is free belongs to a dead process and becomes
//!   `recovery_required`, keeping its UUID, number and committed events, with no end time
//!   (PX-07, PX-08). A host that goes away cleanly in the middle of a run marks it the same
//!   way ([`Writer::close`]).
//! * **Schema versions move forward** ([`SCHEMA_VERSION`]; `PRAGMA user_version`): a newer
//!   file is refused with a clear error, an older one is migrated in place.
//! * **Experiences** ([`experience`]): run intervals as sources, at most one parent, no
//!   cycles, no overlapping intervals, inherited time ranges unknown while a source has no
//!   confirmed end (PX-12..PX-15).
//! * **Texts** live in one [`texts::Catalog`] per language ([`texts::EN`], [`texts::ZH`]).
//!
//! # Example
//! ```
//! use memory_runlog::{Event, RunLog, RunNo, RunStatus, SessionStart, Stamped, Writer};
//!
//! let sandbox = testkit::Sandbox::new();
//! let dir = memory_runlog::runlog_dir(&sandbox.path("memory/local/app"));
//! let mut w = Writer::open(&dir, 1_000)?;
//! w.start_session(&SessionStart { pi_session: "s1".into(), session_file: None,
//!     reason: "startup".into(), cwd: "/app".into() }, 1_000)?;
//! let at = |at, event| Stamped { at, event };
//! w.record(&[
//!     at(1_001, Event::RunStart),
//!     at(1_002, Event::Prompt { text: "run the tests".into() }),
//!     at(1_900, Event::Assistant { text: "All green.".into(), stop_reason: Some("stop".into()),
//!         error: None, model: None }),
//!     at(2_000, Event::Settled { aborted: false }),
//! ])?;
//! let log = RunLog::open(&dir)?;
//! let run = log.run(RunNo(1))?;
//! assert_eq!((run.number.to_string(), run.status), ("R01".to_owned(), RunStatus::Completed));
//! assert_eq!((run.title.as_str(), run.ended_at), ("run the tests", Some(2_000)));
//! assert_eq!(log.search("tests", 10)?.len(), 1);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Limitations
//! * Liveness is checked on this host only: a writer on another machine sharing the
//!   directory is never declared dead, and `flock` on network file systems may be
//!   emulated. Runs of such a writer stay `running` until it comes back or the file moves.
//! * Search tokenizes with FTS5's `unicode61`: a run of CJK characters is one token, so
//!   Chinese text matches by prefix of that run only, not by word.
//! * Summaries use one completion (no tools); pi-experience used a forked pi session.
//! * The experience rules bound intervals over run numbers, which run in one sequence per
//!   project across sessions; an interval may therefore span runs of several sessions.
#![forbid(unsafe_code)]
#![cfg_attr(test, allow(clippy::disallowed_methods))]

#[doc(hidden)]
pub mod baseline;
mod db;
mod error;
mod event;
pub mod experience;
mod ids;
mod log;
pub mod remember;
pub mod search;
pub mod summary;
pub mod texts;
pub mod tool;
mod writer;

pub use db::{BUSY_BUDGET, DB_FILE, MARKS_DIR, RUNLOG_DIR, SCHEMA_VERSION, runlog_dir};
pub use error::{ExperienceError, ParseIdError, RunLogError};
pub use event::{
    Event, MAX_TEXT_CHARS, MAX_TITLE_CHARS, MAX_TOOL_CHARS, RunStatus, Stamped, bound,
    terminal_status,
};
pub use experience::{ExperienceRow, NewExperience, TimeRange, inherited_range};
pub use ids::{ExpNo, Interval, RunNo};
pub use log::{Diagnostics, EventRow, RunLog, RunRow, SummaryState};
pub use memory_lock::AliveMark;
pub use writer::{Recorded, SessionStart, Writer};

/// The current time in Unix milliseconds (the host's clock; hosts stamp events themselves).
pub fn now_ms() -> i64 {
    jiff::Timestamp::now().as_millisecond()
}
