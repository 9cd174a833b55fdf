//! Errors of the store. Display texts are the tool texts of pi-memory 2.5 where it has one.

use camino::Utf8PathBuf;

use memory_index::ValidationError;
use memory_lock::{FileLockError, LogicalLockError, SnapshotError};

use crate::store::types::Version;

/// Why a store operation failed. Every variant leaves the memory directory unchanged, except
/// [`StoreError::Io`] raised after a snapshot was taken (the snapshot then holds the prior
/// state).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// Input rejected by a format rule (`name is required`, ...).
    #[error(transparent)]
    Invalid(#[from] ValidationError),
    /// A search with a blank query (PM-40).
    #[error("{}", memory_index::QUERY_REQUIRED_FOR_SEARCH)]
    EmptyQuery,
    /// Unknown entry reference (PM-35/37).
    #[error("Entry \"{reference}\" not found")]
    NotFound {
        /// The name or file that was looked up.
        reference: String,
    },
    /// A rename onto an existing name (PM-38).
    #[error("Entry \"{name}\" already exists")]
    AlreadyExists {
        /// The name that is taken.
        name: String,
    },
    /// The entry changed since the caller read it (compare-and-swap versions).
    #[error("{}", memory_index::STALE_VERSION)]
    Conflict {
        /// The entry's file.
        file: String,
        /// The version the caller expected.
        expected: Version,
        /// The version on disk.
        actual: Version,
    },
    /// The content contains something that looks like a credential (PA-48). The value is
    /// never shown; the kind and the position are.
    #[error(
        "Refusing to store a secret: the {field} contains what looks like a {kind} at line {line}, column {column}. Memories are plain-text files injected into future prompts; store where the secret lives (an environment variable or file name) instead. Nothing was written."
    )]
    Secret {
        /// `name`, `description` or `content`.
        field: &'static str,
        /// What kind of secret was recognised.
        kind: &'static str,
        /// 1-based line of the secret within the field.
        line: usize,
        /// 1-based column (in characters) of the secret within its line.
        column: usize,
    },
    /// Memory is switched off (`/memory off`, `pimem off`; PA-15, PA-45).
    #[error("{}", crate::messages::MEMORY_IS_OFF)]
    MemoryOff,
    /// The switch file cannot be used: memory is paused until it is fixed (PA-12).
    #[error("{}", crate::messages::memory_paused(problem))]
    MemoryPaused {
        /// What is wrong with the switch file.
        problem: crate::switch::SwitchProblem,
    },
    /// The switch could not be checked (its lock or directory is unusable): fail closed.
    #[error("{}", crate::messages::switch_unavailable(path, source))]
    SwitchUnavailable {
        /// The file or directory involved.
        path: String,
        /// The OS error.
        source: std::io::Error,
    },
    /// A body over the size limit.
    #[error("content is too large: {bytes} bytes (the limit is {limit} bytes per memory)")]
    TooLarge {
        /// Size of the rejected body.
        bytes: usize,
        /// The limit.
        limit: usize,
    },
    /// No free file name after many attempts (pathological directory).
    #[error("Unable to find a free file name for \"{name}\"")]
    NoFreeFileName {
        /// The entry name.
        name: String,
    },
    /// `MEMORY.md` holds invalid UTF-8; rewriting it would destroy bytes.
    #[error(
        "{path} is not valid UTF-8; refusing to rewrite it. Fix the file by hand or run rebuild_index (the current file is kept in .backups/)"
    )]
    IndexNotUtf8 {
        /// Path of the index.
        path: Utf8PathBuf,
    },
    /// The in-process logical lock is busy (PM-48).
    #[error(transparent)]
    Busy(#[from] LogicalLockError),
    /// The cross-process `.lock` is held or abandoned (PM-46/47).
    #[error(transparent)]
    Locked(#[from] FileLockError),
    /// The pre-write snapshot failed; nothing was written (PM-53).
    #[error(transparent)]
    Snapshot(#[from] SnapshotError),
    /// A file-system operation failed.
    #[error("{action} {path}: {source}")]
    Io {
        /// What was being done (`reading`, `writing`, ...).
        action: &'static str,
        /// The file involved.
        path: Utf8PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
}

impl StoreError {
    pub(crate) fn io(
        action: &'static str,
        path: impl Into<Utf8PathBuf>,
        source: std::io::Error,
    ) -> Self {
        StoreError::Io {
            action,
            path: path.into(),
            source,
        }
    }
}
