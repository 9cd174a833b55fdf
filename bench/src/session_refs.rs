//! Part of group `sessions`: listing the `@as:` completion candidates (named sessions of
//! every project, name substring, 20 most recent) over 1,000 / 10,000 / 50,000 session files,
//! with `SessionCatalog` cold (first listing: every file read) and warm (the sidecar's
//! steady state: one `stat` per file, nothing read), against reading every file completely on
//! each call (what pi's `SessionManager.listAll` does, here with our reader).
//!
//! The corpus: pi-shaped session files of 1–6 KB (header, an optional `session_info`, a few
//! user/assistant messages) spread over one directory per project, 100 sessions per
//! project, every third one named. Files live in a temp dir under /tmp, deleted at the end.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;
use std::process::{Command, Stdio};

use anyhow::{Context, Result, ensure};
use memory_agent::pi::session_tools::{Caller, RefScope, candidates};
use memory_agent::pi::sessions::{SessionCatalog, SessionStorage, list_sessions};
use serde_json::json;

use crate::timing::{self, HEADER};

const SIZES: [usize; 3] = [1_000, 10_000, 50_000];
const PER_PROJECT: usize = 100;
const QUERY: &str = "auth";

/// Runs this part of the group.
pub(crate) fn run() -> Result<()> {
    println!(
        "`@as:` candidates (query `{QUERY}`: named sessions of every project, 20 most recent) \
         over pi-shaped session files of 1–6 KB, {PER_PROJECT} per project directory, every \
         third one named. Cold: a new catalog (every file read; page cache warm). Warm: the \
         same catalog again (the sidecar's steady state: one `stat` per file, whose cost \
         `find` shows). Uncached: every file read completely on each call.\n"
    );
    println!("{HEADER}");
    let mut warm_10k = None;
    for n in SIZES {
        let tmp = tempfile::Builder::new()
            .prefix("memory-bench-session-refs-")
            .tempdir_in("/tmp")
            .context("creating the corpus directory under /tmp")?;
        let root = tmp.path().join("sessions");
        let named = generate(&root, n)?;
        let caller = Caller::new(
            "/home/u/project-0".into(),
            SessionStorage::PerCwd { root: root.clone() },
        );
        let first = candidates(&SessionCatalog::new(), &caller, RefScope::All, QUERY)?;
        ensure!(
            first.len() == 20.min(named),
            "expected 20 candidates, got {}",
            first.len()
        );
        let cold = timing::measure(if n >= 50_000 { 3 } else { 5 }, || {
            candidates(&SessionCatalog::new(), &caller, RefScope::All, QUERY)
        });
        let catalog = SessionCatalog::new();
        let warm = timing::measure(20, || candidates(&catalog, &caller, RefScope::All, QUERY));
        ensure!(
            candidates(&catalog, &caller, RefScope::All, QUERY)? == first,
            "the warm listing differs from the cold one"
        );
        println!(
            "{}",
            timing::row(&format!("{n} files: warm (cached catalog)"), &warm)
        );
        if let Some(floor) = stat_floor(&root) {
            println!(
                "{}",
                timing::row(
                    &format!("{n} files: `find -printf '%s %T@'` (one stat per file: the floor)"),
                    &floor
                )
            );
        }
        println!(
            "{}",
            timing::row(&format!("{n} files: cold (new catalog)"), &cold)
        );
        if n <= 10_000 {
            let uncached = timing::measure(3, || uncached(&root));
            println!(
                "{}",
                timing::row(&format!("{n} files: uncached (every file read)"), &uncached)
            );
        }
        if n == 10_000 {
            warm_10k = Some(warm);
        }
    }
    if let Some(w) = warm_10k {
        println!(
            "\n`@as:` candidates over 10,000 files, warm: **{}** (target <= 50 ms).",
            timing::fmt(w.median)
        );
    }
    Ok(())
}

/// `find` stat-ing every session file (what a warm listing cannot avoid), spawned like the
/// ripgrep baseline; `None` without `find`.
fn stat_floor(root: &Path) -> Option<timing::Stats> {
    let run = || {
        Command::new("find")
            .arg(root)
            .args(["-name", "*.jsonl", "-printf", "%s %T@\\n"])
            .stdout(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    };
    run().then(|| timing::measure(20, run))
}

/// Every project directory listed with full reads (no cache).
fn uncached(root: &Path) -> Result<usize> {
    let mut named = 0;
    for dir in std::fs::read_dir(root)? {
        named += list_sessions(&dir?.path(), None)?
            .iter()
            .filter(|s| {
                s.name
                    .as_deref()
                    .is_some_and(|n| n.to_lowercase().contains(QUERY))
            })
            .count();
    }
    Ok(named)
}

fn iso(ms: i64) -> String {
    jiff::Timestamp::from_millisecond(ms)
        .map(|t| t.strftime("%Y-%m-%dT%H:%M:%S%.3fZ").to_string())
        .unwrap_or_default()
}

const NAMES: [&str; 6] = [
    "Refactor auth",
    "Payment retries",
    "Auth token rotation",
    "Deadlock in queue",
    "Release notes",
    "OAuth scopes",
];

/// Writes `n` session files; returns how many are named with a name containing [`QUERY`].
fn generate(root: &Path, n: usize) -> Result<usize> {
    let base: i64 = 1_790_000_000_000;
    let mut named_matching = 0;
    for i in 0..n {
        let project = i / PER_PROJECT;
        let cwd = format!("/home/u/project-{project}");
        let dir = root.join(format!("--home-u-project-{project}--"));
        if i % PER_PROJECT == 0 {
            std::fs::create_dir_all(&dir)?;
        }
        let ms = base + (i as i64) * 61_000;
        let id = format!("0191{i:08x}-7abc-7def-8123-{:012x}", i * 7919);
        let path = dir.join(format!("{}_{id}.jsonl", iso(ms).replace([':', '.'], "-")));
        let mut w = BufWriter::new(File::create(&path)?);
        writeln!(
            w,
            "{}",
            json!({"type":"session","version":3,"id":id,"timestamp":iso(ms),"cwd":cwd})
        )?;
        let mut parent = serde_json::Value::Null;
        let mut entry = |w: &mut BufWriter<File>, k: usize, v: serde_json::Value| -> Result<()> {
            let mut v = v;
            let eid = format!("{:08x}", i * 31 + k);
            v["id"] = json!(eid);
            v["parentId"] = parent.clone();
            v["timestamp"] = json!(iso(ms + k as i64 * 1000));
            parent = json!(eid);
            writeln!(w, "{v}")?;
            Ok(())
        };
        if i % 3 == 0 {
            let name = NAMES[(i / 3) % NAMES.len()];
            if name.to_lowercase().contains(QUERY) {
                named_matching += 1;
            }
            entry(&mut w, 0, json!({"type":"session_info","name":name}))?;
        }
        let turns = 1 + i % 5;
        for t in 0..turns {
            let text =
                "Lorem ipsum dolor sit amet, consectetur adipiscing elit. ".repeat(1 + (i + t) % 8);
            entry(
                &mut w,
                1 + 2 * t,
                json!({"type":"message","message":{"role":"user","content":[{"type":"text","text":text}],"timestamp":ms + (1 + 2 * t as i64) * 1000}}),
            )?;
            entry(
                &mut w,
                2 + 2 * t,
                json!({"type":"message","message":{"role":"assistant","content":[{"type":"text","text":text}],"stopReason":"stop","timestamp":ms + (2 + 2 * t as i64) * 1000}}),
            )?;
        }
        w.flush()?;
    }
    Ok(named_matching)
}
