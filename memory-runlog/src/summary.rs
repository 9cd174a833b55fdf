//! Run summaries (PX-09): after a run settles, one background model call through
//! memory-agent's [`Model`] writes a short summary the user audits before the agent merges
//! runs into experiences.
//!
//! Decision: pi-experience forks a background pi session for this; here it is one completion
//! without tools (the run's bounded transcript in, two to four sentences out) with
//! extraction's time limit ([`EXTRACT_TIMEOUT`]) and `sessionPersistence` through the host's
//! [`RunObserver`]s (task `experience`), so a summary is as cheap, bounded and inspectable
//! as an extraction.

use std::sync::Arc;
use std::time::Instant;

use camino::Utf8Path;
use memory_agent::options::EXTRACT_TIMEOUT;
use memory_agent::{
    CancelToken, CompletionRequest, FinishedRun, Message, Model, ModelError, RunObserver,
    StopReason, Task,
};

use crate::event::{Event, bound};
use crate::ids::RunNo;
use crate::log::RunRow;

/// The summarizer's system prompt.
pub const SUMMARY_SYSTEM: &str = "You summarize one recorded run of a coding agent for its user, who will audit \
the summary before runs are merged into lasting experiences. Write two to four plain sentences: what was asked, \
what the agent did (tools, files, commands), how the run ended, and anything worth remembering next time. \
No preamble, no lists, no markdown headings.";

/// The rendered run is cut to this many characters (its middle is left out).
pub const MAX_TRANSCRIPT_CHARS: usize = 12_000;
/// A summary longer than this is cut.
pub const MAX_SUMMARY_CHARS: usize = 1200;

/// The run as the summarizer sees it: header, then one line per event.
pub fn render_for_summary(run: &RunRow, events: &[Event]) -> String {
    let mut out = format!(
        "Run {} ({}{})\n",
        run.number,
        run.status.as_str(),
        run.stop_reason
            .as_deref()
            .map(|s| format!(", final stop reason {s}"))
            .unwrap_or_default()
    );
    for e in events {
        let line = match e {
            Event::Prompt { text } => format!("User: {text}"),
            Event::Assistant {
                text,
                stop_reason,
                error,
                ..
            } => {
                let mut l = format!("Assistant: {}", text.trim());
                if let Some(err) = error {
                    l.push_str(&format!(" [error: {err}]"));
                } else if stop_reason.as_deref() == Some("aborted") {
                    l.push_str(" [aborted]");
                }
                l
            }
            Event::ToolCall { name, args, .. } => {
                format!("Tool call {name}: {}", bound(&args.to_string(), 300))
            }
            Event::ToolResult {
                name,
                text,
                is_error,
                ..
            } => format!(
                "Tool {name} {}: {}",
                if *is_error { "failed" } else { "returned" },
                bound(text.trim(), 300)
            ),
            Event::ModelChange { model } => format!("Model changed to {model}"),
            Event::Compaction { reason, .. } => format!("Context compacted ({reason})"),
            Event::UserBash { command, .. } => format!("User ran !{command}"),
            Event::RunStart | Event::Settled { .. } => continue,
        };
        out.push_str(&line);
        out.push('\n');
    }
    middle_cut(&out, MAX_TRANSCRIPT_CHARS)
}

/// Keeps the first and last halves of `text` within `max` characters.
fn middle_cut(text: &str, max: usize) -> String {
    let total = text.chars().count();
    if total <= max {
        return text.to_owned();
    }
    let half = max / 2;
    let head: String = text.chars().take(half).collect();
    let tail: String = text.chars().skip(total - half).collect();
    format!(
        "{head}\n[… {} characters left out …]\n{tail}",
        total - 2 * half
    )
}

/// Why a summary could not be written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SummaryError {
    /// The model call failed.
    #[error("{0}")]
    Model(#[from] ModelError),
    /// The model answered with nothing.
    #[error("the model returned an empty summary")]
    Empty,
    /// The model stopped with an error.
    #[error("the model stopped with reason {0:?}")]
    Stopped(StopReason),
}

/// What the summarizer needs besides the model.
pub struct SummaryJob<'a> {
    /// The run.
    pub run: &'a RunRow,
    /// Its events.
    pub events: &'a [Event],
    /// The project's memory directory (for the observers' `FinishedRun`).
    pub memory_dir: &'a Utf8Path,
    /// Observers of the call (`sessionPersistence`).
    pub observers: &'a [Arc<dyn RunObserver>],
    /// When it started (for the observers).
    pub started: jiff::Timestamp,
}

/// Asks `model` for the summary of one run (one completion, no tools, extraction's time
/// limit). Observers see the call whether it succeeded or failed.
///
/// # Errors
/// [`SummaryError`]: the model's error, an empty answer or an error stop.
pub fn summarize(
    model: &dyn Model,
    job: &SummaryJob<'_>,
    cancel: &CancelToken,
) -> Result<String, SummaryError> {
    let prompt = format!(
        "Summarize this run.\n\n<run>\n{}</run>",
        render_for_summary(job.run, job.events)
    );
    let req = CompletionRequest {
        task: Task::Experience,
        system: SUMMARY_SYSTEM.to_owned(),
        messages: vec![Message::User {
            content: prompt.clone(),
        }],
        tools: Vec::new(),
        deadline: Instant::now() + EXTRACT_TIMEOUT,
        cancel: cancel.clone(),
    };
    let result = model
        .complete(&req)
        .map_err(SummaryError::from)
        .and_then(|c| match c.stop_reason {
            StopReason::Error | StopReason::Aborted => Err(SummaryError::Stopped(c.stop_reason)),
            _ => {
                let text = c.text.trim();
                if text.is_empty() {
                    Err(SummaryError::Empty)
                } else {
                    Ok(bound(text, MAX_SUMMARY_CHARS))
                }
            }
        });
    let mut transcript = vec![Message::User { content: prompt }];
    if let Ok(text) = &result {
        transcript.push(Message::Assistant {
            text: text.clone(),
            tool_calls: Vec::new(),
        });
    }
    let error = result.as_ref().err().map(ToString::to_string);
    let finished = FinishedRun {
        task: Task::Experience,
        memory_dir: job.memory_dir,
        system: SUMMARY_SYSTEM,
        transcript: &transcript,
        started: job.started,
        error: error.as_deref(),
    };
    for o in job.observers {
        // A transcript that cannot be saved does not fail the summary.
        let _ = o.finished(&finished);
    }
    result
}

/// The note of a run whose summary cannot be written because no model is configured.
pub fn no_model_note() -> String {
    "no model for experience — set \"experience.model\" or \"defaults.model\" in memory.json"
        .to_owned()
}

/// `R03`'s summary failed: the note stored with it.
pub fn failed_note(run: RunNo, e: &SummaryError) -> String {
    format!("summary of {run} failed: {e}")
}
