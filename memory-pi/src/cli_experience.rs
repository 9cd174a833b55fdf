//! `pimem experience …`: the run log from the command line, with the same texts as
//! `/experience` in pi (`memory_pi::experience`), or JSON with `--json`.

use anyhow::{Result, anyhow, bail};
use clap::Subcommand;
use memory_pi::experience::{self as read, Reply};
use memory_runlog::texts::{catalog, fill};
use serde_json::json;

use crate::cli::{Context, print_json, print_text};

/// The sub-commands of `pimem experience`.
#[derive(Subcommand)]
pub(crate) enum ExperienceCommand {
    /// The newest runs (R01, R02, …), newest first.
    Runs,
    /// One run (R01) or experience (E1).
    Show {
        /// R01 or E1.
        id: String,
    },
    /// Every recorded event of a run, as stored.
    Raw {
        /// R01.
        run: String,
    },
    /// Keyword search over run metadata, summaries and experiences.
    Search {
        /// The words (all must match; prefixes match).
        words: Vec<String>,
    },
    /// The summarized runs not yet in an experience (what /experience prepare hands the agent).
    Prepare,
    /// Database path, schema, sizes, counts by status.
    Debug,
    /// Turn an experience into a memory entry through the store.
    Remember {
        /// E1.
        id: String,
    },
    /// The experiences as a tree.
    Experiences,
}

fn emit(ctx: &Context, reply: Reply) -> Result<()> {
    if ctx.json() {
        print_json(&reply.json)
    } else {
        print_text(&reply.text)
    }
}

/// `pimem experience <sub>`.
pub(crate) fn cmd_experience(ctx: &Context, cmd: ExperienceCommand) -> Result<()> {
    let c = catalog(memory_core::ui_language(ctx.config()));
    let dir = ctx.store().dir();
    let Some(mut log) = read::open_log(dir).map_err(|e| anyhow!(e))? else {
        if ctx.json() {
            return print_json(&json!({ "runs": [], "experiences": [] }));
        }
        return print_text(c.no_runs);
    };
    let reply = match cmd {
        ExperienceCommand::Runs => read::runs(&log, c),
        ExperienceCommand::Show { id } => read::show(&log, &id, c),
        ExperienceCommand::Raw { run } => read::raw(&log, &run, c),
        ExperienceCommand::Search { words } => {
            let words = words.join(" ");
            if words.trim().is_empty() {
                bail!(
                    "{}",
                    c.search_usage.replace("/experience", "pimem experience")
                );
            }
            read::search(&log, &words, c)
        }
        ExperienceCommand::Debug => read::debug(&log, &[], c),
        ExperienceCommand::Experiences => log
            .experiences()
            .map(|exps| Reply {
                text: memory_runlog::texts::experience_tree(c, &exps),
                json: json!({ "experiences": exps }),
            })
            .map_err(|e| e.to_string()),
        ExperienceCommand::Prepare => read::prepare_list(&log).map(|rows| Reply {
            text: if rows.is_empty() {
                c.prepare_nothing.to_owned()
            } else {
                format!(
                    "{}\n{}",
                    fill(c.prepare_header, &[("count", &rows.len())]),
                    memory_runlog::texts::prepare_list(&rows)
                )
            },
            json: json!({ "runs": rows }),
        }),
        ExperienceCommand::Remember { id } => {
            let e: memory_runlog::ExpNo = id.parse()?;
            let r = memory_runlog::remember::remember(
                &mut log,
                ctx.store(),
                e,
                memory_runlog::now_ms(),
            )?;
            Ok(Reply {
                text: fill(c.remembered, &[("exp", &e), ("saved", &r.saved)]),
                json: json!({ "experience": e, "file": r.file, "text": r.saved }),
            })
        }
    };
    emit(ctx, reply.map_err(|e| anyhow!(e))?)
}
