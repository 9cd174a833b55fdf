//! `sessionPersistence` (PM-80): headless runs saved as pi session files beside the memories.
#![allow(clippy::unwrap_used)]

use std::path::Path;
use std::time::Duration;

use memory_agent::extract::Turn;
use memory_agent::pi::sessions::list_sessions;
use memory_agent::pi::transcript::from_agent_messages;
use memory_agent::{
    AgentError, CancelToken, DreamOptions, ExtractOptions, ExtractOutcome, ModelError, Surfacer,
    SurfacingOptions, SurfacingRequest, TranscriptMessage, run_dream, run_extract,
};
use memory_core::{AddRequest, Config, SessionPersistence, Store, StoreOptions};
use serde_json::{Value, json};
use testkit::{Sandbox, ScriptedModel, memory_call, text};

fn config(persist: bool, dir: Option<String>) -> Config {
    let mut cfg = Config::default();
    cfg.defaults.model = Some("fake/model".into());
    cfg.defaults.session_persistence = SessionPersistence {
        enabled: persist,
        session_dir: dir,
    };
    cfg
}

fn turn() -> Vec<TranscriptMessage> {
    from_agent_messages(&[
        json!({"role": "user", "content": "remember that deploys need the VPN", "timestamp": 1}),
        json!({"role": "assistant", "content": [{"type": "text", "text": "Noted."}], "timestamp": 2}),
    ])
}

fn new_store(sb: &Sandbox) -> Store {
    Store::new(
        sb.path("mem"),
        StoreOptions {
            clock: testkit::stepping_clock(),
            ..StoreOptions::default()
        },
    )
}

/// Every line of the one session file in `dir`, parsed.
fn only_session_lines(dir: &Path) -> Vec<Value> {
    let saved = list_sessions(dir, None).unwrap();
    assert_eq!(saved.len(), 1, "{saved:?}");
    std::fs::read_to_string(&saved[0].path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The `message` entries of a saved session: (role, first text block).
fn messages(lines: &[Value]) -> Vec<(String, String)> {
    lines
        .iter()
        .filter(|l| l["type"] == "message")
        .map(|l| {
            let m = &l["message"];
            let text = m["content"]
                .as_array()
                .and_then(|c| c.iter().find(|b| b["type"] == "text"))
                .map(|b| b["text"].as_str().unwrap().to_owned())
                .unwrap_or_default();
            (m["role"].as_str().unwrap().to_owned(), text)
        })
        .collect()
}

#[test]
fn extraction_runs_are_saved_only_when_enabled() {
    let sb = Sandbox::new();
    let store = new_store(&sb);
    let script = || {
        ScriptedModel::new([
            memory_call(
                json!({"action": "add", "name": "VPN", "content": "Deploys need the VPN."}),
            ),
            text("Saved."),
        ])
    };
    let transcript = turn();
    let turn = Turn {
        messages: &transcript,
        instructions: &[],
    };
    run_extract(
        &store,
        &script(),
        &turn,
        &ExtractOptions::from(&config(false, None)),
        &CancelToken::new(),
    )
    .unwrap();
    assert!(!store.dir().join("sessions").exists());

    let out = run_extract(
        &store,
        &script(),
        &turn,
        &ExtractOptions::from(&config(true, None)),
        &CancelToken::new(),
    )
    .unwrap();
    let ExtractOutcome::Done(run) = out else {
        panic!("extraction ran")
    };
    assert!(run.notices.is_empty(), "{:?}", run.notices);
    assert!(run.warnings.is_empty(), "{:?}", run.warnings);
    let saved = list_sessions(store.dir().join("sessions").as_std_path(), None).unwrap();
    assert_eq!(saved.len(), 1);
    assert_eq!(saved[0].name.as_deref(), Some("pimem extractMemories"));
    // The sessions directory is never an entry and never disturbs the store.
    assert_eq!(store.list().unwrap().len(), 1);
}

#[test]
fn dream_runs_go_to_a_configured_session_dir() {
    let sb = Sandbox::new();
    let store = new_store(&sb);
    let elsewhere = sb.path("headless");
    let cfg = config(true, Some(elsewhere.to_string()));
    let script = ScriptedModel::new([text("Nothing to consolidate.")]);
    let opts = DreamOptions {
        session_count: 3,
        ..DreamOptions::from(&cfg)
    };
    let out = run_dream(&store, &script, &opts, &CancelToken::new()).unwrap();
    assert!(out.run.warnings.is_empty(), "{:?}", out.run.warnings);
    let saved = list_sessions(elsewhere.as_std_path(), None).unwrap();
    assert_eq!(saved.len(), 1);
    assert_eq!(saved[0].name.as_deref(), Some("pimem dream"));
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&saved[0].path)
        .unwrap()
        .permissions()
        .mode()
        & 0o777;
    assert_eq!(mode, 0o600);
}

/// New with the observer: a failed run is saved too, its transcript up to the failure and a
/// last `custom` entry `pimem-run-error` with the cause.
#[test]
fn failed_runs_are_saved_with_their_error_as_the_last_entry() {
    // A dream whose model fails on its second turn.
    let sb = Sandbox::new();
    let store = new_store(&sb);
    let model = ScriptedModel::with_results([
        Ok(memory_call(json!({"action": "list"}))),
        Err(ModelError::Failed("provider exploded".into())),
    ]);
    let err = run_dream(
        &store,
        &model,
        &DreamOptions::from(&config(true, None)),
        &CancelToken::new(),
    )
    .unwrap_err();
    assert_eq!(err.to_string(), "provider exploded");
    let lines = only_session_lines(store.dir().join("sessions").as_std_path());
    assert_eq!(lines[1]["name"], "pimem dream");
    let last = lines.last().unwrap();
    assert_eq!(last["type"], "custom");
    assert_eq!(last["customType"], "pimem-run-error");
    assert_eq!(last["data"]["error"], "provider exploded");
    // What happened before the failure is there: the task, the list call and its result.
    let roles: Vec<String> = messages(&lines).into_iter().map(|(r, _)| r).collect();
    assert_eq!(roles, ["user", "assistant", "toolResult"]);

    // An extraction that times out (the model waits past the run's deadline).
    let sb = Sandbox::new();
    let store = new_store(&sb);
    let model = ScriptedModel::new([text("too late")]).on_call(|_, req| {
        std::thread::sleep(req.remaining() + Duration::from_millis(5));
    });
    let transcript = turn();
    let opts = ExtractOptions {
        timeout: Duration::from_millis(200),
        ..ExtractOptions::from(&config(true, None))
    };
    let turn = Turn {
        messages: &transcript,
        instructions: &[],
    };
    let err = run_extract(&store, &model, &turn, &opts, &CancelToken::new()).unwrap_err();
    assert!(matches!(err, AgentError::Timeout { .. }), "{err:?}");
    let lines = only_session_lines(store.dir().join("sessions").as_std_path());
    assert_eq!(lines[1]["name"], "pimem extractMemories");
    let last = lines.last().unwrap();
    assert_eq!(last["customType"], "pimem-run-error");
    assert_eq!(
        last["data"]["error"],
        "headless agent timed out after 200ms"
    );
    let saved = messages(&lines);
    assert_eq!(saved.len(), 1, "only the task prompt: {saved:?}");
    assert!(
        saved[0]
            .1
            .contains("[1] user: remember that deploys need the VPN")
    );
}

/// New with the observer: `autoSurfacing.sessionPersistence` saves the side query (the
/// prompt the model got and its reply); a surfacing without a model call saves nothing.
#[test]
fn surfacing_side_queries_are_saved_when_enabled() {
    let sb = Sandbox::new();
    let store = new_store(&sb);
    let file = store
        .add(AddRequest {
            name: "SSH port on staging".into(),
            body: "staging SSH listens on 2222, not 22.".into(),
            ..AddRequest::default()
        })
        .unwrap()
        .file;
    let mut cfg = Config::default();
    cfg.auto_surfacing.session_persistence = Some(SessionPersistence {
        enabled: true,
        session_dir: None,
    });
    let reply = json!({ "selected_files": [file] }).to_string();
    let model = ScriptedModel::new([text(reply.clone())]);
    let sessions = store.dir().join("sessions");

    // No model passed: lexical, no side query, nothing saved.
    let mut surfacer = Surfacer::new(SurfacingOptions::from(&cfg));
    let out = surfacer.surface(&store, "ssh into staging").unwrap();
    assert_eq!(out.files, std::slice::from_ref(&file));
    assert!(!sessions.exists());

    surfacer.reset();
    let out = surfacer
        .surface(
            &store,
            SurfacingRequest::new("ssh into staging").with_model(Some(&model)),
        )
        .unwrap();
    assert_eq!(out.files, [file]);
    assert!(out.warnings.is_empty(), "{:?}", out.warnings);
    let saved = list_sessions(sessions.as_std_path(), None).unwrap();
    assert_eq!(saved[0].name.as_deref(), Some("pimem autoSurfacing"));
    let lines = only_session_lines(sessions.as_std_path());
    let Some(memory_agent::Message::User { content: prompt }) =
        model.requests()[0].messages.first().cloned()
    else {
        panic!("the side query is one user message")
    };
    assert!(prompt.contains("ssh into staging"));
    assert_eq!(
        messages(&lines),
        [("user".to_owned(), prompt), ("assistant".to_owned(), reply)]
    );
}

/// A session file that cannot be written is a warning of the run; the run itself stands.
#[test]
fn a_session_that_cannot_be_saved_is_a_warning_not_a_failure() {
    let sb = Sandbox::new();
    let store = new_store(&sb);
    sb.write("not-a-dir", "a file where the session directory should be");
    let cfg = config(true, Some(sb.path("not-a-dir").to_string()));
    let model = ScriptedModel::new([text("Nothing to consolidate.")]);
    let out = run_dream(
        &store,
        &model,
        &DreamOptions::from(&cfg),
        &CancelToken::new(),
    )
    .unwrap();
    assert_eq!(out.summary, "Nothing to consolidate.");
    assert!(store.dream_meta().is_some());
    assert_eq!(out.run.warnings.len(), 1, "{:?}", out.run.warnings);
    assert!(
        out.run.warnings[0].starts_with("Cannot save the headless session: "),
        "{:?}",
        out.run.warnings
    );
    assert!(out.run.notices.is_empty());
}
