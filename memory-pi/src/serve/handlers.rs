//! One function per method pi may call. Each runs on its own worker thread and returns the
//! `result` (or an error response); see the protocol in the [`super`] module docs.

use std::sync::Arc;
use std::time::Duration;

use memory_agent::dream::{DREAM_CONFIRM_BODY, DREAM_CONFIRM_TITLE, DREAM_STATUS_TEXT};
use memory_core::tool::{self, MAIN_ACTIONS, TOOL_DESCRIPTION, TOOL_NAME};
use memory_core::{LockState, Target, misconfigured_block, status_block};
use serde_json::{Value, json};

use super::agent;
use super::params::Params;
use super::rpc::{RpcError, code};
use super::section::{self, RECORD_TYPE, SECTION_NAME};
use super::session::{self, Session, notification};
use super::{PROTOCOL, Server};

/// The tool's label in pi's UI.
const TOOL_LABEL: &str = "Memory";

/// The one line pi shows under `<tools>` for the memory tool.
const TOOL_SNIPPET: &str =
    "Persistent project memory across sessions: add, replace, remove, list, search";

/// How long a `ui/confirm` may wait for the user.
const CONFIRM_TIMEOUT: Duration = Duration::from_secs(24 * 60 * 60);

/// The `memory` tool as registered with pi: name, label, description, JSON schema.
pub fn tool_definition() -> Value {
    json!({
        "name": TOOL_NAME,
        "label": TOOL_LABEL,
        "description": TOOL_DESCRIPTION,
        "promptSnippet": TOOL_SNIPPET,
        "parameters": tool::parameters_schema(MAIN_ACTIONS),
    })
}

/// `initialize`: the version handshake.
pub fn initialize(p: Params<'_>) -> Result<Value, RpcError> {
    let theirs = p.value("protocol")?;
    let version = env!("CARGO_PKG_VERSION");
    if theirs.as_u64() != Some(u64::from(PROTOCOL)) {
        let shown = match theirs {
            Value::Number(n) => n.to_string(),
            other => other.to_string(),
        };
        return Err(RpcError {
            code: code::PROTOCOL_MISMATCH,
            message: format!(
                "pimem {version} speaks protocol {PROTOCOL} but the pi extension speaks protocol {shown}: rebuild and reinstall both from the same checkout (cargo xtask install)"
            ),
            data: Some(
                json!({ "protocol": PROTOCOL, "version": version, "tool": tool_definition() }),
            ),
        });
    }
    Ok(json!({
        "protocol": PROTOCOL,
        "version": version,
        "tool": tool_definition(),
        "section": SECTION_NAME,
        "recordType": RECORD_TYPE,
    }))
}

/// `session/start`.
pub fn session_start(server: &Server, p: Params<'_>) -> Result<Value, RpcError> {
    let started = session::start(&server.peer, p)?;
    let session = Arc::new(started.session);
    let (value, record) = {
        let live = session.live.lock();
        let record = started.record.then(|| section::record_json(&live.section));
        (live.section.value.clone(), record)
    };
    let nudge = agent::nudge(&session);
    let lock_timeout_ms = session.cfg.lock.timeout_ms;
    server.set_session(session.clone());
    // Read every entry now, while pi is still starting, so the first surfacing finds the
    // store's cache warm.
    if session.project_if_open().is_some() && !session.info.child {
        server.tasks.spawn("pimem-warm", move || {
            if let Some(p) = session.project_if_open() {
                let _ = p.store.list();
                // Temp and lock-record files left by killed processes (dot files, invisible
                // to listings) are tidied here, off the critical path.
                p.store.clean_stale_temps();
            }
        });
    }
    Ok(json!({
        "section": value,
        "lockTimeoutMs": lock_timeout_ms,
        "record": record,
        "notifications": started.notifications,
        "nudge": nudge,
    }))
}

/// `agent/before_start`: remembers the project instructions, then surfaces memories.
pub fn before_start(server: &Server, p: Params<'_>) -> Result<Value, RpcError> {
    let prompt = p.opt_str("prompt")?.unwrap_or("");
    let message_type = p.opt_str("messageType")?.unwrap_or("user");
    let system_prompt = p.opt_str("systemPrompt")?.unwrap_or("");
    let Some(session) = server.session() else {
        return Ok(json!({ "message": null, "notify": null }));
    };
    agent::remember_instructions(&session, system_prompt);
    let skip = session.info.child
        || prompt.trim().is_empty()
        || message_type != "user"
        || system_prompt.contains("<active_agent name=\"")
        || !session.cfg.auto_surfacing.enabled;
    if skip {
        return Ok(json!({ "message": null, "notify": null }));
    }
    Ok(match agent::surface(server, &session, prompt) {
        Some(s) => json!({
            "message": {
                "customType": "memory-auto-surfacing",
                "content": s.message,
                "display": false,
                "details": { "files": s.files },
            },
            "notify": s.notification(),
        }),
        None => json!({ "message": null, "notify": null }),
    })
}

/// `agent/settled`: answers at once; extraction runs in the background.
pub fn settled(server: &Arc<Server>, p: Params<'_>) -> Result<Value, RpcError> {
    let messages = p.array("messages")?.to_vec();
    let aborted = p.bool_or("aborted", false)?;
    if let Some(session) = server.session()
        && session.cfg.extract_memories.enabled
        && !session.info.child
        && !aborted
        && !messages.is_empty()
    {
        agent::spawn_extract(server, session, messages);
    }
    Ok(json!({}))
}

/// `session/compact`: the one in-session refresh of the section (PM-57), and the surfaced
/// set starts over (PM-64).
pub fn compact(server: &Server) -> Result<Value, RpcError> {
    let Some(session) = server.session() else {
        return Ok(json!({ "section": "", "record": null }));
    };
    let Ok(project) = session.project() else {
        let live = session.live.lock();
        return Ok(json!({ "section": live.section.value, "record": null }));
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
    Ok(json!({
        "section": live.section.value,
        "record": section::record_json(&live.section),
    }))
}

/// `tool/execute`: one call of the `memory` tool.
pub fn tool_execute(server: &Server, p: Params<'_>) -> Result<Value, RpcError> {
    let args = p.value("args")?;
    let Some(session) = server.session() else {
        return Ok(tool_error("Memory not initialized (no session_start yet)"));
    };
    let project = match session.project() {
        Ok(p) => p,
        Err(errors) => {
            let first = errors.first().map(String::as_str).unwrap_or("unknown error");
            return Ok(tool_error(&format!(
                "Memory not initialized — {first}; run /memory for details"
            )));
        }
    };
    let out = {
        let mut versions = session.versions.lock();
        tool::execute(
            Target::Store(&project.store),
            MAIN_ACTIONS,
            args,
            Some(session.sessions.as_ref()),
            &mut versions,
        )
    };
    if session.info.has_ui {
        if let Some(name) = &out.saved {
            server.notify_user(&format!("Saved: {name}"), "info");
        }
        for n in &out.notices {
            server.notify_user(&n.to_string(), "warning");
        }
    }
    Ok(json!({
        "text": out.text,
        "isError": out.is_error,
        "details": {
            "action": args.get("action").cloned().unwrap_or(Value::Null),
            "wrote": out.wrote,
            "saved": out.saved,
            "notices": out.notices.iter().map(ToString::to_string).collect::<Vec<_>>(),
        },
    }))
}

fn tool_error(text: &str) -> Value {
    json!({ "text": text, "isError": true, "details": {} })
}

fn reply(text: impl Into<String>, level: &str) -> Value {
    json!({ "text": text.into(), "level": level })
}

fn silent() -> Value {
    json!({ "text": null, "level": "info" })
}

/// `command/run`: `/memory [status|unlock]` and `/dream`.
pub fn command(server: &Server, p: Params<'_>) -> Result<Value, RpcError> {
    let name = p.str("name")?;
    let args = p.opt_str("args")?.unwrap_or("").trim();
    let confirmed = p.bool_or("confirmed", false)?;
    match name {
        "memory" => Ok(match args.split_whitespace().next() {
            Some("unlock") => unlock(server, confirmed),
            _ => status(server),
        }),
        "dream" => Ok(dream(server, confirmed)),
        other => Err(RpcError::invalid_params(format!(
            "invalid params: \"name\" must be \"memory\" or \"dream\", not \"{other}\""
        ))),
    }
}

/// `/memory` (PM-75, PM-76).
fn status(server: &Server) -> Value {
    let Some(session) = server.session() else {
        return reply("Memory not initialized.", "info");
    };
    let project = match session.project() {
        Ok(p) => p,
        Err(errors) => return reply(misconfigured_block(&errors), "error"),
    };
    let inject = session.live.lock().section.clone();
    match status_block(
        &project.store,
        &session.cfg,
        &session.modules,
        Some(&inject),
    ) {
        Ok(text) => reply(text, "info"),
        Err(e) => reply(format!("Failed to read memory status: {e}"), "error"),
    }
}

/// `/memory unlock` (PM-77, VECTORS M13/M14).
fn unlock(server: &Server, confirmed: bool) -> Value {
    let Some(session) = server.session() else {
        return reply("Memory not initialized.", "info");
    };
    let Ok(project) = session.project() else {
        return reply("No lock present.", "info");
    };
    let store = &project.store;
    let body = match store.lock_state() {
        Ok(LockState::Free) => return reply("No lock present.", "info"),
        Ok(LockState::Held(h)) => format!(
            "Remove the memory lock file? It is held by {}. Only do this if no memory operation is running.",
            h.describe()
        ),
        Ok(LockState::Unreadable { .. }) => {
            "Remove the memory lock file? Only do this if no memory operation is running."
                .to_owned()
        }
        Err(e) => return reply(format!("Failed to remove memory lock: {e}"), "error"),
    };
    if !confirmed && !server.confirm(&session, "Memory lock", &body) {
        return silent();
    }
    match store.remove_lock() {
        Ok(true) => reply("Memory lock removed.", "info"),
        Ok(false) => reply("No lock present.", "info"),
        Err(e) => reply(format!("Failed to remove memory lock: {e}"), "error"),
    }
}

/// `/dream` (PM-69).
fn dream(server: &Server, confirmed: bool) -> Value {
    let Some(session) = server.session() else {
        return reply("Memory not initialized.", "info");
    };
    if let Err(errors) = session.project() {
        return reply(misconfigured_block(&errors), "error");
    }
    if !confirmed && !server.confirm(&session, DREAM_CONFIRM_TITLE, DREAM_CONFIRM_BODY) {
        if session.info.has_ui {
            return silent();
        }
        // Decision: headless pi answers every confirmation with "no"; say why nothing ran.
        return reply(
            "Dream not started: it needs a confirmation, which print and json modes cannot give. Run /dream in pi's terminal UI or over --mode rpc.",
            "warning",
        );
    }
    server.status(&session, "dream", Some(DREAM_STATUS_TEXT));
    let outcome = agent::dream(server, &session);
    server.status(&session, "dream", None);
    match outcome {
        Ok(summary) => reply(summary, "info"),
        Err(text) => reply(text, "error"),
    }
}

/// `session/shutdown`: waits for in-flight background work, at most `lock.timeoutMs` (PM-51).
pub fn shutdown(server: &Server) -> Result<Value, RpcError> {
    let timeout = server
        .session()
        .map(|s| Duration::from_millis(s.cfg.lock.timeout_ms))
        .unwrap_or(Duration::from_secs(5));
    // This request's own worker counts as one running task.
    let finished = server.tasks.wait_until_at_most(1, timeout);
    if !finished {
        server.tasks.cancel_all();
    }
    Ok(json!({ "finished": finished }))
}

impl Server {
    /// `ui/notify` when pi has a UI (PM-79: headless sessions never notify).
    pub fn notify_user(&self, message: &str, level: &str) {
        let has_ui = self.session().is_some_and(|s| s.info.has_ui);
        if has_ui {
            self.peer.notify("ui/notify", notification(message, level));
        }
    }

    /// `ui/status` when pi has a UI.
    pub fn status(&self, session: &Session, key: &str, text: Option<&str>) {
        if session.info.has_ui {
            self.peer
                .notify("ui/status", json!({ "key": key, "text": text }));
        }
    }

    /// `ui/confirm`; `false` without a UI, on error, or when pi does not answer.
    pub fn confirm(&self, session: &Session, title: &str, body: &str) -> bool {
        if !session.info.has_ui {
            return false;
        }
        self.peer
            .request(
                "ui/confirm",
                json!({ "title": title, "body": body }),
                CONFIRM_TIMEOUT,
                None,
            )
            .ok()
            .and_then(|v| v.get("confirmed").and_then(Value::as_bool))
            .unwrap_or(false)
    }
}
