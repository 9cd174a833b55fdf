//! `pimem sessions`: pi's past sessions for people and scripts, on the engine behind the
//! `search-session` tool and the `@s:` / `@as:` references (memory-agent's
//! `pi::session_tools`).
//!
//! * `pimem sessions list [--all] [--named]`: the sessions of the working directory (or of
//!   every project with `--all`), newest activity first; `--named` keeps named ones.
//! * `pimem sessions search <query>`: `search-session` on the working directory's sessions
//!   (`--cwd` chooses the project): the same limits, order and `truncated` flags; `--json`
//!   prints the tool's status object.
//!
//! Decision (VECTORS §Z 18): the CLI runs as the user, so `--cwd` needs no `externalDirectories` entry (that
//! whitelist admits directories for a *model's* tool calls, PS-15). These commands do not
//! read `memory.json`: they work whatever the state of the memory configuration.

use std::path::{Path, PathBuf};

use anyhow::{Result, anyhow, bail};
use clap::{Args, Subcommand};
use memory_agent::pi::session_tools::{Caller, search_session};
use memory_agent::pi::sessions::{Scope, SessionCatalog, SessionStorage, default_session_root};
use memory_core::clock::iso_millis;
use memory_core::home_dir;
use serde_json::{Value, json};

use crate::cli::{print_json, print_text};

/// `pimem sessions`.
#[derive(Args)]
pub(crate) struct SessionsArgs {
    /// A flat session directory (pi's `--session-dir`) [default:
    /// $PI_CODING_AGENT_SESSION_DIR, else <agent-dir>/sessions/--<cwd>--/].
    #[arg(long = "session-dir", global = true, value_name = "DIR")]
    session_dir: Option<PathBuf>,
    #[command(subcommand)]
    command: SessionsCommand,
}

#[derive(Subcommand)]
enum SessionsCommand {
    /// List sessions, newest activity first.
    List(ListArgs),
    /// Search the user and assistant text of the sessions (case-insensitive substring).
    Search(SearchArgs),
}

#[derive(Args)]
struct ListArgs {
    /// Every project's sessions, not only the working directory's.
    #[arg(long)]
    all: bool,
    /// Only named sessions.
    #[arg(long)]
    named: bool,
}

#[derive(Args)]
struct SearchArgs {
    /// Text to find.
    query: String,
}

/// Where `pimem sessions` looks.
pub(crate) struct Where {
    /// The working directory (absolute).
    pub cwd: PathBuf,
    /// pi's agent directory.
    pub agent_dir: Option<PathBuf>,
    /// `--json`.
    pub json: bool,
}

/// `PI_CODING_AGENT_SESSION_DIR`, pi's own variable for a flat session directory.
#[allow(clippy::disallowed_methods)] // the CLI's own option from the environment
fn session_dir_from_env() -> Option<PathBuf> {
    std::env::var_os("PI_CODING_AGENT_SESSION_DIR")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

fn storage(at: &Where, session_dir: Option<PathBuf>) -> Result<SessionStorage> {
    if let Some(dir) = session_dir.or_else(session_dir_from_env) {
        let dir = if dir.is_absolute() {
            dir
        } else {
            at.cwd.join(dir)
        };
        return Ok(SessionStorage::Flat { dir });
    }
    let agent_dir = at.agent_dir.as_deref().ok_or_else(|| {
        anyhow!("cannot locate pi's sessions: set --agent-dir or PI_CODING_AGENT_DIR")
    })?;
    Ok(SessionStorage::PerCwd {
        root: default_session_root(agent_dir),
    })
}

/// `pimem sessions …`.
pub(crate) fn cmd_sessions(at: &Where, args: SessionsArgs) -> Result<()> {
    let storage = storage(at, args.session_dir)?;
    match args.command {
        SessionsCommand::List(a) => list(at, &storage, &a),
        SessionsCommand::Search(a) => search(at, storage, &a.query),
    }
}

fn list(at: &Where, storage: &SessionStorage, args: &ListArgs) -> Result<()> {
    let scope = if args.all {
        Scope::All
    } else {
        Scope::Project(at.cwd.clone())
    };
    let sessions: Vec<_> = SessionCatalog::new()
        .list(storage, &scope)?
        .into_iter()
        .filter(|s| !args.named || s.name.is_some())
        .collect();
    if at.json {
        return print_json(&Value::Array(
            sessions
                .iter()
                .map(|s| {
                    json!({
                        "id": s.id,
                        "name": s.name,
                        "cwd": s.cwd,
                        "path": s.path,
                        "activity": iso_millis(s.modified),
                        "created": s.created.map(iso_millis),
                        "parentSession": s.parent_session,
                    })
                })
                .collect(),
        ));
    }
    if sessions.is_empty() {
        return print_text("No sessions.");
    }
    let mut out = String::new();
    for s in &sessions {
        out.push_str(&format!(
            "{}  {}  {}  {}\n",
            iso_millis(s.modified),
            s.id,
            s.name.as_deref().unwrap_or("-"),
            if args.all { s.cwd.as_str() } else { "" }
        ));
    }
    // Without --all every line has the same cwd: leave it out.
    let text: String = out
        .lines()
        .map(str::trim_end)
        .collect::<Vec<_>>()
        .join("\n");
    print_text(&text)
}

fn search(at: &Where, storage: SessionStorage, query: &str) -> Result<()> {
    let caller = Caller {
        cwd: at.cwd.clone(),
        storage,
        home: home_dir(),
        session_id: None,
        session_file: None,
    };
    let out = search_session(&json!({ "query": query }), &caller);
    if out.is_error {
        bail!(
            "{}",
            out.status["error"].as_str().unwrap_or("search failed")
        );
    }
    if at.json {
        return print_json(&out.status);
    }
    print_text(&render(&out.status, &at.cwd))
}

/// The search result for people.
fn render(status: &Value, cwd: &Path) -> String {
    let empty = Vec::new();
    let sessions = status["sessions"].as_array().unwrap_or(&empty);
    if sessions.is_empty() {
        return format!("No matches in the sessions of {}.", cwd.display());
    }
    let mut out = String::new();
    for s in sessions {
        let name = s["name"].as_str().unwrap_or("(unnamed)");
        out.push_str(&format!(
            "## {name}\nid: {}\ncwd: {}\npath: {}\nactivity: {}\n",
            s["id"].as_str().unwrap_or_default(),
            s["cwd"].as_str().unwrap_or_default(),
            s["path"].as_str().unwrap_or_default(),
            s["activity"].as_str().unwrap_or_default(),
        ));
        for seg in s["segments"].as_array().unwrap_or(&empty) {
            let cut = if seg["truncated"] == true {
                " (cut to 2000 characters)"
            } else {
                ""
            };
            out.push_str(&format!(
                "{}{cut}: {}\n",
                seg["role"].as_str().unwrap_or_default(),
                seg["text"].as_str().unwrap_or_default()
            ));
        }
        if s["truncated"] == true {
            out.push_str("(more matching lines in this session)\n");
        }
        out.push('\n');
    }
    if status["truncated"] == true {
        out.push_str("(more sessions match: showing the 20 most recently active)\n");
    }
    out.trim_end().to_owned()
}
