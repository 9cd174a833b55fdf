//! Working directory -> project identity (PM-02, PM-03, PM-07, PM-12).

use std::cmp::Ordering;
use std::path::{Path, PathBuf};

use crate::env::GitEnv;
use crate::native::{self, Repo};
use crate::nodepath;
use crate::{Platform, ProjectKind, gitcmd, normalize_remote_url};
use memory_js::utf16_cmp;

/// Which memory a working directory belongs to: `git` + normalised remote, or `local` +
/// absolute path (repository root, or the cwd itself outside a work tree).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ProjectIdentity {
    /// `git` or `local`.
    pub kind: ProjectKind,
    /// `host/owner/repo` for git, an absolute path for local.
    pub key: String,
}

/// How an identity was obtained.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// Read from the file system without starting git.
    Native,
    /// The native reader could not be sure, so git was run; `reason` says why.
    Git {
        /// Why the native reader deferred.
        reason: String,
    },
}

/// An identity and how it was obtained.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identification {
    /// The identity.
    pub identity: ProjectIdentity,
    /// Native reading or git fallback.
    pub source: Source,
}

/// The identity of `cwd` (PM-07), reading git's files natively and running git only where
/// that cannot be sure. Never fails: every problem degrades to `local` like the original.
///
/// ```
/// let dir = tempfile::tempdir().unwrap();
/// let id = memory_keys::identify(dir.path());
/// assert_eq!(id.kind, memory_keys::ProjectKind::Local);
/// ```
pub fn identify(cwd: &Path) -> ProjectIdentity {
    identify_with(cwd, &GitEnv::from_process()).identity
}

/// [`identify`] in an explicit git environment, also reporting whether git had to run.
pub fn identify_with(cwd: &Path, env: &GitEnv) -> Identification {
    let cwd = absolute(cwd);
    let platform = Platform::current();
    let native = native::discover(&cwd, env).and_then(|repo| match repo {
        Repo::Outside | Repo::NoWorkTree => Ok(local(&cwd)),
        Repo::WorkTree(tree) => {
            let urls = native::remote_urls(&tree, env)?;
            let top = nodepath::path_bytes(&tree.toplevel);
            // Exactly what the original does with git's output: decode, trim, use as-is.
            let top = String::from_utf8_lossy(&top);
            let top = memory_js::js_trim(&top);
            if top.is_empty() {
                return Ok(local(&cwd));
            }
            Ok(from_remotes(urls, top, platform))
        }
    });
    match native {
        Ok(identity) => Identification {
            identity,
            source: Source::Native,
        },
        Err(native::Defer(reason)) => Identification {
            identity: identify_via_git(&cwd, env),
            source: Source::Git { reason },
        },
    }
}

/// The original's algorithm, always running git: `git rev-parse --show-toplevel` (failure ->
/// `local` + `resolve(cwd)`), then `git config --get-regexp '^remote\..*\.url$'` (first
/// usable remote -> `git`, else `local` + the toplevel). Each git call has a 3 s timeout.
/// This is the fallback of [`identify_with`] and the baseline it is tested against.
pub fn identify_via_git(cwd: &Path, env: &GitEnv) -> ProjectIdentity {
    let cwd = absolute(cwd);
    let Some(top) = gitcmd::toplevel(&cwd, env) else {
        return local(&cwd);
    };
    let urls = gitcmd::remote_urls(&cwd, env);
    from_remotes(urls, &top, Platform::current())
}

/// PM-03: `origin` first, then the other remotes in JavaScript's default sort order; each
/// remote contributes its first URL; the first URL that normalises wins.
pub fn select_remote(urls: &[(String, Option<String>)], platform: Platform) -> Option<String> {
    let mut first: Vec<(&str, &str)> = Vec::new();
    for (name, url) in urls {
        if !first.iter().any(|(n, _)| n == name) {
            first.push((name, url.as_deref().unwrap_or_default()));
        }
    }
    first.sort_by(|(a, _), (b, _)| match (*a == "origin", *b == "origin") {
        (true, true) => Ordering::Equal,
        (true, false) => Ordering::Less,
        (false, true) => Ordering::Greater,
        (false, false) => utf16_cmp(a, b),
    });
    first
        .iter()
        .find_map(|(_, url)| normalize_remote_url(url, platform))
}

fn from_remotes(
    urls: Vec<(String, Option<String>)>,
    top: &str,
    platform: Platform,
) -> ProjectIdentity {
    match select_remote(&urls, platform) {
        Some(key) => ProjectIdentity {
            kind: ProjectKind::Git,
            key,
        },
        None => ProjectIdentity {
            kind: ProjectKind::Local,
            key: top.to_owned(),
        },
    }
}

/// `local` + `resolve(cwd)`.
fn local(cwd: &Path) -> ProjectIdentity {
    ProjectIdentity {
        kind: ProjectKind::Local,
        key: String::from_utf8_lossy(&nodepath::path_bytes(cwd)).into_owned(),
    }
}

/// Node's `path.resolve(cwd)`: absolute against the process cwd, lexically normalised.
pub(crate) fn absolute(cwd: &Path) -> PathBuf {
    let platform = Platform::current();
    let bytes = nodepath::path_bytes(cwd);
    let base = if nodepath::is_absolute(&bytes, platform) {
        Vec::new()
    } else {
        std::env::current_dir()
            .map(|d| nodepath::path_bytes(&d).into_owned())
            .unwrap_or_default()
    };
    nodepath::path_from(nodepath::resolve(&base, &bytes, platform))
}
