//! `pimem`: the command-line interface and pi sidecar of the memory layer.
//!
//! Structure: global options in [`Cli`], one variant of [`Command`] per subcommand and one
//! `cmd_*` function per variant; the resolved global options travel in a [`Context`].
#![forbid(unsafe_code)]

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result};
use clap::{Parser, Subcommand};
use memory_keys::Platform;

/// Default memory root, as in pi-memory (PM-01).
const DEFAULT_MEMORY_DIR: &str = "~/.pi/memory";

/// Persistent file-system memory for coding agents.
#[derive(Parser)]
#[command(name = "pimem", version, about)]
struct Cli {
    /// Working directory whose project is meant [default: the current directory].
    #[arg(long, global = true, value_name = "PATH")]
    cwd: Option<PathBuf>,

    /// Memory root [default: ~/.pi/memory]. `~`, `~/` (and `~\` on Windows) expand to the
    /// home directory; a relative path is resolved against the working directory.
    #[arg(long = "memory-dir", global = true, value_name = "DIR")]
    memory_dir: Option<String>,

    #[command(subcommand)]
    command: Command,
}

/// The subcommands.
#[derive(Subcommand)]
enum Command {
    /// Print the project's memory directory (`<memoryDir>/git/<name>` or `.../local/<name>`).
    Dir,
}

/// Global options, resolved once.
struct Context {
    /// Absolute working directory.
    cwd: PathBuf,
    /// Absolute memory root.
    memory_root: PathBuf,
}

impl Context {
    fn from_cli(cli: &Cli) -> Result<Self> {
        let process_cwd = std::env::current_dir();
        let cwd = match &cli.cwd {
            Some(path) if path.is_absolute() => path.clone(),
            Some(path) => process_cwd
                .context("cannot read the current directory to resolve --cwd")?
                .join(path),
            None => process_cwd.context("cannot read the current directory")?,
        };
        let value = cli.memory_dir.as_deref().unwrap_or(DEFAULT_MEMORY_DIR);
        let home = std::env::home_dir().context("cannot determine the home directory")?;
        let memory_root = memory_keys::expand_memory_dir(value, &home, &cwd, Platform::current());
        Ok(Self { cwd, memory_root })
    }
}

fn main() -> Result<()> {
    let cli = Cli::parse();
    let ctx = Context::from_cli(&cli)?;
    match cli.command {
        Command::Dir => cmd_dir(&ctx),
    }
}

/// `pimem dir`: resolves the project identity of the working directory and prints its
/// memory directory.
fn cmd_dir(ctx: &Context) -> Result<()> {
    let dir = memory_keys::resolve(&ctx.cwd, &ctx.memory_root).with_context(|| {
        format!(
            "cannot determine the memory directory of {}",
            ctx.cwd.display()
        )
    })?;
    print_path(&dir.path)
}

/// Writes a path and a newline to stdout, byte-exact on Unix.
fn print_path(path: &Path) -> Result<()> {
    let mut out = std::io::stdout().lock();
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        out.write_all(path.as_os_str().as_bytes())?;
    }
    #[cfg(not(unix))]
    {
        out.write_all(path.to_string_lossy().as_bytes())?;
    }
    out.write_all(b"\n")?;
    out.flush()?;
    Ok(())
}
