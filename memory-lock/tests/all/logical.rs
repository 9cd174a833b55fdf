//! The in-process logical lock (VECTORS M7..M11, PM-44, PM-48).
#![allow(clippy::unwrap_used)]

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use memory_lock::{
    LockOptions, LogicalLockError, acquire, atomic_write, is_logical_active, lock_logical,
    logical_queue_len, try_lock_logical,
};

const LONG: Duration = Duration::from_secs(30);

fn wait_for_queue(dir: &Path, len: usize) {
    let start = Instant::now();
    while logical_queue_len(dir) != len {
        assert!(start.elapsed() < LONG, "queue never reached {len}");
        std::thread::sleep(Duration::from_millis(1));
    }
}

#[test]
fn m7_busy_text_after_the_default_timeout() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().to_path_buf();
    let _dream = lock_logical(&dir, LONG).unwrap();
    let add = std::thread::spawn({
        let dir = dir.clone();
        move || lock_logical(&dir, Duration::from_millis(5000)).map(|_| ())
    });
    let err = add.join().unwrap().unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "Memory operations for {}/MEMORY.md are already running in this process (waited 5000ms)",
            dir.display()
        )
    );
    assert_eq!(
        err,
        LogicalLockError::Busy {
            index_path: dir.join("MEMORY.md"),
            waited_ms: 5000
        }
    );
}

#[test]
fn m8_short_timeout_rejects_quickly_and_lock_is_not_reentrant() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let _held = lock_logical(dir, LONG).unwrap();
    let start = Instant::now();
    let err = lock_logical(dir, Duration::from_millis(25)).unwrap_err();
    assert!(start.elapsed() >= Duration::from_millis(25));
    assert!(start.elapsed() < LONG);
    assert!(err.to_string().ends_with("(waited 25ms)"), "{err}");
    assert!(err.to_string().contains("already running in this process"));
}

#[test]
fn m9_try_lock_never_waits_and_never_runs_when_held_or_queued() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().to_path_buf();
    let held = lock_logical(&dir, LONG).unwrap();
    assert!(try_lock_logical(&dir).is_none());
    let waiter = std::thread::spawn({
        let dir = dir.clone();
        // The waiter keeps its guard until joined, so the lock is queued or held below.
        move || lock_logical(&dir, LONG)
    });
    wait_for_queue(&dir, 1);
    drop(held);
    // Free, but somebody is queued or holding: still no.
    assert!(try_lock_logical(&dir).is_none());
    let guard = waiter.join().unwrap().unwrap();
    assert_eq!(guard.dir(), dir);
    assert!(try_lock_logical(&dir).is_none());
    drop(guard);
    assert!(try_lock_logical(&dir).is_some());
}

#[test]
fn m10_different_directories_never_block_each_other() {
    let tmp = tempfile::tempdir().unwrap();
    let a = tmp.path().join("a");
    let b = tmp.path().join("b");
    let _a = lock_logical(&a, LONG).unwrap();
    let _b = lock_logical(&b, Duration::ZERO).unwrap();
    assert!(try_lock_logical(&tmp.path().join("c")).is_some());
}

#[test]
fn equivalent_spellings_share_one_lock() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().to_path_buf();
    let _held = lock_logical(&dir, LONG).unwrap();
    assert!(try_lock_logical(&dir.join(".")).is_none());
    let mut trailing = dir.clone().into_os_string();
    trailing.push("/");
    assert!(try_lock_logical(Path::new(&trailing)).is_none());
}

#[test]
fn m11_five_concurrent_adds_all_land() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().to_path_buf();
    let active = Arc::new(AtomicUsize::new(0));
    let max_active = Arc::new(AtomicUsize::new(0));
    let handles: Vec<_> = ["A", "B", "C", "D", "E"]
        .into_iter()
        .map(|name| {
            let (dir, active, max_active) =
                (dir.clone(), Arc::clone(&active), Arc::clone(&max_active));
            std::thread::spawn(move || {
                let _logical = lock_logical(&dir, Duration::from_millis(5000)).unwrap();
                let now = active.fetch_add(1, Ordering::SeqCst) + 1;
                max_active.fetch_max(now, Ordering::SeqCst);
                let _file = acquire(&dir, "add", &LockOptions::default()).unwrap();
                let index = dir.join("MEMORY.md");
                let mut text = fs::read_to_string(&index).unwrap_or_default();
                std::thread::sleep(Duration::from_millis(2));
                text.push_str(&format!("- [{name}]({name}.md) — {name}\n"));
                atomic_write(&dir.join(format!("{name}.md")), name.as_bytes()).unwrap();
                atomic_write(&index, text.as_bytes()).unwrap();
                active.fetch_sub(1, Ordering::SeqCst);
            })
        })
        .collect();
    for handle in handles {
        handle.join().unwrap();
    }
    assert_eq!(max_active.load(Ordering::SeqCst), 1);
    let index = fs::read_to_string(dir.join("MEMORY.md")).unwrap();
    assert_eq!(index.lines().count(), 5, "{index}");
    let mut files: Vec<String> = fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    files.sort();
    assert_eq!(files, ["A.md", "B.md", "C.md", "D.md", "E.md", "MEMORY.md"]);
}

#[test]
fn waiters_are_served_in_arrival_order() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().to_path_buf();
    let order = Arc::new(Mutex::new(Vec::new()));
    let held = lock_logical(&dir, LONG).unwrap();
    let mut handles = Vec::new();
    for i in 0..5 {
        let (queued_dir, order) = (dir.clone(), Arc::clone(&order));
        handles.push(std::thread::spawn(move || {
            let _guard = lock_logical(&queued_dir, LONG).unwrap();
            order.lock().unwrap().push(i);
        }));
        wait_for_queue(&dir, i + 1);
    }
    drop(held);
    for handle in handles {
        handle.join().unwrap();
    }
    assert_eq!(*order.lock().unwrap(), vec![0, 1, 2, 3, 4]);
}

#[test]
fn a_timed_out_waiter_does_not_stall_the_queue() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().to_path_buf();
    let held = lock_logical(&dir, LONG).unwrap();
    let short = std::thread::spawn({
        let dir = dir.clone();
        move || lock_logical(&dir, Duration::from_millis(500)).is_err()
    });
    wait_for_queue(&dir, 1);
    let after = std::thread::spawn({
        let dir = dir.clone();
        move || lock_logical(&dir, LONG).map(|_| "after")
    });
    wait_for_queue(&dir, 2);
    // The first waiter gives up; the one behind it must still get the lock.
    assert!(short.join().unwrap());
    wait_for_queue(&dir, 1);
    drop(held);
    assert_eq!(after.join().unwrap().unwrap(), "after");
    assert!(!is_logical_active(&dir));
}

#[test]
fn active_while_held_or_queued() {
    let tmp = tempfile::tempdir().unwrap();
    let dir: PathBuf = tmp.path().join("s");
    assert!(!is_logical_active(&dir));
    let held = lock_logical(&dir, LONG).unwrap();
    assert!(is_logical_active(&dir));
    let waiter = std::thread::spawn({
        let dir = dir.clone();
        move || lock_logical(&dir, LONG).is_ok()
    });
    wait_for_queue(&dir, 1);
    drop(held);
    assert!(waiter.join().unwrap());
    assert!(!is_logical_active(&dir));
    assert_eq!(logical_queue_len(&dir), 0);
}

#[test]
fn guard_is_send_and_releases_on_another_thread() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().to_path_buf();
    let guard = lock_logical(&dir, LONG).unwrap();
    std::thread::spawn(move || drop(guard)).join().unwrap();
    assert!(try_lock_logical(&dir).is_some());
}
