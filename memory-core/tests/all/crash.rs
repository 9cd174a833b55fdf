//! Crash torture: writer processes are SIGKILLed at random points, over and over.
//!
//! After every kill a fresh store must (1) list without error, (2) show every entry file
//! parseable (atomic replacement: old or new, never torn), (3) contain every acknowledged write
//! (the model replayed from the writer's log; the one in-flight operation may or may not have
//! landed), (4) let the next writer proceed without human help (a dead holder's `.lock` is
//! reclaimed), after which (5) `MEMORY.md` agrees with the entry files.
//!
//! The writer is this same test binary re-executed with `PIMEM_CRASH_DIR` set (the
//! `crash::crash_child` test is a no-op otherwise; `testkit::crash` runs the loop). `PIMEM_CRASH_KILLS` sets the number of kills
//! (default 400; with the dream-round torture in memory-agent that is 550 kills per CI run).
#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;
use std::io::Write;
use std::time::Duration;

use memory_core::{AddRequest, Notice, ReplaceRequest, Store, StoreOptions};
use testkit::Rng;

fn opts() -> StoreOptions {
    StoreOptions {
        lock_timeout: Duration::from_secs(5),
        snapshot_keep: 3,
        ..StoreOptions::default()
    }
}

type Model = BTreeMap<String, String>;

#[derive(Debug, Clone)]
enum Op {
    Add(String, String),
    Replace(String, String),
    Remove(String),
    Rename(String, String),
    Rebuild,
}

impl Op {
    fn apply(&self, m: &mut Model) {
        match self {
            Op::Add(n, b) | Op::Replace(n, b) => {
                m.insert(n.clone(), b.clone());
            }
            Op::Remove(n) => {
                m.remove(n);
            }
            Op::Rename(a, b) => {
                if let Some(body) = m.remove(a) {
                    m.insert(b.clone(), body);
                }
            }
            Op::Rebuild => {}
        }
    }

    fn encode(&self) -> String {
        match self {
            Op::Add(n, b) => format!("add\t{n}\t{b}"),
            Op::Replace(n, b) => format!("replace\t{n}\t{b}"),
            Op::Remove(n) => format!("remove\t{n}"),
            Op::Rename(a, b) => format!("rename\t{a}\t{b}"),
            Op::Rebuild => "rebuild".to_owned(),
        }
    }

    fn decode(s: &str) -> Option<Op> {
        let p: Vec<&str> = s.split('\t').collect();
        Some(match p.as_slice() {
            ["add", n, b] => Op::Add(n.to_string(), b.to_string()),
            ["replace", n, b] => Op::Replace(n.to_string(), b.to_string()),
            ["remove", n] => Op::Remove(n.to_string()),
            ["rename", a, b] => Op::Rename(a.to_string(), b.to_string()),
            ["rebuild"] => Op::Rebuild,
            _ => return None,
        })
    }
}

fn disk_model(store: &Store) -> Model {
    store
        .list()
        .unwrap()
        .iter()
        .map(|e| (e.meta.name.clone(), e.body.clone()))
        .collect()
}

/// The writer. Logs `B <op>` before and `A` after each successful operation.
#[test]
fn crash_child() {
    let Some((dir, seed)) = testkit::crash::child_dir() else {
        return;
    };
    let store = Store::new(dir.join("mem"), opts());
    let mut log = std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .open(dir.join("ops.log"))
        .unwrap();
    let mut rng = Rng::new(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    let mut model = disk_model(&store);
    for i in 0.. {
        let names: Vec<String> = model.keys().cloned().collect();
        let pick = |rng: &mut Rng| names[rng.below(names.len() as u64) as usize].clone();
        // Bodies are stored trimmed, so the model must not end in whitespace either.
        let body = format!("body {seed}-{i} {}", "x".repeat(rng.below(3000) as usize))
            .trim_end()
            .to_owned();
        let op = match rng.below(10) {
            _ if names.is_empty() => Op::Add(format!("m{}", rng.below(12)), body),
            0..=3 => Op::Add(format!("m{}", rng.below(12)), body),
            4 | 5 => Op::Replace(pick(&mut rng), body),
            6 | 7 => Op::Remove(pick(&mut rng)),
            8 => {
                let to = format!("m{}", rng.below(12));
                if model.contains_key(&to) {
                    Op::Rebuild
                } else {
                    Op::Rename(pick(&mut rng), to)
                }
            }
            _ => Op::Rebuild,
        };
        // One write(2) per line, so a kill never leaves half a line behind.
        log.write_all(format!("B\t{}\n", op.encode()).as_bytes())
            .unwrap();
        let result = match &op {
            Op::Add(n, b) => store
                .add(AddRequest {
                    name: n.clone(),
                    body: b.clone(),
                    ..AddRequest::default()
                })
                .map(|_| ()),
            Op::Replace(n, b) => store
                .replace(ReplaceRequest {
                    reference: n.clone(),
                    body: Some(b.clone()),
                    ..ReplaceRequest::default()
                })
                .map(|_| ()),
            Op::Remove(n) => store.remove(n, None).map(|_| ()),
            Op::Rename(a, b) => store.rename(a, b, None).map(|_| ()),
            Op::Rebuild => store.rebuild_index().map(|_| ()),
        };
        result.unwrap_or_else(|e| panic!("writer op {op:?} failed: {e}"));
        log.write_all(b"A\n").unwrap();
        op.apply(&mut model);
    }
}

/// Replays the log: (acknowledged model, the in-flight operation if any).
fn replay(log: &str) -> (Model, Option<Op>) {
    let mut model = Model::new();
    let mut pending: Option<Op> = None;
    for line in log.lines() {
        if let Some(rest) = line.strip_prefix("B\t") {
            // A new begin after an unacknowledged one: the previous child was killed; the
            // verifier already resolved that op into the model it wrote back.
            pending = Op::decode(rest);
        } else if line == "A" {
            if let Some(op) = pending.take() {
                op.apply(&mut model);
            }
        } else if let Some(rest) = line.strip_prefix("S\t") {
            // Checkpoint written by the verifier: the true state after a kill.
            model = serde_json::from_str(rest).unwrap();
            pending = None;
        }
    }
    (model, pending)
}

#[test]
fn sigkill_torture() {
    if testkit::crash::child_dir().is_some() {
        return;
    }
    let sb = testkit::Sandbox::new();
    let mut reclaimed = 0;
    let kills = testkit::crash::kills(400);
    testkit::crash::rounds("crash::crash_child", sb.root(), 400, 40, 0x5EED, |round| {
        let store = Store::new(sb.path("mem"), opts());
        // (2) every entry file parses: nothing torn.
        testkit::crash::assert_no_torn_entries(store.dir(), round);
        // (3) acknowledged writes are present.
        let log_path = sb.path("ops.log");
        let log = std::fs::read_to_string(&log_path).unwrap_or_default();
        let (acked, pending) = replay(&log);
        let disk = disk_model(&store);
        let mut with_pending = acked.clone();
        if let Some(op) = &pending {
            op.apply(&mut with_pending);
        }
        assert!(
            disk == acked || disk == with_pending,
            "round {round}:\ndisk    {}\nacked   {}\ndiffers {:?}\npending {:?}",
            summary(&disk),
            summary(&acked),
            differences(&disk, &acked),
            pending
                .as_ref()
                .map(|op| op.encode().chars().take(40).collect::<String>())
        );
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&log_path)
            .unwrap();
        // Leading newline: terminates a line the killed writer may have left open.
        f.write_all(format!("\nS\t{}\n", serde_json::to_string(&disk).unwrap()).as_bytes())
            .unwrap();

        // (4) the next writer proceeds without help, (5) then the index agrees.
        let probe = store
            .add(AddRequest {
                name: "probe".into(),
                body: format!("probe {round}"),
                ..AddRequest::default()
            })
            .unwrap_or_else(|e| panic!("round {round}: next writer blocked: {e}"));
        if probe
            .notices
            .iter()
            .any(|n| matches!(n, Notice::ReclaimedLock { .. }))
        {
            reclaimed += 1;
        }
        store.remove("probe", None).unwrap();
        assert_index_agrees(&store, round);
        assert!(
            !store.dir().join(".lock").exists(),
            "round {round}: lock left"
        );
    });
    eprintln!("{kills} kills, {reclaimed} dead locks reclaimed");
}

/// `name=<first words of body>` pairs: enough to read a failure without megabytes of output.
fn summary(m: &Model) -> String {
    m.iter()
        .map(|(k, v)| format!("{k}={}", v.split(' ').take(2).collect::<Vec<_>>().join(" ")))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Names whose bodies differ, with both lengths.
fn differences(a: &Model, b: &Model) -> Vec<(String, Option<usize>, Option<usize>)> {
    let mut keys: Vec<&String> = a.keys().chain(b.keys()).collect();
    keys.sort();
    keys.dedup();
    keys.into_iter()
        .filter(|k| a.get(*k) != b.get(*k))
        .map(|k| {
            (
                (*k).clone(),
                a.get(k).map(String::len),
                b.get(k).map(String::len),
            )
        })
        .collect()
}

fn assert_index_agrees(store: &Store, round: usize) {
    let index = store.read_index().unwrap();
    let parsed = memory_index::parse_index(&index);
    let mut lines: Vec<(String, String, String)> = parsed
        .entries
        .iter()
        .map(|l| {
            (
                l.line.file.clone(),
                l.line.name.clone(),
                l.line.description.clone(),
            )
        })
        .collect();
    lines.sort();
    let mut files: Vec<(String, String, String)> = store
        .list()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e.file.clone(),
                e.meta.name.clone(),
                e.meta.description.clone(),
            )
        })
        .collect();
    files.sort();
    assert_eq!(lines, files, "round {round}: index disagrees with files");
}
