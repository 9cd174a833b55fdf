//! `runlog`: the run log (memory-runlog) — event append latency against a bare SQLite
//! insert + commit with the same settings, search at 1M events / 10k runs, bytes per event.
//!
//! * Append: one tool-result event per `Writer::record` (one `BEGIN IMMEDIATE` transaction,
//!   WAL, `synchronous=FULL`) against `BEGIN; INSERT; COMMIT` into a bare four-column table in
//!   another file of the same directory, interleaved in blocks so both see the same disk.
//!   Target: p50 and p99 at most 1.5x the baseline's.
//! * Search: 10,000 runs of 100 events each (1,000,000 events), 2,000 of them summarized;
//!   FTS5 queries of one and two words, warm. Target: ≤ 10 ms.
//! * Size: database bytes per 1,000 events after a checkpoint.

use std::time::{Duration, Instant};

use anyhow::Result;
use memory_runlog::baseline::BareTable;
use memory_runlog::{Event, RunLog, RunNo, SessionStart, Stamped, SummaryState, Writer};

use crate::timing::{HEADER, Stats, fmt, row, stats_of};

const WORDS: &[&str] = &[
    "deploy",
    "staging",
    "postgres",
    "migration",
    "flaky",
    "test",
    "release",
    "docker",
    "kubernetes",
    "refactor",
    "parser",
    "timeout",
    "cache",
    "login",
    "oauth",
    "webhook",
    "invoice",
    "upload",
    "search",
    "index",
    "memory",
    "leak",
    "crash",
    "benchmark",
    "lint",
    "clippy",
    "rust",
    "typescript",
    "react",
    "router",
    "schema",
    "backup",
    "restore",
    "queue",
    "retry",
    "metrics",
    "logging",
    "tracing",
    "config",
    "secrets",
];

fn prompt(rng: &mut u64, i: usize) -> String {
    let mut pick = || {
        *rng ^= *rng << 13;
        *rng ^= *rng >> 7;
        *rng ^= *rng << 17;
        WORDS[(*rng % WORDS.len() as u64) as usize]
    };
    format!(
        "run {i}: fix the {} {} in the {} service",
        pick(),
        pick(),
        pick()
    )
}

fn session(n: usize) -> SessionStart {
    SessionStart {
        pi_session: format!("bench-{n}"),
        session_file: None,
        reason: "startup".into(),
        cwd: "/bench".into(),
    }
}

fn tool_result(i: usize) -> Event {
    Event::ToolResult {
        id: format!("call_{i}"),
        name: "bash".into(),
        text: format!(
            "test result: ok. {i} passed; 0 failed; 0 ignored; finished in 0.{i:03}s\n\
             warning: unused variable `x` in src/lib.rs:{i}"
        ),
        is_error: false,
    }
}

fn append(dir: &camino::Utf8Path) -> Result<(Stats, Stats)> {
    let mut w = Writer::open(&dir.join("log"), 0)?;
    w.start_session(&session(0), 0)?;
    w.record(&[Stamped {
        at: 0,
        event: Event::RunStart,
    }])?;
    let mut bare = BareTable::open(&dir.join("bare.db"))?;
    let (mut ours, mut base) = (Vec::new(), Vec::new());
    for block in 0..30 {
        for i in 0..50 {
            let n = block * 50 + i;
            let e = tool_result(n);
            let body = serde_json::to_string(&e)?;
            let t = Instant::now();
            bare.insert_commit(n as i64, "toolResult", &body)?;
            base.push(t.elapsed());
            let t = Instant::now();
            w.record(&[Stamped {
                at: n as i64,
                event: e,
            }])?;
            ours.push(t.elapsed());
        }
    }
    Ok((stats_of(ours), stats_of(base)))
}

fn p99(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v.get((v.len() * 99 / 100).min(v.len().saturating_sub(1)))
        .copied()
        .unwrap_or_default()
}

/// Entry point of the group.
pub(crate) fn run() -> Result<()> {
    let tmp = tempfile::tempdir_in(std::env::temp_dir())?;
    let dir = crate::utf8(tmp.path())?;

    // ---------------------------------------------------------------- append latency
    // p99 needs the raw samples: run once more collecting them.
    let (ours, base) = append(&dir.join("a"))?;
    let (ours99, base99) = {
        let d = dir.join("b");
        let mut w = Writer::open(&d.join("log"), 0)?;
        w.start_session(&session(1), 0)?;
        w.record(&[Stamped {
            at: 0,
            event: Event::RunStart,
        }])?;
        let mut bare = BareTable::open(&d.join("bare.db"))?;
        let (mut o, mut b) = (Vec::new(), Vec::new());
        for n in 0..1500 {
            let e = tool_result(n);
            let body = serde_json::to_string(&e)?;
            let t = Instant::now();
            bare.insert_commit(n as i64, "toolResult", &body)?;
            b.push(t.elapsed());
            let t = Instant::now();
            w.record(&[Stamped {
                at: n as i64,
                event: e,
            }])?;
            o.push(t.elapsed());
        }
        (p99(o), p99(b))
    };
    println!("Append one event (WAL, synchronous=FULL, one transaction per call):\n");
    println!("{HEADER}");
    println!("{}", row("`Writer::record` of one tool result", &ours));
    println!("{}", row("bare `BEGIN; INSERT; COMMIT` (baseline)", &base));
    println!(
        "| ↳ ratio p50 | **{:.2}x** | | | |",
        ours.median.as_secs_f64() / base.median.as_secs_f64()
    );
    println!(
        "| ↳ p99: ours {} / baseline {} | **{:.2}x** | | | |",
        fmt(ours99),
        fmt(base99),
        ours99.as_secs_f64() / base99.as_secs_f64()
    );

    // ---------------------------------------------------------------- 1M events / 10k runs
    const RUNS: usize = 10_000;
    const PER_RUN: usize = 100;
    let big = dir.join("big");
    let build = Instant::now();
    let mut w = Writer::open(&big, 0)?;
    w.start_session(&session(2), 0)?;
    let mut rng = 0x9E37_79B9_7F4A_7C15_u64;
    for r in 0..RUNS {
        let t0 = (r * 1000) as i64;
        let mut batch = Vec::with_capacity(PER_RUN);
        batch.push(Stamped {
            at: t0,
            event: Event::RunStart,
        });
        batch.push(Stamped {
            at: t0 + 1,
            event: Event::Prompt {
                text: prompt(&mut rng, r),
            },
        });
        for i in 0..PER_RUN - 4 {
            batch.push(Stamped {
                at: t0 + 2 + i as i64,
                event: tool_result(i),
            });
        }
        batch.push(Stamped {
            at: t0 + 900,
            event: Event::Assistant {
                text: "Fixed it.".into(),
                stop_reason: Some("stop".into()),
                error: None,
                model: Some("bench/model".into()),
            },
        });
        batch.push(Stamped {
            at: t0 + 999,
            event: Event::Settled { aborted: false },
        });
        w.record(&batch)?;
    }
    let log = w.log_mut();
    for r in (0..RUNS).step_by(5) {
        let text = format!("Summary of run {r}: {}", prompt(&mut rng, r));
        log.set_summary(RunNo(r as u32 + 1), Ok(&text), Some("bench/model"), 0)?;
    }
    let _ = SummaryState::Done;
    let built = build.elapsed();
    log.checkpoint()?;
    let d = log.diagnostics()?;
    let log = RunLog::open(&big)?;
    let queries = [
        "postgres",
        "flaky test",
        "deploy staging",
        "kubernetes timeout",
        "summary webhook",
    ];
    let mut times = Vec::new();
    let mut hits = 0;
    for q in queries {
        hits += log.search(q, 20)?.len(); // warm
    }
    for _ in 0..40 {
        for q in queries {
            let t = Instant::now();
            std::hint::black_box(log.search(q, 20)?);
            times.push(t.elapsed());
        }
    }
    let search = stats_of(times.clone());
    println!(
        "\nSearch over {} runs / {} events (built in {:.1} s, one transaction per run), {} queries × 40, warm, top 20 ({hits} hits in the warm-up):\n",
        RUNS,
        d.events,
        built.as_secs_f64(),
        queries.len()
    );
    println!("{HEADER}");
    println!("{}", row("`RunLog::search` (FTS5)", &search));
    println!("| ↳ p99 | {} | | | |", fmt(p99(times)));
    println!(
        "\nSize: {} bytes for {} events = **{:.0} bytes per 1,000 events** (after a checkpoint; includes runs, FTS and indexes).",
        d.bytes,
        d.events,
        d.bytes as f64 * 1000.0 / d.events as f64
    );
    Ok(())
}
