//! The minimised corpora of the fuzz targets (remote_url), kept in
//! `fuzz/regressions/`, replayed through the very checks the fuzzers run
//! (`fuzz/checks/*.rs`), so every input a fuzzer found interesting stays a regression test.
#![allow(clippy::unwrap_used)]

#[path = "../../../fuzz/checks/remote_url.rs"]
mod remote_url;

/// Every file of `fuzz/regressions/<target>/`, sorted by name.
fn corpus(target: &str) -> Vec<Vec<u8>> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fuzz/regressions")
        .join(target);
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|p| std::fs::read(p).unwrap())
        .collect()
}

#[test]
fn remote_url_corpus_passes_its_fuzz_checks() {
    let inputs = corpus("remote_url");
    assert!(
        inputs.len() >= 10,
        "the kept corpus of remote_url is missing"
    );
    for input in inputs {
        remote_url::check(&input);
    }
}
