//! Memory orchestration behind a `Model` trait.
//!
//! This crate decides what the agent sees and what gets written: surfacing, extraction,
//! dream, nudge and session-history search. It holds:
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
//! - The model-driven tasks, reaching a model only through [`Model`] (a blocking chat
//!   completion with tools, a deadline and a cancellation flag):
//!   - [`agent`]: the headless agent loop ([`run_agent`]): every tool call runs natively
//!     through `memory_core::tool::execute`, so the texts a model sees are the main agent's;
//!     turn limit with pi-memory's grace turn, one wall-clock deadline for the run.
//!   - [`extract`]: per-turn extraction ([`run_extract`], PM-65..68): pi messages → the
//!     exact PM-66 rendering (UTF-16 units like JavaScript, never splitting a character) →
//!     the task prompt; never waits for the lock (a dream round means the turn is skipped).
//!   - [`dream`]: `/dream` ([`run_dream`], PM-69): whole-round lock, one `-dream` snapshot,
//!     four phases, seven actions. Key decision: the entries listed in its prompt seed the
//!     compare-and-swap versions, so a memory another process changes during the dream is
//!     never overwritten (the model gets `Memory conflict: stale version`).
//!   - [`nudge`]: the session-start nudge ([`should_nudge`], PM-70), both thresholds (AND).
//!   - [`surfacing`]: per-turn auto-surfacing (PM-60..64, [`surfacing::Surfacer`]): the
//!     session's already-injected set plus a BM25F index kept in step with the store by
//!     `(file, version)`. Selectors: `lexical` (no model; the default without one), `model`
//!     (pi-memory's exact side query) and `hybrid` (lexical top 20 → the model chooses; the
//!     default with a model). Key decision: a failed, timed-out or unparseable model call
//!     falls back to the lexical choice instead of injecting nothing.
//!   - `http` (feature `http`, TLS with `http-tls`): an OpenAI-compatible [`Model`].
//!   - `testing` (feature `testing`): `ScriptedModel`, a scripted fake for tests.
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
//! - The dream's prompt is written from pi-memory's README (its 2.x source was not
//!   available); extraction's prompt and rendering follow the 2.x source exactly, except
//!   that tool-call argument keys are rendered in sorted order (see [`extract`]).
//! - Cancellation is cooperative: it is checked between model calls and tool calls, and a
//!   blocking HTTP request is bounded by the deadline, not interrupted.
//! - Session search limitations (activity time, JSON escaping, JSON-key queries) are listed
//!   in [`sessions`].
#![forbid(unsafe_code)]

pub mod agent;
pub mod dream;
pub mod extract;
#[cfg(feature = "http")]
pub mod http;
pub mod model;
pub mod nudge;
pub mod sessions;
pub mod surfacing;
#[cfg(any(test, feature = "testing"))]
pub mod testing;

pub use agent::{AgentError, AgentRun, AgentSpec, ToolCallRecord, run_agent};
pub use dream::{DreamOutcome, dream_failed_text, run_dream};
pub use extract::{ExtractOutcome, SkipReason, extract_failed_text, extracted_text, run_extract};
#[cfg(feature = "http")]
pub use http::HttpModel;
pub use model::{
    CancelToken, Completion, CompletionRequest, Message, Model, ModelError, StopReason, ToolCall,
    ToolDef,
};
pub use nudge::{Nudge, count_sessions, should_nudge};
pub use surfacing::{Fallback, Surfaced, Surfacer, SurfacingRequest};
