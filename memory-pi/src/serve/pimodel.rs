//! [`PiModel`]: `memory_agent::Model` over the connection. Every completion becomes a
//! `model/complete` request to pi, which runs it through its own model registry (and so its
//! credentials, providers and virtual models); the sidecar never sees an API key.

use std::sync::Arc;
use std::time::Duration;

use memory_agent::{Completion, CompletionRequest, Model, ModelError};
use serde_json::json;

use super::rpc::{CallError, Peer, code};

/// Extra time granted to pi beyond the request deadline (pi enforces the deadline itself
/// with `AbortSignal.timeout`; this only covers the reply's trip back).
const REPLY_GRACE: Duration = Duration::from_millis(500);

/// A model reached through pi.
#[derive(Clone)]
pub struct PiModel {
    peer: Arc<Peer>,
}

impl PiModel {
    /// A model forwarding to the pi on the other end of `peer`.
    pub fn new(peer: Arc<Peer>) -> Self {
        PiModel { peer }
    }
}

impl Model for PiModel {
    fn complete(&self, req: &CompletionRequest) -> Result<Completion, ModelError> {
        if req.cancel.is_cancelled() {
            return Err(ModelError::Cancelled);
        }
        let left = req.remaining();
        if left.is_zero() {
            return Err(ModelError::Timeout);
        }
        let params = json!({
            "model": req.model,
            "thinkLevel": req.think_level,
            "system": req.system,
            "messages": req.messages,
            "tools": req.tools,
            "timeoutMs": u64::try_from(left.as_millis()).unwrap_or(u64::MAX).max(1),
        });
        match self.peer.request(
            "model/complete",
            params,
            left + REPLY_GRACE,
            Some(&req.cancel),
        ) {
            Ok(v) => serde_json::from_value::<Completion>(v).map_err(|e| {
                ModelError::Failed(format!("pi returned a malformed completion: {e}"))
            }),
            Err(CallError::Timeout) => Err(ModelError::Timeout),
            Err(CallError::Cancelled) => Err(ModelError::Cancelled),
            Err(CallError::Closed) => Err(ModelError::Failed("pi closed the connection".into())),
            Err(CallError::Rpc(e)) if e.code == code::MODEL_UNRESOLVABLE => {
                Err(ModelError::Unresolvable(req.model.clone()))
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
