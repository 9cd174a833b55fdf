//! What is recorded: host-neutral events (PX-05, PX-18), how long texts are bounded, and the
//! terminal status of a run (PX-06, PX-07).

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Tool results, tool arguments and `!` commands are cut to this many characters.
pub const MAX_TOOL_CHARS: usize = 2000;
/// Prompts and assistant texts are cut to this many characters.
pub const MAX_TEXT_CHARS: usize = 8000;
/// Run titles (the first prompt) are cut to this many characters.
pub const MAX_TITLE_CHARS: usize = 120;

/// One thing that happened, as the host saw it. Stored as its JSON without `kind` (which is
/// a column), after [`Event::bounded`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(
    tag = "kind",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
#[non_exhaustive]
pub enum Event {
    /// The agent started working on a prompt: opens a run (`agent_start`).
    RunStart,
    /// The user's prompt (text only).
    Prompt {
        /// The text.
        text: String,
    },
    /// A finished assistant message.
    Assistant {
        /// Its text.
        text: String,
        /// Why it stopped (`stop`, `toolUse`, `length`, `error`, `aborted`).
        stop_reason: Option<String>,
        /// The provider's error message, for `error`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error: Option<String>,
        /// `provider/model-id`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        model: Option<String>,
    },
    /// A tool call began.
    ToolCall {
        /// The call's id.
        id: String,
        /// The tool.
        name: String,
        /// Its arguments (bounded as JSON text).
        args: Value,
    },
    /// A tool call ended.
    ToolResult {
        /// The call's id.
        id: String,
        /// The tool.
        name: String,
        /// The result's text (bounded).
        text: String,
        /// Whether it failed.
        is_error: bool,
    },
    /// The user selected another model.
    ModelChange {
        /// `provider/model-id`.
        model: String,
    },
    /// The session was compacted.
    Compaction {
        /// `manual`, `threshold` or `overflow`.
        reason: String,
        /// Context tokens before, when known.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        tokens_before: Option<u64>,
    },
    /// The user ran `!cmd` (or `!!cmd`): only its start is known (PX-18).
    UserBash {
        /// The command (bounded).
        command: String,
        /// `!!`: kept out of the model's context.
        exclude_from_context: bool,
    },
    /// The run will not continue on its own (`agent_settled`): ends the run.
    Settled {
        /// Whether it was aborted.
        aborted: bool,
    },
}

/// Cuts `text` to `max` characters, saying how many were left out.
pub fn bound(text: &str, max: usize) -> String {
    let total = text.chars().count();
    if total <= max {
        return text.to_owned();
    }
    let kept: String = text.chars().take(max).collect();
    format!("{kept}… [{} more characters]", total - max)
}

impl Event {
    /// The `kind` column.
    pub fn kind(&self) -> &'static str {
        match self {
            Event::RunStart => "runStart",
            Event::Prompt { .. } => "prompt",
            Event::Assistant { .. } => "assistant",
            Event::ToolCall { .. } => "toolCall",
            Event::ToolResult { .. } => "toolResult",
            Event::ModelChange { .. } => "modelChange",
            Event::Compaction { .. } => "compaction",
            Event::UserBash { .. } => "userBash",
            Event::Settled { .. } => "settled",
        }
    }

    /// The event with its texts cut to the limits above.
    pub fn bounded(self) -> Event {
        match self {
            Event::Prompt { text } => Event::Prompt {
                text: bound(&text, MAX_TEXT_CHARS),
            },
            Event::Assistant {
                text,
                stop_reason,
                error,
                model,
            } => Event::Assistant {
                text: bound(&text, MAX_TEXT_CHARS),
                stop_reason,
                error: error.map(|e| bound(&e, MAX_TOOL_CHARS)),
                model,
            },
            Event::ToolCall { id, name, args } => {
                let json = args.to_string();
                let args = if json.chars().count() > MAX_TOOL_CHARS {
                    Value::String(bound(&json, MAX_TOOL_CHARS))
                } else {
                    args
                };
                Event::ToolCall { id, name, args }
            }
            Event::ToolResult {
                id,
                name,
                text,
                is_error,
            } => Event::ToolResult {
                id,
                name,
                text: bound(&text, MAX_TOOL_CHARS),
                is_error,
            },
            Event::UserBash {
                command,
                exclude_from_context,
            } => Event::UserBash {
                command: bound(&command, MAX_TOOL_CHARS),
                exclude_from_context,
            },
            other => other,
        }
    }

    /// The stored body: the event's JSON without `kind`.
    pub(crate) fn body(&self) -> String {
        match serde_json::to_value(self) {
            Ok(Value::Object(mut o)) => {
                o.remove("kind");
                Value::Object(o).to_string()
            }
            _ => "{}".to_owned(),
        }
    }

    /// Reads a stored event back (`None` for a kind this build does not know).
    pub(crate) fn from_row(kind: &str, body: &str) -> Option<Event> {
        let mut v: Value = serde_json::from_str(body).ok()?;
        v.as_object_mut()?
            .insert("kind".to_owned(), Value::String(kind.to_owned()));
        serde_json::from_value(v).ok()
    }
}

/// An event with the time the host saw it (Unix milliseconds).
#[derive(Debug, Clone, PartialEq)]
pub struct Stamped {
    /// When, in Unix milliseconds.
    pub at: i64,
    /// What.
    pub event: Event,
}

/// Where a run stands (stored spelled as [`RunStatus::as_str`]; VECTORS §Z 17).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    /// Its writer is recording it.
    Running,
    /// Final stop reason `stop`.
    Completed,
    /// Final stop reason `error` or `length`.
    Failed,
    /// Aborted.
    Interrupted,
    /// No terminal state or unfinished work: a dead writer, or a settle without a final
    /// answer (PX-07).
    RecoveryRequired,
}

impl RunStatus {
    /// The stored spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Running => "running",
            RunStatus::Completed => "completed",
            RunStatus::Failed => "failed",
            RunStatus::Interrupted => "interrupted",
            RunStatus::RecoveryRequired => "recovery_required",
        }
    }

    /// Reads the stored spelling.
    pub fn parse(s: &str) -> Option<RunStatus> {
        Some(match s {
            "running" => RunStatus::Running,
            "completed" => RunStatus::Completed,
            "failed" => RunStatus::Failed,
            "interrupted" => RunStatus::Interrupted,
            "recovery_required" => RunStatus::RecoveryRequired,
            _ => return None,
        })
    }
}

/// The terminal status of a settled run (PX-06, PX-07; VECTORS PX-V1..PX-V4): aborted (by the
/// settle flag or the last stop reason) → interrupted; last stop reason `stop` with every tool
/// call answered → completed; `error` or `length` → failed; anything else (no assistant
/// message, `toolUse`, tool calls without results) → recovery_required.
pub fn terminal_status(
    last_stop: Option<&str>,
    aborted: bool,
    unanswered_calls: usize,
) -> RunStatus {
    match last_stop {
        _ if aborted => RunStatus::Interrupted,
        Some("aborted") => RunStatus::Interrupted,
        Some("error" | "length") => RunStatus::Failed,
        Some("stop") if unanswered_calls == 0 => RunStatus::Completed,
        _ => RunStatus::RecoveryRequired,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn bounded_texts_say_how_much_was_cut() {
        assert_eq!(bound("abc", 3), "abc");
        assert_eq!(bound("abcdé", 3), "abc… [2 more characters]");
        let e = Event::ToolResult {
            id: "c".into(),
            name: "read".into(),
            text: "x".repeat(MAX_TOOL_CHARS + 5),
            is_error: false,
        }
        .bounded();
        let Event::ToolResult { text, .. } = &e else {
            panic!()
        };
        assert!(text.ends_with("… [5 more characters]"));
        let big = Event::ToolCall {
            id: "c".into(),
            name: "write".into(),
            args: json!({ "content": "y".repeat(3 * MAX_TOOL_CHARS) }),
        }
        .bounded();
        let Event::ToolCall { args, .. } = &big else {
            panic!()
        };
        assert!(args.as_str().is_some_and(|s| s.contains("more characters")));
    }

    #[test]
    fn bodies_round_trip_without_kind() {
        let e = Event::Assistant {
            text: "hi".into(),
            stop_reason: Some("stop".into()),
            error: None,
            model: Some("fake/m".into()),
        };
        assert_eq!(
            e.body(),
            r#"{"model":"fake/m","stopReason":"stop","text":"hi"}"#
        );
        assert_eq!(Event::from_row(e.kind(), &e.body()), Some(e));
        assert_eq!(Event::from_row("runStart", "{}"), Some(Event::RunStart));
        assert_eq!(Event::from_row("nope", "{}"), None);
    }
}
