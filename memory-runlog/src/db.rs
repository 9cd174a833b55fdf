//! The SQLite file: where it lives, how a connection is set up, the schema and its forward
//! migrations, and the retry that keeps `SQLITE_BUSY` away from users (PX-02).
//!
//! Every connection runs `journal_mode=WAL` (readers never block the writer, a crash never
//! tears a committed transaction), `synchronous=FULL` (a commit is on disk when it returns),
//! `foreign_keys=ON` and a busy timeout; writes are `BEGIN IMMEDIATE` transactions, so two
//! processes queue on the write lock instead of failing an upgrade. A statement that still
//! meets `SQLITE_BUSY` after the timeout is retried with backoff for up to [`BUSY_BUDGET`].

use std::time::{Duration, Instant};

use camino::{Utf8Path, Utf8PathBuf};
use rusqlite::{Connection, ErrorCode, OpenFlags, Transaction, TransactionBehavior};

use crate::error::RunLogError;

/// The directory inside a project's memory directory that holds the run log. A dot
/// directory: pi-memory's listings, its index and the snapshots ignore it.
pub const RUNLOG_DIR: &str = ".experience";
/// The database file inside [`RUNLOG_DIR`].
pub const DB_FILE: &str = "runlog.db";
/// Writers' liveness marks inside [`RUNLOG_DIR`].
pub const MARKS_DIR: &str = "writers";

/// How long one statement waits for the write lock inside SQLite.
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);
/// How long a write keeps retrying `SQLITE_BUSY` beyond that.
pub const BUSY_BUDGET: Duration = Duration::from_secs(60);

/// The schema, one entry per version: entry `i` upgrades version `i` to `i + 1`. Forward
/// only; never edit a released entry, append a new one.
const MIGRATIONS: &[&str] = &[
    // 1: writers, sessions, runs, events, experiences, search
    r"
CREATE TABLE writers(
    id INTEGER PRIMARY KEY,
    uuid TEXT NOT NULL UNIQUE,
    pid INTEGER NOT NULL,
    host TEXT NOT NULL,
    started_at INTEGER NOT NULL,
    closed_at INTEGER
);
CREATE TABLE sessions(
    id INTEGER PRIMARY KEY,
    writer INTEGER NOT NULL REFERENCES writers(id),
    pi_session TEXT NOT NULL,
    session_file TEXT,
    reason TEXT NOT NULL,
    lineage TEXT,
    cwd TEXT NOT NULL,
    started_at INTEGER NOT NULL
);
CREATE TABLE runs(
    id INTEGER PRIMARY KEY,
    uuid TEXT NOT NULL UNIQUE,
    number INTEGER NOT NULL UNIQUE,
    session INTEGER NOT NULL REFERENCES sessions(id),
    writer INTEGER NOT NULL REFERENCES writers(id),
    status TEXT NOT NULL CHECK (status IN
        ('running', 'completed', 'failed', 'interrupted', 'recovery_required')),
    stop_reason TEXT,
    error TEXT,
    started_at INTEGER NOT NULL,
    ended_at INTEGER,
    title TEXT NOT NULL DEFAULT '',
    model TEXT,
    summary_state TEXT NOT NULL DEFAULT 'none' CHECK (summary_state IN
        ('none', 'pending', 'done', 'failed', 'unavailable')),
    summary TEXT,
    summary_note TEXT,
    summary_model TEXT,
    summary_at INTEGER,
    audited_at INTEGER
);
CREATE INDEX runs_by_status ON runs(status);
CREATE INDEX runs_by_session ON runs(session);
CREATE TABLE events(
    id INTEGER PRIMARY KEY,
    session INTEGER NOT NULL REFERENCES sessions(id),
    run INTEGER REFERENCES runs(id),
    at INTEGER NOT NULL,
    kind TEXT NOT NULL,
    body TEXT NOT NULL
);
CREATE INDEX events_by_run ON events(run) WHERE run IS NOT NULL;
CREATE TABLE experiences(
    id INTEGER PRIMARY KEY,
    number INTEGER NOT NULL UNIQUE,
    parent INTEGER REFERENCES experiences(id),
    merged_into INTEGER REFERENCES experiences(id),
    title TEXT NOT NULL,
    summary TEXT NOT NULL DEFAULT '',
    remembered TEXT,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    CHECK (parent IS NULL OR parent <> id)
);
CREATE INDEX experiences_by_parent ON experiences(parent);
CREATE TABLE sources(
    experience INTEGER NOT NULL REFERENCES experiences(id),
    lo INTEGER NOT NULL,
    hi INTEGER NOT NULL,
    CHECK (lo <= hi),
    PRIMARY KEY (experience, lo)
);
CREATE VIRTUAL TABLE search USING fts5(
    kind UNINDEXED, ref UNINDEXED, title, body,
    tokenize = 'unicode61 remove_diacritics 2'
);
CREATE TRIGGER runs_search_ai AFTER INSERT ON runs BEGIN
    INSERT INTO search(rowid, kind, ref, title, body) VALUES (new.id * 2, 'run', new.number,
        new.title, concat_ws(' ', new.status, new.model, new.summary));
END;
CREATE TRIGGER runs_search_au AFTER UPDATE OF title, status, model, summary ON runs BEGIN
    DELETE FROM search WHERE rowid = old.id * 2;
    INSERT INTO search(rowid, kind, ref, title, body) VALUES (new.id * 2, 'run', new.number,
        new.title, concat_ws(' ', new.status, new.model, new.summary));
END;
CREATE TRIGGER experiences_search_ai AFTER INSERT ON experiences BEGIN
    INSERT INTO search(rowid, kind, ref, title, body) VALUES (new.id * 2 + 1, 'experience',
        new.number, new.title, new.summary);
END;
CREATE TRIGGER experiences_search_au AFTER UPDATE OF title, summary, merged_into ON experiences
BEGIN
    DELETE FROM search WHERE rowid = old.id * 2 + 1;
    INSERT INTO search(rowid, kind, ref, title, body)
        SELECT new.id * 2 + 1, 'experience', new.number, new.title, new.summary
        WHERE new.merged_into IS NULL;
END;
",
];

/// The schema version this build writes.
pub const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

/// `<memory dir>/.experience`.
pub fn runlog_dir(memory_dir: &Utf8Path) -> Utf8PathBuf {
    memory_dir.join(RUNLOG_DIR)
}

/// Whether an error is SQLite's "someone else holds the lock".
fn is_busy(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked)
    )
}

/// Runs `f` until it does not fail with `SQLITE_BUSY`/`SQLITE_LOCKED`, at most
/// [`BUSY_BUDGET`], backing off between attempts.
pub(crate) fn retry_busy<T>(
    mut f: impl FnMut() -> rusqlite::Result<T>,
) -> Result<T, rusqlite::Error> {
    let start = Instant::now();
    let mut wait = Duration::from_millis(2);
    loop {
        match f() {
            Err(e) if is_busy(&e) && start.elapsed() < BUSY_BUDGET => {
                std::thread::sleep(wait);
                wait = (wait * 2).min(Duration::from_millis(200));
            }
            other => return other,
        }
    }
}

/// Runs `f` in a `BEGIN IMMEDIATE` transaction and commits, retrying the whole transaction
/// on `SQLITE_BUSY` (nothing of a failed attempt stays).
pub(crate) fn write<T>(
    conn: &mut Connection,
    what: &'static str,
    mut f: impl FnMut(&Transaction<'_>) -> rusqlite::Result<T>,
) -> Result<T, RunLogError> {
    retry_busy(|| {
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let out = f(&tx)?;
        tx.commit()?;
        Ok(out)
    })
    .map_err(RunLogError::sql(what))
}

/// Opens (creating if needed) the database at `path`, sets the connection up and brings the
/// schema to [`SCHEMA_VERSION`].
pub(crate) fn connect(path: &Utf8Path) -> Result<Connection, RunLogError> {
    let open_err = |source| RunLogError::Open {
        path: path.to_owned(),
        source,
    };
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_CREATE
            | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(open_err)?;
    conn.busy_timeout(BUSY_TIMEOUT).map_err(open_err)?;
    // `journal_mode` needs a moment without other writers the first time: retried.
    let mode: String = retry_busy(|| conn.query_row("PRAGMA journal_mode=WAL", [], |r| r.get(0)))
        .map_err(open_err)?;
    if !mode.eq_ignore_ascii_case("wal") {
        return Err(open_err(rusqlite::Error::InvalidParameterName(format!(
            "journal_mode is {mode}, WAL is required"
        ))));
    }
    conn.execute_batch("PRAGMA synchronous=FULL; PRAGMA foreign_keys=ON;")
        .map_err(open_err)?;
    let mut conn = conn;
    migrate(&mut conn, path)?;
    Ok(conn)
}

/// The schema version of the open database.
pub(crate) fn user_version(conn: &Connection) -> rusqlite::Result<i64> {
    conn.query_row("PRAGMA user_version", [], |r| r.get(0))
}

/// Applies the missing migrations, each in its own immediate transaction that re-reads the
/// version first (two processes opening a fresh file at once apply each step once).
fn migrate(conn: &mut Connection, path: &Utf8Path) -> Result<(), RunLogError> {
    let found = retry_busy(|| user_version(conn))
        .map_err(RunLogError::sql("reading the schema version"))?;
    if found > SCHEMA_VERSION {
        return Err(RunLogError::TooNew {
            path: path.to_owned(),
            found,
            known: SCHEMA_VERSION,
        });
    }
    for (i, sql) in MIGRATIONS.iter().enumerate() {
        let target = i as i64 + 1;
        write(conn, "migrating the schema", |tx| {
            if user_version(tx)? < target {
                tx.execute_batch(sql)?;
                tx.execute_batch(&format!("PRAGMA user_version = {target}"))?;
            }
            Ok(())
        })?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fresh_file_gets_wal_full_sync_foreign_keys_and_the_schema() {
        let sb = testkit::Sandbox::new();
        let path = sb.path("runlog.db");
        let conn = connect(&path).unwrap();
        let mode: String = conn
            .query_row("PRAGMA journal_mode", [], |r| r.get(0))
            .unwrap();
        let sync: i64 = conn
            .query_row("PRAGMA synchronous", [], |r| r.get(0))
            .unwrap();
        let fk: i64 = conn
            .query_row("PRAGMA foreign_keys", [], |r| r.get(0))
            .unwrap();
        assert_eq!((mode.as_str(), sync, fk), ("wal", 2, 1));
        assert_eq!(user_version(&conn).unwrap(), SCHEMA_VERSION);
        drop(conn);
        // opening again migrates nothing and keeps the data
        let conn = connect(&path).unwrap();
        assert_eq!(user_version(&conn).unwrap(), SCHEMA_VERSION);
    }

    #[test]
    fn a_newer_schema_is_refused_with_its_numbers() {
        let sb = testkit::Sandbox::new();
        let path = sb.path("runlog.db");
        let conn = connect(&path).unwrap();
        conn.execute_batch("PRAGMA user_version = 99").unwrap();
        drop(conn);
        let e = connect(&path).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!(
                "the run log {path} has schema version 99, newer than this pimem knows (1): update pimem"
            )
        );
    }
}
