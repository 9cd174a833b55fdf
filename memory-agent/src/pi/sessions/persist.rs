//! Headless runs (dream, extraction) saved as pi session files (`sessionPersistence`, PM-80).
//!
//! pi-memory ran its headless agents as pi sessions and, with `sessionPersistence.enabled`,
//! kept them under `<project memory dir>/sessions/` (or `sessionDir`). Our agents run inside
//! the sidecar, so the run is written afterwards in pi's session format (version 3): a
//! header, a `session_info` naming the task, a `custom` entry with the system prompt, then
//! one `message` entry per user prompt, model turn and tool result, chained by `parentId`.
//! `pi --session <file>` opens it, and session search reads it like any other.

use jiff::Timestamp;
use serde_json::{Value, json};

use crate::model::Message;

/// What a saved headless run is about.
#[derive(Debug, Clone, Copy)]
pub struct HeadlessSession<'a> {
    /// `dream`, `extractMemories` or `autoSurfacing`.
    pub task: &'a str,
    /// `provider/model-id` the run used.
    pub model: &'a str,
    /// The session's cwd (the project memory directory, where the agent ran).
    pub cwd: &'a str,
    /// The run's system prompt.
    pub system: &'a str,
    /// When the run started.
    pub started: Timestamp,
    /// Why the run failed (`None` when it succeeded): saved as a last `custom` entry
    /// `pimem-run-error`, so a failed run can be read back with its cause.
    pub error: Option<&'a str>,
}

/// The file name and JSONL text of a saved run. Deterministic for the same input (ids are
/// derived from the start time and the task), so tests can snapshot it.
pub fn render_headless_session(
    meta: &HeadlessSession<'_>,
    transcript: &[Message],
) -> (String, String) {
    let ms = meta.started.as_millisecond();
    let iso = memory_core::clock::iso_millis(meta.started);
    // A UUIDv7-shaped id: 48 bits of milliseconds, then bits from the task name.
    let tag = meta.task.bytes().fold(0u64, |h, b| {
        h.wrapping_mul(0x100_0000_01b3).wrapping_add(u64::from(b))
    });
    let id = format!(
        "{:08x}-{:04x}-7{:03x}-8{:03x}-{:012x}",
        (ms >> 16) & 0xffff_ffff,
        ms & 0xffff,
        tag & 0xfff,
        (tag >> 12) & 0xfff,
        (tag >> 24) & 0xffff_ffff_ffff
    );
    let file = format!("{}_{id}.jsonl", iso.replace([':', '.'], "-"));
    let mut lines = vec![json!({
        "type": "session", "version": 3, "id": id, "timestamp": iso, "cwd": meta.cwd,
    })];
    let mut parent: Option<String> = None;
    let mut n = 0u32;
    let mut entry = |lines: &mut Vec<Value>, mut value: Value| {
        n += 1;
        let entry_id = format!("{:08x}", (tag as u32) ^ n.wrapping_mul(0x9e37_79b9));
        value["id"] = json!(entry_id);
        value["parentId"] = json!(parent);
        value["timestamp"] = json!(iso);
        parent = Some(entry_id);
        lines.push(value);
    };
    entry(
        &mut lines,
        json!({"type": "session_info", "name": format!("pimem {}", meta.task)}),
    );
    entry(
        &mut lines,
        json!({"type": "custom", "customType": "pimem-system-prompt", "data": {"text": meta.system}}),
    );
    let (provider, model) = meta.model.split_once('/').unwrap_or(("", meta.model));
    for message in transcript {
        let body = match message {
            Message::User { content } => json!({
                "role": "user",
                "content": [{"type": "text", "text": content}],
                "timestamp": ms,
            }),
            Message::Assistant { text, tool_calls } => {
                let mut content = Vec::new();
                if !text.is_empty() {
                    content.push(json!({"type": "text", "text": text}));
                }
                for call in tool_calls {
                    content.push(json!({
                        "type": "toolCall", "id": call.id, "name": call.name,
                        "arguments": call.arguments,
                    }));
                }
                json!({
                    "role": "assistant",
                    "content": content,
                    "stopReason": if tool_calls.is_empty() { "stop" } else { "toolUse" },
                    "provider": provider,
                    "model": model,
                    "timestamp": ms,
                })
            }
            Message::ToolResult {
                call_id,
                name,
                content,
                is_error,
            } => json!({
                "role": "toolResult",
                "toolCallId": call_id,
                "toolName": name,
                "content": [{"type": "text", "text": content}],
                "isError": is_error,
                "timestamp": ms,
            }),
        };
        entry(&mut lines, json!({"type": "message", "message": body}));
    }
    if let Some(error) = meta.error {
        entry(
            &mut lines,
            json!({"type": "custom", "customType": "pimem-run-error", "data": {"error": error}}),
        );
    }
    let mut text = String::new();
    for line in lines {
        text.push_str(&line.to_string());
        text.push('\n');
    }
    (file, text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ToolCall;
    use crate::pi::sessions::{SessionEntry, list_sessions, read_session};

    #[test]
    fn a_saved_run_is_a_pi_session_our_reader_understands() {
        let meta = HeadlessSession {
            task: "dream",
            model: "fake/fake-model",
            cwd: "/home/u/.pi/memory/local/proj",
            system: "You consolidate memories.",
            started: "2026-11-29T21:37:25.309Z".parse().unwrap(),
            error: None,
        };
        let transcript = vec![
            Message::User {
                content: "Consolidate.".into(),
            },
            Message::Assistant {
                text: String::new(),
                tool_calls: vec![ToolCall {
                    id: "c1".into(),
                    name: "memory".into(),
                    arguments: json!({"action": "list"}),
                }],
            },
            Message::ToolResult {
                call_id: "c1".into(),
                name: "memory".into(),
                content: "No memories yet.".into(),
                is_error: false,
            },
            Message::Assistant {
                text: "Nothing to do.".into(),
                tool_calls: vec![],
            },
        ];
        let (file, text) = render_headless_session(&meta, &transcript);
        assert!(file.starts_with("2026-11-29T21-37-25-309Z_"), "{file}");
        assert!(file.ends_with(".jsonl"));
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 1 + 2 + transcript.len());
        for line in &lines {
            SessionEntry::parse(line.as_bytes()).unwrap();
        }
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join(&file);
        std::fs::write(&path, &text).unwrap();
        let session = read_session(&path).unwrap();
        assert_eq!(session.entries.len(), 2 + transcript.len());
        assert_eq!(session.skipped_lines, 0);
        let listed = list_sessions(tmp.path(), None).unwrap();
        assert_eq!(listed.len(), 1);
        assert_eq!(listed[0].name.as_deref(), Some("pimem dream"));
        assert_eq!(listed[0].cwd, "/home/u/.pi/memory/local/proj");
        // Deterministic, so the file can be snapshotted and compared.
        assert_eq!(render_headless_session(&meta, &transcript).1, text);
        // A failed run ends with its cause.
        let failed = HeadlessSession {
            error: Some("headless agent timed out after 600000ms"),
            ..meta
        };
        let (_, text) = render_headless_session(&failed, &transcript);
        let last: serde_json::Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
        assert_eq!(last["customType"], "pimem-run-error");
        assert_eq!(
            last["data"]["error"],
            "headless agent timed out after 600000ms"
        );
    }
}
