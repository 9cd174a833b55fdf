//! [`PiModel`]: `memory_agent::Model` over the connection. Every completion becomes a
//! `model/complete` request to pi, which runs it through its own model registry (and so its
//! credentials, providers and virtual models); the sidecar never sees an API key.
//!
//! pi names models `provider/model-id` and gives each task a thinking level in
//! `memory.json`; both are pi's business, so they live here and not in the library's
//! requests: one `PiModel` per task.

use std::sync::Arc;
use std::time::Duration;

use memory_agent::{Completion, CompletionRequest, Model, ModelError};
use memory_core::{Config, Task};

use super::protocol::{ModelCompleteParams, ModelMessage, ModelTool};
use super::rpc::{CallError, Peer, code};

/// Extra time granted to pi beyond the request deadline (pi enforces the deadline itself
/// with `AbortSignal.timeout`; this only covers the reply's trip back).
const REPLY_GRACE: Duration = Duration::from_millis(500);

/// A model reached through pi.
#[derive(Clone)]
pub(super) struct PiModel {
    peer: Arc<Peer>,
    /// `provider/model-id`, resolved by pi's registry.
    model: String,
    /// pi's thinking level (`off`, `low`, `high`, ...).
    think_level: String,
}

impl PiModel {
    /// The model `memory.json` configures for `task` (`<task>.model` ?? `defaults.model`,
    /// with the task's `thinkLevel`), forwarding to the pi on the other end of `peer`.
    /// `None` when no model is configured.
    pub(super) fn for_task(peer: Arc<Peer>, cfg: &Config, task: Task) -> Option<Self> {
        let think_level = match task {
            Task::Dream => &cfg.dream.think_level,
            Task::ExtractMemories => &cfg.extract_memories.think_level,
            Task::AutoSurfacing => &cfg.auto_surfacing.think_level,
            Task::Experience => &cfg.experience.think_level,
        };
        Some(PiModel {
            peer,
            model: cfg.task_model(task)?.to_owned(),
            think_level: think_level.clone(),
        })
    }
}

impl Model for PiModel {
    fn complete(&self, req: &CompletionRequest) -> Result<Completion, ModelError> {
        let left = req.check()?;
        let params = ModelCompleteParams {
            model: self.model.clone(),
            think_level: self.think_level.clone(),
            system: req.system.clone(),
            messages: req.messages.iter().map(ModelMessage::from).collect(),
            tools: req.tools.iter().map(ModelTool::from).collect(),
            timeout_ms: u64::try_from(left.as_millis()).unwrap_or(u64::MAX).max(1),
        };
        match self
            .peer
            .call(&params, left + REPLY_GRACE, Some(&req.cancel))
        {
            Ok(completion) => Ok(Completion::from(completion)),
            Err(CallError::Malformed(e)) => Err(ModelError::Failed(format!(
                "pi returned a malformed completion: {e}"
            ))),
            Err(CallError::Timeout) => Err(ModelError::Timeout),
            Err(CallError::Cancelled) => Err(ModelError::Cancelled),
            Err(CallError::Closed) => Err(ModelError::Failed("pi closed the connection".into())),
            Err(CallError::Rpc(e)) if e.code == code::MODEL_UNRESOLVABLE => {
                Err(ModelError::Unresolvable(self.model.clone()))
            }
            Err(CallError::Rpc(e)) if e.code == code::MODEL_FAILED => {
                Err(ModelError::Failed(e.message))
            }
            Err(CallError::Rpc(e)) => Err(ModelError::Failed(format!(
                "pi could not run the model call: {}",
                e.message
            ))),
        }
    }
}
