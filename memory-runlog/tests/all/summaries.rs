//! Summaries through the `Model` trait (PX-09) and `/experience remember` through the store.

use std::sync::{Arc, Mutex};

use memory_agent::{FinishedRun, ModelError, RunObserver, Task};
use memory_core::{Store, StoreOptions};
use memory_runlog::remember::{RememberError, remember};
use memory_runlog::summary::{SummaryJob, summarize};
use memory_runlog::{Event, ExpNo, NewExperience, RunNo, SummaryState};

use crate::common::{assistant, at, dir, prompt, writer};

#[derive(Default)]
struct Seen(Mutex<Vec<(Task, Option<String>, usize)>>);

impl RunObserver for Seen {
    fn finished(&self, run: &FinishedRun<'_>) -> Result<(), String> {
        self.0
            .lock()
            .unwrap()
            .push((run.task, run.error.map(str::to_owned), run.transcript.len()));
        Ok(())
    }
}

#[test]
fn a_settled_run_is_summarized_once_and_failures_are_recorded_with_their_error() {
    let (sb, d) = dir();
    let mut w = writer(&d, "s");
    w.record(&[
        at(1, Event::RunStart),
        at(2, prompt("why is CI red?")),
        at(
            3,
            Event::ToolCall {
                id: "c".into(),
                name: "bash".into(),
                args: serde_json::json!({"command": "cargo test"}),
            },
        ),
        at(
            4,
            Event::ToolResult {
                id: "c".into(),
                name: "bash".into(),
                text: "test flaky ... FAILED".into(),
                is_error: true,
            },
        ),
        at(5, assistant("A flaky test.", "stop")),
        at(6, Event::Settled { aborted: false }),
    ])
    .unwrap();
    let log = w.log_mut();
    assert_eq!(log.pending_summaries(10).unwrap(), [RunNo(1)]);
    let run = log.run(RunNo(1)).unwrap();
    let events: Vec<Event> = log
        .events(RunNo(1))
        .unwrap()
        .into_iter()
        .filter_map(|e| e.event)
        .collect();
    let seen = Arc::new(Seen::default());
    let observers: Vec<Arc<dyn RunObserver>> = vec![seen.clone()];
    let memory_dir = sb.path("memory/local/app");
    let job = SummaryJob {
        run: &run,
        events: &events,
        memory_dir: &memory_dir,
        observers: &observers,
        started: jiff::Timestamp::UNIX_EPOCH,
    };
    let model =
        testkit::ScriptedModel::new([testkit::text("  CI was red because of a flaky test.  ")]);
    let text = summarize(&model, &job, &memory_agent::CancelToken::new()).unwrap();
    assert_eq!(text, "CI was red because of a flaky test.");
    let req = &model.requests()[0];
    assert_eq!(req.task, Task::Experience);
    assert!(req.tools.is_empty());
    let memory_agent::Message::User { content } = &req.messages[0] else {
        panic!()
    };
    assert_eq!(
        content,
        "Summarize this run.\n\n<run>\nRun R01 (completed, final stop reason stop)\nUser: why is CI red?\n\
         Tool call bash: {\"command\":\"cargo test\"}\nTool bash failed: test flaky ... FAILED\n\
         Assistant: A flaky test.\n</run>"
    );
    log.set_summary(RunNo(1), Ok(&text), Some("fake/m"), 7)
        .unwrap();
    assert!(log.pending_summaries(10).unwrap().is_empty());
    // a failing model: the error is recorded, observers see it too
    let failing =
        testkit::ScriptedModel::with_results([Err(ModelError::Failed("503 from provider".into()))]);
    let e = summarize(&failing, &job, &memory_agent::CancelToken::new()).unwrap_err();
    let note = memory_runlog::summary::failed_note(RunNo(1), &e);
    assert_eq!(note, "summary of R01 failed: 503 from provider");
    log.set_summary(
        RunNo(1),
        Err((SummaryState::Failed, &note)),
        Some("fake/m"),
        8,
    )
    .unwrap();
    let r = log.run(RunNo(1)).unwrap();
    assert_eq!(
        (r.summary_state, r.summary_note.as_deref()),
        (SummaryState::Failed, Some(note.as_str()))
    );
    assert_eq!(
        *seen.0.lock().unwrap(),
        [
            (Task::Experience, None, 2),
            (Task::Experience, Some("503 from provider".to_owned()), 1)
        ]
    );
}

#[test]
fn remember_saves_a_memory_through_the_store_and_refuses_secrets() {
    let (sb, d) = dir();
    let mut w = writer(&d, "s");
    w.record(&[
        at(1_000, Event::RunStart),
        at(1_001, prompt("deploy")),
        at(1_002, assistant("ok", "stop")),
        at(1_500, Event::Settled { aborted: false }),
    ])
    .unwrap();
    let store = Store::new(sb.path("memory/local/app"), StoreOptions::default());
    let log = w.log_mut();
    let mk = |title: &str, summary: &str, runs| NewExperience {
        title: title.into(),
        summary: summary.into(),
        sources: runs,
        ..Default::default()
    };
    let e1 = log
        .create_experience(
            &mk(
                "Staging deploys",
                "Deploy staging with make ship.",
                vec!["R01".parse().unwrap()],
            ),
            2_000,
        )
        .unwrap();
    let got = remember(log, &store, e1, 3_000).unwrap();
    assert_eq!(got.saved, "Saved \"Staging deploys\" (Staging-deploys.md).");
    let entry = std::fs::read_to_string(sb.path("memory/local/app/Staging-deploys.md")).unwrap();
    assert!(entry.contains("Deploy staging with make ship.\n\nFrom experience E1 (runs R01), 1970-01-01 00:00:01Z – 1970-01-01 00:00:01Z in the run log."), "{entry}");
    assert_eq!(
        log.experience(e1).unwrap().remembered.as_deref(),
        Some("Staging-deploys.md")
    );

    let memory = || {
        let mut t = sb.tree("memory/local/app");
        t.retain(|k, _| !k.starts_with(".experience"));
        t
    };
    let before = memory();
    let e2 = log
        .create_experience(
            &mk(
                "Keys",
                "the token is ghp_abcdefghijklmnopqrstuvwxyz0123456789",
                vec![],
            ),
            4_000,
        )
        .unwrap();
    let e = remember(log, &store, e2, 5_000).unwrap_err();
    assert!(matches!(e, RememberError::Store { .. }), "{e}");
    assert!(
        !e.to_string().contains("ghp_"),
        "the secret is never echoed: {e}"
    );
    assert!(memory() == before, "a refused memory writes nothing");
    assert_eq!(log.experience(e2).unwrap().remembered, None);
    let e3 = log
        .create_experience(&mk("Empty", "", vec![]), 6_000)
        .unwrap();
    assert_eq!(
        remember(log, &store, e3, 7_000).unwrap_err().to_string(),
        "E3 has no summary yet: give it one (experience tool, action update) first"
    );
    assert!(matches!(
        remember(log, &store, ExpNo(9), 1),
        Err(RememberError::Experience(_))
    ));
}
