//! `pimem promote`: moving a memory between scopes (issue 16; memory-core's `scope` module).

use anyhow::Result;
use clap::Args;
use memory_core::Scope;
use serde_json::json;

use crate::cli::{Context, print_json, print_text};

/// `pimem promote <name> --to user|team|project`.
#[derive(Args)]
pub(crate) struct PromoteArgs {
    /// The memory's name or file name, in whichever other scope holds it.
    name: String,
    /// The scope to move it to.
    #[arg(long, value_name = "SCOPE")]
    to: Scope,
}

/// `pimem promote`: the new scope is written (entry, then index line) before the old copy is
/// removed; both scopes' locks are held throughout, taken in the order project < team < user.
pub(crate) fn cmd_promote(ctx: &Context, args: PromoteArgs) -> Result<()> {
    let moved = ctx.scopes().promote(&args.name, args.to)?;
    if ctx.json() {
        return print_json(&json!({
            "name": moved.name, "file": moved.file,
            "from": moved.from.as_str(), "to": moved.to.as_str(), "wrote": moved.wrote,
        }));
    }
    print_text(&moved.text())
}
