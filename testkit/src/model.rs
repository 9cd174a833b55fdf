//! [`ScriptedModel`]: a [`Model`] that answers each call with the next queued result and
//! records every request, so a test can drive a headless agent turn by turn and then assert
//! on exactly what the model was shown. It honours the [`Model`] contract: a cancelled
//! request gets [`ModelError::Cancelled`], one past its deadline [`ModelError::Timeout`].
//!
//! ```
//! use memory_agent::{CancelToken, CompletionRequest, Model, Task};
//! use serde_json::json;
//! use testkit::{ScriptedModel, memory_call, text};
//!
//! let model = ScriptedModel::new([memory_call(json!({"action": "list"})), text("done")]);
//! let req = CompletionRequest {
//!     task: Task::Dream,
//!     system: String::new(),
//!     messages: vec![],
//!     tools: vec![],
//!     deadline: std::time::Instant::now() + std::time::Duration::from_secs(5),
//!     cancel: CancelToken::new(),
//! };
//! assert_eq!(model.complete(&req).unwrap().tool_calls[0].name, "memory");
//! assert_eq!(model.complete(&req).unwrap().text, "done");
//! assert!(model.complete(&req).is_err()); // script exhausted
//! assert_eq!(model.requests().len(), 3);
//! ```

use parking_lot::Mutex;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::Value;

use memory_agent::{Completion, CompletionRequest, Model, ModelError, StopReason, ToolCall};

type Hook = Box<dyn Fn(usize, &CompletionRequest) + Send + Sync>;

/// A [`Model`] that replays a script of results and records the requests it got.
pub struct ScriptedModel {
    script: Mutex<VecDeque<Result<Completion, ModelError>>>,
    requests: Mutex<Vec<CompletionRequest>>,
    hook: Option<Hook>,
}

impl std::fmt::Debug for ScriptedModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ScriptedModel")
            .field("remaining", &self.script.lock().len())
            .field("requests", &self.requests.lock().len())
            .finish()
    }
}

impl ScriptedModel {
    /// A model answering with these completions, in order.
    pub fn new(script: impl IntoIterator<Item = Completion>) -> Self {
        Self::with_results(script.into_iter().map(Ok))
    }

    /// A model answering with these results (completions or errors), in order.
    pub fn with_results(script: impl IntoIterator<Item = Result<Completion, ModelError>>) -> Self {
        ScriptedModel {
            script: Mutex::new(script.into_iter().collect()),
            requests: Mutex::new(Vec::new()),
            hook: None,
        }
    }

    /// Runs `hook(call_index, request)` at the start of every call (0-based), before the
    /// cancellation and deadline checks: tests use it to change the world between turns
    /// (write through another store, cancel, wait out a deadline).
    pub fn on_call(
        mut self,
        hook: impl Fn(usize, &CompletionRequest) + Send + Sync + 'static,
    ) -> Self {
        self.hook = Some(Box::new(hook));
        self
    }

    /// Queues one more completion.
    pub fn push(&self, completion: Completion) {
        self.script.lock().push_back(Ok(completion));
    }

    /// Every request received so far, in order.
    pub fn requests(&self) -> Vec<CompletionRequest> {
        self.requests.lock().clone()
    }

    /// How many calls were made.
    pub fn calls(&self) -> usize {
        self.requests.lock().len()
    }

    /// Scripted results not consumed yet.
    pub fn remaining(&self) -> usize {
        self.script.lock().len()
    }
}

impl Model for ScriptedModel {
    fn complete(&self, req: &CompletionRequest) -> Result<Completion, ModelError> {
        let index = {
            let mut requests = self.requests.lock();
            requests.push(req.clone());
            requests.len() - 1
        };
        if let Some(hook) = &self.hook {
            hook(index, req);
        }
        req.check()?;
        self.script.lock().pop_front().unwrap_or_else(|| {
            Err(ModelError::Failed(format!(
                "ScriptedModel: no scripted completion left for call {}",
                index + 1
            )))
        })
    }
}

static CALL_IDS: AtomicUsize = AtomicUsize::new(1);

/// A final answer: `text`, no tool calls, stop reason `Stop`.
pub fn text(text: impl Into<String>) -> Completion {
    Completion {
        text: text.into(),
        tool_calls: Vec::new(),
        stop_reason: StopReason::Stop,
    }
}

/// A turn with tool calls (`(name, arguments)`, ids `call_<n>`), optional text, stop reason
/// `ToolUse`.
pub fn tool_calls(
    text: impl Into<String>,
    calls: impl IntoIterator<Item = (&'static str, Value)>,
) -> Completion {
    Completion {
        text: text.into(),
        tool_calls: calls
            .into_iter()
            .map(|(name, arguments)| ToolCall {
                id: format!("call_{}", CALL_IDS.fetch_add(1, Ordering::Relaxed)),
                name: name.to_owned(),
                arguments,
            })
            .collect(),
        stop_reason: StopReason::ToolUse,
    }
}

/// A turn with one `memory` tool call and no text.
pub fn memory_call(arguments: Value) -> Completion {
    tool_calls("", [("memory", arguments)])
}

/// A turn with several `memory` tool calls and no text.
pub fn memory_calls(arguments: impl IntoIterator<Item = Value>) -> Completion {
    tool_calls("", arguments.into_iter().map(|a| ("memory", a)))
}
