//! Project automation, run as `cargo xtask <task>`.
//!
//! * `ci`: format check, clippy with warnings denied, every test. This is the README's test
//!   command and what `.ci/run` executes on a clean clone.
//!
//! * `bench [group...]`: builds `memory-bench` in release mode and runs the named groups (all
//!   by default), printing Markdown for BENCHMARKS.md.
//!
//! Tasks are plain Rust so they run the same on every machine with only cargo installed.
#![forbid(unsafe_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let root = project_root();
    match args.first().map(String::as_str) {
        Some("ci") => ci(&root),
        Some("bench") => bench(&root, &args[1..]),
        Some(other) => bail!("unknown task {other:?}; available: ci, bench"),
        None => bail!("usage: cargo xtask <task>; available: ci, bench"),
    }
}

/// The workspace root (the parent of this crate's directory).
fn project_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."))
}

fn ci(root: &Path) -> Result<()> {
    run(root, "cargo", &["fmt", "--all", "--", "--check"])?;
    run(
        root,
        "cargo",
        &[
            "clippy",
            "--workspace",
            "--all-targets",
            "--locked",
            "--",
            "-D",
            "warnings",
        ],
    )?;
    run(root, "cargo", &["test", "--workspace", "--locked"])?;
    eprintln!("xtask ci: all checks passed");
    Ok(())
}

fn bench(root: &Path, groups: &[String]) -> Result<()> {
    let mut args = vec![
        "run",
        "--release",
        "--locked",
        "--quiet",
        "-p",
        "memory-bench",
        "--",
    ];
    args.extend(groups.iter().map(String::as_str));
    run(root, "cargo", &args)
}

/// Runs a command in `dir`, echoing it first; a non-zero exit is an error.
fn run(dir: &Path, program: &str, args: &[&str]) -> Result<()> {
    eprintln!("$ {program} {}", args.join(" "));
    let status = Command::new(program)
        .args(args)
        .current_dir(dir)
        .status()
        .with_context(|| format!("could not start {program}"))?;
    if !status.success() {
        bail!("{program} {} failed with {status}", args.join(" "));
    }
    Ok(())
}
