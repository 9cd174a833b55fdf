//! The run log in the sidecar (pi-experience, PX-02..PX-20): recording pi's runs, their
//! summaries, `/experience`, its panel and the `experience` tool.
//!
//! **Recording never delays a turn.** pi's events arrive as `run/event` notifications (no
//! answer is awaited); the reader thread only queues them. One recorder thread writes
//! whatever is queued as one transaction (so a burst of tool events costs one `fsync`),
//! opens the run log once the session is known, and hands settled runs to a background
//! summary task. `/experience` requests and `session/shutdown` flush the queue first, so they
//! see every event pi sent before them; end of input (pi quit or died) closes the writer,
//! which marks a run still open `recovery_required` with no end time.
//!
//! Decision: every pi session records, headless children included, because pi cannot tell a
//! subagent's `pi -p --no-session` from a user's (PX-04 requires `--no-session` to work);
//! `experience.enabled: false` in memory.json turns recording off.

use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Weak};
use std::time::Duration;

use memory_core::Task;
use memory_runlog::summary::{SummaryJob, failed_note, no_model_note, summarize};
use memory_runlog::texts::{self, EN, fill};
use memory_runlog::{
    Recorded, RunLog, RunNo, SessionStart, Stamped, SummaryState, Writer, now_ms, runlog_dir,
};
use parking_lot::Mutex;
use serde_json::Value;

use super::Server;
use super::agent::model_for;
use super::pimodel::PiModel;
use super::protocol::{
    ExperienceRunParams, ExperienceRunResult, ExperienceToolParams, ExperienceToolResult,
    ForwardingStats, Level, PanelParams, PanelResult, RunEventParams,
};
use super::rpc::RpcError;
use super::session::Session;
use crate::experience::{self as read, Sub};

/// The catalog for what the user of this session reads (the `experience` tool's results,
/// which the model reads, stay [`EN`]).
fn user_texts(session: &Session) -> &'static texts::Catalog {
    texts::catalog(memory_core::ui_language(&session.cfg))
}

/// Events held while no session is known yet; more are counted as dropped.
const MAX_PENDING: usize = 10_000;
/// How long a flush waits for the recorder.
const FLUSH_WAIT: Duration = Duration::from_secs(30);

enum Msg {
    Event(Stamped),
    Flush(Sender<()>),
    Close(Sender<()>),
}

/// What `/experience debug` reports about the recorder.
#[derive(Debug, Default, Clone)]
struct Stats {
    received: u64,
    written: u64,
    batches: u64,
    dropped: u64,
    state: String,
    last_error: Option<String>,
}

/// The recorder of one sidecar: a queue and its thread, started with the first event.
#[derive(Default)]
pub(super) struct Recorder {
    tx: Mutex<Option<Sender<Msg>>>,
    thread: Mutex<Option<std::thread::JoinHandle<()>>>,
    stats: Arc<Mutex<Stats>>,
    closed: Mutex<bool>,
}

impl Recorder {
    fn send(&self, server: &Arc<Server>, msg: Msg) -> bool {
        if *self.closed.lock() {
            return false;
        }
        let mut tx = self.tx.lock();
        if tx.is_none() {
            let (sender, receiver) = mpsc::channel();
            let weak = Arc::downgrade(server);
            let stats = self.stats.clone();
            stats.lock().state = "waiting for the session".into();
            match std::thread::Builder::new()
                .name("pimem-recorder".into())
                .spawn(move || record_loop(&weak, &receiver, &stats))
            {
                Ok(handle) => *self.thread.lock() = Some(handle),
                Err(e) => {
                    eprintln!("pimem serve: cannot start the run recorder: {e}");
                    return false;
                }
            }
            *tx = Some(sender);
        }
        tx.as_ref().is_some_and(|t| t.send(msg).is_ok())
    }
}

/// `run/event`: queues one event (the reader thread never waits).
pub(super) fn event(server: &Arc<Server>, params: Value) {
    match super::protocol::parse::<RunEventParams>(params) {
        Ok(p) => {
            let stamped = Stamped {
                at: p.at,
                event: p.event.into(),
            };
            server.recorder.stats.lock().received += 1;
            if !server.recorder.send(server, Msg::Event(stamped)) {
                server.recorder.stats.lock().dropped += 1;
            }
        }
        Err(e) => {
            let mut s = server.recorder.stats.lock();
            s.dropped += 1;
            s.last_error = Some(format!("run/event: {}", e.message));
        }
    }
}

/// Waits until every event queued before now is written.
pub(super) fn flush(server: &Arc<Server>) {
    if server.recorder.tx.lock().is_none() {
        return;
    }
    let (ack, done) = mpsc::channel();
    if server.recorder.send(server, Msg::Flush(ack)) {
        let _ = done.recv_timeout(FLUSH_WAIT);
    }
}

/// Writes what is queued, closes the writer (a run still open becomes `recovery_required`)
/// and stops the thread. Later events are dropped.
pub(super) fn close(server: &Arc<Server>) {
    if server.recorder.tx.lock().is_some() {
        let (ack, done) = mpsc::channel();
        if server.recorder.send(server, Msg::Close(ack)) {
            let _ = done.recv_timeout(FLUSH_WAIT);
        }
    }
    *server.recorder.closed.lock() = true;
    server.recorder.tx.lock().take();
    if let Some(h) = server.recorder.thread.lock().take() {
        let _ = h.join();
    }
}

enum State {
    Waiting,
    Recording {
        writer: Box<Writer>,
        session: Arc<Session>,
    },
    Off,
}

fn record_loop(server: &Weak<Server>, rx: &Receiver<Msg>, stats: &Arc<Mutex<Stats>>) {
    let mut state = State::Waiting;
    let mut pending: Vec<Stamped> = Vec::new();
    while let Ok(first) = rx.recv() {
        let mut msgs = vec![first];
        while msgs.len() < 1024 {
            match rx.try_recv() {
                Ok(m) => msgs.push(m),
                Err(_) => break,
            }
        }
        let mut acks = Vec::new();
        let mut close = None;
        for m in msgs {
            match m {
                Msg::Event(e) => pending.push(e),
                Msg::Flush(a) => acks.push(a),
                Msg::Close(a) => close = Some(a),
            }
        }
        if matches!(state, State::Waiting) && !pending.is_empty() {
            state = start(server, stats);
        }
        match &mut state {
            State::Recording { writer, session } if !pending.is_empty() => {
                match writer.record(&pending) {
                    Ok(effects) => {
                        let mut s = stats.lock();
                        s.written += pending.len() as u64;
                        s.batches += 1;
                        drop(s);
                        after_record(server, writer, session, &effects, stats);
                    }
                    Err(e) => {
                        let mut s = stats.lock();
                        s.dropped += pending.len() as u64;
                        s.last_error = Some(e.to_string());
                        eprintln!("pimem serve: run log: {e}");
                    }
                }
                pending.clear();
            }
            State::Off => {
                stats.lock().dropped += pending.len() as u64;
                pending.clear();
            }
            State::Waiting if pending.len() > MAX_PENDING => {
                let extra = pending.len() - MAX_PENDING;
                stats.lock().dropped += extra as u64;
                pending.drain(..extra);
            }
            _ => {}
        }
        for a in acks {
            let _ = a.send(());
        }
        if let Some(a) = close {
            if let State::Recording { writer, .. } = std::mem::replace(&mut state, State::Off)
                && let Err(e) = writer.close(now_ms())
            {
                stats.lock().last_error = Some(e.to_string());
            }
            stats.lock().state = "closed".into();
            let _ = a.send(());
            return;
        }
    }
}

/// Opens the run log for the session (once the session is known).
fn start(server: &Weak<Server>, stats: &Arc<Mutex<Stats>>) -> State {
    let Some(session) = server.upgrade().and_then(|s| s.session()) else {
        return State::Waiting;
    };
    let off = |why: String| {
        stats.lock().state = format!("off: {why}");
        State::Off
    };
    if !session.cfg.experience.enabled {
        return off(EN.disabled.to_owned());
    }
    let project = match session.project() {
        Ok(p) => p,
        Err(errors) => return off(errors.join("; ")),
    };
    let dir = runlog_dir(project.store.dir());
    let mut writer = match Writer::open(&dir, now_ms()) {
        Ok(w) => w,
        Err(e) => return off(e.to_string()),
    };
    let info = &session.info;
    let start = SessionStart {
        pi_session: info.session_id.clone(),
        session_file: info.session_file.clone(),
        reason: info.reason.clone(),
        cwd: info.cwd.to_string_lossy().into_owned(),
    };
    if let Err(e) = writer.start_session(&start, now_ms()) {
        return off(e.to_string());
    }
    stats.lock().state = format!("recording into {}", writer.log().db_path());
    State::Recording {
        writer: Box::new(writer),
        session,
    }
}

/// Settled runs get their summary: in the background with a model, or a note without one.
fn after_record(
    server: &Weak<Server>,
    writer: &mut Writer,
    session: &Arc<Session>,
    effects: &[Recorded],
    stats: &Arc<Mutex<Stats>>,
) {
    let Some(server) = server.upgrade() else {
        return;
    };
    for e in effects {
        let Recorded::Settled(run, _) = e else {
            continue;
        };
        match model_for(&server, session, Task::Experience) {
            None => {
                let note = no_model_note();
                if let Err(e) = writer.log_mut().set_summary(
                    *run,
                    Err((SummaryState::Unavailable, &note)),
                    None,
                    now_ms(),
                ) {
                    stats.lock().last_error = Some(e.to_string());
                }
            }
            Some(model) => spawn_summary(&server, session.clone(), writer.log().dir(), *run, model),
        }
    }
}

fn spawn_summary(
    server: &Arc<Server>,
    session: Arc<Session>,
    dir: &camino::Utf8Path,
    run: RunNo,
    model: PiModel,
) {
    let dir = dir.to_owned();
    let cancel = server.tasks.token();
    let notify = server.clone();
    server.tasks.spawn("pimem-summary", move || {
        let Ok(project) = session.project() else {
            return;
        };
        let outcome = (|| -> Result<Result<String, String>, String> {
            let mut log = RunLog::open(&dir).map_err(|e| e.to_string())?;
            let row = log.run(run).map_err(|e| e.to_string())?;
            let events: Vec<memory_runlog::Event> = log
                .events(run)
                .map_err(|e| e.to_string())?
                .into_iter()
                .filter_map(|e| e.event)
                .collect();
            let observers =
                memory_agent::pi::SessionFiles::observers(&session.cfg, Task::Experience);
            let job = SummaryJob {
                run: &row,
                events: &events,
                memory_dir: project.store.dir(),
                observers: &observers,
                started: jiff::Timestamp::now(),
            };
            let model_name = session.cfg.task_model(Task::Experience).map(str::to_owned);
            let result = summarize(&model, &job, &cancel);
            let stored = match &result {
                Ok(text) => log.set_summary(run, Ok(text), model_name.as_deref(), now_ms()),
                Err(e) => log.set_summary(
                    run,
                    Err((SummaryState::Failed, &failed_note(run, e))),
                    model_name.as_deref(),
                    now_ms(),
                ),
            };
            stored.map_err(|e| e.to_string())?;
            Ok(result.map_err(|e| failed_note(run, &e)))
        })();
        match outcome {
            Ok(Ok(_)) => {}
            Ok(Err(note)) | Err(note) => notify.notify_user(&note, Level::Warning),
        }
    });
}

// ------------------------------------------------------------------ requests

fn memory_dir(session: &Session) -> Result<camino::Utf8PathBuf, String> {
    session
        .project()
        .map(|p| p.store.dir().to_owned())
        .map_err(|e| e.join("; "))
}

/// The host lines of `/experience debug`.
fn host_lines(server: &Server, forwarding: Option<&ForwardingStats>) -> Vec<String> {
    let s = server.recorder.stats.lock().clone();
    let mut lines = vec![format!(
        "Recorder: {} · {} events received, {} written in {} batches, {} dropped",
        if s.state.is_empty() {
            "no event yet"
        } else {
            &s.state
        },
        s.received,
        s.written,
        s.batches,
        s.dropped
    )];
    if let Some(e) = s.last_error {
        lines.push(format!("Last error: {e}"));
    }
    if let Some(f) = forwarding {
        lines.push(format!(
            "Forwarding in pi: {} events · p50 {:.1} µs · p99 {:.1} µs · max {:.1} µs per event",
            f.events, f.p50_us, f.p99_us, f.max_us
        ));
    }
    lines
}

fn show(text: String, level: Level) -> ExperienceRunResult {
    ExperienceRunResult {
        text: Some(text),
        level,
        prompt: None,
    }
}

/// `experience/run`: `/experience <args>`.
pub(super) fn run(
    server: &Arc<Server>,
    p: ExperienceRunParams,
) -> Result<ExperienceRunResult, RpcError> {
    flush(server);
    let Some(session) = server.session() else {
        return Ok(show("Memory not initialized.".into(), Level::Info));
    };
    let c = user_texts(&session);
    let dir = match memory_dir(&session) {
        Ok(d) => d,
        Err(e) => return Ok(show(e, Level::Error)),
    };
    let sub = read::parse(&p.args);
    if let Sub::Usage(_) = sub {
        return Ok(show(c.usage.to_owned(), Level::Warning));
    }
    let mut log = match read::open_log(&dir) {
        Ok(Some(log)) => log,
        Ok(None) => {
            let text = if session.cfg.experience.enabled {
                c.no_runs
            } else {
                c.disabled
            };
            return Ok(show(text.to_owned(), Level::Info));
        }
        Err(e) => return Ok(show(e, Level::Error)),
    };
    let reply = match sub {
        Sub::Overview => read::overview(&log, c),
        Sub::Runs => read::runs(&log, c),
        Sub::Show(what) => read::show(&log, &what, c),
        Sub::Raw(what) => read::raw(&log, &what, c),
        Sub::Search(words) => read::search(&log, &words, c),
        Sub::Debug => read::debug(&log, &host_lines(server, p.forwarding.as_ref()), c),
        Sub::Prepare => {
            return Ok(prepare(
                server,
                &session,
                &mut log,
                p.confirmed == Some(true),
            ));
        }
        Sub::Remember(what) => return Ok(remember(&session, &mut log, &what)),
        Sub::Usage(_) => return Ok(show(c.usage.to_owned(), Level::Warning)),
    };
    Ok(match reply {
        Ok(r) => show(r.text, Level::Info),
        Err(e) => show(e, Level::Error),
    })
}

/// `/experience prepare` (PX-16): the user audits the summarized runs, confirms, and the
/// main agent gets them with the instruction to merge them through the `experience` tool.
fn prepare(
    server: &Server,
    session: &Session,
    log: &mut RunLog,
    confirmed: bool,
) -> ExperienceRunResult {
    let c = user_texts(session);
    let rows = match read::prepare_list(log) {
        Ok(r) => r,
        Err(e) => return show(e, Level::Error),
    };
    if rows.is_empty() {
        return show(c.prepare_nothing.to_owned(), Level::Info);
    }
    let list = texts::prepare_list(&rows);
    let audit = format!(
        "{}\n{list}",
        fill(c.prepare_header, &[("count", &rows.len())])
    );
    if !confirmed {
        if !session.info.has_ui {
            return show(format!("{audit}\n\n{}", c.prepare_needs_ui), Level::Warning);
        }
        let body = format!(
            "{audit}\n\n{}",
            fill(c.prepare_confirm_body, &[("count", &rows.len())])
        );
        if !server.confirm(session, c.prepare_confirm_title, &body) {
            return ExperienceRunResult {
                text: None,
                level: Level::Info,
                prompt: None,
            };
        }
    }
    let numbers: Vec<RunNo> = rows.iter().map(|r| r.number).collect();
    if let Err(e) = log.mark_audited(&numbers, now_ms()) {
        return show(e.to_string(), Level::Error);
    }
    ExperienceRunResult {
        text: Some(fill(c.prepare_sent, &[("count", &rows.len())])),
        level: Level::Info,
        prompt: Some(fill(c.prepare_prompt, &[("runs", &list)])),
    }
}

/// `/experience remember E3`: the experience becomes a memory through the store.
fn remember(session: &Session, log: &mut RunLog, what: &str) -> ExperienceRunResult {
    let e = match what.parse::<memory_runlog::ExpNo>() {
        Ok(e) => e,
        Err(e) => return show(e.to_string(), Level::Error),
    };
    let project = match session.project() {
        Ok(p) => p,
        Err(errors) => return show(errors.join("; "), Level::Error),
    };
    match memory_runlog::remember::remember(log, &project.store, e, now_ms()) {
        Ok(r) => show(
            fill(
                user_texts(session).remembered,
                &[("exp", &e), ("saved", &r.saved)],
            ),
            Level::Info,
        ),
        Err(err) => show(err.to_string(), Level::Error),
    }
}

/// `experience/panel`: one view of the panel (PX-10).
pub(super) fn panel(server: &Arc<Server>, p: PanelParams) -> Result<PanelResult, RpcError> {
    flush(server);
    let c = server.session().map_or(&EN, |s| user_texts(&s));
    let mut out = PanelResult {
        title: c.panel_title.to_owned(),
        lines: Vec::new(),
        keys: c.panel_keys.to_owned(),
        runs: Vec::new(),
    };
    let log = match server.session().map(|s| memory_dir(&s)) {
        Some(Ok(dir)) => read::open_log(&dir),
        Some(Err(e)) => Err(e),
        None => Err("Memory not initialized.".to_owned()),
    };
    let log = match log {
        Ok(Some(log)) => log,
        Ok(None) => {
            out.lines.push(c.no_runs.to_owned());
            return Ok(out);
        }
        Err(e) => {
            out.lines.push(e);
            return Ok(out);
        }
    };
    let lines = |text: String| text.lines().map(str::to_owned).collect::<Vec<_>>();
    let result: Result<(), String> = (|| {
        match p.view.as_str() {
            "runs" => {
                let rows = log.runs(200).map_err(|e| e.to_string())?;
                if rows.is_empty() {
                    out.lines.push(c.no_runs.to_owned());
                }
                for r in &rows {
                    out.lines.push(texts::run_line(c, r));
                    out.runs.push(r.number.to_string());
                }
                out.keys = c.panel_browse_keys.to_owned();
            }
            "run" => {
                let what = p.run.as_deref().unwrap_or("");
                out.lines = lines(read::show(&log, what, c)?.text);
                out.keys = c.panel_back_keys.to_owned();
            }
            "debug" => {
                out.lines = lines(read::debug(&log, &host_lines(server, None), c)?.text);
                out.keys = c.panel_back_keys.to_owned();
            }
            _ => {
                let d = log.diagnostics().map_err(|e| e.to_string())?;
                let count = |k: &str, v: &[(String, i64)]| {
                    v.iter().find(|(s, _)| s == k).map_or(0, |(_, n)| *n)
                };
                let runs: i64 = d.runs.iter().map(|(_, n)| n).sum();
                out.lines.push(fill(
                    c.panel_counts,
                    &[
                        ("runs", &runs),
                        ("running", &count("running", &d.runs)),
                        ("recovery", &count("recovery_required", &d.runs)),
                        ("pending", &count("pending", &d.summaries)),
                        ("experiences", &d.experiences),
                    ],
                ));
                out.lines.push(String::new());
                out.lines.push(c.panel_latest.to_owned());
                let rows = log.runs(8).map_err(|e| e.to_string())?;
                if rows.is_empty() {
                    out.lines.push(c.no_runs.to_owned());
                }
                out.lines.extend(rows.iter().map(|r| texts::run_line(c, r)));
                out.lines.push(String::new());
                out.lines.push(c.panel_experiences.to_owned());
                let exps = log.experiences().map_err(|e| e.to_string())?;
                out.lines.extend(lines(texts::experience_tree(c, &exps)));
            }
        }
        Ok(())
    })();
    if let Err(e) = result {
        out.lines = vec![e];
    }
    Ok(out)
}

/// `experience/tool`: one call of the `experience` tool (PX-16).
pub(super) fn tool(
    server: &Arc<Server>,
    p: ExperienceToolParams,
) -> Result<ExperienceToolResult, RpcError> {
    flush(server);
    let fail = |text: String| ExperienceToolResult {
        text,
        is_error: true,
    };
    let Some(session) = server.session() else {
        return Ok(fail("Memory not initialized (no session_start yet)".into()));
    };
    let dir = match memory_dir(&session) {
        Ok(d) => runlog_dir(&d),
        Err(e) => return Ok(fail(e)),
    };
    let mut log = match RunLog::open(&dir) {
        Ok(log) => log,
        Err(e) => return Ok(fail(e.to_string())),
    };
    let out = memory_runlog::tool::execute(&mut log, &p.args, now_ms(), &EN);
    Ok(ExperienceToolResult {
        text: out.text,
        is_error: out.is_error,
    })
}

/// The `experience` tool as registered with pi (`extension/experience-tool.json` is a copy,
/// kept equal by a test).
#[cfg(test)]
fn tool_definition() -> super::protocol::ToolRegistration {
    use memory_runlog::tool as t;
    super::protocol::ToolRegistration {
        name: t::TOOL_NAME.to_owned(),
        label: t::TOOL_LABEL.to_owned(),
        description: t::TOOL_DESCRIPTION.to_owned(),
        prompt_snippet: t::TOOL_SNIPPET.to_owned(),
        parameters: t::parameters_schema(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    // The test's own switch and its output file (not a memory file).
    #[allow(clippy::disallowed_methods)]
    fn experience_tool_json_is_current() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/extension/experience-tool.json"
        );
        let mut want =
            serde_json::to_string_pretty(&serde_json::to_value(tool_definition()).unwrap())
                .unwrap();
        want.push('\n');
        if std::env::var_os("PIMEM_UPDATE_PROTOCOL_TS").is_some_and(|v| v == "1") {
            std::fs::write(path, &want).unwrap();
            return;
        }
        let have = std::fs::read_to_string(path).unwrap_or_default();
        assert!(
            have == want,
            "memory-pi/extension/experience-tool.json is stale: regenerate it with\n  \
             PIMEM_UPDATE_PROTOCOL_TS=1 cargo test -p memory-pi --lib experience_tool_json"
        );
    }
}
