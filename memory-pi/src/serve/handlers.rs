//! One function per method pi may call. Each runs on its own worker thread and returns the
//! `result` (or an error response); see the protocol in the [`super`] module docs.

use std::sync::Arc;
use std::time::Duration;

use memory_agent::dream::{DREAM_CONFIRM_BODY, DREAM_CONFIRM_TITLE, DREAM_STATUS_TEXT};
use memory_core::tool::{self, MAIN_ACTIONS, TOOL_DESCRIPTION, TOOL_NAME};
use memory_core::{LockState, Target, misconfigured_block, status_block};
use serde_json::Value;

use super::admin;
use super::agent;
use super::protocol::{
    BeforeStartParams, BeforeStartResult, CommandParams, CommandResult, CompactParams,
    CompactResult, ConfirmParams, InitializeParams, InitializeResult, Level, Notification,
    ProtocolMismatch, SessionStartParams, SessionStartResult, SettledParams, SettledResult,
    ShutdownParams, ShutdownResult, StatusParams, SurfacedDetails, SurfacedMessage, ToolDetails,
    ToolExecuteParams, ToolExecuteResult, ToolRegistration,
};
use super::rpc::{RpcError, code};
use super::section::{self, RECORD_TYPE, SECTION_NAME};
use super::session::{self, Session};
use super::{PROTOCOL, Server};

/// The `client` of `initialize` that is the pi extension released with this binary.
const EXTENSION_CLIENT: &str = "pimem-pi";

/// The tool's label in pi's UI.
const TOOL_LABEL: &str = "Memory";

/// The one line pi shows under `<tools>` for the memory tool.
const TOOL_SNIPPET: &str =
    "Persistent project memory across sessions: add, replace, remove, list, search";

/// How long a `ui/confirm` may wait for the user.
const CONFIRM_TIMEOUT: Duration = Duration::from_secs(24 * 60 * 60);

/// The `memory` tool as registered with pi: name, label, description, JSON schema.
pub(super) fn tool_definition() -> ToolRegistration {
    ToolRegistration {
        name: TOOL_NAME.to_owned(),
        label: TOOL_LABEL.to_owned(),
        description: TOOL_DESCRIPTION.to_owned(),
        prompt_snippet: TOOL_SNIPPET.to_owned(),
        parameters: tool::parameters_schema(MAIN_ACTIONS),
    }
}

/// `initialize`: the version handshake.
pub(super) fn initialize(
    server: &Server,
    p: InitializeParams,
) -> Result<InitializeResult, RpcError> {
    let version = env!("CARGO_PKG_VERSION");
    if let Some(n) = p.protocol.as_u64().and_then(|n| u32::try_from(n).ok()) {
        *server.client.lock() = Some((n, p.client_version.clone()));
    }
    if p.protocol.as_u64() != Some(u64::from(PROTOCOL)) {
        let shown = p.protocol.to_string();
        let data = ProtocolMismatch {
            protocol: PROTOCOL,
            version: version.to_owned(),
            tool: tool_definition(),
        };
        return Err(RpcError {
            code: code::PROTOCOL_MISMATCH,
            message: format!(
                "pimem {version} speaks protocol {PROTOCOL} but the pi extension speaks protocol {shown}: rebuild and reinstall both from the same checkout (cargo xtask install)"
            ),
            data: serde_json::to_value(data).ok(),
        });
    }
    // Decision: the pi extension and this binary are released together at one version (npm
    // pins the platform package to the extension's exact version), so the handshake refuses a
    // pair that differs, naming both versions and how to reinstall. Other clients' versions
    // are informational.
    if p.client == EXTENSION_CLIENT && !p.client_version.is_empty() && p.client_version != version {
        let data = ProtocolMismatch {
            protocol: PROTOCOL,
            version: version.to_owned(),
            tool: tool_definition(),
        };
        let client_version = &p.client_version;
        return Err(RpcError {
            code: code::VERSION_MISMATCH,
            message: format!(
                "pimem {version} does not match the pi extension {client_version}: install one version of both ({})",
                crate::platform::reinstall_hint(client_version)
            ),
            data: serde_json::to_value(data).ok(),
        });
    }
    Ok(InitializeResult {
        protocol: PROTOCOL,
        version: version.to_owned(),
        tool: tool_definition(),
        section: SECTION_NAME.to_owned(),
        record_type: RECORD_TYPE.to_owned(),
    })
}

/// `session/start`.
pub(super) fn session_start(
    server: &Server,
    p: SessionStartParams,
) -> Result<SessionStartResult, RpcError> {
    super::curate::invalidate(); // views of the previous session can no longer write (PA-46)
    let started = session::start(&server.peer, p);
    let session = Arc::new(started.session);
    let (value, record) = {
        let live = session.live.lock();
        let record = started.record.then(|| section::record(&live.section));
        (live.section.value.clone(), record)
    };
    let nudge = if session.live.lock().suspended {
        None // memory off or paused: no dream nudge
    } else {
        agent::nudge(&session)
    };
    let lock_timeout_ms = session.cfg.lock.timeout_ms;
    server.set_session(session.clone());
    // Warm up now, while pi is still starting, so the first surfacing finds the listing
    // and the lexical index ready (see `warm`).
    if session.project_if_open().is_some() && !session.info.child {
        let warming = super::index::Warming::begin(session.clone());
        server
            .tasks
            .spawn("pimem-warm", move || super::index::warm(&session, warming));
    }
    Ok(SessionStartResult {
        section: value,
        record,
        lock_timeout_ms,
        notifications: started.notifications,
        nudge,
    })
}

/// `agent/before_start`: remembers the project instructions, then surfaces memories.
pub(super) fn before_start(
    server: &Server,
    p: BeforeStartParams,
) -> Result<BeforeStartResult, RpcError> {
    let prompt = p.prompt.as_deref().unwrap_or("");
    let message_type = p.message_type.as_deref().unwrap_or("user");
    let system_prompt = p.system_prompt.as_str();
    let Some(session) = server.session() else {
        return Ok(BeforeStartResult {
            message: None,
            notify: None,
            section: None,
            record: None,
        });
    };
    // The switch, checked at every turn start (PA-15): off → no section, no surfacing.
    let state = session.switch.state();
    let (section, record) = admin::section_for_turn(&session, &state);
    let nothing = BeforeStartResult {
        message: None,
        notify: None,
        section: section.clone(),
        record: record.clone(),
    };
    agent::remember_instructions(&session, system_prompt);
    if message_type == "user" {
        super::curate::record_turn(&session);
    }
    let skip = !state.is_on()
        || session.info.child
        || prompt.trim().is_empty()
        || message_type != "user"
        || system_prompt.contains("<active_agent name=\"")
        || !session.cfg.auto_surfacing.enabled;
    if skip {
        return Ok(nothing);
    }
    Ok(match agent::surface(server, &session, prompt) {
        Some(s) => {
            super::curate::record_surfaced(&session, &s.files);
            BeforeStartResult {
                notify: s.notification(),
                message: Some(SurfacedMessage {
                    custom_type: "memory-auto-surfacing",
                    content: s.message,
                    display: false,
                    details: SurfacedDetails { files: s.files },
                }),
                section,
                record,
            }
        }
        None => nothing,
    })
}

/// `agent/settled`: answers at once; extraction runs in the background.
pub(super) fn settled(server: &Arc<Server>, p: SettledParams) -> Result<SettledResult, RpcError> {
    if let Some(session) = server.session()
        && session.cfg.extract_memories.enabled
        && session.switch.state().is_on()
        && !session.info.child
        && !p.aborted
        && !p.messages.is_empty()
    {
        agent::spawn_extract(server, session, p.messages);
    }
    Ok(SettledResult {})
}

/// `session/compact`: the one in-session refresh of the section (PM-57), and the surfaced
/// set starts over (PM-64).
pub(super) fn compact(server: &Server, _: CompactParams) -> Result<CompactResult, RpcError> {
    let Some(session) = server.session() else {
        return Ok(CompactResult {
            section: String::new(),
            record: None,
        });
    };
    if !session.switch.state().is_on() {
        session.live.lock().suspended = true;
        return Ok(CompactResult {
            section: String::new(),
            record: None,
        });
    }
    let Ok(project) = session.project() else {
        let live = session.live.lock();
        return Ok(CompactResult {
            section: live.section.value.clone(),
            record: None,
        });
    };
    let cfg = &session.cfg;
    let fresh = project
        .store
        .index_section(
            cfg.mem_index_inject_max_lines,
            cfg.mem_index_inject_max_bytes,
        )
        .map_err(|e| {
            RpcError::new(
                code::INTERNAL_ERROR,
                format!("cannot read the memory index: {e}"),
            )
        })?;
    session.surfacer.lock().reset();
    let mut live = session.live.lock();
    live.section = fresh;
    live.refresh = false;
    live.index_changed = false;
    Ok(CompactResult {
        section: live.section.value.clone(),
        record: Some(section::record(&live.section)),
    })
}

/// `tool/execute`: one call of the `memory` tool.
pub(super) fn tool_execute(
    server: &Server,
    p: ToolExecuteParams,
) -> Result<ToolExecuteResult, RpcError> {
    let args = &p.args;
    let Some(session) = server.session() else {
        return Ok(tool_error("Memory not initialized (no session_start yet)"));
    };
    let project = match session.project() {
        Ok(p) => p,
        Err(errors) => {
            let first = errors
                .first()
                .map(String::as_str)
                .unwrap_or("unknown error");
            return Ok(tool_error(&format!(
                "Memory not initialized — {first}; run /memory for details"
            )));
        }
    };
    if let Some(refusal) = admin::tool_refusal(&session, &project) {
        return Ok(tool_error(&refusal));
    }
    let out = {
        let mut versions = session.versions.lock();
        // The session's lexical index answers the duplicate check of `add`.
        let mut surfacer = session.surfacer.lock();
        tool::execute_with(
            Target::Store(&project.store),
            MAIN_ACTIONS,
            args,
            Some(session.sessions.as_ref()),
            Some(surfacer.index_mut()),
            &mut versions,
        )
    };
    super::curate::record_tool(&session, args, out.wrote, out.saved.as_deref());
    if session.info.has_ui {
        if let Some(name) = &out.saved {
            server.notify_user(&format!("Saved: {name}"), Level::Info);
        }
        for n in &out.notices {
            server.notify_user(&n.to_string(), Level::Warning);
        }
    }
    Ok(ToolExecuteResult {
        text: out.text,
        is_error: out.is_error,
        details: ToolDetails::Ran {
            action: args.get("action").cloned().unwrap_or(Value::Null),
            wrote: out.wrote,
            saved: out.saved,
            notices: out.notices.iter().map(ToString::to_string).collect(),
            count: out.count,
        },
    })
}

fn tool_error(text: &str) -> ToolExecuteResult {
    ToolExecuteResult {
        text: text.to_owned(),
        is_error: true,
        details: ToolDetails::NotRun {},
    }
}

fn reply(text: impl Into<String>, level: Level) -> CommandResult {
    CommandResult::show(text, level)
}

fn silent() -> CommandResult {
    CommandResult::silent()
}

/// `command/run`: `/memory [status|unlock]` and `/dream`.
pub(super) fn command(server: &Server, p: CommandParams) -> Result<CommandResult, RpcError> {
    let args = p.args.trim();
    let confirmed = p.confirmed.unwrap_or(false);
    match p.name.as_str() {
        "memory" => Ok(match args.split_whitespace().next() {
            Some("unlock") => unlock(server, confirmed),
            Some("on") => admin::switch_command(server, true),
            Some("off") => admin::switch_command(server, false),
            Some("doctor") => admin::doctor_command(server),
            Some("list") => super::curate::list_command(server),
            Some("reload") => super::curate::reload_command(server),
            _ => status(server),
        }),
        "dream" => Ok(dream(server, confirmed)),
        other => Err(RpcError::invalid_params(format!(
            "invalid params: \"name\" must be \"memory\" or \"dream\", not \"{other}\""
        ))),
    }
}

/// `/memory` (PM-75, PM-76).
fn status(server: &Server) -> CommandResult {
    let Some(session) = server.session() else {
        return reply("Memory not initialized.", Level::Info);
    };
    let project = match session.project() {
        Ok(p) => p,
        Err(errors) => return reply(misconfigured_block(&errors), Level::Error),
    };
    let state = session.switch.state();
    // Off or paused: nothing is injected, whatever the frozen value was.
    let inject = if state.is_on() {
        session.live.lock().section.clone()
    } else {
        section::empty()
    };
    match status_block(
        &project.store,
        &session.cfg,
        &session.modules,
        Some(&inject),
    ) {
        Ok(text) => {
            let text = match super::curate::status_suffix(&session, state.is_on()) {
                Some(suffix) => format!("{text}\n\n{suffix}"),
                None => text,
            };
            match memory_core::messages::status_switch_line(&state) {
                // Off or paused: one line before pi-memory's 7 (PA-16; PM-75 when on).
                Some(line) => reply(format!("{line}\n{text}"), Level::Warning),
                None => reply(text, Level::Info),
            }
        }
        Err(e) => reply(format!("Failed to read memory status: {e}"), Level::Error),
    }
}

/// `/memory unlock` (PM-77, VECTORS M13/M14).
fn unlock(server: &Server, confirmed: bool) -> CommandResult {
    let Some(session) = server.session() else {
        return reply("Memory not initialized.", Level::Info);
    };
    let Ok(project) = session.project() else {
        return reply("No lock present.", Level::Info);
    };
    let store = &project.store;
    let body = match store.lock_state() {
        Ok(LockState::Free) => return reply("No lock present.", Level::Info),
        Ok(LockState::Held(h)) => format!(
            "Remove the memory lock file? It is held by {}. Only do this if no memory operation is running.",
            h.describe()
        ),
        Ok(LockState::Unreadable { .. }) => {
            "Remove the memory lock file? Only do this if no memory operation is running."
                .to_owned()
        }
        Err(e) => return reply(format!("Failed to remove memory lock: {e}"), Level::Error),
    };
    if !confirmed && !server.confirm(&session, "Memory lock", &body) {
        return silent();
    }
    match store.remove_lock() {
        Ok(true) => reply("Memory lock removed.", Level::Info),
        Ok(false) => reply("No lock present.", Level::Info),
        Err(e) => reply(format!("Failed to remove memory lock: {e}"), Level::Error),
    }
}

/// `/dream` (PM-69).
fn dream(server: &Server, confirmed: bool) -> CommandResult {
    let Some(session) = server.session() else {
        return reply("Memory not initialized.", Level::Info);
    };
    if let Err(errors) = session.project() {
        return reply(misconfigured_block(&errors), Level::Error);
    }
    if let Some(refusal) = session.switch.state().refusal() {
        return reply(
            memory_core::messages::dream_refused(&refusal),
            Level::Warning,
        );
    }
    if !confirmed && !server.confirm(&session, DREAM_CONFIRM_TITLE, DREAM_CONFIRM_BODY) {
        if session.info.has_ui {
            return silent();
        }
        // Decision: headless pi answers every confirmation with "no"; say why nothing ran.
        return reply(
            "Dream not started: it needs a confirmation, which print and json modes cannot give. Run /dream in pi's terminal UI or over --mode rpc.",
            Level::Warning,
        );
    }
    server.status(&session, "dream", Some(DREAM_STATUS_TEXT));
    let outcome = agent::dream(server, &session);
    server.status(&session, "dream", None);
    match outcome {
        Ok(summary) => reply(summary, Level::Info),
        Err(text) => reply(text, Level::Error),
    }
}

/// `session/shutdown`: waits for in-flight background work, at most `lock.timeoutMs` (PM-51).
pub(super) fn shutdown(server: &Server, _: ShutdownParams) -> Result<ShutdownResult, RpcError> {
    // Asks end with their caller's lifecycle, and their late reports are dropped (PS-30).
    server.pisession.close();
    super::curate::invalidate(); // an edit still open can no longer be saved (PA-46)
    let timeout = server
        .session()
        .map(|s| Duration::from_millis(s.cfg.lock.timeout_ms))
        .unwrap_or(Duration::from_secs(5));
    // This request's own worker counts as one running task.
    let finished = server.tasks.wait_until_at_most(1, timeout);
    if !finished {
        server.tasks.cancel_all();
    }
    if let Some(session) = server.session() {
        super::index::persist(&session);
    }
    Ok(ShutdownResult { finished })
}

impl Server {
    /// `ui/notify` when pi has a UI (PM-79: headless sessions never notify).
    pub fn notify_user(&self, message: &str, level: Level) {
        let has_ui = self.session().is_some_and(|s| s.info.has_ui);
        if has_ui {
            self.peer.notify(&Notification::new(message, level));
        }
    }

    /// `ui/status` when pi has a UI.
    pub fn status(&self, session: &Session, key: &str, text: Option<&str>) {
        if session.info.has_ui {
            self.peer.notify(&StatusParams {
                key: key.to_owned(),
                text: text.map(str::to_owned),
            });
        }
    }

    /// `ui/confirm`; `false` without a UI, on error, or when pi does not answer.
    pub fn confirm(&self, session: &Session, title: &str, body: &str) -> bool {
        if !session.info.has_ui {
            return false;
        }
        let question = ConfirmParams {
            title: title.to_owned(),
            body: body.to_owned(),
        };
        // An error, no answer or a malformed one counts as "no".
        self.peer
            .call(&question, CONFIRM_TIMEOUT, None)
            .is_ok_and(|r| r.confirmed)
    }
}
