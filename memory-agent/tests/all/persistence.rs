//! `sessionPersistence` (PM-80): headless runs saved as pi session files beside the memories.
#![allow(clippy::unwrap_used)]

use memory_agent::sessions::list_sessions;
use memory_agent::testing::{ScriptedModel, memory_call, text};
use memory_agent::{CancelToken, ExtractOutcome, run_dream, run_extract};
use memory_core::{Config, SessionPersistence, Store, StoreOptions};
use serde_json::json;

fn config(persist: bool, dir: Option<String>) -> Config {
    let mut cfg = Config::default();
    cfg.defaults.model = Some("fake/model".into());
    cfg.defaults.session_persistence = SessionPersistence {
        enabled: persist,
        session_dir: dir,
    };
    cfg
}

fn turn() -> Vec<serde_json::Value> {
    vec![
        json!({"role": "user", "content": "remember that deploys need the VPN", "timestamp": 1}),
        json!({"role": "assistant", "content": [{"type": "text", "text": "Noted."}], "timestamp": 2}),
    ]
}

#[test]
fn extraction_runs_are_saved_only_when_enabled() {
    let tmp = tempfile::tempdir().unwrap();
    let store = Store::new(tmp.path().join("mem"), StoreOptions::default());
    let script = || {
        ScriptedModel::new([
            memory_call(
                json!({"action": "add", "name": "VPN", "content": "Deploys need the VPN."}),
            ),
            text("Saved."),
        ])
    };
    run_extract(
        &store,
        &script(),
        &config(false, None),
        &turn(),
        &[],
        None,
        &CancelToken::new(),
    )
    .unwrap();
    assert!(!store.dir().join("sessions").exists());

    let out = run_extract(
        &store,
        &script(),
        &config(true, None),
        &turn(),
        &[],
        None,
        &CancelToken::new(),
    )
    .unwrap();
    let ExtractOutcome::Done(run) = out else {
        panic!("extraction ran")
    };
    assert!(run.notices.is_empty(), "{:?}", run.notices);
    let saved = list_sessions(&store.dir().join("sessions"), None).unwrap();
    assert_eq!(saved.len(), 1);
    assert_eq!(saved[0].name.as_deref(), Some("pimem extractMemories"));
    // The sessions directory is never an entry and never disturbs the store.
    assert_eq!(store.list().unwrap().len(), 1);
}

#[test]
fn dream_runs_go_to_a_configured_session_dir() {
    let tmp = tempfile::tempdir().unwrap();
    let store = Store::new(tmp.path().join("mem"), StoreOptions::default());
    let elsewhere = tmp.path().join("headless");
    let cfg = config(true, Some(elsewhere.to_string_lossy().into_owned()));
    let script = ScriptedModel::new([text("Nothing to consolidate.")]);
    run_dream(&store, &script, &cfg, 3, None, &CancelToken::new()).unwrap();
    let saved = list_sessions(&elsewhere, None).unwrap();
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
