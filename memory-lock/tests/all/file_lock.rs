//! The cross-process `.lock` (VECTORS §M, PM-45..PM-47, PM-49) and the dead-holder reclaim.
#![allow(clippy::unwrap_used)]

use crate::common;

use std::fs;
use std::io::BufReader;
use std::os::unix::fs::symlink;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use common::*;
use memory_lock::{
    FileLockError, Holder, LockOptions, LockState, acquire, hostname, inspect, pid_alive,
    remove_lock, try_acquire,
};

const STARTED: &str = "2026-10-02T00:00:00.000Z";

fn lock_path(dir: &Path) -> std::path::PathBuf {
    dir.join(".lock")
}

#[test]
fn m1_record_exists_only_during_the_write_with_exact_json() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let guard = acquire(dir, "add", &LockOptions::default()).unwrap();
    let raw = fs::read_to_string(lock_path(dir)).unwrap();
    let prefix = format!(
        "{{\"pid\":{},\"hostname\":{},\"startedAt\":\"",
        std::process::id(),
        serde_json::to_string(&hostname()).unwrap()
    );
    assert!(raw.starts_with(&prefix), "{raw}");
    assert!(raw.ends_with("\",\"op\":\"add\"}"), "{raw}");
    let started = &raw[prefix.len()..raw.len() - "\",\"op\":\"add\"}".len()];
    // JavaScript toISOString shape: 2026-10-02T00:00:00.000Z
    assert_eq!(started.len(), 24, "{started}");
    assert!(started.parse::<jiff::Timestamp>().is_ok(), "{started}");
    assert_eq!(&started[19..20], ".");
    assert!(started.ends_with('Z'));
    assert_eq!(mode(&lock_path(dir)), 0o600);
    assert_eq!(
        inspect(dir).unwrap(),
        LockState::Held(guard.holder().clone())
    );
    assert!(guard.reclaimed().is_none());
    drop(guard);
    assert!(!lock_path(dir).exists());
    assert_eq!(inspect(dir).unwrap(), LockState::Free);
}

#[test]
fn m1_released_when_the_body_panics() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().to_path_buf();
    let result = std::panic::catch_unwind(|| {
        let _guard = acquire(&dir, "add", &LockOptions::default()).unwrap();
        assert!(dir.join(".lock").exists());
        panic!("boom");
    });
    assert!(result.is_err());
    assert!(!lock_path(&dir).exists());
}

#[test]
fn m2_live_holder_on_this_host_times_out_with_locked_text() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let held = local(std::process::id(), "dream");
    plant(dir, &held);
    let before = fs::read(lock_path(dir)).unwrap();
    let start = Instant::now();
    let err = acquire(dir, "add", &short(true)).unwrap_err();
    assert!(start.elapsed() >= Duration::from_millis(200));
    assert_eq!(
        err.to_string(),
        format!(
            "Memory is locked by dream (pid {}, started {STARTED})",
            std::process::id()
        )
    );
    assert!(matches!(err, FileLockError::Held { holder } if holder == held));
    assert_eq!(fs::read(lock_path(dir)).unwrap(), before);
}

#[test]
fn m2_live_child_process_is_never_reclaimed() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let child = sleeper();
    let pid = child.id();
    plant(dir, &local(pid, "dream"));
    let err = acquire(dir, "add", &short(true)).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!("Memory is locked by dream (pid {pid}, started {STARTED})")
    );
    assert_eq!(inspect(dir).unwrap(), LockState::Held(local(pid, "dream")));
    stop(child);
}

#[test]
fn m3_m15_dead_pid_with_reclaim_off_is_abandoned_immediately_and_left_alone() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let pid = dead_pid();
    assert!(!pid_alive(pid));
    plant(dir, &local(pid, "dream"));
    let before = fs::read(lock_path(dir)).unwrap();
    let opts = LockOptions {
        timeout: Duration::from_secs(30),
        reclaim_dead: false,
        ..LockOptions::default()
    };
    let start = Instant::now();
    let err = acquire(dir, "add", &opts).unwrap_err();
    assert!(start.elapsed() < Duration::from_secs(30), "must not wait");
    assert_eq!(
        err.to_string(),
        format!(
            "Memory lock at {}/.lock is abandoned by dream (pid {pid}, started {STARTED}) — delete the file to clear it",
            dir.display()
        )
    );
    // M15: never auto-reclaimed when reclaim is off.
    assert_eq!(fs::read(lock_path(dir)).unwrap(), before);
    assert!(matches!(
        try_acquire(dir, "extract", false),
        Err(FileLockError::Abandoned { .. })
    ));
    assert_eq!(fs::read(lock_path(dir)).unwrap(), before);
}

#[test]
fn m3_dead_pid_with_reclaim_on_is_reclaimed() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let dead = local(dead_pid(), "dream");
    plant(dir, &dead);
    let guard = acquire(dir, "add", &short(true)).unwrap();
    assert_eq!(guard.reclaimed(), Some(&dead));
    assert_eq!(
        inspect(dir).unwrap(),
        LockState::Held(guard.holder().clone())
    );
    drop(guard);
    assert_eq!(inspect(dir).unwrap(), LockState::Free);
}

#[test]
fn m4_unreadable_records_are_abandoned_immediately_and_never_reclaimed() {
    let cases: &[&[u8]] = &[
        b"garbage",
        b" ",
        b"123",
        b"null",
        b"{}",
        b"[]",
        br#"{"pid":"1","hostname":"h","startedAt":"s","op":"add"}"#,
        br#"{"pid":-1,"hostname":"h","startedAt":"s","op":"add"}"#,
        br#"{"pid":1,"hostname":"h","startedAt":"s"}"#,
        br#"{"pid":1,"hostname":"h","startedAt":"s","op":"add""#,
    ];
    for content in cases {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        fs::write(lock_path(dir), content).unwrap();
        let opts = LockOptions {
            timeout: Duration::from_secs(30),
            ..LockOptions::default()
        };
        let start = Instant::now();
        let err = acquire(dir, "add", &opts).unwrap_err();
        assert!(start.elapsed() < Duration::from_secs(30));
        assert_eq!(
            err.to_string(),
            format!(
                "Memory lock at {}/.lock is abandoned by an unreadable record — delete the file to clear it",
                dir.display()
            ),
            "{}",
            String::from_utf8_lossy(content)
        );
        assert_eq!(
            inspect(dir).unwrap(),
            LockState::Unreadable { empty: false }
        );
        assert_eq!(fs::read(lock_path(dir)).unwrap(), *content);
        assert!(matches!(
            try_acquire(dir, "extract", true),
            Err(FileLockError::AbandonedUnreadable { .. })
        ));
    }
}

#[test]
fn extra_keys_in_a_record_are_ignored() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let pid = std::process::id();
    let raw = format!(
        r#"{{"op":"dream","startedAt":"{STARTED}","hostname":{},"pid":{pid},"future":1}}"#,
        serde_json::to_string(&hostname()).unwrap()
    );
    fs::write(lock_path(dir), raw).unwrap();
    assert_eq!(inspect(dir).unwrap(), LockState::Held(local(pid, "dream")));
}

#[test]
fn m4_symlink_lock_is_unreadable_and_never_followed() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("mem");
    fs::create_dir(&dir).unwrap();
    // The link points at a valid dead record elsewhere: following it would reclaim (unlink)
    // the wrong file.
    let target = tmp.path().join("elsewhere.json");
    let dead = local(dead_pid(), "dream");
    fs::write(&target, dead.to_json()).unwrap();
    symlink(&target, lock_path(&dir)).unwrap();
    let err = acquire(&dir, "add", &short(true)).unwrap_err();
    assert!(
        matches!(err, FileLockError::AbandonedUnreadable { .. }),
        "{err}"
    );
    assert_eq!(
        inspect(&dir).unwrap(),
        LockState::Unreadable { empty: false }
    );
    assert_eq!(fs::read_to_string(&target).unwrap(), dead.to_json());
    assert!(
        fs::symlink_metadata(lock_path(&dir))
            .unwrap()
            .file_type()
            .is_symlink()
    );

    // A dangling symlink is not "free" either, and nothing is created through it.
    let dangling = tmp.path().join("nowhere.json");
    fs::remove_file(lock_path(&dir)).unwrap();
    symlink(&dangling, lock_path(&dir)).unwrap();
    let err = acquire(&dir, "add", &short(true)).unwrap_err();
    assert!(
        matches!(err, FileLockError::AbandonedUnreadable { .. }),
        "{err}"
    );
    assert!(!dangling.exists());
}

#[test]
fn m4_directory_and_fifo_locks_are_unreadable() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    fs::create_dir(lock_path(dir)).unwrap();
    assert_eq!(
        inspect(dir).unwrap(),
        LockState::Unreadable { empty: false }
    );
    assert!(matches!(
        acquire(dir, "add", &short(true)),
        Err(FileLockError::AbandonedUnreadable { .. })
    ));

    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let made = std::process::Command::new("mkfifo")
        .arg(lock_path(dir))
        .status()
        .unwrap();
    assert!(made.success());
    // Must not block on the FIFO.
    assert_eq!(
        inspect(dir).unwrap(),
        LockState::Unreadable { empty: false }
    );
    assert!(matches!(
        acquire(dir, "add", &short(true)),
        Err(FileLockError::AbandonedUnreadable { .. })
    ));
}

#[test]
fn m5_zero_byte_lock_waits_the_full_timeout_then_reports_being_written() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    fs::write(lock_path(dir), b"").unwrap();
    assert_eq!(inspect(dir).unwrap(), LockState::Unreadable { empty: true });
    let start = Instant::now();
    let err = acquire(dir, "add", &short(true)).unwrap_err();
    assert!(start.elapsed() >= Duration::from_millis(200));
    assert_eq!(
        err.to_string(),
        format!(
            "Memory lock at {}/.lock is still being written (0 bytes) — if no other process is writing, delete the file or run /memory unlock",
            dir.display()
        )
    );
    assert!(lock_path(dir).exists(), "a 0-byte lock is never reclaimed");
    assert!(try_acquire(dir, "extract", true).unwrap().is_none());
}

#[test]
fn m5_record_written_meanwhile_is_then_waited_on_as_a_holder() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().to_path_buf();
    fs::write(lock_path(&dir), b"").unwrap();
    let writer = {
        let dir = dir.clone();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(50));
            plant(&dir, &local(std::process::id(), "dream"));
            std::thread::sleep(Duration::from_millis(100));
            fs::remove_file(lock_path(&dir)).unwrap();
        })
    };
    let guard = acquire(&dir, "add", &patient()).unwrap();
    assert!(guard.reclaimed().is_none());
    writer.join().unwrap();
}

#[test]
fn m6_other_host_is_treated_as_live_even_with_a_dead_pid() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let other = record(dead_pid(), "other-host.example", "dream");
    plant(dir, &other);
    let before = fs::read(lock_path(dir)).unwrap();
    let err = acquire(dir, "add", &short(true)).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "Memory is locked by dream (pid {}, started {STARTED})",
            other.pid
        )
    );
    assert_eq!(fs::read(lock_path(dir)).unwrap(), before);
    assert!(try_acquire(dir, "extract", true).unwrap().is_none());
}

#[test]
fn m12_m13_holder_description() {
    let holder = record(4242, "box", "dream");
    assert_eq!(
        holder.describe(),
        "dream (pid 4242 on box, started 2026-10-02T00:00:00.000Z)"
    );
    assert_eq!(
        format!("Lock: held by {}", holder.describe()),
        "Lock: held by dream (pid 4242 on box, started 2026-10-02T00:00:00.000Z)"
    );
}

#[test]
fn m13_m14_remove_lock_reports_presence() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    assert!(!remove_lock(dir).unwrap(), "M14: no lock present");
    plant(dir, &local(std::process::id(), "dream"));
    assert!(remove_lock(dir).unwrap(), "M13: removed");
    assert_eq!(inspect(dir).unwrap(), LockState::Free);
    // A symlink is removed itself, not its target.
    let target = tmp.path().join("target");
    fs::write(&target, b"x").unwrap();
    symlink(&target, lock_path(dir)).unwrap();
    assert!(remove_lock(dir).unwrap());
    assert!(target.exists());
}

#[test]
fn kernel_lock_of_a_holder_with_an_invisible_pid_prevents_reclaim() {
    // A holder in another pid namespace: its pid looks dead here, but it holds the kernel
    // lock of its record. It must be treated as live.
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let ghost = local(dead_pid(), "dream");
    plant(dir, &ghost);
    let file = fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(lock_path(dir))
        .unwrap();
    file.lock().unwrap();
    let err = acquire(dir, "add", &short(true)).unwrap_err();
    assert!(
        matches!(&err, FileLockError::Held { holder } if *holder == ghost),
        "{err}"
    );
    assert_eq!(fs::read_to_string(lock_path(dir)).unwrap(), ghost.to_json());
    drop(file);
    let guard = acquire(dir, "add", &short(true)).unwrap();
    assert_eq!(guard.reclaimed(), Some(&ghost));
}

#[test]
fn reclaim_after_the_holder_is_killed() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let mut child = spawn(&["hold", dir.to_str().unwrap(), "dream"]);
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let line = read_line(&mut out);
    assert_eq!(line, format!("locked {}", child.id()));
    let pid = child.id();

    // While it lives: hard exclusion.
    let err = acquire(dir, "add", &short(true)).unwrap_err();
    assert!(
        matches!(&err, FileLockError::Held { holder } if holder.pid == pid),
        "{err}"
    );

    child.kill().unwrap();
    child.wait().unwrap();
    let opts = LockOptions {
        timeout: Duration::from_millis(100),
        poll: Duration::from_millis(10),
        reclaim_dead: true,
    };
    let start = Instant::now();
    let guard = acquire(dir, "add", &opts).unwrap();
    let elapsed = start.elapsed();
    eprintln!("reclaim after SIGKILL took {elapsed:?}");
    let reclaimed = guard.reclaimed().unwrap();
    assert_eq!(reclaimed.pid, pid);
    assert_eq!(reclaimed.op, "dream");
    assert_eq!(reclaimed.hostname, hostname());
}

#[test]
fn killed_holder_with_reclaim_off_gives_the_abandoned_text() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let mut child = spawn(&["hold", dir.to_str().unwrap(), "dream"]);
    let mut out = BufReader::new(child.stdout.take().unwrap());
    read_line(&mut out);
    let pid = child.id();
    child.kill().unwrap();
    child.wait().unwrap();
    let Holder { started_at, .. } = match inspect(dir).unwrap() {
        LockState::Held(holder) => holder,
        other => panic!("{other:?}"),
    };
    let err = acquire(dir, "add", &short(false)).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "Memory lock at {}/.lock is abandoned by dream (pid {pid}, started {started_at}) — delete the file to clear it",
            dir.display()
        )
    );
    assert!(lock_path(dir).exists());
}

#[test]
fn release_never_removes_a_record_that_is_not_ours() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    // Someone ran /memory unlock while we held the lock, and another process took it.
    let first = acquire(dir, "add", &LockOptions::default()).unwrap();
    assert!(remove_lock(dir).unwrap());
    let other = local(dead_pid(), "dream");
    plant(dir, &other);
    drop(first);
    assert_eq!(inspect(dir).unwrap(), LockState::Held(other));

    // Same pid, different acquisition (another guard of this process): not ours either.
    fs::remove_file(lock_path(dir)).unwrap();
    let first = acquire(dir, "add", &LockOptions::default()).unwrap();
    assert!(remove_lock(dir).unwrap());
    let second = acquire(dir, "replace", &LockOptions::default()).unwrap();
    first.release().unwrap();
    assert_eq!(
        inspect(dir).unwrap(),
        LockState::Held(second.holder().clone())
    );
    second.release().unwrap();
    assert_eq!(inspect(dir).unwrap(), LockState::Free);
}

#[test]
fn try_acquire_never_waits() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let guard = try_acquire(dir, "extract", true).unwrap().unwrap();
    assert!(try_acquire(dir, "extract", true).unwrap().is_none());
    drop(guard);
    assert!(try_acquire(dir, "extract", true).unwrap().is_some());
}

#[test]
fn missing_directory_is_an_io_error_naming_the_path() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("missing");
    let err = acquire(&dir, "add", &short(true)).unwrap_err();
    assert!(matches!(err, FileLockError::Io { .. }));
    assert!(
        err.to_string().starts_with(&format!(
            "Cannot take memory lock at {}/.lock: ",
            dir.display()
        )),
        "{err}"
    );
    assert_eq!(inspect(&dir).unwrap(), LockState::Free);
    // The "directory" is a file: inspect reports it.
    let file = tmp.path().join("file");
    fs::write(&file, b"").unwrap();
    assert!(inspect(&file).is_err());
}

#[test]
fn pid_alive_classifies_this_process_dead_children_and_invalid_pids() {
    assert!(pid_alive(std::process::id()));
    assert!(!pid_alive(dead_pid()));
    // Not valid pids: conservatively alive (never reclaimed).
    assert!(pid_alive(0));
    assert!(pid_alive(u32::MAX));
}

fn threads_in_critical_sections(dir: &Path, threads: usize, rounds: usize) -> (usize, usize) {
    let inside = Arc::new(AtomicUsize::new(0));
    let overlaps = Arc::new(AtomicUsize::new(0));
    let reclaims = Arc::new(AtomicUsize::new(0));
    let handles: Vec<_> = (0..threads)
        .map(|_| {
            let (dir, inside, overlaps, reclaims) = (
                dir.to_path_buf(),
                Arc::clone(&inside),
                Arc::clone(&overlaps),
                Arc::clone(&reclaims),
            );
            std::thread::spawn(move || {
                for _ in 0..rounds {
                    let guard = acquire(&dir, "add", &patient()).unwrap();
                    if guard.reclaimed().is_some() {
                        reclaims.fetch_add(1, Ordering::SeqCst);
                    }
                    if inside.fetch_add(1, Ordering::SeqCst) != 0 {
                        overlaps.fetch_add(1, Ordering::SeqCst);
                    }
                    std::thread::sleep(Duration::from_millis(1));
                    inside.fetch_sub(1, Ordering::SeqCst);
                    drop(guard);
                }
            })
        })
        .collect();
    for handle in handles {
        handle.join().unwrap();
    }
    (
        overlaps.load(Ordering::SeqCst),
        reclaims.load(Ordering::SeqCst),
    )
}

#[test]
fn threads_racing_to_reclaim_one_dead_lock_exclude_each_other() {
    for _ in 0..5 {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        plant(dir, &local(dead_pid(), "dream"));
        let (overlaps, reclaims) = threads_in_critical_sections(dir, 4, 5);
        assert_eq!(overlaps, 0);
        assert_eq!(reclaims, 1, "exactly one contender removes the dead record");
        assert_eq!(inspect(dir).unwrap(), LockState::Free);
    }
}

#[test]
fn processes_racing_to_reclaim_one_dead_lock_exclude_each_other() {
    for _ in 0..3 {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        plant(dir, &local(dead_pid(), "dream"));
        let children: Vec<_> = (0..4)
            .map(|_| spawn(&["crit", dir.to_str().unwrap(), "5"]))
            .collect();
        let mut reclaims = 0;
        for child in children {
            let out = child.wait_with_output().unwrap();
            assert!(out.status.success());
            reclaims += String::from_utf8(out.stdout)
                .unwrap()
                .lines()
                .filter(|l| *l == "reclaimed")
                .count();
        }
        assert_eq!(reclaims, 1, "exactly one process removes the dead record");
        let leftovers: Vec<String> = names(dir)
            .into_iter()
            .filter(|n| n.starts_with("overlap.") || n == ".lock" || n == "inside")
            .collect();
        assert!(leftovers.is_empty(), "{leftovers:?}");
    }
}

#[test]
fn pm49_processes_incrementing_a_counter_never_lose_an_update() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let start = Instant::now();
    let children: Vec<_> = (0..8)
        .map(|_| spawn(&["count", dir.to_str().unwrap(), "50"]))
        .collect();
    for child in children {
        assert!(child.wait_with_output().unwrap().status.success());
    }
    eprintln!("8 x 50 locked increments took {:?}", start.elapsed());
    assert_eq!(fs::read_to_string(dir.join("counter")).unwrap(), "400\n");
    assert_eq!(mode(&dir.join("counter")), 0o600);
    assert_eq!(names(dir), vec!["counter"], "no lock or temp file left");
}

#[test]
fn pm49_threads_of_one_process_are_excluded_by_the_file_lock_alone() {
    let tmp = tempfile::tempdir().unwrap();
    let (overlaps, reclaims) = threads_in_critical_sections(tmp.path(), 4, 10);
    assert_eq!((overlaps, reclaims), (0, 0));
}
