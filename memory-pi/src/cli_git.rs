//! `pimem merge-index`, `pimem git setup` and `pimem sync`: thin commands over
//! `memory_pi::gitmem` (the merge driver, its registration, the memory root in git).

use std::path::PathBuf;

use anyhow::{Context as _, Result};
use clap::{Args, Subcommand};
use memory_index::IndexConflict;
use memory_pi::gitmem;

/// `pimem merge-index %O %A %B`.
#[derive(Args)]
pub(crate) struct MergeIndexArgs {
    /// The common ancestor's version (`%O`).
    base: PathBuf,
    /// Ours (`%A`): the merged index is written here.
    ours: PathBuf,
    /// Theirs (`%B`).
    theirs: PathBuf,
}

/// `pimem git ...`.
#[derive(Subcommand)]
pub(crate) enum GitCommand {
    /// Register the MEMORY.md merge driver in this repository's .git/config, add the
    /// .gitattributes line for the team memory index (`.pi/memory/**/MEMORY.md`) and, when
    /// missing, `.pi/memory/.gitignore` (locks, snapshots, caches stay local). Idempotent.
    Setup(SetupArgs),
}

/// `pimem git setup`.
#[derive(Args)]
pub(crate) struct SetupArgs {
    /// The command git runs as the driver [default: the absolute path of this pimem]. Pass
    /// `pimem` to look it up on git's PATH instead.
    #[arg(long, value_name = "COMMAND")]
    program: Option<String>,
    /// A `.gitattributes` pattern to route to the driver (repeatable) [default:
    /// `.pi/memory/**/MEMORY.md`].
    #[arg(long = "pattern", value_name = "PATTERN")]
    patterns: Vec<String>,
}

/// `pimem sync`.
#[derive(Args)]
pub(crate) struct SyncArgs {
    /// The git URL of your private memory repository (stored as `origin`; needed once).
    #[arg(long, value_name = "URL")]
    remote: Option<String>,
    /// The merge driver command [default: the absolute path of this pimem].
    #[arg(long, value_name = "COMMAND")]
    program: Option<String>,
}

/// The driver command: `--program`, else this executable's absolute path.
fn program(explicit: Option<String>) -> Result<String> {
    if let Some(p) = explicit {
        return Ok(p);
    }
    let exe = std::env::current_exe().context("locating the running pimem (pass --program)")?;
    exe.to_str()
        .map(str::to_owned)
        .context("the path of the running pimem is not UTF-8 (pass --program)")
}

/// `pimem merge-index %O %A %B`: exit 0 with the merged index in `%A`; the lines both sides
/// changed are named on stderr (their entry files carry the git conflict).
pub(crate) fn cmd_merge_index(args: MergeIndexArgs) -> Result<()> {
    let conflicts = gitmem::merge_driver(&args.base, &args.ours, &args.theirs)?;
    for c in conflicts {
        match c {
            IndexConflict::Entry { file, .. } => eprintln!(
                "pimem merge-index: {file} was changed on both sides; its index line follows ours until the entry file's conflict is resolved (`pimem doctor` reports a line that still disagrees)"
            ),
            IndexConflict::Frame => eprintln!(
                "pimem merge-index: both sides changed the index's title or comment lines; ours were kept"
            ),
        }
    }
    Ok(())
}

/// `pimem git setup` in the working directory's repository.
pub(crate) fn cmd_git(cwd: &std::path::Path, cmd: GitCommand) -> Result<()> {
    let GitCommand::Setup(args) = cmd;
    let program = program(args.program)?;
    let patterns: Vec<&str> = if args.patterns.is_empty() {
        vec![gitmem::TEAM_PATTERN]
    } else {
        args.patterns.iter().map(String::as_str).collect()
    };
    let (out, ignore) = gitmem::setup_team(cwd, &program, &patterns)?;
    println!(
        "merge driver {}: {} ({})",
        gitmem::DRIVER,
        out.driver,
        if out.config_changed {
            "registered in .git/config"
        } else {
            "already registered"
        }
    );
    if out.attributes_added.is_empty() {
        println!(".gitattributes: already routes the memory index to it");
    } else {
        for line in &out.attributes_added {
            println!(".gitattributes: added `{line}` (commit it so every clone uses it)");
        }
    }
    if let Some(path) = ignore {
        println!(
            "{}: written (only entries and indexes are committed)",
            path.display()
        );
    }
    Ok(())
}

/// `pimem sync [--remote URL]` for the memory root.
pub(crate) fn cmd_sync(memory_root: &std::path::Path, args: SyncArgs) -> Result<()> {
    let program = program(args.program)?;
    let out = gitmem::sync(memory_root, args.remote.as_deref(), &program, &mut |line| {
        eprintln!("pimem sync: {line}");
    })?;
    println!(
        "synced {}: {} committed, {}, {}",
        memory_root.display(),
        out.committed,
        if out.pulled {
            "pulled"
        } else {
            "nothing to pull"
        },
        if out.pushed {
            "pushed"
        } else {
            "nothing to push"
        }
    );
    Ok(())
}
