//! `surfacing`: lexical auto-surfacing end to end (`Surfacer::surface`: list the store, sync
//! the index, rank, render the `<relevant_memories>` block) at 200 and 10,000 memories.
//!
//! Targets (issue 4): under 1 ms at 200 memories and under 20 ms at 10,000, warm (store
//! cache and index built). The corpus is generated from templates of real coding-agent
//! memories (services × topics × tools, ports, versions, dates), so term statistics are
//! realistic: common words are in thousands of entries, names of services in hundreds.
//! Each sample resets the session's injected set, so every call does the full selection.
//! Same-run context rows: `Store::list` alone (the part surfacing cannot avoid: one
//! `fstatat` per entry) and the ranking alone.

use std::path::Path;

use anyhow::{Result, ensure};
use memory_agent::{Surfacer, SurfacingOptions};
use memory_core::{Store, StoreOptions};
use memory_rank::{LexicalDoc, LexicalIndex};

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

/// One size: cold first calls, then warm samples.
fn size(root: &Path, n: usize, samples: usize, target_ms: f64) -> Result<()> {
    let dir = root.join(format!("mem-{n}"));
    generate(&dir, n)?;
    let opts = SurfacingOptions::default(); // no model: lexical, maxFiles 3
    let mut prompts = PROMPTS.iter().cycle();

    // Cold: a new store (reads and parses every file) and a new surfacer (builds the index).
    let store = Store::new(crate::utf8(&dir)?, StoreOptions::default());
    let (out, took) = time(|| Surfacer::new(opts.clone()).surface(&store, PROMPTS[0]));
    out?;
    let cold = stats_of(vec![took]);
    // A new surfacer on a warm store: the index build alone (a new session).
    let mut fresh = Vec::new();
    let new_session = measure(samples.min(20), || {
        let mut s = Surfacer::new(opts.clone());
        let out = s.surface(&store, PROMPTS[1]);
        fresh.push(s);
        out.map(|o| o.files.len())
    });
    drop(fresh);

    let mut surfacer = Surfacer::new(opts.clone());
    let first = surfacer.surface(&store, PROMPTS[0])?;
    ensure!(
        !first.files.is_empty() && first.message.starts_with("<relevant_memories>\n"),
        "the benchmark prompt must surface something"
    );
    let mut surfaced = 0usize;
    let warm = measure(samples, || {
        surfacer.reset();
        let prompt = prompts.next().copied().unwrap_or(PROMPTS[0]);
        let out = surfacer.surface(&store, prompt);
        if let Ok(o) = &out {
            surfaced += o.files.len();
        }
        out.map(|o| o.files.len())
    });
    let list = measure(samples, || store.list().map(|v| v.len()));
    let entries = store.list()?;
    let index = LexicalIndex::build(entries.iter().map(|e| LexicalDoc {
        file: &e.file,
        name: &e.meta.name,
        description: &e.meta.description,
        body: &e.body,
        modified: &e.meta.modified,
    }));
    let rank = measure(samples, || {
        let prompt = prompts.next().copied().unwrap_or(PROMPTS[0]);
        index.rank(prompt, 3, &|_| false).len()
    });

    println!("{}", row(&format!("{n} memories: surface, warm"), &warm));
    println!(
        "{}",
        row(
            &format!("{n} memories: ↳ Store::list alone (same run)"),
            &list
        )
    );
    println!(
        "{}",
        row(&format!("{n} memories: ↳ LexicalIndex::rank alone"), &rank)
    );
    println!(
        "{}",
        row(
            &format!("{n} memories: new session (index build), warm store"),
            &new_session
        )
    );
    println!(
        "{}",
        row(
            &format!("{n} memories: first call, cold store + new index"),
            &cold
        )
    );
    println!(
        "| ↳ target: warm surface under {target_ms} ms | {} | {} | | |",
        fmt(warm.median),
        if met(&warm, target_ms) {
            "**met**"
        } else {
            "**missed**"
        }
    );
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
    size(tmp.path(), 200, 400, 1.0)?;
    size(tmp.path(), 10_000, 40, 20.0)?;
    Ok(())
}
