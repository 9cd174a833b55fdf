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

/// What another process may do to `auto-memory.json` between two `set` calls.
#[derive(Debug, Clone)]
enum Op {
    /// `pimem on` / `pimem off` through the switch under test.
    Set(bool),
    /// Someone else writes a valid file with extra fields (pi-auto-memory, a person).
    External(bool, Vec<(String, u8)>),
    /// Someone writes a corrupt file.
    Corrupt(u8),
    /// Someone deletes the file.
    Delete,
}

fn op() -> impl proptest::strategy::Strategy<Value = Op> {
    use proptest::prelude::*;
    prop_oneof![
        4 => any::<bool>().prop_map(Op::Set),
        2 => (any::<bool>(), proptest::collection::vec(("[a-z]{1,6}", any::<u8>()), 0..3))
            .prop_map(|(e, f)| Op::External(e, f)),
        1 => (0u8..3).prop_map(Op::Corrupt),
        1 => Just(Op::Delete),
    ]
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]

    /// PA-11..13 as a property: `set` judges the file as it is on disk at that moment (read
    /// again inside its lock, never a value remembered from before), keeps every other field,
    /// never rewrites a corrupt file, writes nothing when the file already says so, and
    /// `state()` always agrees with the file.
    #[test]
    fn pa13_set_rereads_the_file_and_keeps_what_it_does_not_own(ops in proptest::collection::vec(op(), 1..24)) {
        use serde_json::{Map, Value, json};
        let sb = testkit::Sandbox::new();
        let switch = Switch::new(sb.path("agent"), Duration::from_secs(10));
        let path = switch.path();
        let read = || std::fs::read(&path).ok();
        for op in ops {
            match op {
                Op::Set(enabled) => {
                    let before = read();
                    let parsed: Option<Value> =
                        before.as_deref().and_then(|b| serde_json::from_slice(b).ok());
                    let valid = parsed.as_ref().and_then(|v| v.as_object()).filter(|o| {
                        o.get("version") == Some(&json!(1)) && o.get("enabled").is_some_and(Value::is_boolean)
                    });
                    let result = switch.set(enabled);
                    match (&before, valid) {
                        (Some(_), None) => {
                            proptest::prop_assert!(result.is_err(), "a corrupt file is refused");
                            proptest::prop_assert_eq!(read(), before, "and never rewritten");
                        }
                        (None, _) => {
                            let out = result.unwrap();
                            proptest::prop_assert!(out.was_on, "a missing file means on");
                            proptest::prop_assert_eq!(out.written, !enabled);
                        }
                        (Some(_), Some(old)) => {
                            let out = result.unwrap();
                            let was_on = old["enabled"] == json!(true);
                            proptest::prop_assert_eq!(out.was_on, was_on, "judged on the file as it was just now");
                            if was_on == enabled {
                                proptest::prop_assert!(!out.written);
                                proptest::prop_assert_eq!(read(), before, "nothing written when it already says so");
                            } else {
                                proptest::prop_assert!(out.written);
                                let mut expected: Map<String, Value> = old.clone();
                                expected.insert("enabled".into(), json!(enabled));
                                let now: Value = serde_json::from_slice(&read().unwrap()).unwrap();
                                proptest::prop_assert_eq!(now, Value::Object(expected), "other fields kept");
                            }
                        }
                    }
                }
                Op::External(enabled, fields) => {
                    let mut o = Map::new();
                    for (k, v) in fields {
                        o.insert(format!("x_{k}"), json!(v));
                    }
                    o.insert("version".into(), json!(1));
                    o.insert("enabled".into(), json!(enabled));
                    std::fs::create_dir_all(sb.path("agent")).unwrap();
                    std::fs::write(&path, serde_json::to_vec(&Value::Object(o)).unwrap()).unwrap();
                }
                Op::Corrupt(kind) => {
                    let text = match kind {
                        0 => "{ not json",
                        1 => r#"{"version": 2, "enabled": false}"#,
                        _ => r#"{"version": 1, "enabled": "no"}"#,
                    };
                    std::fs::create_dir_all(sb.path("agent")).unwrap();
                    std::fs::write(&path, text).unwrap();
                }
                Op::Delete => {
                    let _ = std::fs::remove_file(&path);
                }
            }
            // state() agrees with the file at every step.
            let on_disk: Option<Value> = read().map(|b| serde_json::from_slice(&b).unwrap_or(Value::Null));
            match (switch.state(), on_disk) {
                (SwitchState::On { file: false }, None) => {}
                (SwitchState::On { file: true }, Some(v)) => proptest::prop_assert_eq!(&v["enabled"], &json!(true)),
                (SwitchState::Off, Some(v)) => proptest::prop_assert_eq!(&v["enabled"], &json!(false)),
                (SwitchState::Paused(_), Some(_)) => {}
                (s, d) => proptest::prop_assert!(false, "state {:?} for file {:?}", s, d),
            }
        }
    }
}
