//! `store`: the write operations at 199 entries against the raw cost of the atomic writes
//! they must do, and the warm manifest (listing) at 200 and 10,000 entries.
//!
//! Baseline for a write: the two `memory_lock::atomic_write` calls (entry file + `MEMORY.md`,
//! each temp file + fsync + rename + directory fsync) of the same sizes, in the same
//! directory, in the same run. Target: add/replace/remove at most 2x that. Listing targets:
//! under 1 ms (200) and under 20 ms (10,000), warm (mtime cache hot).

use std::path::Path;

use anyhow::Result;
use memory_core::{AddRequest, ReplaceRequest, Store, StoreOptions};

use crate::timing::{HEADER, Stats, fmt, measure, row, stats_of, time};

fn body(i: usize) -> String {
    format!(
        "When running the integration suite for service {i}, start the database container first \
         (`docker compose up -d db`), then run `cargo test -p svc{i} -- --test-threads=1`; \
         the tests share one schema and are not parallel-safe. Seen failing on 2026-0{}-1{} \
         with 'relation already exists' when run in parallel.",
        i % 9 + 1,
        i % 9
    )
}

fn fill(store: &Store, n: usize) -> Result<()> {
    for i in 0..n {
        store.add(AddRequest {
            name: format!("Integration tests of service {i} are serial"),
            description: Some(format!(
                "svc{i}: run its integration tests with --test-threads=1 after starting the db"
            )),
            body: body(i),
            ..AddRequest::default()
        })?;
    }
    Ok(())
}

/// Same-run figures for one write operation against the raw atomic writes.
fn report(name: &str, ours: &Stats, raw: &Stats) {
    println!("{}", row(name, ours));
    println!(
        "| ↳ ratio to raw atomic writes ({}) | **{:.2}x** | | | |",
        fmt(raw.median),
        ours.median.as_secs_f64() / raw.median.as_secs_f64()
    );
}

/// Entry point of the group.
pub(crate) fn run() -> Result<()> {
    let tmp = tempfile::tempdir_in(std::env::temp_dir())?;
    let dir = tmp.path().join("mem");
    let store = Store::new(crate::utf8(&dir)?, StoreOptions::default());
    fill(&store, 199)?;
    let index_len = std::fs::metadata(dir.join("MEMORY.md"))?.len() as usize;
    let entry_len =
        std::fs::metadata(dir.join("Integration-tests-of-service-7-are-serial.md"))?.len() as usize;

    // Long-lived processes (the pi sidecar) reuse their lock record file; the CLI does
    // not. Both configurations are measured.
    write_rounds(
        &store,
        tmp.path(),
        entry_len,
        index_len,
        "one-shot process (CLI)",
    )?;
    memory_lock::enable_lock_slots();
    write_rounds(
        &store,
        tmp.path(),
        entry_len,
        index_len,
        "long-lived process (sidecar)",
    )?;
    // As pimem's pi sidecar runs it: every write also takes the memory switch's commit
    // permit (a shared kernel lock and a read of `auto-memory.json`, PA-15).
    let switched = Store::new(
        crate::utf8(&dir)?,
        StoreOptions {
            switch: Some(memory_core::Switch::new(
                tmp.path().join("agent"),
                std::time::Duration::from_secs(5),
            )),
            ..StoreOptions::default()
        },
    );
    write_rounds(
        &switched,
        tmp.path(),
        entry_len,
        index_len,
        "long-lived process (sidecar) with the memory switch",
    )?;
    memory_lock::release_lock_slots();

    println!("Warm manifest (`Store::list`, mtime cache hot):\n");
    println!("{HEADER}");
    let l200 = measure(200, || store.list().map(|v| v.len()));
    println!("{}", row("list, 199-200 entries", &l200));
    let big = tmp.path().join("big");
    write_many(&big, 10_000)?;
    let big_store = Store::new(crate::utf8(&big)?, StoreOptions::default());
    let cold = measure(1, || big_store.list().map(|v| v.len()));
    let warm = measure(30, || big_store.list().map(|v| v.len()));
    println!(
        "{}",
        row("list, 10,000 entries, first call (cold cache)", &cold)
    );
    println!("{}", row("list, 10,000 entries, warm", &warm));
    Ok(())
}

/// Writes `n` entry files and an index directly (fast setup for the listing benchmark).
fn write_many(dir: &Path, n: usize) -> Result<()> {
    std::fs::create_dir_all(dir)?;
    let mut index = String::new();
    for i in 0..n {
        let name = format!("Memory number {i}");
        let file = format!("Memory-number-{i}.md");
        let meta = memory_index::EntryMeta {
            name: name.clone(),
            description: format!("fact {i} about the project"),
            entry_type: memory_index::EntryType::Project,
            created: "2026-10-01".into(),
            modified: format!("2026-10-01T00:00:{:02}.{:03}Z", i % 60, i % 1000),
        };
        std::fs::write(dir.join(&file), memory_index::render_entry(&meta, &body(i)))?;
        index.push_str(&memory_index::format_index_line(
            &name,
            &file,
            &meta.description,
        ));
        index.push('\n');
    }
    std::fs::write(dir.join("MEMORY.md"), index)?;
    Ok(())
}

/// Interleaved rounds: each times the baseline and every operation back to back, so load
/// from other processes hits all of them alike.
fn write_rounds(
    store: &Store,
    tmp: &Path,
    entry_len: usize,
    index_len: usize,
    label: &str,
) -> Result<()> {
    let samples = 80;
    let raw_dir = tmp.join(format!("raw-{}", label.len()));
    std::fs::create_dir(&raw_dir)?;
    let entry_bytes = vec![b'x'; entry_len];
    let index_bytes = vec![b'y'; index_len];
    let (mut raw_t, mut add_t, mut remove_t, mut replace_t) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for i in 0..=samples {
        let (r, t) = time(|| -> Result<()> {
            memory_lock::atomic_write(&raw_dir.join("entry.md"), &entry_bytes)?;
            memory_lock::atomic_write(&raw_dir.join("MEMORY.md"), &index_bytes)?;
            Ok(())
        });
        r?;
        raw_t.push(t);
        let (r, t) = time(|| {
            store.add(AddRequest {
                name: format!("Fresh memory {i}"),
                body: body(i),
                ..AddRequest::default()
            })
        });
        r?;
        add_t.push(t);
        let (r, t) = time(|| store.remove(&format!("Fresh memory {i}"), None));
        r?;
        remove_t.push(t);
        let (r, t) = time(|| {
            store.replace(ReplaceRequest {
                reference: format!("Integration tests of service {} are serial", i % 199),
                body: Some(body(i + 1000)),
                ..ReplaceRequest::default()
            })
        });
        r?;
        replace_t.push(t);
    }
    // The first round warms caches; drop it.
    let [raw, add, remove, replace] =
        [raw_t, add_t, remove_t, replace_t].map(|mut v| stats_of(v.split_off(1)));

    println!(
        "Writes at 199 entries, {label} (each: lock, snapshot, atomic entry + index writes):\n"
    );
    println!("{HEADER}");
    println!("{}", row("raw: 2 atomic writes (entry + index)", &raw));
    report("add (new entry)", &add, &raw);
    report("replace (body)", &replace, &raw);
    report("remove (unlink + index)", &remove, &raw);
    println!();

    Ok(())
}
