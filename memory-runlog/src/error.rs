//! The crate's errors: one enum for the database, one for the experience rules.

use camino::Utf8PathBuf;

use crate::ids::{ExpNo, Interval, RunNo};

/// A run or experience name that does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("\"{text}\" is not {what}")]
pub struct ParseIdError {
    /// What was given.
    pub text: String,
    /// What was expected.
    pub what: &'static str,
}

/// Why opening, reading or writing the run log failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RunLogError {
    /// The database could not be opened or created.
    #[error("cannot open the run log {path}: {source}")]
    Open {
        /// The database file.
        path: Utf8PathBuf,
        /// SQLite's error.
        source: rusqlite::Error,
    },
    /// The directory or the writer's liveness mark could not be created.
    #[error("cannot prepare the run log directory {path}: {source}")]
    Dir {
        /// The directory or file.
        path: Utf8PathBuf,
        /// The system error.
        source: std::io::Error,
    },
    /// The database was written by a newer pimem.
    #[error(
        "the run log {path} has schema version {found}, newer than this pimem knows ({known}): update pimem"
    )]
    TooNew {
        /// The database file.
        path: Utf8PathBuf,
        /// Its `user_version`.
        found: i64,
        /// The newest version this build knows.
        known: i64,
    },
    /// A statement failed (after the busy retries).
    #[error("run log {what} failed: {source}")]
    Sql {
        /// What was being done.
        what: &'static str,
        /// SQLite's error.
        source: rusqlite::Error,
    },
    /// No run with that number.
    #[error("no run {0} in this project's run log")]
    NoRun(RunNo),
    /// No experience with that number.
    #[error("no experience {0} in this project's run log")]
    NoExperience(ExpNo),
    /// An event arrived before the writer's session started.
    #[error("no session started: call start_session first")]
    NoSession,
}

impl RunLogError {
    /// Wraps a SQLite error of the operation `what`.
    pub(crate) fn sql(what: &'static str) -> impl FnOnce(rusqlite::Error) -> RunLogError {
        move |source| RunLogError::Sql { what, source }
    }
}

/// Why an experience operation was refused (PX-12..PX-14). Nothing was changed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ExperienceError {
    /// The database failed.
    #[error(transparent)]
    Log(#[from] RunLogError),
    /// The child is already an ancestor of the parent (or the parent itself).
    #[error("{child} cannot go under {parent}: {parent} is inside {child} already (a cycle)")]
    Cycle {
        /// The experience that would move.
        child: ExpNo,
        /// The requested parent.
        parent: ExpNo,
    },
    /// The relation exists already.
    #[error("{child} is already under {parent} (duplicate parent relation)")]
    DuplicateParent {
        /// The child.
        child: ExpNo,
        /// Its parent.
        parent: ExpNo,
    },
    /// The child has another parent (at most one direct parent, PX-12).
    #[error(
        "{child} already has a parent ({current}); an experience has at most one direct parent: detach it first"
    )]
    SecondParent {
        /// The child.
        child: ExpNo,
        /// Its current parent.
        current: ExpNo,
    },
    /// A source interval shares runs with a source of some experience (PX-13).
    #[error("{interval} overlaps {other}, a source of {holder}")]
    Overlap {
        /// The requested interval.
        interval: Interval,
        /// The interval it overlaps.
        other: Interval,
        /// Whose source that is.
        holder: ExpNo,
    },
    /// A run named in an interval does not exist.
    #[error("no run {0} in this project's run log")]
    NoRun(RunNo),
    /// No such experience (or it was merged away).
    #[error("no experience {0} in this project's run log")]
    NoExperience(ExpNo),
    /// The experience was merged into another one.
    #[error("{0} was merged into {1}; use {1}")]
    Merged(ExpNo, ExpNo),
    /// Merging needs root experiences (PX-14).
    #[error("{exp} is not a root experience (its parent is {parent}); only roots merge")]
    NotRoot {
        /// The experience.
        exp: ExpNo,
        /// Its parent.
        parent: ExpNo,
    },
    /// An experience cannot be merged into or put under itself.
    #[error("{0} cannot be combined with itself")]
    SelfCombine(ExpNo),
    /// A request field is missing or wrong.
    #[error("{0}")]
    Invalid(String),
}
