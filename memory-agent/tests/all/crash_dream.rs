//! Crash torture of dream rounds: a writer process runs scripted dreams (snapshot of the whole
//! directory, then several replace/remove/rename/add calls and a rebuild_index in one round)
//! interleaved with plain adds, and is SIGKILLed at random points.
//!
//! After every kill: every entry file parses; the disk equals the acknowledged state plus
//! some prefix of the interrupted round's operations (each write is atomic, a round is not
//! a transaction); the next writer proceeds without help; the index then agrees with the
//! files. `PIMEM_CRASH_KILLS` sets the number of kills (default 150).
#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;
use std::io::Write;
use std::time::Duration;

use memory_agent::{CancelToken, DreamOptions, run_dream};
use memory_core::{AddRequest, Store, StoreOptions};
use serde_json::{Value, json};
use testkit::crash::{assert_no_torn_entries, child_dir, kills, rounds};
use testkit::{Rng, Sandbox, ScriptedModel, memory_calls, text};

type Model = BTreeMap<String, String>;

fn opts() -> StoreOptions {
    StoreOptions {
        lock_timeout: Duration::from_secs(5),
        snapshot_keep: 3,
        ..StoreOptions::default()
    }
}

/// Applies one memory-tool call (as JSON arguments) to the model.
fn apply(m: &mut Model, call: &Value) {
    let name = call["name"].as_str().unwrap_or_default().to_owned();
    match call["action"].as_str() {
        Some("add") | Some("replace") => {
            m.insert(name, call["content"].as_str().unwrap().to_owned());
        }
        Some("remove") => {
            m.remove(&name);
        }
        Some("rename") => {
            if let Some(b) = m.remove(&name) {
                m.insert(call["new_name"].as_str().unwrap().to_owned(), b);
            }
        }
        _ => {}
    }
}

fn disk(store: &Store) -> Model {
    store
        .list()
        .unwrap()
        .iter()
        .map(|e| (e.meta.name.clone(), e.body.clone()))
        .collect()
}

fn log_line(log: &mut std::fs::File, line: String) {
    // One write(2) per line: a kill never leaves half a line.
    log.write_all(format!("{line}\n").as_bytes()).unwrap();
}

#[test]
fn dream_crash_child() {
    let Some((dir, seed)) = child_dir() else {
        return;
    };
    let store = Store::new(dir.join("mem"), opts());
    let mut log = std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .open(dir.join("ops.log"))
        .unwrap();
    let mut rng = Rng::new(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    let mut model = disk(&store);
    for i in 0.. {
        if model.len() < 4 || rng.below(3) == 0 {
            let call = json!({"action": "add", "name": format!("m{}", rng.below(10)),
                              "content": format!("plain {seed}-{i}")});
            log_line(&mut log, format!("P\t{call}"));
            store
                .add(AddRequest {
                    name: call["name"].as_str().unwrap().into(),
                    body: call["content"].as_str().unwrap().into(),
                    ..AddRequest::default()
                })
                .unwrap();
            log_line(&mut log, "A".into());
            apply(&mut model, &call);
            continue;
        }
        // A dream round: 2-4 calls over the current names, then rebuild_index.
        let mut names: Vec<String> = model.keys().cloned().collect();
        let mut calls = Vec::new();
        let mut planned = model.clone();
        for k in 0..2 + rng.below(3) {
            if names.is_empty() {
                break;
            }
            let n = names.remove(rng.below(names.len() as u64) as usize);
            let call = match rng.below(4) {
                0 => json!({"action": "remove", "name": n}),
                1 => {
                    let to = format!("r{seed}-{i}-{k}");
                    json!({"action": "rename", "name": n, "new_name": to})
                }
                2 => json!({"action": "add", "name": format!("d{}", rng.below(10)),
                            "content": format!("dream add {seed}-{i}-{k}")}),
                _ => json!({"action": "replace", "name": n,
                            "content": format!("merged {seed}-{i}-{k}")}),
            };
            apply(&mut planned, &call);
            calls.push(call);
        }
        calls.push(json!({"action": "rebuild_index"}));
        log_line(&mut log, format!("D\t{}", Value::Array(calls.clone())));
        let script = ScriptedModel::new([memory_calls(calls.clone()), text("Consolidated.")]);
        let out = run_dream(
            &store,
            &script,
            &DreamOptions::default(),
            &CancelToken::new(),
        )
        .unwrap();
        assert_eq!(out.conflicts, 0);
        log_line(&mut log, "A".into());
        model = planned;
    }
}

/// (acknowledged state, calls of the interrupted operation).
fn replay(log: &str) -> (Model, Vec<Value>) {
    let mut model = Model::new();
    let mut pending: Vec<Value> = Vec::new();
    for line in log.lines() {
        if let Some(rest) = line.strip_prefix("P\t") {
            pending = vec![serde_json::from_str(rest).unwrap()];
        } else if let Some(rest) = line.strip_prefix("D\t") {
            pending = serde_json::from_str(rest).unwrap();
        } else if line == "A" {
            for call in pending.drain(..) {
                apply(&mut model, &call);
            }
        } else if let Some(rest) = line.strip_prefix("S\t") {
            model = serde_json::from_str(rest).unwrap();
            pending.clear();
        }
    }
    (model, pending)
}

#[test]
fn sigkill_during_dream_rounds() {
    if child_dir().is_some() {
        return;
    }
    let sb = Sandbox::new();
    let root = sb.root();
    let mut mid_round = 0;
    rounds(
        "crash_dream::dream_crash_child",
        root,
        150,
        60,
        0xD2EA,
        |round| {
            let store = Store::new(root.join("mem"), opts());
            assert_no_torn_entries(store.dir(), round);
            let log_path = root.join("ops.log");
            let log = std::fs::read_to_string(&log_path).unwrap_or_default();
            let (acked, pending) = replay(&log);
            let actual = disk(&store);
            // How many of the interrupted operation's calls landed (the first prefix that fits).
            let mut candidate = acked.clone();
            let mut landed = (candidate == actual).then_some(0);
            for (k, call) in pending.iter().enumerate() {
                if landed.is_some() {
                    break;
                }
                apply(&mut candidate, call);
                if candidate == actual {
                    landed = Some(k + 1);
                }
            }
            if landed.is_some_and(|n| n > 0 && n < pending.len()) {
                mid_round += 1;
            }
            assert!(
                landed.is_some(),
                "round {round}: disk {:?} is not the acknowledged state plus a prefix of {pending:?}",
                actual.keys().collect::<Vec<_>>()
            );
            let mut f = std::fs::OpenOptions::new()
                .append(true)
                .open(&log_path)
                .unwrap();
            f.write_all(format!("\nS\t{}\n", serde_json::to_string(&actual).unwrap()).as_bytes())
                .unwrap();

            store
                .add(AddRequest {
                    name: "probe".into(),
                    body: format!("probe {round}"),
                    ..AddRequest::default()
                })
                .unwrap_or_else(|e| panic!("round {round}: next writer blocked: {e}"));
            store.remove("probe", None).unwrap();
            let index = store.read_index().unwrap();
            let mut lines: Vec<String> = memory_index::parse_index(&index)
                .entries
                .into_iter()
                .map(|l| l.line.file)
                .collect();
            lines.sort();
            let mut files: Vec<String> = store
                .list()
                .unwrap()
                .iter()
                .map(|e| e.file.clone())
                .collect();
            files.sort();
            assert_eq!(lines, files, "round {round}: index disagrees with files");
        },
    );
    eprintln!(
        "{} kills, {mid_round} landed in the middle of a dream round",
        kills(150)
    );
}
