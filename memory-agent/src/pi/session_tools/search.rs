//! `search-session` (PS-18..PS-20): the tool's arguments, limits and status JSON.

use serde_json::{Value, json};

use super::{Caller, admit_cwd};
use memory_core::clock::iso_millis as iso;

use crate::pi::sessions::{SessionHit, SessionSearchOptions, TextSource, search_sessions};

/// At most this many sessions per result (PS-20).
pub const MAX_SESSIONS: usize = 20;
/// At most this many matching segments per session (PS-20).
pub const MAX_SEGMENTS: usize = 5;
/// At most this many characters per segment (PS-20, PS-V9).
pub const MAX_SEGMENT_CHARS: usize = 2000;

/// A tool's outcome: the status object (the first text block, as JSON, and the `details`)
/// and whether it is an error.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolOutcome {
    /// `{"status": …, …}`.
    pub status: Value,
    /// Whether pi should mark the result as an error.
    pub is_error: bool,
}

impl ToolOutcome {
    /// `{"status": "error", "error": message}`.
    pub fn error(message: impl Into<String>) -> ToolOutcome {
        ToolOutcome {
            status: json!({ "status": "error", "error": message.into() }),
            is_error: true,
        }
    }
}

/// Runs `search-session` for `args` (`{query, cwd?}`) on behalf of `caller`.
///
/// The result's status object:
///
/// ```json
/// {"status": "ok", "query": "deadlock", "cwd": "/home/u/app",
///  "sessions": [{"name": "Refactor auth", "id": "0191…", "cwd": "/home/u/app",
///                "path": "/home/u/.pi/agent/sessions/--home-u-app--/….jsonl",
///                "activity": "2026-11-29T21:40:02.118Z",
///                "segments": [{"role": "user", "text": "fix the deadlock", "truncated": false}],
///                "truncated": false}],
///  "truncated": false,
///  "limits": {"sessions": 20, "segmentsPerSession": 5, "charsPerSegment": 2000}}
/// ```
///
/// Sessions are ordered by activity, newest first; `name` is `null` for an unnamed
/// session. A segment's `truncated` says it was cut to 2,000 characters around the match;
/// a session's, that it has more than 5 matching segments; the top-level one, that more
/// than 20 sessions match (the search goes on until it has found a 21st, so the flag is
/// exact). Only the text blocks of user and assistant messages are searched (PS-19).
pub fn search_session(args: &Value, caller: &Caller) -> ToolOutcome {
    let query = match args.get("query") {
        Some(Value::String(q)) if !q.trim().is_empty() => q.as_str(),
        Some(Value::String(_)) | None | Some(Value::Null) => {
            return ToolOutcome::error("query is required and must not be blank");
        }
        Some(other) => return ToolOutcome::error(format!("query must be a string, not {other}")),
    };
    let admitted = match admit_cwd(&caller.cwd, args.get("cwd"), caller.home.as_deref()) {
        Ok(a) => a,
        Err(e) => return ToolOutcome::error(e.to_string()),
    };
    let (dir, filter) = caller.storage.project(&admitted.cwd);
    let opts = SessionSearchOptions {
        // One more than shown: a 21st session with matches makes `truncated` exact.
        max_sessions: MAX_SESSIONS + 1,
        max_matches: MAX_SEGMENTS,
        max_segment_chars: MAX_SEGMENT_CHARS,
        include_tool_results: false,
        user_and_assistant_only: true,
        threads: 0,
    };
    let found = match search_sessions(&dir, filter.as_deref(), query, &opts) {
        Ok(f) => f,
        Err(e) => return ToolOutcome::error(format!("cannot search the sessions: {e}")),
    };
    let truncated = found.hits.len() > MAX_SESSIONS;
    let sessions: Vec<Value> = found.hits.iter().take(MAX_SESSIONS).map(hit_json).collect();
    ToolOutcome {
        status: json!({
            "status": "ok",
            "query": query,
            "cwd": admitted.cwd,
            "sessions": sessions,
            "truncated": truncated,
            "limits": {
                "sessions": MAX_SESSIONS,
                "segmentsPerSession": MAX_SEGMENTS,
                "charsPerSegment": MAX_SEGMENT_CHARS,
            },
        }),
        is_error: false,
    }
}

fn hit_json(hit: &SessionHit) -> Value {
    let info = &hit.info;
    json!({
        "name": info.name,
        "id": info.id,
        "cwd": info.cwd,
        "path": info.path,
        "activity": iso(info.modified),
        "segments": hit.segments.iter().map(|s| json!({
            "role": match s.source {
                TextSource::User => "user",
                _ => "assistant",
            },
            "text": s.text,
            "truncated": s.truncated,
        })).collect::<Vec<_>>(),
        "truncated": hit.truncated,
    })
}
