//! Crash torture (≥ 200 SIGKILLs of a recording process) and two processes recording into
//! one database at once.

use std::io::Write as _;
use std::process::{Command, Stdio};

use camino::Utf8Path;
use memory_runlog::{Event, RunLog, RunStatus, SessionStart, Stamped, Writer};

const ACKS: &str = "acks.log";

fn stamp(event: Event) -> Stamped {
    Stamped {
        at: memory_runlog::now_ms(),
        event,
    }
}

/// One ack line in one `write` (appended with `O_APPEND`): a kill never tears it.
fn ack(file: &mut std::fs::File, line: &str) {
    file.write_all(line.as_bytes()).unwrap();
}

/// Records forever, appending `run events_committed` to the ack file after each commit.
#[test]
fn crash_child() {
    let Some((dir, seed)) = testkit::crash::child_dir() else {
        return;
    };
    let log_dir = dir.join("log");
    let mut w = Writer::open(&log_dir, memory_runlog::now_ms()).unwrap();
    w.start_session(
        &SessionStart {
            pi_session: format!("round-{seed}"),
            session_file: None,
            reason: "startup".into(),
            cwd: "/app".into(),
        },
        memory_runlog::now_ms(),
    )
    .unwrap();
    let mut acks = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(dir.join(ACKS))
        .unwrap();
    let mut rng = testkit::Rng::new(seed + 1);
    loop {
        let opened = w
            .record(&[
                stamp(Event::RunStart),
                stamp(Event::Prompt {
                    text: format!("round {seed}"),
                }),
            ])
            .unwrap();
        let Some(memory_runlog::Recorded::Opened(n)) = opened.last().copied() else {
            panic!("{opened:?}")
        };
        let mut count = 2;
        ack(&mut acks, &format!("{} {count}\n", n.0));
        for _ in 0..rng.below(6) {
            let batch: Vec<Stamped> = (0..1 + rng.below(4))
                .map(|i| {
                    stamp(Event::ToolResult {
                        id: format!("c{i}"),
                        name: "bash".into(),
                        text: "x".repeat(rng.below(300) as usize),
                        is_error: false,
                    })
                })
                .collect();
            w.record(&batch).unwrap();
            count += batch.len();
            ack(&mut acks, &format!("{} {count}\n", n.0));
        }
        // Every run ends (completed or aborted); the kill lands wherever it lands.
        let aborted = rng.below(2) == 0;
        w.record(&[
            stamp(Event::Assistant {
                text: "done".into(),
                stop_reason: Some("stop".into()),
                error: None,
                model: None,
            }),
            stamp(Event::Settled { aborted }),
        ])
        .unwrap();
        count += 2;
        let how = if aborted { "aborted" } else { "settled" };
        ack(&mut acks, &format!("{} {count} {how}\n", n.0));
    }
}

/// What the ack file promises: for each run, the events committed (the last complete line).
fn acked(dir: &Utf8Path) -> std::collections::BTreeMap<u32, (i64, Option<RunStatus>)> {
    let text = std::fs::read_to_string(dir.join(ACKS)).unwrap_or_default();
    let mut out = std::collections::BTreeMap::new();
    let complete = match text.rfind('\n') {
        Some(i) => &text[..=i],
        None => "",
    };
    for line in complete.lines() {
        let mut parts = line.split(' ');
        let (Some(n), Some(c)) = (parts.next(), parts.next()) else {
            continue;
        };
        let (Ok(n), Ok(c)) = (n.parse::<u32>(), c.parse::<i64>()) else {
            continue;
        };
        let end = match parts.next() {
            Some("settled") => Some(RunStatus::Completed),
            Some("aborted") => Some(RunStatus::Interrupted),
            _ => None,
        };
        out.insert(n, (c, end));
    }
    out
}

#[test]
fn crash_torture_loses_no_committed_event() {
    if testkit::crash::child_dir().is_some() {
        return;
    }
    let sb = testkit::Sandbox::new();
    let dir = sb.path("crash");
    std::fs::create_dir_all(&dir).unwrap();
    let mut killed_mid_run = 0;
    let mut newest = 0;
    testkit::crash::rounds("crash::crash_child", &dir, 220, 40, 0xC0FFEE, |round| {
        let mut log = RunLog::open(&dir.join("log")).unwrap();
        log.recover().unwrap();
        let runs = log.runs(usize::MAX >> 1).unwrap();
        // numbering: 1..=N, no duplicates
        let mut numbers: Vec<u32> = runs.iter().map(|r| r.number.0).collect();
        numbers.sort_unstable();
        assert_eq!(
            numbers,
            (1..=numbers.len() as u32).collect::<Vec<_>>(),
            "round {round}"
        );
        for r in &runs {
            assert_ne!(
                r.status,
                RunStatus::Running,
                "round {round}: {} left running",
                r.number
            );
            if r.status == RunStatus::RecoveryRequired {
                assert_eq!(
                    r.ended_at, None,
                    "round {round}: {} got an end time",
                    r.number
                );
            }
        }
        for (n, (count, end)) in acked(&dir) {
            let r = log.run(memory_runlog::RunNo(n)).unwrap();
            assert!(
                r.events >= count,
                "round {round}: R{n} lost events ({} < {count})",
                r.events
            );
            if let Some(status) = end {
                assert_eq!(r.status, status, "round {round}: R{n}");
                assert!(r.ended_at.is_some(), "round {round}: R{n} has no end");
            }
        }
        // this round's kill landed mid-run: its newest run is new and was cut off
        if let Some(r) = runs.first()
            && r.number.0 > newest
        {
            newest = r.number.0;
            if r.status == RunStatus::RecoveryRequired {
                killed_mid_run += 1;
            }
        }
    });
    let log = RunLog::open(&dir.join("log")).unwrap();
    let d = log.diagnostics().unwrap();
    assert_eq!(d.integrity, "ok");
    assert!(
        killed_mid_run > 10,
        "too few kills landed mid-run: {killed_mid_run}"
    );
    eprintln!(
        "run log crash torture: {} kills, {killed_mid_run} landed mid-run, {} runs, {} events, integrity {}",
        testkit::crash::kills(220),
        d.runs.iter().map(|(_, n)| n).sum::<i64>(),
        d.events,
        d.integrity
    );
}

const RUNS_PER_WRITER: u32 = 25;
const EVENTS_PER_RUN: usize = 8;

/// One of two concurrent writers: records its runs, one batch per event pair.
#[test]
fn two_writers_child() {
    let Some((dir, seed)) = testkit::crash::child_dir() else {
        return;
    };
    let mut w = Writer::open(&dir, memory_runlog::now_ms()).unwrap();
    w.start_session(
        &SessionStart {
            pi_session: format!("writer-{seed}"),
            session_file: Some(format!("/s/{seed}.jsonl")),
            reason: "startup".into(),
            cwd: "/app".into(),
        },
        memory_runlog::now_ms(),
    )
    .unwrap();
    for i in 0..RUNS_PER_WRITER {
        w.record(&[
            stamp(Event::RunStart),
            stamp(Event::Prompt {
                text: format!("writer {seed} run {i}"),
            }),
        ])
        .unwrap();
        for k in 0..EVENTS_PER_RUN / 2 {
            let ev = |j| {
                stamp(Event::ToolResult {
                    id: format!("c{k}{j}"),
                    name: "read".into(),
                    text: format!("writer {seed}"),
                    is_error: false,
                })
            };
            w.record(&[ev(0), ev(1)]).unwrap();
        }
        w.record(&[
            stamp(Event::Assistant {
                text: "ok".into(),
                stop_reason: Some("stop".into()),
                error: None,
                model: None,
            }),
            stamp(Event::Settled { aborted: false }),
        ])
        .unwrap();
    }
    w.close(memory_runlog::now_ms()).unwrap();
}

#[test]
fn two_processes_record_into_one_database() {
    if testkit::crash::child_dir().is_some() {
        return;
    }
    let sb = testkit::Sandbox::new();
    let dir = sb.path("shared");
    let exe = std::env::current_exe().unwrap();
    let children: Vec<_> = (1..=2)
        .map(|seed| {
            Command::new(&exe)
                .args([
                    "crash::two_writers_child",
                    "--exact",
                    "--nocapture",
                    "--test-threads=1",
                ])
                .env(testkit::crash::DIR_ENV, &dir)
                .env(testkit::crash::SEED_ENV, seed.to_string())
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for c in children {
        let out = c.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "a writer failed: {stderr}");
        assert!(
            !stderr.contains("busy") && !stderr.contains("locked"),
            "{stderr}"
        );
    }
    let log = RunLog::open(&dir).unwrap();
    let runs = log.runs(1000).unwrap();
    assert_eq!(runs.len(), 2 * RUNS_PER_WRITER as usize);
    let mut numbers: Vec<u32> = runs.iter().map(|r| r.number.0).collect();
    numbers.sort_unstable();
    assert_eq!(numbers, (1..=2 * RUNS_PER_WRITER).collect::<Vec<_>>());
    for r in &runs {
        assert_eq!(r.status, RunStatus::Completed, "{}", r.number);
        assert_eq!(r.events, EVENTS_PER_RUN as i64 + 4, "{}", r.number);
    }
    let d = log.diagnostics().unwrap();
    assert_eq!((d.sessions, d.writers, d.live_writers), (2, 2, 0));
    assert_eq!(
        d.events,
        2 * RUNS_PER_WRITER as i64 * (EVENTS_PER_RUN as i64 + 4)
    );
}
