//! Snapshots under `.backups/` (VECTORS §N, PM-52..PM-55).
#![allow(clippy::unwrap_used)]

use crate::common;

use std::fs;
use std::os::unix::fs::symlink;
use std::path::Path;

use common::*;
use jiff::Timestamp;
use memory_lock::{
    LockOptions, SnapshotError, acquire, atomic_write, prune_snapshots, snapshot_all,
    snapshot_files, snapshot_stamp,
};

fn at(iso: &str) -> Timestamp {
    iso.parse().unwrap()
}

fn memory_dir() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    fs::write(tmp.path().join("MEMORY.md"), "# Memory Index\n").unwrap();
    tmp
}

fn backups(dir: &Path) -> std::path::PathBuf {
    dir.join(".backups")
}

#[test]
fn n1_copies_listed_files_into_a_timestamped_private_directory() {
    let tmp = memory_dir();
    let dir = tmp.path();
    fs::write(dir.join("a.md"), "A\n").unwrap();
    let snap = snapshot_files(
        dir,
        "write",
        &["MEMORY.md", "a.md"],
        5,
        at("2026-10-01T00:00:01.000Z"),
    )
    .unwrap();
    assert_eq!(snap, backups(dir).join("2026-10-01T00-00-01-000Z-write"));
    assert_eq!(
        fs::read_to_string(snap.join("MEMORY.md")).unwrap(),
        "# Memory Index\n"
    );
    assert_eq!(fs::read_to_string(snap.join("a.md")).unwrap(), "A\n");
    assert_eq!(mode(&backups(dir)), 0o700);
    assert_eq!(mode(&snap), 0o700);
    // Hard link: the very inode the next atomic write will replace (same mode, no copy).
    use std::os::unix::fs::MetadataExt;
    assert_eq!(
        fs::metadata(snap.join("a.md")).unwrap().ino(),
        fs::metadata(dir.join("a.md")).unwrap().ino()
    );
}

#[test]
fn n2_missing_files_are_skipped() {
    let tmp = memory_dir();
    let snap = snapshot_files(
        tmp.path(),
        "write",
        &["MEMORY.md", "missing.md"],
        5,
        at("2026-10-01T00:00:01.000Z"),
    )
    .unwrap();
    assert_eq!(names(&snap), ["MEMORY.md"]);
}

#[test]
fn n3_same_timestamp_gets_a_numbered_suffix() {
    let tmp = memory_dir();
    let now = at("2026-10-01T00:00:02.000Z");
    let first = snapshot_files(tmp.path(), "write", &["MEMORY.md"], 5, now).unwrap();
    let second = snapshot_files(tmp.path(), "write", &["MEMORY.md"], 5, now).unwrap();
    let third = snapshot_files(tmp.path(), "write", &["MEMORY.md"], 5, now).unwrap();
    assert_eq!(
        second.as_os_str().to_str().unwrap(),
        format!("{}-2", first.display())
    );
    assert_eq!(
        third.as_os_str().to_str().unwrap(),
        format!("{}-3", first.display())
    );
}

fn seven_snapshots(dir: &Path, keep: usize) {
    for i in 1..=7 {
        snapshot_files(
            dir,
            "write",
            &["MEMORY.md"],
            keep,
            at(&format!("2026-10-01T00:00:0{i}.000Z")),
        )
        .unwrap();
    }
}

#[test]
fn n4_retention_keeps_the_newest_five() {
    let tmp = memory_dir();
    seven_snapshots(tmp.path(), 5);
    let expected: Vec<String> = (3..=7)
        .map(|i| format!("2026-10-01T00-00-0{i}-000Z-write"))
        .collect();
    assert_eq!(names(&backups(tmp.path())), expected);
}

#[test]
fn n5_migrate_directories_are_never_pruned() {
    let tmp = memory_dir();
    let migrate = backups(tmp.path()).join("migrate-2026-09-01T00-00-00-000Z");
    fs::create_dir_all(migrate.join("originals")).unwrap();
    fs::write(migrate.join("originals/topic.md"), "old").unwrap();
    seven_snapshots(tmp.path(), 5);
    let names = names(&backups(tmp.path()));
    assert!(names.contains(&"migrate-2026-09-01T00-00-00-000Z".to_owned()));
    assert_eq!(names.iter().filter(|n| n.ends_with("-write")).count(), 5);
    assert_eq!(
        fs::read_to_string(migrate.join("originals/topic.md")).unwrap(),
        "old"
    );
}

#[test]
fn n6_pm53_backups_as_a_file_fails_and_copies_nothing() {
    let tmp = memory_dir();
    let dir = tmp.path();
    fs::write(dir.join("a.md"), "A\n").unwrap();
    fs::write(backups(dir), "not a dir").unwrap();
    let err = snapshot_files(
        dir,
        "write",
        &["MEMORY.md", "a.md"],
        5,
        at("2026-10-01T00:00:01.000Z"),
    )
    .unwrap_err();
    assert!(
        matches!(&err, SnapshotError::CreateDir { path, .. } if *path == backups(dir)),
        "{err}"
    );
    assert!(err.to_string().starts_with(&format!(
        "Cannot create snapshot directory {}/.backups: ",
        dir.display()
    )));
    assert_eq!(fs::read_to_string(backups(dir)).unwrap(), "not a dir");
    assert_eq!(names(dir), [".backups", "MEMORY.md", "a.md"]);
    assert!(snapshot_all(dir, "dream", 5, at("2026-10-01T00:00:01.000Z")).is_err());
    assert_eq!(
        fs::read_to_string(dir.join("MEMORY.md")).unwrap(),
        "# Memory Index\n"
    );
}

#[test]
fn n7_locking_and_writing_never_create_backups_by_themselves() {
    // skipSnapshot is the caller's choice: without a snapshot call there is no `.backups`.
    let tmp = memory_dir();
    let dir = tmp.path();
    let guard = acquire(dir, "add", &LockOptions::default()).unwrap();
    atomic_write(&dir.join("a.md"), b"A\n").unwrap();
    drop(guard);
    assert!(!backups(dir).exists());
}

#[test]
fn n8_first_add_snapshots_the_old_index_once() {
    let tmp = memory_dir();
    let dir = tmp.path();
    snapshot_files(
        dir,
        "write",
        &["MEMORY.md", "new-entry.md"],
        5,
        at("2026-10-01T00:00:01.000Z"),
    )
    .unwrap();
    atomic_write(&dir.join("new-entry.md"), b"body\n").unwrap();
    atomic_write(&dir.join("MEMORY.md"), b"- [New](new-entry.md)\n").unwrap();
    let snaps = names(&backups(dir));
    assert_eq!(snaps.len(), 1);
    let snap = backups(dir).join(&snaps[0]);
    assert_eq!(names(&snap), ["MEMORY.md"]);
    assert_eq!(
        fs::read_to_string(snap.join("MEMORY.md")).unwrap(),
        "# Memory Index\n"
    );
}

#[test]
fn n9_remove_keeps_the_removed_entry_in_the_newest_snapshot() {
    let tmp = memory_dir();
    let dir = tmp.path();
    fs::write(dir.join("A.md"), "---\nname: A\n---\nbody of A\n").unwrap();
    snapshot_files(
        dir,
        "write",
        &["MEMORY.md", "A.md"],
        5,
        at("2026-10-01T00:00:01.000Z"),
    )
    .unwrap();
    memory_lock::remove_file(&dir.join("A.md")).unwrap();
    let newest = names(&backups(dir)).pop().unwrap();
    assert_eq!(
        fs::read_to_string(backups(dir).join(newest).join("A.md")).unwrap(),
        "---\nname: A\n---\nbody of A\n"
    );
}

#[test]
fn n10_keep_zero_prunes_the_snapshot_just_taken() {
    let tmp = memory_dir();
    let snap = snapshot_files(
        tmp.path(),
        "write",
        &["MEMORY.md"],
        0,
        at("2026-10-01T00:00:01.000Z"),
    )
    .unwrap();
    assert!(!snap.exists());
    assert!(names(&backups(tmp.path())).is_empty());
}

#[test]
fn n11_a_hand_made_directory_sorts_last_and_is_kept() {
    let tmp = memory_dir();
    fs::create_dir_all(backups(tmp.path()).join("zzz")).unwrap();
    seven_snapshots(tmp.path(), 5);
    let names = names(&backups(tmp.path()));
    assert_eq!(names.len(), 5);
    assert_eq!(names.last().unwrap(), "zzz");
    assert_eq!(names[0], "2026-10-01T00-00-04-000Z-write");
}

#[test]
fn n12_dream_snapshot_takes_every_top_level_non_dot_regular_file() {
    let tmp = memory_dir();
    let dir = tmp.path();
    fs::write(dir.join("a.md"), "A").unwrap();
    fs::write(dir.join("notes.txt"), "notes").unwrap();
    fs::write(dir.join(".lock"), "{}").unwrap();
    fs::write(dir.join(".dream-meta.json"), "{}").unwrap();
    fs::create_dir(dir.join("sessions")).unwrap();
    fs::write(dir.join("sessions/s1.md"), "s").unwrap();
    symlink(dir.join("a.md"), dir.join("link.md")).unwrap();
    let snap = snapshot_all(dir, "dream", 5, at("2026-10-01T22:10:04.882Z")).unwrap();
    assert_eq!(snap, backups(dir).join("2026-10-01T22-10-04-882Z-dream"));
    assert_eq!(names(&snap), ["MEMORY.md", "a.md", "notes.txt"]);
    assert_eq!(fs::read_to_string(snap.join("notes.txt")).unwrap(), "notes");
}

#[test]
fn pm54_prune_ignores_files_and_a_missing_backups_dir() {
    let tmp = memory_dir();
    prune_snapshots(tmp.path(), 5).unwrap();
    assert!(!backups(tmp.path()).exists());
    fs::create_dir(backups(tmp.path())).unwrap();
    fs::write(backups(tmp.path()).join("0-stray-file"), "x").unwrap();
    for i in 1..=3 {
        fs::create_dir(backups(tmp.path()).join(format!("2026-10-01T00-00-0{i}-000Z-write")))
            .unwrap();
    }
    prune_snapshots(tmp.path(), 1).unwrap();
    assert_eq!(
        names(&backups(tmp.path())),
        ["0-stray-file", "2026-10-01T00-00-03-000Z-write"]
    );
}

#[test]
fn non_regular_sources_are_skipped_never_followed() {
    let tmp = memory_dir();
    let dir = tmp.path();
    fs::create_dir(dir.join("b.md")).unwrap();
    let outside = tempfile::tempdir().unwrap();
    fs::write(outside.path().join("secret"), "outside").unwrap();
    std::os::unix::fs::symlink(outside.path().join("secret"), dir.join("c.md")).unwrap();
    let snap = snapshot_files(
        dir,
        "write",
        &["MEMORY.md", "b.md", "c.md"],
        5,
        at("2026-10-01T00:00:01.000Z"),
    )
    .unwrap();
    assert_eq!(names(&snap), ["MEMORY.md"]);
}

#[test]
fn stamp_is_the_iso_time_with_colons_and_dots_replaced() {
    assert_eq!(
        snapshot_stamp(at("2026-10-01T00:00:01Z")),
        "2026-10-01T00-00-01-000Z"
    );
    assert_eq!(
        snapshot_stamp(at("2026-10-01T22:10:04.882999Z")),
        "2026-10-01T22-10-04-882Z"
    );
}

#[test]
fn retention_recycles_the_oldest_directory_instead_of_creating_one() {
    use std::os::unix::fs::MetadataExt;
    let tmp = memory_dir();
    let dir = tmp.path();
    fs::write(dir.join("a.md"), "A1\n").unwrap();
    for second in 1..=3 {
        snapshot_files(
            dir,
            "write",
            &["a.md"],
            3,
            at(&format!("2026-10-01T00:00:0{second}.000Z")),
        )
        .unwrap();
    }
    let oldest = backups(dir).join("2026-10-01T00-00-01-000Z-write");
    let ino = fs::metadata(&oldest).unwrap().ino();
    fs::write(dir.join("a.md.new"), "A2\n").unwrap();
    fs::rename(dir.join("a.md.new"), dir.join("a.md")).unwrap();
    let snap = snapshot_files(dir, "write", &["a.md"], 3, at("2026-10-01T00:00:04.000Z")).unwrap();
    assert_eq!(
        fs::metadata(&snap).unwrap().ino(),
        ino,
        "the oldest was reused"
    );
    assert!(!oldest.exists());
    assert_eq!(fs::read_to_string(snap.join("a.md")).unwrap(), "A2\n");
    assert_eq!(names(&snap), ["a.md"], "emptied before reuse");
    assert_eq!(
        names(&backups(dir)),
        [
            "2026-10-01T00-00-02-000Z-write",
            "2026-10-01T00-00-03-000Z-write",
            "2026-10-01T00-00-04-000Z-write"
        ]
    );
}

#[test]
fn a_directory_with_subdirectories_is_pruned_not_recycled() {
    let tmp = memory_dir();
    let dir = tmp.path();
    fs::create_dir_all(backups(dir).join("0-hand-made/nested")).unwrap();
    snapshot_files(
        dir,
        "write",
        &["MEMORY.md"],
        1,
        at("2026-10-01T00:00:01.000Z"),
    )
    .unwrap();
    assert_eq!(names(&backups(dir)), ["2026-10-01T00-00-01-000Z-write"]);
}
