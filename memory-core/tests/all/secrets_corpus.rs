//! PA-48: the two secret corpora kept in `memory-core/tests/corpus/`. The figures this test
//! prints are recorded in RELIABILITY.md ("Secret scanning").
//!
//! * `ordinary-memories.jsonl`: ordinary developer memories full of look-alikes (commit
//!   hashes, UUIDs, base64 blobs, checksums, URLs without passwords, placeholders, env
//!   variable names): no hit allowed (target 0 false positives).
//! * `fake-credentials.jsonl`: realistic fake credentials of every kind, each with the kind
//!   the scanner must report: at least 98 % caught, with the right kind.

use std::collections::{BTreeMap, BTreeSet};

use memory_core::secrets::{find_secret_at, kinds};
use memory_core::{AddRequest, ReplaceRequest, StoreError};
use serde_json::Value;

use crate::common::Fixture;

#[allow(clippy::unwrap_used)] // a missing or malformed corpus is a test failure
fn corpus(name: &str) -> Vec<Value> {
    let path = format!("{}/tests/corpus/{name}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap();
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn pa48_no_false_positive_on_ordinary_memories() {
    let memories = corpus("ordinary-memories.jsonl");
    assert!(memories.len() >= 500, "{} memories", memories.len());
    let mut false_positives = Vec::new();
    for m in &memories {
        let text = m["text"].as_str().unwrap();
        if let Some(hit) = find_secret_at(text) {
            false_positives.push(format!(
                "{:?} at {}:{}: {text}",
                hit.kind, hit.line, hit.column
            ));
        }
    }
    println!(
        "secret corpus: {} ordinary memories, {} false positives",
        memories.len(),
        false_positives.len()
    );
    assert!(false_positives.is_empty(), "{false_positives:#?}");
}

#[test]
fn pa48_fake_credentials_are_caught_with_their_kind() {
    let creds = corpus("fake-credentials.jsonl");
    assert!(creds.len() >= 300, "{} credentials", creds.len());
    let known: BTreeSet<&str> = kinds().into_iter().collect();
    let mut by_kind: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    let mut missed = Vec::new();
    let mut wrong_kind = Vec::new();
    for c in &creds {
        let kind = c["kind"].as_str().unwrap();
        let text = c["text"].as_str().unwrap();
        assert!(
            known.contains(kind),
            "corpus kind {kind} is not a scanner kind"
        );
        let slot = by_kind.entry(kind.to_owned()).or_default();
        slot.0 += 1;
        match find_secret_at(text) {
            Some(hit) => {
                slot.1 += 1;
                if hit.kind.0 != kind {
                    wrong_kind.push(format!("{kind} reported as {}: {text}", hit.kind.0));
                }
            }
            None => missed.push(format!("{kind}: {text}")),
        }
    }
    let caught = creds.len() - missed.len();
    let rate = caught as f64 * 100.0 / creds.len() as f64;
    println!(
        "secret corpus: {} fake credentials of {} kinds, {caught} caught ({rate:.1} %)",
        creds.len(),
        by_kind.len()
    );
    for m in &missed {
        println!("missed: {m}");
    }
    assert!(by_kind.len() >= 25, "{} kinds in the corpus", by_kind.len());
    assert!(
        known.iter().all(|k| by_kind.contains_key(*k)),
        "every scanner kind has corpus examples: missing {:?}",
        known
            .iter()
            .filter(|k| !by_kind.contains_key(**k))
            .collect::<Vec<_>>()
    );
    assert!(rate >= 98.0, "{rate:.1} % caught; missed: {missed:#?}");
    assert!(wrong_kind.is_empty(), "{wrong_kind:#?}");
}

/// Every write path refuses with the kind and the position, never the value, and leaves the
/// files as they were (the store is the one path the tool, the CLI, extraction and the
/// dream all end in).
#[test]
fn pa48_refusal_names_kind_and_position_never_the_value() {
    let f = Fixture::new();
    f.store
        .add(AddRequest {
            name: "Deploy".into(),
            body: "deploys go through the release workflow".into(),
            ..AddRequest::default()
        })
        .unwrap();
    let before = f.tree();
    let creds = corpus("fake-credentials.jsonl");
    for (i, c) in creds.iter().enumerate().step_by(7) {
        let text = c["text"].as_str().unwrap();
        let kind = c["kind"].as_str().unwrap();
        let Some(hit) = find_secret_at(text) else {
            continue; // a miss is counted by the test above
        };
        let attempts: Vec<(&str, Result<(), StoreError>)> = vec![
            (
                "content",
                f.store
                    .add(AddRequest {
                        name: format!("Cred {i}"),
                        body: text.to_owned(),
                        ..AddRequest::default()
                    })
                    .map(|_| ()),
            ),
            (
                "content",
                f.store
                    .replace(ReplaceRequest {
                        reference: "Deploy".into(),
                        body: Some(text.to_owned()),
                        ..ReplaceRequest::default()
                    })
                    .map(|_| ()),
            ),
        ];
        for (field, result) in attempts {
            let msg = result.unwrap_err().to_string();
            let want = format!(
                "the {field} contains what looks like a {kind} at line {}, column {}",
                hit.line, hit.column
            );
            assert!(msg.contains(&want), "{msg}\nwanted: {want}");
            let value = &text[hit.offset..];
            let echoed: String = value.chars().take(12).collect();
            assert!(!msg.contains(&echoed), "echoed {echoed:?}: {msg}");
        }
    }
    // A secret in the one-line description, too.
    let err = f
        .store
        .add(AddRequest {
            name: "Token".into(),
            description: Some("bot token xoxb-1234567890-abcdefghijKLMNOP".into()),
            body: "ok".into(),
            ..AddRequest::default()
        })
        .unwrap_err();
    assert!(
        err.to_string().contains(
            "the description contains what looks like a Slack token at line 1, column 11"
        ),
        "{err}"
    );
    assert_eq!(f.tree(), before, "a refused write changes nothing");
}
