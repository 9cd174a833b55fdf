//! The `pimem` subcommands for people and scripts.
//!
//! Every command resolves the project of `--cwd` exactly as the pi extension does (same
//! memory.json layering, same project key), so the CLI and pi always agree on the directory.

use std::io::{IsTerminal, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context as _, Result, anyhow, bail};
use clap::Args;
use memory_agent::pi::sessions::{ProjectSessions, SessionSearchOptions};
use memory_core::tool::{SessionSearch, VersionBook};
use memory_core::{
    AddRequest, Config, EntryType, LoadedConfig, LockState, Modules, Notice, ReplaceRequest,
    StoredEntry, Version, WriteOutcome, default_agent_dir, home_dir, load_config, open_project,
    status_block,
};
use serde_json::{Value, json};

/// The global options as parsed.
pub(crate) struct GlobalOptions {
    /// `--cwd`.
    pub cwd: Option<PathBuf>,
    /// `--memory-dir`.
    pub memory_dir: Option<String>,
    /// `--agent-dir`.
    pub agent_dir: Option<PathBuf>,
    /// `--trust-project`.
    pub trust_project: bool,
    /// `--json`.
    pub json: bool,
    /// `--scope` (issue 16): the scope single-entry commands act on; `None`: project, and
    /// `list`/`search` span every scope.
    pub scope: Option<memory_core::Scope>,
}

/// `--cwd` made absolute (the process's directory when absent).
pub(crate) fn absolute_cwd(cwd: Option<PathBuf>) -> Result<PathBuf> {
    let process_cwd = std::env::current_dir();
    Ok(match cwd {
        Some(path) if path.is_absolute() => path,
        Some(path) => process_cwd
            .context("cannot read the current directory to resolve --cwd")?
            .join(path),
        None => process_cwd.context("cannot read the current directory")?,
    })
}

/// Global options, resolved once: the project, its configuration and where pi lives.
pub(crate) struct Context {
    cwd: PathBuf,
    agent_dir: Option<PathBuf>,
    config: Config,
    scopes: memory_core::Scopes,
    scope: Option<memory_core::Scope>,
    trusted: bool,
    json: bool,
}

impl Context {
    /// Resolves the working directory, loads memory.json, and opens the project's store.
    pub(crate) fn from_options(opts: GlobalOptions) -> Result<Self> {
        let cwd = absolute_cwd(opts.cwd)?;
        let agent_dir = opts.agent_dir.or_else(default_agent_dir);
        let LoadedConfig {
            config, problems, ..
        } = match &agent_dir {
            Some(dir) => load_config(dir, &cwd, opts.trust_project),
            None => LoadedConfig {
                config: Config::default(),
                problems: Vec::new(),
                sources: Vec::new(),
            },
        };
        if let Some(fatal) = problems.iter().find(|p| p.fatal) {
            bail!("Failed to load memory config: {fatal}");
        }
        for p in &problems {
            eprintln!("pimem: warning: {p}");
        }
        let project = open_project(
            &config,
            &cwd,
            opts.memory_dir.as_deref(),
            home_dir().as_deref(),
        )
        .with_context(|| format!("cannot determine the memory directory of {}", cwd.display()))?;
        // Every write checks pi-auto-memory's switch of this agent directory (PA-15).
        let project = match &agent_dir {
            Some(dir) => project.with_switch(memory_core::Switch::new(
                dir,
                std::time::Duration::from_millis(config.lock.timeout_ms),
            )),
            None => project,
        };
        let scopes = memory_core::Scopes::from_project(project, &cwd)
            .with_context(|| format!("cannot determine the memory scopes of {}", cwd.display()))?;
        if let Some(scope) = opts.scope {
            scopes.store(scope)?;
        }
        Ok(Context {
            cwd,
            agent_dir,
            config,
            scopes,
            scope: opts.scope,
            trusted: opts.trust_project,
            json: opts.json,
        })
    }

    /// The store of `--scope` (the project's by default).
    pub(crate) fn store(&self) -> &memory_core::Store {
        match self.scope {
            Some(scope) => self
                .scopes
                .store(scope)
                .unwrap_or(&self.scopes.project().store),
            None => &self.scopes.project().store,
        }
    }

    /// Every scope of the working directory (issue 16).
    pub(crate) fn scopes(&self) -> &memory_core::Scopes {
        &self.scopes
    }

    /// The effective configuration.
    pub(crate) fn config(&self) -> &Config {
        &self.config
    }

    /// pi's agent directory, when known.
    pub(crate) fn agent_dir(&self) -> Option<&Path> {
        self.agent_dir.as_deref()
    }

    /// The absolute working directory.
    pub(crate) fn cwd(&self) -> &Path {
        &self.cwd
    }

    /// Whether `--trust-project` was given (the team section is injected only then).
    pub(crate) fn trusted(&self) -> bool {
        self.trusted
    }

    /// The memory root (`memoryDir`, expanded): the directory `pimem sync` keeps in git.
    pub(crate) fn memory_root(&self) -> &Path {
        &self.scopes.project().memory_root
    }

    /// Whether `--json` was given.
    pub(crate) fn json(&self) -> bool {
        self.json
    }

    /// Fails with `Memory is off` (or paused) when the switch says so: for the commands
    /// that would run a model only to have every write refused.
    pub(crate) fn ensure_on(&self) -> Result<()> {
        match self.agent_dir.as_deref().and_then(|d| {
            memory_core::Switch::new(d, std::time::Duration::ZERO)
                .state()
                .refusal()
        }) {
            Some(refusal) => bail!(
                "{refusal}. {}",
                memory_core::messages::turn_on_hint(memory_core::ui_language(self.config()))
            ),
            None => Ok(()),
        }
    }
}

/// `pimem add`.
#[derive(Args)]
pub(crate) struct AddArgs {
    /// Memory name (unique; the lookup key).
    #[arg(long)]
    name: String,
    /// The body; `-` reads it from stdin.
    #[arg(long)]
    content: String,
    /// One self-contained line; derived from the body's first sentence when absent.
    #[arg(long)]
    description: Option<String>,
    /// user | feedback | project | reference [default: feedback, or the existing type].
    #[arg(long = "type", value_name = "TYPE")]
    entry_type: Option<String>,
}

/// `pimem replace`.
#[derive(Args)]
pub(crate) struct ReplaceArgs {
    /// Name (or file name) of the memory.
    #[arg(long)]
    name: String,
    /// New body; `-` reads it from stdin. Without it only description/type change.
    #[arg(long)]
    content: Option<String>,
    /// New description (re-derived from a new body when absent).
    #[arg(long)]
    description: Option<String>,
    /// New type.
    #[arg(long = "type", value_name = "TYPE")]
    entry_type: Option<String>,
    /// Fail with `Memory conflict: stale version` unless the memory is at this version.
    #[arg(long = "expect-version", value_name = "VERSION")]
    expect_version: Option<String>,
}

/// `pimem remove`.
#[derive(Args)]
pub(crate) struct RemoveArgs {
    /// Name (or file name) of the memory.
    #[arg(long)]
    name: String,
    /// Fail with `Memory conflict: stale version` unless the memory is at this version.
    #[arg(long = "expect-version", value_name = "VERSION")]
    expect_version: Option<String>,
}

/// `pimem search`.
#[derive(Args)]
pub(crate) struct SearchArgs {
    /// Text to look for (case-insensitive substring).
    query: String,
    /// Search past pi sessions of this project instead of memories.
    #[arg(long)]
    sessions: bool,
}

/// `pimem show`.
#[derive(Args)]
pub(crate) struct ShowArgs {
    /// Name (or file name) of the memory.
    name: String,
}

/// `pimem rename`.
#[derive(Args)]
pub(crate) struct RenameArgs {
    /// Current name (or file name).
    #[arg(long)]
    name: String,
    /// New name.
    #[arg(long = "new-name")]
    new_name: String,
    /// Fail with `Memory conflict: stale version` unless the memory is at this version.
    #[arg(long = "expect-version", value_name = "VERSION")]
    expect_version: Option<String>,
}

/// `pimem unlock`.
#[derive(Args)]
pub(crate) struct UnlockArgs {
    /// Remove without asking.
    #[arg(long)]
    yes: bool,
}

/// Prints pretty JSON and a newline.
pub(crate) fn print_json(value: &Value) -> Result<()> {
    let mut out = std::io::stdout().lock();
    serde_json::to_writer_pretty(&mut out, value)?;
    out.write_all(b"\n")?;
    Ok(())
}

/// Prints a text, adding a final newline when it lacks one.
pub(crate) fn print_text(text: &str) -> Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())?;
    if !text.ends_with('\n') {
        out.write_all(b"\n")?;
    }
    Ok(())
}

fn print_notices(notices: &[Notice]) {
    for n in notices {
        eprintln!("pimem: note: {n}");
    }
}

fn read_content(value: String) -> Result<String> {
    if value != "-" {
        return Ok(value);
    }
    let mut text = String::new();
    std::io::stdin()
        .read_to_string(&mut text)
        .context("cannot read the content from stdin (it must be UTF-8)")?;
    Ok(text)
}

fn parse_type(value: Option<String>) -> Result<Option<EntryType>> {
    Ok(value.map(|t| t.trim().parse::<EntryType>()).transpose()?)
}

fn parse_version(value: Option<String>) -> Result<Option<Version>> {
    Ok(value.map(|v| v.trim().parse::<Version>()).transpose()?)
}

fn entry_json(e: &StoredEntry) -> Value {
    json!({
        "name": e.meta.name,
        "description": e.meta.description,
        "type": e.meta.entry_type.as_str(),
        "created": e.meta.created,
        "modified": e.meta.modified,
        "file": e.file,
        "version": e.version,
        "body": e.body,
    })
}

/// Entries of one scope, labelled.
fn scoped(
    scope: memory_core::Scope,
    entries: Vec<Arc<StoredEntry>>,
) -> Vec<memory_core::ScopedEntry> {
    entries
        .into_iter()
        .map(|entry| memory_core::ScopedEntry { scope, entry })
        .collect()
}

/// [`entry_json`] plus `"scope"`.
fn scoped_json(e: &memory_core::ScopedEntry) -> Value {
    let mut v = entry_json(&e.entry);
    if let Value::Object(map) = &mut v {
        map.insert("scope".into(), Value::from(e.scope.as_str()));
    }
    v
}

/// `pimem dir`.
pub(crate) fn cmd_dir(ctx: &Context) -> Result<()> {
    let dir = &ctx.scopes.project().dir;
    if ctx.json {
        return print_json(&json!({
            "path": dir.path,
            "kind": dir.kind.as_str(),
            "key": dir.key,
            "name": dir.name,
            "memoryRoot": ctx.scopes.project().memory_root,
        }));
    }
    print_path(&dir.path)
}

/// Writes a path and a newline to stdout, byte-exact on Unix.
fn print_path(path: &Path) -> Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let mut out = std::io::stdout().lock();
    out.write_all(path.as_os_str().as_bytes())?;
    out.write_all(b"\n")?;
    out.flush()?;
    Ok(())
}

fn modules(cfg: &Config) -> Modules {
    // The CLI cannot ask pi's model registry; a configured model counts as available.
    Modules::from_config(cfg, |_| true)
}

/// `pimem status`.
pub(crate) fn cmd_status(ctx: &Context) -> Result<()> {
    let store = ctx.store();
    let cfg = &ctx.config;
    if ctx.json {
        let raw = store.read_index()?;
        let cap = memory_index::index_capacity(&raw);
        let section = store.index_section(
            cfg.mem_index_inject_max_lines,
            cfg.mem_index_inject_max_bytes,
        )?;
        let lock = match store.lock_state()? {
            LockState::Free => json!({ "state": "free" }),
            LockState::Unreadable { empty } => json!({ "state": "unreadable", "empty": empty }),
            LockState::Held(h) => json!({
                "state": "held", "op": h.op, "pid": h.pid, "hostname": h.hostname,
                "startedAt": h.started_at,
            }),
        };
        return print_json(&json!({
            "dir": store.dir(),
            "index": {
                "lines": cap.lines, "maxLines": cfg.mem_index_max_lines,
                "bytes": cap.bytes, "maxBytes": cfg.mem_index_max_bytes,
                "unrecognized": memory_index::parse_index(&raw).unrecognized,
            },
            "inject": {
                "lines": section.lines, "maxLines": cfg.mem_index_inject_max_lines,
                "bytes": section.bytes, "maxBytes": cfg.mem_index_inject_max_bytes,
                "truncated": section.truncated,
            },
            "entries": store.list()?.len(),
            "modules": modules(cfg).line().trim_start_matches("Modules: "),
            "lastDream": store.dream_meta().map(|m| m.last_dream_at),
            "lock": lock,
        }));
    }
    let block = status_block(store, cfg, &modules(cfg), None)?;
    let state = ctx
        .agent_dir
        .as_deref()
        .map(|d| memory_core::Switch::new(d, std::time::Duration::ZERO).state());
    let l = memory_core::ui_language(cfg);
    match state
        .as_ref()
        .and_then(|s| memory_core::messages::status_switch_line(l, s))
    {
        Some(line) => print_text(&format!("{line}\n{block}")),
        None => print_text(&block),
    }
}

/// `pimem add`.
pub(crate) fn cmd_add(ctx: &Context, args: AddArgs) -> Result<()> {
    let out = ctx.store().add(AddRequest {
        name: args.name,
        description: args.description,
        entry_type: parse_type(args.entry_type)?,
        body: read_content(args.content)?,
        created: None,
    })?;
    print_write(ctx, &out, out.saved_text())
}

/// Prints a write's notices (stderr) and its tool text or JSON (stdout).
fn print_write(ctx: &Context, out: &WriteOutcome, text: String) -> Result<()> {
    print_notices(&out.notices);
    if ctx.json {
        return print_json(&json!({
            "name": out.name, "file": out.file, "version": out.version,
            "capacityWarning": out.capacity_warning,
        }));
    }
    print_text(&text)
}

/// `pimem replace`.
pub(crate) fn cmd_replace(ctx: &Context, args: ReplaceArgs) -> Result<()> {
    if args.content.is_none() && args.description.is_none() && args.entry_type.is_none() {
        bail!("nothing to replace: pass --content, --description or --type");
    }
    let out = ctx.store().replace(ReplaceRequest {
        reference: args.name,
        name: None,
        description: args.description,
        entry_type: parse_type(args.entry_type)?,
        body: args.content.map(read_content).transpose()?,
        expected_version: parse_version(args.expect_version)?,
    })?;
    print_write(ctx, &out, out.replaced_text())
}

/// `pimem remove`.
pub(crate) fn cmd_remove(ctx: &Context, args: RemoveArgs) -> Result<()> {
    let expected = parse_version(args.expect_version)?;
    let out = ctx.store().remove(&args.name, expected.as_ref())?;
    print_notices(&out.notices);
    if ctx.json {
        return print_json(&json!({ "name": out.name, "file": out.file }));
    }
    print_text(&out.text())
}

/// `pimem list`.
pub(crate) fn cmd_list(ctx: &Context) -> Result<()> {
    let entries = match ctx.scope {
        Some(scope) => scoped(scope, ctx.store().list()?),
        None => ctx.scopes.list()?,
    };
    if ctx.json {
        return print_json(&Value::Array(entries.iter().map(scoped_json).collect()));
    }
    print_text(&memory_core::scope::list_text(
        &entries,
        &mut VersionBook::default(),
    ))
}

/// `pimem search`.
pub(crate) fn cmd_search(ctx: &Context, args: SearchArgs) -> Result<()> {
    if args.sessions {
        let agent_dir = ctx.agent_dir.as_deref().ok_or_else(|| {
            anyhow!("cannot locate pi's sessions: set --agent-dir or PI_CODING_AGENT_DIR")
        })?;
        let sessions = ProjectSessions::for_agent_dir(
            agent_dir,
            &ctx.cwd,
            SessionSearchOptions {
                max_sessions: ctx.config.session_search.max_sessions,
                max_matches: ctx.config.session_search.max_matches,
                ..SessionSearchOptions::default()
            },
        );
        let text = sessions
            .search_sessions(&args.query)
            .map_err(|e| anyhow!(e))?;
        return print_text(&text);
    }
    let hits = match ctx.scope {
        Some(scope) => scoped(scope, ctx.store().search(&args.query)?),
        None => ctx.scopes.search(&args.query)?,
    };
    if ctx.json {
        return print_json(&Value::Array(hits.iter().map(scoped_json).collect()));
    }
    print_text(&memory_core::scope::search_text(
        &hits,
        &mut VersionBook::default(),
    ))
}

/// `pimem show`.
pub(crate) fn cmd_show(ctx: &Context, args: ShowArgs) -> Result<()> {
    let entry = ctx
        .store()
        .read(&args.name)?
        .ok_or_else(|| anyhow!("Entry \"{}\" not found", args.name))?;
    if ctx.json {
        return print_json(&entry_json(&entry));
    }
    print_text(&memory_index::search_block(
        &entry.meta,
        &entry.file,
        &entry.body,
    ))
}

/// `pimem rename`.
pub(crate) fn cmd_rename(ctx: &Context, args: RenameArgs) -> Result<()> {
    let old = ctx
        .store()
        .read(&args.name)?
        .map(|e| e.meta.name.clone())
        .unwrap_or_else(|| args.name.clone());
    let expected = parse_version(args.expect_version)?;
    let out = ctx
        .store()
        .rename(&args.name, &args.new_name, expected.as_ref())?;
    print_notices(&out.notices);
    if ctx.json {
        return print_json(&json!({
            "oldName": old, "name": out.name, "file": out.file, "version": out.version,
        }));
    }
    print_text(&out.renamed_text(&old))
}

/// `pimem rebuild-index`.
pub(crate) fn cmd_rebuild_index(ctx: &Context) -> Result<()> {
    let out = ctx.store().rebuild_index()?;
    print_notices(&out.notices);
    if ctx.json {
        return print_json(&json!({
            "entries": out.entries, "headerLines": out.header_lines,
            "capacityWarning": out.capacity_warning,
        }));
    }
    print_text(&out.text())
}

/// Asks `question` on a terminal (`[y/N]`); without a terminal, refuses with an error that
/// says to pass `--yes`.
pub(crate) fn confirm(question: &str) -> Result<bool> {
    if !std::io::stdin().is_terminal() {
        bail!("{question}\nrefusing without confirmation: rerun with --yes");
    }
    eprint!("{question} [y/N] ");
    let mut answer = String::new();
    std::io::stdin().read_line(&mut answer)?;
    Ok(matches!(answer.trim(), "y" | "Y" | "yes" | "Yes" | "YES"))
}

/// `pimem unlock` (PM-77): confirmation on a terminal, `--yes` for scripts.
pub(crate) fn cmd_unlock(ctx: &Context, args: UnlockArgs) -> Result<()> {
    use memory_core::catalog::{Text, t};
    let l = memory_core::ui_language(ctx.config());
    let store = ctx.store();
    let holder = match store.lock_state()? {
        LockState::Free => return print_text(&t(l, Text::UnlockNoLock, &[])),
        LockState::Held(h) => Some(h),
        LockState::Unreadable { .. } => None,
    };
    if !args.yes {
        let question = match &holder {
            Some(h) => t(l, Text::UnlockConfirmHeld, &[("holder", &h.describe())]),
            None => t(l, Text::UnlockConfirm, &[]),
        };
        if !confirm(&question)? {
            return Ok(());
        }
    }
    match store.remove_lock() {
        Ok(true) => print_text(&t(l, Text::UnlockRemoved, &[])),
        Ok(false) => print_text(&t(l, Text::UnlockNoLock, &[])),
        Err(e) => bail!("{}", t(l, Text::UnlockFailed, &[("error", &e)])),
    }
}

/// `pimem section`: the exact section value, byte for byte (no newline added).
pub(crate) fn cmd_section(ctx: &Context) -> Result<()> {
    if let Some(scope @ (memory_core::Scope::User | memory_core::Scope::Team)) = ctx.scope {
        return crate::cli_scope::cmd_scope_section(ctx, scope);
    }
    let cfg = &ctx.config;
    let section = ctx.store().index_section(
        cfg.mem_index_inject_max_lines,
        cfg.mem_index_inject_max_bytes,
    )?;
    if ctx.json {
        return print_json(&json!({
            "value": section.value, "lines": section.lines, "bytes": section.bytes,
            "truncated": section.truncated,
        }));
    }
    let mut out = std::io::stdout().lock();
    out.write_all(section.value.as_bytes())?;
    out.flush()?;
    Ok(())
}
