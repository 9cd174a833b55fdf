//! `pimem mcp`: the project memory as a Model Context Protocol server, for any agent that
//! takes tools over MCP (Claude Code, Codex, Cursor, ...).
//!
//! Built on the official Rust SDK (`rmcp`, pinned to its minor version in Cargo.toml) behind
//! the `mcp` cargo feature of this crate; tokio and the HTTP stack stay in this binary crate,
//! never in the library crates.
//!
//! # What it serves
//! * **Tools** ([`tools`]): `memory_add`, `memory_replace`, `memory_remove`, `memory_list`,
//!   `memory_search`, `session_search`. Each runs through `memory_core::tool::execute` or the
//!   same building blocks (`list_text`, `search_text`, the session search of
//!   `memory_agent::pi::sessions`), so the texts are the pi `memory` tool's, byte for byte
//!   (PM-32..PM-42), and every write takes the same locks, snapshot and secret check.
//! * **Resources** ([`resources`]): `pimem://index` (the raw `MEMORY.md`) and one
//!   `pimem://entry/<file>` per entry, the file name percent-encoded; `resources/read` returns
//!   the file's exact bytes. The server advertises `resources.listChanged` and sends
//!   `notifications/resources/list_changed` after its own writes and whenever the directory
//!   changes under it (another client, pi, the CLI; see [`McpOptions::watch_interval`]).
//! * **Prompts** ([`prompts`]): `memory_index` (the frozen `memory_index` section, the value
//!   pi puts in the system prompt) and `relevant_memories` (the `<relevant_memories>` block
//!   the lexical selector picks for a given `text`).
//!
//! # Key decisions
//! * **Compare-and-swap over MCP.** Every session keeps a `VersionBook` exactly like a pi
//!   session: `replace`/`remove` of an entry this session listed or searched is conditional
//!   on the version it was shown. A client that wants to manage versions itself reads them
//!   from the tools' `structuredContent` (`version` of a write; `entries[].version` of
//!   list/search) or from the `_meta.version` of a resource, and passes `expected_version`
//!   (16 hex digits) to `memory_replace`/`memory_remove`; an explicit version wins over the
//!   book. A stale version gives pi's `Memory conflict: stale version` tool error.
//! * **Two kinds of failure.** A request that does not fit a tool's schema (unknown tool or
//!   argument, a non-string value, a missing required argument, a bad `type` or
//!   `expected_version`) is a JSON-RPC error `-32602` whose message names the field (pi's own
//!   text where pi has one, e.g. `name is required for add`) and whose `data.field` carries
//!   it; it is rejected before the project is even opened, so nothing on disk changes. What
//!   the store refuses (a secret, a blank name, an unknown entry, a stale version, a held
//!   lock) is a tool result with `isError: true` and pi's text, which the model can act on,
//!   as the MCP specification recommends for tool execution errors.
//! * **Project.** The project is the first `file://` root the client reports (`roots/list`,
//!   asked once per session and again after `notifications/roots/list_changed`); a client
//!   without roots gets `--cwd` (default: the server's working directory, which is the
//!   project for Claude Code, Codex and Cursor). The directory and `memory.json` are resolved
//!   exactly as `pimem` and the pi sidecar do.
//! * **HTTP is opt-in and local** ([`http`]): `--http 127.0.0.1:PORT` only binds loopback
//!   addresses, refuses requests whose `Origin` is not this server's own loopback origin (DNS
//!   rebinding) and requires `Authorization: Bearer <token>`, a 256-bit token generated at
//!   launch and printed on stderr (or written to `--token-file`, mode 0600).
//!
//! # Limitations
//! * One project per session: a client with several roots gets the first `file://` one.
//! * External changes are noticed by polling the listing (cheap: the store's mtime cache),
//!   not by file-system events; `--watch-interval-ms 0` turns it off.
//! * `relevant_memories` is lexical only (no model is reachable from here).
//! * Over HTTP, state lives in the SDK's session (`Mcp-Session-Id`, protocol revisions up to
//!   2025-11-25, what today's clients speak). A client on the sessionless 2026-07-28 revision
//!   gets a fresh session per request: explicit `expected_version`s work, the implicit
//!   version book and the frozen `memory_index` do not carry over between its requests.

pub mod http;
pub mod prompts;
pub mod resources;
mod server;
pub mod tools;

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context as _, Result};

pub use server::PimemMcp;

/// How `pimem mcp` was started.
#[derive(Debug, Clone)]
pub struct McpOptions {
    /// The project used when the client reports no `file://` root (absolute).
    pub cwd: PathBuf,
    /// `--memory-dir`.
    pub memory_dir: Option<String>,
    /// pi's agent directory (memory.json, past sessions).
    pub agent_dir: Option<PathBuf>,
    /// `--trust-project`: also read `<cwd>/.pi/memory.json`.
    pub trust_project: bool,
    /// How often the memory directory is checked for changes made by others, to send
    /// `notifications/resources/list_changed`; `None` turns the check off.
    pub watch_interval: Option<Duration>,
}

/// Where to serve.
#[derive(Debug, Clone)]
pub enum Transport {
    /// Newline-delimited JSON-RPC on stdin/stdout (what MCP clients spawn).
    Stdio,
    /// Streamable HTTP on a loopback address.
    Http(http::HttpOptions),
}

/// Runs the server until the client closes stdin (stdio) or the process is interrupted
/// (HTTP).
pub fn run(opts: McpOptions, transport: Transport) -> Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    // A long-lived process: reuse one lock record file per memory directory.
    memory_core::lock_slots::enable();
    let result = runtime.block_on(async move {
        let shared = server::Shared::new(opts);
        match transport {
            Transport::Stdio => server::serve_stdio(shared).await,
            Transport::Http(http_opts) => http::serve(shared, http_opts).await,
        }
    });
    memory_core::lock_slots::release();
    result
}
