//! The environment variables that decide how git finds a repository and its configuration.

use std::ffi::{OsStr, OsString};
use std::path::Path;
use std::process::Command;

/// Variables that change repository discovery or add configuration in ways the native
/// reader does not model; when any is set, identity is resolved by running git.
pub(crate) const DEFER_TO_GIT: &[&str] = &[
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_COMMON_DIR",
    "GIT_CEILING_DIRECTORIES",
    "GIT_DISCOVERY_ACROSS_FILESYSTEM",
    "GIT_OBJECT_DIRECTORY",
    "GIT_CONFIG",
    "GIT_CONFIG_COUNT",
    "GIT_CONFIG_PARAMETERS",
    "GIT_TEST_ASSUME_DIFFERENT_OWNER",
];

/// Variables the native reader interprets itself.
const INTERPRETED: &[&str] = &[
    "HOME",
    "XDG_CONFIG_HOME",
    "GIT_CONFIG_GLOBAL",
    "GIT_CONFIG_SYSTEM",
    "GIT_CONFIG_NOSYSTEM",
    "SUDO_UID",
];

/// A snapshot of the git-relevant environment, used both by the native reader and for the
/// `git` processes of the fallback (so both always see the same configuration).
///
/// [`GitEnv::from_process`] is what [`identify`](crate::identify) uses. Tests and embedders
/// can build an isolated one with [`GitEnv::hermetic`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GitEnv {
    vars: Vec<(String, Option<OsString>)>,
}

impl GitEnv {
    /// The current process environment (every variable git's discovery or configuration
    /// lookup depends on).
    #[allow(clippy::disallowed_methods)] // the git environment is read here, once
    pub fn from_process() -> Self {
        let vars = INTERPRETED
            .iter()
            .chain(DEFER_TO_GIT)
            .map(|name| ((*name).to_owned(), std::env::var_os(name)))
            .collect();
        Self { vars }
    }

    /// An isolated environment like the original's tests use: `HOME=home`,
    /// `GIT_CONFIG_GLOBAL=global_config`, `GIT_CONFIG_NOSYSTEM=1`, and every other
    /// git-relevant variable unset.
    pub fn hermetic(home: &Path, global_config: &Path) -> Self {
        let mut env = Self {
            vars: INTERPRETED
                .iter()
                .chain(DEFER_TO_GIT)
                .map(|name| ((*name).to_owned(), None))
                .collect(),
        };
        env.set("HOME", Some(home.as_os_str()));
        env.set("GIT_CONFIG_GLOBAL", Some(global_config.as_os_str()));
        env.set("GIT_CONFIG_NOSYSTEM", Some(OsStr::new("1")));
        env
    }

    /// Sets (`Some`) or unsets (`None`) one variable, returning the changed environment.
    #[must_use]
    pub fn with(mut self, name: &str, value: Option<&OsStr>) -> Self {
        self.set(name, value);
        self
    }

    fn set(&mut self, name: &str, value: Option<&OsStr>) {
        let value = value.map(OsStr::to_os_string);
        match self.vars.iter_mut().find(|(n, _)| n == name) {
            Some(slot) => slot.1 = value,
            None => self.vars.push((name.to_owned(), value)),
        }
    }

    /// The value of `name` in this environment.
    pub fn get(&self, name: &str) -> Option<&OsStr> {
        self.vars
            .iter()
            .find(|(n, _)| n == name)
            .and_then(|(_, v)| v.as_deref())
    }

    /// The first variable that makes the native reader defer to git, if any.
    pub(crate) fn deferring_variable(&self) -> Option<&str> {
        DEFER_TO_GIT
            .iter()
            .copied()
            .find(|name| self.get(name).is_some())
    }

    /// Applies this environment to a child process (set or removed, others inherited).
    pub(crate) fn apply(&self, command: &mut Command) {
        for (name, value) in &self.vars {
            match value {
                Some(v) => command.env(name, v),
                None => command.env_remove(name),
            };
        }
    }
}
