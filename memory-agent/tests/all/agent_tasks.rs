//! Scripted fake models drive the headless agent, extraction and dream end to end on temp
//! stores: files, index, snapshots, locks, turn limits, deadlines, compare-and-swap.
#![allow(clippy::unwrap_used)]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use camino::Utf8PathBuf;
use memory_agent::agent::{AgentSpec, TURN_LIMIT_MESSAGE, run_agent};
use memory_agent::dream::{DREAM_SYSTEM_PROMPT, dream_failed_text};
use memory_agent::extract::{EXTRACT_SYSTEM_PROMPT, SkipReason, TranscriptMessage, Turn};
use memory_agent::pi::transcript::from_agent_messages;
use memory_agent::{
    AgentError, CancelToken, Completion, CompletionRequest, DreamOptions, ExtractOptions,
    ExtractOutcome, MemoryTool, Message, Model, ModelError, Task, extract_failed_text, run_dream,
    run_extract,
};
use memory_core::tool::{DREAM_ACTIONS, MAIN_ACTIONS};
use memory_core::{AddRequest, DreamMeta, ReplaceRequest, Store, StoreError, StoreOptions};
use serde_json::{Value, json};
use testkit::{Sandbox, ScriptedModel, memory_call, memory_calls, text, tool_calls};

// ------------------------------------------------------------------ fixtures

fn options() -> StoreOptions {
    StoreOptions {
        lock_timeout: Duration::from_millis(300),
        snapshot_keep: 100,
        clock: testkit::stepping_clock(),
        ..StoreOptions::default()
    }
}

struct Fixture {
    sb: Sandbox,
    store: Store,
}

impl Fixture {
    fn new() -> Self {
        let sb = Sandbox::new();
        let store = Store::new(sb.path("mem"), options());
        Fixture { sb, store }
    }

    fn dir(&self) -> Utf8PathBuf {
        self.store.dir().to_owned()
    }

    fn read(&self, file: &str) -> String {
        std::fs::read_to_string(self.dir().join(file)).unwrap()
    }

    fn add(&self, name: &str, description: &str, body: &str) {
        self.store
            .add(AddRequest {
                name: name.into(),
                description: Some(description.into()),
                body: body.into(),
                ..AddRequest::default()
            })
            .unwrap();
    }

    fn snapshots(&self) -> Vec<String> {
        let mut v: Vec<String> = match std::fs::read_dir(self.dir().join(".backups")) {
            Ok(rd) => rd
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect(),
            Err(_) => Vec::new(),
        };
        v.sort();
        v
    }

    /// A second store on the same directory through a symlinked path: the in-process
    /// logical lock is keyed by path, so this behaves like another pi process (it only
    /// shares the cross-process `.lock`).
    fn other_process(&self) -> Store {
        let alias = self.sb.path("alias");
        std::os::unix::fs::symlink(self.dir(), &alias).unwrap();
        Store::new(alias, options())
    }
}

fn turn() -> Vec<TranscriptMessage> {
    from_agent_messages(&[
        json!({"role": "user", "content": [{"type": "text", "text": "Deploy to staging; its SSH port is 2222, not 22."}]}),
        json!({"role": "assistant", "content": [{"type": "text", "text": "Deployed with ssh -p 2222."}]}),
    ])
}

/// One extraction of `messages` with the default options.
fn extract(
    store: &Store,
    model: &dyn Model,
    messages: &[TranscriptMessage],
    instructions: &[String],
    cancel: &CancelToken,
) -> Result<ExtractOutcome, AgentError> {
    let turn = Turn {
        messages,
        instructions,
    };
    run_extract(store, model, &turn, &ExtractOptions::default(), cancel)
}

/// One dream with the default options and this session count.
fn dream(
    store: &Store,
    model: &dyn Model,
    session_count: u64,
) -> Result<memory_agent::DreamOutcome, AgentError> {
    let opts = DreamOptions {
        session_count,
        ..DreamOptions::default()
    };
    run_dream(store, model, &opts, &CancelToken::new())
}

/// The headless loop over `store` with these actions and no observers.
fn agent(
    model: &dyn Model,
    store: &Store,
    actions: &'static [memory_core::tool::Action],
    spec: &AgentSpec,
) -> Result<memory_agent::AgentRun, AgentError> {
    let mut tool = MemoryTool::over(store.target(), actions);
    run_agent(model, &mut tool, spec, &[], &CancelToken::new())
}

fn user_text(m: &Message) -> &str {
    match m {
        Message::User { content } => content,
        other => panic!("not a user message: {other:?}"),
    }
}

fn tool_result_text(m: &Message) -> (&str, bool) {
    match m {
        Message::ToolResult {
            content, is_error, ..
        } => (content, *is_error),
        other => panic!("not a tool result: {other:?}"),
    }
}

fn action_enum(req: &CompletionRequest) -> Vec<String> {
    req.tools[0].parameters["properties"]["action"]["enum"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_owned())
        .collect()
}

fn spec(max_turns: Option<usize>) -> AgentSpec {
    AgentSpec {
        task: Task::ExtractMemories,
        system: "system".into(),
        prompt: "task".into(),
        max_turns,
        timeout: Duration::from_secs(30),
    }
}

// ------------------------------------------------------------------ extraction

#[test]
fn extraction_writes_entries_index_and_keeps_per_write_snapshots() {
    let f = Fixture::new();
    f.add("Build command", "build with make", "Run make build.");
    let before = f.snapshots();
    let model = ScriptedModel::new([
        memory_call(json!({"action": "list"})),
        memory_call(json!({"action": "add", "name": "Staging SSH port",
            "description": "staging SSH listens on 2222, not 22", "type": "project",
            "content": "staging SSH listens on 2222, not 22."})),
        memory_call(json!({"action": "add", "name": "Deploy user",
            "description": "deploy as the deploy user", "content": "Deploy as `deploy`."})),
        text("Added 2 memories."),
    ]);
    let out = extract(&f.store, &model, &turn(), &[], &CancelToken::new()).unwrap();
    assert_eq!(out.writes(), 2);
    assert_eq!(out.notification().as_deref(), Some("Extracted 2 memories."));
    let ExtractOutcome::Done(run) = &out else {
        panic!("skipped: {out:?}")
    };
    assert_eq!(run.text, "Added 2 memories.");
    assert_eq!(run.turns, 4);
    assert_eq!(run.calls.len(), 3);
    assert!(!run.turn_limit_reached);

    // Files and index.
    assert!(f.read("Staging-SSH-port.md").contains("type: project"));
    assert!(f.read("Deploy-user.md").contains("Deploy as `deploy`."));
    assert_eq!(
        f.read("MEMORY.md"),
        "- [Build command](Build-command.md) — build with make\n\
         - [Staging SSH port](Staging-SSH-port.md) — staging SSH listens on 2222, not 22\n\
         - [Deploy user](Deploy-user.md) — deploy as the deploy user\n"
    );
    // Two writes, two per-write snapshots (no whole-directory one).
    let after = f.snapshots();
    let new: Vec<&String> = after.iter().filter(|s| !before.contains(s)).collect();
    assert_eq!(new.len(), 2, "{after:?}");
    assert!(new.iter().all(|s| s.ends_with("-write")), "{new:?}");

    // What the model was given.
    let reqs = model.requests();
    assert_eq!(reqs[0].task, Task::ExtractMemories);
    assert_eq!(reqs[0].system, EXTRACT_SYSTEM_PROMPT);
    assert_eq!(reqs[0].tools.len(), 1);
    assert_eq!(reqs[0].tools[0].name, "memory");
    assert_eq!(
        action_enum(&reqs[0]),
        ["add", "replace", "remove", "list", "search"]
    );
    let task = user_text(&reqs[0].messages[0]);
    assert!(task.ends_with(
        "=== Conversation ===\n[1] user: Deploy to staging; its SSH port is 2222, not 22.\n[2] assistant: Deployed with ssh -p 2222."
    ));
    let (list, is_error) = tool_result_text(&reqs[1].messages[2]);
    assert!(!is_error);
    assert!(list.starts_with("- Build command (feedback, modified "));
    let (saved, _) = tool_result_text(&reqs[2].messages[4]);
    assert_eq!(saved, "Saved \"Staging SSH port\" (Staging-SSH-port.md).");
    // Every deadline is the same run deadline.
    assert!(reqs.iter().all(|r| r.deadline == reqs[0].deadline));
}

#[test]
fn extraction_is_skipped_while_a_round_is_held_and_never_queued() {
    let f = Fixture::new();
    let model = ScriptedModel::new([text("nothing worth saving")]);
    {
        let _dream = f.store.begin_round(Duration::from_millis(100)).unwrap();
        let out = extract(&f.store, &model, &turn(), &[], &CancelToken::new()).unwrap();
        assert_eq!(out, ExtractOutcome::Skipped(SkipReason::Busy));
        assert_eq!(out.notification(), None);
        assert_eq!(model.calls(), 0);
    }
    // Once the round is over, the next turn runs (nothing was queued: one call only).
    let out = extract(&f.store, &model, &turn(), &[], &CancelToken::new()).unwrap();
    assert!(matches!(out, ExtractOutcome::Done(_)));
    assert_eq!(out.notification(), None, "no write, no notification");
    assert_eq!(model.calls(), 1);
}

#[test]
fn r10_nothing_renderable_is_skipped_without_a_model_call() {
    let f = Fixture::new();
    let model = ScriptedModel::new([]);
    let messages = [
        json!({"role": "system", "content": "", "sections": {}}),
        json!({"role": "assistant", "content": [{"type": "thinking", "thinking": "…"}]}),
    ];
    let out = extract(
        &f.store,
        &model,
        &from_agent_messages(&messages),
        &[],
        &CancelToken::new(),
    )
    .unwrap();
    assert_eq!(out, ExtractOutcome::Skipped(SkipReason::NothingToExtract));
    assert_eq!(model.calls(), 0);
    assert!(!f.dir().exists(), "nothing touched the disk");
}

#[test]
fn extraction_includes_agents_md_blocks() {
    let f = Fixture::new();
    let model = ScriptedModel::new([text("nothing worth saving")]);
    let blocks = vec![
        "<project_instructions path=\"/w/AGENTS.md\">\nUse pnpm.\n</project_instructions>"
            .to_owned(),
    ];
    extract(&f.store, &model, &turn(), &blocks, &CancelToken::new()).unwrap();
    let task = model.requests()[0].messages[0].clone();
    assert!(user_text(&task).contains(
        "## AGENTS.md Rules\n<project_instructions path=\"/w/AGENTS.md\">\nUse pnpm.\n</project_instructions>\n\n=== Conversation ===\n"
    ));
}

#[test]
fn extraction_failure_text_and_writes_before_it_stay() {
    let f = Fixture::new();
    let model = ScriptedModel::with_results([
        Ok(memory_call(
            json!({"action": "add", "name": "Kept", "content": "Written before the failure."}),
        )),
        Err(ModelError::Failed("provider said no".into())),
    ]);
    let err = extract(&f.store, &model, &turn(), &[], &CancelToken::new()).unwrap_err();
    assert_eq!(
        extract_failed_text(&err),
        "Extract failed: provider said no"
    );
    assert_eq!(err.writes(), 1);
    assert!(f.read("Kept.md").contains("Written before the failure."));
}

#[test]
fn extraction_requests_name_their_task_and_a_stop_reason_error_fails() {
    let f = Fixture::new();
    let model = ScriptedModel::new([Completion {
        text: "rate limited".into(),
        tool_calls: vec![],
        stop_reason: memory_agent::StopReason::Error,
    }]);
    let err = extract(&f.store, &model, &turn(), &[], &CancelToken::new()).unwrap_err();
    assert_eq!(extract_failed_text(&err), "Extract failed: rate limited");
    // Which model and thinking level serve a task is the host's choice: the request only
    // says which task it is for.
    assert_eq!(model.requests()[0].task, Task::ExtractMemories);
}

// ------------------------------------------------------------------ agent loop limits

#[test]
fn grace_turn_after_the_turn_limit_then_stop() {
    let f = Fixture::new();
    // The model would go on forever: 7 tool-call turns scripted, only 6 may be used.
    let model = ScriptedModel::new((0..7).map(|_| memory_call(json!({"action": "list"}))));
    let out = extract(&f.store, &model, &turn(), &[], &CancelToken::new()).unwrap();
    let ExtractOutcome::Done(run) = out else {
        panic!("skipped")
    };
    assert_eq!(model.calls(), 6, "5 turns + 1 grace turn");
    assert_eq!(model.remaining(), 1);
    assert_eq!(run.turns, 6);
    assert!(run.turn_limit_reached);
    assert_eq!(run.calls.len(), 6, "the grace turn's tool calls still run");
    let reqs = model.requests();
    // Turns 1–5 never see the steering message; the grace turn ends with it, tools offered.
    for r in &reqs[..5] {
        assert!(
            !r.messages
                .iter()
                .any(|m| matches!(m, Message::User { content } if content == TURN_LIMIT_MESSAGE))
        );
    }
    let grace = &reqs[5];
    assert_eq!(
        user_text(grace.messages.last().unwrap()),
        TURN_LIMIT_MESSAGE
    );
    assert_eq!(
        TURN_LIMIT_MESSAGE,
        "You have reached your turn limit. Finish now."
    );
    assert_eq!(grace.tools.len(), 1);
}

#[test]
fn a_model_that_finishes_on_the_last_turn_gets_no_grace_message() {
    let f = Fixture::new();
    let mut script: Vec<Completion> = (0..4)
        .map(|_| memory_call(json!({"action": "list"})))
        .collect();
    script.push(text("done"));
    let model = ScriptedModel::new(script);
    let run = agent(&model, &f.store, MAIN_ACTIONS, &spec(Some(5))).unwrap();
    assert_eq!(
        (run.turns, run.turn_limit_reached, run.text.as_str()),
        (5, false, "done")
    );
    assert_eq!(model.calls(), 5);
}

#[test]
fn final_text_falls_back_to_the_last_non_empty_assistant_text() {
    let f = Fixture::new();
    let model = ScriptedModel::new([
        tool_calls(
            "Looking things up.",
            [("memory", json!({"action": "list"}))],
        ),
        text(""),
    ]);
    let run = agent(&model, &f.store, MAIN_ACTIONS, &spec(None)).unwrap();
    assert_eq!(run.text, "Looking things up.");
}

#[test]
fn tool_errors_go_back_to_the_model_and_the_run_continues() {
    let f = Fixture::new();
    let model = ScriptedModel::new([
        tool_calls(
            "",
            [
                ("bash", json!({"command": "ls"})),
                ("memory", json!("not an object")),
                (
                    "memory",
                    json!({"action": "rename", "name": "a", "new_name": "b"}),
                ),
                (
                    "memory",
                    json!({"action": "search", "query": "x", "scope": "sessions"}),
                ),
            ],
        ),
        text("ok"),
    ]);
    let run = agent(&model, &f.store, MAIN_ACTIONS, &spec(Some(5))).unwrap();
    let texts: Vec<(&str, bool)> = run
        .calls
        .iter()
        .map(|c| (c.output.text.as_str(), c.output.is_error))
        .collect();
    assert_eq!(
        texts,
        [
            ("Tool bash not found", true),
            ("arguments must be a JSON object", true),
            ("Unknown action: rename", true),
            ("Session search is not available in this context", true),
        ]
    );
    assert_eq!(run.writes, 0);
    // The results reached the model in order, with their ids.
    let req = &model.requests()[1];
    let Message::Assistant { tool_calls, .. } = &req.messages[1] else {
        panic!()
    };
    let Message::ToolResult { call_id, name, .. } = &req.messages[2] else {
        panic!()
    };
    assert_eq!((call_id, name.as_str()), (&tool_calls[0].id, "bash"));
}

#[test]
fn deadline_passing_ends_the_run_with_an_error_and_keeps_writes() {
    let f = Fixture::new();
    let model = ScriptedModel::new([
        memory_call(
            json!({"action": "add", "name": "Early", "content": "Made before the deadline."}),
        ),
        text("never delivered"),
    ])
    .on_call(|i, req| {
        if i == 1 {
            std::thread::sleep(req.remaining() + Duration::from_millis(5));
        }
    });
    let mut s = spec(Some(5));
    s.timeout = Duration::from_millis(300);
    let err = agent(&model, &f.store, MAIN_ACTIONS, &s).unwrap_err();
    assert!(
        matches!(err, AgentError::Timeout { writes: 1, .. }),
        "{err:?}"
    );
    assert_eq!(err.to_string(), "headless agent timed out after 300ms");
    assert!(f.read("Early.md").contains("Made before the deadline."));
}

/// A model that ignores its deadline: answers late with a write.
struct LateModel;

impl Model for LateModel {
    fn complete(&self, req: &CompletionRequest) -> Result<Completion, ModelError> {
        std::thread::sleep(req.remaining() + Duration::from_millis(5));
        Ok(memory_call(
            json!({"action": "add", "name": "Late", "content": "Should never be written."}),
        ))
    }
}

#[test]
fn an_answer_after_the_deadline_is_not_acted_on() {
    let f = Fixture::new();
    let mut s = spec(Some(5));
    s.timeout = Duration::from_millis(100);
    let err = agent(&LateModel, &f.store, MAIN_ACTIONS, &s).unwrap_err();
    assert!(matches!(err, AgentError::Timeout { writes: 0, .. }));
    assert!(!f.dir().join("Late.md").exists());
}

#[test]
fn cancellation_between_turns_ends_the_run() {
    let f = Fixture::new();
    let cancel = CancelToken::new();
    let flag = cancel.clone();
    let model = ScriptedModel::new([
        memory_call(
            json!({"action": "add", "name": "Before", "content": "Made before the cancel."}),
        ),
        text("never delivered"),
    ])
    .on_call(move |i, _| {
        if i == 1 {
            flag.cancel();
        }
    });
    let err = extract(&f.store, &model, &turn(), &[], &cancel).unwrap_err();
    assert!(
        matches!(err, AgentError::Cancelled { writes: 1 }),
        "{err:?}"
    );
    assert_eq!(
        extract_failed_text(&err),
        "Extract failed: headless agent was cancelled"
    );
    assert!(f.dir().join("Before.md").exists());
    // A cancelled token stops the next run before any model call.
    let model = ScriptedModel::new([text("x")]);
    let err = extract(&f.store, &model, &turn(), &[], &cancel).unwrap_err();
    assert!(matches!(err, AgentError::Cancelled { writes: 0 }));
    assert_eq!(model.calls(), 0);
}

// ------------------------------------------------------------------ dream

fn dream_fixture() -> Fixture {
    let f = Fixture::new();
    f.add(
        "SSH port",
        "staging SSH port is 2222",
        "Staging SSH listens on 2222.",
    );
    f.add(
        "Staging ssh",
        "use port 2222 for staging ssh",
        "Use -p 2222 when connecting to staging.",
    );
    f.add(
        "tmp",
        "integration tests need a real DB",
        "Integration tests hit a real Postgres, never mocks.",
    );
    f
}

#[test]
fn dream_consolidates_with_one_snapshot_and_writes_meta() {
    let f = dream_fixture();
    let before = f.snapshots();
    let model = ScriptedModel::new([
        memory_call(json!({"action": "search", "query": "2222"})),
        memory_calls([
            json!({"action": "replace", "name": "SSH port",
                   "description": "staging SSH listens on 2222, not 22: always pass -p 2222",
                   "content": "Staging SSH listens on 2222, not 22. Always connect with -p 2222."}),
            json!({"action": "remove", "name": "Staging ssh"}),
        ]),
        memory_call(
            json!({"action": "rename", "name": "tmp", "new_name": "Integration tests use a real DB"}),
        ),
        memory_call(json!({"action": "rebuild_index"})),
        text("merged 1, removed 1, renamed 1, updated 0"),
    ]);
    let out = dream(&f.store, &model, 7).unwrap();
    assert_eq!(out.summary, "merged 1, removed 1, renamed 1, updated 0");
    assert_eq!((out.writes, out.conflicts), (4, 0));

    // One whole-directory snapshot, holding the state before the dream; no per-write ones.
    let after = f.snapshots();
    let new: Vec<&String> = after.iter().filter(|s| !before.contains(s)).collect();
    assert_eq!(new.len(), 1, "{after:?}");
    assert!(new[0].ends_with("-dream"));
    assert_eq!(out.snapshot.file_name().unwrap(), new[0].as_str());
    assert!(out.snapshot.join("Staging-ssh.md").exists());
    assert!(out.snapshot.join("tmp.md").exists());
    assert!(out.snapshot.join("MEMORY.md").exists());

    // Files and index after the round.
    assert!(!f.dir().join("Staging-ssh.md").exists());
    assert!(!f.dir().join("tmp.md").exists());
    assert!(
        f.read("SSH-port.md")
            .contains("Always connect with -p 2222.")
    );
    assert!(
        f.read("Integration-tests-use-a-real-DB.md")
            .contains("name: Integration tests use a real DB")
    );
    insta::assert_snapshot!("dream_index_after", f.read("MEMORY.md"));

    // .dream-meta.json.
    let meta: Value = serde_json::from_str(&f.read(".dream-meta.json")).unwrap();
    assert_eq!(meta["sessionCountAtDream"], 7);
    assert_eq!(
        meta["lastDreamAt"].as_str().unwrap(),
        out.meta.last_dream_at
    );
    assert_eq!(
        f.store.dream_meta(),
        Some(DreamMeta {
            last_dream_at: out.meta.last_dream_at.clone(),
            session_count_at_dream: 7
        })
    );

    // The model got the seven actions and the prompt listing every entry.
    let reqs = model.requests();
    assert_eq!(
        action_enum(&reqs[0]),
        [
            "add",
            "replace",
            "remove",
            "list",
            "search",
            "rename",
            "rebuild_index"
        ]
    );
    assert_eq!(reqs[0].system, DREAM_SYSTEM_PROMPT);
    assert_eq!(reqs[0].task, Task::Dream);
    let prompt = user_text(&reqs[0].messages[0]);
    insta::assert_snapshot!("dream_system_prompt", DREAM_SYSTEM_PROMPT);
    insta::assert_snapshot!("dream_task_prompt", prompt);
}

#[test]
fn dream_never_overwrites_an_entry_changed_by_another_process() {
    let f = dream_fixture();
    let other = f.other_process();
    let seen_after_conflict = Arc::new(Mutex::new(String::new()));
    let seen = seen_after_conflict.clone();
    let dir = f.dir();
    let model = ScriptedModel::new([
        memory_call(json!({"action": "list"})),
        memory_call(json!({"action": "replace", "name": "SSH port",
            "content": "Dream's stale merge: staging SSH is 2222."})),
        memory_call(json!({"action": "search", "query": "SSH port"})),
        memory_call(json!({"action": "replace", "name": "SSH port",
            "content": "Staging SSH listens on 2222 (bastion: bastion.example.org)."})),
        text("1 conflict: re-read SSH port and merged it"),
    ])
    .on_call(move |i, _| match i {
        // Between the dream's first and second turn another session edits the entry.
        1 => {
            other
                .replace(ReplaceRequest {
                    reference: "SSH port".into(),
                    body: Some("Staging SSH listens on 2222 via bastion.example.org.".into()),
                    ..ReplaceRequest::default()
                })
                .unwrap();
        }
        // After the dream's conflicting replace: the other write is still there.
        2 => {
            *seen.lock().unwrap() = std::fs::read_to_string(dir.join("SSH-port.md")).unwrap();
        }
        _ => {}
    });
    let out = dream(&f.store, &model, 3).unwrap();
    assert_eq!(out.conflicts, 1);
    assert_eq!(out.writes, 1);
    assert!(
        seen_after_conflict
            .lock()
            .unwrap()
            .contains("Staging SSH listens on 2222 via bastion.example.org."),
        "the concurrent write survived the dream's stale replace"
    );
    let reqs = model.requests();
    let (conflict, is_error) = tool_result_text(reqs[2].messages.last().unwrap());
    assert_eq!(
        (conflict, is_error),
        ("Memory conflict: stale version", true)
    );
    // Re-reading refreshes the version: the deliberate replace after it succeeds.
    let (search, _) = tool_result_text(reqs[3].messages.last().unwrap());
    assert!(search.contains("via bastion.example.org"));
    assert!(
        f.read("SSH-port.md")
            .contains("(bastion: bastion.example.org)")
    );
}

#[test]
fn dream_waits_for_the_lock_and_fails_cleanly_when_busy() {
    let f = dream_fixture();
    let before = f.snapshots();
    let model = ScriptedModel::new([text("x")]);
    let _held = f.store.begin_round(Duration::from_millis(100)).unwrap();
    let err = dream(&f.store, &model, 1).unwrap_err();
    assert!(
        matches!(err, AgentError::Store(StoreError::Busy(_))),
        "{err:?}"
    );
    assert!(dream_failed_text(&err).starts_with("Dream failed: "));
    assert_eq!(model.calls(), 0);
    assert_eq!(f.snapshots(), before, "no snapshot without the lock");
    assert!(f.store.dream_meta().is_none());
}

#[test]
fn failed_dream_keeps_its_writes_and_leaves_the_meta_alone() {
    let f = dream_fixture();
    let model = ScriptedModel::with_results([
        Ok(memory_call(json!({"action": "remove", "name": "tmp"}))),
        Err(ModelError::Failed("boom".into())),
    ]);
    let err = dream(&f.store, &model, 4).unwrap_err();
    assert_eq!(dream_failed_text(&err), "Dream failed: boom");
    assert_eq!(err.writes(), 1);
    assert!(!f.dir().join("tmp.md").exists());
    assert!(f.store.dream_meta().is_none());
    // The lock was released: extraction can run again right away.
    assert!(f.store.try_begin_round().is_some());
}

#[test]
fn dream_with_no_text_reports_the_default_summary() {
    let f = Fixture::new();
    let model = ScriptedModel::new([text("")]);
    let out = dream(&f.store, &model, 0).unwrap();
    assert_eq!(out.summary, "Dream completed.");
    assert_eq!(out.writes, 0);
    let prompt = user_text(&model.requests()[0].messages[0]).to_owned();
    assert!(prompt.ends_with("## Current memories (0)\nNo memories yet."));
}

#[test]
fn dream_rename_and_rebuild_are_dream_only() {
    let f = dream_fixture();
    let model = ScriptedModel::new([
        memory_call(json!({"action": "rebuild_index"})),
        text("done"),
    ]);
    let run = agent(&model, &f.store, MAIN_ACTIONS, &spec(Some(5))).unwrap();
    assert_eq!(run.calls[0].output.text, "Unknown action: rebuild_index");
    let run = agent(
        &ScriptedModel::new([
            memory_call(json!({"action": "rebuild_index"})),
            text("done"),
        ]),
        &f.store,
        DREAM_ACTIONS,
        &spec(None),
    )
    .unwrap();
    assert_eq!(
        run.calls[0].output.text,
        "Rebuilt index: 3 entries (2 header lines)."
    );
}
