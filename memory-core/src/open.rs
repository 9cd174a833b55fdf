//! Opening the store of the project a working directory belongs to.

use std::path::{Path, PathBuf};

use camino::Utf8PathBuf;

use memory_keys::{Platform, ProjectDir, expand_memory_dir, resolve};

use crate::config::Config;
use crate::store::{Store, StoreOptions};

/// Why a project's store could not be opened.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OpenError {
    /// The home directory is unknown (no `HOME`), so `~` cannot be expanded.
    #[error("cannot expand \"~\": the HOME environment variable is not set")]
    NoHome,
    /// Project identity resolution failed (the derived directory escapes the memory root).
    #[error(transparent)]
    Keys(#[from] memory_keys::KeysError),
    /// The memory directory's path is not UTF-8 (the home directory or `--cwd` is not);
    /// pi's paths are JavaScript strings, so such a directory cannot be shared with it.
    #[error("{} is not a UTF-8 path", path.display())]
    NotUtf8 {
        /// The path as derived.
        path: PathBuf,
    },
}

/// An opened project: where its memory lives and the store over it.
#[derive(Debug)]
pub struct Project {
    /// The memory root (`memoryDir`, expanded).
    pub memory_root: PathBuf,
    /// Kind, key, directory name and path of the project directory.
    pub dir: ProjectDir,
    /// The store over `dir.path`.
    pub store: Store,
}

impl Project {
    /// The same project with every write checking `switch` (PA-15).
    pub fn with_switch(self, switch: crate::switch::Switch) -> Self {
        let opts = StoreOptions {
            switch: Some(switch),
            ..self.store.options().clone()
        };
        Project {
            store: Store::new(self.store.dir().to_owned(), opts),
            ..self
        }
    }
}

/// Why the memory root cannot be used right now (PA-49): the category a person is told, and
/// the OS error. Checked at every use, never cached, so fixing the cause is enough.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RootProblem {
    /// Permissions, or the root (or a parent) is not a directory.
    #[error("{}", crate::messages::root_inaccessible(path, source))]
    Inaccessible {
        /// The memory root or project directory.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// The path cannot be resolved (a symlink loop, a name too long).
    #[error("{}", crate::messages::root_unresolvable(path, source))]
    PathResolution {
        /// The memory root or project directory.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
}

impl RootProblem {
    /// The category's name, as a person is told it.
    pub fn category(&self) -> &'static str {
        match self {
            RootProblem::Inaccessible { .. } => crate::messages::CATEGORY_INACCESSIBLE,
            RootProblem::PathResolution { .. } => crate::messages::CATEGORY_PATH_RESOLUTION,
        }
    }
}

/// Checks that `dir` (the memory root or a project directory) can be used: missing is fine
/// (it is created on the first write), anything else must be a searchable, readable directory.
/// Read-only; a few `stat`s and one `access`-like directory read.
pub fn check_dir_usable(dir: &Path) -> Result<(), RootProblem> {
    let classify = |source: std::io::Error| {
        let resolution = matches!(
            source.raw_os_error(),
            Some(e) if e == rustix::io::Errno::LOOP.raw_os_error()
                || e == rustix::io::Errno::NAMETOOLONG.raw_os_error()
        );
        if resolution {
            RootProblem::PathResolution {
                path: dir.to_path_buf(),
                source,
            }
        } else {
            RootProblem::Inaccessible {
                path: dir.to_path_buf(),
                source,
            }
        }
    };
    match std::fs::metadata(dir) {
        Ok(m) if m.is_dir() => {}
        Ok(_) => {
            return Err(RootProblem::Inaccessible {
                path: dir.to_path_buf(),
                source: std::io::Error::from_raw_os_error(rustix::io::Errno::NOTDIR.raw_os_error()),
            });
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            // Missing: every existing ancestor must still be usable (a loop above is not).
            return match dir.parent() {
                Some(parent) if parent != dir && !parent.as_os_str().is_empty() => {
                    check_dir_usable(parent)
                }
                _ => Ok(()),
            };
        }
        Err(e) => return Err(classify(e)),
    }
    std::fs::read_dir(dir).map(|_| ()).map_err(classify)
}

/// The user's home directory from `HOME`.
#[allow(clippy::disallowed_methods)] // memory-core owns HOME
pub fn home_dir() -> Option<PathBuf> {
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
}

/// pi's agent directory: `PI_CODING_AGENT_DIR`, else `~/.pi/agent`.
#[allow(clippy::disallowed_methods)] // and pi's agent directory
pub fn default_agent_dir() -> Option<PathBuf> {
    match std::env::var_os("PI_CODING_AGENT_DIR").filter(|d| !d.is_empty()) {
        Some(d) => Some(PathBuf::from(d)),
        None => home_dir().map(|h| h.join(".pi").join("agent")),
    }
}

/// A directory setting as written in `memory.json` (`memoryDir`, `sessionDir`): `~` and
/// `~/…` expand to the home directory, a relative path is resolved against `base`, the
/// result lexically normalised (memory-keys' rules, PM-01).
///
/// # Errors
/// [`OpenError::NoHome`] for a `~` path without a home directory, [`OpenError::NotUtf8`] when
/// the result is not a UTF-8 path.
pub fn expand_dir(raw: &str, base: &Path) -> Result<Utf8PathBuf, OpenError> {
    let path = expand_with(raw, base, home_dir().as_deref())?;
    Utf8PathBuf::from_path_buf(path).map_err(|path| OpenError::NotUtf8 { path })
}

/// [`expand_dir`] with the home directory given (`None`: unknown).
fn expand_with(raw: &str, base: &Path, home: Option<&Path>) -> Result<PathBuf, OpenError> {
    let needs_home = raw == "~" || raw.starts_with("~/");
    let home = match (home, needs_home) {
        (Some(h), _) => h,
        (None, true) => return Err(OpenError::NoHome),
        (None, false) => Path::new("/"),
    };
    Ok(expand_memory_dir(raw, home, base, Platform::current()))
}

/// Resolves `cwd` to its project memory directory under `config.memory_dir` (or
/// `memory_dir_override`) and opens the store there. Nothing is created on disk.
pub fn open_project(
    config: &Config,
    cwd: &Path,
    memory_dir_override: Option<&str>,
    home: Option<&Path>,
) -> Result<Project, OpenError> {
    let raw = memory_dir_override.unwrap_or(&config.memory_dir);
    let home = match home {
        Some(h) => Some(h.to_path_buf()),
        None => home_dir(),
    };
    let memory_root = expand_with(raw, cwd, home.as_deref())?;
    let dir = resolve(cwd, &memory_root)?;
    let store_dir =
        Utf8PathBuf::from_path_buf(dir.path.clone()).map_err(|path| OpenError::NotUtf8 { path })?;
    let store = Store::new(store_dir, StoreOptions::from(config));
    Ok(Project {
        memory_root,
        dir,
        store,
    })
}
