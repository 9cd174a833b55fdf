//! The model-driven subcommands without pi: `pimem dream`, `pimem extract`, `pimem surface`.
//!
//! The model is `--model provider/id`, else the task's model in `memory.json`
//! (`<task>.model` ?? `defaults.model`), reached through an OpenAI-compatible endpoint
//! (`memory_agent::HttpModel`):
//! 1. `--model-url URL` (or `PIMEM_MODEL_URL`) with the key from the environment variable
//!    named by `--api-key-env` (or `PIMEM_API_KEY_ENV`);
//! 2. else the provider's entry in pi's `<agentDir>/models.json` (`baseUrl`, `apiKey`; an
//!    `apiKey` naming an environment variable is read from it), for providers whose `api` is
//!    `openai-completions`.
//!
//! Plain `http://` endpoints work in every build; `https://` needs the `http-tls` feature.
//! The API key is never printed. On a terminal, a dream or extraction shows its progress on
//! stderr (each turn, each tool call as it lands, the elapsed time).

use std::io::{IsTerminal, Read, Write};
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context as _, Result, anyhow, bail};
use clap::Args;
use memory_agent::pi::sessions::{ProjectSessions, SessionSearchOptions};
use memory_agent::pi::transcript;
use memory_agent::{
    CancelToken, DreamOptions, ExtractOptions, HttpModel, Model, RunObserver, Selector,
    SurfacingOptions, SurfacingRequest, ToolCallRecord, Turn, run_dream, run_extract,
};
use memory_core::{Config, Task};
use serde_json::{Value, json};

use crate::cli::{Context, confirm, print_json, print_text};

/// Which model and where it answers (shared by the model subcommands).
#[derive(Args, Clone, Default)]
pub(crate) struct ModelArgs {
    /// The model, `provider/model-id` as in memory.json [default: the task's model in
    /// memory.json].
    #[arg(long, value_name = "PROVIDER/ID")]
    model: Option<String>,
    /// OpenAI-compatible base URL (`.../v1`) [env: PIMEM_MODEL_URL]; default: the provider's
    /// `baseUrl` in pi's models.json.
    #[arg(long = "model-url", value_name = "URL")]
    model_url: Option<String>,
    /// Name of the environment variable holding the API key [env: PIMEM_API_KEY_ENV].
    #[arg(long = "api-key-env", value_name = "VAR")]
    api_key_env: Option<String>,
}

/// `pimem dream`.
#[derive(Args)]
pub(crate) struct DreamArgs {
    /// Run without asking for confirmation.
    #[arg(long)]
    yes: bool,
    #[command(flatten)]
    model: ModelArgs,
}

/// `pimem extract`.
#[derive(Args)]
pub(crate) struct ExtractArgs {
    /// A JSON array of pi agent messages (as in `agent_end`); `-` reads stdin.
    #[arg(long, value_name = "FILE")]
    messages: String,
    #[command(flatten)]
    model: ModelArgs,
}

/// `pimem surface`.
#[derive(Args)]
pub(crate) struct SurfaceArgs {
    /// The user prompt to surface memories for.
    prompt: String,
    #[command(flatten)]
    model: ModelArgs,
}

fn no_model(task: Task) -> anyhow::Error {
    let key = task.key();
    anyhow!(
        "no model for {key} — set \"{key}.model\" or \"defaults.model\" in memory.json, or pass --model"
    )
}

/// `provider/id` → `id`, what an OpenAI-compatible server calls the model (pi's registry
/// key carries the provider; split at the first `/`, ids may contain more).
fn wire_model_id(spec: &str) -> &str {
    spec.split_once('/').map_or(spec, |(_, id)| id)
}

#[allow(clippy::disallowed_methods)] // the CLI's own options from the environment
fn env_var(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

/// Builds the HTTP model for `spec` (`provider/model-id`).
fn http_model(ctx: &Context, spec: &str, args: &ModelArgs) -> Result<HttpModel> {
    let url = args
        .model_url
        .clone()
        .or_else(|| env_var("PIMEM_MODEL_URL"));
    let key_env = args
        .api_key_env
        .clone()
        .or_else(|| env_var("PIMEM_API_KEY_ENV"));
    let id = wire_model_id(spec);
    if let Some(url) = url {
        let model = HttpModel::new(url, id);
        return match key_env {
            Some(var) => model.with_api_key_env(&var).map_err(|e| anyhow!("{e}")),
            None => Ok(model),
        };
    }
    let provider = spec.split_once('/').map(|(p, _)| p).unwrap_or(spec);
    let agent_dir = ctx.agent_dir().ok_or_else(|| {
        anyhow!("no endpoint for model \"{spec}\": pass --model-url (or set PIMEM_MODEL_URL)")
    })?;
    let path = agent_dir.join("models.json");
    let text = std::fs::read_to_string(&path).with_context(|| {
        format!(
            "no endpoint for model \"{spec}\": pass --model-url, or define provider \"{provider}\" in {}",
            path.display()
        )
    })?;
    let models: Value = serde_json::from_str(&text)
        .with_context(|| format!("{} is not valid JSON", path.display()))?;
    let p = &models["providers"][provider];
    if p.is_null() {
        bail!(
            "model \"{spec}\": provider \"{provider}\" is not defined in {}; pass --model-url",
            path.display()
        );
    }
    if let Some(api) = p["api"].as_str()
        && api != "openai-completions"
    {
        bail!(
            "model \"{spec}\": provider \"{provider}\" uses api \"{api}\"; pimem speaks the OpenAI chat-completions API only (pass --model-url to an OpenAI-compatible endpoint)"
        );
    }
    let base = p["baseUrl"].as_str().ok_or_else(|| {
        anyhow!(
            "provider \"{provider}\" in {} has no baseUrl",
            path.display()
        )
    })?;
    let mut model = HttpModel::new(base, id);
    if let Some(var) = key_env {
        model = model.with_api_key_env(&var).map_err(|e| anyhow!("{e}"))?;
    } else if let Some(key) = p["apiKey"].as_str() {
        // pi accepts either an environment variable's name or the key itself.
        model = match env_var(key) {
            Some(value) => model.with_api_key(value),
            None => model.with_api_key(key),
        };
    }
    Ok(model)
}

/// The task's model: `--model`, else memory.json's; `None` when neither names one.
fn task_model(ctx: &Context, task: Task, args: &ModelArgs) -> Result<Option<HttpModel>> {
    match args
        .model
        .as_deref()
        .or_else(|| ctx.config().task_model(task))
    {
        Some(spec) => Ok(Some(http_model(ctx, spec, args)?)),
        None => Ok(None),
    }
}

fn sessions(ctx: &Context, cfg: &Config) -> Option<Arc<ProjectSessions>> {
    ctx.agent_dir().map(|dir| {
        Arc::new(ProjectSessions::for_agent_dir(
            dir,
            ctx.cwd(),
            SessionSearchOptions {
                max_sessions: cfg.session_search.max_sessions,
                max_matches: cfg.session_search.max_matches,
                ..SessionSearchOptions::default()
            },
        ))
    })
}

/// Progress of a long run on stderr: `[12.3s] turn 2`, then one line per tool call.
struct Progress {
    started: Instant,
}

impl Progress {
    /// The observer list for a run: progress only when stderr is a terminal.
    fn observers() -> Vec<Arc<dyn RunObserver>> {
        if std::io::stderr().is_terminal() {
            vec![Arc::new(Progress {
                started: Instant::now(),
            })]
        } else {
            Vec::new()
        }
    }

    fn line(&self, text: &str) {
        let secs = self.started.elapsed().as_secs_f64();
        let _ = writeln!(std::io::stderr(), "[{secs:6.1}s] {text}");
    }
}

impl RunObserver for Progress {
    fn turn_started(&self, _task: Task, turn: usize) {
        self.line(&format!("turn {turn}: asking the model…"));
    }

    fn tool_called(&self, _task: Task, record: &ToolCallRecord) {
        let action = record
            .call
            .arguments
            .get("action")
            .and_then(Value::as_str)
            .unwrap_or("?");
        let first = record.output.text.lines().next().unwrap_or("");
        let mark = if record.output.is_error { "✗" } else { "✓" };
        let shown: String = first.chars().take(100).collect();
        self.line(&format!("  {mark} {action}: {shown}"));
    }
}

/// `pimem dream` (PM-69): confirm, then consolidate with the dream model.
pub(crate) fn cmd_dream(ctx: &Context, args: DreamArgs) -> Result<()> {
    ctx.ensure_on()?;
    let model = task_model(ctx, Task::Dream, &args.model)?.ok_or_else(|| no_model(Task::Dream))?;
    let l = memory_core::ui_language(ctx.config());
    let text = |key: memory_core::catalog::Text| key.template(l);
    if !args.yes && !confirm(text(memory_core::catalog::Text::DreamConfirmBody))? {
        return Ok(());
    }
    let cfg = ctx.config();
    let sessions = sessions(ctx, cfg);
    let mut opts = DreamOptions::from(cfg);
    opts.session_count = sessions.as_ref().and_then(|s| s.count().ok()).unwrap_or(0);
    opts.sessions = sessions.map(|s| s as _);
    opts.observers.extend(Progress::observers());
    eprintln!("{}", text(memory_core::catalog::Text::DreamStatus));
    let out = run_dream(ctx.store(), &model, &opts, &CancelToken::new())
        .map_err(|e| anyhow!("{}", memory_agent::dream_failed_text(&e)))?;
    for n in &out.run.notices {
        eprintln!("pimem: note: {n}");
    }
    for w in &out.run.warnings {
        eprintln!("pimem: warning: {w}");
    }
    if ctx.json() {
        return print_json(&json!({
            "summary": out.summary, "writes": out.writes, "conflicts": out.conflicts,
            "snapshot": out.snapshot,
        }));
    }
    print_text(&out.summary)
}

/// `pimem extract`: one extraction round over a transcript (PM-65..68).
pub(crate) fn cmd_extract(ctx: &Context, args: ExtractArgs) -> Result<()> {
    ctx.ensure_on()?;
    let text = if args.messages == "-" {
        let mut t = String::new();
        std::io::stdin()
            .read_to_string(&mut t)
            .context("cannot read the messages from stdin")?;
        t
    } else {
        std::fs::read_to_string(Path::new(&args.messages))
            .with_context(|| format!("cannot read {}", args.messages))?
    };
    let messages: Vec<Value> = serde_json::from_str(&text)
        .context("--messages must hold a JSON array of pi agent messages")?;
    let model = task_model(ctx, Task::ExtractMemories, &args.model)?
        .ok_or_else(|| no_model(Task::ExtractMemories))?;
    let cfg = ctx.config();
    let mut opts = ExtractOptions::from(cfg);
    opts.sessions = sessions(ctx, cfg).map(|s| s as _);
    opts.observers.extend(Progress::observers());
    let messages = transcript::from_agent_messages(&messages);
    let turn = Turn {
        messages: &messages,
        instructions: &[],
    };
    let out = run_extract(ctx.store(), &model, &turn, &opts, &CancelToken::new())
        .map_err(|e| anyhow!("{}", memory_agent::extract_failed_text(&e)))?;
    let text = out
        .notification()
        .unwrap_or_else(|| "Nothing extracted.".to_owned());
    if ctx.json() {
        return print_json(&json!({ "writes": out.writes(), "text": text }));
    }
    print_text(&text)
}

/// `pimem surface`: which memories a prompt would surface, and the exact hidden message.
pub(crate) fn cmd_surface(ctx: &Context, args: SurfaceArgs) -> Result<()> {
    ctx.ensure_on()?;
    let cfg = ctx.config();
    let opts = SurfacingOptions::from(cfg);
    // A model only when the selector can use one (lexical never calls a model).
    let model = match opts.selector {
        Selector::Lexical => None,
        _ => task_model(ctx, Task::AutoSurfacing, &args.model)?,
    };
    let request =
        SurfacingRequest::new(&args.prompt).with_model(model.as_ref().map(|m| m as &dyn Model));
    let out = memory_agent::Surfacer::new(opts).surface(ctx.store(), request)?;
    if let Some(reason) = &out.fallback {
        eprintln!("pimem: note: model selection failed ({reason}); used the lexical choice");
    }
    for w in &out.warnings {
        eprintln!("pimem: warning: {w}");
    }
    if ctx.json() {
        return print_json(&json!({
            "message": out.message, "files": out.files, "recalled": out.recalled,
            "selector": out.selector.as_str(),
        }));
    }
    if out.message.is_empty() {
        let l = memory_core::ui_language(ctx.config());
        eprintln!(
            "{}",
            memory_core::catalog::Text::CliNothingRelevant.template(l)
        );
        return Ok(());
    }
    print_text(&out.message)
}
