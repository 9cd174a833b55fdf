//! pi's `AgentMessage` JSON (what `agent_end` carries) → the typed transcript extraction
//! renders (PM-66, VECTORS R8/R9).

use memory_js::js_stringify;
use serde_json::Value;

use crate::extract::{TranscriptMessage, TranscriptToolCall};

/// Text of a `content` field: a string as is; from an array, text blocks and `[image]` for
/// image blocks, joined by `\n`; anything else empty.
fn text_of(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(blocks)) => {
            let parts: Vec<&str> = blocks
                .iter()
                .filter_map(|b| match b.get("type").and_then(Value::as_str) {
                    Some("text") => b.get("text").and_then(Value::as_str),
                    Some("image") => Some("[image]"),
                    _ => None,
                })
                .collect();
            parts.join("\n")
        }
        _ => String::new(),
    }
}

fn tool_calls_of(content: Option<&Value>) -> Vec<TranscriptToolCall> {
    let Some(Value::Array(blocks)) = content else {
        return Vec::new();
    };
    blocks
        .iter()
        .filter(|b| b.get("type").and_then(Value::as_str) == Some("toolCall"))
        .filter_map(|b| {
            let name = b.get("name")?.as_str()?.to_owned();
            let args = match b.get("arguments") {
                None | Some(Value::Null) => "{}".to_owned(),
                Some(v) => js_stringify(v),
            };
            Some(TranscriptToolCall { name, args })
        })
        .collect()
}

/// Converts pi `AgentMessage` JSON (docs/pi-host.md §e) into transcript messages, in order.
///
/// - `user`: its text (images `[image]`); dropped when empty.
/// - `assistant`: text blocks and `toolCall` blocks (thinking ignored); dropped when it has
///   neither (VECTORS R8).
/// - `toolResult`: always kept, `isError === true` marks an error.
/// - any other role (`custom`, `bashExecution`, unknown ones; VECTORS R9): kept as a user
///   message when its `content` has text, else when it has a string `output`; otherwise
///   dropped (so `system` prompt patches with empty content, `branchSummary` and
///   `compactionSummary` vanish, as in pi-memory). Non-objects are skipped.
pub fn from_agent_messages(messages: &[Value]) -> Vec<TranscriptMessage> {
    let mut out = Vec::new();
    for m in messages {
        if !m.is_object() {
            continue;
        }
        let role = m.get("role").and_then(Value::as_str).unwrap_or("");
        let content = m.get("content");
        match role {
            "user" => {
                let text = text_of(content);
                if !text.is_empty() {
                    out.push(TranscriptMessage::User { text });
                }
            }
            "assistant" => {
                let text = text_of(content);
                let tool_calls = tool_calls_of(content);
                if !text.is_empty() || !tool_calls.is_empty() {
                    out.push(TranscriptMessage::Assistant { text, tool_calls });
                }
            }
            "toolResult" => out.push(TranscriptMessage::ToolResult {
                text: text_of(content),
                tool_name: m.get("toolName").and_then(Value::as_str).map(str::to_owned),
                is_error: m.get("isError") == Some(&Value::Bool(true)),
            }),
            _ => {
                let mut text = text_of(content);
                if text.is_empty()
                    && let Some(output) = m.get("output").and_then(Value::as_str)
                {
                    text = output.to_owned();
                }
                if !text.is_empty() {
                    out.push(TranscriptMessage::User { text });
                }
            }
        }
    }
    out
}
