//! The model-driven subcommands without pi: `pimem dream`, `pimem extract`, `pimem surface`.
//!
//! Models come from the same `memory.json` as in pi (`<task>.model` ?? `defaults.model`,
//! `provider/model-id`), reached through an OpenAI-compatible endpoint
//! (`memory_agent::HttpModel`):
//! 1. `--model-url URL` (or `PIMEM_MODEL_URL`) with the key from the environment variable
//!    named by `--api-key-env` (or `PIMEM_API_KEY_ENV`);
//! 2. else the provider's entry in pi's `<agentDir>/models.json` (`baseUrl`, `apiKey`; an
//!    `apiKey` naming an environment variable is read from it), for providers whose `api` is
//!    `openai-completions`.
//!
//! Plain `http://` endpoints work in every build; `https://` needs the `http-tls` feature.
//! The API key is never printed.

use std::io::Read;
use std::path::Path;

use anyhow::{Context as _, Result, anyhow, bail};
use clap::Args;
use memory_agent::nudge::count_project_sessions;
use memory_agent::sessions::{ProjectSessions, SessionSearchOptions};
use memory_agent::{CancelToken, HttpModel, run_dream, run_extract};
use memory_core::{Config, Task};
use serde_json::{Value, json};

use crate::cli::{Context, confirm, print_json, print_text};

/// Where the model endpoint comes from (global to the model subcommands).
#[derive(Args, Clone, Default)]
pub struct ModelArgs {
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
pub struct DreamArgs {
    /// Run without asking for confirmation.
    #[arg(long)]
    yes: bool,
    #[command(flatten)]
    model: ModelArgs,
}

/// `pimem extract`.
#[derive(Args)]
pub struct ExtractArgs {
    /// A JSON array of pi agent messages (as in `agent_end`); `-` reads stdin.
    #[arg(long, value_name = "FILE")]
    messages: String,
    #[command(flatten)]
    model: ModelArgs,
}

/// `pimem surface`.
#[derive(Args)]
pub struct SurfaceArgs {
    /// The user prompt to surface memories for.
    prompt: String,
    #[command(flatten)]
    model: ModelArgs,
}

fn no_model(task: Task) -> anyhow::Error {
    let key = task.key();
    anyhow!("no model for {key} — set \"{key}.model\" or \"defaults.model\" in memory.json")
}

/// Builds the HTTP model for a task's configured `provider/model-id`.
fn http_model(ctx: &Context, spec: &str, args: &ModelArgs) -> Result<HttpModel> {
    let url = args.model_url.clone().or_else(|| {
        std::env::var("PIMEM_MODEL_URL")
            .ok()
            .filter(|v| !v.is_empty())
    });
    let key_env = args.api_key_env.clone().or_else(|| {
        std::env::var("PIMEM_API_KEY_ENV")
            .ok()
            .filter(|v| !v.is_empty())
    });
    if let Some(url) = url {
        let model = HttpModel::new(url);
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
    let mut model = HttpModel::new(base);
    if let Some(var) = key_env {
        model = model.with_api_key_env(&var).map_err(|e| anyhow!("{e}"))?;
    } else if let Some(key) = p["apiKey"].as_str() {
        // pi accepts either an environment variable's name or the key itself.
        model = match std::env::var(key) {
            Ok(value) if !value.is_empty() => model.with_api_key(value),
            _ => model.with_api_key(key),
        };
    }
    Ok(model)
}

fn task_model(ctx: &Context, task: Task, args: &ModelArgs) -> Result<(String, HttpModel)> {
    let spec = ctx
        .config()
        .task_model(task)
        .ok_or_else(|| no_model(task))?;
    Ok((spec.to_owned(), http_model(ctx, spec, args)?))
}

fn sessions(ctx: &Context, cfg: &Config) -> Option<ProjectSessions> {
    ctx.agent_dir().map(|dir| {
        ProjectSessions::for_agent_dir(
            dir,
            ctx.cwd(),
            SessionSearchOptions {
                max_sessions: cfg.session_search.max_sessions,
                max_matches: cfg.session_search.max_matches,
                ..SessionSearchOptions::default()
            },
        )
    })
}

/// `pimem dream` (PM-69): confirm, then consolidate with the dream model.
pub fn cmd_dream(ctx: &Context, args: DreamArgs) -> Result<()> {
    let (_, model) = task_model(ctx, Task::Dream, &args.model)?;
    if !args.yes {
        let question = "Consolidate all memory files? This rewrites them in-place.";
        if !confirm(question)? {
            return Ok(());
        }
    }
    let cfg = ctx.config();
    let sessions = sessions(ctx, cfg);
    let session_count = sessions
        .as_ref()
        .and_then(|s| count_project_sessions(s).ok())
        .unwrap_or(0);
    eprintln!("Consolidating memory...");
    let out = run_dream(
        ctx.store(),
        &model,
        cfg,
        session_count,
        sessions.as_ref().map(|s| s as _),
        &CancelToken::new(),
    )
    .map_err(|e| anyhow!("{}", memory_agent::dream_failed_text(&e)))?;
    for n in &out.run.notices {
        eprintln!("pimem: note: {n}");
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
pub fn cmd_extract(ctx: &Context, args: ExtractArgs) -> Result<()> {
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
    let (_, model) = task_model(ctx, Task::ExtractMemories, &args.model)?;
    let cfg = ctx.config();
    let sessions = sessions(ctx, cfg);
    let out = run_extract(
        ctx.store(),
        &model,
        cfg,
        &messages,
        &[],
        sessions.as_ref().map(|s| s as _),
        &CancelToken::new(),
    )
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
pub fn cmd_surface(ctx: &Context, args: SurfaceArgs) -> Result<()> {
    let cfg = ctx.config();
    let spec = cfg.task_model(Task::AutoSurfacing).map(str::to_owned);
    let model = match (&spec, cfg.effective_selector()) {
        (Some(spec), memory_core::Selector::Model | memory_core::Selector::Hybrid) => {
            Some(http_model(ctx, spec, &args.model)?)
        }
        _ => None,
    };
    let mut request = memory_agent::SurfacingRequest::new(&args.prompt);
    if let Some(m) = &model {
        request = request.with_model(m);
    }
    let out = memory_agent::Surfacer::new().surface(ctx.store(), cfg, request)?;
    if let Some(reason) = &out.fallback {
        eprintln!("pimem: note: model selection failed ({reason}); used the lexical choice");
    }
    if ctx.json() {
        return print_json(&json!({
            "message": out.message, "files": out.files, "recalled": out.recalled,
            "selector": out.selector.as_str(),
        }));
    }
    if out.message.is_empty() {
        eprintln!("Nothing relevant.");
        return Ok(());
    }
    print_text(&out.message)
}
