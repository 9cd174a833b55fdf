//! A small agent that embeds the memory layer: what a Rust agent author writes to give their
//! agent pimem's memory.
//!
//! It brings its own [`Model`] — an OpenAI-compatible endpoint when `PIMEM_MODEL_URL` and
//! `PIMEM_MODEL` are set (`PIMEM_API_KEY_ENV` names the variable holding the key), else a
//! deterministic scripted model that understands the three tasks — and then, on one project
//! memory directory:
//! 1. adds memories through the `memory` tool, as the agent's own loop would;
//! 2. surfaces the memories relevant to a user prompt (hybrid: the ranker pre-ranks, the
//!    model chooses);
//! 3. extracts a new memory from a finished turn;
//! 4. runs a dream that consolidates the directory;
//!
//! printing what each step did. `cargo run -p example-agent [-- <memory dir>]` (default: a
//! temporary directory). With the scripted model every step is checked, and the program
//! fails if memory did not behave: CI runs it that way.
// An example program reads its configuration from the environment.
#![allow(clippy::disallowed_methods)]

use std::sync::atomic::{AtomicUsize, Ordering};

use anyhow::{Context, Result, bail, ensure};
use camino::Utf8PathBuf;
use memory_agent::extract::{TranscriptMessage, Turn};
use memory_agent::{
    CancelToken, Completion, CompletionRequest, DreamOptions, ExtractOptions, HttpModel,
    MemoryTool, Message, Model, ModelError, StopReason, Surfacer, SurfacingOptions,
    SurfacingRequest, Task, ToolCall, run_dream, run_extract,
};
use memory_core::{Store, StoreOptions};
use serde_json::{Value, json};

/// The agent's model: a real endpoint, or the scripted stand-in.
enum AgentModel {
    Http(HttpModel),
    Scripted(Scripted),
}

impl Model for AgentModel {
    fn complete(&self, req: &CompletionRequest) -> Result<Completion, ModelError> {
        match self {
            AgentModel::Http(m) => m.complete(req),
            AgentModel::Scripted(m) => m.complete(req),
        }
    }
}

/// A deterministic model for the three tasks: it reads its prompt and answers like a
/// careful, unimaginative assistant would.
#[derive(Default)]
struct Scripted {
    calls: AtomicUsize,
}

impl Model for Scripted {
    fn complete(&self, req: &CompletionRequest) -> Result<Completion, ModelError> {
        req.check()?; // the whole Model contract: cancellation and the deadline
        let n = self.calls.fetch_add(1, Ordering::Relaxed);
        let prompt = match req.messages.first() {
            Some(Message::User { content }) => content.as_str(),
            _ => "",
        };
        let tool_results = req
            .messages
            .iter()
            .filter(|m| matches!(m, Message::ToolResult { .. }))
            .count();
        Ok(match req.task {
            // The side query lists candidates as `[type] file — description`: pick the first.
            Task::AutoSurfacing => {
                let first = prompt
                    .lines()
                    .find_map(|l| l.strip_prefix('[')?.split_once("] ")?.1.split_once(" — "))
                    .map(|(file, _)| file);
                text(
                    &json!({ "selected_files": first.into_iter().collect::<Vec<_>>() }).to_string(),
                )
            }
            // Remember what the user said in the turn, once.
            Task::ExtractMemories if tool_results == 0 => {
                let said = prompt
                    .lines()
                    .find_map(|l| l.strip_prefix("[1] user: "))
                    .unwrap_or("nothing");
                call(
                    n,
                    json!({"action": "add", "name": "Deploys need the VPN",
                           "description": "production deploys only work while connected to the VPN",
                           "content": said}),
                )
            }
            Task::ExtractMemories => text("Saved 1 memory."),
            // Look at everything, rebuild the index, report.
            Task::Dream if tool_results == 0 => call(n, json!({"action": "list"})),
            Task::Dream if tool_results == 1 => call(n, json!({"action": "rebuild_index"})),
            Task::Dream => text("Consolidated: nothing duplicated, index rebuilt."),
            // This program records no runs; a summary request gets a plain answer.
            Task::Experience => text("Nothing to summarize."),
        })
    }
}

fn text(text: &str) -> Completion {
    Completion {
        text: text.to_owned(),
        tool_calls: Vec::new(),
        stop_reason: StopReason::Stop,
    }
}

fn call(n: usize, arguments: Value) -> Completion {
    Completion {
        text: String::new(),
        tool_calls: vec![ToolCall {
            id: format!("call_{n}"),
            name: "memory".to_owned(),
            arguments,
        }],
        stop_reason: StopReason::ToolUse,
    }
}

fn model_from_env() -> Result<AgentModel> {
    let var = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
    match (var("PIMEM_MODEL_URL"), var("PIMEM_MODEL")) {
        (Some(url), Some(id)) => {
            let mut model = HttpModel::new(url, id);
            if let Some(key_env) = var("PIMEM_API_KEY_ENV") {
                model = model.with_api_key_env(&key_env)?;
            }
            Ok(AgentModel::Http(model))
        }
        (Some(_), None) | (None, Some(_)) => {
            bail!("set both PIMEM_MODEL_URL and PIMEM_MODEL, or neither (scripted model)")
        }
        (None, None) => Ok(AgentModel::Scripted(Scripted::default())),
    }
}

fn main() -> Result<()> {
    let temp;
    let dir = match std::env::args().nth(1) {
        Some(dir) => Utf8PathBuf::from(dir),
        None => {
            temp = tempfile::tempdir()?;
            Utf8PathBuf::from_path_buf(temp.path().join("memory"))
                .map_err(|p| anyhow::anyhow!("{} is not UTF-8", p.display()))?
        }
    };
    let model = model_from_env()?;
    let scripted = matches!(model, AgentModel::Scripted(_));
    println!(
        "memory directory: {dir}\nmodel: {}",
        if scripted { "scripted" } else { "HTTP" }
    );

    // One store per project directory; cheap to share.
    let store = Store::new(dir, StoreOptions::default());

    // 1. The agent's own loop offers `tool.def()` to its model and runs the calls it makes.
    let mut tool = MemoryTool::new(&store);
    println!("\n1. tool: {}", tool.def().name);
    for args in [
        json!({"action": "add", "name": "Test command", "type": "project",
               "content": "Run `cargo xtask ci` before pushing; plain `cargo test` skips the pi e2e suite."}),
        json!({"action": "add", "name": "Staging SSH port", "type": "reference",
               "content": "Staging SSH listens on port 2222, not 22."}),
    ] {
        let out = tool.call(&args);
        ensure!(!out.is_error, "tool call failed: {}", out.text);
        println!("   {}", out.text);
    }

    // 2. Every user turn: surface what is relevant (the model chooses among the ranker's
    //    candidates because one is passed: hybrid).
    let mut surfacer = Surfacer::new(SurfacingOptions::default());
    let prompt = "how do I ssh into staging?";
    let hit = surfacer.surface(
        &store,
        SurfacingRequest::new(prompt).with_model(Some(&model as &dyn Model)),
    )?;
    println!(
        "\n2. surfaced for {prompt:?} ({:?}):\n{}",
        hit.selector, hit.message
    );
    if scripted {
        ensure!(
            hit.files == ["Staging-SSH-port.md"],
            "surfaced {:?}",
            hit.files
        );
    }

    // 3. After a turn: extract what is worth remembering.
    let messages = [
        TranscriptMessage::User {
            text: "remember: production deploys only work while connected to the VPN".into(),
        },
        TranscriptMessage::Assistant {
            text: "Noted, I will connect to the VPN before deploying.".into(),
            tool_calls: Vec::new(),
        },
    ];
    let turn = Turn {
        messages: &messages,
        instructions: &[],
    };
    let cancel = CancelToken::new();
    let extracted = run_extract(&store, &model, &turn, &ExtractOptions::default(), &cancel)
        .context("extraction failed")?;
    println!(
        "\n3. extraction: {}",
        extracted
            .notification()
            .unwrap_or_else(|| "nothing extracted".into())
    );
    if scripted {
        ensure!(
            extracted.writes() == 1,
            "extraction wrote {}",
            extracted.writes()
        );
        ensure!(store.read("Deploys need the VPN")?.is_some());
    }

    // 4. Now and then: consolidate.
    let dream =
        run_dream(&store, &model, &DreamOptions::default(), &cancel).context("dream failed")?;
    println!(
        "\n4. dream: {} ({} writes, snapshot {})",
        dream.summary, dream.writes, dream.snapshot
    );
    let index = store.read_index()?;
    println!("\nMEMORY.md:\n{index}");
    if scripted {
        ensure!(store.list()?.len() == 3, "three memories expected");
        ensure!(
            index.starts_with("# Memory Index\n"),
            "rebuilt index: {index}"
        );
        ensure!(store.dream_meta().is_some(), ".dream-meta.json written");
    }
    Ok(())
}
