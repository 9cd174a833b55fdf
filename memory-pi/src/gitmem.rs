//! Memory in git: the `MEMORY.md` merge driver, its registration, `pimem sync`, and the
//! doctor's `git.merge` check.
//!
//! Memories are one Markdown file per entry plus the index `MEMORY.md`. Entry files merge in
//! git like any text; the index does not (two branches that each add a memory both append a
//! line at its end, a conflict every time), so a merge driver merges it keyed by entry file
//! ([`memory_index::merge_index`]).
//!
//! - [`merge_driver`] is `pimem merge-index %O %A %B`: it merges the three versions, writes the
//!   result over `%A` and reports the lines both sides changed (exit status 0: the entry file
//!   of such a line carries the real git conflict).
//! - [`setup`] is `pimem git setup`: `merge.pimem-index.name` and `.driver` in the repository's
//!   own config (`git config`, never `--global`) and a `.gitattributes` line per index pattern.
//!   Without the driver configured (another clone, a CI checkout) git falls back to its own
//!   line merge: nothing breaks, index merges just conflict more often.
//! - [`sync`] is `pimem sync`: the memory root as a private git repository (commit, pull with
//!   rebase through the driver, push), under every memory directory's locks.
//! - [`doctor_check`] finds conflict markers left in memory files, a stopped sync, and index
//!   lines that disagree with their entry files, in the project, user and team directories.
//!
//! Decision: the driver is registered with the absolute path of the running `pimem`
//! (`std::env::current_exe`), shell-quoted, unless `--program` names another. Git runs drivers
//! through the shell with its caller's `PATH`, which for IDEs and GUI clients often lacks the
//! npm or cargo bin directory; an absolute path works for every caller. Moving or reinstalling
//! pimem somewhere else needs `pimem git setup` again (it is idempotent); `--program pimem`
//! chooses the `PATH` lookup instead.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use camino::Utf8PathBuf;
use memory_core::{DirHold, Store, StoreOptions, write_private_file};
use memory_index::{
    INDEX_FILE_NAME, IndexConflict, is_entry_candidate, merge_index, parse_entry, parse_index,
};

use crate::doctor::{Check, State};

/// The merge driver's name in `.git/config` and `.gitattributes` (`merge=pimem-index`).
pub const DRIVER: &str = "pimem-index";

/// The `.gitattributes` pattern of the team scope's index files (`<repository root>/.pi/memory/`).
pub const TEAM_PATTERN: &str = ".pi/memory/**/MEMORY.md";

/// The `.gitattributes` pattern of a memory root under `pimem sync` (every directory's index).
pub const SYNC_PATTERN: &str = "MEMORY.md";

/// The `.gitignore` `pimem sync` writes at the top of the memory root, and `pimem git setup`
/// in the team directory when it has none: only Markdown files (entries and indexes) outside
/// hidden directories, plus `.gitignore` and `.gitattributes`, are committed.
///
// Decision: a whitelist, not a list of exclusions. What stays on the machine: `.lock`, temp
// files, `.backups/` snapshots (hard links of earlier versions, per machine), the caches
// (`.pimem/`), the run log (`.experience/`, SQLite), `.dream-meta.json`, and anything a future
// version adds as a hidden file, without a change here.
pub const MEMORY_GITIGNORE: &str = "# Written by pimem: only memory entries and indexes are committed (locks, snapshots and caches stay on this machine).\n\
*\n\
!*/\n\
!*.md\n\
.*\n\
!/.gitignore\n\
!/.gitattributes\n";

/// What went wrong in a git operation of this module.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum GitError {
    /// A file could not be read or written.
    #[error("{action} {}: {source}", path.display())]
    Io {
        /// `reading`, `writing`, ...
        action: &'static str,
        /// The file.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// A merge-driver input is not UTF-8.
    #[error("{} is not UTF-8 text (byte {valid_up_to}); merge it by hand", path.display())]
    NotUtf8 {
        /// The file.
        path: PathBuf,
        /// Length of its valid prefix.
        valid_up_to: usize,
    },
    /// `git` could not be started.
    #[error("cannot run git ({source}); is git installed and on PATH?")]
    NoGit {
        /// The spawn error.
        #[source]
        source: std::io::Error,
    },
    /// A git command failed.
    #[error("`git {args}` failed: {stderr}")]
    Git {
        /// The arguments, joined by spaces.
        args: String,
        /// git's standard error, trimmed.
        stderr: String,
    },
    /// `pimem git setup` outside a git work tree.
    #[error("{} is not inside a git work tree; run `git init` first or pass --cwd", .0.display())]
    NotARepository(PathBuf),
    /// `pimem sync` without `--remote` and without `origin`.
    #[error(
        "no remote configured for {}: run `pimem sync --remote <URL>` once (a private repository of yours)",
        .0.display()
    )]
    NoRemote(PathBuf),
    /// Fetch or push failed: network, authentication or a wrong URL.
    #[error("cannot reach the remote `{remote}` ({stage}): {stderr}")]
    Remote {
        /// `fetch` or `push`.
        stage: &'static str,
        /// The remote's URL.
        remote: String,
        /// git's standard error.
        stderr: String,
    },
    /// The rebase stopped on conflicting files, left in place for the user.
    #[error(
        "sync stopped on a conflict in {}: edit each file to keep what you want (remove the <<<<<<< ======= >>>>>>> lines), then `git -C {root} add <file>` and `git -C {root} rebase --continue`, then run `pimem sync` again (or `git -C {root} rebase --abort` to go back)",
        files.join(", "),
        root = root.display()
    )]
    Conflict {
        /// The memory root.
        root: PathBuf,
        /// The conflicting files, relative to the root.
        files: Vec<String>,
    },
    /// A previous sync stopped on a conflict that is still there.
    #[error(
        "a previous sync stopped on a conflict in {}: resolve it (`git -C {root} status`), `git -C {root} rebase --continue`, then run `pimem sync` again",
        .files.join(", "),
        root = root.display()
    )]
    RebaseInProgress {
        /// The memory root.
        root: PathBuf,
        /// The files still conflicting.
        files: Vec<String>,
    },
    /// A file about to be committed holds what looks like a credential.
    #[error(
        "not committing: {} looks like it holds a secret ({kind}); remove it from the file (nothing was committed)",
        path
    )]
    Secret {
        /// The file, relative to the root.
        path: String,
        /// The kind of credential.
        kind: &'static str,
    },
    /// A memory directory's lock could not be taken.
    #[error("cannot lock {}: {source}", dir.display())]
    Lock {
        /// The memory directory.
        dir: PathBuf,
        /// The store's error (boxed: it is large).
        #[source]
        source: Box<memory_core::StoreError>,
    },
}

fn io<'p>(action: &'static str, path: &'p Path) -> impl FnOnce(std::io::Error) -> GitError + 'p {
    move |source| GitError::Io {
        action,
        path: path.to_path_buf(),
        source,
    }
}

fn read_text(path: &Path) -> Result<String, GitError> {
    let bytes = std::fs::read(path).map_err(io("reading", path))?;
    String::from_utf8(bytes).map_err(|e| GitError::NotUtf8 {
        path: path.to_path_buf(),
        valid_up_to: e.utf8_error().valid_up_to(),
    })
}

/// `pimem merge-index %O %A %B`: merges the index versions and writes the result over `ours`
/// (`%A`, as git expects). Returns the lines both sides changed; the caller reports them and
/// still exits 0, because the conflict is the entry file's (see [`merge_index`]).
pub fn merge_driver(
    base: &Path,
    ours: &Path,
    theirs: &Path,
) -> Result<Vec<IndexConflict>, GitError> {
    let merged = merge_index(&read_text(base)?, &read_text(ours)?, &read_text(theirs)?);
    // Git passes `%A` relative to the work tree's top (`.merge_file_XXXXXX`).
    let ours = if ours.is_absolute() {
        ours.to_path_buf()
    } else {
        std::env::current_dir()
            .map_err(io("resolving", ours))?
            .join(ours)
    };
    write_file(&ours, &merged.text)?;
    Ok(merged.conflicts)
}

/// Runs `git` with `args` in `dir`, without the caller's `GIT_DIR`/`GIT_WORK_TREE`/
/// `GIT_INDEX_FILE` (a hook's environment must not redirect it).
fn git_in(dir: &Path, args: &[&str]) -> Result<Output, GitError> {
    Command::new("git")
        .args(args)
        .current_dir(dir)
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .env_remove("GIT_INDEX_FILE")
        .output()
        .map_err(|source| GitError::NoGit { source })
}

/// Like [`git_in`], failing with git's stderr; returns trimmed stdout.
fn git_ok(dir: &Path, args: &[&str]) -> Result<String, GitError> {
    let out = git_in(dir, args)?;
    if !out.status.success() {
        return Err(GitError::Git {
            args: args.join(" "),
            stderr: String::from_utf8_lossy(&out.stderr).trim().to_owned(),
        });
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_owned())
}

/// `program` quoted for the POSIX shell git runs drivers with.
pub fn shell_quote(program: &str) -> String {
    if !program.is_empty()
        && program
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+@%:,".contains(c))
    {
        return program.to_owned();
    }
    format!("'{}'", program.replace('\'', r"'\''"))
}

/// What [`setup`] changed.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SetupOutcome {
    /// The repository's top-level directory.
    pub root: PathBuf,
    /// The driver command now registered.
    pub driver: String,
    /// Whether `.git/config` was changed.
    pub config_changed: bool,
    /// The `.gitattributes` lines added (empty: all were there).
    pub attributes_added: Vec<String>,
}

/// Registers the merge driver in the repository around `dir` (its own config) and makes sure
/// `<top level>/.gitattributes` routes every pattern to it. Idempotent: a second run changes
/// nothing; an existing line for a pattern is left as the user wrote it.
pub fn setup(dir: &Path, program: &str, patterns: &[&str]) -> Result<SetupOutcome, GitError> {
    let top = match git_in(dir, &["rev-parse", "--show-toplevel"]) {
        Ok(out) if out.status.success() => {
            PathBuf::from(String::from_utf8_lossy(&out.stdout).trim())
        }
        Ok(_) => return Err(GitError::NotARepository(dir.to_path_buf())),
        Err(e) => return Err(e),
    };
    let driver = format!("{} merge-index %O %A %B", shell_quote(program));
    let name = "pimem: merge MEMORY.md index lines by entry file";
    let mut config_changed = false;
    for (key, value) in [
        (format!("merge.{DRIVER}.name"), name),
        (format!("merge.{DRIVER}.driver"), driver.as_str()),
    ] {
        let current = git_in(&top, &["config", "--local", "--get", &key])?;
        if !current.status.success() || String::from_utf8_lossy(&current.stdout).trim() != value {
            git_ok(&top, &["config", "--local", &key, value])?;
            config_changed = true;
        }
    }
    let path = top.join(".gitattributes");
    let existing = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(io("reading", &path)(e)),
    };
    let present: BTreeSet<&str> = existing
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    let added: Vec<String> = patterns
        .iter()
        .filter(|p| !present.contains(**p))
        .map(|p| format!("{p} merge={DRIVER}"))
        .collect();
    if !added.is_empty() {
        let mut text = existing.clone();
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        for line in &added {
            text.push_str(line);
            text.push('\n');
        }
        write_file(&path, &text)?;
    }
    Ok(SetupOutcome {
        root: top,
        driver,
        config_changed,
        attributes_added: added,
    })
}

/// `pimem git setup` for team memory: [`setup`] with `patterns`, plus [`MEMORY_GITIGNORE`] as
/// `<top level>/.pi/memory/.gitignore` when that directory has no `.gitignore` yet (so its
/// `.lock`, `.backups/` and caches are never committed). Returns the `.gitignore` written.
pub fn setup_team(
    dir: &Path,
    program: &str,
    patterns: &[&str],
) -> Result<(SetupOutcome, Option<PathBuf>), GitError> {
    let out = setup(dir, program, patterns)?;
    let team = out.root.join(".pi").join("memory");
    let ignore = team.join(".gitignore");
    if ignore.exists() {
        return Ok((out, None));
    }
    std::fs::create_dir_all(&team).map_err(io("creating", &team))?;
    write_file(&ignore, MEMORY_GITIGNORE)?;
    Ok((out, Some(ignore)))
}

fn write_file(path: &Path, text: &str) -> Result<(), GitError> {
    let target = Utf8PathBuf::from_path_buf(path.to_path_buf()).map_err(|p| GitError::Io {
        action: "writing",
        path: p,
        source: std::io::Error::new(std::io::ErrorKind::InvalidInput, "path is not UTF-8"),
    })?;
    write_private_file(&target, text.as_bytes()).map_err(|e| GitError::Io {
        action: "writing",
        path: path.to_path_buf(),
        source: std::io::Error::other(e.to_string()),
    })
}

/// What [`sync`] did.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SyncOutcome {
    /// Whether the repository was created by this run.
    pub initialized: bool,
    /// Files in the local commit (0: nothing had changed).
    pub committed: usize,
    /// Whether the remote had commits that were pulled.
    pub pulled: bool,
    /// Whether anything was pushed.
    pub pushed: bool,
}

/// The memory directories under `root` (any directory holding a Markdown file, hidden
/// directories skipped), sorted: the order their locks are taken in.
pub fn memory_dirs(root: &Path) -> Vec<PathBuf> {
    fn walk(dir: &Path, depth: usize, out: &mut Vec<PathBuf>) {
        let Ok(rd) = std::fs::read_dir(dir) else {
            return;
        };
        let mut has_md = false;
        for e in rd.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if name.starts_with('.') {
                continue;
            }
            match e.file_type() {
                Ok(t) if t.is_dir() && depth < 4 => walk(&e.path(), depth + 1, out),
                Ok(t) if t.is_file() && name.ends_with(".md") => has_md = true,
                _ => {}
            }
        }
        if has_md && depth > 0 {
            out.push(dir.to_path_buf());
        }
    }
    let mut out = Vec::new();
    walk(root, 0, &mut out);
    out.sort();
    out
}

fn hold_all(root: &Path) -> Result<Vec<DirHold>, GitError> {
    let mut holds = Vec::new();
    for dir in memory_dirs(root) {
        let Ok(utf8) = Utf8PathBuf::from_path_buf(dir.clone()) else {
            continue;
        };
        let store = Store::new(utf8, StoreOptions::default());
        holds.push(store.hold("sync").map_err(|e| GitError::Lock {
            dir,
            source: Box::new(e),
        })?);
    }
    Ok(holds)
}

/// Git checks files out with the process umask (usually 0644); memory is private (0700
/// directories, 0600 files, as the store creates them), so pulled files are narrowed again.
fn make_private(root: &Path) {
    use std::os::unix::fs::PermissionsExt;
    let narrow = |path: &Path, mode: u32| {
        if let Ok(meta) = std::fs::symlink_metadata(path)
            && meta.permissions().mode() & 0o077 != 0
        {
            let _ = std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode));
        }
    };
    narrow(root, 0o700);
    for dir in memory_dirs(root) {
        let mut up = Some(dir.as_path());
        while let Some(d) = up.filter(|d| d.starts_with(root) && *d != root) {
            narrow(d, 0o700);
            up = d.parent();
        }
        for e in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            if e.file_type().is_ok_and(|t| t.is_file()) {
                narrow(&e.path(), 0o600);
            }
        }
    }
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

fn conflicted_files(root: &Path) -> Vec<String> {
    git_ok(root, &["diff", "--name-only", "--diff-filter=U"])
        .map(|s| s.lines().map(str::to_owned).collect())
        .unwrap_or_default()
}

fn rebase_in_progress(root: &Path) -> bool {
    root.join(".git/rebase-merge").exists() || root.join(".git/rebase-apply").exists()
}

/// `pimem sync [--remote URL]`: keeps the memory root `root` in the git repository at its
/// top (created on the first run), with `remote` as `origin` when given.
///
/// Steps, each reported through `progress`: init (first run: repository, `.gitignore`
/// [`MEMORY_GITIGNORE`], `.gitattributes` and the driver through [`setup`] with `program`);
/// take every memory directory's locks (sorted order) so no write is half on disk; stage,
/// refuse a file that holds a credential, commit; fetch; rebase onto the remote branch
/// (`MEMORY.md` through the driver); release the locks; push. A conflict stops the rebase and
/// leaves it for the user ([`GitError::Conflict`]).
///
/// Every git command runs in `root` with `root/.git` as its repository, so nothing outside
/// the memory root is ever staged or pushed, even when the root lies inside another work tree.
pub fn sync(
    root: &Path,
    remote: Option<&str>,
    program: &str,
    progress: &mut dyn FnMut(&str),
) -> Result<SyncOutcome, GitError> {
    let mut outcome = SyncOutcome::default();
    std::fs::create_dir_all(root).map_err(io("creating", root))?;
    let git_dir = root.join(".git");
    let gd = format!("--git-dir={}", git_dir.display());
    let wt = format!("--work-tree={}", root.display());
    let g = |args: &[&str]| -> Vec<String> {
        [gd.as_str(), wt.as_str()]
            .iter()
            .chain(args)
            .map(|s| (*s).to_owned())
            .collect()
    };
    let run = |args: &[&str]| -> Result<String, GitError> {
        let all = g(args);
        let refs: Vec<&str> = all.iter().map(String::as_str).collect();
        git_ok(root, &refs)
    };
    let run_raw = |args: &[&str]| -> Result<Output, GitError> {
        let all = g(args);
        let refs: Vec<&str> = all.iter().map(String::as_str).collect();
        git_in(root, &refs)
    };

    if !git_dir.exists() {
        progress(&format!("init: git repository in {}", root.display()));
        git_ok(root, &["init", "--quiet", "--initial-branch=main", "."])?;
        outcome.initialized = true;
    }
    if rebase_in_progress(root) {
        return Err(GitError::RebaseInProgress {
            root: root.to_path_buf(),
            files: conflicted_files(root),
        });
    }
    let ignore = root.join(".gitignore");
    if std::fs::read_to_string(&ignore).ok().as_deref() != Some(MEMORY_GITIGNORE) {
        write_file(&ignore, MEMORY_GITIGNORE)?;
    }
    let set = setup(root, program, &[SYNC_PATTERN])?;
    if set.config_changed || !set.attributes_added.is_empty() {
        progress(&format!("merge driver: {}", set.driver));
    }

    let url = match remote {
        Some(url) => {
            let has_origin = run_raw(&["remote", "get-url", "origin"])?.status.success();
            if has_origin {
                run(&["remote", "set-url", "origin", url])?;
            } else {
                run(&["remote", "add", "origin", url])?;
            }
            url.to_owned()
        }
        None => run(&["remote", "get-url", "origin"])
            .map_err(|_| GitError::NoRemote(root.to_path_buf()))?,
    };
    let branch = run(&["symbolic-ref", "--short", "HEAD"])?;
    // Commits need an identity; a machine without one still syncs, as `pimem`.
    let has_identity = run(&["config", "user.email"]).is_ok_and(|s| !s.is_empty());
    let identity: Vec<&str> = if has_identity {
        Vec::new()
    } else {
        vec!["-c", "user.name=pimem", "-c", "user.email=pimem@localhost"]
    };

    let holds = hold_all(root)?;
    progress(&format!(
        "locked {}",
        plural(holds.len(), "memory directory", "memory directories")
    ));
    run(&["add", "--all", "."])?;
    let staged = run(&["diff", "--cached", "--name-only", "--diff-filter=AM"])?;
    for rel in staged.lines() {
        let text = std::fs::read_to_string(root.join(rel)).unwrap_or_default();
        if let Some(kind) = memory_core::secrets::find_secret(&text) {
            run(&["reset", "--quiet"])?;
            return Err(GitError::Secret {
                path: rel.to_owned(),
                kind: kind.0,
            });
        }
    }
    let changed = run(&["diff", "--cached", "--name-only"])?;
    outcome.committed = changed.lines().count();
    if outcome.committed > 0 {
        let host = memory_core::lock_info::hostname();
        let message = format!("pimem sync from {host}: {} files", outcome.committed);
        let mut args = identity.clone();
        args.extend(["commit", "--quiet", "--no-verify", "-m", &message]);
        run(&args)?;
        progress(&format!(
            "committed {}",
            plural(outcome.committed, "changed file", "changed files")
        ));
    } else {
        progress("nothing to commit");
    }

    let fetch = run_raw(&["fetch", "--quiet", "origin"])?;
    if !fetch.status.success() {
        return Err(GitError::Remote {
            stage: "fetch",
            remote: url,
            stderr: String::from_utf8_lossy(&fetch.stderr).trim().to_owned(),
        });
    }
    let upstream = format!("refs/remotes/origin/{branch}");
    let has_upstream = run_raw(&["rev-parse", "--verify", "--quiet", &upstream])?
        .status
        .success();
    let has_head = run_raw(&["rev-parse", "--verify", "--quiet", "HEAD"])?
        .status
        .success();
    if has_upstream {
        let behind = run(&["rev-list", "--count", &format!("HEAD..{upstream}")]).ok();
        let behind = if has_head { behind } else { Some("1".into()) };
        if behind.as_deref() != Some("0") {
            progress(&format!("pull: rebasing onto origin/{branch}"));
            let rebase = if has_head {
                let mut args = identity.clone();
                args.extend(["rebase", "--quiet", &upstream]);
                run_raw(&args)?
            } else {
                run_raw(&["reset", "--quiet", "--hard", &upstream])?
            };
            if !rebase.status.success() {
                let files = conflicted_files(root);
                drop(holds);
                return Err(GitError::Conflict {
                    root: root.to_path_buf(),
                    files,
                });
            }
            outcome.pulled = true;
            make_private(root);
        }
    }
    drop(holds);

    if run_raw(&["rev-parse", "--verify", "--quiet", "HEAD"])?
        .status
        .success()
    {
        let ahead = if has_upstream {
            run(&["rev-list", "--count", &format!("{upstream}..HEAD")])?
        } else {
            "1".into()
        };
        if ahead != "0" {
            let push = run_raw(&[
                "push",
                "--quiet",
                "origin",
                &format!("HEAD:refs/heads/{branch}"),
            ])?;
            if !push.status.success() {
                return Err(GitError::Remote {
                    stage: "push",
                    remote: url,
                    stderr: String::from_utf8_lossy(&push.stderr).trim().to_owned(),
                });
            }
            outcome.pushed = true;
            progress(&format!("pushed to origin/{branch}"));
        } else {
            progress("up to date with the remote");
        }
    }
    Ok(outcome)
}

/// What [`scan_dir`] found in one memory directory.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DirFindings {
    /// Memory files (`*.md`) holding git conflict markers.
    pub conflicted: Vec<String>,
    /// Entry files whose index line's name or description differs from their frontmatter.
    pub stale: Vec<String>,
    /// Entry files without an index line.
    pub unlisted: Vec<String>,
    /// Index lines whose entry file is missing.
    pub dangling: Vec<String>,
}

impl DirFindings {
    /// Nothing found.
    pub fn is_clean(&self) -> bool {
        self.conflicted.is_empty()
            && self.stale.is_empty()
            && self.unlisted.is_empty()
            && self.dangling.is_empty()
    }
}

/// Whether `text` holds a git conflict marker line (`<<<<<<< ` or `>>>>>>> `; a bare
/// `=======` is also a Markdown heading underline and is not counted).
pub fn has_conflict_markers(text: &str) -> bool {
    text.lines()
        .any(|l| l.starts_with("<<<<<<< ") || l.starts_with(">>>>>>> ") || l == "<<<<<<<")
}

/// Reads one memory directory (never writes): conflict markers, and whether `MEMORY.md`
/// agrees with the entry files after a merge.
pub fn scan_dir(dir: &Path) -> DirFindings {
    let mut found = DirFindings::default();
    let index = std::fs::read_to_string(dir.join(INDEX_FILE_NAME)).unwrap_or_default();
    if has_conflict_markers(&index) {
        found.conflicted.push(INDEX_FILE_NAME.to_owned());
    }
    let lines = parse_index(&index);
    let mut files = BTreeSet::new();
    let Ok(rd) = std::fs::read_dir(dir) else {
        return found;
    };
    let mut names: Vec<String> = rd
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| is_entry_candidate(n))
        .collect();
    names.sort();
    for name in names {
        let Ok(text) = std::fs::read_to_string(dir.join(&name)) else {
            continue;
        };
        if has_conflict_markers(&text) {
            found.conflicted.push(name.clone());
            files.insert(name);
            continue;
        }
        let Some(entry) = parse_entry(&text) else {
            continue;
        };
        match lines.entries.iter().find(|l| l.line.file == name) {
            None => found.unlisted.push(name.clone()),
            Some(l)
                if l.line.name != entry.meta.name
                    || l.line.description != entry.meta.description =>
            {
                found.stale.push(name.clone());
            }
            Some(_) => {}
        }
        files.insert(name);
    }
    for l in &lines.entries {
        if !files.contains(&l.line.file) {
            found.dangling.push(l.line.file.clone());
        }
    }
    found
}

/// The doctor's `git.merge` check over the given scope directories (`(label, dir)`; missing
/// directories are skipped) and the memory root's sync state.
pub fn doctor_check(dirs: &[(&str, PathBuf)], memory_root: &Path) -> Check {
    let mut failures = Vec::new();
    let mut warnings = Vec::new();
    if rebase_in_progress(memory_root) {
        failures.push(format!(
            "a `pimem sync` stopped on a conflict in {}",
            memory_root.display()
        ));
    }
    let mut scanned = 0;
    for (label, dir) in dirs {
        if !dir.is_dir() {
            continue;
        }
        scanned += 1;
        let f = scan_dir(dir);
        if !f.conflicted.is_empty() {
            failures.push(format!(
                "{label}: conflict markers in {}",
                f.conflicted.join(", ")
            ));
        }
        if !f.stale.is_empty() {
            warnings.push(format!(
                "{label}: index lines differ from the entry files {}",
                f.stale.join(", ")
            ));
        }
        if *label != "project" && !(f.unlisted.is_empty() && f.dangling.is_empty()) {
            warnings.push(format!(
                "{label}: index and files disagree (unlisted: {}; dangling: {})",
                f.unlisted.join(", "),
                f.dangling.join(", ")
            ));
        }
    }
    if !failures.is_empty() {
        failures.extend(warnings);
        return Check {
            id: "git.merge",
            state: State::Failure,
            reason: failures.join("; "),
            fix: Some(
                "edit each file to keep what you want and remove the <<<<<<< ======= >>>>>>> lines, then `git add` it (and `git rebase --continue` for a stopped sync)".into(),
            ),
        };
    }
    if !warnings.is_empty() {
        return Check {
            id: "git.merge",
            state: State::Warning,
            reason: warnings.join("; "),
            fix: Some(
                "the entry files are the truth: edit each index line to the entry's name and description, or rebuild that directory's index (`pimem rebuild-index` for the project)".into(),
            ),
        };
    }
    Check {
        id: "git.merge",
        state: State::Ok,
        reason: format!(
            "no merge conflicts in {}",
            plural(scanned, "memory directory", "memory directories")
        ),
        fix: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn programs_are_quoted_for_the_shell() {
        assert_eq!(shell_quote("/usr/local/bin/pimem"), "/usr/local/bin/pimem");
        assert_eq!(shell_quote("pimem"), "pimem");
        assert_eq!(shell_quote("/opt/my tools/pimem"), "'/opt/my tools/pimem'");
        assert_eq!(shell_quote("/it's/pimem"), r"'/it'\''s/pimem'");
        assert_eq!(shell_quote("$(rm -rf ~)"), "'$(rm -rf ~)'");
        assert_eq!(shell_quote(""), "''");
    }

    #[test]
    fn conflict_markers_but_not_setext_underlines() {
        assert!(has_conflict_markers(
            "a\n<<<<<<< HEAD\nx\n=======\ny\n>>>>>>> b\n"
        ));
        assert!(!has_conflict_markers(
            "Title\n=======\n\nbody <<<<<<< inline\n"
        ));
    }
}
