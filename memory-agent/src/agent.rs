//! The headless agent loop: a [`Model`] that may only call the `memory` tool.
//!
//! One run is a system prompt plus one user prompt; every tool call runs natively through a
//! [`MemoryTool`] (over the store, or a held [`memory_core::Round`], with its
//! compare-and-swap versions), its text goes back to the model as the tool result, and the
//! run ends when the model answers without calling a tool. Observers see every turn and
//! tool call, and the whole transcript when the run ends, successful or not.
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

use std::sync::Arc;
use std::time::{Duration, Instant};

use memory_core::tool::{TOOL_NAME, ToolOutput};
use memory_core::{Notice, StoreError, Task};

use crate::model::{
    CancelToken, CompletionRequest, Message, Model, ModelError, StopReason, ToolCall,
};
use crate::options::{FinishedRun, RunObserver, notify_finished};
use crate::tool::MemoryTool;

/// The steering message of the grace turn (pi-memory `agent-runner.ts`).
pub const TURN_LIMIT_MESSAGE: &str = "You have reached your turn limit. Finish now.";

/// What one headless run is asked to do.
#[derive(Debug, Clone)]
pub struct AgentSpec {
    /// The task running (tells the model implementation and the observers).
    pub task: Task,
    /// System prompt.
    pub system: String,
    /// The initial user message (the task).
    pub prompt: String,
    /// Turns before the grace turn; `None` = no turn limit (only the timeout).
    pub max_turns: Option<usize>,
    /// Wall-clock limit of the whole run.
    pub timeout: Duration,
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
    /// Notices from the writes (reclaimed lock, repaired index).
    pub notices: Vec<Notice>,
    /// Observers that could not record the run (e.g. the session file could not be saved).
    pub warnings: Vec<String>,
    /// Tool calls refused with `Memory conflict: stale version`.
    pub conflicts: usize,
    /// The run was ended by the turn limit (after the grace turn).
    pub turn_limit_reached: bool,
    /// The whole conversation after the system prompt: the task prompt, every model turn and
    /// tool result, in order.
    pub transcript: Vec<Message>,
}

/// Why a headless run failed. Writes made before the failure stay on disk; the variants
/// that can happen mid-run say how many there were.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AgentError {
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
            AgentError::Store(_) => 0,
        }
    }
}

/// Runs one headless agent to completion with `tool` as its only tool.
///
/// Seed the tool's versions ([`MemoryTool::saw`]) with the entries the prompt shows, so that
/// every `replace`/`remove`/`rename` is conditional on the version the model read.
/// `observers` see each turn, each tool call and, at the end, the transcript with the
/// outcome (a failed run too).
///
/// # Errors
/// [`AgentError::Timeout`], [`AgentError::Cancelled`] or [`AgentError::Model`]; tool failures
/// are not errors (the model gets the error text and carries on).
pub fn run_agent(
    model: &dyn Model,
    tool: &mut MemoryTool<'_, '_>,
    spec: &AgentSpec,
    observers: &[Arc<dyn RunObserver>],
    cancel: &CancelToken,
) -> Result<AgentRun, AgentError> {
    let started = tool.target().options().clock.now();
    let mut run = AgentRun::default();
    let mut messages = vec![Message::User {
        content: spec.prompt.clone(),
    }];
    let result = drive(
        model,
        tool,
        spec,
        observers,
        cancel,
        &mut run,
        &mut messages,
    );
    let error = result.as_ref().err().map(ToString::to_string);
    let finished = FinishedRun {
        task: spec.task,
        memory_dir: tool.target().dir(),
        system: &spec.system,
        transcript: &messages,
        started,
        error: error.as_deref(),
    };
    run.warnings.extend(notify_finished(observers, &finished));
    run.transcript = messages;
    result.map(|()| run)
}

/// The loop itself; `run` and `messages` hold whatever happened when it returns.
fn drive(
    model: &dyn Model,
    tool: &mut MemoryTool<'_, '_>,
    spec: &AgentSpec,
    observers: &[Arc<dyn RunObserver>],
    cancel: &CancelToken,
    run: &mut AgentRun,
    messages: &mut Vec<Message>,
) -> Result<(), AgentError> {
    let start = Instant::now();
    // A limit too large for `Instant` means "no limit" in practice: a century.
    let deadline = start
        .checked_add(spec.timeout)
        .or_else(|| start.checked_add(Duration::from_secs(100 * 365 * 24 * 3600)))
        .unwrap_or(start);
    let timeout_ms = u64::try_from(spec.timeout.as_millis()).unwrap_or(u64::MAX);
    let tools = vec![tool.def()];
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
        check(run)?;
        for o in observers {
            o.turn_started(spec.task, run.turns + 1);
        }
        let request = CompletionRequest {
            task: spec.task,
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
        check(run)?;
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
            return Ok(());
        }
        for call in completion.tool_calls {
            check(run)?;
            let output = if call.name == TOOL_NAME {
                tool.call(&call.arguments)
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
            if output.is_error && output.text.starts_with(memory_index::STALE_VERSION) {
                run.conflicts += 1;
            }
            run.notices.extend(output.notices.iter().cloned());
            messages.push(Message::ToolResult {
                call_id: call.id.clone(),
                name: call.name.clone(),
                content: output.text.clone(),
                is_error: output.is_error,
            });
            let record = ToolCallRecord { call, output };
            for o in observers {
                o.tool_called(spec.task, &record);
            }
            run.calls.push(record);
        }
        if grace {
            run.turn_limit_reached = true;
            return Ok(());
        }
        if spec.max_turns.is_some_and(|max| run.turns >= max) {
            grace = true;
            messages.push(Message::User {
                content: TURN_LIMIT_MESSAGE.to_owned(),
            });
        }
    }
}
