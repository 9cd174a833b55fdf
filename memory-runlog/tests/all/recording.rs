//! Recording: run lifecycle, terminal statuses (VECTORS PX-V1..PX-V5), numbering, sessions,
//! bounded events, search and the texts.

use memory_runlog::texts::{self, EN};
use memory_runlog::{Event, RunLog, RunNo, RunStatus, SummaryState, Writer, terminal_status};
use serde_json::json;

use crate::common::{assistant, at, dir, prompt, session, writer};

#[test]
fn px_v1_to_v4_terminal_status_from_the_last_stop_reason() {
    let rows: &[(&str, Option<&str>, bool, usize, RunStatus)] = &[
        ("PX-V1", Some("stop"), false, 0, RunStatus::Completed),
        ("PX-V2", Some("error"), false, 0, RunStatus::Failed),
        ("PX-V3", Some("length"), false, 0, RunStatus::Failed),
        ("PX-V4", Some("aborted"), false, 0, RunStatus::Interrupted),
        ("PX-V4", Some("stop"), true, 0, RunStatus::Interrupted),
        ("PX-07", None, false, 0, RunStatus::RecoveryRequired),
        (
            "PX-07",
            Some("toolUse"),
            false,
            0,
            RunStatus::RecoveryRequired,
        ),
        ("PX-07", Some("stop"), false, 1, RunStatus::RecoveryRequired),
    ];
    for (id, stop, aborted, unanswered, want) in rows {
        assert_eq!(terminal_status(*stop, *aborted, *unanswered), *want, "{id}");
    }
    // The same through the writer, one run per row.
    let (_sb, d) = dir();
    let mut w = writer(&d, "s1");
    for (i, (id, stop, aborted, unanswered, want)) in rows.iter().enumerate() {
        let t = 100 * i as i64 + 10;
        let mut batch = vec![
            at(t, Event::RunStart),
            at(t + 1, prompt(&format!("row {id}"))),
        ];
        for k in 0..*unanswered {
            batch.push(at(
                t + 2,
                Event::ToolCall {
                    id: format!("c{k}"),
                    name: "bash".into(),
                    args: json!({"command": "ls"}),
                },
            ));
        }
        if let Some(stop) = stop {
            batch.push(at(t + 3, assistant("answer", stop)));
        }
        batch.push(at(t + 4, Event::Settled { aborted: *aborted }));
        w.record(&batch).unwrap();
        let run = w.log().run(RunNo(i as u32 + 1)).unwrap();
        assert_eq!(run.status, *want, "{id} through the writer");
        assert_eq!(
            run.ended_at,
            Some(t + 4),
            "{id}: the settle confirms the end"
        );
        assert_eq!(run.summary_state, SummaryState::Pending, "{id}");
    }
    let failed = w.log().run(RunNo(2)).unwrap();
    assert_eq!(failed.error.as_deref(), Some("boom"));
}

#[test]
fn px_v5_a_dead_writer_keeps_uuid_number_and_events_and_gets_no_end_time() {
    let (_sb, d) = dir();
    let mut dead = writer(&d, "s1");
    dead.record(&[at(10, Event::RunStart), at(11, prompt("first"))])
        .unwrap();
    let before = dead.log().run(RunNo(1)).unwrap();
    assert_eq!(before.status, RunStatus::Running);
    drop(dead); // like SIGKILL: the mark file stays, its kernel lock is gone

    let mut next = writer(&d, "s2"); // the next start recovers
    let after = next.log().run(RunNo(1)).unwrap();
    assert_eq!(after.status, RunStatus::RecoveryRequired);
    assert_eq!(after.uuid, before.uuid);
    assert_eq!(after.ended_at, None, "no invented end time");
    assert_eq!(after.events, 2);
    // numbering continues after the dead writer's run
    let got = next.record(&[at(20, Event::RunStart)]).unwrap();
    assert_eq!(got, [memory_runlog::Recorded::Opened(RunNo(2))]);
    // the dead writer's mark was tidied
    let marks = std::fs::read_dir(d.join(memory_runlog::MARKS_DIR))
        .unwrap()
        .count();
    assert_eq!(marks, 1, "only the live writer's mark is left");
}

#[test]
fn a_live_writers_runs_are_never_recovered() {
    let (_sb, d) = dir();
    let mut a = writer(&d, "a");
    a.record(&[at(10, Event::RunStart)]).unwrap();
    let mut reader = RunLog::open(&d).unwrap();
    assert_eq!(reader.recover().unwrap(), []);
    let _b = writer(&d, "b"); // opening another writer recovers too
    assert_eq!(a.log().run(RunNo(1)).unwrap().status, RunStatus::Running);
}

#[test]
fn a_retry_continues_the_open_run_and_closing_mid_run_abandons_it() {
    let (_sb, d) = dir();
    let mut w = writer(&d, "s");
    // pi after a `length` stop: overflow compaction, then a second agent_start, one settle
    let got = w
        .record(&[
            at(10, Event::RunStart),
            at(11, prompt("long one")),
            at(12, assistant("cut", "length")),
            at(
                13,
                Event::Compaction {
                    reason: "overflow".into(),
                    tokens_before: Some(2000),
                },
            ),
            at(14, Event::RunStart),
            at(15, assistant("cut again", "length")),
            at(16, Event::Settled { aborted: false }),
        ])
        .unwrap();
    assert_eq!(
        got,
        [
            memory_runlog::Recorded::Opened(RunNo(1)),
            memory_runlog::Recorded::Settled(RunNo(1), RunStatus::Failed),
        ]
    );
    assert_eq!(w.log().run(RunNo(1)).unwrap().events, 7);
    w.record(&[at(20, Event::RunStart), at(21, Event::RunStart)])
        .unwrap();
    assert_eq!(w.close(50).unwrap(), [RunNo(2)]);
    let log = RunLog::open(&d).unwrap();
    let r = log.run(RunNo(2)).unwrap();
    assert_eq!(
        (r.status, r.ended_at, r.events),
        (RunStatus::RecoveryRequired, None, 2)
    );
    assert_eq!(log.diagnostics().unwrap().live_writers, 0);
    // a new session of the same writer abandons a run still open
    let mut w = writer(&d, "t");
    w.record(&[at(30, Event::RunStart)]).unwrap();
    let got = w.start_session(&session("u"), 31).unwrap();
    assert_eq!(got, [memory_runlog::Recorded::Abandoned(RunNo(3))]);
}

#[test]
fn no_session_file_fork_lineage_and_events_between_runs() {
    let (_sb, d) = dir();
    let mut w = Writer::open(&d, 1).unwrap();
    assert!(matches!(
        w.record(&[at(1, Event::RunStart)]),
        Err(memory_runlog::RunLogError::NoSession)
    ));
    let mut s = session("forked");
    s.session_file = None; // --no-session (PX-04)
    s.reason = "fork".into();
    w.start_session(&s, 1).unwrap();
    w.record(&[
        at(
            2,
            Event::UserBash {
                command: "ls".into(),
                exclude_from_context: true,
            },
        ),
        at(
            3,
            Event::ModelChange {
                model: "fake/other".into(),
            },
        ),
        at(4, Event::RunStart),
        at(5, prompt("  multi\nline prompt  ")),
        at(6, assistant("done", "stop")),
        at(7, Event::Settled { aborted: false }),
    ])
    .unwrap();
    let r = w.log().run(RunNo(1)).unwrap();
    assert_eq!(r.session_file, None);
    assert_eq!(r.lineage.as_deref(), Some("unresolved"));
    assert_eq!(r.title, "multi line prompt");
    assert_eq!(r.model.as_deref(), Some("fake/fake-model"));
    assert_eq!(
        r.events, 4,
        "the ! command and the model change belong to the session"
    );
    let d2 = w.log().diagnostics().unwrap();
    assert_eq!(d2.events, 6);
    let shown = texts::show_run(&EN, &r);
    assert!(
        shown.contains("Session: forked (in memory (no session file)); forked; lineage unresolved"),
        "{shown}"
    );
}

#[test]
fn long_texts_are_bounded_and_raw_shows_every_event() {
    let (_sb, d) = dir();
    let mut w = writer(&d, "s");
    w.record(&[
        at(1, Event::RunStart),
        at(2, prompt("read the log")),
        at(
            3,
            Event::ToolCall {
                id: "c1".into(),
                name: "read".into(),
                args: json!({"path": "big.log"}),
            },
        ),
        at(
            4,
            Event::ToolResult {
                id: "c1".into(),
                name: "read".into(),
                text: "z".repeat(10_000),
                is_error: false,
            },
        ),
        at(5, assistant("It is big.", "stop")),
        at(6, Event::Settled { aborted: false }),
    ])
    .unwrap();
    let events = w.log().events(RunNo(1)).unwrap();
    assert_eq!(events.len(), 6);
    let Some(Event::ToolResult { text, .. }) = &events[3].event else {
        panic!("{:?}", events[3])
    };
    assert_eq!(
        text.chars().count(),
        memory_runlog::MAX_TOOL_CHARS + "… [8000 more characters]".chars().count()
    );
    let run = w.log().run(RunNo(1)).unwrap();
    let raw = texts::raw(&EN, &run, &events);
    assert!(
        raw.starts_with("R01: 6 events, as recorded\n#1 1970-01-01 00:00:00Z runStart {}"),
        "{raw}"
    );
    assert!(matches!(
        w.log().events(RunNo(9)),
        Err(memory_runlog::RunLogError::NoRun(RunNo(9)))
    ));
}

#[test]
fn search_finds_prompts_summaries_and_experiences_and_quotes_the_words() {
    let (_sb, d) = dir();
    let mut w = writer(&d, "s");
    w.record(&[
        at(1, Event::RunStart),
        at(2, prompt("deploy the staging stack")),
        at(3, assistant("ok", "stop")),
        at(4, Event::Settled { aborted: false }),
        at(5, Event::RunStart),
        at(6, prompt("fix the flaky test")),
        at(7, assistant("ok", "error")),
        at(8, Event::Settled { aborted: false }),
    ])
    .unwrap();
    let log = w.log_mut();
    log.set_summary(
        RunNo(2),
        Ok("Retried the postgres container."),
        Some("m"),
        9,
    )
    .unwrap();
    let hit = |log: &RunLog, q: &str| -> Vec<String> {
        log.search(q, 10)
            .unwrap()
            .iter()
            .map(|h| serde_json::to_value(h.target).unwrap()["ref"].to_string())
            .collect()
    };
    assert_eq!(hit(log, "staging"), ["1"]);
    assert_eq!(hit(log, "postgres"), ["2"], "summaries are searched");
    assert_eq!(hit(log, "failed"), ["2"], "status is run metadata");
    assert_eq!(hit(log, "stag dep"), ["1"], "prefix words, all required");
    assert!(
        hit(log, "NOT (\"").is_empty(),
        "FTS syntax never reaches SQLite"
    );
    log.create_experience(
        &memory_runlog::NewExperience {
            title: "Staging deploys".into(),
            summary: "Use make ship.".into(),
            ..Default::default()
        },
        10,
    )
    .unwrap();
    let hits = log.search("staging", 10).unwrap();
    assert_eq!(hits.len(), 2);
    let shown = texts::search(&EN, "staging", &hits);
    assert!(
        shown.contains("R01   deploy the staging stack — deploy the [staging] stack"),
        "{shown}"
    );
    assert!(
        shown.contains("E1    Staging deploys — [Staging] deploys"),
        "{shown}"
    );
    assert_eq!(
        texts::search(&EN, "zebra", &[]),
        "No runs or experiences match \"zebra\"."
    );
}

#[test]
fn runs_list_and_show_texts() {
    let (_sb, d) = dir();
    let mut w = writer(&d, "s");
    assert_eq!(texts::runs(&EN, &[], 0), EN.no_runs);
    w.record(&[
        at(1_764_000_000_000, Event::RunStart),
        at(1_764_000_001_000, prompt("hello")),
        at(1_764_000_002_000, assistant("hi", "stop")),
        at(1_764_000_003_000, Event::Settled { aborted: false }),
    ])
    .unwrap();
    w.log_mut()
        .set_summary(
            RunNo(1),
            Err((
                SummaryState::Unavailable,
                &memory_runlog::summary::no_model_note(),
            )),
            None,
            5,
        )
        .unwrap();
    let rows = w.log().runs(10).unwrap();
    assert_eq!(
        texts::runs(&EN, &rows, 1),
        "Runs, newest first (1 of 1):\nR01   completed          2025-11-24 16:00:00Z  summary unavailable hello"
    );
    let shown = texts::show_run(&EN, &rows[0]);
    assert!(shown.ends_with("Summary (unavailable): no model for experience — set \"experience.model\" or \"defaults.model\" in memory.json"), "{shown}");
    assert!(shown.contains("\nEnded: 2025-11-24 16:00:03Z\n"), "{shown}");
}
