//! `pimem import`, `pimem export` and `pimem mcp`: memory in from other tools, out as one
//! document, and served to any MCP client.

use std::path::PathBuf;

use anyhow::{Context as _, Result, bail};
use clap::Args;
use memory_pi::export::{self, Format};
use memory_pi::import::{self, SourceKind};

use crate::cli::{Context, print_json, print_text};

/// `pimem import`.
#[derive(Args)]
pub(crate) struct ImportArgs {
    /// Where the memories come from: claude-code (Claude Code's auto memory), pi-memory
    /// (another pi-memory directory: orphaned, copied, pre-2.5 Windows nested), dir (any
    /// directory of Markdown files), pi-auto-memory (pi-auto-memory's directory of this
    /// project, found by its identity rule unless a directory is given).
    #[arg(long = "from", value_name = "SOURCE")]
    from: SourceKind,
    /// The source directory (never modified). Optional with --from pi-auto-memory.
    path: Option<PathBuf>,
    /// The source directory, as an option (same as PATH).
    #[arg(long = "dir", value_name = "DIR", conflicts_with = "path")]
    dir: Option<PathBuf>,
    /// Print what would be imported and write nothing.
    #[arg(long = "dry-run")]
    dry_run: bool,
}

/// `pimem import --from <source> [<path> | --dir <path>]`.
pub(crate) fn cmd_import(ctx: &Context, args: ImportArgs) -> Result<()> {
    let path = match args.path.as_ref().or(args.dir.as_ref()) {
        Some(p) if p.is_absolute() => p.clone(),
        Some(p) => ctx.cwd().join(p),
        None if args.from == SourceKind::PiAutoMemory => {
            let Some(agent_dir) = ctx.agent_dir() else {
                bail!(
                    "pi's agent directory is unknown (neither PI_CODING_AGENT_DIR nor HOME is set): pass --agent-dir or --dir"
                );
            };
            import::pi_auto_memory::locate(agent_dir, ctx.cwd())?
        }
        None => bail!(
            "--from {} needs the source directory (PATH or --dir DIR)",
            args.from
        ),
    };
    // Memory off or paused: say so once instead of refusing every entry (PA-15).
    if !args.dry_run {
        ctx.ensure_on()?;
    }
    let scan = args.from.source().scan(&path)?;
    let mut items = import::plan(ctx.store(), &scan)?;
    import::apply(ctx.store(), &mut items, args.dry_run);
    if ctx.json() {
        return print_json(&import::report_json(
            &items,
            args.dry_run,
            args.from,
            &scan.root,
        ));
    }
    let l = memory_core::ui_language(ctx.config());
    if scan.root != path || args.path.is_none() && args.dir.is_none() {
        let from = memory_core::catalog::t(
            l,
            memory_core::catalog::Text::ImportFrom,
            &[("path", &scan.root.display())],
        );
        eprintln!("{from}");
    }
    print_text(&import::report_text(l, &items, args.dry_run))
}

/// `pimem export`.
#[derive(Args)]
pub(crate) struct ExportArgs {
    /// json or markdown.
    #[arg(long, value_name = "FORMAT", default_value = "json")]
    format: Format,
    /// Write to this file (atomically, mode 0600) instead of stdout.
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
}

/// `pimem export --format json|markdown [--out FILE]`.
pub(crate) fn cmd_export(ctx: &Context, args: ExportArgs) -> Result<()> {
    let text = export::export(ctx.store(), args.format)?;
    let Some(out) = args.out else {
        let mut stdout = std::io::stdout().lock();
        std::io::Write::write_all(&mut stdout, text.as_bytes())?;
        return Ok(());
    };
    let out = if out.is_absolute() {
        out
    } else {
        std::env::current_dir()
            .context("cannot read the current directory to resolve --out")?
            .join(out)
    };
    let Some(path) = camino::Utf8Path::from_path(&out) else {
        bail!("--out {} is not a UTF-8 path", out.display());
    };
    memory_core::write_private_file(path, text.as_bytes())
        .with_context(|| format!("cannot write {path}"))?;
    let l = memory_core::ui_language(ctx.config());
    let done = memory_core::catalog::t(
        l,
        memory_core::catalog::Text::CliExported,
        &[("path", &path)],
    );
    eprintln!("{done}");
    Ok(())
}

/// `pimem mcp`.
#[derive(Args)]
pub(crate) struct McpArgs {
    /// Serve streamable HTTP on a loopback address (`PORT`, `127.0.0.1:PORT`, `[::1]:PORT`)
    /// instead of stdio. Requests need the bearer token printed at launch.
    #[arg(long, value_name = "ADDR")]
    http: Option<String>,
    /// With --http: write the bearer token to this file (mode 0600) instead of stderr.
    #[arg(long = "token-file", value_name = "FILE", requires = "http")]
    token_file: Option<PathBuf>,
    /// How often to look for changes made by others, to notify clients; 0 turns it off.
    #[arg(long = "watch-interval-ms", value_name = "MS", default_value_t = 2000)]
    watch_interval_ms: u64,
}

/// `pimem mcp`: the MCP server (stdio, or HTTP with --http).
#[cfg(feature = "mcp")]
pub(crate) fn cmd_mcp(global: crate::cli::GlobalOptions, args: McpArgs) -> Result<()> {
    use memory_pi::mcp::{McpOptions, Transport, http};
    let process_cwd = std::env::current_dir();
    let cwd = match global.cwd {
        Some(path) if path.is_absolute() => path,
        Some(path) => process_cwd
            .context("cannot read the current directory to resolve --cwd")?
            .join(path),
        None => process_cwd.context("cannot read the current directory")?,
    };
    let transport = match &args.http {
        None => Transport::Stdio,
        Some(addr) => Transport::Http(http::HttpOptions {
            addr: http::parse_addr(addr)?,
            token_file: args.token_file.clone(),
        }),
    };
    let opts = McpOptions {
        cwd,
        memory_dir: global.memory_dir,
        agent_dir: global.agent_dir.or_else(memory_core::default_agent_dir),
        trust_project: global.trust_project,
        watch_interval: (args.watch_interval_ms > 0)
            .then(|| std::time::Duration::from_millis(args.watch_interval_ms)),
    };
    memory_pi::mcp::run(opts, transport)
}

/// `pimem mcp` in a build without the `mcp` feature.
#[cfg(not(feature = "mcp"))]
pub(crate) fn cmd_mcp(_global: crate::cli::GlobalOptions, _args: McpArgs) -> Result<()> {
    bail!("this pimem was built without the `mcp` feature: rebuild with `--features mcp`")
}
