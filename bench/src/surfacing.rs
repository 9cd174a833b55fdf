//! `surfacing`: lexical auto-surfacing end to end (`Surfacer::surface`: list the store, sync
//! the index, rank, render the `<relevant_memories>` block) at 200, 10,000 and 100,000
//! memories (`BENCH_SKIP_100K=1` skips the largest).
//!
//! Targets (issue 17): a warm surface in the sidecar (watched store) under 1 ms at 200 and
//! 10,000 memories; a new session (a new process: cold store, persisted index) under 20 ms
//! at 10,000; 100,000 measured. The corpus is generated from templates of real coding-agent
//! memories (services × topics × tools, ports, versions, dates), so term statistics are
//! realistic: common words are in thousands of entries, names of services in hundreds.
//! Each sample resets the session's injected set, so every call does the full selection.
//! Same-run context rows: the watched `Store::list` alone, the ranking alone, the warm call
//! without the watch (one `fstatat` per entry), and a new session with nothing persisted.

use std::path::Path;

use anyhow::{Result, ensure};
use memory_agent::live::Loaded;
use memory_agent::{LiveIndex, Surfacer, SurfacingOptions};
use memory_core::{Store, StoreOptions};

use crate::timing::{HEADER, Stats, fmt, measure, row, stats_of, time};

const SERVICES: &[&str] = &[
    "billing",
    "auth",
    "search",
    "ledger",
    "notifications",
    "gateway",
    "payments",
    "reports",
    "scheduler",
    "inventory",
    "checkout",
    "profile",
    "analytics",
    "export",
    "importer",
    "mailer",
    "webhooks",
    "pricing",
    "catalog",
    "shipping",
    "fraud",
    "audit",
    "sync",
    "admin",
];
const TOPICS: &[(&str, &str)] = &[
    (
        "Redis cache TTL",
        "cache keys expire after {n} seconds; bump the schema suffix instead of flushing redis",
    ),
    (
        "Postgres pool size",
        "sqlx PgPool max_connections is {n} per pod; check pgbouncer before raising it",
    ),
    (
        "Flaky integration test",
        "the retry test sleeps on wall-clock time and fails on CI about once in {n} runs",
    ),
    (
        "Deploy with helm",
        "helm upgrade --install with values/{svc}.yaml; ArgoCD syncs prod from main",
    ),
    (
        "Rate limit",
        "public endpoints allow {n} requests per minute per API key, 429 with Retry-After",
    ),
    (
        "Feature flag cleanup",
        "remove the flag and its dead code path within two sprints of full rollout",
    ),
    (
        "Migration gotcha",
        "always write the down migration and re-run cargo sqlx prepare or CI fails",
    ),
    (
        "Local dev port",
        "the dev server listens on port {n}; the web app proxies /api to it",
    ),
    (
        "Logging rule",
        "structured tracing fields only, never log request bodies: they contain card data",
    ),
    (
        "Timeout tuning",
        "the upstream call times out after {n} ms; retries use exponential backoff with jitter",
    ),
    (
        "Build command",
        "build with `cargo build -p {svc} --release`; the docker image uses cargo-chef",
    ),
    (
        "Deadlock fix",
        "lock rows ordered by id (SELECT ... ORDER BY id FOR UPDATE) to avoid deadlocks",
    ),
    (
        "Queue consumer lag",
        "kafka consumer lag alert fires above {n} messages; scale the consumer group",
    ),
    (
        "Secrets location",
        "secrets live in vault under secret/{svc}/env; never commit .env files",
    ),
    (
        "OOM in export",
        "stream rows with a server-side cursor, {n} per fetch, instead of loading everything",
    ),
    (
        "Benchmark baseline",
        "save a criterion baseline on main and compare with --baseline main",
    ),
    (
        "Snapshot tests",
        "review insta snapshots with cargo insta review; never accept blindly",
    ),
    (
        "Time zones",
        "store timestamps as UTC timestamptz and convert only in the UI",
    ),
    (
        "Pagination",
        "cursor pagination with limit up to {n}; offsets were slow on big tables",
    ),
    (
        "Idempotency",
        "POST requests need an Idempotency-Key header; keys are kept 24 hours",
    ),
    (
        "Protobuf changes",
        "run buf lint and buf breaking against main before changing a .proto",
    ),
    (
        "CI cache",
        "sccache on S3 cut CI from {n} to 9 minutes; check SCCACHE_BUCKET when slow",
    ),
    (
        "Windows paths",
        "compare Path values, not strings with '/', or the windows runner fails",
    ),
    (
        "Translation keys",
        "add every new i18n key to en, de and zh or it falls back to English",
    ),
];
const PROMPTS: &[&str] = &[
    "the billing integration test is flaky again on CI, any history?",
    "how do I deploy the search service to staging with helm?",
    "we get 429 Too Many Requests from the gateway, what are the limits?",
    "kafka consumer lag alert for notifications keeps firing",
    "export job for reports runs out of memory",
    "raise the postgres pool size for checkout",
];

/// A deterministic pseudo-random sequence (64-bit LCG).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self, bound: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        ((self.0 >> 33) % bound as u64) as usize
    }
}

/// Writes `n` generated entries (and their index) straight to `dir`.
fn generate(dir: &Path, n: usize) -> Result<()> {
    std::fs::create_dir_all(dir)?;
    let mut rng = Lcg(0x5eed);
    let mut index = String::new();
    for i in 0..n {
        let svc = SERVICES[rng.next(SERVICES.len())];
        let (topic, template) = TOPICS[rng.next(TOPICS.len())];
        let number = [5, 20, 25, 50, 200, 300, 3000, 5000, 8080, 10_000][rng.next(10)];
        let detail = template
            .replace("{n}", &number.to_string())
            .replace("{svc}", svc);
        let name = format!("{topic} in {svc} #{i}");
        let description = format!("{svc}: {}", detail.split(';').next().unwrap_or(&detail));
        let body = format!(
            "{detail}.\n\nSeen in {svc} on 2026-{:02}-{:02} while working on ticket LED-{}. \
             Why: the previous approach broke in production. How to apply: check this before \
             touching the {svc} {} code.",
            rng.next(12) + 1,
            rng.next(28) + 1,
            100 + rng.next(900),
            topic.to_lowercase(),
        );
        let meta = memory_index::EntryMeta {
            name: name.clone(),
            description: description.clone(),
            entry_type: memory_index::EntryType::ALL[rng.next(4)],
            created: "2026-10-01".into(),
            modified: format!(
                "2026-{:02}-{:02}T{:02}:{:02}:00.000Z",
                rng.next(12) + 1,
                rng.next(28) + 1,
                rng.next(24),
                rng.next(60)
            ),
        };
        let file = memory_index::entry_file_name(&name);
        std::fs::write(dir.join(&file), memory_index::render_entry(&meta, &body))?;
        index.push_str(&memory_index::format_index_line(&name, &file, &description));
        index.push('\n');
    }
    std::fs::write(dir.join("MEMORY.md"), index)?;
    Ok(())
}

/// One size: warm calls with and without the watch, new sessions with and without the
/// persisted index.
fn size(root: &Path, n: usize, samples: usize, targets: (f64, f64)) -> Result<()> {
    let dir = root.join(format!("mem-{n}"));
    generate(&dir, n)?;
    let udir = crate::utf8(&dir)?;
    let opts = SurfacingOptions::default(); // no model: lexical, maxFiles 3
    let mut prompts = PROMPTS.iter().cycle();
    let mut next_prompt = || prompts.next().copied().unwrap_or(PROMPTS[0]);

    // A new session with nothing persisted: a new process reads and parses every file and
    // builds the index (the first call of a session before issue 17).
    let cold_store = Store::new(udir.clone(), StoreOptions::default());
    let (out, took) = time(|| Surfacer::new(opts.clone()).surface(&cold_store, PROMPTS[0]));
    out?;
    let cold = stats_of(vec![took]);
    drop(cold_store);

    // The sidecar: a watched store and a session's surfacer, warm.
    let store = Store::new(udir.clone(), StoreOptions::default());
    ensure!(
        store.watch(),
        "the benchmark needs file-system notifications"
    );
    let (live, _) = LiveIndex::open(&store)?;
    let mut surfacer = Surfacer::with_index(opts.clone(), live);
    let first = surfacer.surface(&store, PROMPTS[0])?;
    ensure!(
        !first.files.is_empty() && first.message.starts_with("<relevant_memories>\n"),
        "the benchmark prompt must surface something"
    );
    let mut surfaced = 0usize;
    let warm = measure(samples, || {
        surfacer.reset();
        let out = surfacer.surface(&store, next_prompt());
        if let Ok(o) = &out {
            surfaced += o.files.len();
        }
        out.map(|o| o.files.len())
    });
    ensure!(
        store.cache_stats().watched > 0,
        "the warm calls used the watch"
    );
    let watched_list = measure(samples, || store.list().map(|v| v.len()));
    surfacer.index_mut().save(&store)?;
    let rank = measure(samples, || {
        surfacer
            .index()
            .index()
            .rank(next_prompt(), 3, &|_| false)
            .len()
    });

    // The same without the watch: every call `lstat`s every file (the fallback).
    let unwatched = Store::new(udir.clone(), StoreOptions::default());
    let mut plain = Surfacer::new(opts.clone());
    plain.surface(&unwatched, PROMPTS[0])?;
    let stat_scan = measure(samples.min(40), || {
        plain.reset();
        plain
            .surface(&unwatched, next_prompt())
            .map(|o| o.files.len())
    });
    drop((plain, unwatched));

    // A new session in a new process with the persisted index: a cold store seeded from
    // `.pimem/lexical-index`, every file `lstat`ed once, the index decoded, first surface.
    let new_session = measure(samples.min(20), || {
        let store = Store::new(udir.clone(), StoreOptions::default());
        let (live, loaded) = LiveIndex::open(&store).expect("open");
        assert!(
            matches!(loaded, Loaded::Persisted { reindexed: 0 }),
            "{loaded:?}"
        );
        let mut s = Surfacer::with_index(opts.clone(), live);
        s.surface(&store, PROMPTS[1]).map(|o| o.files.len())
    });
    let bytes = std::fs::metadata(LiveIndex::path(&store).as_std_path())?.len();
    // A new session in the running sidecar: its store is warm and watched; the session's
    // index comes from the persisted file (no rebuild).
    let same_process = measure(samples.min(20), || {
        let (live, loaded) = LiveIndex::open(&store).expect("open");
        assert!(
            matches!(loaded, Loaded::Persisted { reindexed: 0 }),
            "{loaded:?}"
        );
        let mut s = Surfacer::with_index(opts.clone(), live);
        s.surface(&store, PROMPTS[1]).map(|o| o.files.len())
    });

    println!(
        "{}",
        row(
            &format!("{n} memories: surface, warm (watched store, the sidecar)"),
            &warm
        )
    );
    println!(
        "{}",
        row(
            &format!("{n} memories: ↳ Store::list, watched"),
            &watched_list
        )
    );
    println!(
        "{}",
        row(&format!("{n} memories: ↳ LexicalIndex::rank alone"), &rank)
    );
    println!(
        "{}",
        row(
            &format!("{n} memories: surface, warm, stat scan (no watch)"),
            &stat_scan
        )
    );
    println!(
        "{}",
        row(
            &format!("{n} memories: new session in the running sidecar, persisted index"),
            &same_process
        )
    );
    println!(
        "{}",
        row(
            &format!(
                "{n} memories: new session, new process, persisted index ({:.1} MB)",
                bytes as f64 / 1e6
            ),
            &new_session
        )
    );
    println!(
        "{}",
        row(
            &format!("{n} memories: new session, new process, nothing persisted"),
            &cold
        )
    );
    let verdict = |s: &Stats, t: f64| if met(s, t) { "**met**" } else { "**missed**" };
    if targets.0 > 0.0 {
        println!(
            "| ↳ target: warm surface under {} ms | {} | {} | | |",
            targets.0,
            fmt(warm.median),
            verdict(&warm, targets.0)
        );
    }
    if targets.1 > 0.0 {
        println!(
            "| ↳ target: new session under {} ms (in the running sidecar / new process) | {} / {} | {} / {} | | |",
            targets.1,
            fmt(same_process.median),
            fmt(new_session.median),
            verdict(&same_process, targets.1),
            verdict(&new_session, targets.1)
        );
    }
    eprintln!(
        "surfacing: {n} memories, {:.1} files surfaced per warm call",
        surfaced as f64 / (samples + 1) as f64
    );
    Ok(())
}

fn met(s: &Stats, target_ms: f64) -> bool {
    s.median.as_secs_f64() * 1e3 < target_ms
}

/// Entry point of the group.
pub(crate) fn run() -> Result<()> {
    let tmp = tempfile::tempdir_in(std::env::temp_dir())?;
    println!("Lexical selector, default configuration (maxFiles 3), realistic generated corpus:\n");
    println!("{HEADER}");
    size(tmp.path(), 200, 400, (1.0, 0.0))?;
    size(tmp.path(), 10_000, 200, (1.0, 20.0))?;
    if std::env::var_os("BENCH_SKIP_100K").is_none() {
        size(tmp.path(), 100_000, 40, (0.0, 0.0))?;
    }
    Ok(())
}
