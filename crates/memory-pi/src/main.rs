//! `pimem`: the command-line interface and pi sidecar of the memory layer.
#![forbid(unsafe_code)]

use clap::Parser;

/// Persistent file-system memory for coding agents.
#[derive(Parser)]
#[command(name = "pimem", version, about)]
struct Cli {}

fn main() -> anyhow::Result<()> {
    let _cli = Cli::parse();
    Ok(())
}
