//! Per-turn memory extraction (PM-65..PM-68).
//!
//! After a run, a headless agent gets a structured rendering of the whole turn — every user
//! message in full, assistant text and tool calls, tool results with error flags — and may
//! persist what is worth remembering through the five main memory actions.
//!
//! Pipeline: a typed [`Turn`] (its [`TranscriptMessage`]s — a pi host converts pi's
//! `AgentMessage` JSON with [`crate::pi::transcript`] — and the `AGENTS.md` blocks of its
//! system prompt) → the rendering of PM-66 / VECTORS R ([`render_conversation`]) → the task
//! prompt ([`build_extract_task`]) → [`run_extract`]: `Store::try_begin_round` (never waits:
//! while a dream holds the round the turn is [`ExtractOutcome::Skipped`], not queued), the
//! agent loop with the five main actions, 5 turns + the grace turn, 120 s. Writes keep their
//! per-write snapshots (no whole-directory snapshot for an extraction round).
//!
//! ```
//! use memory_agent::extract::{TranscriptMessage, Turn};
//! use memory_agent::{CancelToken, ExtractOptions, Message, run_extract};
//! use memory_core::{Store, StoreOptions};
//! use serde_json::json;
//! use testkit::{ScriptedModel, memory_call, text};
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let sandbox = testkit::Sandbox::new();
//! let store = Store::new(sandbox.path("proj"), StoreOptions::default());
//! let model = ScriptedModel::new([
//!     memory_call(json!({"action": "add", "name": "Staging SSH port",
//!         "description": "staging SSH listens on 2222, not 22",
//!         "content": "staging SSH listens on 2222, not 22."})),
//!     text("Added 1 memory."),
//! ]);
//! let messages = [
//!     TranscriptMessage::User { text: "Staging SSH is on 2222, not 22.".into() },
//!     TranscriptMessage::Assistant { text: "Noted.".into(), tool_calls: vec![] },
//! ];
//! let turn = Turn { messages: &messages, instructions: &[] };
//! let out = run_extract(&store, &model, &turn, &ExtractOptions::default(), &CancelToken::new())?;
//! assert_eq!(out.notification().as_deref(), Some("Extracted 1 memory."));
//! let Message::User { content: task } = &model.requests()[0].messages[0] else { panic!() };
//! assert!(task.ends_with(
//!     "=== Conversation ===\n[1] user: Staging SSH is on 2222, not 22.\n[2] assistant: Noted."
//! ));
//! assert!(store.dir().join("Staging-SSH-port.md").exists());
//! # Ok(()) }
//! ```
//!
//! # Character units
//! Decision (VECTORS §Z 8): every limit here (`maxAssistantChars` 2000,
//! `maxToolResultChars` 500, the 120-character tool-argument cut, `maxContextTokens`×4) counts
//! UTF-16 code units, as JavaScript's `length`/`slice` do, so cuts land where pi-memory's do
//! for all text. A cut is never made inside a character: where JavaScript would split a
//! surrogate pair, the astral character is left out whole (the kept part is one unit shorter)
//! and the `K chars omitted` count is the exact number of units left out.
//!
//! # Budget
//! Decision (VECTORS §Z 10): like the code (not the README's "user messages are dropped
//! last"), the whole rendering is middle-cut to `maxContextTokens×4` units; user lines are
//! only protected from the per-message cuts.

use memory_core::tool::MAIN_ACTIONS;
use memory_core::{Store, Task};
use memory_js::{utf16_len, utf16_prefix, utf16_suffix};

use crate::agent::{AgentError, AgentRun, AgentSpec, run_agent};
use crate::model::{CancelToken, Model};
use crate::options::{ConversationLimits, ExtractOptions};
use crate::tool::MemoryTool;

/// The cut applied to a tool call's JSON arguments (units).
pub const TOOL_ARGS_MAX_CHARS: usize = 120;

/// The system prompt of the extraction agent.
///
/// Decision: pi-memory ran the extractor with pi's own coding-agent system prompt, which
/// describes file and shell tools this agent does not have; ours states the one tool and
/// leaves every instruction to the task prompt.
pub const EXTRACT_SYSTEM_PROMPT: &str = "You are a headless memory agent. You run in the background after a turn of a coding session, with no user to talk to. Your only tool is `memory`, the project's persistent memory. Follow the task in the user message, then reply with one short line.";

/// One message of a turn, reduced to what the extraction rendering shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TranscriptMessage {
    /// A user message (also every unknown role that carries text).
    User {
        /// Its text; images are `[image]`.
        text: String,
    },
    /// An assistant message with text, tool calls or both (never neither).
    Assistant {
        /// Its text blocks joined by `\n` (thinking excluded); may be empty.
        text: String,
        /// Its tool calls.
        tool_calls: Vec<TranscriptToolCall>,
    },
    /// A tool result.
    ToolResult {
        /// Its text blocks joined by `\n`; images are `[image]`.
        text: String,
        /// The tool that produced it (kept for diagnostics, not rendered).
        tool_name: Option<String>,
        /// Whether the tool failed.
        is_error: bool,
    },
}

/// A tool call as rendered: name and JSON arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TranscriptToolCall {
    /// Tool name.
    pub name: String,
    /// Arguments as `JSON.stringify` writes them.
    pub args: String,
}

// ------------------------------------------------------------------ UTF-16 units

// Decision (VECTORS §Z 8): limits count UTF-16 code units like JavaScript; a cut never
// splits a character (an astral character at the boundary is left out whole).
/// Per-message cut: the first `max` units plus `\n[truncated: K chars omitted]`.
fn clip(text: &str, max: usize) -> String {
    let total = utf16_len(text);
    if max == 0 || total <= max {
        return text.to_owned();
    }
    let head = utf16_prefix(text, max);
    format!(
        "{head}\n[truncated: {} chars omitted]",
        total - utf16_len(head)
    )
}

fn middle_marker(omitted: usize) -> String {
    format!("\n[truncated: {omitted} chars omitted from the middle]\n")
}

// Decision (VECTORS §Z 10): the whole rendering is middle-cut, as the code does; user
// lines are protected only from the per-message cuts.
/// Whole-rendering cut (VECTORS R7): keeps the head and the tail, reserving room for a
/// marker with a six-digit count (51 units), head rounded up.
fn clip_middle(text: &str, max: usize) -> String {
    let total = utf16_len(text);
    if max == 0 || total <= max {
        return text.to_owned();
    }
    let budget = max.saturating_sub(utf16_len(&middle_marker(999_999)));
    let head_max = budget.div_ceil(2);
    let tail_max = budget - head_max;
    let head = utf16_prefix(text, head_max);
    let tail = utf16_suffix(text, tail_max);
    let omitted = total - utf16_len(head) - utf16_len(tail);
    format!("{head}{}{tail}", middle_marker(omitted))
}

/// The structured rendering of PM-66, one line per message, numbered from 1:
///
/// ```text
/// [1] user: <full text>
/// [2] assistant: <text ≤ maxAssistantChars> | tool_call: <name>(<JSON args ≤ 120>)
/// [3] tool_result: <≤ maxToolResultChars, "[error] " first on errors>
/// ```
///
/// then the whole text middle-cut to `maxContextTokens×4` units (see the module docs).
pub fn render_conversation(messages: &[TranscriptMessage], limits: &ConversationLimits) -> String {
    let lines: Vec<String> = messages
        .iter()
        .enumerate()
        .map(|(i, m)| {
            let n = i + 1;
            match m {
                TranscriptMessage::User { text } => format!("[{n}] user: {text}"),
                TranscriptMessage::Assistant { text, tool_calls } => {
                    let mut parts = Vec::with_capacity(tool_calls.len() + 1);
                    if !text.is_empty() {
                        parts.push(clip(text, limits.max_assistant_chars));
                    }
                    for call in tool_calls {
                        parts.push(format!(
                            "tool_call: {}({})",
                            call.name,
                            clip(&call.args, TOOL_ARGS_MAX_CHARS)
                        ));
                    }
                    format!("[{n}] assistant: {}", parts.join(" | "))
                }
                TranscriptMessage::ToolResult { text, is_error, .. } => {
                    let body = if *is_error {
                        format!("[error] {text}")
                    } else {
                        text.clone()
                    };
                    format!(
                        "[{n}] tool_result: {}",
                        clip(&body, limits.max_tool_result_chars)
                    )
                }
            }
        })
        .collect();
    clip_middle(
        &lines.join("\n"),
        limits.max_context_tokens.saturating_mul(4),
    )
}

/// The extraction task (pi-memory 2.x `buildExtractTask`): instructions, then the
/// `## AGENTS.md Rules` section only when there are blocks, then `=== Conversation ===` and
/// the rendering.
pub fn build_extract_task(
    messages: &[TranscriptMessage],
    instructions: &[String],
    limits: &ConversationLimits,
) -> String {
    let conversation = render_conversation(messages, limits);
    let mut lines: Vec<&str> = vec![
        "You are a memory extraction agent. Below is one full turn of a coding session: every user message, every assistant reply, every tool call and every tool result. Decide what is worth remembering for FUTURE sessions and persist it.",
        "",
        "## Tools",
        "Your ONLY tool is `memory`. You have no read, write, edit, ls or bash access.",
        "memory(action=\"list\") — every stored memory: name, type, modified, description, file.",
        "memory(action=\"search\", query=\"…\") — full-text search; returns the whole body of each match.",
        "memory(action=\"add\", name, description, type, content) — create a memory, or overwrite the one whose name matches exactly.",
        "memory(action=\"replace\", name, description, type, content) — rewrite an existing memory.",
        "",
        "## Storage model",
        "- One memory = one file, and MEMORY.md holds exactly one index line per memory.",
        "- `content` IS the memory: write the fact itself, not a pointer to it.",
        "- `name` must be unique and human-readable. Adding a name that already exists overwrites that memory instead of duplicating it.",
        "- `description` is required in practice: it is the only text a future session sees when deciding relevance, so it must be self-contained (what, where, which value). Bad: \"Debugging tips\". Good: \"staging SSH listens on 2222, not 22\".",
        "- `type` is one of user / feedback / project / reference (default feedback).",
        "",
        "## Workflow",
        "1. Read the conversation below. Note the corrections the user made, the rules they stated, and the facts that were hard to discover.",
        "2. Call memory(action=\"list\") or memory(action=\"search\") to check whether the fact is already stored.",
        "3. Already stored but wrong or incomplete → replace that exact name. New → add. Already stored correctly → do nothing.",
        "4. Persist at most a handful of memories per turn. When in doubt, skip it.",
        "",
        "## What to Remember",
        "- Process rules: \"Always do X\" / \"Never do Y\" directives, workflow discipline, reporting standards, self-check habits — treat these as seriously as technical facts",
        "- User preferences: coding style, tool choices, naming conventions, workflow habits",
        "- Project conventions: architecture decisions, file organization, tech stack choices",
        "- Discoveries: debugging workarounds, gotchas, configuration quirks, undocumented behavior",
        "- References: external docs, APIs, or systems the user treats as important",
        "- AGENTS.md rules that were violated in this conversation — extract for memory-level reinforcement (refer to the AGENTS.md content below)",
        "",
        "## What to Skip",
        "- One-time task instructions or ephemeral details",
        "- Code snippets or file paths derivable from the project",
        "- AGENTS.md rules that were followed without issue (refer to the AGENTS.md content below)",
        "- Git history or recent changes",
        "- Obvious or trivial observations",
        "",
        "## Output",
        "Persist the memories with the `memory` tool, then reply with one short line saying how many you added or replaced (or \"nothing worth saving\").",
        "",
    ];
    if !instructions.is_empty() {
        lines.push("## AGENTS.md Rules");
        lines.extend(instructions.iter().map(String::as_str));
        lines.push("");
    }
    lines.push("=== Conversation ===");
    lines.push(&conversation);
    lines.join("\n")
}

// ------------------------------------------------------------------ running

/// Why an extraction did not run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SkipReason {
    /// Nothing in the turn renders (VECTORS R10); no model call was made.
    NothingToExtract,
    /// Another round (a dream) or write holds the logical lock; the turn is dropped, not
    /// queued (PM-65).
    Busy,
}

/// The result of [`run_extract`].
#[derive(Debug, Clone, PartialEq)]
pub enum ExtractOutcome {
    /// The turn was skipped.
    Skipped(SkipReason),
    /// The agent ran.
    Done(AgentRun),
}

impl ExtractOutcome {
    /// Successful writes (0 when skipped).
    pub fn writes(&self) -> usize {
        match self {
            ExtractOutcome::Skipped(_) => 0,
            ExtractOutcome::Done(run) => run.writes,
        }
    }

    /// The user notification (PM-68): `Extracted 1 memory.` / `Extracted N memories.` when
    /// at least one write succeeded, else none.
    pub fn notification(&self) -> Option<String> {
        match self.writes() {
            0 => None,
            n => Some(extracted_text(n)),
        }
    }
}

/// `Extracted 1 memory.` / `Extracted N memories.`
pub fn extracted_text(writes: usize) -> String {
    if writes == 1 {
        "Extracted 1 memory.".to_owned()
    } else {
        format!("Extracted {writes} memories.")
    }
}

/// `Extract failed: <msg>` (hosts show it at most once per session, PM-68).
pub fn extract_failed_text(error: &AgentError) -> String {
    format!("Extract failed: {error}")
}

/// One turn of a session, as extraction sees it.
#[derive(Debug, Clone, Copy)]
pub struct Turn<'a> {
    /// Every message of the turn, in order.
    pub messages: &'a [TranscriptMessage],
    /// The `<project_instructions>` blocks (AGENTS.md) of the turn's system prompt, verbatim
    /// (PM-67; [`crate::pi::project_instructions`] finds them in a pi system prompt).
    pub instructions: &'a [String],
}

/// Runs one extraction over a turn with `model`.
///
/// # Errors
/// The agent loop's errors (timeout, cancellation, model failure). Writes made before a
/// failure stay.
pub fn run_extract(
    store: &Store,
    model: &dyn Model,
    turn: &Turn<'_>,
    opts: &ExtractOptions,
    cancel: &CancelToken,
) -> Result<ExtractOutcome, AgentError> {
    if turn.messages.is_empty() {
        return Ok(ExtractOutcome::Skipped(SkipReason::NothingToExtract));
    }
    let prompt = build_extract_task(turn.messages, turn.instructions, &opts.limits);
    let Some(round) = store.try_begin_round() else {
        return Ok(ExtractOutcome::Skipped(SkipReason::Busy));
    };
    let spec = AgentSpec {
        task: Task::ExtractMemories,
        system: EXTRACT_SYSTEM_PROMPT.to_owned(),
        prompt,
        max_turns: Some(opts.max_turns),
        timeout: opts.timeout,
    };
    let sessions = opts.sessions.as_deref().map(|s| s as _);
    let mut tool = MemoryTool::over(round.target(), MAIN_ACTIONS)
        .with_sessions(sessions)
        .with_duplicate_warnings();
    let run = run_agent(model, &mut tool, &spec, &opts.observers, cancel)?;
    Ok(ExtractOutcome::Done(run))
}
