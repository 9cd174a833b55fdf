//! pi-session in pimem: the `search-session` and `ask-session` tools and the `@s:` / `@as:`
//! session references (docs/compat/features.md PS-01..PS-35), host-neutral parts.
//!
//! * [`search_session`]: case-insensitive search of past sessions' user and assistant text
//!   (PS-18..PS-20), newest activity first, at most 20 sessions × 5 segments × 2,000
//!   characters with explicit `truncated` flags; the result is a status object (the tool's
//!   first text block, as JSON, and its `details`).
//! * [`admit_cwd`]: which working directories the tools may read (PS-14..PS-17): the
//!   caller's own and those listed in `<caller-cwd>/.pi/pi-session/setting.json`.
//! * [`ref_tokens`], [`candidates`], [`expand_references`]: the references, their
//!   completion candidates from a cached [`SessionCatalog`](crate::pi::sessions::SessionCatalog) and their expansion on submit
//!   (PS-05..PS-13).
//! * [`parse_ask_args`], [`resolve_target`], [`AskStatus`], [`report`]: `ask-session`'s
//!   arguments, target lookup, statuses with guidance and the report message
//!   (PS-22..PS-28). Running the target belongs to the host: the pimem sidecar continues the
//!   original session in a child `pi --mode rpc --session <file>` (see `memory_pi::serve`).
//!
//! # Key decision: our own reader, not pi's SDK (a deliberate difference from PS-21)
//! pi-session searches the aggregate text pi's SDK builds for every session
//! (`SessionManager.listAll()`: every file parsed in full on every call). pimem reads the
//! JSONL files itself with the streaming, prefiltered reader of [`crate::pi::sessions`]: a
//! raw-byte prefilter skips the lines that cannot match and only candidate lines are parsed,
//! which is what makes a search over a gigabyte of history take a fraction of a second
//! (BENCHMARKS.md, group `sessions`), and the references' listing is a [`SessionCatalog`](crate::pi::sessions::SessionCatalog)
//! that re-reads only what changed. Consequences, documented rather than hidden:
//! - a match cannot span two messages or two text blocks (pi's aggregate joins messages
//!   with spaces); segments are the matching newline-delimited lines of one text block;
//! - every entry of a file is searched, abandoned branches included (pi's aggregate covers
//!   what its listing reads; both exclude tool output and thinking);
//! - the reader's own limitations (JSON written by other tools, lone surrogates) are listed
//!   in [`crate::pi::sessions`].
//!
//! # Limitations
//! - Authorization is admission, not a sandbox (PS-17): `@as:` lists names of every project,
//!   and an admitted directory's sessions are read in full.
//! - Case folding is per character (no final-sigma rule), as in the session search.
//!
//! ```
//! use memory_agent::pi::session_tools::{Caller, search_session};
//! use memory_agent::pi::sessions::SessionStorage;
//! let tmp = tempfile::tempdir()?;
//! let root = tmp.path().join("sessions");
//! let dir = root.join("--home-u-app--");
//! std::fs::create_dir_all(&dir)?;
//! std::fs::write(dir.join("2026-01-01T00-00-00-000Z_s1.jsonl"), concat!(
//!     r#"{"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/home/u/app"}"#, "\n",
//!     r#"{"type":"message","id":"a1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":[{"type":"text","text":"fix the Deadlock"}],"timestamp":1767225601000}}"#, "\n",
//! ))?;
//! let caller = Caller::new("/home/u/app".into(), SessionStorage::PerCwd { root });
//! let out = search_session(&serde_json::json!({"query": "deadlock"}), &caller);
//! assert_eq!(out.status["sessions"][0]["segments"][0]["text"], "fix the Deadlock");
//! assert_eq!(out.status["truncated"], false);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod ask;
mod authorize;
mod refs;
mod search;

use std::path::PathBuf;

use serde_json::json;

pub use ask::{
    AskArgs, AskEnd, AskStatus, AskTarget, REPORT_TYPE, parse_ask_args, report, resolve_target,
};
pub use authorize::{Admitted, AuthError, SETTINGS_FILE, admit_cwd};
pub use refs::{
    Candidate, Expansion, MAX_CANDIDATES, RefScope, RefToken, candidates, expand_references,
    ref_tokens, reference_sentence, token_at_end,
};
pub use search::{MAX_SEGMENT_CHARS, MAX_SEGMENTS, MAX_SESSIONS, ToolOutcome, search_session};

use crate::ToolDef;
use crate::pi::sessions::SessionStorage;

/// The session that calls a tool or submits a reference.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caller {
    /// Its working directory, as pi reports it (`ctx.cwd`).
    pub cwd: PathBuf,
    /// Where pi keeps sessions.
    pub storage: SessionStorage,
    /// The home directory, for `~` and `$HOME` in `setting.json`.
    pub home: Option<PathBuf>,
    /// Its session ID (`ask-session` refuses it as a target).
    pub session_id: Option<String>,
    /// Its session file, when it has one.
    pub session_file: Option<PathBuf>,
}

impl Caller {
    /// A caller without home directory or session identity.
    pub fn new(cwd: PathBuf, storage: SessionStorage) -> Caller {
        Caller {
            cwd,
            storage,
            home: None,
            session_id: None,
            session_file: None,
        }
    }
}

/// The `search-session` tool for the model: name, description, JSON schema.
pub fn search_session_def() -> ToolDef {
    ToolDef {
        name: "search-session".to_owned(),
        description: format!(
            "Search past pi sessions' conversation text (user and assistant messages; never tool output or thinking) for a case-insensitive substring. Returns JSON: per session its name, full ID, cwd, absolute file path, last activity and the matching lines, newest activity first; at most {MAX_SESSIONS} sessions, {MAX_SEGMENTS} segments per session and {MAX_SEGMENT_CHARS} characters per segment, with `truncated` flags marking what was left out. Read the session file when you need more context. Without `cwd` it searches this project's sessions; another project's absolute `cwd` must be listed in \"externalDirectories\" of <this cwd>/{SETTINGS_FILE}."
        ),
        parameters: json!({
            "type": "object",
            "properties": {
                "query": {
                    "type": "string",
                    "description": "Text to find (case-insensitive substring; not blank)",
                },
                "cwd": {
                    "type": "string",
                    "description": "Absolute working directory whose sessions to search (default: this session's)",
                },
            },
            "required": ["query"],
        }),
    }
}

/// The `ask-session` tool for the model: name, description, JSON schema.
pub fn ask_session_def() -> ToolDef {
    ToolDef {
        name: "ask-session".to_owned(),
        description: format!(
            "Ask an earlier pi session: the original session (not a fork) continues in the background in its own working directory, with its own history and model, and writes the question and answer into its own file. `id` is the full session ID (from search-session or an @s: reference); names, partial IDs, paths and this session itself are refused. An ordinary ask answers `accepted` at once: do not poll, redo or re-delegate; give a brief progress update and end your turn; a {REPORT_TYPE} message with the answer arrives when it completes or fails. `busy`: that session is still working on an earlier ask from here. `steer: true` adds instructions to that running ask (`steered`, or `handled` when its input handler consumed them). Another project's absolute `cwd` must be listed in \"externalDirectories\" of <this cwd>/{SETTINGS_FILE}."
        ),
        parameters: json!({
            "type": "object",
            "properties": {
                "id": {
                    "type": "string",
                    "description": "The full session ID of the session to ask",
                },
                "prompt": {
                    "type": "string",
                    "description": "The question or instructions (not blank)",
                },
                "cwd": {
                    "type": "string",
                    "description": "Absolute working directory of the target session (default: this session's)",
                },
                "steer": {
                    "type": "boolean",
                    "description": "Steer this session's running ask instead of starting a new one",
                },
            },
            "required": ["id", "prompt"],
        }),
    }
}
