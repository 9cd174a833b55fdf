//! `/dream`: whole-directory memory consolidation (PM-69).
//!
//! [`run_dream`] holds the logical lock for the whole round (`Store::begin_round`, waiting up
//! to the store's lock timeout), snapshots the entire directory once (`.backups/<ts>-dream/`; the
//! round's writes then skip their per-write snapshots: one round, one rollback point), and
//! runs a headless agent with all seven memory actions (`DREAM_ACTIONS`: `rename` and
//! `rebuild_index` exist only here) through four phases — Orient, Gather Signal,
//! Consolidate, Prune & Index — for at most 600 s. On success it writes `.dream-meta.json`
//! (`lastDreamAt`, `sessionCountAtDream`), which drives the nudge.
//!
//! # Concurrent writers
//! The logical lock only excludes this process. Another pi process (another session on the
//! same project) can still write between two tool calls of the dream. The prompt lists every
//! current entry, and those versions seed the run's [`MemoryTool`]: every `replace`,
//! `remove` and `rename` the dream makes is conditional on the version it last read, so an
//! entry changed meanwhile yields `Memory conflict: stale version` to the model (which is
//! told to re-read it and move on) and the concurrent write is never overwritten. `search`
//! and `list` refresh the versions, so a re-read entry can then be edited.
//!
//! # Prompt
//! pi-memory 2.x's `dream.ts` is not in the available sources; the system prompt and the
//! four-phase task are written from the README's description of the phases and the 1.x
//! prompt's rules (deduplicate, merge contradictions, keep knowledge, summary line), adapted
//! to the memory tool. The original runs without a turn limit (the timeout bounds it); so does
//! this one ([`DreamOptions::max_turns`] is `None` by default).

use camino::Utf8PathBuf;
use memory_core::clock::iso_millis;
use memory_core::tool::list_text;
use memory_core::{DreamMeta, Store, Task};

use crate::agent::{AgentError, AgentRun, AgentSpec, run_agent};
use crate::model::{CancelToken, Model};
use crate::options::DreamOptions;
use crate::tool::MemoryTool;

/// Label of the round's whole-directory snapshot (`.backups/<ts>-dream/`).
pub const DREAM_SNAPSHOT_LABEL: &str = "dream";
/// The `/dream` confirmation title (PM-69).
pub const DREAM_CONFIRM_TITLE: &str = "Dream";
/// The `/dream` confirmation body (PM-69).
pub const DREAM_CONFIRM_BODY: &str = "Consolidate all memory files? This rewrites them in-place.";
/// The status text while a dream runs (PM-69).
pub const DREAM_STATUS_TEXT: &str = "Consolidating memory...";
/// The summary when the agent ends without any text (pi-memory's default).
pub const DREAM_DEFAULT_SUMMARY: &str = "Dream completed.";

/// The dream agent's system prompt.
pub const DREAM_SYSTEM_PROMPT: &str = "You are a memory consolidation agent. You maintain the persistent memory of one software project: deduplicate entries, merge contradictions, update outdated facts and keep the MEMORY.md index concise and accurate.
Rules:
- Your only tool is `memory`. You have no file, shell or web access.
- Preserve all valuable knowledge; only remove true duplicates or facts that are clearly outdated. When in doubt, keep the memory.
- Never invent facts: only reorganise what is stored.
- Other sessions may write while you work. A tool result `Memory conflict: stale version` means the memory changed after you read it: never force your version; search it again and only change it if your change is still right, otherwise move on.
- When done, reply with a concise summary of your changes (merged N, removed N, renamed N, updated N).";

/// The four-phase task, listing the current entries (`list` lines, PM-39).
///
/// `entries` is the `list` text of the store at the start of the round ("No memories yet."
/// when empty); `limits` are the index capacity (lines, bytes) and how many lines are
/// injected.
pub(crate) fn build_dream_task(
    entries: &str,
    entry_count: usize,
    (max_lines, max_bytes, inject_lines): (usize, usize, usize),
) -> String {
    format!(
        "Consolidate this project's memory in four phases.

## Phase 1 — Orient
The current memories are listed at the end (name, type, modified, description, file). Read the ones you need with memory(action=\"search\", query=\"…\"), which returns the whole body of each match. Past conversations can be searched with scope=\"sessions\".

## Phase 2 — Gather Signal
Find duplicates (several memories for one fact), contradictions (memories that disagree: the more recently modified one usually wins), stale items (facts a later memory supersedes) and names or descriptions too vague to tell what the memory holds.

## Phase 3 — Consolidate
- Merge duplicates: replace the best memory with the merged content and a self-contained description, then remove the others.
- Resolve contradictions with replace; remove what is outdated.
- Give unclear memories a descriptive name with rename.
- One memory holds one fact or one closely related group of facts. Its description is the only text a future session sees when deciding relevance: make it self-contained (what, where, which value).

## Phase 4 — Prune & Index
- Remove memories that are trivial or no longer true.
- Finish with memory(action=\"rebuild_index\") as a backstop: it rebuilds MEMORY.md from the files (one line per memory, newest last, a hand-written header kept).
- MEMORY.md may hold at most {max_lines} lines / {max_bytes} bytes, and only its newest {inject_lines} lines reach future sessions' prompts: fewer, sharper memories are better.

## Tools
memory(action=\"list\") — every stored memory: name, type, modified, description, file.
memory(action=\"search\", query=\"…\", scope=\"memory\" or \"sessions\") — full-text search.
memory(action=\"add\", name, description, type, content) — create a memory (an existing name is overwritten).
memory(action=\"replace\", name, description, type, content) — rewrite an existing memory.
memory(action=\"remove\", name) — delete a memory.
memory(action=\"rename\", name, new_name) — rename a memory (its file and index line follow).
memory(action=\"rebuild_index\") — rebuild MEMORY.md from the memory files.

If nothing needs consolidating, change nothing and say so. When finished, reply with a one-line summary of your changes.

## Current memories ({entry_count})
{entries}",
    )
}

/// The result of a successful dream.
#[derive(Debug, Clone, PartialEq)]
pub struct DreamOutcome {
    /// The agent's final text, or [`DREAM_DEFAULT_SUMMARY`] when it gave none (PM-69: shown
    /// as the notification).
    pub summary: String,
    /// Successful writes.
    pub writes: usize,
    /// Writes refused because the entry changed during the dream.
    pub conflicts: usize,
    /// The round's snapshot directory (the rollback point).
    pub snapshot: Utf8PathBuf,
    /// What was written to `.dream-meta.json`.
    pub meta: DreamMeta,
    /// The whole run (tool calls, notices, turns).
    pub run: AgentRun,
}

/// `Dream failed: <msg>` (PM-69).
pub fn dream_failed_text(error: &AgentError) -> String {
    format!("Dream failed: {error}")
}

/// Runs one dream round over `store` with `model`.
///
/// # Errors
/// [`AgentError::Store`] when the round cannot start (lock busy past the store's lock
/// timeout, snapshot failure: nothing was written then) or the meta file cannot be written;
/// the agent loop's errors (timeout, cancellation, model failure), after which the writes
/// made stay and `.dream-meta.json` is left as it was.
pub fn run_dream(
    store: &Store,
    model: &dyn Model,
    opts: &DreamOptions,
    cancel: &CancelToken,
) -> Result<DreamOutcome, AgentError> {
    let mut round = store.begin_round(store.options().lock_timeout)?;
    let snapshot = round.snapshot_all(DREAM_SNAPSHOT_LABEL)?;
    let entries = store.list()?;
    let sessions = opts.sessions.as_deref().map(|s| s as _);
    let mut tool = MemoryTool::dream(&round).with_sessions(sessions);
    // The entries listed in the prompt seed the compare-and-swap versions.
    let listing = list_text(&entries, tool.versions());
    let limits = (
        store.options().index_max_lines,
        store.options().index_max_bytes,
        opts.inject_max_lines,
    );
    let spec = AgentSpec {
        task: Task::Dream,
        system: DREAM_SYSTEM_PROMPT.to_owned(),
        prompt: build_dream_task(&listing, entries.len(), limits),
        max_turns: opts.max_turns,
        timeout: opts.timeout,
    };
    let run = run_agent(model, &mut tool, &spec, &opts.observers, cancel)?;
    let meta = DreamMeta {
        last_dream_at: iso_millis(store.options().clock.now()),
        session_count_at_dream: opts.session_count,
    };
    store.write_dream_meta(&meta)?;
    drop(tool);
    drop(round);
    let summary = if run.text.trim().is_empty() {
        DREAM_DEFAULT_SUMMARY.to_owned()
    } else {
        run.text.clone()
    };
    Ok(DreamOutcome {
        summary,
        writes: run.writes,
        conflicts: run.conflicts,
        snapshot,
        meta,
        run,
    })
}
