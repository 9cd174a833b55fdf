//! `/experience` and `pimem experience`: the read-side sub-commands over a project's run log
//! (`memory-runlog`), shared by the sidecar and the CLI so both print the same texts
//! (PX-11, PX-20).
//!
//! The run log lives at `<project memory dir>/.experience/runlog.db` (see
//! [`memory_runlog::runlog_dir`]). Readers never create it; opening it recovers the runs of
//! dead writers first, so "the next start" (a pi session or any CLI call) shows them as
//! `recovery_required` (PX-07, PX-08).

use camino::Utf8Path;
use memory_runlog::texts::{self, Catalog};
use memory_runlog::{ExpNo, RunLog, RunNo};
use serde_json::{Value, json};

/// One sub-command, parsed from the text after `/experience`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Sub {
    /// No argument: the panel in a TUI, the overview elsewhere.
    Overview,
    /// `runs`.
    Runs,
    /// `show R01` / `show E1`.
    Show(String),
    /// `raw R01`.
    Raw(String),
    /// `search <words>`.
    Search(String),
    /// `prepare`.
    Prepare,
    /// `debug`.
    Debug,
    /// `remember E1`.
    Remember(String),
    /// Anything else.
    Usage(String),
}

/// Reads the sub-command.
pub fn parse(args: &str) -> Sub {
    let args = args.trim();
    let (head, rest) = match args.split_once(char::is_whitespace) {
        Some((h, r)) => (h, r.trim()),
        None => (args, ""),
    };
    match head.to_ascii_lowercase().as_str() {
        "" => Sub::Overview,
        "runs" | "list" => Sub::Runs,
        "show" => Sub::Show(rest.to_owned()),
        "raw" => Sub::Raw(rest.to_owned()),
        "search" => Sub::Search(rest.to_owned()),
        "prepare" => Sub::Prepare,
        "debug" | "diagnostics" => Sub::Debug,
        "remember" => Sub::Remember(rest.to_owned()),
        other => Sub::Usage(other.to_owned()),
    }
}

/// What a read sub-command produced: the text and the same as JSON.
#[derive(Debug, Clone, PartialEq)]
pub struct Reply {
    /// For people.
    pub text: String,
    /// For scripts (`--json`).
    pub json: Value,
}

/// Opens the project's run log for reading, recovering dead writers' runs; `None` when the
/// project has none yet.
///
/// # Errors
/// The run log's error text.
pub fn open_log(memory_dir: &Utf8Path) -> Result<Option<RunLog>, String> {
    let dir = memory_runlog::runlog_dir(memory_dir);
    let mut log = RunLog::open_existing(&dir).map_err(|e| e.to_string())?;
    if let Some(log) = &mut log {
        log.recover().map_err(|e| e.to_string())?;
    }
    Ok(log)
}

/// Newest runs shown by `runs` and the overview.
pub const RUNS_SHOWN: usize = 50;

fn total(log: &RunLog) -> i64 {
    log.diagnostics()
        .map(|d| d.runs.iter().map(|(_, n)| n).sum())
        .unwrap_or(0)
}

/// `runs`.
///
/// # Errors
/// The run log's error text.
pub fn runs(log: &RunLog, c: &Catalog) -> Result<Reply, String> {
    let rows = log.runs(RUNS_SHOWN).map_err(|e| e.to_string())?;
    Ok(Reply {
        text: texts::runs(c, &rows, total(log)),
        json: json!({ "runs": rows }),
    })
}

/// The overview: runs, then experiences.
///
/// # Errors
/// The run log's error text.
pub fn overview(log: &RunLog, c: &Catalog) -> Result<Reply, String> {
    let rows = log.runs(RUNS_SHOWN).map_err(|e| e.to_string())?;
    let exps = log.experiences().map_err(|e| e.to_string())?;
    Ok(Reply {
        text: format!(
            "{}\n\n{}",
            texts::runs(c, &rows, total(log)),
            texts::experience_tree(c, &exps)
        ),
        json: json!({ "runs": rows, "experiences": exps }),
    })
}

/// `show R01` / `show E1`.
///
/// # Errors
/// A name that is neither, or an unknown one.
pub fn show(log: &RunLog, what: &str, c: &Catalog) -> Result<Reply, String> {
    if let Ok(r) = what.parse::<RunNo>() {
        let row = log.run(r).map_err(|e| e.to_string())?;
        return Ok(Reply {
            text: texts::show_run(c, &row),
            json: json!({ "run": row }),
        });
    }
    match what.parse::<ExpNo>() {
        Ok(e) => {
            let row = log.experience(e).map_err(|e| e.to_string())?;
            Ok(Reply {
                text: texts::show_experience(c, &row),
                json: json!({ "experience": row }),
            })
        }
        Err(_) => Err(format!(
            "\"{what}\" is not a run (R01) or an experience (E1)"
        )),
    }
}

/// `raw R01`.
///
/// # Errors
/// A bad or unknown run.
pub fn raw(log: &RunLog, what: &str, c: &Catalog) -> Result<Reply, String> {
    let r: RunNo = what
        .parse()
        .map_err(|e: memory_runlog::ParseIdError| e.to_string())?;
    let row = log.run(r).map_err(|e| e.to_string())?;
    let events = log.events(r).map_err(|e| e.to_string())?;
    let json_events: Vec<Value> = events
        .iter()
        .map(|e| {
            json!({
                "id": e.id, "at": e.at, "kind": e.kind,
                "body": serde_json::from_str::<Value>(&e.body).unwrap_or(Value::Null),
            })
        })
        .collect();
    Ok(Reply {
        text: texts::raw(c, &row, &events),
        json: json!({ "run": row, "events": json_events }),
    })
}

/// `search <words>` (FTS5 over run metadata, summaries and experiences; PX-20).
///
/// # Errors
/// The run log's error text.
pub fn search(log: &RunLog, words: &str, c: &Catalog) -> Result<Reply, String> {
    let hits = log.search(words, 20).map_err(|e| e.to_string())?;
    Ok(Reply {
        text: texts::search(c, words, &hits),
        json: json!({ "hits": hits }),
    })
}

/// `debug`, with the host's own lines appended.
///
/// # Errors
/// The run log's error text.
pub fn debug(log: &RunLog, extra: &[String], c: &Catalog) -> Result<Reply, String> {
    let d = log.diagnostics().map_err(|e| e.to_string())?;
    Ok(Reply {
        text: texts::debug(c, &d, extra),
        json: json!({ "diagnostics": d, "host": extra }),
    })
}

/// The runs `prepare` would hand over, as text (the audit list) and rows.
///
/// # Errors
/// The run log's error text.
pub fn prepare_list(log: &RunLog) -> Result<Vec<memory_runlog::RunRow>, String> {
    log.unmerged_summarized(50).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sub_commands_parse() {
        assert_eq!(parse(""), Sub::Overview);
        assert_eq!(parse(" runs "), Sub::Runs);
        assert_eq!(parse("show R01"), Sub::Show("R01".into()));
        assert_eq!(
            parse("search deploy  staging"),
            Sub::Search("deploy  staging".into())
        );
        assert_eq!(parse("RAW r2"), Sub::Raw("r2".into()));
        assert_eq!(parse("remember E3"), Sub::Remember("E3".into()));
        assert_eq!(parse("fly"), Sub::Usage("fly".into()));
    }
}
