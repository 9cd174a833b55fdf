//! The model-driven behaviour, run through `memory-agent` with [`PiModel`]: surfacing on each
//! user turn, extraction after a settled run, `/dream`, and the dream nudge.
//!
//! A module uses a model only when `/memory` shows it on (configured and resolvable by pi):
//! then its [`PiModel`] is passed to the library; otherwise none is, and surfacing is
//! lexical.

use std::sync::Arc;

use memory_agent::extract::{ExtractOutcome, extract_failed_text, run_extract};
use memory_agent::pi::{project_instructions, transcript};
use memory_agent::{
    DreamOptions, ExtractOptions, Model, NudgeThresholds, Surfaced, SurfacingRequest, Turn,
    dream_failed_text, run_dream, should_nudge,
};
use memory_core::{ModuleState, Task};
use serde_json::Value;

use super::Server;
use super::pimodel::PiModel;
use super::protocol::{ConfirmParams, Level};
use super::session::Session;

/// The model for `task` when its module is on.
pub(super) fn model_for(server: &Server, session: &Session, task: Task) -> Option<PiModel> {
    let state = match task {
        Task::Dream => &session.modules.dream,
        Task::ExtractMemories => &session.modules.extract_memories,
        Task::AutoSurfacing => &session.modules.auto_surfacing,
        // Not a `/memory` module: a configured model is used, and a failing one is the
        // summary's recorded error.
        Task::Experience => return PiModel::for_task(server.peer.clone(), &session.cfg, task),
    };
    match state {
        ModuleState::On(_) => PiModel::for_task(server.peer.clone(), &session.cfg, task),
        _ => None,
    }
}

/// Surfacing for one user prompt (PM-60..64). Lexical selection needs no model; the model
/// and hybrid selectors ask pi's model and fall back to lexical on any failure. Files already
/// surfaced this session are never surfaced again. `None` when nothing is surfaced.
pub(super) fn surface(server: &Server, session: &Session, prompt: &str) -> Option<Surfaced> {
    let project = session.project().ok()?;
    let model = model_for(server, session, Task::AutoSurfacing);
    let req = SurfacingRequest::new(prompt)
        .with_model(model.as_ref().map(|m| m as &dyn Model))
        .with_cancel(server.tasks.token());
    if model.is_some() {
        server.status(session, "surfacing", Some("Searching relevant memories…"));
    }
    session.warming.wait();
    let outcome = session.surfacer.lock().surface(&project.store, req);
    if model.is_some() {
        server.status(session, "surfacing", None);
    }
    match outcome {
        Ok(s) => {
            for w in &s.warnings {
                server.notify_user(w, Level::Warning);
            }
            (!s.message.is_empty()).then_some(s)
        }
        // PM-60: any failure injects nothing.
        Err(_) => None,
    }
}

/// Remembers the `<project_instructions>` blocks of the turn's system prompt (PM-67).
pub(super) fn remember_instructions(session: &Session, system_prompt: &str) {
    session.live.lock().instructions = project_instructions(system_prompt);
}

/// Starts extraction over a settled run's messages in the background (PM-65..68).
pub(super) fn spawn_extract(server: &Arc<Server>, session: Arc<Session>, messages: Vec<Value>) {
    let Some(model) = model_for(server, &session, Task::ExtractMemories) else {
        // Enabled without a usable model: report it like a failed extraction, once.
        let text = format!(
            "Extract failed: {}",
            session.model_problem(Task::ExtractMemories)
        );
        report_failure_once(server, &session, &text);
        return;
    };
    let cancel = server.tasks.token();
    let server = server.clone();
    server.tasks.clone().spawn("pimem-extract", move || {
        let Ok(project) = session.project() else {
            return;
        };
        let instructions = session.live.lock().instructions.clone();
        let messages = transcript::from_agent_messages(&messages);
        let turn = Turn {
            messages: &messages,
            instructions: &instructions,
        };
        let opts = ExtractOptions {
            sessions: Some(session.sessions.clone()),
            ..ExtractOptions::from(&session.cfg)
        };
        match run_extract(&project.store, &model, &turn, &opts, &cancel) {
            Ok(outcome) => {
                if let ExtractOutcome::Done(run) = &outcome {
                    super::curate::record_run(&session, run, super::usage::Via::Extraction);
                    for n in &run.notices {
                        server.notify_user(&n.to_string(), Level::Warning);
                    }
                    for w in &run.warnings {
                        server.notify_user(w, Level::Warning);
                    }
                }
                if let Some(text) = outcome.notification() {
                    server.notify_user(&text, Level::Info);
                }
            }
            Err(e) => report_failure_once(&server, &session, &extract_failed_text(&e)),
        }
    });
}

fn report_failure_once(server: &Server, session: &Session, text: &str) {
    let first = !std::mem::replace(&mut session.live.lock().extract_error_shown, true);
    if first {
        server.notify_user(text, Level::Error);
    }
}

/// Runs a dream round (PM-69): `Ok(summary)` or `Err(Dream failed: …)`.
pub(super) fn dream(server: &Server, session: &Session) -> Result<String, String> {
    let project = session.project().map_err(|errors| errors.join("; "))?;
    let model = model_for(server, session, Task::Dream)
        .ok_or_else(|| format!("Dream failed: {}", session.model_problem(Task::Dream)))?;
    let opts = DreamOptions {
        session_count: session.sessions.count().unwrap_or(0),
        sessions: Some(session.sessions.clone()),
        ..DreamOptions::from(&session.cfg)
    };
    let _task = server.tasks.enter();
    let outcome = run_dream(&project.store, &model, &opts, &server.tasks.token())
        .map_err(|e| dream_failed_text(&e))?;
    super::curate::record_run(session, &outcome.run, super::usage::Via::Dream);
    for n in &outcome.run.notices {
        server.notify_user(&n.to_string(), Level::Warning);
    }
    for w in &outcome.run.warnings {
        server.notify_user(w, Level::Warning);
    }
    Ok(outcome.summary)
}

/// The dream nudge for a UI session (PM-70): the question to ask, if any. Decision: no nudge
/// when the dream has no usable model, since confirming it could only fail.
pub(super) fn nudge(session: &Session) -> Option<ConfirmParams> {
    if !session.info.has_ui || session.info.child {
        return None;
    }
    let (Some(project), ModuleState::On(_)) = (session.project_if_open(), &session.modules.dream)
    else {
        return None;
    };
    let count = session.sessions.count().ok()?;
    let store = &project.store;
    let now = store.options().clock.now();
    let thresholds = NudgeThresholds::from(&session.cfg.dream);
    should_nudge(store.dream_meta().as_ref(), count, now, &thresholds).map(|n| ConfirmParams {
        title: n.title().to_owned(),
        body: n.body(),
    })
}
