//! [`RunLog`]: one connection to a project's run log, for reading, recovery and summaries.

use camino::{Utf8Path, Utf8PathBuf};
use rusqlite::{Connection, OptionalExtension, Row, params};
use serde::Serialize;

use crate::db::{self, DB_FILE, MARKS_DIR};
use crate::error::RunLogError;
use crate::event::{Event, RunStatus};
use crate::ids::{ExpNo, RunNo};

/// Where a run's summary stands (PX-09).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SummaryState {
    /// Not asked for (the run has not settled).
    None,
    /// Waiting for the model.
    Pending,
    /// Written.
    Done,
    /// The model call failed (the note says why).
    Failed,
    /// No model is configured (the note says what to set).
    Unavailable,
}

impl SummaryState {
    /// The stored spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            SummaryState::None => "none",
            SummaryState::Pending => "pending",
            SummaryState::Done => "done",
            SummaryState::Failed => "failed",
            SummaryState::Unavailable => "unavailable",
        }
    }

    fn parse(s: &str) -> SummaryState {
        match s {
            "pending" => SummaryState::Pending,
            "done" => SummaryState::Done,
            "failed" => SummaryState::Failed,
            "unavailable" => SummaryState::Unavailable,
            _ => SummaryState::None,
        }
    }
}

/// One run as listed and shown.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RunRow {
    /// `R01`.
    pub number: RunNo,
    /// Its UUID (stable across processes and crashes).
    pub uuid: String,
    /// Where it stands.
    pub status: RunStatus,
    /// When it started (Unix ms).
    pub started_at: i64,
    /// When it was confirmed ended (Unix ms); `None` while running and for a dead writer's
    /// runs (never invented, PX-08).
    pub ended_at: Option<i64>,
    /// The first prompt, cut.
    pub title: String,
    /// The model of its first answer.
    pub model: Option<String>,
    /// The final stop reason.
    pub stop_reason: Option<String>,
    /// The final error message.
    pub error: Option<String>,
    /// Events recorded in the run.
    pub events: i64,
    /// pi's session id.
    pub session: String,
    /// pi's session file (`None` with `--no-session`).
    pub session_file: Option<String>,
    /// `unresolved` for runs of a forked session (PX-19).
    pub lineage: Option<String>,
    /// Summary state.
    pub summary_state: SummaryState,
    /// The summary, when done.
    pub summary: Option<String>,
    /// Why the summary failed or is missing.
    pub summary_note: Option<String>,
    /// The experience this run is a direct source of.
    pub experience: Option<ExpNo>,
}

/// One stored event.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EventRow {
    /// Its row id (order of recording).
    pub id: i64,
    /// When (Unix ms).
    pub at: i64,
    /// The `kind` column.
    pub kind: String,
    /// The stored JSON body.
    pub body: String,
    /// The event, when this build knows its kind.
    #[serde(skip)]
    pub event: Option<Event>,
}

/// The numbers `/experience debug` shows.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Diagnostics {
    /// The database file.
    pub path: String,
    /// Its schema version.
    pub schema: i64,
    /// Bytes of the database and its WAL.
    pub bytes: u64,
    /// SQLite's journal mode (`wal`).
    pub journal_mode: String,
    /// `PRAGMA synchronous` (2 = FULL).
    pub synchronous: i64,
    /// Runs by status, in [`RunStatus`] order.
    pub runs: Vec<(String, i64)>,
    /// Summaries by state.
    pub summaries: Vec<(String, i64)>,
    /// Events in all.
    pub events: i64,
    /// Sessions seen.
    pub sessions: i64,
    /// Writers that registered, and how many of them still run.
    pub writers: i64,
    /// Live writers (their mark is held).
    pub live_writers: i64,
    /// Experiences (not merged away).
    pub experiences: i64,
    /// `PRAGMA quick_check`'s answer (`ok`).
    pub integrity: String,
}

/// One connection to a project's run log.
pub struct RunLog {
    pub(crate) conn: Connection,
    dir: Utf8PathBuf,
    db: Utf8PathBuf,
}

impl std::fmt::Debug for RunLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunLog").field("db", &self.db).finish()
    }
}

pub(crate) const RUN_COLUMNS: &str = "r.number, r.uuid, r.status, r.started_at, r.ended_at, \
    r.title, r.model, r.stop_reason, r.error, \
    (SELECT COUNT(*) FROM events e WHERE e.run = r.id), s.pi_session, s.session_file, \
    s.lineage, r.summary_state, r.summary, r.summary_note, \
    (SELECT x.number FROM sources so JOIN experiences x ON x.id = so.experience \
     WHERE r.number BETWEEN so.lo AND so.hi)";

pub(crate) fn run_row(r: &Row<'_>) -> rusqlite::Result<RunRow> {
    let status: String = r.get(2)?;
    let summary_state: String = r.get(13)?;
    Ok(RunRow {
        number: RunNo(r.get(0)?),
        uuid: r.get(1)?,
        status: RunStatus::parse(&status).unwrap_or(RunStatus::RecoveryRequired),
        started_at: r.get(3)?,
        ended_at: r.get(4)?,
        title: r.get(5)?,
        model: r.get(6)?,
        stop_reason: r.get(7)?,
        error: r.get(8)?,
        events: r.get(9)?,
        session: r.get(10)?,
        session_file: r.get(11)?,
        lineage: r.get(12)?,
        summary_state: SummaryState::parse(&summary_state),
        summary: r.get(14)?,
        summary_note: r.get(15)?,
        experience: r.get::<_, Option<u32>>(16)?.map(ExpNo),
    })
}

impl RunLog {
    /// Opens (creating it and its private directory if needed) the run log in `dir`
    /// (`<memory dir>/.experience`). Does not recover anything: see [`RunLog::recover`].
    ///
    /// # Errors
    /// [`RunLogError::Dir`], [`RunLogError::Open`], [`RunLogError::TooNew`].
    pub fn open(dir: &Utf8Path) -> Result<RunLog, RunLogError> {
        memory_lock::ensure_private_dir(dir.as_std_path()).map_err(|source| RunLogError::Dir {
            path: dir.to_owned(),
            source,
        })?;
        let db = dir.join(DB_FILE);
        let conn = db::connect(&db)?;
        Ok(RunLog {
            conn,
            dir: dir.to_owned(),
            db,
        })
    }

    /// Opens the run log only if it exists (readers that must not create one).
    ///
    /// # Errors
    /// As [`RunLog::open`].
    pub fn open_existing(dir: &Utf8Path) -> Result<Option<RunLog>, RunLogError> {
        if !dir.join(DB_FILE).exists() {
            return Ok(None);
        }
        RunLog::open(dir).map(Some)
    }

    /// The run log's directory.
    pub fn dir(&self) -> &Utf8Path {
        &self.dir
    }

    /// The database file.
    pub fn db_path(&self) -> &Utf8Path {
        &self.db
    }

    pub(crate) fn mark_path(&self, writer_uuid: &str) -> Utf8PathBuf {
        self.dir
            .join(MARKS_DIR)
            .join(format!("{writer_uuid}.alive"))
    }

    /// Marks the running runs of every dead writer on this host `recovery_required`, keeping
    /// their UUID, number and events, with no end time (PX-07, PX-08; VECTORS PX-V5). A writer
    /// is dead when its liveness mark is not held; writers of other hosts are left alone (their
    /// liveness cannot be checked). `except` is the caller's own writer. Returns the runs
    /// marked.
    ///
    /// # Errors
    /// [`RunLogError::Sql`], [`RunLogError::Dir`] (a mark that cannot be checked).
    pub fn recover_except(&mut self, except: Option<i64>) -> Result<Vec<RunNo>, RunLogError> {
        let host = memory_lock::hostname();
        let mut writers: Vec<(i64, String, String)> = {
            let mut st = self
                .conn
                .prepare(
                    "SELECT DISTINCT w.id, w.uuid, w.host FROM runs r JOIN writers w \
                     ON w.id = r.writer WHERE r.status = 'running'",
                )
                .map_err(RunLogError::sql("listing running runs"))?;
            let rows = st
                .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
                .map_err(RunLogError::sql("listing running runs"))?;
            rows.collect::<rusqlite::Result<_>>()
                .map_err(RunLogError::sql("listing running runs"))?
        };
        writers.retain(|(id, _, h)| Some(*id) != except && *h == host);
        let mut recovered = Vec::new();
        for (id, uuid, _) in writers {
            let mark = self.mark_path(&uuid);
            let held = memory_lock::alive_mark_held(mark.as_std_path()).map_err(|source| {
                RunLogError::Dir {
                    path: mark.clone(),
                    source,
                }
            })?;
            if held {
                continue;
            }
            recovered.extend(cut_off_runs(
                &mut self.conn,
                id,
                "recovering a dead writer's runs",
            )?);
            // Best effort: a leftover mark costs one check at the next recovery.
            let _ = memory_lock::remove_dead_mark(mark.as_std_path());
        }
        recovered.sort();
        Ok(recovered)
    }

    /// [`RunLog::recover_except`] for a reader (no writer of its own).
    ///
    /// # Errors
    /// As [`RunLog::recover_except`].
    pub fn recover(&mut self) -> Result<Vec<RunNo>, RunLogError> {
        self.recover_except(None)
    }

    /// The newest `limit` runs, newest first.
    ///
    /// # Errors
    /// [`RunLogError::Sql`].
    pub fn runs(&self, limit: usize) -> Result<Vec<RunRow>, RunLogError> {
        let sql = format!(
            "SELECT {RUN_COLUMNS} FROM runs r JOIN sessions s ON s.id = r.session \
             ORDER BY r.number DESC LIMIT ?1"
        );
        let mut st = self
            .conn
            .prepare_cached(&sql)
            .map_err(RunLogError::sql("listing runs"))?;
        let rows = st
            .query_map([limit as i64], run_row)
            .map_err(RunLogError::sql("listing runs"))?;
        rows.collect::<rusqlite::Result<_>>()
            .map_err(RunLogError::sql("listing runs"))
    }

    /// One run.
    ///
    /// # Errors
    /// [`RunLogError::NoRun`], [`RunLogError::Sql`].
    pub fn run(&self, n: RunNo) -> Result<RunRow, RunLogError> {
        let sql = format!(
            "SELECT {RUN_COLUMNS} FROM runs r JOIN sessions s ON s.id = r.session \
             WHERE r.number = ?1"
        );
        self.conn
            .prepare_cached(&sql)
            .and_then(|mut st| st.query_row([n.0], run_row).optional())
            .map_err(RunLogError::sql("reading a run"))?
            .ok_or(RunLogError::NoRun(n))
    }

    /// The runs with these numbers that exist, in order.
    ///
    /// # Errors
    /// [`RunLogError::Sql`].
    pub fn runs_between(&self, lo: RunNo, hi: RunNo) -> Result<Vec<RunRow>, RunLogError> {
        let sql = format!(
            "SELECT {RUN_COLUMNS} FROM runs r JOIN sessions s ON s.id = r.session \
             WHERE r.number BETWEEN ?1 AND ?2 ORDER BY r.number"
        );
        let mut st = self
            .conn
            .prepare_cached(&sql)
            .map_err(RunLogError::sql("reading runs"))?;
        let rows = st
            .query_map([lo.0, hi.0], run_row)
            .map_err(RunLogError::sql("reading runs"))?;
        rows.collect::<rusqlite::Result<_>>()
            .map_err(RunLogError::sql("reading runs"))
    }

    /// A run's events in recording order.
    ///
    /// # Errors
    /// [`RunLogError::NoRun`], [`RunLogError::Sql`].
    pub fn events(&self, n: RunNo) -> Result<Vec<EventRow>, RunLogError> {
        let id: i64 = self
            .conn
            .query_row("SELECT id FROM runs WHERE number = ?1", [n.0], |r| r.get(0))
            .optional()
            .map_err(RunLogError::sql("reading a run"))?
            .ok_or(RunLogError::NoRun(n))?;
        let mut st = self
            .conn
            .prepare_cached("SELECT id, at, kind, body FROM events WHERE run = ?1 ORDER BY id")
            .map_err(RunLogError::sql("reading events"))?;
        let rows = st
            .query_map([id], |r| {
                let kind: String = r.get(2)?;
                let body: String = r.get(3)?;
                Ok(EventRow {
                    id: r.get(0)?,
                    at: r.get(1)?,
                    event: Event::from_row(&kind, &body),
                    kind,
                    body,
                })
            })
            .map_err(RunLogError::sql("reading events"))?;
        rows.collect::<rusqlite::Result<_>>()
            .map_err(RunLogError::sql("reading events"))
    }

    /// Settled runs whose summary is still pending, oldest first.
    ///
    /// # Errors
    /// [`RunLogError::Sql`].
    pub fn pending_summaries(&self, limit: usize) -> Result<Vec<RunNo>, RunLogError> {
        let mut st = self
            .conn
            .prepare_cached(
                "SELECT number FROM runs WHERE summary_state = 'pending' ORDER BY number LIMIT ?1",
            )
            .map_err(RunLogError::sql("listing pending summaries"))?;
        let rows = st
            .query_map([limit as i64], |r| r.get::<_, u32>(0))
            .map_err(RunLogError::sql("listing pending summaries"))?;
        rows.map(|r| r.map(RunNo))
            .collect::<rusqlite::Result<_>>()
            .map_err(RunLogError::sql("listing pending summaries"))
    }

    /// Records a summary's outcome: `Ok(text)` → done, `Err(note)` → `state` (failed or
    /// unavailable) with the note. `model` is the `provider/model-id` asked.
    ///
    /// # Errors
    /// [`RunLogError::NoRun`], [`RunLogError::Sql`].
    pub fn set_summary(
        &mut self,
        n: RunNo,
        outcome: Result<&str, (SummaryState, &str)>,
        model: Option<&str>,
        at: i64,
    ) -> Result<(), RunLogError> {
        let (state, text, note) = match outcome {
            Ok(text) => (SummaryState::Done, Some(text), None),
            Err((state, note)) => (state, None, Some(note)),
        };
        let changed = db::write(&mut self.conn, "saving a summary", |tx| {
            tx.execute(
                "UPDATE runs SET summary_state = ?2, summary = ?3, summary_note = ?4, \
                 summary_model = ?5, summary_at = ?6 WHERE number = ?1",
                params![n.0, state.as_str(), text, note, model, at],
            )
        })?;
        if changed == 0 {
            return Err(RunLogError::NoRun(n));
        }
        Ok(())
    }

    /// Marks runs audited (the user saw their summaries before `/experience prepare` handed
    /// them to the agent).
    ///
    /// # Errors
    /// [`RunLogError::Sql`].
    pub fn mark_audited(&mut self, runs: &[RunNo], at: i64) -> Result<(), RunLogError> {
        db::write(&mut self.conn, "marking runs audited", |tx| {
            let mut st = tx.prepare_cached("UPDATE runs SET audited_at = ?2 WHERE number = ?1")?;
            for r in runs {
                st.execute(params![r.0, at])?;
            }
            Ok(())
        })
    }

    /// Settled runs with a done summary that no experience holds yet, oldest first: what
    /// `/experience prepare` hands the agent.
    ///
    /// # Errors
    /// [`RunLogError::Sql`].
    pub fn unmerged_summarized(&self, limit: usize) -> Result<Vec<RunRow>, RunLogError> {
        let sql = format!(
            "SELECT {RUN_COLUMNS} FROM runs r JOIN sessions s ON s.id = r.session \
             WHERE r.summary_state = 'done' AND NOT EXISTS \
             (SELECT 1 FROM sources so WHERE r.number BETWEEN so.lo AND so.hi) \
             ORDER BY r.number LIMIT ?1"
        );
        let mut st = self
            .conn
            .prepare_cached(&sql)
            .map_err(RunLogError::sql("listing runs to merge"))?;
        let rows = st
            .query_map([limit as i64], run_row)
            .map_err(RunLogError::sql("listing runs to merge"))?;
        rows.collect::<rusqlite::Result<_>>()
            .map_err(RunLogError::sql("listing runs to merge"))
    }

    /// Moves the WAL's content into the database file and truncates the WAL (for size
    /// figures; SQLite checkpoints by itself otherwise).
    ///
    /// # Errors
    /// [`RunLogError::Sql`].
    pub fn checkpoint(&self) -> Result<(), RunLogError> {
        self.conn
            .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
            .map_err(RunLogError::sql("checkpointing"))
    }

    /// What `/experience debug` shows.
    ///
    /// # Errors
    /// [`RunLogError::Sql`].
    pub fn diagnostics(&self) -> Result<Diagnostics, RunLogError> {
        let e = RunLogError::sql("reading diagnostics");
        let one =
            |sql: &str| -> rusqlite::Result<i64> { self.conn.query_row(sql, [], |r| r.get(0)) };
        let grouped = |sql: &str| -> rusqlite::Result<Vec<(String, i64)>> {
            let mut st = self.conn.prepare(sql)?;
            let rows = st.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
            rows.collect()
        };
        let bytes = [
            self.db.clone(),
            Utf8PathBuf::from(format!("{}-wal", self.db)),
        ]
        .iter()
        .filter_map(|p| std::fs::metadata(p).ok())
        .map(|m| m.len())
        .sum();
        let (uuids, sql_err) = {
            let mut st = self
                .conn
                .prepare("SELECT uuid FROM writers WHERE closed_at IS NULL");
            match st.as_mut() {
                Ok(st) => match st.query_map([], |r| r.get::<_, String>(0)) {
                    Ok(rows) => (rows.filter_map(Result::ok).collect::<Vec<_>>(), None),
                    Err(err) => (Vec::new(), Some(err)),
                },
                Err(_) => (Vec::new(), None),
            }
        };
        if let Some(err) = sql_err {
            return Err(RunLogError::Sql {
                what: "reading diagnostics",
                source: err,
            });
        }
        let live = uuids
            .iter()
            .filter(|u| {
                memory_lock::alive_mark_held(self.mark_path(u).as_std_path()).unwrap_or(false)
            })
            .count() as i64;
        let run = || -> rusqlite::Result<Diagnostics> {
            Ok(Diagnostics {
                path: self.db.to_string(),
                schema: db::user_version(&self.conn)?,
                bytes,
                journal_mode: self
                    .conn
                    .query_row("PRAGMA journal_mode", [], |r| r.get(0))?,
                synchronous: one("PRAGMA synchronous")?,
                runs: grouped(
                    "SELECT status, COUNT(*) FROM runs GROUP BY status ORDER BY CASE status \
                     WHEN 'running' THEN 0 WHEN 'completed' THEN 1 WHEN 'failed' THEN 2 \
                     WHEN 'interrupted' THEN 3 ELSE 4 END",
                )?,
                summaries: grouped(
                    "SELECT summary_state, COUNT(*) FROM runs GROUP BY summary_state \
                     ORDER BY summary_state",
                )?,
                events: one("SELECT COUNT(*) FROM events")?,
                sessions: one("SELECT COUNT(*) FROM sessions")?,
                writers: one("SELECT COUNT(*) FROM writers")?,
                live_writers: live,
                experiences: one("SELECT COUNT(*) FROM experiences WHERE merged_into IS NULL")?,
                integrity: self
                    .conn
                    .query_row("PRAGMA quick_check", [], |r| r.get(0))?,
            })
        };
        run().map_err(|source| match e(source) {
            err @ RunLogError::Sql { .. } => err,
            other => other,
        })
    }
}

/// Marks every `running` run of `writer` `recovery_required` (no end time: nobody saw it end)
/// and returns their numbers; shared by recovery of a dead writer and a writer abandoning its
/// own open runs.
pub(crate) fn cut_off_runs(
    conn: &mut rusqlite::Connection,
    writer: i64,
    what: &'static str,
) -> Result<Vec<RunNo>, RunLogError> {
    let runs = db::write(conn, what, |tx| {
        let mut st = tx.prepare(
            "UPDATE runs SET status = 'recovery_required' \
             WHERE writer = ?1 AND status = 'running' RETURNING number",
        )?;
        let rows = st.query_map([writer], |r| r.get::<_, u32>(0))?;
        rows.collect::<rusqlite::Result<Vec<u32>>>()
    })?;
    Ok(runs.into_iter().map(RunNo).collect())
}
