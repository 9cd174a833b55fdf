//! An OpenAI-compatible chat-completions [`Model`] (feature `http`; `http-tls` adds TLS).
//!
//! For hosts without their own model plumbing (the CLI, scripts): one blocking
//! `POST {base_url}/chat/completions` per completion, non-streaming (`"stream": false`), the
//! memory tool as an OpenAI function tool. Works with OpenAI and the many servers that copy
//! its API (local llama.cpp / vLLM / Ollama servers, proxies). Without `http-tls` only
//! `http://` URLs work — enough for local servers; real providers need `http-tls`
//! (rustls with the webpki root certificates).
//!
//! - Model id: the provider's own id (`gpt-4o-mini`), given to [`HttpModel::new`].
//! - Thinking: `reasoning_effort` is sent only when set with
//!   [`HttpModel::with_reasoning_effort`] to a level other than `off` (`minimal`, `low`,
//!   `medium`, `high`; `xhigh` and `max` become `high`): many servers reject the field.
//! - Tool-call arguments come back as a JSON string: parsed into a value; an empty string is
//!   `{}`; invalid JSON is kept as a string value (the memory tool then answers
//!   `arguments must be a JSON object` and the model can retry).
//! - `finish_reason`: `stop` → `Stop`, `tool_calls`/`function_call` → `ToolUse`, `length` →
//!   `Length`, `content_filter` → `Error`; absent or unknown → `ToolUse` when there are tool
//!   calls, else `Stop`.
//! - Deadline: the request's remaining time is the request's global timeout; a request
//!   with no time left is not sent. Cancellation is checked before sending and after the
//!   answer (a blocking request cannot be interrupted; the deadline bounds the wait).
//! - Errors name the HTTP status and the provider's `error.message` (or the start of the
//!   body). The API key is never part of any error or `Debug` output; a provider message
//!   that echoes it is scrubbed.

use std::time::Duration;

use serde_json::{Map, Value, json};

use crate::model::{
    Completion, CompletionRequest, Message, Model, ModelError, StopReason, ToolCall,
};

/// Longest provider body quoted in an error.
const MAX_ERROR_BODY_CHARS: usize = 500;

/// An OpenAI-compatible chat-completions backend.
#[derive(Clone)]
pub struct HttpModel {
    base_url: String,
    model: String,
    api_key: Option<String>,
    reasoning_effort: Option<&'static str>,
    max_tokens: Option<u32>,
    agent: ureq::Agent,
}

impl std::fmt::Debug for HttpModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpModel")
            .field("base_url", &self.base_url)
            .field("model", &self.model)
            .field("api_key", &self.api_key.as_ref().map(|_| "<set>"))
            .field("reasoning_effort", &self.reasoning_effort)
            .field("max_tokens", &self.max_tokens)
            .finish()
    }
}

impl HttpModel {
    /// The model `model` (the provider's id, e.g. `gpt-4o-mini`) at `base_url` (e.g.
    /// `https://api.openai.com/v1`, `http://127.0.0.1:8080/v1`; `/chat/completions` is
    /// appended), without an API key.
    pub fn new(base_url: impl Into<String>, model: impl Into<String>) -> Self {
        let config = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .max_idle_connections(4)
            .build();
        HttpModel {
            base_url: base_url.into().trim_end_matches('/').to_owned(),
            model: model.into(),
            api_key: None,
            reasoning_effort: None,
            max_tokens: None,
            agent: config.into(),
        }
    }

    /// Uses this API key (sent as `Authorization: Bearer …`).
    pub fn with_api_key(mut self, key: impl Into<String>) -> Self {
        let key = key.into();
        self.api_key = (!key.is_empty()).then_some(key);
        self
    }

    /// Reads the API key from the environment variable `var`.
    ///
    /// # Errors
    /// [`ModelError::Failed`] naming the variable (never a value) when it is unset, empty
    /// or not Unicode.
    #[allow(clippy::disallowed_methods)] // the caller named this variable for its key
    pub fn with_api_key_env(self, var: &str) -> Result<Self, ModelError> {
        match std::env::var(var) {
            Ok(key) if !key.is_empty() => Ok(self.with_api_key(key)),
            _ => Err(ModelError::Failed(format!(
                "environment variable {var} (the API key for {}) is not set",
                self.base_url
            ))),
        }
    }

    /// Sends `reasoning_effort` for this thinking level (`off`, or any level the API does not
    /// know, sends nothing).
    pub fn with_reasoning_effort(mut self, level: &str) -> Self {
        self.reasoning_effort = reasoning_effort(level);
        self
    }

    /// Sends `max_tokens`.
    pub fn with_max_tokens(mut self, max_tokens: u32) -> Self {
        self.max_tokens = Some(max_tokens);
        self
    }

    /// The endpoint requests go to.
    pub fn endpoint(&self) -> String {
        format!("{}/chat/completions", self.base_url)
    }

    /// The JSON body sent for `req` (public for inspection and tests).
    pub fn request_body(&self, req: &CompletionRequest) -> Value {
        let mut messages = Vec::with_capacity(req.messages.len() + 1);
        if !req.system.is_empty() {
            messages.push(json!({"role": "system", "content": req.system}));
        }
        messages.extend(req.messages.iter().map(wire_message));
        let mut body = Map::new();
        body.insert("model".into(), json!(self.model));
        body.insert("messages".into(), Value::Array(messages));
        body.insert("stream".into(), json!(false));
        if !req.tools.is_empty() {
            let tools: Vec<Value> = req
                .tools
                .iter()
                .map(|t| {
                    json!({
                        "type": "function",
                        "function": {
                            "name": t.name,
                            "description": t.description,
                            "parameters": t.parameters,
                        }
                    })
                })
                .collect();
            body.insert("tools".into(), Value::Array(tools));
        }
        if let Some(effort) = self.reasoning_effort {
            body.insert("reasoning_effort".into(), json!(effort));
        }
        if let Some(max) = self.max_tokens {
            body.insert("max_tokens".into(), json!(max));
        }
        Value::Object(body)
    }

    fn scrub(&self, text: &str) -> String {
        match &self.api_key {
            Some(key) if key.len() >= 4 => text.replace(key.as_str(), "***"),
            _ => text.to_owned(),
        }
    }
}

fn reasoning_effort(level: &str) -> Option<&'static str> {
    match level {
        "minimal" => Some("minimal"),
        "low" => Some("low"),
        "medium" => Some("medium"),
        "high" | "xhigh" | "max" => Some("high"),
        _ => None,
    }
}

fn wire_message(m: &Message) -> Value {
    match m {
        Message::User { content } => json!({"role": "user", "content": content}),
        Message::Assistant { text, tool_calls } => {
            if tool_calls.is_empty() {
                return json!({"role": "assistant", "content": text});
            }
            let calls: Vec<Value> = tool_calls
                .iter()
                .map(|c| {
                    let arguments = match &c.arguments {
                        Value::String(raw) => raw.clone(),
                        other => other.to_string(),
                    };
                    json!({
                        "id": c.id,
                        "type": "function",
                        "function": {"name": c.name, "arguments": arguments},
                    })
                })
                .collect();
            let content = if text.is_empty() {
                Value::Null
            } else {
                json!(text)
            };
            json!({"role": "assistant", "content": content, "tool_calls": calls})
        }
        Message::ToolResult {
            call_id, content, ..
        } => json!({"role": "tool", "tool_call_id": call_id, "content": content}),
    }
}

fn content_text(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join(""),
        _ => String::new(),
    }
}

fn parse_arguments(raw: &str) -> Value {
    if raw.trim().is_empty() {
        return Value::Object(Map::new());
    }
    serde_json::from_str(raw).unwrap_or_else(|_| Value::String(raw.to_owned()))
}

/// Parses a chat-completions response body into a [`Completion`].
///
/// # Errors
/// [`ModelError::Failed`] when the body is not JSON or has no `choices[0].message`.
pub fn parse_response(body: &str) -> Result<Completion, ModelError> {
    let value: Value = serde_json::from_str(body)
        .map_err(|e| ModelError::Failed(format!("the model server sent invalid JSON: {e}")))?;
    let choice = value
        .get("choices")
        .and_then(|c| c.get(0))
        .ok_or_else(|| ModelError::Failed("the model server sent no choices".to_owned()))?;
    let message = choice
        .get("message")
        .ok_or_else(|| ModelError::Failed("the model server sent no message".to_owned()))?;
    let mut tool_calls = Vec::new();
    if let Some(Value::Array(calls)) = message.get("tool_calls") {
        for (i, call) in calls.iter().enumerate() {
            let function = call.get("function");
            let Some(name) = function.and_then(|f| f.get("name")).and_then(Value::as_str) else {
                continue;
            };
            let arguments = match function.and_then(|f| f.get("arguments")) {
                Some(Value::String(raw)) => parse_arguments(raw),
                Some(Value::Null) | None => Value::Object(Map::new()),
                Some(other) => other.clone(),
            };
            let id = call
                .get("id")
                .and_then(Value::as_str)
                .map_or_else(|| format!("call_{i}"), str::to_owned);
            tool_calls.push(ToolCall {
                id,
                name: name.to_owned(),
                arguments,
            });
        }
    }
    let stop_reason = match choice.get("finish_reason").and_then(Value::as_str) {
        Some("stop") => StopReason::Stop,
        Some("tool_calls" | "function_call") => StopReason::ToolUse,
        Some("length") => StopReason::Length,
        Some("content_filter") => StopReason::Error,
        _ if tool_calls.is_empty() => StopReason::Stop,
        _ => StopReason::ToolUse,
    };
    Ok(Completion {
        text: content_text(message.get("content")),
        tool_calls,
        stop_reason,
    })
}

/// The provider's error message from an error body (`error.message`, `error` as a string,
/// `message`), else the start of the body.
fn provider_message(body: &str) -> String {
    let from_json = serde_json::from_str::<Value>(body).ok().and_then(|v| {
        let error = v.get("error");
        error
            .and_then(|e| e.get("message"))
            .and_then(Value::as_str)
            .or_else(|| error.and_then(Value::as_str))
            .or_else(|| v.get("message").and_then(Value::as_str))
            .map(str::to_owned)
    });
    from_json.unwrap_or_else(|| {
        let trimmed = body.trim();
        let mut cut: String = trimmed.chars().take(MAX_ERROR_BODY_CHARS).collect();
        if cut.len() < trimmed.len() {
            cut.push('…');
        }
        cut
    })
}

impl Model for HttpModel {
    fn complete(&self, req: &CompletionRequest) -> Result<Completion, ModelError> {
        let remaining = req.check()?;
        let url = self.endpoint();
        let body = self.request_body(req).to_string();
        let mut request = self
            .agent
            .post(&url)
            .config()
            .timeout_global(Some(remaining.max(Duration::from_millis(1))))
            .build()
            .header("Content-Type", "application/json")
            .header("Accept", "application/json");
        if let Some(key) = &self.api_key {
            request = request.header("Authorization", format!("Bearer {key}"));
        }
        let result = request.send(body.as_str());
        if req.cancel.is_cancelled() {
            return Err(ModelError::Cancelled);
        }
        let mut response = match result {
            Ok(r) => r,
            Err(ureq::Error::Timeout(_)) => return Err(ModelError::Timeout),
            Err(e) => {
                return Err(ModelError::Failed(
                    self.scrub(&format!("request to {url} failed: {e}")),
                ));
            }
        };
        let status = response.status().as_u16();
        let text = match response.body_mut().read_to_string() {
            Ok(t) => t,
            Err(ureq::Error::Timeout(_)) => return Err(ModelError::Timeout),
            Err(e) => {
                return Err(ModelError::Failed(self.scrub(&format!(
                    "reading the answer of {url} failed (HTTP {status}): {e}"
                ))));
            }
        };
        if !(200..300).contains(&status) {
            let message = self.scrub(&provider_message(&text));
            return Err(ModelError::Failed(format!(
                "HTTP {status} from {url}: {message}"
            )));
        }
        parse_response(&text).map_err(|e| match e {
            ModelError::Failed(m) => ModelError::Failed(self.scrub(&m)),
            other => other,
        })
    }
}
