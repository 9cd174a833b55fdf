//! Memory orchestration behind a `Model` trait.
//!
//! This crate decides what the agent sees and what gets written: surfacing, extraction,
//! dream, nudge and session-history search (issue 4). Built so far:
//!
//! - [`sessions`]: the reader for pi 1.6.0 session JSONL files and the memory tool's
//!   `search` with `scope: "sessions"` (PM-41). Central types: [`sessions::SessionEntry`]
//!   (one tolerant, borrowing parse of a line) and [`sessions::search_sessions`] /
//!   [`sessions::SessionSearch`]. Key decision: stream files and run a raw-byte
//!   prefilter built from every way the query can be spelled in pi's JSON (case variants,
//!   JSON escapes), parsing only the lines it hits, with an exact Unicode case-insensitive
//!   confirmation on decoded text; skipping a line is provably safe, so results equal a full
//!   parse.
//!
//! Surfacing, extraction, dream and nudge (the `Model` trait) are not built yet.
//!
//! # Example
//! ```
//! use memory_agent::sessions::{
//!     render_session_results, search_sessions, session_dir_for_cwd, SessionSearchOptions,
//! };
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let agent = tempfile::tempdir()?;
//! let dir = session_dir_for_cwd(&agent.path().join("sessions"), "/home/u/app".as_ref());
//! std::fs::create_dir_all(&dir)?;
//! std::fs::write(
//!     dir.join("2026-11-29T21-37-25-309Z_0191a2b3.jsonl"),
//!     concat!(
//!         r#"{"type":"session","version":3,"id":"0191a2b3","timestamp":"2026-11-29T21:37:25.309Z","cwd":"/home/u/app"}"#, "\n",
//!         r#"{"type":"message","id":"20771499","parentId":null,"timestamp":"2026-11-29T21:37:25.400Z","message":{"role":"user","content":[{"type":"text","text":"Fix the Deadlock in payment"}],"timestamp":1795988245400}}"#, "\n",
//!     ),
//! )?;
//! let found = search_sessions(&dir, None, "deadlock", &SessionSearchOptions::default())?;
//! assert_eq!(found.hits[0].segments[0].text, "Fix the Deadlock in payment");
//! let text = render_session_results(&found);
//! assert!(text.starts_with("Found 1 match(es) in 1 session(s):"));
//! assert!(text.contains(r#"…matched (user): "Fix the Deadlock in payment"…"#));
//! # Ok(()) }
//! ```
//!
//! # Limitations
//! - Only session search exists; the rest of the orchestration is still to come.
//! - Session search limitations (activity time, JSON escaping, JSON-key queries) are listed
//!   in [`sessions`].
#![forbid(unsafe_code)]

pub mod model;
pub mod sessions;

pub use model::{
    CancelToken, Completion, CompletionRequest, Message, Model, ModelError, StopReason, ToolCall,
    ToolDef,
};
