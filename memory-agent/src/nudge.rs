//! The dream nudge at session start (PM-70, VECTORS S).
//!
//! Decision (VECTORS §Z 2): the code's rule, not the README's "after N sessions *or* N
//! hours". With a `.dream-meta.json`, nudge only when **both** at least `nudgeAfterHours`
//! have passed since `lastDreamAt` **and** at least `nudgeAfterSessions` sessions were
//! started since (`sessions − sessionCountAtDream`, never negative); without one, when the
//! project has at least `nudgeAfterSessions` sessions. AND keeps the nudge rare: a busy day
//! of many sessions right after a dream, or a quiet week, does not ask for another. A
//! `lastDreamAt` that does not parse never nudges (JavaScript's `NaN` comparison).
//!
//! "new entries" in the message is the number of new *sessions*, as in the original text.

use jiff::Timestamp;
use memory_core::DreamMeta;

use crate::options::NudgeThresholds;

/// The nudge confirmation title.
pub const NUDGE_TITLE: &str = "Memory Consolidation";

/// A nudge to show.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Nudge {
    /// Sessions of the project now.
    pub sessions: u64,
    /// Sessions since the last dream (all of them without a dream).
    pub new_entries: u64,
    /// `💡 S sessions, N new entries since last dream. /dream`
    pub message: String,
}

impl Nudge {
    /// The confirmation title, [`NUDGE_TITLE`].
    pub fn title(&self) -> &'static str {
        NUDGE_TITLE
    }

    /// The confirmation body: the message, a blank line, `Consolidate memory files now?`.
    pub fn body(&self) -> String {
        format!("{}\n\nConsolidate memory files now?", self.message)
    }
}

/// `💡 S sessions, N new entries since last dream. /dream`
pub fn nudge_message(sessions: u64, new_entries: u64) -> String {
    format!("💡 {sessions} sessions, {new_entries} new entries since last dream. /dream")
}

/// Whether to nudge now (see the module docs for the rule). Pure: the caller reads the meta
/// (`Store::dream_meta`) and counts sessions (a pi host:
/// [`ProjectSessions::count`](crate::pi::sessions::ProjectSessions::count)).
pub fn should_nudge(
    meta: Option<&DreamMeta>,
    session_count: u64,
    now: Timestamp,
    cfg: &NudgeThresholds,
) -> Option<Nudge> {
    let new_entries = match meta {
        Some(m) => session_count.saturating_sub(m.session_count_at_dream),
        None => session_count,
    };
    // Decision (VECTORS §Z 2): with a meta both thresholds must be met (AND), as the code.
    let due = match meta {
        Some(m) => {
            let hours_since = match m.last_dream_at.parse::<Timestamp>() {
                Ok(last) => (now.as_millisecond() - last.as_millisecond()) as f64 / 3_600_000.0,
                Err(_) => f64::NAN,
            };
            hours_since >= cfg.after_hours && new_entries >= cfg.after_sessions
        }
        None => session_count >= cfg.after_sessions,
    };
    due.then(|| Nudge {
        sessions: session_count,
        new_entries,
        message: nudge_message(session_count, new_entries),
    })
}
