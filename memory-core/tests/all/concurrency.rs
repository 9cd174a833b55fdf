//! Several processes (and threads inside each) add distinct memories to one directory at the
//! same time: every memory must be present, with exactly one index line each.
#![allow(clippy::unwrap_used)]

use camino::Utf8PathBuf;
use std::process::Command;
use std::time::Duration;

use memory_core::{AddRequest, Store, StoreOptions};

const DIR_ENV: &str = "PIMEM_CONC_DIR";
const ID_ENV: &str = "PIMEM_CONC_ID";
const PROCS: usize = 4;
const THREADS: usize = 2;
const PER_THREAD: usize = 15;

fn opts() -> StoreOptions {
    StoreOptions {
        lock_timeout: Duration::from_secs(30),
        ..StoreOptions::default()
    }
}

#[test]
fn conc_child() {
    let Some(dir) = std::env::var_os(DIR_ENV) else {
        return;
    };
    let id: usize = std::env::var(ID_ENV).unwrap().parse().unwrap();
    let store = Store::new(
        Utf8PathBuf::from(dir.into_string().unwrap()).join("mem"),
        opts(),
    );
    std::thread::scope(|s| {
        for t in 0..THREADS {
            let store = &store;
            s.spawn(move || {
                for i in 0..PER_THREAD {
                    store
                        .add(AddRequest {
                            name: format!("p{id} t{t} m{i}"),
                            description: Some(format!("memory {i} of thread {t} in process {id}")),
                            body: format!("body {id}/{t}/{i}"),
                            ..AddRequest::default()
                        })
                        .unwrap();
                }
            });
        }
    });
}

#[test]
fn processes_adding_at_once_lose_nothing() {
    if std::env::var_os(DIR_ENV).is_some() {
        return;
    }
    let sb = testkit::Sandbox::new();
    let exe = std::env::current_exe().unwrap();
    let children: Vec<_> = (0..PROCS)
        .map(|id| {
            Command::new(&exe)
                .args([
                    "concurrency::conc_child",
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
    let store = Store::new(sb.path("mem"), opts());
    let entries = store.list().unwrap();
    assert_eq!(entries.len(), PROCS * THREADS * PER_THREAD);
    let index = store.read_index().unwrap();
    let parsed = memory_index::parse_index(&index);
    assert_eq!(parsed.entries.len(), PROCS * THREADS * PER_THREAD);
    for e in entries.iter() {
        let lines = parsed
            .entries
            .iter()
            .filter(|l| l.line.file == e.file)
            .count();
        assert_eq!(lines, 1, "{} has {lines} index lines", e.file);
    }
    assert!(!store.dir().join(".lock").exists());
}
