//! The minimised corpora of the fuzz targets (session_line), kept in
//! `fuzz/regressions/`, replayed through the very checks the fuzzers run
//! (`fuzz/checks/*.rs`), so every input a fuzzer found interesting stays a regression test.
#![allow(clippy::unwrap_used)]

#[path = "../../../fuzz/checks/corpus.rs"]
mod corpus;
#[path = "../../../fuzz/checks/session_line.rs"]
mod session_line;

use corpus::corpus;

#[test]
fn session_line_corpus_passes_its_fuzz_checks() {
    for input in corpus(env!("CARGO_MANIFEST_DIR"), "session_line") {
        session_line::check(&input);
    }
}
