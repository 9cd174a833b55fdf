//! Durable writes, private modes and the transient retry (PM-50, VECTORS M16).
#![allow(clippy::unwrap_used)]

use crate::common;

use std::fs;
use std::io::{self, BufReader};
use std::os::unix::fs::{PermissionsExt, symlink};
use std::time::Duration;

use common::*;
use memory_lock::{
    Platform, RetryPolicy, atomic_write, ensure_private_dir, is_transient_on, remove_file,
    retry_transient, retry_with,
};
use rustix::io::Errno;

fn errno(e: Errno) -> io::Error {
    io::Error::from_raw_os_error(e.raw_os_error())
}

fn ms(values: &[u64]) -> Vec<Duration> {
    values.iter().map(|v| Duration::from_millis(*v)).collect()
}

fn posix() -> RetryPolicy {
    RetryPolicy {
        platform: Platform::Posix,
        ..RetryPolicy::default()
    }
}

fn windows() -> RetryPolicy {
    RetryPolicy {
        platform: Platform::Windows,
        ..RetryPolicy::default()
    }
}

/// Runs `retry_with` over a scripted sequence of results; returns (result, calls, sleeps).
fn scripted(
    policy: &RetryPolicy,
    script: Vec<io::Result<&'static str>>,
) -> (io::Result<&'static str>, usize, Vec<Duration>) {
    let mut script = script.into_iter();
    let mut calls = 0;
    let mut sleeps = Vec::new();
    let result = retry_with(
        policy,
        |d| sleeps.push(d),
        || {
            calls += 1;
            script.next().unwrap_or(Ok("ok"))
        },
    );
    (result, calls, sleeps)
}

#[test]
fn m16_ebusy_twice_then_ok_waits_20_then_40() {
    let (result, calls, sleeps) = scripted(
        &posix(),
        vec![Err(errno(Errno::BUSY)), Err(errno(Errno::BUSY)), Ok("done")],
    );
    assert_eq!(result.unwrap(), "done");
    assert_eq!(calls, 3);
    assert_eq!(sleeps, ms(&[20, 40]));
}

#[test]
fn m16_enoent_is_returned_after_exactly_one_call() {
    for policy in [posix(), windows()] {
        let (result, calls, sleeps) = scripted(&policy, vec![Err(errno(Errno::NOENT))]);
        let err = result.unwrap_err();
        assert_eq!(err.raw_os_error(), Some(Errno::NOENT.raw_os_error()));
        assert_eq!(calls, 1);
        assert!(sleeps.is_empty());
    }
}

#[test]
fn m16_eperm_eacces_retried_on_windows_only() {
    for e in [Errno::PERM, Errno::ACCESS] {
        let (result, calls, _) = scripted(&windows(), vec![Err(errno(e))]);
        assert_eq!(result.unwrap(), "ok");
        assert_eq!(calls, 2);
        let (result, calls, _) = scripted(&posix(), vec![Err(errno(e))]);
        assert_eq!(result.unwrap_err().raw_os_error(), Some(e.raw_os_error()));
        assert_eq!(calls, 1);
    }
}

#[test]
fn pm50_ladder_and_original_error_after_exhaustion() {
    let (result, calls, sleeps) =
        scripted(&posix(), (0..10).map(|_| Err(errno(Errno::BUSY))).collect());
    assert_eq!(
        result.unwrap_err().raw_os_error(),
        Some(Errno::BUSY.raw_os_error())
    );
    assert_eq!(calls, 7, "first call + 6 retries");
    assert_eq!(sleeps, ms(&[20, 40, 80, 160, 300, 300]));

    let one = RetryPolicy {
        retries: 1,
        ..windows()
    };
    let (result, calls, _) = scripted(&one, vec![Err(errno(Errno::PERM)), Err(errno(Errno::PERM))]);
    assert_eq!(
        result.unwrap_err().raw_os_error(),
        Some(Errno::PERM.raw_os_error())
    );
    assert_eq!(calls, 2);
}

#[test]
fn pm50_transient_classification_table() {
    let cases = [
        (Errno::BUSY, true, true),
        (Errno::MFILE, true, true),
        (Errno::NFILE, true, true),
        (Errno::NOTEMPTY, true, true),
        (Errno::PERM, false, true),
        (Errno::ACCESS, false, true),
        (Errno::NOENT, false, false),
        (Errno::ISDIR, false, false),
        (Errno::EXIST, false, false),
        (Errno::NOSPC, false, false),
    ];
    for (e, on_posix, on_windows) in cases {
        assert_eq!(
            is_transient_on(&errno(e), Platform::Posix),
            on_posix,
            "{e:?}"
        );
        assert_eq!(
            is_transient_on(&errno(e), Platform::Windows),
            on_windows,
            "{e:?}"
        );
    }
    // Errors without an errno are classified by kind; anything else is permanent.
    let kind = |k| io::Error::new(k, "simulated");
    assert!(is_transient_on(
        &kind(io::ErrorKind::ResourceBusy),
        Platform::Posix
    ));
    assert!(is_transient_on(
        &kind(io::ErrorKind::DirectoryNotEmpty),
        Platform::Posix
    ));
    assert!(!is_transient_on(
        &kind(io::ErrorKind::PermissionDenied),
        Platform::Posix
    ));
    assert!(is_transient_on(
        &kind(io::ErrorKind::PermissionDenied),
        Platform::Windows
    ));
    assert!(!is_transient_on(
        &io::Error::other("boom"),
        Platform::Windows
    ));
}

#[test]
fn retry_transient_returns_the_value_without_retrying() {
    let mut calls = 0;
    let value = retry_transient(|| {
        calls += 1;
        Ok::<_, io::Error>(7)
    })
    .unwrap();
    assert_eq!((value, calls), (7, 1));
}

#[test]
fn atomic_write_creates_private_files_and_leaves_no_temp() {
    let tmp = tempfile::tempdir().unwrap();
    let target = tmp.path().join("MEMORY.md");
    atomic_write(&target, b"one\n").unwrap();
    assert_eq!(fs::read(&target).unwrap(), b"one\n");
    assert_eq!(mode(&target), 0o600);
    // An existing, more open file is replaced by a private one.
    fs::set_permissions(&target, fs::Permissions::from_mode(0o644)).unwrap();
    atomic_write(&target, b"two\n").unwrap();
    assert_eq!(fs::read(&target).unwrap(), b"two\n");
    assert_eq!(mode(&target), 0o600);
    atomic_write(&target, b"").unwrap();
    assert_eq!(fs::read(&target).unwrap(), b"");
    assert_eq!(names(tmp.path()), ["MEMORY.md"]);
}

#[test]
fn atomic_write_failure_leaves_target_and_no_temp() {
    let tmp = tempfile::tempdir().unwrap();
    // Target is a non-empty directory: the rename fails.
    let target = tmp.path().join("entry.md");
    fs::create_dir(&target).unwrap();
    fs::write(target.join("inner"), b"keep").unwrap();
    let err = atomic_write(&target, b"new").unwrap_err();
    assert!(
        matches!(
            err.kind(),
            io::ErrorKind::IsADirectory
                | io::ErrorKind::DirectoryNotEmpty
                | io::ErrorKind::AlreadyExists
        ),
        "{err:?}"
    );
    assert_eq!(fs::read(target.join("inner")).unwrap(), b"keep");
    assert_eq!(names(tmp.path()), ["entry.md"]);

    // Missing parent: plain NotFound, nothing created.
    let err = atomic_write(&tmp.path().join("missing/x.md"), b"x").unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::NotFound);
    assert_eq!(names(tmp.path()), ["entry.md"]);
}

#[test]
fn atomic_write_replaces_a_symlink_without_writing_through_it() {
    let tmp = tempfile::tempdir().unwrap();
    let outside = tmp.path().join("outside");
    fs::write(&outside, b"untouched").unwrap();
    let link = tmp.path().join("a.md");
    symlink(&outside, &link).unwrap();
    atomic_write(&link, b"new").unwrap();
    assert_eq!(fs::read(&outside).unwrap(), b"untouched");
    assert!(fs::symlink_metadata(&link).unwrap().file_type().is_file());
    assert_eq!(fs::read(&link).unwrap(), b"new");
}

#[test]
fn ensure_private_dir_creates_0700_and_keeps_existing_modes() {
    let tmp = tempfile::tempdir().unwrap();
    let nested = tmp.path().join("a/b/c");
    ensure_private_dir(&nested).unwrap();
    for dir in ["a", "a/b", "a/b/c"] {
        assert_eq!(mode(&tmp.path().join(dir)), 0o700, "{dir}");
    }
    let open = tmp.path().join("open");
    fs::create_dir(&open).unwrap();
    fs::set_permissions(&open, fs::Permissions::from_mode(0o755)).unwrap();
    ensure_private_dir(&open).unwrap();
    assert_eq!(mode(&open), 0o755);
    let file = tmp.path().join("file");
    fs::write(&file, b"").unwrap();
    assert!(ensure_private_dir(&file).is_err());
    assert!(ensure_private_dir(&file.join("below")).is_err());
}

#[test]
fn remove_file_tolerates_missing_files_only() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("a.md");
    assert!(!remove_file(&path).unwrap());
    fs::write(&path, b"x").unwrap();
    assert!(remove_file(&path).unwrap());
    assert!(!path.exists());
    let dir = tmp.path().join("d");
    fs::create_dir(&dir).unwrap();
    assert!(remove_file(&dir).is_err());
    assert!(dir.exists());
}

#[test]
fn a_killed_writer_never_leaves_a_torn_target() {
    const SIZE: usize = 4 << 20;
    let tmp = tempfile::tempdir().unwrap();
    let target = tmp.path().join("big.md");
    for round in 0..8u64 {
        let mut child = spawn(&["write", target.to_str().unwrap(), &SIZE.to_string()]);
        let mut out = BufReader::new(child.stdout.take().unwrap());
        assert_eq!(read_line(&mut out), "wrote");
        // Kill at varying points of the write loop.
        std::thread::sleep(Duration::from_millis(3 * round + 1));
        let pid = child.id();
        child.kill().unwrap();
        child.wait().unwrap();
        let bytes = fs::read(&target).unwrap();
        assert_eq!(bytes.len(), SIZE, "round {round}");
        let first = bytes[0];
        assert!(first == b'a' || first == b'b');
        assert!(
            bytes.iter().all(|b| *b == first),
            "torn target in round {round}"
        );
        // A crash may leave its hidden temp file behind, and nothing else.
        for name in names(tmp.path()) {
            assert!(
                name == "big.md"
                    || (name.starts_with(&format!(".big.md.{pid}.")) && name.ends_with(".tmp")),
                "{name}"
            );
            if name != "big.md" {
                fs::remove_file(tmp.path().join(name)).unwrap();
            }
        }
    }
}
