//! The minimised corpora of the fuzz targets (remote_url), kept in
//! `fuzz/regressions/`, replayed through the very checks the fuzzers run
//! (`fuzz/checks/*.rs`), so every input a fuzzer found interesting stays a regression test.
#![allow(clippy::unwrap_used)]

#[path = "../../../fuzz/checks/corpus.rs"]
mod corpus;
#[path = "../../../fuzz/checks/remote_url.rs"]
mod remote_url;

use corpus::corpus;

#[test]
fn remote_url_corpus_passes_its_fuzz_checks() {
    for input in corpus(env!("CARGO_MANIFEST_DIR"), "remote_url") {
        remote_url::check(&input);
    }
}
