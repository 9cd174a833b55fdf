//! Reusable lock record files (`enable_lock_slots`): same guarantees, fewer inodes.
//! A separate test binary, because the switch is process-wide.
#![allow(clippy::unwrap_used)]

use crate::common;

use std::io::BufReader;
use std::process::Command;
use std::time::{Duration, Instant};

use common::{CHILD, read_line, stop};
use memory_lock::{
    FileLockError, LockOptions, acquire, enable_lock_slots, release_lock_slots, temp_file_pid,
};

fn slot_files(dir: &std::path::Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| temp_file_pid(n).is_some())
        .collect()
}

#[test]
fn slots_reuse_one_record_file_and_keep_every_guarantee() {
    enable_lock_slots();
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let opts = LockOptions {
        timeout: Duration::from_millis(150),
        ..LockOptions::default()
    };
    let mut inode = None;
    for i in 0..20 {
        let guard = acquire(dir, "add", &opts).unwrap();
        let text = std::fs::read_to_string(dir.join(".lock")).unwrap();
        assert!(
            text.starts_with(&format!("{{\"pid\":{},", std::process::id())),
            "{text}"
        );
        assert!(text.ends_with("\"op\":\"add\"}"), "{text}");
        use std::os::unix::fs::MetadataExt;
        let ino = std::fs::metadata(dir.join(".lock")).unwrap().ino();
        assert_eq!(*inode.get_or_insert(ino), ino, "round {i}: a new inode");
        // A second acquisition in this process (slot busy) waits like anyone else.
        let err = acquire(dir, "replace", &opts).unwrap_err();
        assert!(matches!(err, FileLockError::Held { .. }), "{err}");
        drop(guard);
        assert!(!dir.join(".lock").exists());
        assert_eq!(slot_files(dir).len(), 1);
    }
    release_lock_slots();
    assert!(slot_files(dir).is_empty());
}

#[test]
fn processes_using_slots_exclude_each_other() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().to_str().unwrap();
    let children: Vec<_> = (0..4)
        .map(|_| {
            Command::new(CHILD)
                .args(["count", dir, "50"])
                .env("MEMORY_LOCK_SLOTS", "1")
                .spawn()
                .unwrap()
        })
        .collect();
    for mut c in children {
        assert!(c.wait().unwrap().success());
    }
    let count = std::fs::read_to_string(tmp.path().join("counter")).unwrap();
    assert_eq!(count.trim(), "200");
    assert!(!tmp.path().join(".lock").exists());
}

#[test]
fn a_killed_slot_holder_is_reclaimed() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let mut child = Command::new(CHILD)
        .args(["hold", dir.to_str().unwrap(), "dream"])
        .env("MEMORY_LOCK_SLOTS", "1")
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    assert!(read_line(&mut out).starts_with("locked"));
    stop(child);
    let start = Instant::now();
    let guard = acquire(dir, "add", &LockOptions::default()).unwrap();
    assert!(start.elapsed() < Duration::from_millis(100));
    assert_eq!(guard.reclaimed().unwrap().op, "dream");
}
