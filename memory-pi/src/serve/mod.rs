//! `pimem serve`: the pi sidecar. pi's extension (`memory-pi/extension/index.ts`,
//! which holds no memory logic) spawns one `pimem serve` per session runtime and forwards
//! every event, tool call and command to it; all memory behaviour lives here.
//!
//! # Protocol, version 1
//!
//! **Transport.** Newline-delimited JSON-RPC 2.0 over the sidecar's stdin (pi → sidecar)
//! and stdout (sidecar → pi); both directions carry requests, responses and notifications.
//! A line with `"method"` is a request (with `"id"`) or a notification (without); a line
//! with `"result"`/`"error"` and no `"method"` answers the reader's own earlier request
//! (routed by id). One message per line, UTF-8, `\r\n` tolerated. stderr is free-form
//! diagnostics (quiet in normal operation).
//!
//! **Messages.** Every method's params and result are types in [`protocol`] (camelCase on the
//! wire; how leniently params are read is described there). The extension's TypeScript types,
//! `memory-pi/extension/protocol.ts`, are generated from them and kept equal by a test.
//!
//! **Errors.** Lines over 16 MiB are discarded and answered with `-32600` (id `null`; the
//! connection stays up). Malformed JSON: `-32700` with id `null`. Unknown method: `-32601`.
//! Invalid params: `-32602` whose message names the field (`invalid params: "cwd" is
//! required`, `invalid params: "cwd": invalid type: integer `5`, expected a string`; see
//! [`protocol::parse`]). Every request gets exactly one
//! response (a panicking handler answers `-32603`). Each request runs on its own worker
//! thread (a `/dream` takes minutes and calls back into pi meanwhile), so the reader never
//! blocks; stdout writes are serialised, one line per write.
//!
//! **Handshake.** `initialize {protocol: 1, client: "pimem-pi", clientVersion}` →
//! `{protocol: 1, version, tool, section: "memory_index", recordType: "pimem-memory-index"}`.
//! Any other protocol number → error `-32002` with a message saying exactly what to rebuild,
//! e.g. `pimem 0.1.0 speaks protocol 1 but the pi extension speaks protocol 2: rebuild and
//! reinstall both from the same checkout (cargo xtask install)`, and `data:`
//! [`ProtocolMismatch`](protocol::ProtocolMismatch) `{protocol, version, tool}` so the
//! extension can still register an inert tool that returns that message. The extension
//! (`client: "pimem-pi"`) and the binary are released together: a `clientVersion` other than
//! this binary's version → error `-32003` naming both versions, the npm packages to reinstall
//! (`@pimem/pi` and this platform's, see [`crate::platform`]) and `cargo xtask install`, with
//! the same `data`.
//!
//! ## pi → sidecar
//!
//! | method | params | result |
//! |---|---|---|
//! | `initialize` | [`InitializeParams`](protocol::InitializeParams) | [`InitializeResult`](protocol::InitializeResult) |
//! | `session/start` | [`SessionStartParams`](protocol::SessionStartParams) | [`SessionStartResult`](protocol::SessionStartResult) |
//! | `agent/before_start` | [`BeforeStartParams`](protocol::BeforeStartParams) | [`BeforeStartResult`](protocol::BeforeStartResult): the surfaced `memory-auto-surfacing` message and `Recalled: N entries`, or `null`s |
//! | `agent/settled` | [`SettledParams`](protocol::SettledParams) | [`SettledResult`](protocol::SettledResult) `{}` at once; extraction runs in the background |
//! | `session/compact` | [`CompactParams`](protocol::CompactParams) `{}` | [`CompactResult`](protocol::CompactResult) |
//! | `tool/execute` | [`ToolExecuteParams`](protocol::ToolExecuteParams) | [`ToolExecuteResult`](protocol::ToolExecuteResult) |
//! | `command/run` | [`CommandParams`](protocol::CommandParams) | [`CommandResult`](protocol::CommandResult) |
//! | `files/guard` | [`FilesGuardParams`](protocol::FilesGuardParams) | [`FilesGuardResult`](protocol::FilesGuardResult): `block` (a reason) or `null` |
//! | `session/shutdown` | [`ShutdownParams`](protocol::ShutdownParams) `{}` | [`ShutdownResult`](protocol::ShutdownResult) after in-flight work ended or `lock.timeoutMs` passed |
//! | `sessions/search` | [`SessionsSearchParams`](protocol::SessionsSearchParams) | [`SessionsToolResult`](protocol::SessionsToolResult): `search-session` |
//! | `sessions/ask` | [`SessionsAskParams`](protocol::SessionsAskParams) | [`SessionsToolResult`](protocol::SessionsToolResult): `ask-session` |
//! | `sessions/candidates` | [`SessionsCandidatesParams`](protocol::SessionsCandidatesParams) | [`SessionsCandidatesResult`](protocol::SessionsCandidatesResult): `@s:` / `@as:` completion |
//! | `sessions/expand` | [`SessionsExpandParams`](protocol::SessionsExpandParams) | [`SessionsExpandResult`](protocol::SessionsExpandResult): references on submit |
//! | `experience/run` | [`ExperienceRunParams`](protocol::ExperienceRunParams) | [`ExperienceRunResult`](protocol::ExperienceRunResult): `/experience <args>`; a `prompt` goes to the agent |
//! | `experience/panel` | [`PanelParams`](protocol::PanelParams) | [`PanelResult`](protocol::PanelResult): one view of the panel |
//! | `experience/tool` | [`ExperienceToolParams`](protocol::ExperienceToolParams) | [`ExperienceToolResult`](protocol::ExperienceToolResult) |
//! | `memory/list` | [`MemoryListParams`](protocol::MemoryListParams) `{}` | [`MemoryListResult`](protocol::MemoryListResult): `/memory list` in the TUI |
//! | `memory/open` | [`MemoryOpenParams`](protocol::MemoryOpenParams) | [`MemoryOpenResult`](protocol::MemoryOpenResult): the read-only view, its version and session token |
//! | `memory/save` | [`MemorySaveParams`](protocol::MemorySaveParams) | [`MemoryWriteResult`](protocol::MemoryWriteResult): a person's edit, compare-and-swap |
//! | `memory/delete` | [`MemoryDeleteParams`](protocol::MemoryDeleteParams) | [`MemoryWriteResult`](protocol::MemoryWriteResult): asks `ui/confirm`, then deletes the version shown |
//! | `session/tree` | [`SessionTreeParams`](protocol::SessionTreeParams) `{}` | [`SessionTreeResult`](protocol::SessionTreeResult): pi's `session_tree`; open views can no longer write |
//! | `run/event` (notification) | [`RunEventParams`](protocol::RunEventParams) | — queued for the run log, never answered |
//!
//! Curating (`memory/*`, `/memory list`, `/memory reload`, the usage summary of `/memory`) is
//! described in the `curate` module.
//!
//! The run log (`run/event`, `/experience`, the `experience` tool) is described in the
//! `experience` module: events are queued by the reader and written in batches by one recorder
//! thread; `session/shutdown` and end of input close it (a run still open becomes
//! `recovery_required`).
//!
//! `session/start`: `recorded` is the `data` of the last `custom` entry with customType
//! `pimem-memory-index` on the branch; `sectionPatches` are, in branch order, the `sections`
//! objects of `role: "system"` message entries and of compaction checkpoints (so a session
//! begun under the TypeScript pi-memory replays its frozen index; PM-57: `null` deletes, a
//! string sets, one `<memory_index>` wrapper is stripped). The sidecar loads `memory.json`
//! (`<agentDir>`, then `<cwd>/.pi/` when trusted), validates the configured models by asking
//! pi `models/resolve`, opens the store, and freezes the section: `recorded` ?? replayed
//! patches ?? fresh from disk (always fresh for reason `new`). `record` is non-null when the
//! section was computed fresh: the extension then calls `pi.appendEntry(recordType, record)`.
//! The extension sets `systemPromptOptions.sections.memory_index` to the frozen value on
//! every `before_agent_start` (even `""`), so pi sends identical bytes every turn.
//! If the user confirms the nudge, the extension calls `command/run {name: "dream",
//! confirmed: true}`.
//!
//! `agent/before_start` surfaces nothing for child sessions, blank prompts,
//! `messageType != "user"`, system prompts containing `<active_agent name="` (PM-60), or
//! with `autoSurfacing.enabled: false`. It also remembers the system prompt's
//! `<project_instructions path="…">` blocks for extraction (PM-67).
//!
//! The switch (`<agentDir>/auto-memory.json`, PA-11..PA-16) is read at every
//! `agent/before_start`: while memory is off or paused the result carries `section: ""` (the
//! extension sends no section), nothing is surfaced, extraction, the dream and the nudge are
//! skipped and `tool/execute` answers `Memory is off`; on the first turn after it is back on,
//! `section` and `record` carry the index read again. `files/guard` is asked from pi's
//! `tool_call` for `read`, `write`, `edit`, `grep`, `find` and `ls` (`serve/guard.rs`).
//! `/memory on|off|doctor` switch memory and run the read-only doctor (`crate::doctor`).
//!
//! `command/run`: `/memory` (any other argument but `unlock`, `on`, `off`, `doctor`, `list`,
//! `reload`) → the 7-line status or the misconfigured block, followed (after a blank line)
//! by the index mark and the session usage summary once this session has used memory
//! (`curate`); `/memory list` → the listing as text (the TUI browses with `memory/*`
//! instead); `/memory reload` → the section is read again at the next turn; `/memory unlock` → PM-77 (asks `ui/confirm`); `/dream` → asks
//! `ui/confirm` unless `confirmed`, sets `ui/status` `dream`, runs the round, answers the
//! summary or `Dream failed: <msg>`. `text: null` means "print nothing" (a cancelled
//! confirmation).
//!
//! ## sidecar → pi
//!
//! | method | params | result |
//! |---|---|---|
//! | `model/complete` | [`ModelCompleteParams`](protocol::ModelCompleteParams) | [`ModelCompletion`](protocol::ModelCompletion); errors `-32010` unresolvable model, `-32011` provider failure |
//! | `models/resolve` | [`ModelsResolveParams`](protocol::ModelsResolveParams) | [`ModelsResolveResult`](protocol::ModelsResolveResult) |
//! | `ui/confirm` | [`ConfirmParams`](protocol::ConfirmParams) | [`ConfirmResult`](protocol::ConfirmResult) (`false` without a UI) |
//! | `ui/notify` (notification) | [`Notification`](protocol::Notification) | — shown only when pi has a UI (PM-79) |
//! | `ui/status` (notification) | [`StatusParams`](protocol::StatusParams) | — |
//! | `sessions/report` (notification) | [`SessionReport`](protocol::SessionReport) | — the end of an accepted ask, delivered with `pi.sendMessage(…, {deliverAs: "steer", triggerTurn: true})` |
//!
//! The `sessions/*` methods (pi-session, PS-01..PS-35) are described in the `sessions`
//! module; `ask-session`'s design (a child `pi --mode rpc --session <file>` per ask,
//! closed with the caller's lifecycle) in the `ask` module.
//!
//! `messages` are [`ModelMessage`](protocol::ModelMessage)s (`{role: "user", content}`,
//! `{role: "assistant", text, toolCalls}`, `{role: "toolResult", toolCallId, toolName,
//! content, isError}`); the extension converts them to pi-ai messages and calls
//! `ctx.modelRegistry.streamSimple` with `AbortSignal.timeout(timeoutMs)`.
//!
//! # Decisions
//! * Extension and sidecar both keep the frozen section: the extension sets it before
//!   awaiting anything, so the section is sent even when the sidecar is slow or gone.
//! * The record carries the window numbers (`{value, lines, bytes, truncated}`) so `/memory`'s
//!   `Inject:` line stays exact after `pi -c`, fork and reload.
//! * A missing model switches its module off (shown by `/memory`) instead of disabling
//!   memory: the store, tool, index and lexical surfacing need no model. A configured but
//!   unresolvable model is reported with pi-memory's `pi-memory config error:` notification.
//! * The sidecar exits 0 at end of input after waiting (at most `lock.timeoutMs`) for work
//!   still running, so a killed pi never leaves a write half done.
//!
//! # Limitations
//! * One session per process: a second `session/start` replaces the first.
//! * A section replayed from pi's transcript patches (no record of ours) gets its `Inject:`
//!   numbers from the sanitised value, which may count a few more bytes than the window.

mod admin;
mod agent;
mod ask;
mod curate;
mod curate_texts;
mod experience;
mod guard;
mod handlers;
mod index;
mod pimodel;
pub mod protocol;
mod rpc;
mod section;
mod session;
mod sessions;
mod tasks;
mod trace;
mod usage;

use std::io::{self, BufRead, Write};
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Result;
use parking_lot::{Condvar, Mutex};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use protocol::{Notify, Request};
use rpc::{Framed, MAX_LINE_BYTES, Peer, RpcError, code, read_line_capped};
use session::Session;
use tasks::Tasks;

/// The protocol version this binary speaks.
pub const PROTOCOL: u32 = 1;

/// Longest wait of a request for a `session/start` read before it.
const START_WAIT: Duration = Duration::from_secs(60);

/// Longest wait for in-flight work at end of input when no session configured one.
const DEFAULT_DRAIN: Duration = Duration::from_secs(5);

/// Shared state of one connection.
pub struct Server {
    /// The sending half.
    peer: Arc<Peer>,
    /// Running requests and background work.
    tasks: Arc<Tasks>,
    /// The current session (after `session/start`).
    session: Mutex<Option<Arc<Session>>>,
    /// `session/start` requests read but not finished: requests read after one of them see
    /// its session (pi awaits `session/start`, but a pipelining client must get order too).
    starting: Mutex<usize>,
    started: Condvar,
    /// pi-session: the session listing and the running asks (`sessions/*`).
    pisession: sessions::PiSession,
    /// The run log's event queue and writer thread (`run/event`).
    recorder: experience::Recorder,
    /// The extension's protocol and version from `initialize` (for `/memory doctor`).
    client: Mutex<Option<(u32, String)>>,
}

impl Server {
    fn new(peer: Arc<Peer>) -> Self {
        Server {
            peer,
            tasks: Arc::new(Tasks::default()),
            session: Mutex::new(None),
            starting: Mutex::new(0),
            started: Condvar::new(),
            pisession: sessions::PiSession::default(),
            recorder: experience::Recorder::default(),
            client: Mutex::new(None),
        }
    }

    /// The current session, once every `session/start` read before now has finished.
    fn session(&self) -> Option<Arc<Session>> {
        let mut n = self.starting.lock();
        let deadline = std::time::Instant::now() + START_WAIT;
        while *n > 0 {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            if left.is_zero() {
                break;
            }
            self.started.wait_for(&mut n, left);
        }
        drop(n);
        self.session.lock().clone()
    }

    fn start_begins(&self) {
        *self.starting.lock() += 1;
    }

    fn start_ends(&self) {
        let mut n = self.starting.lock();
        *n = n.saturating_sub(1);
        self.started.notify_all();
    }

    fn set_session(&self, s: Arc<Session>) {
        *self.session.lock() = Some(s);
    }
}

/// Runs the sidecar on stdin/stdout until end of input.
pub fn run() -> Result<()> {
    // A long-lived process: reuse one lock record file per memory directory instead of
    // creating an inode per write (see `memory_lock::enable_lock_slots`).
    trace::init();
    trace::mark("start", "");
    memory_core::lock_slots::enable();
    let stdin = io::stdin();
    let result = serve(stdin.lock(), Box::new(io::stdout()));
    memory_core::lock_slots::release();
    trace::mark("exit", "");
    result
}

/// Prints the `memory` tool definition (name, label, description, JSON schema) as JSON.
pub fn print_tool_schema() -> Result<()> {
    let mut out = io::stdout().lock();
    // through `Value`, whose objects keep their keys sorted like the protocol's messages
    let tool = serde_json::to_value(handlers::tool_definition())?;
    serde_json::to_writer_pretty(&mut out, &tool)?;
    out.write_all(b"\n")?;
    out.flush()?;
    Ok(())
}

/// Serves one connection: reads requests from `input` until end of input, answers on
/// `output`.
pub fn serve(mut input: impl BufRead, output: Box<dyn Write + Send>) -> Result<()> {
    let peer = Arc::new(Peer::new(output));
    let server = Arc::new(Server::new(peer.clone()));
    let mut buf = Vec::new();
    loop {
        match read_line_capped(&mut input, &mut buf, MAX_LINE_BYTES)? {
            Framed::Eof => break,
            Framed::TooLong => peer.respond(
                Value::Null,
                Err(RpcError::new(
                    code::INVALID_REQUEST,
                    format!("line longer than {MAX_LINE_BYTES} bytes refused"),
                )),
            ),
            Framed::Complete => {
                if !buf.iter().all(u8::is_ascii_whitespace) {
                    dispatch(&server, &buf);
                }
            }
        }
    }
    // pi is gone: nobody can answer our requests any more.
    peer.close();
    // A run still open was cut off: written as `recovery_required`, no end time.
    server.pisession.close();
    // A run still open was cut off: written as `recovery_required`, no end time.
    experience::close(&server);
    let drain = server
        .session()
        .map(|s| Duration::from_millis(s.cfg.lock.timeout_ms))
        .unwrap_or(DEFAULT_DRAIN);
    if !server.tasks.wait_until_at_most(0, drain) {
        server.tasks.cancel_all();
        server
            .tasks
            .wait_until_at_most(0, Duration::from_millis(200));
    }
    Ok(())
}

/// Handles one input line.
fn dispatch(server: &Arc<Server>, line: &[u8]) {
    let msg: Value = match serde_json::from_slice(line) {
        Ok(v) => v,
        Err(e) => {
            server.peer.respond(
                Value::Null,
                Err(RpcError::new(
                    code::PARSE_ERROR,
                    format!("Parse error: {e}"),
                )),
            );
            return;
        }
    };
    let id = msg.get("id").cloned();
    let Some(method) = msg.get("method") else {
        if msg.get("result").is_some() || msg.get("error").is_some() {
            server.peer.deliver(&msg);
        } else {
            server.peer.respond(
                id.unwrap_or(Value::Null),
                Err(RpcError::new(
                    code::INVALID_REQUEST,
                    "Invalid request: neither a request nor a response",
                )),
            );
        }
        return;
    };
    let Some(method) = method.as_str().map(str::to_owned) else {
        server.peer.respond(
            id.unwrap_or(Value::Null),
            Err(RpcError::new(
                code::INVALID_REQUEST,
                "Invalid request: \"method\" must be a string",
            )),
        );
        return;
    };
    let Some(id) = id else {
        // Notifications from pi: `run/event` only (others are ignored).
        if method == protocol::RunEventParams::METHOD {
            let params = msg.get("params").cloned().unwrap_or(Value::Null);
            experience::event(server, params);
        }
        return;
    };
    let params = msg.get("params").cloned().unwrap_or(Value::Null);
    trace::mark("recv", &method);
    let is_start = method == "session/start";
    if is_start {
        server.start_begins();
    }
    let worker = server.clone();
    server.tasks.spawn("pimem-request", move || {
        let reply = std::panic::catch_unwind(AssertUnwindSafe(|| handle(&worker, &method, params)));
        if is_start {
            worker.start_ends();
        }
        let reply = reply.unwrap_or_else(|_| {
            Err(RpcError::new(
                code::INTERNAL_ERROR,
                format!("internal error while handling {method}"),
            ))
        });
        worker.peer.respond(id, reply);
        trace::mark("answered", &method);
    });
}

/// Routes one request to its handler.
fn handle(server: &Arc<Server>, method: &str, params: Value) -> Result<Value, RpcError> {
    match method {
        protocol::InitializeParams::METHOD => answer(params, |p| handlers::initialize(server, p)),
        protocol::SessionStartParams::METHOD => {
            answer(params, |p| handlers::session_start(server, p))
        }
        protocol::BeforeStartParams::METHOD => {
            answer(params, |p| handlers::before_start(server, p))
        }
        protocol::SettledParams::METHOD => answer(params, |p| handlers::settled(server, p)),
        protocol::CompactParams::METHOD => answer(params, |p| handlers::compact(server, p)),
        protocol::ToolExecuteParams::METHOD => {
            answer(params, |p| handlers::tool_execute(server, p))
        }
        protocol::CommandParams::METHOD => answer(params, |p| handlers::command(server, p)),
        protocol::ShutdownParams::METHOD => {
            // Everything pi sent before is written; a run still open is cut off.
            experience::close(server);
            answer(params, |p| handlers::shutdown(server, p))
        }
        protocol::ExperienceRunParams::METHOD => answer(params, |p| experience::run(server, p)),
        protocol::PanelParams::METHOD => answer(params, |p| experience::panel(server, p)),
        protocol::ExperienceToolParams::METHOD => answer(params, |p| experience::tool(server, p)),
        protocol::FilesGuardParams::METHOD => answer(params, |p| admin::files_guard(server, p)),
        protocol::MemoryListParams::METHOD => answer(params, |p| curate::list(server, p)),
        protocol::MemoryOpenParams::METHOD => answer(params, |p| curate::open(server, p)),
        protocol::MemorySaveParams::METHOD => answer(params, |p| curate::save(server, p)),
        protocol::MemoryDeleteParams::METHOD => answer(params, |p| curate::delete(server, p)),
        protocol::SessionTreeParams::METHOD => answer(params, |p| curate::session_tree(server, p)),
        m if m.starts_with("sessions/") => sessions::route(server, m, params),
        other => Err(RpcError::new(
            code::METHOD_NOT_FOUND,
            format!("Method not found: {other}"),
        )),
    }
}

/// Reads `params` as the method's params type, runs the handler, and writes its result as
/// JSON.
fn answer<P>(
    params: Value,
    handler: impl FnOnce(P) -> Result<P::Result, RpcError>,
) -> Result<Value, RpcError>
where
    P: Request + DeserializeOwned,
    P::Result: Serialize,
{
    let result = handler(protocol::parse(params)?)?;
    serde_json::to_value(result).map_err(|e| {
        RpcError::new(
            code::INTERNAL_ERROR,
            format!("cannot write the result: {e}"),
        )
    })
}
