//! `ask-session`'s runner: each accepted ask continues the *original* target session in a
//! child `pi --mode rpc --session <file>` started in the target's working directory
//! (PS-24..PS-33).
//!
//! # Design
//! * **A child pi per ask.** The target runs as its own pi process, loaded the way pi loads
//!   any session in that directory: its stored model and history, the target directory's
//!   settings, packages and extensions, none of the caller's command-line overrides, UI or
//!   trust decisions (PS-25). A crash of the target cannot take the caller down, and no pi
//!   SDK is linked into the sidecar. The child writes the question, its answer and its tool
//!   records into the target's own file (no fork, PS-24).
//! * **Driven over pi's RPC protocol**: one `prompt` command; its `disposition` tells
//!   `started` (a run follows) from `handled` (an input handler consumed it); `agent_settled`
//!   ends the run. `steer: true` sends a `steer` command to the running child, whose
//!   disposition is `queued` (→ `steered`) or `handled` (PS-28). Dialogs the child opens are
//!   answered "no" / cancelled at once: nobody is there to answer them.
//! * **Reports.** When the child's run settles (or fails, or its input handler consumed the
//!   prompt), the child is closed (stdin closed: pi's orderly exit) and a `sessions/report`
//!   notification goes to the extension, which delivers it to the caller with
//!   `pi.sendMessage(…, {deliverAs: "steer", triggerTurn: true})` (PS-26).
//! * **Lifecycle.** The runner belongs to one sidecar, i.e. to one caller lifecycle: an
//!   ask is independent of the tool call that started it (PS-31), and `session/shutdown`
//!   (exit, reload, new, resume, fork) or the end of the connection closes every child
//!   (SIGTERM, then SIGKILL after a grace period) and drops their reports (PS-30). Only
//!   active asks are held; there is no queue, replay or restart recovery.
//! * The child gets `PIMEM_ASK_TARGET=1`, which tells pimem's extension in the target that
//!   its prompts are background input: `@s:` references in them are not expanded (PS-10).
//!   `PI_SESSION_ID` and `PI_SESSION_FILE` (pi's bash-tool markers) are removed so the
//!   target is not mistaken for a subagent.
//!
//! # Limitations
//! * No lock against other pi processes (PS-29): a target open in another terminal may fork
//!   its history; steering cannot reach another terminal's run.
//! * No keep-alive (PS-32): a print or json caller usually exits before the report, which
//!   then never comes (the child is closed with it).
//! * One report per ask; nested asks started by the target end with the target's process.
//! * The pi command is the caller's own (`process.execPath`, its `execArgv` and
//!   `process.argv[1]`, sent by the extension); a pi not started as `node cli.js` (a
//!   single-file build) may need another command.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use memory_agent::pi::session_tools::{AskEnd, AskStatus, AskTarget, REPORT_TYPE, report};
use parking_lot::Mutex;
use serde_json::{Value, json};

use super::protocol::SessionReport;
use super::rpc::Peer;

/// The environment variable that marks a target's pi as running a background ask.
pub(super) const ASK_TARGET_ENV: &str = "PIMEM_ASK_TARGET";

/// How long a steer waits for the child's answer.
const STEER_TIMEOUT: Duration = Duration::from_secs(15);
/// How long a closed child may take to exit before it is killed.
const EXIT_GRACE: Duration = Duration::from_secs(5);
/// How much of the child's stderr a failure report quotes.
const STDERR_TAIL: usize = 2000;
/// The RPC id of the ask's prompt.
const PROMPT_ID: &str = "pimem-ask-prompt";

/// The asks of one caller lifecycle.
#[derive(Default)]
pub(super) struct AskRunner {
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    closed: bool,
    active: HashMap<String, Arc<Task>>,
}

/// Where an ask's child is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Started; the prompt was not answered yet.
    Loading,
    /// The prompt started a run.
    Running,
    /// The run ended; the child is being closed.
    Ending,
}

struct Task {
    target: AskTarget,
    child: Mutex<Child>,
    stdin: Mutex<Option<ChildStdin>>,
    phase: Mutex<Phase>,
    waiters: Mutex<HashMap<String, mpsc::Sender<Value>>>,
    next_id: AtomicU64,
    stderr: Mutex<Vec<u8>>,
    /// The child's stderr reached its end (a failure report quotes it only then).
    stderr_done: AtomicBool,
}

/// What an ask call answers.
pub(super) enum Answer {
    /// A status with the child's pid when a child was started.
    Status(AskStatus, Option<u32>),
    /// A refusal for the model.
    Error(String),
}

impl AskRunner {
    /// One `ask-session` call whose target is resolved (see the module docs).
    pub(super) fn ask(
        self: &Arc<Self>,
        peer: &Arc<Peer>,
        target: AskTarget,
        prompt: &str,
        steer: bool,
        pi_command: &[String],
    ) -> Answer {
        let id = target.session.id.clone();
        let mut inner = self.inner.lock();
        if inner.closed {
            return Answer::Error("the calling session is closing; no new asks".to_owned());
        }
        if let Some(task) = inner.active.get(&id).cloned() {
            drop(inner);
            if !steer {
                return Answer::Status(AskStatus::Busy, None);
            }
            return task.steer(prompt);
        }
        if steer {
            return Answer::Error(format!(
                "session {id} has no running ask from this session to steer; call ask-session without steer to start one"
            ));
        }
        let Some((program, args)) = pi_command.split_first() else {
            return Answer::Error("cannot start the target session: no pi command".to_owned());
        };
        let path = target.path();
        let spawned = Command::new(program)
            .args(args)
            .arg("--mode")
            .arg("rpc")
            .arg("--session")
            .arg(&path)
            .current_dir(target.run_dir())
            .env_remove("PI_SESSION_ID")
            .env_remove("PI_SESSION_FILE")
            .env(ASK_TARGET_ENV, "1")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn();
        let mut child = match spawned {
            Ok(c) => c,
            Err(e) => {
                return Answer::Error(format!("cannot start pi for session {id} ({program}): {e}"));
            }
        };
        let pid = child.id();
        let (Some(stdin), Some(stdout), Some(stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            let _ = child.kill();
            let _ = child.wait();
            return Answer::Error(format!("cannot talk to pi for session {id}"));
        };
        let task = Arc::new(Task {
            target,
            child: Mutex::new(child),
            stdin: Mutex::new(Some(stdin)),
            phase: Mutex::new(Phase::Loading),
            waiters: Mutex::new(HashMap::new()),
            next_id: AtomicU64::new(1),
            stderr: Mutex::new(Vec::new()),
            stderr_done: AtomicBool::new(false),
        });
        inner.active.insert(id, task.clone());
        drop(inner);
        if let Err(e) = task.send(&json!({"id": PROMPT_ID, "type": "prompt", "message": prompt})) {
            // The reader sees the child's end and reports it.
            eprintln!("pimem serve: cannot send the ask to pi (pid {pid}): {e}");
        }
        let stderr_task = task.clone();
        std::thread::Builder::new()
            .name("pimem-ask-stderr".to_owned())
            .spawn(move || stderr_task.keep_stderr(stderr))
            .map_err(|e| eprintln!("pimem serve: cannot start a thread: {e}"))
            .ok();
        let runner = self.clone();
        let peer = peer.clone();
        let reader_task = task.clone();
        let started = std::thread::Builder::new()
            .name("pimem-ask".to_owned())
            .spawn(move || {
                let end = reader_task.follow(stdout);
                reader_task.close(EXIT_GRACE);
                runner.finish(&peer, &reader_task, &end);
            });
        if let Err(e) = started {
            task.terminate();
            self.inner.lock().active.remove(&task.target.session.id);
            return Answer::Error(format!("cannot follow the target session: {e}"));
        }
        Answer::Status(AskStatus::Accepted, Some(pid))
    }

    /// The ask ended: forget it and report it, unless the caller is closing.
    fn finish(&self, peer: &Peer, task: &Arc<Task>, end: &AskEnd) {
        let mut inner = self.inner.lock();
        let id = &task.target.session.id;
        if inner.active.get(id).is_some_and(|t| Arc::ptr_eq(t, task)) {
            inner.active.remove(id);
        }
        if inner.closed {
            return; // PS-30: a late report never reaches a closed or replaced lifecycle
        }
        let (content, details) = report(&task.target, end);
        peer.notify(&SessionReport {
            custom_type: REPORT_TYPE.to_owned(),
            content,
            details,
        });
    }

    /// Closes every ask: no more reports, every child terminated (waits at most `grace`
    /// for them to exit, then kills them).
    pub(super) fn close(&self, grace: Duration) {
        let tasks: Vec<Arc<Task>> = {
            let mut inner = self.inner.lock();
            inner.closed = true;
            inner.active.drain().map(|(_, t)| t).collect()
        };
        for t in &tasks {
            t.terminate();
        }
        let deadline = Instant::now() + grace;
        for t in &tasks {
            t.reap_until(deadline);
        }
    }
}

impl Task {
    fn send(&self, cmd: &Value) -> std::io::Result<()> {
        let mut stdin = self.stdin.lock();
        let Some(w) = stdin.as_mut() else {
            return Err(std::io::Error::new(
                std::io::ErrorKind::BrokenPipe,
                "the target's input is closed",
            ));
        };
        let mut line = cmd.to_string();
        line.push('\n');
        w.write_all(line.as_bytes())?;
        w.flush()
    }

    /// `steer: true` on a running ask (PS-28).
    fn steer(&self, prompt: &str) -> Answer {
        let id = &self.target.session.id;
        match *self.phase.lock() {
            Phase::Running => {}
            Phase::Loading => {
                return Answer::Error(format!(
                    "the ask of session {id} is still loading and cannot be steered yet; try again shortly"
                ));
            }
            Phase::Ending => {
                return Answer::Error(format!(
                    "the ask of session {id} has just finished and cannot be steered; its report is on the way"
                ));
            }
        }
        let rpc_id = format!(
            "pimem-steer-{}",
            self.next_id.fetch_add(1, Ordering::Relaxed)
        );
        let (tx, rx) = mpsc::channel();
        self.waiters.lock().insert(rpc_id.clone(), tx);
        let sent = self.send(&json!({"id": rpc_id, "type": "steer", "message": prompt}));
        let reply = sent
            .map_err(|e| e.to_string())
            .and_then(|()| rx.recv_timeout(STEER_TIMEOUT).map_err(|e| e.to_string()));
        self.waiters.lock().remove(&rpc_id);
        match reply {
            Ok(r) if r.get("success") == Some(&Value::Bool(true)) => {
                let handled =
                    r.pointer("/data/disposition").and_then(Value::as_str) == Some("handled");
                Answer::Status(
                    if handled {
                        AskStatus::Handled
                    } else {
                        AskStatus::Steered
                    },
                    None,
                )
            }
            Ok(r) => Answer::Error(format!(
                "session {id} refused the steering: {}",
                r.get("error")
                    .and_then(Value::as_str)
                    .unwrap_or("no reason given")
            )),
            Err(e) => Answer::Error(format!("session {id} did not take the steering: {e}")),
        }
    }

    /// Reads the child's output until the ask ends.
    fn follow(&self, stdout: impl Read) -> AskEnd {
        let mut reader = BufReader::new(stdout);
        let mut line = Vec::new();
        let mut last_text: Option<String> = None;
        let mut last_error: Option<String> = None;
        loop {
            line.clear();
            match reader.read_until(b'\n', &mut line) {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            }
            let Ok(rec) = serde_json::from_slice::<Value>(&line) else {
                continue;
            };
            match rec.get("type").and_then(Value::as_str) {
                Some("response") => {
                    let rid = rec.get("id").and_then(Value::as_str).unwrap_or_default();
                    if rid == PROMPT_ID {
                        if rec.get("success") != Some(&Value::Bool(true)) {
                            let why = rec
                                .get("error")
                                .and_then(Value::as_str)
                                .unwrap_or("refused");
                            *self.phase.lock() = Phase::Ending;
                            return AskEnd::Failed {
                                error: format!("pi refused the prompt: {why}"),
                            };
                        }
                        // Decision (VECTORS §Z 18): an ordinary ask the target's input handler
                        // consumed was answered `accepted`; its report says `handled`.
                        if rec.pointer("/data/disposition").and_then(Value::as_str)
                            == Some("handled")
                        {
                            *self.phase.lock() = Phase::Ending;
                            return AskEnd::Handled;
                        }
                        *self.phase.lock() = Phase::Running;
                    } else if let Some(tx) = self.waiters.lock().remove(rid) {
                        let _ = tx.send(rec);
                    }
                }
                Some("extension_ui_request") => self.decline(&rec),
                Some("message_end") => {
                    let msg = rec.get("message").unwrap_or(&Value::Null);
                    if msg.get("role").and_then(Value::as_str) == Some("assistant") {
                        let text = assistant_text(msg);
                        match msg.get("stopReason").and_then(Value::as_str) {
                            Some("error" | "aborted") => {
                                last_error = Some(
                                    msg.get("errorMessage")
                                        .and_then(Value::as_str)
                                        .unwrap_or("the model call failed")
                                        .to_owned(),
                                );
                            }
                            _ => {
                                last_error = None;
                                if !text.is_empty() {
                                    last_text = Some(text);
                                }
                            }
                        }
                    }
                }
                Some("agent_settled") => {
                    *self.phase.lock() = Phase::Ending;
                    let aborted = rec.get("aborted") == Some(&Value::Bool(true));
                    return match (last_error, aborted) {
                        (Some(error), _) => AskEnd::Failed { error },
                        (None, true) => AskEnd::Failed {
                            error: "the run was aborted".to_owned(),
                        },
                        (None, false) => AskEnd::Completed {
                            answer: last_text.unwrap_or_default(),
                        },
                    };
                }
                _ => {}
            }
        }
        *self.phase.lock() = Phase::Ending;
        // The child closed its output before the run settled.
        let status = {
            let mut child = self.child.lock();
            let deadline = Instant::now() + Duration::from_millis(500);
            loop {
                match child.try_wait() {
                    Ok(Some(s)) => break s.to_string(),
                    Ok(None) if Instant::now() < deadline => {
                        std::thread::sleep(Duration::from_millis(20));
                    }
                    _ => break "still running".to_owned(),
                }
            }
        };
        // The last words on stderr may still be in flight (a grandchild holding stderr open
        // must not hold the report up for long).
        let deadline = Instant::now() + Duration::from_secs(1);
        while !self.stderr_done.load(Ordering::Acquire) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        let tail = String::from_utf8_lossy(&self.stderr.lock())
            .trim()
            .to_owned();
        AskEnd::Failed {
            error: if tail.is_empty() {
                format!("the target's pi ended before answering ({status})")
            } else {
                format!("the target's pi ended before answering ({status}): {tail}")
            },
        }
    }

    /// Answers a dialog of the child: nobody can, so "no" / cancelled.
    fn decline(&self, rec: &Value) {
        let Some(id) = rec.get("id") else { return };
        let answer = match rec.get("method").and_then(Value::as_str) {
            Some("confirm") => {
                json!({"type": "extension_ui_response", "id": id, "confirmed": false})
            }
            Some("select" | "input" | "editor") => {
                json!({"type": "extension_ui_response", "id": id, "cancelled": true})
            }
            _ => return, // notify, setStatus, ...: fire and forget
        };
        let _ = self.send(&answer);
    }

    /// Keeps the end of the child's stderr for a failure report.
    fn keep_stderr(&self, mut stderr: impl Read) {
        let mut chunk = [0u8; 4096];
        while let Ok(n) = stderr.read(&mut chunk) {
            if n == 0 {
                self.stderr_done.store(true, Ordering::Release);
                break;
            }
            let mut kept = self.stderr.lock();
            kept.extend_from_slice(&chunk[..n]);
            if kept.len() > STDERR_TAIL {
                let cut = kept.len() - STDERR_TAIL;
                kept.drain(..cut);
            }
        }
    }

    /// Orderly end: closes the child's input (pi exits), waits up to `grace`, then kills it.
    fn close(&self, grace: Duration) {
        self.stdin.lock().take();
        self.reap_until(Instant::now() + grace);
    }

    /// Asks the child to stop now: input closed and SIGTERM (pi shuts down in order).
    fn terminate(&self) {
        self.stdin.lock().take();
        let mut child = self.child.lock();
        if matches!(child.try_wait(), Ok(None)) {
            signal_term(&child);
        }
    }

    /// Waits for the child until `deadline`, then kills it.
    fn reap_until(&self, deadline: Instant) {
        loop {
            let mut child = self.child.lock();
            match child.try_wait() {
                Ok(Some(_)) | Err(_) => return,
                Ok(None) if Instant::now() >= deadline => {
                    let _ = child.kill();
                    let _ = child.wait();
                    return;
                }
                Ok(None) => {}
            }
            drop(child);
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// SIGTERM to a child that has not been reaped (so its pid is still its own).
fn signal_term(child: &Child) {
    #[cfg(unix)]
    {
        if let Ok(pid) = i32::try_from(child.id())
            && let Some(pid) = rustix::process::Pid::from_raw(pid)
        {
            let _ = rustix::process::kill_process(pid, rustix::process::Signal::TERM);
        }
    }
    #[cfg(not(unix))]
    let _ = child;
}

/// The text blocks of an assistant message, joined.
fn assistant_text(msg: &Value) -> String {
    match msg.get("content") {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(blocks)) => blocks
            .iter()
            .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
            .filter_map(|b| b.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join(""),
        _ => String::new(),
    }
}
