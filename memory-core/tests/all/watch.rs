//! The warm listing with file-system notifications (`Store::watch`) and persisted cache rows
//! (`Store::cached_files`, `Store::seed_cache`): changes made by other processes, editors
//! writing in place included, are seen by the next listing; the stat scan stays the truth.
#![allow(clippy::unwrap_used)]

use std::process::Command;

use crate::common::{Fixture, options};
use memory_core::{AddRequest, Store};

fn add(store: &Store, name: &str, body: &str) {
    store
        .add(AddRequest {
            name: name.into(),
            body: body.into(),
            ..AddRequest::default()
        })
        .unwrap();
}

fn bodies(store: &Store) -> Vec<(String, String)> {
    store
        .list()
        .unwrap()
        .iter()
        .map(|e| (e.file.clone(), e.body.clone()))
        .collect()
}

/// Runs a shell command in the memory directory as another process would.
fn sh(f: &Fixture, script: &str) {
    let status = Command::new("sh")
        .arg("-c")
        .arg(script)
        .current_dir(f.dir())
        .status()
        .unwrap();
    assert!(status.success(), "{script}");
}

#[test]
fn watched_listings_see_every_kind_of_external_change_at_the_next_listing() {
    let f = Fixture::new();
    add(&f.store, "Alpha", "first body");
    add(&f.store, "Beta", "second body");
    assert!(f.store.watch(), "inotify is available on the test machine");
    assert!(f.store.cache_stats().watching);
    assert_eq!(f.store.list().unwrap().len(), 2);
    let watched = f.store.cache_stats().watched;
    // Unchanged: answered from the watch.
    assert_eq!(f.store.list().unwrap().len(), 2);
    assert!(f.store.cache_stats().watched > watched);

    // An editor writing in place (same inode, truncate and write).
    let text = f.read("Alpha.md").replace("first body", "edited in place");
    sh(&f, &format!("printf '%s' '{text}' > Alpha.md"));
    assert!(bodies(&f.store).iter().any(|(_, b)| b == "edited in place"));

    // A new file from another process, then a rename and a delete.
    let gamma = f.read("Beta.md").replace("name: Beta", "name: Gamma");
    sh(&f, &format!("printf '%s' '{gamma}' > Gamma.md"));
    let files: Vec<String> = bodies(&f.store).into_iter().map(|(f, _)| f).collect();
    assert_eq!(files.len(), 3, "{files:?}");
    sh(&f, "mv Gamma.md Delta.md");
    let files: Vec<String> = bodies(&f.store).into_iter().map(|(f, _)| f).collect();
    assert!(files.contains(&"Delta.md".to_owned()) && !files.contains(&"Gamma.md".to_owned()));
    sh(&f, "rm Beta.md");
    let files: Vec<String> = bodies(&f.store).into_iter().map(|(f, _)| f).collect();
    assert!(!files.contains(&"Beta.md".to_owned()), "{files:?}");

    // Our own writes too.
    add(&f.store, "Epsilon", "written by the store");
    assert!(
        bodies(&f.store)
            .iter()
            .any(|(_, b)| b == "written by the store")
    );

    // Our own replace, rename-free remove: the next listing agrees.
    f.store.remove("Epsilon", None).unwrap();
    assert!(
        !bodies(&f.store)
            .iter()
            .any(|(_, b)| b == "written by the store")
    );

    // Every listing matched a fresh store's full scan.
    let fresh = Store::new(f.dir(), options());
    assert_eq!(bodies(&f.store), bodies(&fresh));
    assert!(f.store.cache_stats().watched >= 6);
}

#[test]
fn a_missing_directory_is_not_watched_until_it_exists() {
    let f = Fixture::new();
    assert!(!f.store.watch());
    assert!(f.store.list().unwrap().is_empty());
    add(&f.store, "Alpha", "body");
    // The full scan after the directory appeared started the watch.
    assert_eq!(f.store.list().unwrap().len(), 1);
    assert!(f.store.cache_stats().watching);
    sh(&f, "rm Alpha.md");
    assert!(f.store.list().unwrap().is_empty());
}

#[test]
fn seeded_rows_are_checked_against_the_files() {
    let f = Fixture::new();
    add(&f.store, "Alpha", "alpha body");
    add(&f.store, "Beta", "beta body");
    add(&f.store, "Gamma", "gamma body");
    f.store.list().unwrap();
    let rows = f.store.cached_files();
    assert_eq!(rows.len(), 3);
    // Words round-trip.
    for r in &rows {
        assert_eq!(
            memory_core::FileStamp::from_words(r.stamp.to_words()),
            r.stamp
        );
    }
    // Meanwhile: one file edited in place, one deleted, one added.
    let text = f.read("Alpha.md").replace("alpha body", "alpha edited");
    sh(&f, &format!("printf '%s' '{text}' > Alpha.md"));
    sh(&f, "rm Beta.md");
    let delta = f.read("Gamma.md").replace("name: Gamma", "name: Delta");
    sh(&f, &format!("printf '%s' '{delta}' > Delta.md"));

    let next = Store::new(f.dir(), options());
    assert_eq!(next.seed_cache(rows.clone()), 3);
    let got = bodies(&next);
    let fresh = Store::new(f.dir(), options());
    assert_eq!(got, bodies(&fresh));
    // Only the edited and the new file were read; Gamma came from the seed.
    assert_eq!(next.cache_stats().parsed, 2);
    // A second seed into a used cache is refused.
    assert_eq!(next.seed_cache(rows), 0);
}
