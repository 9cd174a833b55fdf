//! Reliability: 8 processes × 2 threads mix every action on one directory at once.
//!
//! Each (process, thread) owns a disjoint set of names and runs a random sequence of add,
//! replace, remove, rename and rebuild_index on them, logging every acknowledged operation.
//! Operations on disjoint names commute, so the correct final state is the union of each
//! writer's serial replay, whatever the interleaving: any lost update (a write erased by a
//! concurrent rewrite of the shared `MEMORY.md`, a torn file, a duplicated or missing index
//! line) shows up as a difference. `PIMEM_MIX_OPS` sets the operations per thread
//! (default 40).
#![allow(clippy::unwrap_used)]

use camino::Utf8PathBuf;
use std::collections::BTreeMap;
use std::process::Command;
use std::time::Duration;

use memory_core::{AddRequest, ReplaceRequest, Store, StoreOptions};
use testkit::Rng;

const DIR_ENV: &str = "PIMEM_MIX_DIR";
const ID_ENV: &str = "PIMEM_MIX_ID";
const PROCS: usize = 8;
const THREADS: usize = 2;

fn ops() -> usize {
    std::env::var("PIMEM_MIX_OPS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(40)
}

fn opts() -> StoreOptions {
    StoreOptions {
        lock_timeout: Duration::from_secs(60),
        ..StoreOptions::default()
    }
}

type Model = BTreeMap<String, String>;

/// One writer thread: random actions on its own names; returns its serial model.
fn writer(store: &Store, prefix: &str, seed: u64) -> Model {
    let mut rng = Rng::new(seed | 1);
    let mut model = Model::new();
    for i in 0..ops() {
        let names: Vec<String> = model.keys().cloned().collect();
        let fresh = format!("{prefix} n{}", rng.below(6));
        let body = format!("{prefix} body {i}");
        match rng.below(9) {
            _ if names.is_empty() || rng.below(4) == 0 => {
                store
                    .add(AddRequest {
                        name: fresh.clone(),
                        body: body.clone(),
                        ..AddRequest::default()
                    })
                    .unwrap();
                model.insert(fresh, body);
            }
            0..=2 => {
                let n = &names[rng.below(names.len() as u64) as usize];
                store
                    .replace(ReplaceRequest {
                        reference: n.clone(),
                        body: Some(body.clone()),
                        ..ReplaceRequest::default()
                    })
                    .unwrap();
                model.insert(n.clone(), body);
            }
            3 | 4 => {
                let n = &names[rng.below(names.len() as u64) as usize];
                store.remove(n, None).unwrap();
                model.remove(n);
            }
            5 | 6 if !model.contains_key(&fresh) => {
                let n = names[rng.below(names.len() as u64) as usize].clone();
                store.rename(&n, &fresh, None).unwrap();
                let b = model.remove(&n).unwrap();
                model.insert(fresh, b);
            }
            _ => {
                store.rebuild_index().unwrap();
            }
        }
    }
    model
}

#[test]
fn mix_child() {
    let Some(dir) = std::env::var_os(DIR_ENV) else {
        return;
    };
    let id: usize = std::env::var(ID_ENV).unwrap().parse().unwrap();
    let dir = Utf8PathBuf::from(dir.into_string().unwrap());
    let store = Store::new(dir.join("mem"), opts());
    let models: Vec<Model> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..THREADS)
            .map(|t| {
                let store = &store;
                s.spawn(move || writer(store, &format!("p{id}t{t}"), (id * 100 + t) as u64 + 7))
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let merged: Model = models.into_iter().flatten().collect();
    std::fs::write(
        dir.join(format!("model-{id}.json")),
        serde_json::to_string(&merged).unwrap(),
    )
    .unwrap();
}

#[test]
fn mixed_actions_from_many_processes_equal_the_serial_replay() {
    if std::env::var_os(DIR_ENV).is_some() {
        return;
    }
    let sb = testkit::Sandbox::new();
    let exe = std::env::current_exe().unwrap();
    let children: Vec<_> = (0..PROCS)
        .map(|id| {
            Command::new(&exe)
                .args([
                    "mixed_concurrency::mix_child",
                    "--exact",
                    "--nocapture",
                    "--test-threads=1",
                ])
                .env(DIR_ENV, sb.root())
                .env(ID_ENV, id.to_string())
                .spawn()
                .unwrap()
        })
        .collect();
    for mut c in children {
        assert!(c.wait().unwrap().success(), "a writer process failed");
    }
    let mut expected = Model::new();
    for id in 0..PROCS {
        let text = std::fs::read_to_string(sb.path(&format!("model-{id}.json"))).unwrap();
        let m: Model = serde_json::from_str(&text).unwrap();
        expected.extend(m);
    }
    let store = Store::new(sb.path("mem"), opts());
    let actual: Model = store
        .list()
        .unwrap()
        .iter()
        .map(|e| (e.meta.name.clone(), e.body.clone()))
        .collect();
    assert_eq!(actual, expected, "lost or phantom updates");
    // Exactly one index line per entry, none dangling.
    let index = store.read_index().unwrap();
    let parsed = memory_index::parse_index(&index);
    let mut lines: Vec<&str> = parsed
        .entries
        .iter()
        .map(|l| l.line.file.as_str())
        .collect();
    lines.sort();
    let entries = store.list().unwrap();
    let mut files: Vec<&str> = entries.iter().map(|e| e.file.as_str()).collect();
    files.sort();
    assert_eq!(lines, files, "index disagrees with the entry files");
    assert!(!store.dir().join(".lock").exists());
}
