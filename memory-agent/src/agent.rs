//! The headless agent loop: a [`Model`] that may only call the `memory` tool.
//!
//! One run is a system prompt plus one user prompt; every tool call runs natively through
//! [`memory_core::tool::execute`] on a [`Target`] (the store, or a held [`memory_core::Round`])
//! with one shared [`VersionBook`], its text goes back to the model as the tool result, and
//! the run ends when the model answers without calling a tool.
//!
//! Limits, as pi-memory's `runHeadlessAgent`:
//! - **Turns.** A turn is one completion plus the tool calls it made. After turn `max_turns`
//!   (if the model still called tools) the user message [`TURN_LIMIT_MESSAGE`] is appended and
//!   exactly one more turn runs — the *grace turn*, tools still offered and its tool calls
//!   still executed — and then the run ends whatever the model wanted next. A model that stops
//!   calling tools on turn `max_turns` just ends; the steering message is never sent then.
//! - **Wall clock.** One deadline for the whole run, passed into every [`CompletionRequest`]
//!   and checked before every model call and every tool call. Passing it (or a cancellation)
//!   ends the run with [`AgentError::Timeout`] / [`AgentError::Cancelled`]; writes already
//!   made stay (the errors carry how many).

use std::time::{Duration, Instant};

use memory_core::StoreError;
use memory_core::tool::{
    Action, SessionSearch, TOOL_DESCRIPTION, TOOL_NAME, Target, ToolOutput, VersionBook, execute,
    parameters_schema,
};

use crate::model::{
    CancelToken, CompletionRequest, Message, Model, ModelError, StopReason, ToolCall, ToolDef,
};

/// The steering message of the grace turn (pi-memory `agent-runner.ts`).
pub const TURN_LIMIT_MESSAGE: &str = "You have reached your turn limit. Finish now.";

/// The tool text of a compare-and-swap failure (`memory_core::StoreError::Conflict`).
const CONFLICT_TEXT: &str = "Memory conflict: stale version";

/// What one headless run is asked to do.
#[derive(Debug, Clone)]
pub struct AgentSpec {
    /// `provider/model-id`, passed through to the [`Model`].
    pub model: String,
    /// Thinking level passed through to the [`Model`].
    pub think_level: String,
    /// System prompt.
    pub system: String,
    /// The initial user message (the task).
    pub prompt: String,
    /// The memory actions the tool offers (`MAIN_ACTIONS` or `DREAM_ACTIONS`).
    pub actions: &'static [Action],
    /// Turns before the grace turn; `None` = no turn limit (only the timeout).
    pub max_turns: Option<usize>,
    /// Wall-clock limit of the whole run.
    pub timeout: Duration,
}

impl AgentSpec {
    /// The single tool definition offered to the model: `memory` with the spec's actions.
    pub fn tool_def(&self) -> ToolDef {
        memory_tool_def(self.actions)
    }
}

/// The `memory` tool definition for an action set (name, description, JSON schema).
pub fn memory_tool_def(actions: &[Action]) -> ToolDef {
    ToolDef {
        name: TOOL_NAME.to_owned(),
        description: TOOL_DESCRIPTION.to_owned(),
        parameters: parameters_schema(actions),
    }
}

/// One tool call the model made and what it got back.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCallRecord {
    /// The call as the model made it.
    pub call: ToolCall,
    /// The result returned to the model.
    pub output: ToolOutput,
}

/// A finished run.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct AgentRun {
    /// The final answer: the last assistant text, or the latest non-empty one before it when
    /// the last turn had none (pi's `getLastAssistantText` fallback).
    pub text: String,
    /// Completions made (including the grace turn).
    pub turns: usize,
    /// Every tool call in order, with its output.
    pub calls: Vec<ToolCallRecord>,
    /// Tool calls that changed the memory directory.
    pub writes: usize,
    /// Notices for the user from the writes (reclaimed lock, repaired index).
    pub notices: Vec<String>,
    /// Tool calls refused with `Memory conflict: stale version`.
    pub conflicts: usize,
    /// The run was ended by the turn limit (after the grace turn).
    pub turn_limit_reached: bool,
    /// The whole conversation after the system prompt: the task prompt, every model turn and
    /// tool result, in order (for `sessionPersistence`, PM-80).
    pub transcript: Vec<Message>,
}

/// Why a headless run failed. Writes made before the failure stay on disk; the variants
/// that can happen mid-run say how many there were.
#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    /// The task has no model (`<task>.model` and `defaults.model` both unset).
    #[error("no model configured for {task} (set {task}.model or defaults.model in memory.json)")]
    NoModel {
        /// The task key (`dream`, `extractMemories`).
        task: &'static str,
    },
    /// The wall-clock limit passed.
    #[error("headless agent timed out after {timeout_ms}ms")]
    Timeout {
        /// The limit.
        timeout_ms: u64,
        /// Successful writes before it passed.
        writes: usize,
    },
    /// The run was cancelled.
    #[error("headless agent was cancelled")]
    Cancelled {
        /// Successful writes before the cancellation.
        writes: usize,
    },
    /// The model call failed (provider error, unresolvable model, error stop reason).
    #[error("{source}")]
    Model {
        /// The model's error.
        source: ModelError,
        /// Successful writes before it failed.
        writes: usize,
    },
    /// Setting up or finishing the round failed (lock busy, snapshot, `.dream-meta.json`).
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl AgentError {
    /// Successful writes made before the failure (0 for set-up failures).
    pub fn writes(&self) -> usize {
        match self {
            AgentError::Timeout { writes, .. }
            | AgentError::Cancelled { writes }
            | AgentError::Model { writes, .. } => *writes,
            AgentError::NoModel { .. } | AgentError::Store(_) => 0,
        }
    }
}

/// Runs one headless agent to completion.
///
/// `versions` is shared with the caller: seed it with the entries a prompt showed so that
/// every `replace`/`remove`/`rename` is conditional on the version the model read.
/// `sessions` backs `search` with `scope: "sessions"` (absent: the tool says it is not
/// available).
///
/// # Errors
/// [`AgentError::Timeout`], [`AgentError::Cancelled`] or [`AgentError::Model`]; tool failures
/// are not errors (the model gets the error text and carries on).
pub fn run_agent(
    model: &dyn Model,
    target: Target<'_, '_>,
    versions: &mut VersionBook,
    sessions: Option<&dyn SessionSearch>,
    spec: &AgentSpec,
    cancel: &CancelToken,
) -> Result<AgentRun, AgentError> {
    let start = Instant::now();
    // A limit too large for `Instant` means "no limit" in practice: a century.
    let deadline = start
        .checked_add(spec.timeout)
        .or_else(|| start.checked_add(Duration::from_secs(100 * 365 * 24 * 3600)))
        .unwrap_or(start);
    let timeout_ms = u64::try_from(spec.timeout.as_millis()).unwrap_or(u64::MAX);
    let tools = vec![spec.tool_def()];
    let mut messages = vec![Message::User {
        content: spec.prompt.clone(),
    }];
    let mut run = AgentRun::default();
    let mut grace = false;

    let check = |run: &AgentRun| -> Result<(), AgentError> {
        if cancel.is_cancelled() {
            return Err(AgentError::Cancelled { writes: run.writes });
        }
        if Instant::now() >= deadline {
            return Err(AgentError::Timeout {
                timeout_ms,
                writes: run.writes,
            });
        }
        Ok(())
    };

    loop {
        check(&run)?;
        let request = CompletionRequest {
            model: spec.model.clone(),
            think_level: spec.think_level.clone(),
            system: spec.system.clone(),
            messages: messages.clone(),
            tools: tools.clone(),
            deadline,
            cancel: cancel.clone(),
        };
        let completion = match model.complete(&request) {
            Ok(c) => c,
            Err(ModelError::Timeout) => {
                return Err(AgentError::Timeout {
                    timeout_ms,
                    writes: run.writes,
                });
            }
            Err(ModelError::Cancelled) => return Err(AgentError::Cancelled { writes: run.writes }),
            Err(source) => {
                return Err(AgentError::Model {
                    source,
                    writes: run.writes,
                });
            }
        };
        // An answer that arrives after the deadline or the cancellation is not acted on.
        check(&run)?;
        match completion.stop_reason {
            StopReason::Aborted => return Err(AgentError::Cancelled { writes: run.writes }),
            StopReason::Error => {
                let message = if completion.text.trim().is_empty() {
                    "the model returned an error".to_owned()
                } else {
                    completion.text.clone()
                };
                return Err(AgentError::Model {
                    source: ModelError::Failed(message),
                    writes: run.writes,
                });
            }
            StopReason::Stop | StopReason::ToolUse | StopReason::Length => {}
        }
        run.turns += 1;
        if !completion.text.is_empty() {
            run.text = completion.text.clone();
        }
        messages.push(Message::Assistant {
            text: completion.text.clone(),
            tool_calls: completion.tool_calls.clone(),
        });
        if completion.tool_calls.is_empty() {
            run.transcript = messages;
            return Ok(run);
        }
        for call in completion.tool_calls {
            check(&run)?;
            let output = if call.name == TOOL_NAME {
                execute(target, spec.actions, &call.arguments, sessions, versions)
            } else {
                ToolOutput {
                    text: format!("Tool {} not found", call.name),
                    is_error: true,
                    ..ToolOutput::default()
                }
            };
            if output.wrote {
                run.writes += 1;
            }
            if output.is_error && output.text.starts_with(CONFLICT_TEXT) {
                run.conflicts += 1;
            }
            run.notices.extend(output.notices.iter().cloned());
            messages.push(Message::ToolResult {
                call_id: call.id.clone(),
                name: call.name.clone(),
                content: output.text.clone(),
                is_error: output.is_error,
            });
            run.calls.push(ToolCallRecord { call, output });
        }
        if grace {
            run.turn_limit_reached = true;
            run.transcript = messages;
            return Ok(run);
        }
        if spec.max_turns.is_some_and(|max| run.turns >= max) {
            grace = true;
            messages.push(Message::User {
                content: TURN_LIMIT_MESSAGE.to_owned(),
            });
        }
    }
}

/// Saves a finished headless run as a pi session file when the task's `sessionPersistence`
/// is enabled (PM-80): into `sessionPersistence.sessionDir` (`~` expands to `home`) or
/// `<project memory dir>/sessions/`. A failure to save becomes one of the run's notices (the
/// run itself stands).
pub fn persist_run(
    store: &memory_core::Store,
    cfg: &memory_core::Config,
    task: memory_core::Task,
    spec: &AgentSpec,
    run: &mut AgentRun,
    started: jiff::Timestamp,
) {
    if let Some(notice) = save_run(store, cfg, task, spec, run, started) {
        run.notices.push(notice);
    }
}

fn save_run(
    store: &memory_core::Store,
    cfg: &memory_core::Config,
    task: memory_core::Task,
    spec: &AgentSpec,
    run: &AgentRun,
    started: jiff::Timestamp,
) -> Option<String> {
    let persistence = cfg.task_session_persistence(task);
    if !persistence.enabled {
        return None;
    }
    let dir = match persistence.session_dir.as_deref() {
        Some(d) if d == "~" || d.starts_with("~/") => match memory_core::home_dir() {
            Some(home) => home.join(d.trim_start_matches('~').trim_start_matches('/')),
            None => return Some("Cannot save the headless session: HOME is not set".to_owned()),
        },
        Some(d) if std::path::Path::new(d).is_absolute() => std::path::PathBuf::from(d),
        Some(d) => store.dir().join(d),
        None => store.dir().join("sessions"),
    };
    let cwd = store.dir().to_string_lossy();
    let meta = crate::sessions::HeadlessSession {
        task: task.key(),
        model: &spec.model,
        cwd: &cwd,
        system: &spec.system,
        started,
    };
    let (file, text) = crate::sessions::render_headless_session(&meta, &run.transcript);
    memory_core::write_private_file(&dir.join(file), text.as_bytes())
        .err()
        .map(|e| format!("Cannot save the headless session: {e}"))
}
