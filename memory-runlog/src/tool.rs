//! The `experience` tool: how the main agent merges audited runs into experiences (PX-16).
//! Its definition (name, description, JSON schema) and one function that runs a call.

use serde_json::{Value, json};

use crate::error::ExperienceError;
use crate::experience::NewExperience;
use crate::ids::{ExpNo, Interval, RunNo};
use crate::log::RunLog;
use crate::texts::{self, Catalog};

/// The tool's name.
pub const TOOL_NAME: &str = "experience";
/// Its label in a UI.
pub const TOOL_LABEL: &str = "Experience";
/// The one line under a tools section.
pub const TOOL_SNIPPET: &str =
    "Merge audited run summaries into lasting experiences (E1…): create, attach, merge";
/// What the model reads.
pub const TOOL_DESCRIPTION: &str = "Organize the project's recorded runs (R01, R02, …) into experiences (E1, E2, …): \
what was learned, made of runs and of other experiences. Use it after the user audited the run summaries \
(/experience prepare hands them to you). Actions: list (experiences and runs waiting to be merged); \
show {id: \"E1\" | \"R01\"}; create {title, summary, runs: [\"R03-R05\", \"R07\"], children?: [\"E2\"], parent?: \"E1\"}; \
attach {id: child, parent}; detach {id}; add_runs {id, runs}; merge {into, from: [\"E2\"]} (root experiences only); \
update {id, title?, summary?}. Rules: a run is a source of at most one experience (intervals never overlap), an \
experience has at most one parent, and no cycles.";

/// The JSON schema of the arguments.
pub fn parameters_schema() -> Value {
    let ids = |d: &str| json!({ "type": "array", "items": { "type": "string" }, "description": d });
    json!({
        "type": "object",
        "properties": {
            "action": {
                "type": "string",
                "enum": ["list", "show", "create", "attach", "detach", "add_runs", "merge", "update"],
                "description": "What to do"
            },
            "id": { "type": "string", "description": "E1 (or R01 for show): the experience acted on" },
            "title": { "type": "string", "description": "Short title of the experience" },
            "summary": { "type": "string", "description": "What was learned" },
            "runs": ids("Run intervals, each R03 or R03-R05"),
            "children": ids("Root experiences to put under the new one"),
            "parent": { "type": "string", "description": "The experience to put this one under" },
            "into": { "type": "string", "description": "merge: the root experience that stays" },
            "from": ids("merge: root experiences merged into `into`")
        },
        "required": ["action"],
        "additionalProperties": false
    })
}

/// A call's outcome.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolOutput {
    /// The text returned to the model.
    pub text: String,
    /// Whether the call failed (nothing changed then).
    pub is_error: bool,
}

fn ok(text: String) -> ToolOutput {
    ToolOutput {
        text,
        is_error: false,
    }
}

fn fail(text: String) -> ToolOutput {
    ToolOutput {
        text,
        is_error: true,
    }
}

fn string<'a>(args: &'a Value, key: &str) -> Option<&'a str> {
    args.get(key).and_then(Value::as_str)
}

fn required<'a>(args: &'a Value, key: &str) -> Result<&'a str, ExperienceError> {
    string(args, key)
        .filter(|s| !s.trim().is_empty())
        .ok_or_else(|| ExperienceError::Invalid(format!("{key} is required")))
}

fn exp(text: &str) -> Result<ExpNo, ExperienceError> {
    text.parse()
        .map_err(|e: crate::error::ParseIdError| ExperienceError::Invalid(e.to_string()))
}

fn list_of<T: std::str::FromStr<Err = crate::error::ParseIdError>>(
    args: &Value,
    key: &str,
) -> Result<Vec<T>, ExperienceError> {
    match args.get(key) {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(items)) => items
            .iter()
            .map(|v| {
                v.as_str()
                    .ok_or_else(|| ExperienceError::Invalid(format!("{key} must hold strings")))?
                    .parse::<T>()
                    .map_err(|e| ExperienceError::Invalid(e.to_string()))
            })
            .collect(),
        // One string is read as a one-item list (models often send `"R03-R05"`).
        Some(Value::String(s)) => s
            .split(',')
            .map(|p| {
                p.parse::<T>()
                    .map_err(|e| ExperienceError::Invalid(e.to_string()))
            })
            .collect(),
        Some(_) => Err(ExperienceError::Invalid(format!(
            "{key} must be a list of strings"
        ))),
    }
}

fn joined<T: std::fmt::Display>(items: &[T]) -> String {
    items
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

/// Runs one call of the tool at time `at` (Unix ms). Refused calls change nothing and say
/// why.
pub fn execute(log: &mut RunLog, args: &Value, at: i64, c: &Catalog) -> ToolOutput {
    match run(log, args, at, c) {
        Ok(text) => ok(text),
        Err(e) => fail(e.to_string()),
    }
}

fn run(log: &mut RunLog, args: &Value, at: i64, c: &Catalog) -> Result<String, ExperienceError> {
    let action = required(args, "action")?;
    match action {
        "list" => {
            let tree = texts::experience_tree(c, &log.experiences()?);
            let waiting = log.unmerged_summarized(50)?;
            let mut out = tree;
            if !waiting.is_empty() {
                out.push_str("\n\nRuns not yet in an experience:\n");
                out.push_str(&texts::prepare_list(&waiting));
            }
            Ok(out)
        }
        "show" => {
            let id = required(args, "id")?;
            if let Ok(r) = id.parse::<RunNo>() {
                let row = log.run(r)?;
                return Ok(texts::show_run(c, &row));
            }
            let e = log.experience(exp(id)?)?;
            Ok(texts::show_experience(c, &e))
        }
        "create" => {
            let new = NewExperience {
                title: required(args, "title")?.to_owned(),
                summary: string(args, "summary").unwrap_or("").to_owned(),
                sources: list_of::<Interval>(args, "runs")?,
                children: list_of::<ExpNo>(args, "children")?,
                parent: string(args, "parent").map(exp).transpose()?,
            };
            let n = log.create_experience(&new, at)?;
            let mut parts = Vec::new();
            if !new.sources.is_empty() {
                parts.push(format!("sources {}", joined(&new.sources)));
            }
            if !new.children.is_empty() {
                parts.push(format!("children {}", joined(&new.children)));
            }
            if let Some(p) = new.parent {
                parts.push(format!("under {p}"));
            }
            Ok(if parts.is_empty() {
                format!("Created {n}.")
            } else {
                format!("Created {n} ({}).", parts.join("; "))
            })
        }
        "attach" => {
            let child = exp(required(args, "id")?)?;
            let parent = exp(required(args, "parent")?)?;
            log.attach(child, parent, at)?;
            Ok(format!("{child} is now under {parent}."))
        }
        "detach" => {
            let child = exp(required(args, "id")?)?;
            log.detach(child, at)?;
            Ok(format!("{child} is a root experience again."))
        }
        "add_runs" => {
            let e = exp(required(args, "id")?)?;
            let runs = list_of::<Interval>(args, "runs")?;
            log.add_sources(e, &runs, at)?;
            Ok(format!("Added {} to {e}.", joined(&runs)))
        }
        "merge" => {
            let into = exp(required(args, "into")?)?;
            let from = list_of::<ExpNo>(args, "from")?;
            log.merge(into, &from, at)?;
            Ok(format!("Merged {} into {into}.", joined(&from)))
        }
        "update" => {
            let e = exp(required(args, "id")?)?;
            log.update_experience(e, string(args, "title"), string(args, "summary"), at)?;
            Ok(format!("Updated {e}."))
        }
        other => Err(ExperienceError::Invalid(format!(
            "unknown action \"{other}\": use list, show, create, attach, detach, add_runs, merge or update"
        ))),
    }
}
