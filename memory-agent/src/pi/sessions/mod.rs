//! Session history: a reader for pi 1.6.0 session JSONL files and the memory tool's
//! `search` with `scope: "sessions"` (PM-41).
//!
//! # Layout read
//! `<agentDir>/sessions/--<encoded cwd>--/<ISO time>_<id>.jsonl` ([`session_dir_for_cwd`],
//! [`default_session_root`]), or one flat directory for every project when pi runs with
//! `--session-dir` / `PI_CODING_AGENT_SESSION_DIR` / `sessionDir`; pass a `cwd_filter` then.
//! Line 1 is the `session` header, every other line one entry ([`SessionEntry`]).
//!
//! # Listing rules (same as pi's `SessionManager.list`)
//! - A file is a session when its first non-blank line is a `session` header with a string
//!   `id`; other files are skipped. Unparseable lines anywhere else (a torn last line while pi
//!   appends, corruption) are skipped.
//! - `cwd` is the header's (`""` when not a string); the name is the latest `session_info`
//!   entry's, trimmed, and an empty or absent name clears it.
//! - Activity time ([`SessionInfo::modified`]): the last user/assistant message with
//!   `content`, using its numeric `message.timestamp` or else the entry's ISO `timestamp`;
//!   without one, the header time, then the file mtime. Newest first; ties by path.
//!
//! # What a search matches
//! Case-insensitive substring (per-character Unicode lowercase on both sides) over, in
//! every entry of the file **including abandoned branches** (pi keeps them; a user looking
//! for "what did we try" wants them):
//! - text blocks of `user` and `assistant` messages (not thinking, not tool-call arguments);
//! - `custom_message` content and `custom`-role messages (model context, like user text);
//! - `compaction` and `branch_summary` summaries (docs/pi-host.md §h asks for them; they are the
//!   only text left of compacted stretches in pi's view);
//! - tool results only with [`SessionSearchOptions::include_tool_results`] (off by default:
//!   the issue and PS-19 limit search to the conversation).
//!
//! Never: `system` messages, `bashExecution`, `custom` entries (extension state) and other
//! entry types. Each text block is matched on its own: a match cannot span two blocks.
//!
//! A hit's segments are the matching newline-delimited lines of those texts (one per line,
//! in file order), cut to `max_segment_chars` (2000) characters around the match with
//! [`Segment::truncated`] set (PS-20, PS-V9). At most `max_matches` (5) segments per session;
//! [`SessionHit::truncated`] marks more. Sessions are searched newest first and the search
//! stops after `max_sessions` (10) sessions **with** matches
//! ([`SessionSearch::limit_reached`]). The original (1.3.4) instead took the 10 newest
//! sessions and at most 5 matches in total; the per-session limits follow the issue.
//!
//! # Cached listing
//! [`SessionCatalog`] lists sessions (one project's, or every project's in a
//! [`SessionStorage`]) by the same rules, remembering per file what it read so that a later
//! listing only `stat`s unchanged files and reads only the lines appended since (the `@s:` /
//! `@as:` completion and `ask-session`'s lookup).
//!
//! # How it stays fast
//! Files are streamed in 1 MiB reads, never mapped. A listing reads only each file's header
//! and its tail (the last activity is near the end). The search then runs a raw-byte
//! prefilter over each buffer (every way a window of the folded query can be spelled in
//! pi's JSON, at most 64 literals, ASCII-case-insensitive, `aho-corasick`/`memchr`), parses
//! only the lines it hits with `serde_json` (borrowing strings), and confirms on decoded
//! text. The prefilter is sound by construction (see `matcher`), so results equal a full
//! parse; a property test checks that. Files are searched by up to 4 threads, results
//! kept in newest-first order regardless of timing.
//!
//! # Limitations
//! - Activity is the *last* user/assistant message rather than pi's *maximum* over all of
//!   them: identical for files pi writes (entries are appended in time order) and it lets a
//!   listing skip the body of every file. A hand-edited file with out-of-order timestamps
//!   may sort differently than in pi.
//! - The prefilter assumes JSON as pi writes it (`JSON.stringify`): only `"`, `\` and control
//!   characters escaped, with pi's escape spellings. A file written by another tool that
//!   escapes other characters (`\u00e9` for `é`) can have matches missed when the query
//!   contains those characters.
//! - A query made only of characters without a raw spelling (U+0307 COMBINING DOT ABOVE, the
//!   second half of `İ`'s fold) parses every line: correct, about 20× slower.
//! - Queries that are also JSON keys or values of every line (`message`, `role`, `text`)
//!   make every line a candidate; results stay correct, speed drops to full parsing.
//! - A line with a lone UTF-16 surrogate escape (`\ud800`) does not parse and is skipped.
//! - Case folding has no context rules (`Σ` always folds to `σ`, never `ς`).

mod catalog;
mod entry;
mod matcher;
mod paths;
mod persist;
mod render;
mod scan;
mod search;
mod tool;

#[cfg(test)]
mod tests;

use std::path::PathBuf;

pub use catalog::{Scope, SessionCatalog, SessionStorage};
pub use entry::{
    CustomMessageEntry, EntryError, EntryMeta, MessageEntry, Role, SessionEntry, SessionHeader,
    TextSource,
};
pub use paths::{default_session_root, session_dir_for_cwd};
pub use persist::{HeadlessSession, render_headless_session};
pub use render::{NO_MATCHES, render_session_results};
pub use search::{
    Segment, SessionFile, SessionHit, SessionInfo, SessionSearch, SessionSearchOptions,
    list_sessions, read_session, search_sessions,
};
pub use tool::ProjectSessions;

/// Failures of the session functions. Unreadable or foreign files inside a session
/// directory are skipped, not errors.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SessionError {
    /// The search query was empty or only whitespace.
    #[error("query is required for search")]
    EmptyQuery,
    /// The session directory exists but could not be listed.
    #[error("cannot list session directory {}: {source}", path.display())]
    ReadDir {
        /// The directory.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// A session file could not be read.
    #[error("cannot read session file {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// The file does not start with a `session` header.
    #[error("{} is not a pi session file (no session header on its first line)", path.display())]
    NotASession {
        /// The file.
        path: PathBuf,
    },
}
