//! The benchmark baseline (`cargo xtask bench runlog`): a bare SQLite table with the run log's
//! connection settings (WAL, `synchronous=FULL`), one `INSERT` and `COMMIT` per call. It lives
//! here because SQLite is this crate's alone; nothing else uses it.

use camino::Utf8Path;
use rusqlite::{Connection, params};

use crate::error::RunLogError;

/// A bare table `t(id, at, kind, body)` in its own database file.
pub struct BareTable {
    conn: Connection,
}

impl std::fmt::Debug for BareTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("BareTable")
    }
}

impl BareTable {
    /// Creates the database at `path` with WAL and `synchronous=FULL`.
    ///
    /// # Errors
    /// SQLite's error.
    pub fn open(path: &Utf8Path) -> Result<BareTable, RunLogError> {
        let err = RunLogError::sql("opening the baseline table");
        let conn = Connection::open(path).map_err(err)?;
        conn.execute_batch(
            "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL; \
             CREATE TABLE IF NOT EXISTS t(id INTEGER PRIMARY KEY, at INTEGER NOT NULL, \
             kind TEXT NOT NULL, body TEXT NOT NULL);",
        )
        .map_err(RunLogError::sql("opening the baseline table"))?;
        Ok(BareTable { conn })
    }

    /// One `BEGIN`, `INSERT`, `COMMIT`.
    ///
    /// # Errors
    /// SQLite's error.
    pub fn insert_commit(&mut self, at: i64, kind: &str, body: &str) -> Result<(), RunLogError> {
        let tx = self
            .conn
            .transaction()
            .map_err(RunLogError::sql("baseline insert"))?;
        tx.prepare_cached("INSERT INTO t(at, kind, body) VALUES (?1, ?2, ?3)")
            .and_then(|mut st| st.execute(params![at, kind, body]))
            .map_err(RunLogError::sql("baseline insert"))?;
        tx.commit().map_err(RunLogError::sql("baseline insert"))
    }
}
