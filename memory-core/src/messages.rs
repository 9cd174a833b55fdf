//! User-facing texts added for pi-auto-memory's behaviours (the switch, protected memory
//! files, the doctor, fail-closed states), in one place so a message catalog (a translated
//! UI, PA-03) can take them over. The texts of pi-memory 2.5's contract stay where they were
//! (`memory-index`'s tool texts, [`StoreError`](crate::StoreError)'s).
//!
//! Every function returns the English text; no text here ever contains a value a user tried
//! to store as a secret.

use std::fmt::Display;
use std::path::Path;

use crate::switch::SwitchProblem;

/// The answer of every memory operation while memory is switched off (PA-45).
pub const MEMORY_IS_OFF: &str = "Memory is off";

/// How to turn memory back on, appended where a person reads it.
pub const TURN_ON_HINT: &str = "Run /memory on (or `pimem on`) to use it again.";

/// `/memory off` / `pimem off` succeeded.
pub fn switched_off(path: &Path, written: bool) -> String {
    let how = if written {
        format!("saved in {}", path.display())
    } else {
        format!("it already was ({})", path.display())
    };
    format!(
        "Memory is off for every project of this pi agent directory ({how}). No surfacing, extraction or dream, and the memory_index section is left out from the next turn on; the files and history are kept. {TURN_ON_HINT}"
    )
}

/// `/memory on` / `pimem on` succeeded.
pub fn switched_on(path: &Path, written: bool) -> String {
    let how = if written {
        format!("saved in {}", path.display())
    } else {
        "it already was".to_owned()
    };
    format!("Memory is on ({how}). The memory_index section is read again at the next turn.")
}

/// The `Switch:` line of `/memory` and `pimem status`.
pub fn switch_line(state: &crate::switch::SwitchState) -> String {
    use crate::switch::SwitchState;
    match state {
        SwitchState::On { file: true } => "Switch: on".to_owned(),
        SwitchState::On { file: false } => "Switch: on (default)".to_owned(),
        SwitchState::Off => format!("Switch: off — {TURN_ON_HINT}"),
        SwitchState::Paused(p) => format!("Switch: paused — {p}"),
    }
}

/// Why a switch file cannot be used, and how to fix it (PA-12).
pub fn switch_problem(problem: &SwitchProblem) -> String {
    let path = problem.path().display();
    let what = match problem {
        SwitchProblem::Unreadable { error, .. } => format!("{path} cannot be read ({error})"),
        SwitchProblem::Corrupt { error, .. } => format!("{path} is not valid JSON ({error})"),
        SwitchProblem::NotAnObject { .. } => format!("{path} must hold a JSON object"),
        SwitchProblem::UnknownVersion { found, .. } => {
            format!("{path} has \"version\": {found}; only 1 is understood")
        }
        SwitchProblem::NotBoolean { found, .. } => {
            format!("{path} has \"enabled\": {found}; it must be true or false")
        }
    };
    format!(
        "{what}. Fix it to read {{\"version\": 1, \"enabled\": true}} (or false), or delete it (a missing file means on); it is never overwritten automatically"
    )
}

/// The store error while the switch file is unusable.
pub fn memory_paused(problem: &SwitchProblem) -> String {
    format!("Memory is paused: {}", switch_problem(problem))
}

/// `/memory on|off` refused because the file is unusable.
pub fn switch_refuse_overwrite(problem: &SwitchProblem) -> String {
    format!("Memory switch not changed: {}", switch_problem(problem))
}

/// The switch could not be written.
pub fn switch_io(action: &str, path: &Path, source: &dyn Display) -> String {
    format!(
        "Memory switch not changed: {action} {} failed: {source}",
        path.display()
    )
}

/// The switch could not be checked before a write (fail closed).
pub fn switch_unavailable(path: &str, source: &dyn Display) -> String {
    format!(
        "Memory unavailable: the memory switch could not be checked ({path}: {source}); nothing was written"
    )
}

/// The switch path is a directory or another non-file.
pub fn switch_not_a_file() -> String {
    "it is not a regular file".to_owned()
}

/// The switch file is larger than any real one.
pub fn switch_too_large(len: u64, max: u64) -> String {
    format!("{len} bytes, more than the {max} a switch file can need")
}
