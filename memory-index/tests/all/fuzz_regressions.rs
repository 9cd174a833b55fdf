//! The minimised corpora of the fuzz targets (frontmatter, memory_md), kept in
//! `fuzz/regressions/`, replayed through the very checks the fuzzers run
//! (`fuzz/checks/*.rs`), so every input a fuzzer found interesting stays a regression test.
#![allow(clippy::unwrap_used)]

#[path = "../../../fuzz/checks/corpus.rs"]
mod corpus;
#[path = "../../../fuzz/checks/frontmatter.rs"]
mod frontmatter;
#[path = "../../../fuzz/checks/memory_md.rs"]
mod memory_md;

use corpus::corpus;

#[test]
fn frontmatter_corpus_passes_its_fuzz_checks() {
    for input in corpus(env!("CARGO_MANIFEST_DIR"), "frontmatter") {
        frontmatter::check(&input);
    }
}

#[test]
fn memory_md_corpus_passes_its_fuzz_checks() {
    for input in corpus(env!("CARGO_MANIFEST_DIR"), "memory_md") {
        memory_md::check(&input);
    }
}
