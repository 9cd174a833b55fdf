//! `--from pi-auto-memory`: a pi-auto-memory project directory into this project.
//!
//! pi-auto-memory keeps one directory per project, `<agentDir>/memory/<project id>/`
//! (PA-05): a `MEMORY.md` index plus topic files, which may sit in subdirectories. Without
//! `--dir`, [`locate`] finds this project's directory by pi-auto-memory's identity rule
//! (PA-06..PA-09, docs/compat/features.md "pi-auto-memory's project directory"):
//!
//! * inside a git repository, `git-` + sha256 of the realpath of
//!   `git rev-parse --path-format=absolute --git-common-dir` (a repository and its worktrees
//!   share it);
//! * elsewhere, `cwd-` + sha256 of the realpath of the working directory (a symlinked alias
//!   shares it, a parent or child directory does not);
//! * a bare repository, or a git that fails for another reason than "not a git repository",
//!   is an error naming it (PA-09: never a quiet fallback to the cwd identity).
//!
//! Decision: the spec does not pin the hash's length or encoding (VECTORS Z15), so the
//! directory is `<prefix><64 lowercase hex>` when it exists, else the one
//! `<prefix><hex>` whose hex (8 characters or more) is a prefix of the full digest; several
//! such directories are an error that lists them.
//!
//! Mapping: each topic file (`*.md` other than the index, nested ones included; no
//! dotfiles, no symlinks) is one memory. Its name is the frontmatter's `name`, else the
//! title of its line in `MEMORY.md`, else its path without `.md` (`deploy/staging`); its
//! description is the frontmatter's, else the text after its link in `MEMORY.md`, else the
//! store derives one (PM-34). What `MEMORY.md` holds besides its topic lines becomes one
//! memory, like the `dir` source ([`super::dir::INDEX_NOTES_NAME`]).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use sha2::{Digest, Sha256};

use super::dir::{index_notes_candidate, parse_index_link, topic_candidate};
use super::{ImportError, Problem, Scan, Source};

/// How deep nested topic directories are read.
const MAX_DEPTH: usize = 8;

/// The shortest hash accepted as a truncated project id.
const MIN_HASH_HEX: usize = 8;

/// The `pi-auto-memory` source.
#[derive(Debug, Clone, Copy, Default)]
pub struct PiAutoMemory;

/// Which of pi-auto-memory's identities a project has (PA-06).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Identity {
    /// The realpath of the repository's common git directory (PA-07).
    Git(PathBuf),
    /// The realpath of the working directory (PA-08).
    Cwd(PathBuf),
}

impl Identity {
    /// The project id's prefix: `git-` or `cwd-`.
    pub fn prefix(&self) -> &'static str {
        match self {
            Identity::Git(_) => "git-",
            Identity::Cwd(_) => "cwd-",
        }
    }

    /// The path that is hashed.
    pub fn path(&self) -> &Path {
        match self {
            Identity::Git(p) | Identity::Cwd(p) => p,
        }
    }

    /// The full project id: the prefix and the 64 lowercase hex digits of sha256 of the
    /// path's UTF-8 text.
    pub fn project_id(&self) -> String {
        let digest = Sha256::digest(self.path().to_string_lossy().as_bytes());
        let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
        format!("{}{hex}", self.prefix())
    }
}

/// The identity pi-auto-memory gives the project started in `cwd` (PA-06..PA-09).
///
/// # Errors
/// The working directory cannot be resolved, git cannot be run, or the repository is bare
/// or abnormal.
pub fn identity(cwd: &Path) -> Result<Identity, ImportError> {
    let real_cwd = std::fs::canonicalize(cwd).map_err(|e| ImportError::io(cwd, e))?;
    let out = Command::new("git")
        .args([
            "rev-parse",
            "--path-format=absolute",
            "--is-bare-repository",
            "--git-common-dir",
        ])
        .current_dir(&real_cwd)
        .output()
        .map_err(|e| {
            ImportError::bad(
                cwd,
                format!("git cannot be run to find the project's identity ({e}); pass --dir"),
            )
        })?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        if stderr.contains("not a git repository") {
            return Ok(Identity::Cwd(real_cwd));
        }
        return Err(ImportError::bad(
            cwd,
            format!(
                "git rev-parse failed ({}); pi-auto-memory pauses memory here (PA-09): pass --dir",
                stderr.trim()
            ),
        ));
    }
    let mut lines = stdout.lines();
    if lines.next() == Some("true") {
        return Err(ImportError::bad(
            cwd,
            "a bare git repository has no pi-auto-memory directory (PA-09): pass --dir",
        ));
    }
    let Some(common) = lines.next().filter(|l| !l.is_empty()) else {
        return Err(ImportError::bad(
            cwd,
            "git rev-parse printed no common directory (PA-09): pass --dir",
        ));
    };
    let common = Path::new(common);
    let real = std::fs::canonicalize(common).map_err(|e| ImportError::io(common, e))?;
    Ok(Identity::Git(real))
}

/// This project's pi-auto-memory directory under `<agent_dir>/memory/`.
///
/// # Errors
/// [`identity`]'s errors; no directory (or several truncated ones) matches the id.
pub fn locate(agent_dir: &Path, cwd: &Path) -> Result<PathBuf, ImportError> {
    let id = identity(cwd)?;
    let root = agent_dir.join("memory");
    let full = id.project_id();
    let exact = root.join(&full);
    if exact.is_dir() {
        return Ok(exact);
    }
    let mut found = Vec::new();
    if let Ok(entries) = std::fs::read_dir(&root) {
        for entry in entries.flatten() {
            let Ok(name) = entry.file_name().into_string() else {
                continue;
            };
            let Some(hex) = name.strip_prefix(id.prefix()) else {
                continue;
            };
            let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
            if is_dir
                && hex.len() >= MIN_HASH_HEX
                && hex.bytes().all(|b| b.is_ascii_hexdigit())
                && full[id.prefix().len()..].starts_with(&hex.to_ascii_lowercase())
            {
                found.push(entry.path());
            }
        }
    }
    found.sort();
    match found.len() {
        1 => Ok(found.remove(0)),
        0 => Err(ImportError::bad(
            &exact,
            format!(
                "no pi-auto-memory directory for this project (identity {}); pass --dir",
                id.path().display()
            ),
        )),
        _ => {
            let list: Vec<String> = found.iter().map(|p| p.display().to_string()).collect();
            Err(ImportError::bad(
                &root,
                format!(
                    "several directories match this project's id; import one with --dir:\n  {}",
                    list.join("\n  ")
                ),
            ))
        }
    }
}

impl Source for PiAutoMemory {
    fn scan(&self, path: &Path) -> Result<Scan, ImportError> {
        if !path.is_dir() {
            return Err(ImportError::bad(path, "not a directory"));
        }
        let (files, mut problems) = topic_files(path)?;
        let mut links = HashMap::new();
        let mut candidates = Vec::new();
        let index_path = path.join(memory_core::INDEX_FILE);
        if index_path.is_file() {
            match super::read_text(&index_path) {
                Ok(text) => {
                    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
                    let text = match text.trim_start().split_once('\n') {
                        Some((first, rest)) if first.starts_with("# ") => rest,
                        _ => text,
                    };
                    let mut notes = String::new();
                    for line in text.split_inclusive('\n') {
                        match parse_index_link(line) {
                            Some(mut link) => {
                                link.file = link
                                    .file
                                    .strip_prefix("./")
                                    .unwrap_or(&link.file)
                                    .to_owned();
                                if files.contains(&link.file) {
                                    links.insert(link.file.clone(), link);
                                } else {
                                    notes.push_str(line);
                                }
                            }
                            None => notes.push_str(line),
                        }
                    }
                    candidates.extend(index_notes_candidate(notes));
                }
                Err(reason) => problems.push(Problem {
                    origin: memory_core::INDEX_FILE.to_owned(),
                    reason,
                }),
            }
        }
        for file in &files {
            match topic_candidate(path, file, links.get(file)) {
                Ok(c) => candidates.push(c),
                Err(p) => problems.push(p),
            }
        }
        candidates.sort_by(|a, b| a.origin.cmp(&b.origin));
        Ok(Scan {
            root: path.to_path_buf(),
            candidates,
            problems,
        })
    }
}

/// Every topic file below `dir` as a `/`-separated relative path, sorted: regular `*.md`
/// files (not the top-level index), no dotfiles or dot-directories, symlinks never
/// followed, at most [`MAX_DEPTH`] levels.
fn topic_files(dir: &Path) -> Result<(Vec<String>, Vec<Problem>), ImportError> {
    let mut files = Vec::new();
    let mut problems = Vec::new();
    let mut stack = vec![(dir.to_path_buf(), String::new(), 0usize)];
    while let Some((d, prefix, depth)) = stack.pop() {
        let entries = std::fs::read_dir(&d).map_err(|e| ImportError::io(&d, e))?;
        for entry in entries {
            let entry = entry.map_err(|e| ImportError::io(&d, e))?;
            let Ok(name) = entry.file_name().into_string() else {
                problems.push(Problem {
                    origin: format!("{prefix}{}", entry.file_name().to_string_lossy()),
                    reason: "the file name is not UTF-8".to_owned(),
                });
                continue;
            };
            if name.starts_with('.') {
                continue;
            }
            // `file_type` does not follow symlinks: a link is never read.
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            let rel = format!("{prefix}{name}");
            if kind.is_dir() {
                if depth + 1 < MAX_DEPTH {
                    stack.push((entry.path(), format!("{rel}/"), depth + 1));
                } else {
                    problems.push(Problem {
                        origin: rel,
                        reason: format!("nested deeper than {MAX_DEPTH} levels: not read"),
                    });
                }
            } else if kind.is_file() && name.ends_with(".md") && rel != memory_core::INDEX_FILE {
                files.push(rel);
            }
        }
    }
    files.sort();
    Ok((files, problems))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn project_id_is_the_prefix_and_the_full_sha256_hex() {
        let id = Identity::Cwd(PathBuf::from("/home/yandy/workspace/scratch"));
        // VECTORS §Legacy: sha256("/home/yandy/workspace/scratch")[:12] = 8ccae7f662b5.
        let full = id.project_id();
        assert!(full.starts_with("cwd-8ccae7f662b5"), "{full}");
        assert_eq!(full.len(), 4 + 64);
        assert!(
            Identity::Git(PathBuf::from("/r/.git"))
                .project_id()
                .starts_with("git-")
        );
    }
}
