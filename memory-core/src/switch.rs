//! The persistent memory switch (PA-02, PA-11..PA-16, PA-45): pi-auto-memory's own
//! `<agentDir>/auto-memory.json`, `{"version": 1, "enabled": false}`, so its users keep their
//! setting when they move to pimem.
//!
//! * **Missing file → on.** An unreadable file, corrupt JSON, an unknown `version` or a
//!   non-boolean `enabled` → [`SwitchState::Paused`]: memory behaves as off and the message says
//!   how to fix the file, which is never overwritten (PA-12).
//! * **Rewrite** ([`Switch::set`]): under the exclusive side of a kernel lock on
//!   `<agentDir>/auto-memory.json.pimem-lock`, the file is read again, every field but
//!   `version`/`enabled` is kept, and the new text replaces the file atomically (private temp
//!   file, fsync, rename). A failure is an error, never a claimed success (PA-13). pi's
//!   `settings.json` is never touched (PA-11).
//! * **Commit check** ([`Switch::permit`]): every store write takes the *shared* side of the
//!   same lock, reads the file and keeps the lock until its last file is replaced. So `off`
//!   waits for commits already past their check, and once `off` has returned no commit based
//!   on an older check can land (PA-15). Other sessions see the change at their next turn, tool
//!   call or commit (no watcher, no broadcast, PA-14).
//!
//! Decision: the lock file is pimem's own (`auto-memory.json.pimem-lock`), not
//! pi-auto-memory's, whose lock is not specified; both programs replace the file atomically, so
//! a reader never sees half a file either way. Decision: a commit creates the agent directory
//! (0700) when it is missing, so the lock exists before anyone can switch memory off there.
//!
//! # Limitations
//! The switch is per agent directory (all projects of that pi user), as in pi-auto-memory;
//! an instance using another agent directory has its own switch.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};
use std::time::Duration;

use memory_lock::{Gate, GateMode, atomic_write, ensure_private_dir, lock_gate};
use serde_json::{Map, Value};

use crate::error::StoreError;
use crate::messages;

/// The switch file in the agent directory.
pub const SWITCH_FILE: &str = "auto-memory.json";
/// The lock file beside it.
pub const SWITCH_LOCK_FILE: &str = "auto-memory.json.pimem-lock";
/// The only `version` this implementation understands.
pub const SWITCH_VERSION: u64 = 1;
/// The largest switch file read (a bigger one is reported, not read).
const MAX_SWITCH_BYTES: u64 = 64 * 1024;

/// Why the switch file cannot be used: memory is paused until a person fixes it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum SwitchProblem {
    /// The file exists but cannot be read (permissions, a directory, too large).
    Unreadable {
        /// The switch file.
        path: PathBuf,
        /// The OS error or the reason.
        error: String,
    },
    /// Not valid JSON.
    Corrupt {
        /// The switch file.
        path: PathBuf,
        /// The parser's message (with line and column).
        error: String,
    },
    /// Valid JSON, but not an object.
    NotAnObject {
        /// The switch file.
        path: PathBuf,
    },
    /// `version` is missing or not 1.
    UnknownVersion {
        /// The switch file.
        path: PathBuf,
        /// The value found, as JSON (`missing` when absent).
        found: String,
    },
    /// `enabled` is missing or not a boolean.
    NotBoolean {
        /// The switch file.
        path: PathBuf,
        /// The value found, as JSON (`missing` when absent).
        found: String,
    },
}

impl SwitchProblem {
    /// The switch file.
    pub fn path(&self) -> &Path {
        match self {
            SwitchProblem::Unreadable { path, .. }
            | SwitchProblem::Corrupt { path, .. }
            | SwitchProblem::NotAnObject { path }
            | SwitchProblem::UnknownVersion { path, .. }
            | SwitchProblem::NotBoolean { path, .. } => path,
        }
    }
}

impl fmt::Display for SwitchProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&messages::switch_problem(self))
    }
}

/// What the switch says now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SwitchState {
    /// Memory is on; `file` says whether the switch file exists (`false`: on by default).
    On {
        /// Whether `auto-memory.json` exists.
        file: bool,
    },
    /// Memory was switched off (`"enabled": false`).
    Off,
    /// The file cannot be used: memory is paused and the problem says how to fix it.
    Paused(SwitchProblem),
}

impl SwitchState {
    /// Whether memory may be used.
    pub fn is_on(&self) -> bool {
        matches!(self, SwitchState::On { .. })
    }

    /// The store error for a refused operation, or `None` when memory is on.
    pub fn refusal(&self) -> Option<StoreError> {
        match self {
            SwitchState::On { .. } => None,
            SwitchState::Off => Some(StoreError::MemoryOff),
            SwitchState::Paused(p) => Some(StoreError::MemoryPaused { problem: p.clone() }),
        }
    }
}

/// Why [`Switch::set`] failed. Nothing was written in any case.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SwitchError {
    /// The file is corrupt (or unreadable): it is never overwritten.
    #[error("{}", messages::switch_refuse_overwrite(.0))]
    Paused(SwitchProblem),
    /// The lock, the directory or the write failed.
    #[error("{}", messages::switch_io(action, path, source))]
    Io {
        /// What was being done.
        action: &'static str,
        /// The file involved.
        path: PathBuf,
        /// The OS error.
        source: io::Error,
    },
}

/// What [`Switch::set`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SetOutcome {
    /// The state before (`true`: on).
    pub was_on: bool,
    /// Whether the file was written (`false` when it already said so).
    pub written: bool,
}

/// A held commit permit: memory was on when it was taken, and `off` cannot complete until
/// it is dropped.
#[derive(Debug)]
pub struct Permit {
    _gate: Gate,
}

/// The switch of one agent directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Switch {
    agent_dir: PathBuf,
    timeout: Duration,
}

impl Switch {
    /// The switch of `agent_dir`; lock waits last at most `timeout`.
    pub fn new(agent_dir: impl Into<PathBuf>, timeout: Duration) -> Self {
        Switch {
            agent_dir: agent_dir.into(),
            timeout,
        }
    }

    /// `<agentDir>/auto-memory.json`.
    pub fn path(&self) -> PathBuf {
        self.agent_dir.join(SWITCH_FILE)
    }

    /// `<agentDir>/auto-memory.json.pimem-lock`.
    pub fn lock_path(&self) -> PathBuf {
        self.agent_dir.join(SWITCH_LOCK_FILE)
    }

    /// The agent directory.
    pub fn agent_dir(&self) -> &Path {
        &self.agent_dir
    }

    /// Reads the switch now, without a lock (turn starts, status, doctor: the file is
    /// always replaced whole, so a reader sees the old or the new one).
    pub fn state(&self) -> SwitchState {
        read_state(&self.path()).0
    }

    /// A commit permit (PA-15): the shared side of the switch lock, then the state read
    /// inside it. Hold it until the write's last rename.
    ///
    /// # Errors
    /// [`StoreError::MemoryOff`] / [`StoreError::MemoryPaused`] when memory may not be used,
    /// [`StoreError::SwitchUnavailable`] when the switch cannot be checked (fail closed).
    pub fn permit(&self) -> Result<Permit, StoreError> {
        let unavailable = |path: PathBuf, source: io::Error| StoreError::SwitchUnavailable {
            path: path.display().to_string(),
            source,
        };
        ensure_private_dir(&self.agent_dir).map_err(|e| unavailable(self.agent_dir.clone(), e))?;
        let gate = lock_gate(&self.lock_path(), GateMode::Shared, self.timeout)
            .map_err(|e| unavailable(self.lock_path(), e))?;
        match self.state().refusal() {
            None => Ok(Permit { _gate: gate }),
            Some(e) => Err(e),
        }
    }

    /// Switches memory on or off (PA-13): exclusive lock, the file read again inside it,
    /// unknown fields kept, atomic replacement. Waits for commits holding a [`Permit`].
    ///
    /// # Errors
    /// [`SwitchError::Paused`] when the file is corrupt or unreadable (it is never
    /// overwritten), [`SwitchError::Io`] when the lock or the write fails. Nothing is
    /// written on error.
    pub fn set(&self, enabled: bool) -> Result<SetOutcome, SwitchError> {
        let io_err = |action: &'static str, path: PathBuf| {
            move |source: io::Error| SwitchError::Io {
                action,
                path,
                source,
            }
        };
        ensure_private_dir(&self.agent_dir).map_err(io_err("creating", self.agent_dir.clone()))?;
        let _gate = lock_gate(&self.lock_path(), GateMode::Exclusive, self.timeout)
            .map_err(io_err("locking", self.lock_path()))?;
        let path = self.path();
        let (state, object) = read_state(&path);
        let was_on = match &state {
            SwitchState::On { .. } => true,
            SwitchState::Off => false,
            SwitchState::Paused(p) => return Err(SwitchError::Paused(p.clone())),
        };
        let exists = !matches!(state, SwitchState::On { file: false });
        if was_on == enabled && (exists || enabled) {
            // Already so (a missing file already means on): nothing to write.
            return Ok(SetOutcome {
                was_on,
                written: false,
            });
        }
        let mut object = object.unwrap_or_default();
        object.insert("version".to_owned(), Value::from(SWITCH_VERSION));
        object.insert("enabled".to_owned(), Value::Bool(enabled));
        let mut text =
            serde_json::to_string_pretty(&Value::Object(object)).map_err(|e| SwitchError::Io {
                action: "encoding",
                path: path.clone(),
                source: io::Error::new(io::ErrorKind::InvalidData, e),
            })?;
        text.push('\n');
        atomic_write(&path, text.as_bytes()).map_err(io_err("writing", path.clone()))?;
        Ok(SetOutcome {
            was_on,
            written: true,
        })
    }
}

/// Reads and judges the switch file; the object comes back for a rewrite.
fn read_state(path: &Path) -> (SwitchState, Option<Map<String, Value>>) {
    let unreadable = |error: String| {
        (
            SwitchState::Paused(SwitchProblem::Unreadable {
                path: path.to_path_buf(),
                error,
            }),
            None,
        )
    };
    match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return (SwitchState::On { file: false }, None);
        }
        Err(e) => return unreadable(e.to_string()),
        Ok(m) if !m.is_file() => return unreadable(messages::switch_not_a_file()),
        Ok(m) if m.len() > MAX_SWITCH_BYTES => {
            return unreadable(messages::switch_too_large(m.len(), MAX_SWITCH_BYTES));
        }
        Ok(_) => {}
    }
    let text = match std::fs::read(path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return (SwitchState::On { file: false }, None);
        }
        Err(e) => return unreadable(e.to_string()),
    };
    let value: Value = match serde_json::from_slice(&text) {
        Ok(v) => v,
        Err(e) => {
            return (
                SwitchState::Paused(SwitchProblem::Corrupt {
                    path: path.to_path_buf(),
                    error: e.to_string(),
                }),
                None,
            );
        }
    };
    let Value::Object(object) = value else {
        return (
            SwitchState::Paused(SwitchProblem::NotAnObject {
                path: path.to_path_buf(),
            }),
            None,
        );
    };
    let shown = |v: Option<&Value>| v.map_or_else(|| "missing".to_owned(), Value::to_string);
    let version = object.get("version");
    if version.and_then(Value::as_u64) != Some(SWITCH_VERSION) {
        return (
            SwitchState::Paused(SwitchProblem::UnknownVersion {
                path: path.to_path_buf(),
                found: shown(version),
            }),
            None,
        );
    }
    let state = match object.get("enabled") {
        Some(Value::Bool(true)) => SwitchState::On { file: true },
        Some(Value::Bool(false)) => SwitchState::Off,
        other => SwitchState::Paused(SwitchProblem::NotBoolean {
            path: path.to_path_buf(),
            found: shown(other),
        }),
    };
    (state, Some(object))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn switch(dir: &Path) -> Switch {
        Switch::new(dir, Duration::from_millis(200))
    }

    /// VECTORS PA-V1..PA-V3.
    #[test]
    fn pa_v1_v3_states() {
        let tmp = tempfile::tempdir().unwrap();
        let s = switch(tmp.path());
        assert_eq!(s.state(), SwitchState::On { file: false }, "PA-V1");
        std::fs::write(s.path(), r#"{"version":1,"enabled":false}"#).unwrap();
        assert_eq!(s.state(), SwitchState::Off, "PA-V2");
        for (text, want) in [
            (r#"{"version":1,"enabled":"no"}"#, "NotBoolean"),
            (r#"{"version":2,"enabled":true}"#, "UnknownVersion"),
            (r#"{"enabled":true}"#, "UnknownVersion"),
            ("{bad json", "Corrupt"),
            ("[1]", "NotAnObject"),
        ] {
            std::fs::write(s.path(), text).unwrap();
            match s.state() {
                SwitchState::Paused(p) => assert!(format!("{p:?}").starts_with(want), "{p:?}"),
                other => panic!("PA-V3 {text}: {other:?}"),
            }
            let err = s.set(true).unwrap_err();
            assert!(matches!(err, SwitchError::Paused(_)), "{err}");
            assert_eq!(
                std::fs::read_to_string(s.path()).unwrap(),
                text,
                "PA-V3: never overwritten"
            );
        }
    }

    /// VECTORS PA-V4: unknown fields kept.
    #[test]
    fn pa_v4_on_keeps_other_fields() {
        let tmp = tempfile::tempdir().unwrap();
        let s = switch(tmp.path());
        std::fs::write(s.path(), r#"{"version":1,"enabled":false,"note":"x"}"#).unwrap();
        let out = s.set(true).unwrap();
        assert_eq!(
            out,
            SetOutcome {
                was_on: false,
                written: true
            }
        );
        let v: Value = serde_json::from_str(&std::fs::read_to_string(s.path()).unwrap()).unwrap();
        assert_eq!(
            v,
            serde_json::json!({"version":1,"enabled":true,"note":"x"})
        );
        assert_eq!(s.state(), SwitchState::On { file: true });
        // Again: nothing to write.
        assert!(!s.set(true).unwrap().written);
    }

    #[test]
    fn off_creates_the_file_and_on_without_a_file_writes_nothing() {
        let tmp = tempfile::tempdir().unwrap();
        let s = switch(&tmp.path().join("agent"));
        assert!(!s.set(true).unwrap().written);
        assert!(!s.path().exists());
        s.set(false).unwrap();
        assert_eq!(s.state(), SwitchState::Off);
        let v: Value = serde_json::from_str(&std::fs::read_to_string(s.path()).unwrap()).unwrap();
        assert_eq!(v, serde_json::json!({"version":1,"enabled":false}));
    }

    #[test]
    fn a_permit_holds_off_back_and_off_refuses_later_permits() {
        let tmp = tempfile::tempdir().unwrap();
        let s = switch(tmp.path());
        let permit = s.permit().unwrap();
        let err = s.set(false).unwrap_err();
        assert!(
            matches!(
                err,
                SwitchError::Io {
                    action: "locking",
                    ..
                }
            ),
            "{err}"
        );
        assert_eq!(
            s.state(),
            SwitchState::On { file: false },
            "off did not land"
        );
        drop(permit);
        s.set(false).unwrap();
        assert!(matches!(s.permit(), Err(StoreError::MemoryOff)));
        std::fs::write(s.path(), "{").unwrap();
        assert!(matches!(s.permit(), Err(StoreError::MemoryPaused { .. })));
    }
}
