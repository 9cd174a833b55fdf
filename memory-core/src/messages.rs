//! User-facing texts added for pi-auto-memory's behaviours (the switch, protected memory
//! files, the doctor, fail-closed states). The texts of pi-memory 2.5's contract stay where
//! they were (`memory-index`'s tool texts, [`StoreError`](crate::StoreError)'s).
//!
//! A function that takes a [`Language`] composes a text a person reads from the message
//! catalog ([`crate::catalog`], PA-03); the others return English on purpose: they reach the
//! model (the guard's refusals, the store's errors) or are error classes. No text here ever
//! contains a value a user tried to store as a secret.

use std::fmt::Display;
use std::path::Path;

use crate::catalog::{Text, t};
use crate::config::Language;
use crate::switch::SwitchProblem;

/// The answer of every memory operation while memory is switched off (PA-45).
pub const MEMORY_IS_OFF: &str = "Memory is off";

/// How to turn memory back on, appended where a person reads it (English; see
/// [`turn_on_hint`]).
pub const TURN_ON_HINT: &str = "Run /memory on (or `pimem on`) to use it again.";

/// [`TURN_ON_HINT`] in the reader's language.
pub fn turn_on_hint(l: Language) -> &'static str {
    Text::TurnOnHint.template(l)
}

/// `/memory off` / `pimem off` succeeded.
pub fn switched_off(l: Language, path: &Path, written: bool) -> String {
    let how = if written {
        t(l, Text::SwitchSavedIn, &[("path", &path.display())])
    } else {
        t(l, Text::SwitchAlreadyOff, &[("path", &path.display())])
    };
    t(
        l,
        Text::SwitchedOff,
        &[("how", &how), ("hint", &turn_on_hint(l))],
    )
}

/// `/memory on` / `pimem on` succeeded.
pub fn switched_on(l: Language, path: &Path, written: bool) -> String {
    let how = if written {
        t(l, Text::SwitchSavedIn, &[("path", &path.display())])
    } else {
        t(l, Text::SwitchAlreadyOn, &[])
    };
    t(l, Text::SwitchedOn, &[("how", &how)])
}

/// The `Switch:` line of `/memory` and `pimem status`.
pub fn switch_line(l: Language, state: &crate::switch::SwitchState) -> String {
    use crate::switch::SwitchState;
    match state {
        SwitchState::On { file: true } => t(l, Text::SwitchLineOn, &[]),
        SwitchState::On { file: false } => t(l, Text::SwitchLineOnDefault, &[]),
        SwitchState::Off => t(l, Text::SwitchLineOff, &[("hint", &turn_on_hint(l))]),
        SwitchState::Paused(p) => t(
            l,
            Text::SwitchLinePaused,
            &[("problem", &switch_problem_in(l, p))],
        ),
    }
}

/// Why a switch file cannot be used, and how to fix it (PA-12), in English: the text of
/// [`SwitchProblem`]'s `Display` and of the store's error (the model reads it).
pub fn switch_problem(problem: &SwitchProblem) -> String {
    switch_problem_in(Language::En, problem)
}

/// [`switch_problem`] in the reader's language (`/memory`, `pimem status`, the doctor); the
/// system's own error text inside it stays as the system wrote it.
pub fn switch_problem_in(l: Language, problem: &SwitchProblem) -> String {
    let path = problem.path().display();
    let what = match problem {
        SwitchProblem::Unreadable { error, .. } => t(
            l,
            Text::SwitchUnreadable,
            &[("path", &path), ("error", error)],
        ),
        SwitchProblem::Corrupt { error, .. } => {
            t(l, Text::SwitchCorrupt, &[("path", &path), ("error", error)])
        }
        SwitchProblem::NotAnObject { .. } => t(l, Text::SwitchNotAnObject, &[("path", &path)]),
        SwitchProblem::UnknownVersion { found, .. } => t(
            l,
            Text::SwitchUnknownVersion,
            &[("path", &path), ("found", found)],
        ),
        SwitchProblem::NotBoolean { found, .. } => t(
            l,
            Text::SwitchNotBoolean,
            &[("path", &path), ("found", found)],
        ),
    };
    t(l, Text::SwitchProblemFix, &[("what", &what)])
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
pub fn status_switch_line(l: Language, state: &crate::switch::SwitchState) -> Option<String> {
    use crate::switch::SwitchState;
    match state {
        SwitchState::On { .. } => None,
        SwitchState::Off => Some(t(l, Text::StatusOff, &[("hint", &turn_on_hint(l))])),
        SwitchState::Paused(p) => Some(t(
            l,
            Text::StatusPaused,
            &[("problem", &switch_problem_in(l, p))],
        )),
    }
}

/// `/dream` refused while memory is off or paused.
pub fn dream_refused(l: Language, refusal: &dyn Display) -> String {
    t(
        l,
        Text::DreamRefused,
        &[("refusal", refusal), ("hint", &turn_on_hint(l))],
    )
}

/// The texts of `/memory doctor` and `pimem doctor`, in the reader's language (the check
/// ids and states stay English, PA-03).
pub mod doctor {
    use std::fmt::Display;
    use std::path::Path;

    use crate::catalog::{Text, t};
    use crate::config::Language;

    /// Prefix of a fix line.
    pub fn fix(l: Language) -> &'static str {
        Text::DoctorFix.template(l)
    }

    /// The report's first line.
    pub fn summary(
        l: Language,
        ok: usize,
        warning: usize,
        failure: usize,
        unchecked: usize,
    ) -> String {
        t(
            l,
            Text::DoctorSummary,
            &[
                ("ok", &ok),
                ("warning", &warning),
                ("failure", &failure),
                ("unchecked", &unchecked),
            ],
        )
    }

    /// No agent directory (no HOME, no PI_CODING_AGENT_DIR).
    pub fn no_agent_dir(l: Language) -> String {
        t(l, Text::DoctorNoAgentDir, &[])
    }
    /// Fix for [`no_agent_dir`].
    pub fn no_agent_dir_fix(l: Language) -> String {
        t(l, Text::DoctorNoAgentDirFix, &[])
    }
    /// The project layer is not read.
    pub fn config_untrusted(l: Language, file: &Path) -> String {
        t(l, Text::DoctorConfigUntrusted, &[("file", &file.display())])
    }
    /// An existing file cannot be read.
    pub fn config_fatal(l: Language, problem: &str) -> String {
        t(l, Text::DoctorConfigFatal, &[("problem", &problem)])
    }
    /// Values fell back to defaults.
    pub fn config_problems(l: Language, file: &Path, problems: &[String]) -> String {
        let joined = problems.join(Text::DoctorJoin.template(l));
        t(
            l,
            Text::DoctorConfigProblems,
            &[("file", &file.display()), ("problems", &joined)],
        )
    }
    /// Fix for configuration problems.
    pub fn config_fix(l: Language, file: &Path) -> String {
        t(l, Text::DoctorConfigFix, &[("file", &file.display())])
    }
    /// A configuration file read without problems.
    pub fn config_ok(l: Language, file: &Path) -> String {
        t(l, Text::DoctorConfigOk, &[("file", &file.display())])
    }
    /// No configuration file.
    pub fn config_missing(l: Language, file: &Path) -> String {
        t(l, Text::DoctorConfigMissing, &[("file", &file.display())])
    }
    /// The switch says on.
    pub fn switch_on(l: Language, path: &Path, file: bool) -> String {
        let key = if file {
            Text::DoctorSwitchOn
        } else {
            Text::DoctorSwitchOnDefault
        };
        t(l, key, &[("path", &path.display())])
    }
    /// The switch says off.
    pub fn switch_off(l: Language, path: &Path) -> String {
        t(l, Text::DoctorSwitchOff, &[("path", &path.display())])
    }
    /// Fix for a paused switch.
    pub fn switch_paused_fix(l: Language, path: &Path) -> String {
        t(l, Text::DoctorSwitchPausedFix, &[("path", &path.display())])
    }
    /// The project cannot be resolved, so directory checks are skipped.
    pub fn no_project(l: Language) -> String {
        t(l, Text::DoctorNoProject, &[])
    }
    /// Identity failure (the category stays English: it is an error class).
    pub fn identity_failed(l: Language, e: &dyn Display) -> String {
        t(
            l,
            Text::DoctorIdentityFailed,
            &[("category", &super::CATEGORY_IDENTITY), ("error", e)],
        )
    }
    /// Fix for an identity failure.
    pub fn identity_fix(l: Language) -> String {
        t(l, Text::DoctorIdentityFix, &[])
    }
    /// Fix for an unusable directory.
    pub fn reachable_fix(l: Language, dir: &Path) -> String {
        t(l, Text::DoctorReachableFix, &[("dir", &dir.display())])
    }
    /// The root does not exist yet.
    pub fn root_not_created(l: Language, root: &Path) -> String {
        t(l, Text::DoctorRootNotCreated, &[("root", &root.display())])
    }
    /// The root is usable.
    pub fn root_ok(l: Language, root: &Path, project_exists: bool) -> String {
        let key = if project_exists {
            Text::DoctorRootOk
        } else {
            Text::DoctorRootOkNoProject
        };
        t(l, key, &[("root", &root.display())])
    }
    /// Every mode is private.
    pub fn private_ok(l: Language) -> String {
        t(l, Text::DoctorPrivateOk, &[])
    }
    /// Some modes let others in.
    pub fn private_loose(l: Language, paths: &[String]) -> String {
        t(l, Text::DoctorPrivateLoose, &[("paths", &paths.join(", "))])
    }
    /// Fix for loose modes.
    pub fn private_fix(l: Language, root: &Path) -> String {
        t(l, Text::DoctorPrivateFix, &[("root", &root.display())])
    }
    /// How the identity was derived: git.
    pub fn derived_git(l: Language, native: bool, reason: Option<&str>) -> String {
        match (native, reason) {
            (true, _) => t(l, Text::DoctorDerivedGitNative, &[]),
            (false, Some(r)) => t(l, Text::DoctorDerivedGitRun, &[("reason", &r)]),
            (false, None) => t(l, Text::DoctorDerivedGitRunPlain, &[]),
        }
    }
    /// How the identity was derived: local.
    pub fn derived_local(l: Language, at_cwd: bool, via_git: Option<&str>) -> String {
        let what = t(
            l,
            if at_cwd {
                Text::DoctorDerivedCwd
            } else {
                Text::DoctorDerivedRoot
            },
            &[],
        );
        match via_git {
            None => what,
            Some(r) => t(
                l,
                Text::DoctorDerivedViaGit,
                &[("what", &what), ("reason", &r)],
            ),
        }
    }
    /// The identity line.
    pub fn identity(l: Language, kind: &str, key: &str, dir: &Path, how: &str) -> String {
        let key = format!("{key:?}");
        t(
            l,
            Text::DoctorIdentity,
            &[
                ("kind", &kind),
                ("key", &key),
                ("dir", &dir.display()),
                ("how", &how),
            ],
        )
    }
    /// `MEMORY.md` cannot be read.
    pub fn index_unreadable(l: Language, path: &Path, e: &dyn Display) -> String {
        t(
            l,
            Text::DoctorIndexUnreadable,
            &[("path", &path.display()), ("error", e)],
        )
    }
    /// No `MEMORY.md`.
    pub fn index_missing(l: Language) -> String {
        t(l, Text::DoctorIndexMissing, &[])
    }
    /// How `MEMORY.md` parsed.
    pub fn index_parsed(l: Language, entries: usize, unrecognized: usize) -> String {
        t(
            l,
            Text::DoctorIndexParsed,
            &[("entries", &entries), ("unrecognized", &unrecognized)],
        )
    }
    /// `MEMORY.md` is not UTF-8.
    pub fn index_not_utf8(l: Language, valid_up_to: usize) -> String {
        t(l, Text::DoctorIndexNotUtf8, &[("byte", &valid_up_to)])
    }
    /// Fix: rebuild the index.
    pub fn index_rebuild_fix(l: Language) -> String {
        t(l, Text::DoctorIndexRebuildFix, &[])
    }
    /// Index and files agree.
    pub fn agreement_ok(l: Language, entries: usize) -> String {
        t(l, Text::DoctorAgreementOk, &[("entries", &entries)])
    }
    /// Index and files disagree.
    pub fn agreement(
        l: Language,
        unlisted: &[String],
        dangling: &[String],
        not_entries: &[String],
    ) -> String {
        let mut parts = Vec::new();
        for (names, key) in [
            (unlisted, Text::DoctorAgreementUnlisted),
            (dangling, Text::DoctorAgreementDangling),
            (not_entries, Text::DoctorAgreementNotEntries),
        ] {
            if !names.is_empty() {
                parts.push(t(l, key, &[("names", &names.join(", "))]));
            }
        }
        parts.join(Text::DoctorJoin.template(l))
    }
    /// The `{lines}/{max_lines} lines, {bytes}/{max_bytes} bytes` arguments.
    fn sizes<'a>(
        lines: &'a usize,
        max_lines: &'a usize,
        bytes: &'a usize,
        max_bytes: &'a usize,
    ) -> [(&'static str, &'a dyn Display); 4] {
        [
            ("lines", lines),
            ("max_lines", max_lines),
            ("bytes", bytes),
            ("max_bytes", max_bytes),
        ]
    }
    /// Write capacity over the limit.
    pub fn capacity_over(
        l: Language,
        lines: usize,
        max_lines: usize,
        bytes: usize,
        max_bytes: usize,
    ) -> String {
        t(
            l,
            Text::DoctorCapacityOver,
            &sizes(&lines, &max_lines, &bytes, &max_bytes),
        )
    }
    /// Write capacity at or above 90 %.
    pub fn capacity_near(
        l: Language,
        lines: usize,
        max_lines: usize,
        bytes: usize,
        max_bytes: usize,
    ) -> String {
        t(
            l,
            Text::DoctorCapacityNear,
            &sizes(&lines, &max_lines, &bytes, &max_bytes),
        )
    }
    /// Write capacity fine.
    pub fn capacity_ok(
        l: Language,
        lines: usize,
        max_lines: usize,
        bytes: usize,
        max_bytes: usize,
    ) -> String {
        t(
            l,
            Text::DoctorCapacityOk,
            &sizes(&lines, &max_lines, &bytes, &max_bytes),
        )
    }
    /// Fix for capacity.
    pub fn capacity_fix(l: Language) -> String {
        t(l, Text::DoctorCapacityFix, &[])
    }
    /// Entries outside the injected window.
    pub fn window_outside(
        l: Language,
        lines: usize,
        max_lines: usize,
        bytes: usize,
        max_bytes: usize,
        outside: &[String],
    ) -> String {
        let sizes = sizes(&lines, &max_lines, &bytes, &max_bytes);
        if outside.is_empty() {
            return t(l, Text::DoctorWindowFull, &sizes);
        }
        let count = outside.len();
        let names = outside.join(", ");
        let mut args = sizes.to_vec();
        args.push(("count", &count));
        args.push(("names", &names));
        t(l, Text::DoctorWindowOutside, &args)
    }
    /// The window at or above 90 %.
    pub fn window_near(
        l: Language,
        lines: usize,
        max_lines: usize,
        bytes: usize,
        max_bytes: usize,
    ) -> String {
        t(
            l,
            Text::DoctorWindowNear,
            &sizes(&lines, &max_lines, &bytes, &max_bytes),
        )
    }
    /// The window fine.
    pub fn window_ok(
        l: Language,
        lines: usize,
        max_lines: usize,
        bytes: usize,
        max_bytes: usize,
    ) -> String {
        t(
            l,
            Text::DoctorWindowOk,
            &sizes(&lines, &max_lines, &bytes, &max_bytes),
        )
    }
    /// Fix for the window.
    pub fn window_fix(l: Language) -> String {
        t(l, Text::DoctorWindowFix, &[])
    }
    /// No lock.
    pub fn lock_free(l: Language) -> String {
        t(l, Text::DoctorLockFree, &[])
    }
    /// A live holder on this host.
    pub fn lock_live(l: Language, holder: &str) -> String {
        t(l, Text::DoctorLockLive, &[("holder", &holder)])
    }
    /// A dead holder on this host.
    pub fn lock_dead(l: Language, holder: &str) -> String {
        t(l, Text::DoctorLockDead, &[("holder", &holder)])
    }
    /// A holder on another host.
    pub fn lock_other_host(l: Language, holder: &str) -> String {
        t(l, Text::DoctorLockOtherHost, &[("holder", &holder)])
    }
    /// An unreadable record.
    pub fn lock_unreadable(l: Language, empty: bool) -> String {
        t(
            l,
            if empty {
                Text::DoctorLockEmpty
            } else {
                Text::DoctorLockUnreadable
            },
            &[],
        )
    }
    /// Fix for a lock.
    pub fn lock_unlock_fix(l: Language) -> String {
        t(l, Text::DoctorLockUnlockFix, &[])
    }
    /// No model configured.
    pub fn models_none(l: Language) -> String {
        t(l, Text::DoctorModelsNone, &[])
    }
    /// Every model usable.
    pub fn models_ok(l: Language, models: &[String]) -> String {
        t(l, Text::DoctorModelsOk, &[("models", &models.join(", "))])
    }
    /// Unusable models.
    pub fn models_bad(l: Language, models: &[String]) -> String {
        t(l, Text::DoctorModelsBad, &[("models", &models.join(", "))])
    }
    /// Fix for models.
    pub fn models_fix(l: Language) -> String {
        t(l, Text::DoctorModelsFix, &[])
    }
    /// The CLI cannot ask pi.
    pub fn models_cli(l: Language) -> String {
        t(l, Text::DoctorModelsCli, &[])
    }
    /// The CLI has no extension to compare with.
    pub fn protocol_cli(l: Language) -> String {
        t(l, Text::DoctorProtocolCli, &[])
    }
    /// Protocols differ.
    pub fn protocol_mismatch(
        l: Language,
        ext: u32,
        ext_version: &str,
        bin: u32,
        bin_version: &str,
    ) -> String {
        t(
            l,
            Text::DoctorProtocolMismatch,
            &[
                ("ext", &ext),
                ("ext_version", &ext_version),
                ("bin", &bin),
                ("bin_version", &bin_version),
            ],
        )
    }
    /// Versions differ.
    pub fn version_mismatch(
        l: Language,
        protocol: u32,
        ext_version: &str,
        bin_version: &str,
    ) -> String {
        t(
            l,
            Text::DoctorVersionMismatch,
            &[
                ("protocol", &protocol),
                ("ext_version", &ext_version),
                ("bin_version", &bin_version),
            ],
        )
    }
    /// Fix for protocol and versions.
    pub fn protocol_fix(l: Language) -> String {
        t(l, Text::DoctorProtocolFix, &[])
    }
    /// Protocols agree.
    pub fn protocol_ok(l: Language, protocol: u32, version: &str) -> String {
        t(
            l,
            Text::DoctorProtocolOk,
            &[("protocol", &protocol), ("version", &version)],
        )
    }
    /// A pre-2.5 nested directory.
    pub fn legacy_nested(l: Language, path: &Path) -> String {
        t(l, Text::DoctorLegacyNested, &[("path", &path.display())])
    }
    /// The repository's local/ directory has memories.
    pub fn orphan_local(l: Language, path: &Path) -> String {
        t(l, Text::DoctorOrphanLocal, &[("path", &path.display())])
    }
    /// Another git/ directory of the same repository name.
    pub fn orphan_git(l: Language, path: &Path) -> String {
        t(l, Text::DoctorOrphanGit, &[("path", &path.display())])
    }
    /// Nothing found.
    pub fn layout_ok(l: Language) -> String {
        t(l, Text::DoctorLayoutOk, &[])
    }
    /// Found something.
    pub fn layout_found(l: Language, found: &[String]) -> String {
        t(
            l,
            Text::DoctorLayoutFound,
            &[("found", &found.join(Text::DoctorJoin.template(l)))],
        )
    }
    /// Fix for the layout.
    pub fn layout_fix(l: Language, current: &Path) -> String {
        t(l, Text::DoctorLayoutFix, &[("current", &current.display())])
    }
    /// No snapshots.
    pub fn snapshots_none(l: Language) -> String {
        t(l, Text::DoctorSnapshotsNone, &[])
    }
    /// Snapshot count and size.
    pub fn snapshots(l: Language, count: usize, migrate: usize, bytes: u64, keep: usize) -> String {
        let kib = bytes.div_ceil(1024);
        let migrate = if migrate > 0 {
            t(l, Text::DoctorSnapshotsMigrate, &[("count", &migrate)])
        } else {
            String::new()
        };
        t(
            l,
            Text::DoctorSnapshots,
            &[
                ("count", &count),
                ("keep", &keep),
                ("migrate", &migrate),
                ("kib", &kib),
            ],
        )
    }
    /// Fix for too many snapshots.
    pub fn snapshots_fix(l: Language) -> String {
        t(l, Text::DoctorSnapshotsFix, &[])
    }
    /// No name is in two scopes (issue 16); `scopes`: the scopes that exist here.
    pub fn scopes_distinct(l: Language, scopes: &str) -> String {
        t(l, Text::DoctorScopesDistinct, &[("scopes", &scopes)])
    }
    /// Names in several scopes: `Name (project, user; identical)`, ….
    pub fn scope_duplicates(l: Language, list: &str) -> String {
        t(l, Text::DoctorScopeDuplicates, &[("list", &list)])
    }
    /// Fix for [`scope_duplicates`].
    pub fn scope_duplicates_fix(l: Language) -> String {
        t(l, Text::DoctorScopeDuplicatesFix, &[])
    }
    /// The scopes could not be read.
    pub fn scopes_unreadable(l: Language, error: &dyn Display) -> String {
        t(l, Text::DoctorScopesUnreadable, &[("error", error)])
    }
}
