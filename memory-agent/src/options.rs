//! What each task needs besides a store and a model, host-neutral: plain structs with
//! pi-memory 2.5's defaults, and `From<&Config>` for hosts that read `memory.json`.
//!
//! Nothing here names a model: a task uses a model when the caller passes one. Observers
//! ([`RunObserver`]) see each run turn by turn and when it ends, successful or not; that is
//! how a host shows progress and keeps transcripts (`sessionPersistence` is the
//! [`crate::pi::SessionFiles`] observer).

use std::sync::Arc;
use std::time::Duration;

use camino::Utf8Path;
use jiff::Timestamp;
use memory_core::config::DreamConfig;
use memory_core::tool::SessionSearch;
use memory_core::{Config, Selector, Task};

use crate::agent::ToolCallRecord;
use crate::model::Message;

/// The side query's time limit (PM-60: 30 s).
pub const SURFACING_TIMEOUT: Duration = Duration::from_secs(30);
/// Turns before the grace turn of an extraction (PM-65).
pub const EXTRACT_MAX_TURNS: usize = 5;
/// Wall-clock limit of one extraction (PM-65).
pub const EXTRACT_TIMEOUT: Duration = Duration::from_secs(120);
/// Wall-clock limit of a dream (PM-69).
pub const DREAM_TIMEOUT: Duration = Duration::from_secs(600);

/// A run that ended, as observers see it.
#[derive(Debug, Clone, Copy)]
pub struct FinishedRun<'a> {
    /// Which task ran.
    pub task: Task,
    /// The memory directory it worked on.
    pub memory_dir: &'a Utf8Path,
    /// Its system prompt.
    pub system: &'a str,
    /// Everything after the system prompt: the task prompt, each model turn and tool result.
    pub transcript: &'a [Message],
    /// When it started.
    pub started: Timestamp,
    /// `None` when it succeeded, else why it failed (the error's text).
    pub error: Option<&'a str>,
}

/// Watches headless runs (extraction, dream) and side queries (surfacing). Every method has
/// a default that does nothing.
pub trait RunObserver: Send + Sync {
    /// A model turn is about to start (1-based).
    fn turn_started(&self, _task: Task, _turn: usize) {}

    /// A tool call ran and its result is about to go back to the model.
    fn tool_called(&self, _task: Task, _call: &ToolCallRecord) {}

    /// The run ended. An `Err` (for example "cannot save the session file") is reported to
    /// the user as a notice of the run; the run itself stands.
    fn finished(&self, _run: &FinishedRun<'_>) -> Result<(), String> {
        Ok(())
    }
}

/// Calls `finished` on every observer; the failures become notices.
pub(crate) fn notify_finished(
    observers: &[Arc<dyn RunObserver>],
    run: &FinishedRun<'_>,
) -> Vec<String> {
    observers
        .iter()
        .filter_map(|o| o.finished(run).err())
        .collect()
}

/// Auto-surfacing (PM-60..64).
#[derive(Clone)]
pub struct SurfacingOptions {
    /// Module switch (`autoSurfacing.enabled`).
    pub enabled: bool,
    /// At most this many memories per turn.
    pub max_files: usize,
    /// Per-entry body budget in bytes.
    pub max_entry_bytes: usize,
    /// Whole-message budget in bytes.
    pub max_injection_bytes: usize,
    /// Which selector chooses; [`Selector::Auto`] is hybrid when a model is passed, lexical
    /// otherwise.
    pub selector: Selector,
    /// Time limit of the model call.
    pub timeout: Duration,
    /// Observers of the side query (persistence).
    pub observers: Vec<Arc<dyn RunObserver>>,
}

impl std::fmt::Debug for SurfacingOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SurfacingOptions")
            .field("enabled", &self.enabled)
            .field("max_files", &self.max_files)
            .field("max_entry_bytes", &self.max_entry_bytes)
            .field("max_injection_bytes", &self.max_injection_bytes)
            .field("selector", &self.selector)
            .field("timeout", &self.timeout)
            .field("observers", &self.observers.len())
            .finish()
    }
}

impl Default for SurfacingOptions {
    fn default() -> Self {
        SurfacingOptions::from(&Config::default())
    }
}

impl From<&Config> for SurfacingOptions {
    fn from(cfg: &Config) -> Self {
        let s = &cfg.auto_surfacing;
        SurfacingOptions {
            enabled: s.enabled,
            max_files: s.max_files,
            max_entry_bytes: s.max_entry_bytes,
            max_injection_bytes: s.max_injection_bytes,
            selector: s.selector,
            timeout: SURFACING_TIMEOUT,
            observers: crate::pi::SessionFiles::observers(cfg, Task::AutoSurfacing),
        }
    }
}

/// Extraction rendering limits (`extractMemories.*`), in UTF-16 units.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConversationLimits {
    /// Per tool-result cut (0 = none).
    pub max_tool_result_chars: usize,
    /// Per assistant-text cut (0 = none).
    pub max_assistant_chars: usize,
    /// Whole-rendering budget in tokens (×4 units; 0 = none).
    pub max_context_tokens: usize,
}

impl Default for ConversationLimits {
    fn default() -> Self {
        ConversationLimits::from(&Config::default())
    }
}

impl From<&Config> for ConversationLimits {
    fn from(cfg: &Config) -> Self {
        let e = &cfg.extract_memories;
        ConversationLimits {
            max_tool_result_chars: e.max_tool_result_chars,
            max_assistant_chars: e.max_assistant_chars,
            max_context_tokens: e.max_context_tokens,
        }
    }
}

/// Per-turn extraction (PM-65..68).
#[derive(Clone)]
pub struct ExtractOptions {
    /// How the turn is rendered for the model.
    pub limits: ConversationLimits,
    /// Turns before the grace turn.
    pub max_turns: usize,
    /// Wall-clock limit of the run.
    pub timeout: Duration,
    /// Backs the tool's `search` with `scope: "sessions"` (absent: not available).
    pub sessions: Option<Arc<dyn SessionSearch + Send + Sync>>,
    /// Progress and persistence.
    pub observers: Vec<Arc<dyn RunObserver>>,
}

impl std::fmt::Debug for ExtractOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExtractOptions")
            .field("limits", &self.limits)
            .field("max_turns", &self.max_turns)
            .field("timeout", &self.timeout)
            .field("sessions", &self.sessions.is_some())
            .field("observers", &self.observers.len())
            .finish()
    }
}

impl Default for ExtractOptions {
    fn default() -> Self {
        ExtractOptions::from(&Config::default())
    }
}

impl From<&Config> for ExtractOptions {
    fn from(cfg: &Config) -> Self {
        ExtractOptions {
            limits: ConversationLimits::from(cfg),
            max_turns: EXTRACT_MAX_TURNS,
            timeout: EXTRACT_TIMEOUT,
            sessions: None,
            observers: crate::pi::SessionFiles::observers(cfg, Task::ExtractMemories),
        }
    }
}

/// `/dream` (PM-69).
#[derive(Clone)]
pub struct DreamOptions {
    /// Wall-clock limit of the run.
    pub timeout: Duration,
    /// Turns before the grace turn; `None`: no turn limit, as in pi-memory.
    pub max_turns: Option<usize>,
    /// How many `MEMORY.md` lines reach future prompts (told to the model).
    pub inject_max_lines: usize,
    /// The project's session count now, recorded in `.dream-meta.json` for the nudge.
    pub session_count: u64,
    /// Backs the tool's `search` with `scope: "sessions"`.
    pub sessions: Option<Arc<dyn SessionSearch + Send + Sync>>,
    /// Progress and persistence.
    pub observers: Vec<Arc<dyn RunObserver>>,
}

impl std::fmt::Debug for DreamOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DreamOptions")
            .field("timeout", &self.timeout)
            .field("max_turns", &self.max_turns)
            .field("inject_max_lines", &self.inject_max_lines)
            .field("session_count", &self.session_count)
            .field("sessions", &self.sessions.is_some())
            .field("observers", &self.observers.len())
            .finish()
    }
}

impl Default for DreamOptions {
    fn default() -> Self {
        DreamOptions::from(&Config::default())
    }
}

impl From<&Config> for DreamOptions {
    fn from(cfg: &Config) -> Self {
        DreamOptions {
            timeout: DREAM_TIMEOUT,
            max_turns: None,
            inject_max_lines: cfg.mem_index_inject_max_lines,
            session_count: 0,
            sessions: None,
            observers: crate::pi::SessionFiles::observers(cfg, Task::Dream),
        }
    }
}

/// The dream nudge's thresholds (PM-70).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NudgeThresholds {
    /// At least this many sessions since the last dream.
    pub after_sessions: u64,
    /// At least this many hours since the last dream.
    pub after_hours: f64,
}

impl Default for NudgeThresholds {
    fn default() -> Self {
        NudgeThresholds::from(&Config::default().dream)
    }
}

impl From<&DreamConfig> for NudgeThresholds {
    fn from(d: &DreamConfig) -> Self {
        NudgeThresholds {
            after_sessions: d.nudge_after_sessions,
            after_hours: d.nudge_after_hours,
        }
    }
}
