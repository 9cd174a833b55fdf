//! Protected memory files (PA-33..PA-37, adapted to the `memory` tool): pi's built-in file
//! tools are checked in pi's `tool_call` event (docs/pi-host.md §j) before they run.
//!
//! * `write` / `edit`: never anything under the memory root (the reason points the model at
//!   the `memory` tool).
//! * `read`: never the internals (`.backups/`, `.lock`, temp files, `.dream-meta.json`,
//!   `sessions/`, the run log's `.experience/`, the `.pimem/` caches, any dot file inside a
//!   project directory).
//!   Decision: plain reads of entry files and `MEMORY.md` stay allowed while memory is on,
//!   because pi-memory's prompt has the model read entries it saw in the index; while memory
//!   is off or paused every read under the root is refused (PA-16).
//! * `ls`: the root and its `git/`, `local/` levels list project names only and stay
//!   allowed; a project directory or anything below would show the internals, so it is
//!   refused (the memory tool's `list` shows the memories).
//! * `grep` / `find` inside or above the memory tree: narrowed before the scan starts — the
//!   sidecar makes sure `<memory root>/.ignore` (read by both `rg` and `fd`, which pi runs
//!   without `--no-ignore`) excludes the internals (everything, while memory is off); a
//!   `grep` glob naming an internal is refused, since `rg --glob` overrides ignore files; if
//!   the file cannot be written the call is refused (never an unprotected scan, PA-36).
//!
//! Paths are resolved as pi resolves them (`resolveToCwd`: a leading `@` stripped, `~`
//! expanded, relative to the session's cwd, `.`/`..` folded lexically), then through
//! symlinks (the longest existing ancestor is canonicalised), so a relative path, an `@path`,
//! a `..` walk or a symlink into the memory tree are all seen.
//!
//! # Limitations
//! `bash` and the user's `!cmd` run arbitrary commands and cannot be gated by path (pi-host
//! §j); nor can other extensions' tools. A hard link to an entry file from outside the tree
//! is not recognised.

use std::path::{Component, Path, PathBuf};

use camino::Utf8PathBuf;
use memory_core::messages as msg;
use serde_json::Value;

/// The ignore file at the memory root.
pub(super) const IGNORE_FILE: &str = ".ignore";

/// What to do with one file-tool call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Verdict {
    /// Not about memory (or harmless): run it unchanged.
    Allow,
    /// Refuse, with this reason for the model.
    Block(String),
    /// A scan covering the memory tree: run it once the ignore file is in place.
    Narrow,
}

/// The ignore file's text for the switch state.
pub(super) fn ignore_text(memory_on: bool) -> String {
    let rules = if memory_on {
        ".backups/\nsessions/\n.experience/\n.pimem/\n.lock\n.lock.*\n.*.tmp\n.dream-meta.json\n.ignore\n"
    } else {
        "*\n"
    };
    format!("{}{rules}", msg::GUARD_IGNORE_HEADER)
}

/// Judges one call of a built-in file tool against the memory root `root`.
pub(super) fn judge(
    tool: &str,
    input: &Value,
    cwd: &Path,
    home: Option<&Path>,
    root: &Path,
    memory_on: bool,
) -> Verdict {
    let path_arg = input.get("path").and_then(Value::as_str);
    let path = match (tool, path_arg) {
        ("read" | "write" | "edit", Some(p)) => p,
        ("read" | "write" | "edit", None) => return Verdict::Allow, // pi rejects it itself
        ("grep" | "find" | "ls", p) => p.unwrap_or("."),
        _ => return Verdict::Allow,
    };
    let target = resolve_like_pi(path, cwd, home);
    let place = locate(&target, root);
    match tool {
        "write" | "edit" => match place {
            Place::Inside(_) => Verdict::Block(msg::guard_write(tool)),
            _ => Verdict::Allow,
        },
        "read" => match place {
            Place::Inside(rel) if is_internal(&rel) => Verdict::Block(msg::guard_internal(tool)),
            Place::Inside(_) if !memory_on => Verdict::Block(msg::guard_off(tool)),
            _ => Verdict::Allow,
        },
        "ls" => match place {
            Place::Inside(rel) if is_internal(&rel) || rel.len() >= 2 => {
                Verdict::Block(msg::guard_ls())
            }
            _ => Verdict::Allow,
        },
        _ => {
            // grep, find
            let covers = match &place {
                Place::Inside(rel) if is_internal(rel) => {
                    return Verdict::Block(msg::guard_internal(tool));
                }
                Place::Inside(rel) if !memory_on && rel.len() >= 2 => {
                    return Verdict::Block(msg::guard_off(tool));
                }
                Place::Inside(_) | Place::Above => true,
                Place::Outside => false,
            };
            if !covers {
                return Verdict::Allow;
            }
            if tool == "grep"
                && let Some(glob) = input.get("glob").and_then(Value::as_str)
                && glob_names_internal(glob)
            {
                return Verdict::Block(msg::guard_glob());
            }
            Verdict::Narrow
        }
    }
}

/// Where a path lies relative to the memory root.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Place {
    /// Under the root (or the root itself): the components below it.
    Inside(Vec<String>),
    /// An ancestor of the root: a scan from here reaches the tree.
    Above,
    /// Unrelated.
    Outside,
}

fn locate(target: &Path, root: &Path) -> Place {
    let candidates = [
        (target.to_path_buf(), root.to_path_buf()),
        (canonical(target), canonical(root)),
    ];
    for (t, r) in &candidates {
        if let Ok(rel) = t.strip_prefix(r) {
            return Place::Inside(
                rel.components()
                    .map(|c| c.as_os_str().to_string_lossy().into_owned())
                    .collect(),
            );
        }
    }
    for (t, r) in &candidates {
        if r.starts_with(t) {
            return Place::Above;
        }
    }
    Place::Outside
}

/// Whether the components below the root name an internal: a dot file or directory at the
/// root's level (other than `git`/`local`), or inside a project directory `.backups/`,
/// `sessions/`, a dot file (`.lock`, temp files, `.dream-meta.json`) or a `*.tmp` file.
fn is_internal(rel: &[String]) -> bool {
    rel.iter().enumerate().any(|(i, c)| match i {
        0 => c.starts_with('.'),
        1 => false,
        _ => c == ".backups" || c == "sessions" || c.starts_with('.') || c.ends_with(".tmp"),
    })
}

/// A grep glob that would reach an internal (rg's `--glob` overrides ignore files).
fn glob_names_internal(glob: &str) -> bool {
    let g = glob.to_ascii_lowercase();
    if g.starts_with('!') {
        return false; // an exclusion only narrows further
    }
    [
        ".backups",
        "sessions",
        ".lock",
        ".dream-meta",
        ".experience",
        ".pimem",
        ".tmp",
        ".ignore",
    ]
    .iter()
    .any(|n| g.contains(n))
        || g.starts_with('.')
        || g.contains("/.")
}

/// pi's `resolveToCwd`: `@` stripped, `~` expanded, `file://` read as a path, relative paths
/// joined to `cwd`, then `.` and `..` folded lexically (Node's `path.resolve`).
pub(super) fn resolve_like_pi(raw: &str, cwd: &Path, home: Option<&Path>) -> PathBuf {
    let raw = raw.strip_prefix('@').unwrap_or(raw);
    let expanded: PathBuf = match (raw, home) {
        ("~", Some(h)) => h.to_path_buf(),
        (r, Some(h)) if r.starts_with("~/") => h.join(&r[2..]),
        (r, _) if r.starts_with("file://") => PathBuf::from(&r["file://".len()..]),
        (r, _) => PathBuf::from(r),
    };
    let joined = if expanded.is_absolute() {
        expanded
    } else {
        cwd.join(expanded)
    };
    let mut out = PathBuf::new();
    for c in joined.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// The path through symlinks: the longest existing ancestor canonicalised, the rest appended.
fn canonical(path: &Path) -> PathBuf {
    let mut missing: Vec<&std::ffi::OsStr> = Vec::new();
    let mut cur = path;
    loop {
        if let Ok(real) = std::fs::canonicalize(cur) {
            let mut out = real;
            for m in missing.iter().rev() {
                out.push(m);
            }
            return out;
        }
        match (cur.parent(), cur.file_name()) {
            (Some(parent), Some(name)) => {
                missing.push(name);
                cur = parent;
            }
            _ => return path.to_path_buf(),
        }
    }
}

/// Makes sure `<root>/.ignore` holds the rules for the switch state (written only when it
/// differs). A missing root has nothing to hide.
pub(super) fn ensure_ignore(root: &Path, memory_on: bool) -> Result<(), String> {
    if !root.is_dir() {
        return Ok(());
    }
    let path = root.join(IGNORE_FILE);
    let want = ignore_text(memory_on);
    if std::fs::read_to_string(&path).is_ok_and(|t| t == want) {
        return Ok(());
    }
    let utf8 = Utf8PathBuf::from_path_buf(path.clone())
        .map_err(|p| format!("{} is not a UTF-8 path", p.display()))?;
    memory_core::write_private_file(&utf8, want.as_bytes()).map_err(|e| e.to_string())
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // fixtures are written with plain std::fs
mod tests {
    use serde_json::json;

    use super::*;

    struct Tree {
        _tmp: tempfile::TempDir,
        base: PathBuf,
        root: PathBuf,
    }

    fn tree() -> Tree {
        let tmp = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(tmp.path()).unwrap();
        let root = base.join("home/.pi/memory");
        let proj = root.join("git/github.com__o__r");
        std::fs::create_dir_all(proj.join(".backups/2026-x-write")).unwrap();
        std::fs::create_dir_all(base.join("work/proj")).unwrap();
        std::fs::write(proj.join("MEMORY.md"), "- [a](a.md) — a\n").unwrap();
        std::fs::write(proj.join("a.md"), "x").unwrap();
        std::os::unix::fs::symlink(&proj, base.join("work/proj/mem")).unwrap();
        Tree {
            _tmp: tmp,
            base,
            root,
        }
    }

    fn verdict(t: &Tree, tool: &str, input: Value, on: bool) -> Verdict {
        let home = t.base.join("home");
        judge(
            tool,
            &input,
            &t.base.join("work/proj"),
            Some(&home),
            &t.root,
            on,
        )
    }

    fn blocked(v: &Verdict) -> bool {
        matches!(v, Verdict::Block(_))
    }

    #[test]
    fn writes_and_edits_into_the_tree_are_blocked_however_the_path_is_spelled() {
        let t = tree();
        let proj = "~/.pi/memory/git/github.com__o__r";
        for path in [
            format!("{proj}/new.md"),
            format!("@{proj}/a.md"),
            "../../home/.pi/memory/git/github.com__o__r/MEMORY.md".to_owned(),
            "mem/a.md".to_owned(),
            "@mem/../mem/evil.md".to_owned(),
            "~/.pi/memory".to_owned(),
            format!("{}/local/x.md", t.root.display()),
        ] {
            for tool in ["write", "edit"] {
                let v = verdict(&t, tool, json!({"path": path, "content": "x"}), true);
                assert!(blocked(&v), "{tool} {path}: {v:?}");
                if let Verdict::Block(reason) = v {
                    assert!(reason.contains("memory tool"), "{reason}");
                }
            }
        }
        assert_eq!(
            verdict(&t, "write", json!({"path": "src/main.rs"}), true),
            Verdict::Allow
        );
        assert_eq!(
            verdict(&t, "write", json!({"path": "../proj2/x"}), true),
            Verdict::Allow
        );
    }

    #[test]
    fn reads_see_entries_but_never_internals_and_nothing_while_off() {
        let t = tree();
        assert_eq!(
            verdict(&t, "read", json!({"path": "mem/a.md"}), true),
            Verdict::Allow
        );
        assert_eq!(
            verdict(&t, "read", json!({"path": "mem/MEMORY.md"}), true),
            Verdict::Allow
        );
        for p in [
            "mem/.lock",
            "mem/.backups/2026-x-write/a.md",
            "mem/.dream-meta.json",
            "mem/sessions/x.jsonl",
            "mem/.experience/runlog.db",
            "mem/.pimem/lexical-index",
            "mem/.a.md.123.0.tmp",
            "~/.pi/memory/.ignore",
        ] {
            assert!(
                blocked(&verdict(&t, "read", json!({"path": p}), true)),
                "{p}"
            );
        }
        assert!(blocked(&verdict(
            &t,
            "read",
            json!({"path": "mem/a.md"}),
            false
        )));
        assert_eq!(
            verdict(&t, "read", json!({"path": "README.md"}), false),
            Verdict::Allow
        );
    }

    #[test]
    fn ls_lists_project_names_but_not_a_project_directory() {
        let t = tree();
        assert_eq!(
            verdict(&t, "ls", json!({"path": "~/.pi/memory/git"}), true),
            Verdict::Allow
        );
        assert!(blocked(&verdict(&t, "ls", json!({"path": "mem"}), true)));
        assert!(blocked(&verdict(
            &t,
            "ls",
            json!({"path": "mem/.backups"}),
            true
        )));
        assert_eq!(verdict(&t, "ls", json!({}), true), Verdict::Allow);
    }

    #[test]
    fn scans_above_or_inside_the_tree_are_narrowed_and_internal_globs_refused() {
        let t = tree();
        let home = t.base.join("home");
        let from_home = |input: Value, on| judge("grep", &input, &home, Some(&home), &t.root, on);
        assert_eq!(from_home(json!({"pattern": "x"}), true), Verdict::Narrow);
        assert_eq!(
            from_home(json!({"pattern": "x", "glob": "*.md"}), true),
            Verdict::Narrow
        );
        assert!(blocked(&from_home(
            json!({"pattern": "x", "glob": "**/.backups/**"}),
            true
        )));
        assert_eq!(
            from_home(json!({"pattern": "x", "glob": "!.backups"}), true),
            Verdict::Narrow
        );
        assert_eq!(
            verdict(&t, "find", json!({"pattern": "*.md", "path": "mem"}), true),
            Verdict::Narrow
        );
        assert!(blocked(&verdict(
            &t,
            "find",
            json!({"pattern": "*", "path": "mem/.backups"}),
            true
        )));
        assert!(blocked(&verdict(
            &t,
            "grep",
            json!({"pattern": "x", "path": "mem"}),
            false
        )));
        assert_eq!(
            verdict(&t, "grep", json!({"pattern": "x", "path": "src"}), true),
            Verdict::Allow
        );
    }

    #[test]
    fn the_ignore_file_follows_the_switch() {
        let t = tree();
        ensure_ignore(&t.root, true).unwrap();
        let text = std::fs::read_to_string(t.root.join(IGNORE_FILE)).unwrap();
        assert!(text.contains(".backups/\n"), "{text}");
        ensure_ignore(&t.root, false).unwrap();
        let text = std::fs::read_to_string(t.root.join(IGNORE_FILE)).unwrap();
        assert!(text.ends_with("*\n"), "{text}");
        ensure_ignore(&t.base.join("missing"), true).unwrap();
        assert!(!t.base.join("missing").exists());
    }
}
