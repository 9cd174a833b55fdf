//! Retrieval quality of the lexical surfacing selector, on a labelled set.
//!
//! `data.json` holds 72 memories in the style a coding agent writes them (build commands,
//! gotchas, preferences, architecture facts, debugging history; 8 in Chinese), 134 realistic
//! prompts that paraphrase rather than quote them, each labelled with its 1–3 relevant
//! memories, and 33 prompts with no relevant memory (general questions, and coding requests
//! that no memory is about). The memories are saved through a real
//! [`Store`] (in a shuffled order, so `modified` is unrelated to topic) and every prompt goes
//! through [`Surfacer::surface`] with the default configuration (lexical, `maxFiles` 3), exactly
//! as a session's first turn would.
//!
//! Measured: recall@3 (per prompt, relevant memories surfaced / min(3, relevant), averaged),
//! the same for the no-model baseline "the 3 newest memories", the recall of the 20-candidate
//! hybrid manifest, and how often an unrelated prompt surfaces nothing. Run with
//! `cargo test -p memory-agent --test all retrieval -- --nocapture` to see the figures (and
//! `RETRIEVAL_VERBOSE=1` for every miss); BENCHMARKS.md ("Retrieval quality") records them.
#![allow(clippy::unwrap_used)]

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

use memory_agent::surfacing::{HYBRID_CANDIDATES, Surfacer};
use memory_core::clock::Clock;
use memory_core::{AddRequest, EntryType, Store, StoreOptions};
use memory_rank::{Cutoff, LexicalDoc, LexicalIndex};
use serde::Deserialize;

/// Floors a few points under the measured figures (see BENCHMARKS.md).
/// Measured 0.752 (2026-11-29).
const RECALL_AT_3_FLOOR: f64 = 0.72;
/// Measured 0.970.
const HYBRID_CANDIDATE_RECALL_FLOOR: f64 = 0.94;
/// Measured 31/33 = 0.939.
const UNRELATED_SILENT_FLOOR: f64 = 0.90;

#[derive(Deserialize)]
struct Data {
    memories: Vec<Memory>,
    queries: Vec<Query>,
    unrelated: Vec<String>,
}

#[derive(Deserialize)]
struct Memory {
    name: String,
    #[serde(rename = "type")]
    entry_type: String,
    description: String,
    body: String,
}

#[derive(Deserialize)]
struct Query {
    query: String,
    relevant: Vec<String>,
}

fn load() -> Data {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/all/retrieval/data.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// A store holding every memory, added in a fixed shuffled order one minute apart.
fn store(data: &Data, sb: &testkit::Sandbox) -> Store {
    let minute = Arc::new(AtomicI64::new(0));
    let tick = Arc::clone(&minute);
    let clock = Clock::from_fn(move || {
        let m = tick.load(Ordering::SeqCst);
        jiff::Timestamp::from_second(1_790_000_000 + m * 60).unwrap()
    });
    let store = Store::new(
        sb.path("proj"),
        StoreOptions {
            clock,
            ..StoreOptions::default()
        },
    );
    let n = data.memories.len();
    // 31 is coprime with 72: a permutation unrelated to the order of the file.
    for i in 0..n {
        let m = &data.memories[(i * 31) % n];
        minute.store(i as i64, Ordering::SeqCst);
        store
            .add(AddRequest {
                name: m.name.clone(),
                description: Some(m.description.clone()),
                entry_type: Some(m.entry_type.parse::<EntryType>().unwrap()),
                body: m.body.clone(),
                created: None,
            })
            .unwrap();
    }
    store
}

/// Relevant memories found among `picked`, over min(3, relevant).
fn recall(picked: &[String], relevant: &[String]) -> f64 {
    let hits = relevant.iter().filter(|r| picked.contains(r)).count();
    hits as f64 / relevant.len().min(3) as f64
}

#[test]
fn lexical_recall_at_3_beats_newest_3_and_unrelated_prompts_stay_silent() {
    let data = load();
    assert!(data.memories.len() >= 60 && data.queries.len() >= 120);
    let sb = testkit::Sandbox::new();
    let store = store(&data, &sb);
    let entries = store.list().unwrap();
    assert_eq!(entries.len(), data.memories.len());
    let name_of: HashMap<&str, &str> = entries
        .iter()
        .map(|e| (e.file.as_str(), e.meta.name.as_str()))
        .collect();
    let newest: Vec<String> = entries
        .iter()
        .rev()
        .take(3)
        .map(|e| e.meta.name.clone())
        .collect();
    let index = LexicalIndex::build(entries.iter().map(|e| LexicalDoc {
        file: &e.file,
        name: &e.meta.name,
        description: &e.meta.description,
        body: &e.body,
        modified: &e.meta.modified,
    }));

    let mut surfacer = Surfacer::default();
    let verbose = std::env::var_os("RETRIEVAL_VERBOSE").is_some();
    let (mut lexical, mut baseline, mut candidates, mut hit_any) = (0.0, 0.0, 0.0, 0usize);
    for q in &data.queries {
        surfacer.reset();
        let out = surfacer.surface(&store, q.query.as_str()).unwrap();
        let picked: Vec<String> = out
            .files
            .iter()
            .map(|f| name_of[f.as_str()].to_owned())
            .collect();
        let r = recall(&picked, &q.relevant);
        lexical += r;
        hit_any += usize::from(r > 0.0);
        baseline += recall(&newest, &q.relevant);
        let pool: Vec<String> = index
            .rank_with(&q.query, HYBRID_CANDIDATES, Cutoff::ANY, &|_| false)
            .into_iter()
            .map(|h| name_of[h.file.as_str()].to_owned())
            .collect();
        candidates += recall(&pool, &q.relevant);
        if verbose && r < 1.0 {
            eprintln!(
                "MISS {:?}\n  want {:?}\n  got  {picked:?}",
                q.query, q.relevant
            );
        }
    }
    let n = data.queries.len() as f64;
    let (lexical, baseline, candidates) = (lexical / n, baseline / n, candidates / n);

    let mut silent = 0usize;
    for prompt in &data.unrelated {
        surfacer.reset();
        let out = surfacer.surface(&store, prompt.as_str()).unwrap();
        if out.files.is_empty() {
            silent += 1;
        } else if verbose {
            eprintln!("NOISE {prompt:?} -> {:?}", out.files);
        }
    }
    let silent_rate = silent as f64 / data.unrelated.len() as f64;

    // The precision/recall trade-off of the cutoff, for BENCHMARKS.md and future tuning.
    println!("| min_score | min_score_single_term | recall@3 | unrelated silent |");
    println!("|---|---|---|---|");
    let defaults = Cutoff::SELECT;
    for (min_score, single) in [
        (0.0, 0.0),
        (defaults.min_score, 0.0),
        (defaults.min_score, 0.6),
        (defaults.min_score, 0.7),
        (defaults.min_score, defaults.min_score_single_term),
        (defaults.min_score, 1.0),
    ] {
        let cutoff = Cutoff {
            min_score,
            min_score_single_term: single,
        };
        let mut r = 0.0;
        for q in &data.queries {
            let picked: Vec<String> = index
                .rank_with(&q.query, 3, cutoff, &|_| false)
                .into_iter()
                .map(|h| name_of[h.file.as_str()].to_owned())
                .collect();
            r += recall(&picked, &q.relevant);
        }
        let quiet = data
            .unrelated
            .iter()
            .filter(|u| index.rank_with(u, 3, cutoff, &|_| false).is_empty())
            .count();
        println!(
            "| {min_score} | {single} | {:.3} | {quiet}/{} |",
            r / n,
            data.unrelated.len()
        );
    }
    println!(
        "retrieval: {} memories, {} labelled prompts, {} unrelated prompts",
        data.memories.len(),
        data.queries.len(),
        data.unrelated.len()
    );
    println!("lexical recall@3: {:.3}", lexical);
    println!(
        "lexical prompts with at least one relevant memory surfaced: {:.3}",
        hit_any as f64 / n
    );
    println!("newest-3 baseline recall@3: {:.3}", baseline);
    println!(
        "hybrid manifest (lexical top {HYBRID_CANDIDATES}, any overlap) recall: {:.3}",
        candidates
    );
    println!(
        "unrelated prompts surfacing nothing: {silent}/{} = {:.3}",
        data.unrelated.len(),
        silent_rate
    );
    assert!(lexical >= RECALL_AT_3_FLOOR, "recall@3 {lexical:.3}");
    assert!(
        lexical > baseline + 0.5,
        "lexical {lexical:.3} vs newest-3 {baseline:.3}"
    );
    assert!(
        candidates >= HYBRID_CANDIDATE_RECALL_FLOOR,
        "hybrid candidate recall {candidates:.3}"
    );
    assert!(
        silent_rate >= UNRELATED_SILENT_FLOOR,
        "unrelated silent rate {silent_rate:.3}"
    );
}
