//! The model-driven behaviour, run through `memory-agent` with [`PiModel`]: surfacing on each
//! user turn, extraction after a settled run, `/dream`, and the dream nudge.

use std::sync::Arc;

use memory_agent::dream::run_dream;
use memory_agent::extract::{ExtractOutcome, extract_failed_text, run_extract};
use memory_agent::nudge::{count_project_sessions, should_nudge};
use memory_agent::surfacing::SurfacingRequest;
use memory_core::ModuleState;
use serde_json::{Value, json};

use super::Server;
use super::pimodel::PiModel;
use super::rpc::lock;
use super::session::Session;

/// A surfaced message for one turn.
pub struct Surfaced {
    /// The `<relevant_memories>` content.
    pub content: String,
    /// The entry files it holds.
    pub files: Vec<String>,
    /// `N` of `Recalled: N entries`.
    pub recalled: usize,
}

/// Surfacing for one user prompt (PM-60..64). Lexical selection needs no model; the model
/// and hybrid selectors ask pi's model and fall back to lexical on any failure. Files already
/// surfaced this session are never surfaced again.
pub fn surface(server: &Server, session: &Session, prompt: &str) -> Option<Surfaced> {
    let project = session.project.as_ref()?;
    let model = match &session.modules.auto_surfacing {
        ModuleState::On(_) => Some(PiModel::new(server.peer.clone())),
        _ => None,
    };
    let mut req = SurfacingRequest::new(prompt).with_cancel(server.tasks.token());
    if let Some(m) = &model {
        req = req.with_model(m);
        server.status(session, "surfacing", Some("Searching relevant memories…"));
    }
    let outcome = lock(&session.surfacer).surface(&project.store, &session.cfg, req);
    if model.is_some() {
        server.status(session, "surfacing", None);
    }
    match outcome {
        Ok(s) if !s.message.is_empty() => Some(Surfaced {
            content: s.message,
            files: s.files,
            recalled: s.recalled,
        }),
        // PM-60: any failure injects nothing.
        _ => None,
    }
}

/// Starts extraction over a settled run's messages in the background (PM-65..68).
pub fn spawn_extract(server: &Arc<Server>, session: Arc<Session>, messages: Vec<Value>) {
    let model = match &session.modules.extract_memories {
        ModuleState::On(_) => PiModel::new(server.peer.clone()),
        _ => {
            // Enabled without a usable model: report it like a failed extraction, once.
            let text = format!(
                "Extract failed: {}",
                session.model_problem(memory_core::Task::ExtractMemories)
            );
            report_failure_once(server, &session, &text);
            return;
        }
    };
    let cancel = server.tasks.token();
    let server = server.clone();
    server.tasks.clone().spawn("pimem-extract", move || {
        let Some(project) = &session.project else {
            return;
        };
        let blocks = lock(&session.live).instructions.clone();
        let outcome = run_extract(
            &project.store,
            &model,
            &session.cfg,
            &messages,
            &blocks,
            Some(&session.sessions),
            &cancel,
        );
        match outcome {
            Ok(ExtractOutcome::Done(run)) => {
                for n in &run.notices {
                    server.notify_user(n, "warning");
                }
                if let Some(text) = ExtractOutcome::Done(run).notification() {
                    server.notify_user(&text, "info");
                }
            }
            Ok(ExtractOutcome::Skipped(_)) => {}
            Err(e) => report_failure_once(&server, &session, &extract_failed_text(&e)),
        }
    });
}

fn report_failure_once(server: &Server, session: &Session, text: &str) {
    let first = {
        let mut live = lock(&session.live);
        !std::mem::replace(&mut live.extract_error_shown, true)
    };
    if first {
        server.notify_user(text, "error");
    }
}

/// Runs a dream round (PM-69). `Ok(summary)` or `Err(message)` (without the
/// `Dream failed: ` prefix).
pub fn dream(server: &Server, session: &Session) -> Result<String, String> {
    let project = session
        .project
        .as_ref()
        .ok_or_else(|| "memory is not initialized".to_owned())?;
    let count = count_project_sessions(&session.sessions).unwrap_or(0);
    let model = PiModel::new(server.peer.clone());
    let _task = server.tasks.enter();
    let outcome = run_dream(
        &project.store,
        &model,
        &session.cfg,
        count,
        Some(&session.sessions),
        &server.tasks.token(),
    )
    .map_err(|e| e.to_string())?;
    for n in &outcome.run.notices {
        server.notify_user(n, "warning");
    }
    Ok(outcome.summary)
}

/// The dream nudge for a UI session (PM-70): `{title, body}` or `null`. Decision: no nudge
/// when the dream has no usable model, since confirming it could only fail.
pub fn nudge(session: &Session) -> Value {
    if !session.info.has_ui || session.info.child {
        return Value::Null;
    }
    let (Some(project), ModuleState::On(_)) = (&session.project, &session.modules.dream) else {
        return Value::Null;
    };
    let Ok(count) = count_project_sessions(&session.sessions) else {
        return Value::Null;
    };
    let store = &project.store;
    let now = store.options().clock.now();
    match should_nudge(store.dream_meta().as_ref(), count, now, &session.cfg.dream) {
        Some(n) => json!({ "title": n.title(), "body": n.body() }),
        None => Value::Null,
    }
}
