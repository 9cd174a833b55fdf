//! Experiences (`E1`, `E2`, …): what was learned, made of runs and of other experiences
//! (PX-12..PX-15).
//!
//! * A **source** of an experience is an interval of runs (`R03-R05`). Decision (VECTORS
//!   §Z 17, PX-13's "overlapping intervals"): the direct sources of all experiences never
//!   overlap, so every run is a direct source of at most one experience; a parent holds its
//!   children's runs by inheritance, not as sources of its own.
//! * An experience has **at most one direct parent**; attaching refuses cycles, a relation
//!   that exists already (duplicate) and a second parent.
//! * **Merging** takes root experiences only: the merged ones' sources and children move to
//!   the target, which keeps its number; the merged numbers answer "merged into E…".
//! * The **source time range** of an experience comes from every run of its subtree: the
//!   earliest start, and the latest confirmed end — unknown while any of those runs has no
//!   confirmed end (PX-15, VECTORS PX-V8).
//!
//! Every operation validates on the whole graph inside one immediate transaction, so a
//! refused operation changes nothing and two processes cannot interleave.

use std::collections::{BTreeMap, BTreeSet};

use rusqlite::{OptionalExtension, Transaction, params};
use serde::Serialize;

use crate::db;
use crate::error::{ExperienceError, RunLogError};
use crate::ids::{ExpNo, Interval, RunNo};
use crate::log::RunLog;

/// Longest experience title, in characters.
pub const MAX_TITLE_CHARS: usize = 200;
/// Longest experience summary, in characters.
pub const MAX_SUMMARY_CHARS: usize = 8000;

/// An experience's inherited source time range (PX-15).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TimeRange {
    /// Runs in the subtree.
    pub runs: usize,
    /// The earliest start (Unix ms); `None` without runs.
    pub start: Option<i64>,
    /// The latest confirmed end (Unix ms); `None` without runs or while any run has no
    /// confirmed end.
    pub end: Option<i64>,
}

/// One experience as shown.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ExperienceRow {
    /// `E1`.
    pub number: ExpNo,
    /// Its direct parent.
    pub parent: Option<ExpNo>,
    /// Short title.
    pub title: String,
    /// What was learned.
    pub summary: String,
    /// Its direct sources.
    pub sources: Vec<Interval>,
    /// Its direct children.
    pub children: Vec<ExpNo>,
    /// The inherited source time range.
    pub range: TimeRange,
    /// The memory entry file it became (`/experience remember`).
    pub remembered: Option<String>,
    /// Experiences merged into this one.
    pub merged: Vec<ExpNo>,
}

/// What [`RunLog::create_experience`] needs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NewExperience {
    /// Short title (required).
    pub title: String,
    /// What was learned.
    pub summary: String,
    /// Direct sources.
    pub sources: Vec<Interval>,
    /// Root experiences to put under the new one.
    pub children: Vec<ExpNo>,
    /// The parent to put it under.
    pub parent: Option<ExpNo>,
}

#[derive(Debug, Clone)]
struct Node {
    id: i64,
    parent: Option<u32>,
    merged_into: Option<u32>,
    sources: Vec<Interval>,
}

/// The whole experience graph, read inside a transaction.
#[derive(Debug, Default)]
struct Graph {
    nodes: BTreeMap<u32, Node>,
}

impl Graph {
    fn load(tx: &Transaction<'_>) -> rusqlite::Result<Graph> {
        let mut nodes = BTreeMap::new();
        {
            let mut st = tx.prepare(
                "SELECT e.id, e.number, p.number, m.number FROM experiences e \
                 LEFT JOIN experiences p ON p.id = e.parent \
                 LEFT JOIN experiences m ON m.id = e.merged_into",
            )?;
            let rows = st.query_map([], |r| {
                Ok((
                    r.get::<_, u32>(1)?,
                    Node {
                        id: r.get(0)?,
                        parent: r.get(2)?,
                        merged_into: r.get(3)?,
                        sources: Vec::new(),
                    },
                ))
            })?;
            for row in rows {
                let (n, node) = row?;
                nodes.insert(n, node);
            }
        }
        let mut st = tx.prepare(
            "SELECT e.number, s.lo, s.hi FROM sources s JOIN experiences e ON e.id = s.experience \
             ORDER BY s.lo",
        )?;
        let rows = st.query_map([], |r| {
            Ok((
                r.get::<_, u32>(0)?,
                r.get::<_, u32>(1)?,
                r.get::<_, u32>(2)?,
            ))
        })?;
        for row in rows {
            let (n, lo, hi) = row?;
            if let Some(node) = nodes.get_mut(&n) {
                node.sources.push(Interval {
                    lo: RunNo(lo),
                    hi: RunNo(hi),
                });
            }
        }
        Ok(Graph { nodes })
    }

    /// The live node `n`: missing → NoExperience, merged → Merged (to the final target).
    fn live(&self, n: ExpNo) -> Result<&Node, ExperienceError> {
        let node = self
            .nodes
            .get(&n.0)
            .ok_or(ExperienceError::NoExperience(n))?;
        if node.merged_into.is_some() {
            let mut target = n.0;
            let mut hops = 0;
            while let Some(next) = self.nodes.get(&target).and_then(|x| x.merged_into) {
                target = next;
                hops += 1;
                if hops > self.nodes.len() {
                    break;
                }
            }
            return Err(ExperienceError::Merged(n, ExpNo(target)));
        }
        Ok(node)
    }

    /// Whether `ancestor` is `n` or above it.
    fn is_ancestor_or_self(&self, ancestor: u32, n: u32) -> bool {
        let mut cur = Some(n);
        let mut steps = 0;
        while let Some(c) = cur {
            if c == ancestor {
                return true;
            }
            cur = self.nodes.get(&c).and_then(|x| x.parent);
            steps += 1;
            if steps > self.nodes.len() {
                return true; // a cycle on disk: refuse rather than loop
            }
        }
        false
    }

    fn check_attach(&self, child: ExpNo, parent: ExpNo) -> Result<(), ExperienceError> {
        let c = self.live(child)?;
        self.live(parent)?;
        if child == parent {
            return Err(ExperienceError::SelfCombine(child));
        }
        if c.parent == Some(parent.0) {
            return Err(ExperienceError::DuplicateParent { child, parent });
        }
        if let Some(current) = c.parent {
            return Err(ExperienceError::SecondParent {
                child,
                current: ExpNo(current),
            });
        }
        if self.is_ancestor_or_self(child.0, parent.0) {
            return Err(ExperienceError::Cycle { child, parent });
        }
        Ok(())
    }

    /// Refuses intervals that overlap each other or any live experience's source.
    fn check_sources(&self, intervals: &[Interval]) -> Result<(), ExperienceError> {
        for (i, a) in intervals.iter().enumerate() {
            if let Some(b) = intervals[..i].iter().find(|b| a.overlaps(b)) {
                return Err(ExperienceError::Invalid(format!(
                    "{a} overlaps {b} in the same request"
                )));
            }
            for (n, node) in &self.nodes {
                if node.merged_into.is_some() {
                    continue;
                }
                if let Some(other) = node.sources.iter().find(|s| s.overlaps(a)) {
                    return Err(ExperienceError::Overlap {
                        interval: *a,
                        other: *other,
                        holder: ExpNo(*n),
                    });
                }
            }
        }
        Ok(())
    }
}

/// Every run of `intervals` must exist.
fn check_runs_exist(tx: &Transaction<'_>, intervals: &[Interval]) -> Result<(), ExperienceError> {
    let mut st = tx
        .prepare_cached("SELECT COUNT(*) FROM runs WHERE number BETWEEN ?1 AND ?2")
        .map_err(sql("checking runs"))?;
    for i in intervals {
        let have: u32 = st
            .query_row([i.lo.0, i.hi.0], |r| r.get(0))
            .map_err(sql("checking runs"))?;
        if have != i.hi.0 - i.lo.0 + 1 {
            let mut exists = tx
                .prepare_cached("SELECT 1 FROM runs WHERE number = ?1")
                .map_err(sql("checking runs"))?;
            for r in i.runs() {
                let found = exists
                    .query_row([r.0], |_| Ok(()))
                    .optional()
                    .map_err(sql("checking runs"))?;
                if found.is_none() {
                    return Err(ExperienceError::NoRun(r));
                }
            }
        }
    }
    Ok(())
}

fn sql(what: &'static str) -> impl Fn(rusqlite::Error) -> ExperienceError {
    move |source| ExperienceError::Log(RunLogError::Sql { what, source })
}

fn clean_title(title: &str) -> Result<String, ExperienceError> {
    let t = title.trim();
    if t.is_empty() {
        return Err(ExperienceError::Invalid("title is required".into()));
    }
    if t.chars().count() > MAX_TITLE_CHARS {
        return Err(ExperienceError::Invalid(format!(
            "title is longer than {MAX_TITLE_CHARS} characters"
        )));
    }
    Ok(t.replace(['\n', '\r', '\t'], " "))
}

fn clean_summary(summary: &str) -> Result<String, ExperienceError> {
    let s = summary.trim();
    if s.chars().count() > MAX_SUMMARY_CHARS {
        return Err(ExperienceError::Invalid(format!(
            "summary is longer than {MAX_SUMMARY_CHARS} characters"
        )));
    }
    Ok(s.to_owned())
}

/// Runs `f` in one immediate transaction; an `Err` from `f` rolls everything back.
fn transact<T>(
    log: &mut RunLog,
    f: impl Fn(&Transaction<'_>) -> Result<T, ExperienceError>,
) -> Result<T, ExperienceError> {
    // The rules' errors must survive the busy retry, which only sees SQLite errors: carry
    // them out through a side slot.
    let mut refused: Option<ExperienceError> = None;
    let out = db::write(&mut log.conn, "changing experiences", |tx| match f(tx) {
        Ok(v) => Ok(Some(v)),
        Err(ExperienceError::Log(RunLogError::Sql { source, .. })) => Err(source),
        Err(e) => {
            refused = Some(e);
            // Roll back: nothing of a refused operation stays.
            Err(rusqlite::Error::QueryReturnedNoRows)
        }
    });
    match (out, refused) {
        (_, Some(e)) => Err(e),
        (Ok(Some(v)), None) => Ok(v),
        (Ok(None), None) => Err(ExperienceError::Invalid("nothing was done".into())),
        (Err(e), None) => Err(ExperienceError::Log(e)),
    }
}

impl RunLog {
    /// Creates an experience with its sources, children and parent (all validated first).
    ///
    /// # Errors
    /// Any [`ExperienceError`] rule; nothing changes then.
    pub fn create_experience(
        &mut self,
        new: &NewExperience,
        at: i64,
    ) -> Result<ExpNo, ExperienceError> {
        let title = clean_title(&new.title)?;
        let summary = clean_summary(&new.summary)?;
        transact(self, |tx| {
            let g = Graph::load(tx).map_err(sql("reading experiences"))?;
            check_runs_exist(tx, &new.sources)?;
            g.check_sources(&new.sources)?;
            let mut seen = BTreeSet::new();
            for c in &new.children {
                let node = g.live(*c)?;
                if !seen.insert(*c) {
                    return Err(ExperienceError::Invalid(format!(
                        "{c} is named twice in children"
                    )));
                }
                if let Some(current) = node.parent {
                    return Err(ExperienceError::SecondParent {
                        child: *c,
                        current: ExpNo(current),
                    });
                }
            }
            let parent_id = match new.parent {
                Some(p) => Some(g.live(p)?.id),
                None => None,
            };
            // A parent that is one of the children, or inside one, would close a cycle
            // through the new experience (found by the combine-sequence property test).
            if let Some(p) = new.parent
                && let Some(c) = new
                    .children
                    .iter()
                    .find(|c| g.is_ancestor_or_self(c.0, p.0))
            {
                return Err(ExperienceError::Cycle {
                    child: *c,
                    parent: p,
                });
            }
            let number: u32 = tx
                .query_row(
                    "SELECT COALESCE(MAX(number), 0) + 1 FROM experiences",
                    [],
                    |r| r.get(0),
                )
                .map_err(sql("numbering"))?;
            tx.execute(
                "INSERT INTO experiences(number, parent, title, summary, created_at, updated_at) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?5)",
                params![number, parent_id, title, summary, at],
            )
            .map_err(sql("creating an experience"))?;
            let id = tx.last_insert_rowid();
            for s in &new.sources {
                tx.execute(
                    "INSERT INTO sources(experience, lo, hi) VALUES (?1, ?2, ?3)",
                    params![id, s.lo.0, s.hi.0],
                )
                .map_err(sql("adding sources"))?;
            }
            for c in &new.children {
                tx.execute(
                    "UPDATE experiences SET parent = ?1, updated_at = ?3 WHERE number = ?2",
                    params![id, c.0, at],
                )
                .map_err(sql("attaching children"))?;
            }
            Ok(ExpNo(number))
        })
    }

    /// Puts `child` under `parent`.
    ///
    /// # Errors
    /// Cycle, duplicate parent relation, second parent, unknown or merged experiences.
    pub fn attach(&mut self, child: ExpNo, parent: ExpNo, at: i64) -> Result<(), ExperienceError> {
        transact(self, |tx| {
            let g = Graph::load(tx).map_err(sql("reading experiences"))?;
            g.check_attach(child, parent)?;
            let pid = g.live(parent)?.id;
            tx.execute(
                "UPDATE experiences SET parent = ?1, updated_at = ?3 WHERE number = ?2",
                params![pid, child.0, at],
            )
            .map_err(sql("attaching"))?;
            Ok(())
        })
    }

    /// Makes `child` a root again.
    ///
    /// # Errors
    /// Unknown or merged experience, or one without a parent.
    pub fn detach(&mut self, child: ExpNo, at: i64) -> Result<(), ExperienceError> {
        transact(self, |tx| {
            let g = Graph::load(tx).map_err(sql("reading experiences"))?;
            if g.live(child)?.parent.is_none() {
                return Err(ExperienceError::Invalid(format!("{child} has no parent")));
            }
            tx.execute(
                "UPDATE experiences SET parent = NULL, updated_at = ?2 WHERE number = ?1",
                params![child.0, at],
            )
            .map_err(sql("detaching"))?;
            Ok(())
        })
    }

    /// Adds direct sources to `exp`.
    ///
    /// # Errors
    /// Overlapping intervals, unknown runs, unknown or merged experience.
    pub fn add_sources(
        &mut self,
        exp: ExpNo,
        intervals: &[Interval],
        at: i64,
    ) -> Result<(), ExperienceError> {
        if intervals.is_empty() {
            return Err(ExperienceError::Invalid("runs is required".into()));
        }
        transact(self, |tx| {
            let g = Graph::load(tx).map_err(sql("reading experiences"))?;
            let id = g.live(exp)?.id;
            check_runs_exist(tx, intervals)?;
            g.check_sources(intervals)?;
            for s in intervals {
                tx.execute(
                    "INSERT INTO sources(experience, lo, hi) VALUES (?1, ?2, ?3)",
                    params![id, s.lo.0, s.hi.0],
                )
                .map_err(sql("adding sources"))?;
            }
            tx.execute(
                "UPDATE experiences SET updated_at = ?2 WHERE id = ?1",
                params![id, at],
            )
            .map_err(sql("adding sources"))?;
            Ok(())
        })
    }

    /// Merges root experiences `from` into the root `into` (PX-14): their sources and
    /// children move to `into`; their numbers then answer "merged into".
    ///
    /// # Errors
    /// Not a root, self-merge, duplicates, unknown or merged experiences.
    pub fn merge(&mut self, into: ExpNo, from: &[ExpNo], at: i64) -> Result<(), ExperienceError> {
        if from.is_empty() {
            return Err(ExperienceError::Invalid("from is required".into()));
        }
        transact(self, |tx| {
            let g = Graph::load(tx).map_err(sql("reading experiences"))?;
            let target = g.live(into)?;
            if let Some(p) = target.parent {
                return Err(ExperienceError::NotRoot {
                    exp: into,
                    parent: ExpNo(p),
                });
            }
            let mut seen = BTreeSet::new();
            for f in from {
                let node = g.live(*f)?;
                if *f == into {
                    return Err(ExperienceError::SelfCombine(into));
                }
                if !seen.insert(*f) {
                    return Err(ExperienceError::Invalid(format!(
                        "{f} is named twice in from"
                    )));
                }
                if let Some(p) = node.parent {
                    return Err(ExperienceError::NotRoot {
                        exp: *f,
                        parent: ExpNo(p),
                    });
                }
            }
            for f in from {
                let fid = g.live(*f)?.id;
                for stmt in [
                    "UPDATE sources SET experience = ?1 WHERE experience = ?2",
                    "UPDATE experiences SET parent = ?1 WHERE parent = ?2",
                    "UPDATE experiences SET merged_into = ?1, updated_at = ?3 WHERE id = ?2",
                    "UPDATE experiences SET remembered = (SELECT remembered FROM experiences \
                     WHERE id = ?2) WHERE id = ?1 AND remembered IS NULL",
                ] {
                    let p = if stmt.contains("?3") {
                        tx.execute(stmt, params![target.id, fid, at])
                    } else {
                        tx.execute(stmt, params![target.id, fid])
                    };
                    p.map_err(sql("merging"))?;
                }
            }
            tx.execute(
                "UPDATE experiences SET updated_at = ?2 WHERE id = ?1",
                params![target.id, at],
            )
            .map_err(sql("merging"))?;
            Ok(())
        })
    }

    /// Changes an experience's title and/or summary.
    ///
    /// # Errors
    /// Unknown or merged experience, an empty or too long title.
    pub fn update_experience(
        &mut self,
        exp: ExpNo,
        title: Option<&str>,
        summary: Option<&str>,
        at: i64,
    ) -> Result<(), ExperienceError> {
        let title = title.map(clean_title).transpose()?;
        let summary = summary.map(clean_summary).transpose()?;
        if title.is_none() && summary.is_none() {
            return Err(ExperienceError::Invalid("give a title or a summary".into()));
        }
        transact(self, |tx| {
            let g = Graph::load(tx).map_err(sql("reading experiences"))?;
            let id = g.live(exp)?.id;
            tx.execute(
                "UPDATE experiences SET title = COALESCE(?2, title), \
                 summary = COALESCE(?3, summary), updated_at = ?4 WHERE id = ?1",
                params![id, title, summary, at],
            )
            .map_err(sql("updating"))?;
            Ok(())
        })
    }

    /// Records the memory entry an experience became.
    ///
    /// # Errors
    /// Unknown or merged experience.
    pub fn set_remembered(
        &mut self,
        exp: ExpNo,
        file: &str,
        at: i64,
    ) -> Result<(), ExperienceError> {
        transact(self, |tx| {
            let g = Graph::load(tx).map_err(sql("reading experiences"))?;
            let id = g.live(exp)?.id;
            tx.execute(
                "UPDATE experiences SET remembered = ?2, updated_at = ?3 WHERE id = ?1",
                params![id, file, at],
            )
            .map_err(sql("recording the memory"))?;
            Ok(())
        })
    }

    /// Every live experience, roots first in number order, each followed by its subtree.
    ///
    /// # Errors
    /// [`RunLogError::Sql`].
    pub fn experiences(&self) -> Result<Vec<ExperienceRow>, RunLogError> {
        let all = self.experience_rows()?;
        let mut by_parent: BTreeMap<Option<ExpNo>, Vec<ExperienceRow>> = BTreeMap::new();
        for row in all {
            by_parent.entry(row.parent).or_default().push(row);
        }
        let mut out = Vec::new();
        fn walk(
            at: Option<ExpNo>,
            by_parent: &mut BTreeMap<Option<ExpNo>, Vec<ExperienceRow>>,
            out: &mut Vec<ExperienceRow>,
        ) {
            for row in by_parent.remove(&at).unwrap_or_default() {
                let n = row.number;
                out.push(row);
                walk(Some(n), by_parent, out);
            }
        }
        walk(None, &mut by_parent, &mut out);
        Ok(out)
    }

    /// One experience (a merged number answers with [`ExperienceError::Merged`]).
    ///
    /// # Errors
    /// [`ExperienceError::NoExperience`], [`ExperienceError::Merged`].
    pub fn experience(&self, n: ExpNo) -> Result<ExperienceRow, ExperienceError> {
        let merged: Option<Option<u32>> = self
            .conn
            .query_row(
                "SELECT m.number FROM experiences e LEFT JOIN experiences m ON m.id = e.merged_into \
                 WHERE e.number = ?1",
                [n.0],
                |r| r.get(0),
            )
            .optional()
            .map_err(sql("reading an experience"))?;
        match merged {
            None => return Err(ExperienceError::NoExperience(n)),
            Some(Some(into)) => {
                // Follow the chain to the live target.
                let mut target = ExpNo(into);
                loop {
                    match self.experience(target) {
                        Err(ExperienceError::Merged(_, t)) if t != target => target = t,
                        _ => break,
                    }
                }
                return Err(ExperienceError::Merged(n, target));
            }
            Some(None) => {}
        }
        self.experience_rows()?
            .into_iter()
            .find(|r| r.number == n)
            .ok_or(ExperienceError::NoExperience(n))
    }

    /// Every live experience with sources, children and inherited ranges.
    fn experience_rows(&self) -> Result<Vec<ExperienceRow>, RunLogError> {
        let err = RunLogError::sql;
        let mut st = self
            .conn
            .prepare_cached(
                "SELECT e.number, p.number, e.title, e.summary, e.remembered FROM experiences e \
                 LEFT JOIN experiences p ON p.id = e.parent WHERE e.merged_into IS NULL \
                 ORDER BY e.number",
            )
            .map_err(err("reading experiences"))?;
        let mut rows: Vec<ExperienceRow> = st
            .query_map([], |r| {
                Ok(ExperienceRow {
                    number: ExpNo(r.get(0)?),
                    parent: r.get::<_, Option<u32>>(1)?.map(ExpNo),
                    title: r.get(2)?,
                    summary: r.get(3)?,
                    sources: Vec::new(),
                    children: Vec::new(),
                    range: TimeRange {
                        runs: 0,
                        start: None,
                        end: None,
                    },
                    remembered: r.get(4)?,
                    merged: Vec::new(),
                })
            })
            .map_err(err("reading experiences"))?
            .collect::<rusqlite::Result<_>>()
            .map_err(err("reading experiences"))?;
        let mut st = self
            .conn
            .prepare_cached(
                "SELECT e.number, s.lo, s.hi FROM sources s JOIN experiences e \
                 ON e.id = s.experience ORDER BY s.lo",
            )
            .map_err(err("reading sources"))?;
        let sources: Vec<(u32, u32, u32)> = st
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .map_err(err("reading sources"))?
            .collect::<rusqlite::Result<_>>()
            .map_err(err("reading sources"))?;
        let mut st = self
            .conn
            .prepare_cached(
                "SELECT e.number, m.number FROM experiences e JOIN experiences m \
                 ON m.id = e.merged_into ORDER BY e.number",
            )
            .map_err(err("reading merges"))?;
        let merges: Vec<(u32, u32)> = st
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .map_err(err("reading merges"))?
            .collect::<rusqlite::Result<_>>()
            .map_err(err("reading merges"))?;
        let index: BTreeMap<ExpNo, usize> = rows
            .iter()
            .enumerate()
            .map(|(i, r)| (r.number, i))
            .collect();
        for (e, lo, hi) in sources {
            if let Some(&i) = index.get(&ExpNo(e)) {
                rows[i].sources.push(Interval {
                    lo: RunNo(lo),
                    hi: RunNo(hi),
                });
            }
        }
        for (e, into) in merges {
            if let Some(&i) = index.get(&ExpNo(into)) {
                rows[i].merged.push(ExpNo(e));
            }
        }
        let parents: Vec<(ExpNo, Option<ExpNo>)> =
            rows.iter().map(|r| (r.number, r.parent)).collect();
        for (child, parent) in &parents {
            if let Some(&i) = parent.and_then(|p| index.get(&p)) {
                rows[i].children.push(*child);
            }
        }
        // Inherited ranges: every run of the subtree.
        let times = self.run_times()?;
        for i in 0..rows.len() {
            let mut runs = Vec::new();
            let mut stack = vec![rows[i].number];
            let mut guard = 0;
            while let Some(n) = stack.pop() {
                guard += 1;
                if guard > rows.len() + 1 {
                    break;
                }
                if let Some(&j) = index.get(&n) {
                    runs.extend(rows[j].sources.iter().flat_map(Interval::runs));
                    stack.extend(rows[j].children.iter().copied());
                }
            }
            rows[i].range = inherited_range(&runs, &times);
        }
        Ok(rows)
    }

    /// `(started_at, ended_at)` of every run.
    fn run_times(&self) -> Result<BTreeMap<RunNo, (i64, Option<i64>)>, RunLogError> {
        let mut st = self
            .conn
            .prepare_cached("SELECT number, started_at, ended_at FROM runs")
            .map_err(RunLogError::sql("reading run times"))?;
        let rows = st
            .query_map([], |r| Ok((RunNo(r.get(0)?), (r.get(1)?, r.get(2)?))))
            .map_err(RunLogError::sql("reading run times"))?;
        rows.collect::<rusqlite::Result<_>>()
            .map_err(RunLogError::sql("reading run times"))
    }
}

/// The source time range of a set of runs (PX-15): earliest start; latest end, unknown while
/// any run lacks a confirmed end.
pub fn inherited_range(runs: &[RunNo], times: &BTreeMap<RunNo, (i64, Option<i64>)>) -> TimeRange {
    let mut start: Option<i64> = None;
    let mut end: Option<i64> = None;
    let mut unknown_end = false;
    let mut count = 0;
    for r in runs {
        let Some(&(s, e)) = times.get(r) else {
            continue;
        };
        count += 1;
        start = Some(start.map_or(s, |x| x.min(s)));
        match e {
            Some(e) => end = Some(end.map_or(e, |x| x.max(e))),
            None => unknown_end = true,
        }
    }
    TimeRange {
        runs: count,
        start,
        end: if unknown_end { None } else { end },
    }
}
