//! Native repository discovery and remote reading: what `git rev-parse --show-toplevel` and
//! `git config --get-regexp '^remote\..*\.url$'` would answer, computed from the file system
//! without starting git.
//!
//! It follows git's `setup_git_directory_gently_1` walk (physical cwd upwards, `.git` file
//! or directory, bare directory, stop at a file-system boundary) and git's config sequence
//! (system, global, repository, worktree). Every situation it does not model exactly yields
//! [`Defer`], and the caller runs git instead: discovery-changing environment variables,
//! foreign ownership (`safe.directory`), `core.worktree`, `core.bare`, unknown repository
//! extensions, invalid `.git` files, unreadable or invalid config, and `include`/`includeIf`
//! files that define remote URLs.

use std::ffi::OsString;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use crate::env::GitEnv;
use crate::gitconfig::{self, Entry};

/// The native reader cannot be sure; the reason says why (shown in diagnostics).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Defer(pub String);

fn defer<T>(reason: impl Into<String>) -> Result<T, Defer> {
    Err(Defer(reason.into()))
}

fn io_defer<T>(what: &str, path: &Path, err: &io::Error) -> Result<T, Defer> {
    defer(format!("{what} {}: {err}", path.display()))
}

/// What `git rev-parse --show-toplevel` would conclude.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Repo {
    /// Not inside a repository (or the cwd does not exist): git fails.
    Outside,
    /// Inside a bare repository or a git directory: git fails ("must be run in a work tree").
    NoWorkTree,
    /// Inside a work tree.
    WorkTree(WorkTree),
}

/// A discovered work tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct WorkTree {
    /// The physical work tree root, as git prints it.
    pub toplevel: PathBuf,
    /// The per-worktree git directory (`.git`, or `.git/worktrees/<name>`).
    pub gitdir: PathBuf,
    /// Entries of the repository config (`<common dir>/config`), includes not followed.
    repo_config: Vec<Entry>,
    /// Path of the repository config.
    repo_config_path: PathBuf,
    /// Whether `extensions.worktreeConfig` adds `<gitdir>/config.worktree`.
    worktree_config: bool,
}

fn is_missing(err: &io::Error) -> bool {
    matches!(
        err.kind(),
        io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
    )
}

/// Finds the repository containing `cwd` (absolute).
#[cfg(unix)]
pub(crate) fn discover(cwd: &Path, env: &GitEnv) -> Result<Repo, Defer> {
    use std::os::unix::fs::MetadataExt;

    if let Some(name) = env.deferring_variable() {
        return defer(format!("{name} is set"));
    }
    let physical = match fs::canonicalize(cwd) {
        Ok(p) => p,
        // git cannot even start in a missing cwd; the original degrades to local.
        Err(e) if is_missing(&e) => return Ok(Repo::Outside),
        Err(e) => return io_defer("cannot resolve", cwd, &e),
    };
    let meta = match fs::metadata(&physical) {
        Ok(m) => m,
        Err(e) => return io_defer("cannot stat", &physical, &e),
    };
    if !meta.is_dir() {
        return Ok(Repo::Outside);
    }
    let device = meta.dev();
    for (depth, dir) in physical.ancestors().enumerate() {
        if depth > 0 {
            match fs::metadata(dir) {
                // git stops at a file-system boundary (GIT_DISCOVERY_ACROSS_FILESYSTEM unset).
                Ok(m) if m.dev() != device => return Ok(Repo::Outside),
                Ok(_) => {}
                Err(e) => return io_defer("cannot stat", dir, &e),
            }
        }
        let dot_git = dir.join(".git");
        match fs::metadata(&dot_git) {
            Ok(m) if m.is_file() => {
                let gitdir = read_gitfile(&dot_git)?;
                return work_tree(dir, Some(&dot_git), gitdir, env);
            }
            Ok(m) if m.is_dir() => {
                if is_git_directory(&dot_git)? {
                    return work_tree(dir, None, dot_git, env);
                }
                return defer(format!(
                    "{} is not a valid git directory",
                    dot_git.display()
                ));
            }
            Ok(_) => {
                return defer(format!(
                    "{} is neither file nor directory",
                    dot_git.display()
                ));
            }
            Err(e) if is_missing(&e) => {}
            Err(e) => return io_defer("cannot stat", &dot_git, &e),
        }
        if is_git_directory(dir)? {
            return bare(dir);
        }
    }
    Ok(Repo::Outside)
}

/// Native reading needs POSIX ownership and device numbers; elsewhere git is asked.
#[cfg(not(unix))]
pub(crate) fn discover(_cwd: &Path, _env: &GitEnv) -> Result<Repo, Defer> {
    defer("native repository discovery is implemented for Unix only")
}

/// A bare repository or a cwd inside a git directory: git has no work tree unless
/// `core.worktree` says otherwise.
fn bare(gitdir: &Path) -> Result<Repo, Defer> {
    let common = common_dir(gitdir)?;
    let (entries, _) = read_repo_config(&common)?;
    if entries.iter().any(|e| e.key == "core.worktree") {
        return defer("core.worktree is set");
    }
    Ok(Repo::NoWorkTree)
}

fn work_tree(
    toplevel: &Path,
    gitfile: Option<&Path>,
    gitdir: PathBuf,
    env: &GitEnv,
) -> Result<Repo, Defer> {
    check_ownership(env, gitfile, toplevel, &gitdir)?;
    let common = common_dir(&gitdir)?;
    let (repo_config, repo_config_path) = read_repo_config(&common)?;
    let worktree_config = check_repository_format(&repo_config)?;
    Ok(Repo::WorkTree(WorkTree {
        toplevel: toplevel.to_path_buf(),
        gitdir,
        repo_config,
        repo_config_path,
        worktree_config,
    }))
}

/// git refuses repositories owned by someone else unless `safe.directory` allows them; that
/// decision needs git's protected configuration, so any foreign owner defers to git.
#[cfg(unix)]
fn check_ownership(
    env: &GitEnv,
    gitfile: Option<&Path>,
    worktree: &Path,
    gitdir: &Path,
) -> Result<(), Defer> {
    use std::os::unix::fs::MetadataExt;

    let euid = rustix::process::geteuid().as_raw();
    if euid == 0 && env.get("SUDO_UID").is_some() {
        return defer("running as root under sudo (git compares ownership with SUDO_UID)");
    }
    for path in gitfile.into_iter().chain([worktree, gitdir]) {
        match fs::symlink_metadata(path) {
            Ok(m) if m.uid() == euid => {}
            Ok(_) => return defer(format!("{} is owned by another user", path.display())),
            Err(e) => return io_defer("cannot stat", path, &e),
        }
    }
    Ok(())
}

#[cfg(not(unix))]
fn check_ownership(_: &GitEnv, _: Option<&Path>, _: &Path, _: &Path) -> Result<(), Defer> {
    defer("ownership is only checked on Unix")
}

/// `core.repositoryformatversion` and `extensions.*` as git 2.47 accepts them; returns
/// whether `extensions.worktreeConfig` is on.
fn check_repository_format(entries: &[Entry]) -> Result<bool, Defer> {
    let last = |key: &str| entries.iter().rev().find(|e| e.key == key);
    let version = match last("core.repositoryformatversion") {
        None => 0,
        Some(e) => match e.value.as_deref().map(str::trim).map(str::parse::<i64>) {
            Some(Ok(v @ (0 | 1))) => v,
            _ => return defer("unsupported core.repositoryformatversion"),
        },
    };
    if let Some(e) = last("core.bare")
        && gitconfig::parse_bool(e.value.as_deref()) != Some(false)
    {
        return defer("core.bare is set on a repository found through its work tree");
    }
    if last("core.worktree").is_some() {
        return defer("core.worktree is set");
    }
    let mut worktree_config = false;
    for e in entries {
        let Some(ext) = e.key.strip_prefix("extensions.") else {
            continue;
        };
        match ext {
            "noop" | "preciousobjects" | "partialclone" => {}
            "worktreeconfig" => match gitconfig::parse_bool(e.value.as_deref()) {
                Some(b) => worktree_config = b,
                None => return defer("invalid extensions.worktreeConfig"),
            },
            "objectformat" | "compatobjectformat" | "refstorage" | "noop-v1" if version == 1 => {}
            other => return defer(format!("repository extension {other:?}")),
        }
    }
    Ok(worktree_config)
}

/// The target of a `.git` file (`gitdir: <path>`, relative to the file's directory).
fn read_gitfile(path: &Path) -> Result<PathBuf, Defer> {
    let data = match fs::read(path) {
        Ok(d) => d,
        Err(e) => return io_defer("cannot read", path, &e),
    };
    let mut text: &[u8] = &data;
    while let Some(rest) = text
        .strip_suffix(b"\n")
        .or_else(|| text.strip_suffix(b"\r"))
    {
        text = rest;
    }
    let Some(target) = text.strip_prefix(b"gitdir: ") else {
        return defer(format!("invalid gitfile format: {}", path.display()));
    };
    let target = crate::nodepath::path_from(target.to_vec());
    let base = path.parent().unwrap_or(Path::new("/"));
    let gitdir = base.join(target);
    if !is_git_directory(&gitdir)? {
        return defer(format!("not a git repository: {}", gitdir.display()));
    }
    // git continues with the real path of the target.
    match fs::canonicalize(&gitdir) {
        Ok(p) => Ok(p),
        Err(e) => io_defer("cannot resolve", &gitdir, &e),
    }
}

/// `<gitdir>/commondir` resolved, or the git directory itself.
fn common_dir(gitdir: &Path) -> Result<PathBuf, Defer> {
    let file = gitdir.join("commondir");
    match fs::read(&file) {
        Ok(data) => {
            let mut text: &[u8] = &data;
            while let Some(rest) = text
                .strip_suffix(b"\n")
                .or_else(|| text.strip_suffix(b"\r"))
            {
                text = rest;
            }
            let common = gitdir.join(crate::nodepath::path_from(text.to_vec()));
            match fs::canonicalize(&common) {
                Ok(p) => Ok(p),
                Err(e) => io_defer("cannot resolve commondir", &common, &e),
            }
        }
        Err(e) if is_missing(&e) => Ok(gitdir.to_path_buf()),
        Err(e) => io_defer("cannot read", &file, &e),
    }
}

/// git's `is_git_directory`: a valid `HEAD`, and `objects/` and `refs/` in the common dir.
fn is_git_directory(dir: &Path) -> Result<bool, Defer> {
    let head = dir.join("HEAD");
    match fs::symlink_metadata(&head) {
        Ok(_) => {}
        Err(e) if is_missing(&e) => return Ok(false),
        Err(e) => return io_defer("cannot stat", &head, &e),
    }
    let common = common_dir(dir)?;
    let is_dir = |p: PathBuf| fs::metadata(p).is_ok_and(|m| m.is_dir());
    if !is_dir(common.join("objects")) || !is_dir(common.join("refs")) {
        return Ok(false);
    }
    Ok(valid_head(&head))
}

/// git's `validate_headref`: a symlink into `refs/`, `ref: refs/...`, or an object id.
fn valid_head(head: &Path) -> bool {
    if let Ok(target) = fs::read_link(head)
        && target.starts_with("refs")
        && target.as_os_str().len() > 5
    {
        return true;
    }
    let Ok(data) = fs::read(head) else {
        return false;
    };
    let data = &data[..data.len().min(255)];
    if let Some(rest) = data.strip_prefix(b"ref:") {
        let rest = rest.trim_ascii_start();
        if rest.starts_with(b"refs/") {
            return true;
        }
    }
    let hex_prefix = data.iter().take_while(|b| b.is_ascii_hexdigit()).count();
    hex_prefix >= 40
}

fn read_repo_config(common: &Path) -> Result<(Vec<Entry>, PathBuf), Defer> {
    let path = common.join("config");
    let entries = read_file(&path, false)?;
    Ok((entries, path))
}

/// Parses one config file; a missing file is empty. `eacces_ok` skips unreadable files like
/// git does for the system and global files.
fn read_file(path: &Path, eacces_ok: bool) -> Result<Vec<Entry>, Defer> {
    match fs::read(path) {
        Ok(data) => match gitconfig::parse(&data) {
            Ok(entries) => Ok(entries),
            Err(e) => defer(format!("{e} in {}", path.display())),
        },
        Err(e) if is_missing(&e) => Ok(Vec::new()),
        Err(e) if eacces_ok && e.kind() == io::ErrorKind::PermissionDenied => Ok(Vec::new()),
        Err(e) => io_defer("cannot read", path, &e),
    }
}

/// Deepest include nesting git allows.
const MAX_INCLUDE_DEPTH: usize = 10;

/// The `remote.*.url` entries of one config file, checking its includes: an included file
/// that defines no remote URL cannot change the answer (whatever its condition), one that
/// does makes the reader defer to git, which evaluates `includeIf` conditions.
fn remote_urls_of(
    path: &Path,
    entries: &[Entry],
    env: &GitEnv,
    depth: usize,
    out: &mut Vec<(String, Option<String>)>,
) -> Result<(), Defer> {
    for entry in entries {
        if let Some(name) = entry.remote_url_name() {
            out.push((name.to_owned(), entry.value.clone()));
            continue;
        }
        let is_include = entry.key == "include.path"
            || entry
                .key
                .strip_prefix("includeif.")
                .and_then(|rest| rest.strip_suffix(".path"))
                .is_some_and(|cond| !cond.is_empty());
        if !is_include {
            continue;
        }
        if depth >= MAX_INCLUDE_DEPTH {
            return defer("include nesting too deep");
        }
        let Some(target) = entry.value.as_deref() else {
            return defer(format!("include without a path in {}", path.display()));
        };
        let included = include_path(path, target, env)?;
        let included_entries = read_file(&included, false)?;
        let mut nested = Vec::new();
        remote_urls_of(&included, &included_entries, env, depth + 1, &mut nested)?;
        if !nested.is_empty() {
            return defer(format!(
                "{} includes {} which defines remote URLs",
                path.display(),
                included.display()
            ));
        }
    }
    Ok(())
}

/// Where an include directive points: `~/` is `$HOME`, relative paths start at the
/// including file's directory.
fn include_path(config: &Path, target: &str, env: &GitEnv) -> Result<PathBuf, Defer> {
    if let Some(rest) = target.strip_prefix("~/") {
        let Some(home) = env.get("HOME") else {
            return defer("include path uses ~ but HOME is unset");
        };
        return Ok(Path::new(home).join(rest));
    }
    if target.starts_with('~') || target.starts_with("%(") {
        return defer(format!("include path {target:?} needs git's interpolation"));
    }
    let target = Path::new(target);
    if target.is_absolute() {
        return Ok(target.to_path_buf());
    }
    Ok(config.parent().unwrap_or(Path::new("/")).join(target))
}

/// The system and global configuration files, in git's reading order.
fn user_config_files(env: &GitEnv) -> Result<Vec<PathBuf>, Defer> {
    let mut files = Vec::new();
    let nosystem = match env.get("GIT_CONFIG_NOSYSTEM") {
        None => false,
        Some(v) => match gitconfig::parse_bool(Some(&v.to_string_lossy())) {
            Some(b) => b,
            None => return defer("invalid GIT_CONFIG_NOSYSTEM"),
        },
    };
    if !nosystem {
        files.push(
            env.get("GIT_CONFIG_SYSTEM")
                .map_or_else(|| PathBuf::from("/etc/gitconfig"), PathBuf::from),
        );
    }
    if let Some(global) = env.get("GIT_CONFIG_GLOBAL") {
        files.push(PathBuf::from(global));
    } else {
        let home = env.get("HOME");
        match env.get("XDG_CONFIG_HOME").filter(|x| !x.is_empty()) {
            Some(xdg) => files.push(Path::new(xdg).join("git").join("config")),
            None => {
                if let Some(home) = home {
                    files.push(concat(home, "/.config/git/config"));
                }
            }
        }
        if let Some(home) = home {
            files.push(concat(home, "/.gitconfig"));
        }
    }
    Ok(files)
}

/// `$HOME` + suffix as git builds it (string concatenation, so `HOME=""` gives `/...`).
fn concat(base: &std::ffi::OsStr, suffix: &str) -> PathBuf {
    let mut s = OsString::from(base);
    s.push(suffix);
    PathBuf::from(s)
}

/// Every `remote.<name>.url` value in git's order (system, global, repository, worktree),
/// as `git config --get-regexp '^remote\..*\.url$'` lists them.
pub(crate) fn remote_urls(
    tree: &WorkTree,
    env: &GitEnv,
) -> Result<Vec<(String, Option<String>)>, Defer> {
    let mut out = Vec::new();
    for file in user_config_files(env)? {
        let entries = read_file(&file, true)?;
        remote_urls_of(&file, &entries, env, 0, &mut out)?;
    }
    remote_urls_of(&tree.repo_config_path, &tree.repo_config, env, 0, &mut out)?;
    if tree.worktree_config {
        let file = tree.gitdir.join("config.worktree");
        let entries = read_file(&file, false)?;
        remote_urls_of(&file, &entries, env, 0, &mut out)?;
    }
    Ok(out)
}
