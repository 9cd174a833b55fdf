//! [`LiveIndex`]: persisted between processes (and never trusted over the files), kept warm
//! by the store's watch, and the duplicate warning of the memory tool.
#![allow(clippy::unwrap_used)]

use std::process::Command;

use memory_agent::live::{DUPLICATE_THRESHOLD, INDEX_PATH, Loaded};
use memory_agent::{LiveIndex, MemoryTool, Surfacer};
use memory_core::{AddRequest, Store, StoreOptions};
use serde_json::json;
use testkit::Sandbox;
use testkit::retrieval::{Dataset, half_of};

fn store(sb: &Sandbox) -> Store {
    Store::new(
        sb.path("proj"),
        StoreOptions {
            clock: testkit::stepping_clock(),
            ..StoreOptions::default()
        },
    )
}

fn add(store: &Store, name: &str, body: &str) {
    store
        .add(AddRequest {
            name: name.into(),
            body: body.into(),
            ..AddRequest::default()
        })
        .unwrap();
}

fn seed(store: &Store) {
    add(
        store,
        "Staging SSH port",
        "staging listens for SSH on 2222, not 22",
    );
    add(
        store,
        "Redis cache keys",
        "keys are versioned: ledger:{env}:{id}:v2",
    );
    add(
        store,
        "Deploy with helm",
        "helm upgrade --install with per-env values",
    );
}

fn ranked(live: &LiveIndex, q: &str) -> Vec<String> {
    live.index()
        .rank(q, 3, &|_| false)
        .into_iter()
        .map(|h| h.file)
        .collect()
}

fn sh(sb: &Sandbox, script: &str) {
    let ok = Command::new("sh")
        .arg("-c")
        .arg(script)
        .current_dir(sb.path("proj"))
        .status()
        .unwrap()
        .success();
    assert!(ok, "{script}");
}

#[test]
fn a_persisted_index_spares_every_read_and_ranks_the_same() {
    let sb = Sandbox::new();
    let first = store(&sb);
    seed(&first);
    let (mut live, loaded) = LiveIndex::open(&first).unwrap();
    assert_eq!(loaded, Loaded::Missing);
    assert!(live.save(&first).unwrap());
    assert!(!live.save(&first).unwrap(), "unchanged: nothing to write");
    assert!(sb.path("proj").join(INDEX_PATH).is_file());

    // A new process: no entry file is read, nothing is re-indexed.
    let next = store(&sb);
    let (again, loaded) = LiveIndex::open(&next).unwrap();
    assert_eq!(loaded, Loaded::Persisted { reindexed: 0 });
    assert_eq!(next.cache_stats().parsed, 0);
    for q in [
        "ssh into staging",
        "redis cache key format",
        "deploy with helm",
    ] {
        assert_eq!(ranked(&again, q), ranked(&live, q), "{q}");
    }
    // pi-memory's view of the directory is unchanged: the entries and MEMORY.md.
    assert_eq!(next.list().unwrap().len(), 3);
    let index = std::fs::read_to_string(sb.path("proj/MEMORY.md")).unwrap();
    assert_eq!(index.lines().count(), 3);
}

#[test]
fn a_stale_persisted_index_is_corrected_from_the_files() {
    let sb = Sandbox::new();
    let first = store(&sb);
    seed(&first);
    LiveIndex::open(&first).unwrap().0.save(&first).unwrap();
    // Edited in place by another process, one deleted, one added (copied).
    let text = std::fs::read_to_string(sb.path("proj/Redis-cache-keys.md")).unwrap();
    let edited = text.replace(
        "keys are versioned",
        "keys expire after 300 seconds, rotate tokens",
    );
    std::fs::write(sb.path("proj/Redis-cache-keys.md"), edited).unwrap();
    sh(&sb, "rm Deploy-with-helm.md");
    let copy = text.replace("name: Redis cache keys", "name: Kafka topics");
    std::fs::write(sb.path("proj/Kafka-topics.md"), copy).unwrap();

    let next = store(&sb);
    let (live, loaded) = LiveIndex::open(&next).unwrap();
    assert_eq!(loaded, Loaded::Persisted { reindexed: 3 });
    assert_eq!(
        next.cache_stats().parsed,
        2,
        "only the changed files are read"
    );
    assert_eq!(
        ranked(&live, "rotate tokens expire"),
        ["Redis-cache-keys.md"]
    );
    assert!(ranked(&live, "deploy with helm").is_empty());
    assert!(ranked(&live, "kafka topics").contains(&"Kafka-topics.md".to_owned()));
    // Exactly what an index built from the files ranks.
    let mut fresh = LiveIndex::default();
    fresh.refresh(&store(&sb)).unwrap();
    for q in ["rotate tokens", "ssh staging", "kafka", "redis"] {
        assert_eq!(ranked(&live, q), ranked(&fresh, q), "{q}");
    }
}

#[test]
fn a_damaged_persisted_index_is_rebuilt_never_trusted() {
    let sb = Sandbox::new();
    let first = store(&sb);
    seed(&first);
    LiveIndex::open(&first).unwrap().0.save(&first).unwrap();
    let path = sb.path("proj").join(INDEX_PATH);
    let good = std::fs::read(&path).unwrap();
    let damaged: Vec<(&str, Vec<u8>)> = vec![
        ("flipped byte", {
            let mut b = good.clone();
            let i = b.len() / 2;
            b[i] ^= 0x20;
            b
        }),
        ("truncated", good[..good.len() - 7].to_vec()),
        ("empty", Vec::new()),
        ("foreign", b"{\"not\": \"an index\"}".to_vec()),
    ];
    for (what, bytes) in damaged {
        std::fs::write(&path, &bytes).unwrap();
        let next = store(&sb);
        let (mut live, loaded) = LiveIndex::open(&next).unwrap();
        assert!(matches!(loaded, Loaded::Rebuilt(_)), "{what}: {loaded:?}");
        assert_eq!(next.cache_stats().parsed, 3, "{what}: every file read");
        assert_eq!(ranked(&live, "ssh into staging"), ["Staging-SSH-port.md"]);
        // The next save replaces it with a good one.
        assert!(live.save(&next).unwrap());
        assert_eq!(std::fs::read(&path).unwrap().len(), good.len());
    }
    // A directory where the file should be: rebuilt too, nothing panics.
    std::fs::remove_file(&path).unwrap();
    std::fs::create_dir(&path).unwrap();
    let (_, loaded) = LiveIndex::open(&store(&sb)).unwrap();
    assert!(matches!(loaded, Loaded::Rebuilt(_)), "{loaded:?}");
}

#[test]
fn an_external_edit_is_surfaced_at_the_next_turn() {
    let sb = Sandbox::new();
    let store = store(&sb);
    seed(&store);
    assert!(store.watch());
    let mut surfacer = Surfacer::default();
    assert!(
        surfacer
            .surface(&store, "zebrafish quorum sensing")
            .unwrap()
            .files
            .is_empty()
    );
    // An editor rewrites the file in place (same inode) between two turns.
    let path = sb.path("proj/Staging-SSH-port.md");
    let text = std::fs::read_to_string(&path).unwrap();
    sh(
        &sb,
        &format!(
            "printf '%s' '{}' > Staging-SSH-port.md",
            text.replace("not 22", "not 22; zebrafish quorum sensing lab notes")
        ),
    );
    let out = surfacer
        .surface(&store, "zebrafish quorum sensing")
        .unwrap();
    assert_eq!(out.files, ["Staging-SSH-port.md"]);
    assert!(out.message.contains("zebrafish quorum sensing lab notes"));
    assert!(store.cache_stats().watched >= 1, "answered from the watch");
}

#[test]
fn add_warns_about_a_near_duplicate_after_pi_memorys_text() {
    let sb = Sandbox::new();
    let store = store(&sb);
    seed(&store);
    let mut tool = MemoryTool::new(&store).with_duplicate_warnings();
    let out = tool.call(&json!({"action": "add", "name": "SSH port for staging",
        "content": "SSH on staging listens on port 2222, not 22."}));
    assert!(!out.is_error);
    let first = out.text.lines().next().unwrap();
    assert_eq!(
        first,
        r#"Saved "SSH port for staging" (SSH-port-for-staging.md)."#
    );
    assert_eq!(
        out.text,
        format!(
            "{first}\n\n{}",
            memory_index::duplicate_warning(
                "Staging SSH port",
                "Staging-SSH-port.md",
                "SSH port for staging"
            )
        )
    );
    assert_eq!(out.duplicate_of.unwrap().file, "Staging-SSH-port.md");
    assert!(
        sb.path("proj/SSH-port-for-staging.md").is_file(),
        "the write happened"
    );

    // Overwriting an entry of the same name is an update, not a duplicate.
    let out = tool.call(&json!({"action": "add", "name": "Staging SSH port",
        "content": "staging listens for SSH on 2222, not 22 (via the bastion)"}));
    assert_eq!(
        out.text,
        r#"Saved "Staging SSH port" (Staging-SSH-port.md)."#
    );
    // Something new: no warning.
    let out = tool.call(&json!({"action": "add", "name": "Commit style",
        "content": "Conventional commits with an imperative subject."}));
    assert_eq!(out.text, r#"Saved "Commit style" (Commit-style.md)."#);
    // Without the check, the texts are pi-memory's alone.
    let mut plain = MemoryTool::new(&store);
    let out = plain.call(&json!({"action": "add", "name": "Staging ssh port note",
        "content": "staging listens for SSH on 2222, not 22"}));
    assert_eq!(
        out.text,
        r#"Saved "Staging ssh port note" (Staging-ssh-port-note.md)."#
    );
}

/// The threshold separates the set's near-duplicates from its distinct memories (the
/// figures are in BENCHMARKS.md, "Duplicate warning"; `cargo xtask bench retrieval`).
#[test]
fn the_duplicate_threshold_flags_near_duplicates_and_spares_distinct_memories() {
    let data = Dataset::load();
    let (caught, total, false_flags, distinct) =
        testkit::retrieval::duplicate_scores(&data, DUPLICATE_THRESHOLD);
    println!(
        "near-duplicates flagged {caught}/{total}, distinct memories flagged {false_flags}/{distinct}"
    );
    assert!(caught as f64 >= 0.8 * total as f64, "{caught}/{total}");
    assert!(
        false_flags as f64 <= 0.02 * distinct as f64,
        "{false_flags}/{distinct}"
    );
    let _ = half_of;
}
