//! The `Model` trait: the only way this crate reaches a language model.
//!
//! One call is one chat completion: a system prompt, messages, tool definitions (JSON schema),
//! a deadline and a cancellation flag in; text, tool calls and a stop reason out. Hosts plug in
//! their own implementation: the pi sidecar forwards the call to pi (which owns credentials),
//! the CLI uses the OpenAI-compatible HTTP model (feature `http`), tests use scripted fakes.
//! The trait is blocking on purpose: every caller is a background task on its own thread, and
//! a blocking signature keeps the crate free of any async runtime.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use memory_core::Task;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A tool the model may call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolDef {
    /// Tool name.
    pub name: String,
    /// What the tool does, for the model.
    pub description: String,
    /// JSON schema of the arguments.
    pub parameters: Value,
}

/// A tool call the model made.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    /// Provider-assigned call id (echoed in the result).
    pub id: String,
    /// Tool name.
    pub name: String,
    /// Arguments as JSON (an object for well-behaved models; anything for others).
    pub arguments: Value,
}

/// One message of a conversation sent to the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "camelCase")]
pub enum Message {
    /// A user turn.
    User {
        /// Text content.
        content: String,
    },
    /// An earlier model turn.
    Assistant {
        /// Its text.
        #[serde(default)]
        text: String,
        /// Its tool calls.
        #[serde(default, rename = "toolCalls")]
        tool_calls: Vec<ToolCall>,
    },
    /// The result of a tool call.
    ToolResult {
        /// The call this answers.
        #[serde(rename = "toolCallId")]
        call_id: String,
        /// Tool name.
        #[serde(rename = "toolName")]
        name: String,
        /// Result text.
        content: String,
        /// Whether the tool failed.
        #[serde(default, rename = "isError")]
        is_error: bool,
    },
}

/// Why the model stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum StopReason {
    /// Finished normally.
    Stop,
    /// Wants tool results.
    ToolUse,
    /// Hit its output limit.
    Length,
    /// Failed.
    Error,
    /// Cancelled.
    Aborted,
}

/// A cancellation flag shared between a task and whoever may stop it.
#[derive(Debug, Clone, Default)]
pub struct CancelToken(Arc<AtomicBool>);

impl CancelToken {
    /// A fresh, un-cancelled token.
    pub fn new() -> Self {
        CancelToken::default()
    }

    /// Requests cancellation.
    pub fn cancel(&self) {
        self.0.store(true, Ordering::SeqCst);
    }

    /// Whether cancellation was requested.
    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::SeqCst)
    }
}

/// Everything one completion needs. Which model answers, and how hard it thinks, is the
/// [`Model`] implementation's business (a host builds one per task if it wants different
/// models); `task` says which task is asking.
#[derive(Debug, Clone)]
pub struct CompletionRequest {
    /// The task asking (surfacing, extraction, dream).
    pub task: Task,
    /// System prompt.
    pub system: String,
    /// Conversation so far.
    pub messages: Vec<Message>,
    /// Tools the model may call (empty = none).
    pub tools: Vec<ToolDef>,
    /// The call must finish by then.
    pub deadline: Instant,
    /// Cooperative cancellation.
    pub cancel: CancelToken,
}

impl CompletionRequest {
    /// Time left until the deadline (zero when past).
    pub fn remaining(&self) -> Duration {
        self.deadline.saturating_duration_since(Instant::now())
    }

    /// The contract every [`Model`] honours, in one line: `Err(Cancelled)` when the request
    /// was cancelled, `Err(Timeout)` when its deadline has passed, else the time left.
    ///
    /// ```
    /// # use memory_agent::{Completion, CompletionRequest, Model, ModelError, StopReason};
    /// struct Echo;
    /// impl Model for Echo {
    ///     fn complete(&self, req: &CompletionRequest) -> Result<Completion, ModelError> {
    ///         let _time_left = req.check()?;
    ///         Ok(Completion { text: "ok".into(), tool_calls: vec![], stop_reason: StopReason::Stop })
    ///     }
    /// }
    /// ```
    pub fn check(&self) -> Result<Duration, ModelError> {
        if self.cancel.is_cancelled() {
            return Err(ModelError::Cancelled);
        }
        match self.remaining() {
            left if left.is_zero() => Err(ModelError::Timeout),
            left => Ok(left),
        }
    }
}

/// The model's answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Completion {
    /// Text output.
    #[serde(default)]
    pub text: String,
    /// Tool calls, in order.
    #[serde(default, rename = "toolCalls")]
    pub tool_calls: Vec<ToolCall>,
    /// Why it stopped.
    #[serde(rename = "stopReason")]
    pub stop_reason: StopReason,
}

/// Why a completion failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ModelError {
    /// The deadline passed.
    #[error("model call timed out")]
    Timeout,
    /// The call was cancelled.
    #[error("model call was cancelled")]
    Cancelled,
    /// The model id cannot be resolved or has no credentials.
    #[error("model \"{0}\" is not resolvable (unknown id or missing credentials)")]
    Unresolvable(String),
    /// The provider or transport failed.
    #[error("{0}")]
    Failed(String),
}

/// A chat-completion backend.
pub trait Model: Send + Sync {
    /// Runs one completion. Implementations must honour `req.deadline` and `req.cancel`:
    /// start with [`CompletionRequest::check`].
    fn complete(&self, req: &CompletionRequest) -> Result<Completion, ModelError>;
}

impl<M: Model + ?Sized> Model for &M {
    fn complete(&self, req: &CompletionRequest) -> Result<Completion, ModelError> {
        (**self).complete(req)
    }
}

impl<M: Model + ?Sized> Model for Arc<M> {
    fn complete(&self, req: &CompletionRequest) -> Result<Completion, ModelError> {
        (**self).complete(req)
    }
}
