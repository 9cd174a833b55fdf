//! [`Writer`]: the recording side. One per recording process: it registers itself with a
//! liveness mark (so others can prove it dead later), opens sessions and runs, and appends
//! each batch of events in one transaction (PX-02, PX-05..PX-08).

use camino::Utf8Path;
use memory_lock::AliveMark;
use rusqlite::{OptionalExtension, Transaction, params};

use crate::db;
use crate::error::RunLogError;
use crate::event::{Event, MAX_TITLE_CHARS, RunStatus, Stamped, bound, terminal_status};
use crate::ids::RunNo;
use crate::log::RunLog;

/// What pi said about the session the events belong to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionStart {
    /// pi's session id.
    pub pi_session: String,
    /// pi's session file; `None` for an in-memory session (`--no-session`, PX-04).
    pub session_file: Option<String>,
    /// pi's `session_start` reason (`startup`, `new`, `resume`, `fork`, `reload`).
    pub reason: String,
    /// The working directory.
    pub cwd: String,
}

/// Something a batch did that the host may act on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Recorded {
    /// A run was opened.
    Opened(RunNo),
    /// A run ended with this status (its summary is now pending).
    Settled(RunNo, RunStatus),
    /// A run was left without a terminal state (a new session began before it settled):
    /// `recovery_required`, no end time.
    Abandoned(RunNo),
}

/// The recording side of a run log. Not `Sync`: keep it on one thread (the host's recorder).
pub struct Writer {
    log: RunLog,
    id: i64,
    mark: Option<AliveMark>,
    session: Option<i64>,
    current: Option<(i64, RunNo)>,
}

impl std::fmt::Debug for Writer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Writer")
            .field("id", &self.id)
            .field("current", &self.current)
            .finish()
    }
}

impl Writer {
    /// Opens the run log in `dir`, registers this process as a writer (a new UUID, its pid
    /// and host, a held liveness mark), then recovers the runs of dead writers.
    ///
    /// # Errors
    /// As [`RunLog::open`], plus [`RunLogError::Dir`] when the mark cannot be held.
    pub fn open(dir: &Utf8Path, now: i64) -> Result<Writer, RunLogError> {
        let mut log = RunLog::open(dir)?;
        let uuid = uuid::Uuid::new_v4().to_string();
        let mark_path = log.mark_path(&uuid);
        let mark = AliveMark::hold(mark_path.as_std_path()).map_err(|source| RunLogError::Dir {
            path: mark_path.clone(),
            source,
        })?;
        let pid = std::process::id();
        let host = memory_lock::hostname();
        let id = db::write(&mut log.conn, "registering the writer", |tx| {
            tx.execute(
                "INSERT INTO writers(uuid, pid, host, started_at) VALUES (?1, ?2, ?3, ?4)",
                params![uuid, pid, host, now],
            )?;
            Ok(tx.last_insert_rowid())
        })?;
        log.recover_except(Some(id))?;
        Ok(Writer {
            log,
            id,
            mark: Some(mark),
            session: None,
            current: None,
        })
    }

    /// The reading side of the same connection.
    pub fn log(&self) -> &RunLog {
        &self.log
    }

    /// The reading side, mutable (summaries, experiences).
    pub fn log_mut(&mut self) -> &mut RunLog {
        &mut self.log
    }

    /// The run being recorded, if any.
    pub fn current(&self) -> Option<RunNo> {
        self.current.map(|(_, n)| n)
    }

    /// Starts recording a session. A run still open from the previous session of this
    /// writer is abandoned first (it never settled). Fork lineage is `unresolved` (PX-19).
    ///
    /// # Errors
    /// [`RunLogError::Sql`].
    pub fn start_session(
        &mut self,
        s: &SessionStart,
        at: i64,
    ) -> Result<Vec<Recorded>, RunLogError> {
        let abandoned = self.current.take();
        let writer = self.id;
        let lineage = (s.reason == "fork").then_some("unresolved");
        let session = db::write(&mut self.log.conn, "starting a session", |tx| {
            if let Some((run, _)) = abandoned {
                abandon(tx, run)?;
            }
            tx.execute(
                "INSERT INTO sessions(writer, pi_session, session_file, reason, lineage, cwd, \
                 started_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                params![
                    writer,
                    s.pi_session,
                    s.session_file,
                    s.reason,
                    lineage,
                    s.cwd,
                    at
                ],
            )?;
            Ok(tx.last_insert_rowid())
        })?;
        self.session = Some(session);
        Ok(abandoned
            .map(|(_, n)| Recorded::Abandoned(n))
            .into_iter()
            .collect())
    }

    /// Appends a batch of events in one transaction, in order. `RunStart` opens a run (the
    /// next number, a new UUID) unless one is open (then it continues it: a retry),
    /// `Settled` ends it with its terminal status; every other event belongs to the open run,
    /// or to the session when none is open (a `!` command between runs, a model change).
    ///
    /// # Errors
    /// [`RunLogError::NoSession`], [`RunLogError::Sql`]. A failed batch leaves nothing.
    pub fn record(&mut self, batch: &[Stamped]) -> Result<Vec<Recorded>, RunLogError> {
        let session = self.session.ok_or(RunLogError::NoSession)?;
        let writer = self.id;
        let start = self.current;
        let (current, effects) = db::write(&mut self.log.conn, "recording events", |tx| {
            let mut current = start;
            let mut effects = Vec::new();
            for s in batch {
                apply(tx, writer, session, &mut current, s, &mut effects)?;
            }
            Ok((current, effects))
        })?;
        self.current = current;
        Ok(effects)
    }

    /// Marks this writer's running runs `recovery_required` (the host is going away without
    /// their settle: pi quit or died mid-run). No end time is written.
    ///
    /// # Errors
    /// [`RunLogError::Sql`].
    pub fn abandon_running(&mut self) -> Result<Vec<RunNo>, RunLogError> {
        let writer = self.id;
        self.current = None;
        crate::log::cut_off_runs(&mut self.log.conn, writer, "abandoning open runs")
    }

    /// A clean exit: abandons open runs, records the close and removes the liveness mark.
    ///
    /// # Errors
    /// [`RunLogError::Sql`], [`RunLogError::Dir`].
    pub fn close(mut self, at: i64) -> Result<Vec<RunNo>, RunLogError> {
        let abandoned = self.abandon_running()?;
        let writer = self.id;
        db::write(&mut self.log.conn, "closing the writer", |tx| {
            tx.execute(
                "UPDATE writers SET closed_at = ?2 WHERE id = ?1",
                params![writer, at],
            )
        })?;
        if let Some(mark) = self.mark.take() {
            let path = mark.path().to_owned();
            mark.release().map_err(|source| RunLogError::Dir {
                path: camino::Utf8PathBuf::from_path_buf(path)
                    .unwrap_or_else(|p| camino::Utf8PathBuf::from(p.to_string_lossy().as_ref())),
                source,
            })?;
        }
        Ok(abandoned)
    }
}

fn abandon(tx: &Transaction<'_>, run: i64) -> rusqlite::Result<()> {
    tx.execute(
        "UPDATE runs SET status = 'recovery_required' WHERE id = ?1 AND status = 'running'",
        [run],
    )?;
    Ok(())
}

/// One event inside the batch's transaction.
fn apply(
    tx: &Transaction<'_>,
    writer: i64,
    session: i64,
    current: &mut Option<(i64, RunNo)>,
    s: &Stamped,
    effects: &mut Vec<Recorded>,
) -> rusqlite::Result<()> {
    let event = s.event.clone().bounded();
    // Decision: an `agent_start` while a run is open continues that run. pi starts a new
    // low-level run for a retry, after an overflow compaction (a `length` stop) and for queued
    // follow-ups, but settles once (docs/pi-host.md §e, §l): the run is prompt → settle.
    if matches!(event, Event::RunStart) && current.is_none() {
        let number: u32 =
            tx.query_row("SELECT COALESCE(MAX(number), 0) + 1 FROM runs", [], |r| {
                r.get(0)
            })?;
        let uuid = uuid::Uuid::new_v4().to_string();
        tx.prepare_cached(
            "INSERT INTO runs(uuid, number, session, writer, status, started_at) \
             VALUES (?1, ?2, ?3, ?4, 'running', ?5)",
        )?
        .execute(params![uuid, number, session, writer, s.at])?;
        let id = tx.last_insert_rowid();
        *current = Some((id, RunNo(number)));
        effects.push(Recorded::Opened(RunNo(number)));
    }
    let run = current.map(|(id, _)| id);
    tx.prepare_cached(
        "INSERT INTO events(session, run, at, kind, body) VALUES (?1, ?2, ?3, ?4, ?5)",
    )?
    .execute(params![session, run, s.at, event.kind(), event.body()])?;
    let Some((run, n)) = *current else {
        return Ok(());
    };
    match &event {
        Event::Prompt { text } => {
            let title = bound(text.trim(), MAX_TITLE_CHARS).replace(['\n', '\r', '\t'], " ");
            tx.prepare_cached("UPDATE runs SET title = ?2 WHERE id = ?1 AND title = ''")?
                .execute(params![run, title])?;
        }
        Event::Assistant {
            model: Some(model), ..
        } => {
            tx.prepare_cached("UPDATE runs SET model = ?2 WHERE id = ?1 AND model IS NULL")?
                .execute(params![run, model])?;
        }
        Event::Settled { aborted } => {
            let last: Option<(Option<String>, Option<String>)> = tx
                .prepare_cached(
                    "SELECT json_extract(body, '$.stopReason'), json_extract(body, '$.error') \
                     FROM events WHERE run = ?1 AND kind = 'assistant' ORDER BY id DESC LIMIT 1",
                )?
                .query_row([run], |r| Ok((r.get(0)?, r.get(1)?)))
                .optional()?;
            let unanswered: i64 = tx
                .prepare_cached(
                    "SELECT COUNT(*) FROM events c WHERE c.run = ?1 AND c.kind = 'toolCall' \
                     AND NOT EXISTS (SELECT 1 FROM events r WHERE r.run = ?1 \
                     AND r.kind = 'toolResult' \
                     AND json_extract(r.body, '$.id') = json_extract(c.body, '$.id'))",
                )?
                .query_row([run], |r| r.get(0))?;
            let (stop, error) = last.unwrap_or((None, None));
            let status = terminal_status(
                stop.as_deref(),
                *aborted,
                usize::try_from(unanswered).unwrap_or(usize::MAX),
            );
            tx.prepare_cached(
                "UPDATE runs SET status = ?2, stop_reason = ?3, error = ?4, ended_at = ?5, \
                 summary_state = 'pending' WHERE id = ?1",
            )?
            .execute(params![run, status.as_str(), stop, error, s.at])?;
            *current = None;
            effects.push(Recorded::Settled(n, status));
        }
        _ => {}
    }
    Ok(())
}
