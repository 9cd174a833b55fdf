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

/// PA-49's category: the memory directory cannot be accessed.
pub const CATEGORY_INACCESSIBLE: &str = "memory directory inaccessible";
/// PA-49's category: the memory path cannot be resolved.
pub const CATEGORY_PATH_RESOLUTION: &str = "path resolution failure";
/// PA-49's category: the project's identity cannot be determined.
pub const CATEGORY_IDENTITY: &str = "project identity unavailable";

/// The memory root (or project directory) cannot be accessed.
pub fn root_inaccessible(path: &Path, source: &dyn Display) -> String {
    format!("{CATEGORY_INACCESSIBLE}: {} ({source})", path.display())
}

/// The memory root (or project directory) cannot be resolved.
pub fn root_unresolvable(path: &Path, source: &dyn Display) -> String {
    format!("{CATEGORY_PATH_RESOLUTION}: {} ({source})", path.display())
}

/// A memory operation refused because the memory directory cannot be used (PA-49); the next
/// call checks again.
pub fn memory_unavailable(detail: &dyn Display) -> String {
    format!(
        "Memory unavailable — {detail}. Ordinary files are not affected; memory works again as soon as this is fixed (run /memory doctor)."
    )
}

/// First line of the `.ignore` file at the memory root.
pub const GUARD_IGNORE_HEADER: &str = "# Written by pimem: keeps memory internals out of pi's grep and find (rg and fd read\n# this file). Rewritten when memory is switched on or off; safe to delete.\n";

/// `write`/`edit` into the memory tree.
pub fn guard_write(tool: &str) -> String {
    format!(
        "Blocked: {tool} cannot change files under the memory directory. Use the memory tool instead (action add, replace or remove); it keeps MEMORY.md, locks and backups consistent."
    )
}

/// `read`/`grep`/`find` of a memory internal.
pub fn guard_internal(tool: &str) -> String {
    format!(
        "Blocked: {tool} cannot look into memory internals (.backups/, .lock, temp files, sessions/, .dream-meta.json). Use the memory tool (action list or search) to see memories."
    )
}

/// A file tool under the memory tree while memory is off.
pub fn guard_off(tool: &str) -> String {
    format!("Blocked: {tool} under the memory directory — {MEMORY_IS_OFF}.")
}

/// `ls` of a project memory directory.
pub fn guard_ls() -> String {
    "Blocked: ls of a memory directory would show its internals. Use the memory tool (action list) to see the memories.".to_owned()
}

/// A `grep` glob that names an internal.
pub fn guard_glob() -> String {
    "Blocked: this grep glob would reach memory internals (.backups/, .lock, temp files, sessions/). Drop the glob or search a narrower path; use the memory tool (action search) for memories.".to_owned()
}

/// The scan could not be narrowed: refused rather than unprotected.
pub fn guard_narrow_failed(tool: &str, detail: &str) -> String {
    format!(
        "Blocked: {tool} would scan the memory directory and its internals could not be excluded ({detail}). Search a path outside the memory directory, or use the memory tool (action search)."
    )
}

/// `/memory` while memory is off or paused: the first line before the status.
pub fn status_switch_line(state: &crate::switch::SwitchState) -> Option<String> {
    use crate::switch::SwitchState;
    match state {
        SwitchState::On { .. } => None,
        SwitchState::Off => Some(format!("Memory: off — {TURN_ON_HINT}")),
        SwitchState::Paused(p) => Some(format!("Memory: paused — {p}")),
    }
}

/// `/dream` refused while memory is off or paused.
pub fn dream_refused(refusal: &dyn Display) -> String {
    format!("Dream not started: {refusal}. {TURN_ON_HINT}")
}

/// The texts of `/memory doctor` and `pimem doctor`.
pub mod doctor {
    use std::fmt::Display;
    use std::path::Path;

    /// Prefix of a fix line.
    pub const FIX: &str = "fix:";

    /// The report's first line.
    pub fn summary(ok: usize, warning: usize, failure: usize, unchecked: usize) -> String {
        format!(
            "Memory doctor: {ok} ok, {warning} warning, {failure} failure, {unchecked} unchecked"
        )
    }

    /// No agent directory (no HOME, no PI_CODING_AGENT_DIR).
    pub fn no_agent_dir() -> String {
        "pi's agent directory is unknown (neither PI_CODING_AGENT_DIR nor HOME is set)".to_owned()
    }
    /// Fix for [`no_agent_dir`].
    pub fn no_agent_dir_fix() -> String {
        "set HOME, or pass --agent-dir".to_owned()
    }
    /// The project layer is not read.
    pub fn config_untrusted(file: &Path) -> String {
        format!(
            "{} not read: the project is not trusted (pi asks; the CLI needs --trust-project)",
            file.display()
        )
    }
    /// An existing file cannot be read.
    pub fn config_fatal(problem: &str) -> String {
        format!("{problem} — memory cannot start with it (Failed to load memory config)")
    }
    /// Values fell back to defaults.
    pub fn config_problems(file: &Path, problems: &[String]) -> String {
        format!("{}: {}", file.display(), problems.join("; "))
    }
    /// Fix for configuration problems.
    pub fn config_fix(file: &Path) -> String {
        format!(
            "edit {} (the keys and defaults are in the README)",
            file.display()
        )
    }
    /// A configuration file read without problems.
    pub fn config_ok(file: &Path) -> String {
        format!("{} read, no problems", file.display())
    }
    /// No configuration file.
    pub fn config_missing(file: &Path) -> String {
        format!("{} does not exist: defaults apply", file.display())
    }
    /// The switch says on.
    pub fn switch_on(path: &Path, file: bool) -> String {
        if file {
            format!("memory is on ({})", path.display())
        } else {
            format!("memory is on (no {}: on by default)", path.display())
        }
    }
    /// The switch says off.
    pub fn switch_off(path: &Path) -> String {
        format!(
            "memory is off ({}): no surfacing, extraction, dream or memory_index section",
            path.display()
        )
    }
    /// Fix for a paused switch.
    pub fn switch_paused_fix(path: &Path) -> String {
        format!(
            "write {{\"version\": 1, \"enabled\": true}} to {} or delete it",
            path.display()
        )
    }
    /// The project cannot be resolved, so directory checks are skipped.
    pub fn no_project() -> String {
        "not checked: the project's memory directory is unknown (see project.identity)".to_owned()
    }
    /// Identity failure.
    pub fn identity_failed(e: &dyn Display) -> String {
        format!("{}: {e}", super::CATEGORY_IDENTITY)
    }
    /// Fix for an identity failure.
    pub fn identity_fix() -> String {
        "check memoryDir in memory.json and that HOME is set; the directory must stay inside memoryDir".to_owned()
    }
    /// Fix for an unusable directory.
    pub fn reachable_fix(dir: &Path) -> String {
        format!(
            "make {} a directory you own and can read (chmod 700), without a symlink loop",
            dir.display()
        )
    }
    /// The root does not exist yet.
    pub fn root_not_created(root: &Path) -> String {
        format!(
            "{} does not exist yet (it is created, private, on the first write)",
            root.display()
        )
    }
    /// The root is usable.
    pub fn root_ok(root: &Path, project_exists: bool) -> String {
        if project_exists {
            format!("{} is usable", root.display())
        } else {
            format!(
                "{} is usable; this project has no directory yet",
                root.display()
            )
        }
    }
    /// Every mode is private.
    pub fn private_ok() -> String {
        "the memory root, the project directory and its files are private (0700/0600)".to_owned()
    }
    /// Some modes let others in.
    pub fn private_loose(paths: &[String]) -> String {
        format!("readable by others: {}", paths.join(", "))
    }
    /// Fix for loose modes.
    pub fn private_fix(root: &Path) -> String {
        format!(
            "chmod -R go-rwx {} (memories are injected into prompts; keep them yours)",
            root.display()
        )
    }
    /// How the identity was derived: git.
    pub fn derived_git(native: bool, reason: Option<&str>) -> String {
        match (native, reason) {
            (true, _) => {
                "from the repository's first usable remote (origin first), read from git's files"
                    .to_owned()
            }
            (false, Some(r)) => {
                format!("from the repository's first usable remote, by running git ({r})")
            }
            (false, None) => "from the repository's first usable remote, by running git".to_owned(),
        }
    }
    /// How the identity was derived: local.
    pub fn derived_local(at_cwd: bool, via_git: Option<&str>) -> String {
        let what = if at_cwd {
            "the working directory (outside a git work tree, or a repository root without a usable remote)"
        } else {
            "the repository root (no usable remote)"
        };
        match via_git {
            None => what.to_owned(),
            Some(r) => format!("{what}; git was run ({r})"),
        }
    }
    /// The identity line.
    pub fn identity(kind: &str, key: &str, dir: &Path, how: &str) -> String {
        format!("{kind} key {key:?} → {}; derived {how}", dir.display())
    }
    /// `MEMORY.md` cannot be read.
    pub fn index_unreadable(path: &Path, e: &dyn Display) -> String {
        format!("{} cannot be read: {e}", path.display())
    }
    /// No `MEMORY.md`.
    pub fn index_missing() -> String {
        "no MEMORY.md yet (an empty index)".to_owned()
    }
    /// How `MEMORY.md` parsed.
    pub fn index_parsed(entries: usize, unrecognized: usize) -> String {
        format!(
            "MEMORY.md: {entries} entry lines, {unrecognized} other lines (titles, groups, comments)"
        )
    }
    /// `MEMORY.md` is not UTF-8.
    pub fn index_not_utf8(valid_up_to: usize) -> String {
        format!(
            "MEMORY.md is not valid UTF-8 (from byte {valid_up_to}); writes refuse to rewrite it"
        )
    }
    /// Fix: rebuild the index.
    pub fn index_rebuild_fix() -> String {
        "pimem rebuild-index (keeps a hand-written header; the old index goes to .backups/)"
            .to_owned()
    }
    /// Index and files agree.
    pub fn agreement_ok(entries: usize) -> String {
        format!("MEMORY.md and the {entries} entry files agree")
    }
    /// Index and files disagree.
    pub fn agreement(unlisted: &[String], dangling: &[String], not_entries: &[String]) -> String {
        let mut parts = Vec::new();
        if !unlisted.is_empty() {
            parts.push(format!(
                "entries missing from MEMORY.md (never injected): {}",
                unlisted.join(", ")
            ));
        }
        if !dangling.is_empty() {
            parts.push(format!(
                "lines pointing at missing files: {}",
                dangling.join(", ")
            ));
        }
        if !not_entries.is_empty() {
            parts.push(format!(
                "*.md files that are not entries (invisible): {}",
                not_entries.join(", ")
            ));
        }
        parts.join("; ")
    }
    /// Write capacity over the limit.
    pub fn capacity_over(lines: usize, max_lines: usize, bytes: usize, max_bytes: usize) -> String {
        format!(
            "MEMORY.md is over its limit: {lines}/{max_lines} lines, {bytes}/{max_bytes} bytes (lines past it are dropped on load)"
        )
    }
    /// Write capacity at or above 90 %.
    pub fn capacity_near(lines: usize, max_lines: usize, bytes: usize, max_bytes: usize) -> String {
        format!(
            "MEMORY.md is at 90 % or more of its limit: {lines}/{max_lines} lines, {bytes}/{max_bytes} bytes"
        )
    }
    /// Write capacity fine.
    pub fn capacity_ok(lines: usize, max_lines: usize, bytes: usize, max_bytes: usize) -> String {
        format!("MEMORY.md: {lines}/{max_lines} lines, {bytes}/{max_bytes} bytes")
    }
    /// Fix for capacity.
    pub fn capacity_fix() -> String {
        "run /dream, or merge and drop stale entries (one short line per entry)".to_owned()
    }
    /// Entries outside the injected window.
    pub fn window_outside(
        lines: usize,
        max_lines: usize,
        bytes: usize,
        max_bytes: usize,
        outside: &[String],
    ) -> String {
        if outside.is_empty() {
            return format!(
                "the injected window is full ({lines}/{max_lines} lines, {bytes}/{max_bytes} bytes) and older lines are cut"
            );
        }
        format!(
            "{} entries fall outside the injected window ({lines}/{max_lines} lines, {bytes}/{max_bytes} bytes) and no longer reach the prompt: {}",
            outside.len(),
            outside.join(", ")
        )
    }
    /// The window at or above 90 %.
    pub fn window_near(lines: usize, max_lines: usize, bytes: usize, max_bytes: usize) -> String {
        format!(
            "the injected window is at 90 % or more: {lines}/{max_lines} lines, {bytes}/{max_bytes} bytes; the next entries push the oldest out"
        )
    }
    /// The window fine.
    pub fn window_ok(lines: usize, max_lines: usize, bytes: usize, max_bytes: usize) -> String {
        format!(
            "every index line is injected: {lines}/{max_lines} lines, {bytes}/{max_bytes} bytes"
        )
    }
    /// Fix for the window.
    pub fn window_fix() -> String {
        "run /dream to consolidate, or raise memIndexInjectMaxLines / memIndexInjectMaxBytes in memory.json".to_owned()
    }
    /// No lock.
    pub fn lock_free() -> String {
        "free".to_owned()
    }
    /// A live holder on this host.
    pub fn lock_live(holder: &str) -> String {
        format!("held by {holder}, which is running: a write is in progress")
    }
    /// A dead holder on this host.
    pub fn lock_dead(holder: &str) -> String {
        format!(
            "left behind by {holder}, which is not running; the next write reclaims it (lock.reclaimDead)"
        )
    }
    /// A holder on another host.
    pub fn lock_other_host(holder: &str) -> String {
        format!("held by {holder} on another host: its liveness cannot be checked from here")
    }
    /// An unreadable record.
    pub fn lock_unreadable(empty: bool) -> String {
        if empty {
            ".lock is empty (0 bytes): being written, or left by a crash".to_owned()
        } else {
            ".lock holds an unreadable record: every write fails until it is removed".to_owned()
        }
    }
    /// Fix for a lock.
    pub fn lock_unlock_fix() -> String {
        "if no memory operation is running: /memory unlock (or pimem unlock)".to_owned()
    }
    /// No model configured.
    pub fn models_none() -> String {
        "no model configured: dream is off, surfacing is lexical".to_owned()
    }
    /// Every model usable.
    pub fn models_ok(models: &[String]) -> String {
        format!("resolvable by pi: {}", models.join(", "))
    }
    /// Unusable models.
    pub fn models_bad(models: &[String]) -> String {
        format!(
            "not resolvable by pi (unknown id or missing credentials): {}",
            models.join(", ")
        )
    }
    /// Fix for models.
    pub fn models_fix() -> String {
        "set the model as provider/model-id that pi lists (pi --list-models), with its credentials"
            .to_owned()
    }
    /// The CLI cannot ask pi.
    pub fn models_cli() -> String {
        "only pi can tell which models are usable: run /memory doctor in pi".to_owned()
    }
    /// The CLI has no extension to compare with.
    pub fn protocol_cli() -> String {
        "the pi extension is not running here: run /memory doctor in pi".to_owned()
    }
    /// Protocols differ.
    pub fn protocol_mismatch(ext: u32, ext_version: &str, bin: u32, bin_version: &str) -> String {
        format!(
            "the extension {ext_version} speaks protocol {ext}, the binary {bin_version} speaks {bin}"
        )
    }
    /// Versions differ.
    pub fn version_mismatch(protocol: u32, ext_version: &str, bin_version: &str) -> String {
        format!(
            "protocol {protocol} on both sides, but the extension is {ext_version} and the binary {bin_version}"
        )
    }
    /// Fix for protocol and versions.
    pub fn protocol_fix() -> String {
        "rebuild and reinstall both from one checkout: cargo xtask install".to_owned()
    }
    /// Protocols agree.
    pub fn protocol_ok(protocol: u32, version: &str) -> String {
        format!("extension and binary {version} speak protocol {protocol}")
    }
    /// A pre-2.5 nested directory.
    pub fn legacy_nested(path: &Path) -> String {
        format!(
            "pre-2.5 nested Windows layout at {} (no longer read)",
            path.display()
        )
    }
    /// The repository's local/ directory has memories.
    pub fn orphan_local(path: &Path) -> String {
        format!(
            "{} holds memories from before this repository had a usable remote",
            path.display()
        )
    }
    /// Another git/ directory of the same repository name.
    pub fn orphan_git(path: &Path) -> String {
        format!(
            "{} has the same repository name (a renamed remote or owner?)",
            path.display()
        )
    }
    /// Nothing found.
    pub fn layout_ok() -> String {
        "no legacy layout or orphaned directory of this project".to_owned()
    }
    /// Found something.
    pub fn layout_found(found: &[String]) -> String {
        format!(
            "not in use, never migrated automatically: {}",
            found.join("; ")
        )
    }
    /// Fix for the layout.
    pub fn layout_fix(current: &Path) -> String {
        format!(
            "move the entries you still want into {} (then pimem rebuild-index), or delete the old directory",
            current.display()
        )
    }
    /// No snapshots.
    pub fn snapshots_none() -> String {
        "no snapshots yet".to_owned()
    }
    /// Snapshot count and size.
    pub fn snapshots(count: usize, migrate: usize, bytes: u64, keep: usize) -> String {
        let kib = bytes.div_ceil(1024);
        let migrate = if migrate > 0 {
            format!(" and {migrate} migrate-* (never pruned)")
        } else {
            String::new()
        };
        format!("{count} snapshots (lock.snapshotKeep {keep}){migrate}, {kib} KiB")
    }
    /// Fix for too many snapshots.
    pub fn snapshots_fix() -> String {
        "the next write prunes down to lock.snapshotKeep; remove old ones from .backups/ by hand if needed".to_owned()
    }
    /// No name is in two scopes (issue 16); `scopes`: the scopes that exist here.
    pub fn scopes_distinct(scopes: &str) -> String {
        format!("no memory is in more than one scope ({scopes})")
    }
    /// Names in several scopes: `Name (project, user; identical)`, ….
    pub fn scope_duplicates(list: &str) -> String {
        format!("in more than one scope (an interrupted promote, or saved twice): {list}")
    }
    /// Fix for [`scope_duplicates`].
    pub fn scope_duplicates_fix() -> String {
        "finish a move with `pimem promote <name> --to <scope>` (identical copies), or remove the copy you do not want with `pimem remove --scope <scope> <name>`".to_owned()
    }
    /// The scopes could not be read.
    pub fn scopes_unreadable(error: &dyn Display) -> String {
        format!("cannot read every scope: {error}")
    }
}
