//! `pimem promote` (moving a memory between scopes) and `pimem --scope user|team section`
//! (issue 16; memory-core's `scope` module).

use std::io::Write as _;

use anyhow::{Result, bail};
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

/// `pimem --scope user|team section`: the exact `memory_user` / `memory_team` section value
/// (nothing when that scope has no index). The team section needs `--trust-project`, as pi
/// injects it only into a project it trusts.
pub(crate) fn cmd_scope_section(ctx: &Context, scope: Scope) -> Result<()> {
    if scope == Scope::Team && !ctx.trusted() {
        bail!(
            "the team section is injected only into a trusted project: pass --trust-project to see it"
        );
    }
    let sections = ctx
        .scopes()
        .extra_sections(&ctx.config().scopes, ctx.trusted())?;
    let section = sections.into_iter().find(|s| s.scope == scope);
    if ctx.json() {
        return print_json(&match &section {
            Some(s) => json!({
                "name": s.name, "value": s.value, "lines": s.index.lines,
                "bytes": s.index.bytes, "truncated": s.index.truncated,
            }),
            None => {
                json!({ "name": null, "value": "", "lines": 0, "bytes": 0, "truncated": false })
            }
        });
    }
    let mut out = std::io::stdout().lock();
    if let Some(s) = section {
        out.write_all(s.value.as_bytes())?;
    }
    out.flush()?;
    Ok(())
}
