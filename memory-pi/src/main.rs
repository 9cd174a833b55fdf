//! `pimem`: the command-line interface and pi sidecar of the memory layer.
//!
//! Structure: global options in [`Cli`], one variant of [`Command`] per subcommand, the
//! command implementations in [`cli`] (one `cmd_*` function each); the resolved global options
//! travel in a [`cli::Context`]. Texts printed on stdout are the `memory` tool texts of
//! pi-memory 2.5; errors go to stderr with exit status 1.
//!
//! `pimem serve` is the sidecar the pi extension (`extension/index.ts`) spawns per session;
//! its JSON-RPC protocol (version 1) and design decisions are documented in the library's
//! `memory_pi::serve` module.
#![forbid(unsafe_code)]

mod cli;
mod cli_admin;
mod cli_experience;
mod cli_git;
mod cli_io;
mod cli_scope;
mod cli_sessions;
mod cli_tasks;

use std::io::Write;
use std::path::PathBuf;
use std::sync::LazyLock;

use anyhow::Result;
use clap::{CommandFactory, Parser, Subcommand};
use memory_pi::serve;

/// `pimem --version`: version, sidecar protocol and platform (`memory_pi::platform`).
static VERSION: LazyLock<String> = LazyLock::new(memory_pi::platform::version_text);

/// Persistent file-system memory for coding agents.
#[derive(Parser)]
#[command(name = "pimem", version = VERSION.as_str(), about)]
struct Cli {
    /// Working directory whose project is meant [default: the current directory].
    #[arg(long, global = true, value_name = "PATH")]
    cwd: Option<PathBuf>,

    /// Memory root [default: memoryDir from memory.json, else ~/.pi/memory]. `~` and `~/`
    /// expand to the home directory; a relative path is resolved against the working
    /// directory.
    #[arg(long = "memory-dir", global = true, value_name = "DIR")]
    memory_dir: Option<String>,

    /// pi's agent directory, where memory.json and sessions live [default:
    /// $PI_CODING_AGENT_DIR, else ~/.pi/agent].
    #[arg(long = "agent-dir", global = true, value_name = "DIR")]
    agent_dir: Option<PathBuf>,

    /// Also read `<cwd>/.pi/memory.json` (only for projects you trust).
    #[arg(long = "trust-project", global = true)]
    trust_project: bool,

    /// Print structured output as JSON.
    #[arg(long, global = true)]
    json: bool,

    /// Which memory to act on: project (this project, the default), user (every project of
    /// yours, `<memoryDir>/user`) or team (`<repository root>/.pi/memory`, committed with the
    /// code). `list` and `search` span every scope unless it is given.
    #[arg(long, global = true, value_name = "SCOPE")]
    scope: Option<memory_core::Scope>,

    #[command(subcommand)]
    command: Command,
}

/// The subcommands.
#[derive(Subcommand)]
enum Command {
    /// Print the project's memory directory (`<memoryDir>/git/<name>` or `.../local/<name>`).
    Dir,
    /// Show the 7-line memory status (directory, capacity, window, entries, modules, lock).
    Status,
    /// Add a memory, or overwrite the one with exactly this name.
    Add(cli::AddArgs),
    /// Rewrite an existing memory's content (and description/type).
    Replace(cli::ReplaceArgs),
    /// Delete a memory: its file and its index line.
    Remove(cli::RemoveArgs),
    /// One line per memory, oldest first.
    List,
    /// Case-insensitive search over names, descriptions and bodies (or past pi sessions).
    Search(cli::SearchArgs),
    /// Show one memory: its frontmatter and body.
    Show(cli::ShowArgs),
    /// Rename a memory: new file name, index line kept in place.
    Rename(cli::RenameArgs),
    /// Move a memory to another scope (written there before it is removed here).
    Promote(cli_scope::PromoteArgs),
    /// Rebuild MEMORY.md from the entry files (keeps a hand-written header).
    RebuildIndex,
    /// Remove a left-behind .lock file.
    Unlock(cli::UnlockArgs),
    /// Print the exact `memory_index` system-prompt section (window + sanitising).
    Section,
    /// The run log: recorded pi runs, their summaries and experiences (`/experience` in pi).
    #[command(subcommand)]
    Experience(cli_experience::ExperienceCommand),
    /// Consolidate memories with the dream model (merge duplicates, fix contradictions).
    Dream(cli_tasks::DreamArgs),
    /// Extract memories from a transcript (a JSON array of pi agent messages).
    Extract(cli_tasks::ExtractArgs),
    /// Show which memories a prompt would surface, and the exact hidden message.
    Surface(cli_tasks::SurfaceArgs),
    /// pi's past sessions: `list [--all] [--named]`, `search <query>` (pi-session's engine).
    Sessions(cli_sessions::SessionsArgs),
    /// Switch memory on for every project of this pi agent directory (`auto-memory.json`).
    On,
    /// Switch memory off: no surfacing, extraction, dream or section; files are kept.
    Off,
    /// Read-only checks of the memory setup; exit status 1 when one fails.
    Doctor,
    /// Run the pi sidecar: JSON-RPC over stdin/stdout (spawned by the pi extension).
    Serve,
    /// Print the `memory` tool's JSON schema as registered with pi.
    #[command(hide = true)]
    ToolSchema,
    /// Serve the project memory over the Model Context Protocol (stdio; --http for
    /// localhost HTTP): for Claude Code, Codex, Cursor and other MCP clients.
    Mcp(cli_io::McpArgs),
    /// Import memories from Claude Code, another pi-memory directory or a Markdown directory.
    Import(cli_io::ImportArgs),
    /// Export the whole project memory as one JSON or Markdown document.
    Export(cli_io::ExportArgs),
    /// Git's merge driver for MEMORY.md (`pimem merge-index %O %A %B`, see `pimem git setup`).
    MergeIndex(cli_git::MergeIndexArgs),
    /// Git integration: `setup` registers the MEMORY.md merge driver in this repository.
    #[command(subcommand)]
    Git(cli_git::GitCommand),
    /// Keep the memory root in your private git repository: commit, pull --rebase, push.
    Sync(cli_git::SyncArgs),
    /// Print a shell completion script: `pimem completions bash > /etc/bash_completion.d/pimem`.
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
    /// Print the man page (roff); `cargo xtask dist` ships it as `pimem.1`.
    #[command(hide = true)]
    Man,
}

fn main() {
    let cli = Cli::parse();
    if let Err(err) = run(cli) {
        // `pimem list | head`: a closed stdout is the reader's choice, not an error.
        let broken_pipe = err.chain().any(|e| {
            e.downcast_ref::<std::io::Error>()
                .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
        });
        if broken_pipe {
            std::process::exit(0);
        }
        eprintln!("pimem: {err:#}");
        std::process::exit(1);
    }
}

fn run(cli: Cli) -> Result<()> {
    // The sidecar and the schema need no project context.
    match cli.command {
        Command::Serve => return serve::run(),
        Command::ToolSchema => return serve::print_tool_schema(),
        Command::Mcp(args) => {
            // Decision (issue 16): the MCP server serves the project scope only, for now.
            if cli.scope.is_some() {
                anyhow::bail!("--scope is not supported by pimem mcp: it serves the project scope");
            }
            let global = cli::GlobalOptions {
                cwd: cli.cwd,
                memory_dir: cli.memory_dir,
                agent_dir: cli.agent_dir,
                trust_project: cli.trust_project,
                json: cli.json,
                scope: None,
            };
            return cli_io::cmd_mcp(global, args);
        }
        Command::Sessions(args) => {
            let at = cli_sessions::Where {
                cwd: cli::absolute_cwd(cli.cwd)?,
                agent_dir: cli.agent_dir.or_else(memory_core::default_agent_dir),
                json: cli.json,
            };
            return cli_sessions::cmd_sessions(&at, args);
        }
        Command::MergeIndex(args) => return cli_git::cmd_merge_index(args),
        Command::Git(cmd) => return cli_git::cmd_git(&cli::absolute_cwd(cli.cwd)?, cmd),
        // Rendered into memory first: clap_complete panics on a failed write (`| head`).
        Command::Completions { shell } => {
            let mut script = Vec::new();
            clap_complete::generate(shell, &mut Cli::command(), "pimem", &mut script);
            return Ok(std::io::stdout().write_all(&script)?);
        }
        Command::Man => {
            let mut page = Vec::new();
            clap_mangen::Man::new(Cli::command()).render(&mut page)?;
            return Ok(std::io::stdout().write_all(&page)?);
        }
        _ => {}
    }
    let opts = cli::GlobalOptions {
        cwd: cli.cwd,
        memory_dir: cli.memory_dir,
        agent_dir: cli.agent_dir,
        trust_project: cli.trust_project,
        json: cli.json,
        scope: cli.scope,
    };
    // The switch and the doctor work without an opened project.
    match cli.command {
        Command::On => return cli_admin::cmd_switch(&opts, true),
        Command::Off => return cli_admin::cmd_switch(&opts, false),
        Command::Doctor => return cli_admin::cmd_doctor(&opts),
        _ => {}
    }
    let ctx = cli::Context::from_options(opts)?;
    match cli.command {
        Command::Dir => cli::cmd_dir(&ctx),
        Command::Status => cli::cmd_status(&ctx),
        Command::Add(args) => cli::cmd_add(&ctx, args),
        Command::Replace(args) => cli::cmd_replace(&ctx, args),
        Command::Remove(args) => cli::cmd_remove(&ctx, args),
        Command::List => cli::cmd_list(&ctx),
        Command::Search(args) => cli::cmd_search(&ctx, args),
        Command::Show(args) => cli::cmd_show(&ctx, args),
        Command::Rename(args) => cli::cmd_rename(&ctx, args),
        Command::Promote(args) => cli_scope::cmd_promote(&ctx, args),
        Command::RebuildIndex => cli::cmd_rebuild_index(&ctx),
        Command::Unlock(args) => cli::cmd_unlock(&ctx, args),
        Command::Section => cli::cmd_section(&ctx),
        Command::Experience(cmd) => cli_experience::cmd_experience(&ctx, cmd),
        Command::Dream(args) => cli_tasks::cmd_dream(&ctx, args),
        Command::Extract(args) => cli_tasks::cmd_extract(&ctx, args),
        Command::Surface(args) => cli_tasks::cmd_surface(&ctx, args),
        Command::Import(args) => cli_io::cmd_import(&ctx, args),
        Command::Export(args) => cli_io::cmd_export(&ctx, args),
        Command::Sync(args) => cli_git::cmd_sync(ctx.memory_root(), args),
        Command::Serve
        | Command::ToolSchema
        | Command::Mcp(_)
        | Command::Sessions(_)
        | Command::On
        | Command::Off
        | Command::Doctor
        | Command::Completions { .. }
        | Command::MergeIndex(_)
        | Command::Git(_)
        | Command::Man => {
            unreachable!("dispatched above")
        }
    }
}
