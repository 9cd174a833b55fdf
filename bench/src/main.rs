//! `memory-bench`: the benchmarks run by `cargo xtask bench [group...]`.
//!
//! Each group measures our implementation and the baseline it must beat *in the same run*, so
//! that the reported ratio is meaningful on a shared, noisy machine. Output is Markdown, pasted
//! into BENCHMARKS.md together with the command that produced it.
#![forbid(unsafe_code)]
// A development tool: plain file writes and environment reads are its job.
#![allow(clippy::disallowed_methods)]

mod keys;
mod mcp;
mod retrieval;
mod runlog;
mod session_refs;
mod sessions;
mod store;
mod surfacing;
mod timing;

use anyhow::{Result, anyhow, bail};

/// A benchmark group: name and entry point.
type Group = (&'static str, fn() -> Result<()>);

/// Every group, in the order `cargo xtask bench` runs them with no arguments.
const GROUPS: &[Group] = &[
    ("keys", keys::run),
    ("mcp", mcp::run),
    ("retrieval", retrieval::run),
    ("runlog", runlog::run),
    ("sessions", sessions::run),
    ("store", store::run),
    ("surfacing", surfacing::run),
];

/// A temp path as the UTF-8 path the store takes.
fn utf8(path: &std::path::Path) -> Result<camino::Utf8PathBuf> {
    camino::Utf8PathBuf::from_path_buf(path.to_path_buf())
        .map_err(|p| anyhow!("{} is not a UTF-8 path", p.display()))
}

fn main() -> Result<()> {
    let wanted: Vec<String> = std::env::args().skip(1).collect();
    for name in &wanted {
        if !GROUPS.iter().any(|(g, _)| g == name) {
            let names: Vec<&str> = GROUPS.iter().map(|(g, _)| *g).collect();
            bail!("unknown benchmark group {name:?}; available: {names:?}");
        }
    }
    for (name, run) in GROUPS {
        if wanted.is_empty() || wanted.iter().any(|w| w == name) {
            println!("## {name}\n");
            run()?;
            println!();
        }
    }
    Ok(())
}
