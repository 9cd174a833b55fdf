//! The persistent switch as every store write sees it (PA-12, PA-15, PA-45).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use memory_core::{AddRequest, Store, StoreError, Switch, SwitchState};

use crate::common::{Fixture, options};

fn switched(sb: &testkit::Sandbox) -> Switch {
    Switch::new(sb.path("agent"), Duration::from_secs(10))
}

fn add(store: &Store, name: &str) -> Result<(), StoreError> {
    store
        .add(AddRequest {
            name: name.into(),
            body: format!("body of {name}"),
            ..AddRequest::default()
        })
        .map(|_| ())
}

/// The memory files (without the transient lock records a refused writer may hold for a
/// moment).
fn files(dir: &camino::Utf8Path) -> std::collections::BTreeMap<String, Vec<u8>> {
    testkit::tree(dir.as_std_path())
        .into_iter()
        .filter(|(k, _)| {
            let base = k.rsplit('/').next().unwrap_or(k);
            !base.starts_with(".lock") && !base.ends_with(".tmp") && !base.starts_with(".pimem")
        })
        .collect()
}

#[test]
fn pa45_writes_are_refused_while_off_and_the_disk_is_unchanged() {
    let sb = testkit::Sandbox::new();
    let switch = switched(&sb);
    let mut opts = options();
    opts.switch = Some(switch.clone());
    let f = Fixture::with(opts);
    add(&f.store, "Before").unwrap();
    let before = f.tree();
    switch.set(false).unwrap();
    let err = add(&f.store, "During").unwrap_err();
    assert_eq!(err.to_string(), "Memory is off");
    assert!(f.store.remove("Before", None).is_err());
    assert_eq!(f.tree(), before, "files are kept, nothing written");
    // Corrupt file: paused, with the fix in the message, and never rewritten.
    std::fs::write(switch.path(), "{\"version\": 1, \"enabled\": ").unwrap();
    let err = add(&f.store, "During").unwrap_err().to_string();
    assert!(err.starts_with("Memory is paused: "), "{err}");
    assert!(err.contains("is not valid JSON"), "{err}");
    assert!(err.contains("delete it (a missing file means on)"), "{err}");
    assert!(switch.set(true).is_err());
    assert_eq!(
        std::fs::read_to_string(switch.path()).unwrap(),
        "{\"version\": 1, \"enabled\": "
    );
    std::fs::remove_file(switch.path()).unwrap();
    assert_eq!(switch.state(), SwitchState::On { file: false });
    add(&f.store, "After").unwrap();
}

#[test]
fn a_refused_write_into_a_fresh_directory_creates_nothing() {
    let sb = testkit::Sandbox::new();
    let switch = switched(&sb);
    switch.set(false).unwrap();
    let mut opts = options();
    opts.switch = Some(switch);
    let store = Store::new(sb.path("mem/git/x"), opts);
    assert!(matches!(add(&store, "A"), Err(StoreError::MemoryOff)));
    assert!(!sb.path("mem").exists());
}

/// PA-15: once `off` has returned, no write lands, whatever was in flight. Writers in several
/// threads (each with its own store over the same directory, as separate sessions would be)
/// add entries without pause while `off` is switched; every write that reported success is on
/// disk, and the tree read right after `off` returned never changes again.
#[test]
fn pa15_no_write_lands_after_off_returned() {
    for round in 0..5 {
        let sb = testkit::Sandbox::new();
        let switch = switched(&sb);
        let dir = sb.path("mem");
        let stop = Arc::new(AtomicBool::new(false));
        let mut writers = Vec::new();
        for w in 0..3 {
            let (dir, switch, stop) = (dir.clone(), switch.clone(), stop.clone());
            writers.push(std::thread::spawn(move || {
                let mut opts = options();
                opts.lock_timeout = Duration::from_secs(30);
                opts.switch = Some(switch);
                let store = Store::new(dir, opts);
                let mut landed = Vec::new();
                let mut i = 0;
                while !stop.load(Ordering::SeqCst) {
                    let name = format!("w{w}-{i}");
                    match add(&store, &name) {
                        Ok(()) => landed.push(name),
                        Err(StoreError::MemoryOff) => {}
                        Err(e) => panic!("round {round}: {e}"),
                    }
                    i += 1;
                    if i > 400 {
                        break;
                    }
                }
                landed
            }));
        }
        // Let some writes land first.
        while !dir.join("MEMORY.md").exists() {
            std::thread::yield_now();
        }
        switch.set(false).unwrap();
        let at_off = files(&dir);
        stop.store(true, Ordering::SeqCst);
        let landed: Vec<String> = writers
            .into_iter()
            .flat_map(|w| w.join().unwrap())
            .collect();
        assert_eq!(
            files(&dir),
            at_off,
            "round {round}: a write landed after off"
        );
        let index = String::from_utf8(at_off["MEMORY.md"].clone()).unwrap();
        for name in &landed {
            assert!(
                index.contains(&format!("[{name}]")),
                "round {round}: {name} lost"
            );
        }
    }
}
