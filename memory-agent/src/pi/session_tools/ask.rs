//! `ask-session` (PS-22..PS-28): arguments, target lookup, statuses with their guidance,
//! and the report sent back to the caller. Running the target is the host's job (the pimem
//! sidecar starts `pi --mode rpc --session <file>` in the target's directory).

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::{Caller, admit_cwd};
use crate::pi::sessions::{Scope, SessionCatalog, SessionInfo};

/// The `customType` of the message that reports an ask back to the caller (PS-26).
pub const REPORT_TYPE: &str = "session-report";

/// The arguments of one `ask-session` call, checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AskArgs {
    /// The target's full session ID.
    pub id: String,
    /// What to ask (not blank).
    pub prompt: String,
    /// Steer the running ask of that session instead of starting one.
    pub steer: bool,
}

/// Checks `{id, prompt, cwd?, steer?}` (PS-22). `cwd` is checked by [`resolve_target`].
///
/// # Errors
/// A message naming the bad argument.
pub fn parse_ask_args(args: &Value) -> Result<AskArgs, String> {
    let text = |key: &str| match args.get(key) {
        Some(Value::String(s)) if !s.trim().is_empty() => Ok(s.clone()),
        Some(Value::String(_)) | None | Some(Value::Null) => {
            Err(format!("{key} is required and must not be blank"))
        }
        Some(other) => Err(format!("{key} must be a string, not {other}")),
    };
    let id = text("id")?.trim().to_owned();
    let prompt = text("prompt")?;
    let steer = match args.get("steer") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(other) => return Err(format!("steer must be true or false, not {other}")),
    };
    Ok(AskArgs { id, prompt, steer })
}

/// The session an ask goes to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AskTarget {
    /// The session (its file, header cwd, name).
    pub session: SessionInfo,
    /// The admitted working directory the session was looked up in.
    pub cwd: PathBuf,
}

impl AskTarget {
    /// The absolute path of the session file.
    pub fn path(&self) -> PathBuf {
        std::path::absolute(&self.session.path).unwrap_or_else(|_| self.session.path.clone())
    }

    /// The directory the target runs in: the session's recorded cwd when it is an existing
    /// directory, else the admitted one.
    pub fn run_dir(&self) -> PathBuf {
        let recorded = Path::new(&self.session.cwd);
        if recorded.is_absolute() && recorded.is_dir() {
            recorded.to_path_buf()
        } else {
            self.cwd.clone()
        }
    }
}

/// Finds the target of an ask: the session of the admitted `cwd` (PS-14..PS-16) whose ID is
/// exactly `id` (PS-23). Names, partial IDs and paths are refused with a message saying what
/// to pass instead, and so is the caller's own session (PS-V10).
///
/// # Errors
/// A message for the model.
pub fn resolve_target(
    catalog: &SessionCatalog,
    caller: &Caller,
    id: &str,
    cwd: Option<&Value>,
) -> Result<AskTarget, String> {
    if caller.session_id.as_deref() == Some(id) {
        return Err(format!(
            "ask-session cannot ask the calling session itself ({id}); ask another session"
        ));
    }
    let admitted =
        admit_cwd(&caller.cwd, cwd, caller.home.as_deref()).map_err(|e| e.to_string())?;
    let sessions = catalog
        .list(&caller.storage, &Scope::Project(admitted.cwd.clone()))
        .map_err(|e| {
            format!(
                "cannot list the sessions of {}: {e}",
                admitted.cwd.display()
            )
        })?;
    let where_ = admitted.cwd.display();
    if let Some(s) = sessions.iter().find(|s| s.id == id) {
        if caller
            .session_file
            .as_deref()
            .is_some_and(|f| same_file(f, &s.path))
        {
            return Err(format!(
                "ask-session cannot ask the calling session itself ({id}); ask another session"
            ));
        }
        return Ok(AskTarget {
            session: s.clone(),
            cwd: admitted.cwd,
        });
    }
    if id.contains('/') || id.contains('\\') || id.ends_with(".jsonl") {
        return Err(format!(
            "\"{id}\" is a path; ask-session takes a full session ID (the \"id\" of a search-session result)"
        ));
    }
    let lower = id.to_lowercase();
    if let Some(s) = sessions
        .iter()
        .find(|s| s.name.as_deref().is_some_and(|n| n.to_lowercase() == lower))
    {
        return Err(format!(
            "\"{id}\" is a session name, not an ID; the session named \"{}\" has the full ID {} (pass that)",
            s.name.as_deref().unwrap_or_default(),
            s.id
        ));
    }
    let partial: Vec<&SessionInfo> = sessions.iter().filter(|s| s.id.starts_with(id)).collect();
    match partial.as_slice() {
        [] => Err(format!("no session with the ID \"{id}\" in {where_}")),
        [one] => Err(format!(
            "\"{id}\" is a partial ID; ask-session needs the full ID ({} in {where_})",
            one.id
        )),
        many => Err(format!(
            "\"{id}\" is a partial ID matching {} sessions in {where_}; pass a full ID",
            many.len()
        )),
    }
}

fn same_file(a: &Path, b: &Path) -> bool {
    a == b
        || matches!(
            (std::fs::canonicalize(a), std::fs::canonicalize(b)),
            (Ok(x), Ok(y)) if x == y
        )
}

/// What an `ask-session` call answered (PS-27, PS-28).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AskStatus {
    /// An ordinary ask was started; a report follows.
    Accepted,
    /// The running ask of that session got the prompt as steering; no separate report.
    Steered,
    /// The target's input handler consumed the steering prompt.
    Handled,
    /// That session is still working on an earlier ask of this caller.
    Busy,
}

impl AskStatus {
    /// The wire name (`accepted`, `steered`, `handled`, `busy`).
    pub fn as_str(self) -> &'static str {
        match self {
            AskStatus::Accepted => "accepted",
            AskStatus::Steered => "steered",
            AskStatus::Handled => "handled",
            AskStatus::Busy => "busy",
        }
    }

    /// What the model should do next (the text block after the status JSON).
    pub fn guidance(self, id: &str) -> String {
        match self {
            AskStatus::Accepted => format!(
                "Accepted: session {id} is working on this in the background. Acceptance is not completion. Do not poll, redo or re-delegate this work: give the user a brief progress update naming the pending session, then end your turn. A {REPORT_TYPE} message arrives when it completes or fails; give your final answer only after the reports you need have arrived."
            ),
            AskStatus::Steered => format!(
                "Steered: the running ask of session {id} received this as queued steering. No separate report follows; the report of the running ask covers it."
            ),
            AskStatus::Handled => format!(
                "Handled: the input handler of session {id} consumed these instructions instead of queuing them. This is not a completion report, nor proof that the running ask is still active."
            ),
            AskStatus::Busy => format!(
                "Busy: session {id} is still working on an earlier ask from this session. Wait for its {REPORT_TYPE} message, or call ask-session with steer: true to adjust that work."
            ),
        }
    }

    /// The status object of the tool result (first text block and `details`).
    pub fn status(self, target: &AskTarget) -> Value {
        json!({
            "status": self.as_str(),
            "id": target.session.id,
            "name": target.session.name,
            "cwd": target.session.cwd,
            "path": target.path(),
        })
    }
}

/// How an accepted ask ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AskEnd {
    /// The target's run finished; its final answer (the last assistant text).
    Completed {
        /// The answer.
        answer: String,
    },
    /// The target's input handler consumed the prompt: no run happened.
    Handled,
    /// The run or the target process failed.
    Failed {
        /// Why.
        error: String,
    },
}

/// The report message for the caller (PS-26): text content and `details`, both carrying the
/// target's full ID and path.
pub fn report(target: &AskTarget, end: &AskEnd) -> (String, Value) {
    let id = &target.session.id;
    let path = target.path();
    let named = match &target.session.name {
        Some(n) => format!(" (\"{n}\")"),
        None => String::new(),
    };
    let (status, head, body) = match end {
        AskEnd::Completed { answer } => (
            "completed",
            format!("session {id}{named} completed the ask."),
            format!("\nAnswer:\n{answer}"),
        ),
        AskEnd::Handled => (
            "handled",
            format!(
                "session {id}{named} did not run the ask: its input handler consumed the prompt."
            ),
            String::new(),
        ),
        AskEnd::Failed { error } => (
            "failed",
            format!("session {id}{named} failed the ask: {error}"),
            String::new(),
        ),
    };
    let text = format!(
        "[{REPORT_TYPE}] ask-session report: {head}\nID: {id}\nPath: {}{body}\n(For related follow-up work, call ask-session again with this full ID.)",
        path.display()
    );
    let mut details = json!({
        "status": status,
        "id": id,
        "name": target.session.name,
        "cwd": target.session.cwd,
        "path": path,
    });
    match end {
        AskEnd::Completed { answer } => details["answer"] = json!(answer),
        AskEnd::Failed { error } => details["error"] = json!(error),
        AskEnd::Handled => {}
    }
    (text, details)
}
