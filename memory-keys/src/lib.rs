//! Project identity: which memory directory belongs to a working directory.
//!
//! pi-memory 2.5 keeps one memory directory per project under `<memoryDir>/git/<name>` (a
//! repository with a usable remote) or `<memoryDir>/local/<name>` (anything else). This crate
//! reproduces that mapping byte for byte, in three pure steps and one I/O step:
//!
//! * [`normalize_remote_url`]: remote URL -> key such as `github.com/owner/repo` (WHATWG URL
//!   rules for scheme URLs via the `url` crate, which follows the same standard as Node's
//!   `URL`; scp-style paths kept as written; hosts lowercased and IDN -> punycode);
//! * [`dir_name`]: key -> one safe directory name (`__`-joined segments, `_xx` escapes,
//!   120-byte limit with a sha256 suffix, Windows device-name and trailing-dot rules);
//! * [`project_dir`]: root + identity -> [`ProjectDir`], refusing any result that is not
//!   strictly inside the root;
//! * [`identify`]: cwd -> [`ProjectIdentity`], the only step that touches the disk.
//!
//! The central type is [`ProjectDir`], returned by [`resolve`].
//!
//! # Key decisions
//! * **Native git reading.** The original runs `git rev-parse --show-toplevel` and
//!   `git config --get-regexp '^remote\..*\.url$'`. We read the same files git reads (the
//!   `.git` directory or file, `commondir`, system/global/repository/worktree config) with a
//!   parser that follows git's own, which is far faster than two process spawns. Whenever
//!   the native reader cannot be sure (discovery-related environment variables, foreign
//!   ownership, `core.worktree`, unknown extensions, invalid files, includes that define
//!   remotes, non-Unix platforms) it runs git exactly like the original
//!   ([`identify_via_git`]), with the original's 3 s timeout; git failures degrade to
//!   `local`. [`identify_with`] reports which path was taken.
//! * **Platform as a value.** Every naming and path rule takes a [`Platform`], so the Windows
//!   rules (backslash separators, device names, case-insensitive containment, drive-letter
//!   remotes) are unit-tested on Linux; lexical path arithmetic follows Node's `path.posix` /
//!   `path.win32` instead of the host's `std::path`.
//! * **Grapheme truncation** (VECTORS §Z1): long names are cut at a grapheme-cluster
//!   boundary (the original's spec and tests), not a code-point boundary (its README).
//! * **Sort order**: remotes other than `origin` are ordered by UTF-16 code units, the order
//!   of JavaScript's default `sort()`.
//!
//! # Example
//! ```
//! use std::path::Path;
//! use memory_keys::{dir_name, normalize_remote_url, project_dir, Platform, ProjectIdentity, ProjectKind};
//!
//! let key = normalize_remote_url("git@github.com:yandy/pi-packages.git", Platform::Posix).unwrap();
//! assert_eq!(key, "github.com/yandy/pi-packages");
//! assert_eq!(dir_name(&key, Platform::Posix), "github.com__yandy__pi-packages");
//!
//! let identity = ProjectIdentity { kind: ProjectKind::Git, key };
//! let dir = project_dir(Path::new("/home/u/.pi/memory"), &identity, Platform::Posix).unwrap();
//! assert_eq!(dir.path, Path::new("/home/u/.pi/memory/git/github.com__yandy__pi-packages"));
//! ```
//!
//! # Limitations
//! * Native reading is Unix-only; on Windows git is always run (ownership checks there need
//!   Windows security APIs).
//! * The system config is read from `/etc/gitconfig` (or `GIT_CONFIG_SYSTEM`); a git built
//!   with another prefix (Homebrew, Xcode) reads its own file, which is only relevant if it
//!   defines `remote.*.url` — practically never.
//! * The git fallback reads `git config -z`, so a remote name with spaces or a URL with a
//!   newline is read exactly, where the original's line-based reading may differ.
//! * `includeIf` conditions are not evaluated; an included file that defines remote URLs
//!   makes the reader run git instead.
//! * Windows `path.resolve` of a drive-relative path on another drive uses that drive's root
//!   (Node would consult the per-drive `=X:` variable).
//! * `dir_name` output is at most 120 bytes on POSIX but up to 123 on Windows (the trailing
//!   `.`/space escape and device prefix are applied after truncation, as in the original).
#![forbid(unsafe_code)]
#![cfg_attr(test, allow(clippy::disallowed_methods))]

mod env;
mod gitcmd;
mod gitconfig;
mod identity;
pub mod layout;
mod name;
mod native;
mod nodepath;
mod project;
mod remote;
mod scope_dirs;

use std::path::PathBuf;

pub use env::GitEnv;
pub use identity::{
    Identification, ProjectIdentity, Source, identify, identify_via_git, identify_with,
    select_remote,
};
pub use name::{KEPT_BYTES, MAX_NAME_BYTES, dir_name, is_reserved_windows_name, windows_safe_name};
pub use nodepath::expand_memory_dir;
pub use project::{ProjectDir, is_strictly_inside, project_dir, resolve};
pub use remote::normalize_remote_url;
pub use scope_dirs::{TEAM_DIR, USER_DIR_NAME, repository_root, team_dir, user_dir};

/// Which platform's naming and path rules apply.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Platform {
    /// Linux, macOS and other Unix: `/` separates, names are case-sensitive.
    Posix,
    /// Windows: `/` and `\` separate, device names are reserved, paths compare
    /// case-insensitively.
    Windows,
}

impl Platform {
    /// The platform this program runs on.
    pub const fn current() -> Self {
        if cfg!(windows) {
            Self::Windows
        } else {
            Self::Posix
        }
    }
}

/// The two fixed second-level directories under the memory root (PM-02).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ProjectKind {
    /// A repository with a usable remote: shared by all clones and worktrees.
    Git,
    /// Anything else: keyed by an absolute path.
    Local,
}

impl ProjectKind {
    /// `"git"` or `"local"`, the directory name.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Git => "git",
            Self::Local => "local",
        }
    }
}

impl std::fmt::Display for ProjectKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Errors of [`project_dir`] and [`resolve`].
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum KeysError {
    /// The joined directory is not strictly inside the memory root (PM-11).
    #[error(
        "project memory directory escapes memoryDir: memoryDir={}, kind={kind}, name={name:?}",
        memory_dir.display()
    )]
    Escapes {
        /// The configured memory root.
        memory_dir: PathBuf,
        /// `git` or `local`.
        kind: ProjectKind,
        /// The derived directory name.
        name: String,
    },
    /// A relative memory root could not be resolved because the current directory is
    /// unavailable.
    #[error("cannot resolve relative memoryDir {}: current directory unavailable: {source}", memory_dir.display())]
    CurrentDir {
        /// The configured memory root.
        memory_dir: PathBuf,
        /// Why the current directory could not be read.
        source: std::io::Error,
    },
}

#[cfg(all(test, unix))]
mod git_baseline_tests;
