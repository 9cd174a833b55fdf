//! The minimised corpora of the fuzz targets (frontmatter, memory_md), kept in
//! `fuzz/regressions/`, replayed through the very checks the fuzzers run
//! (`fuzz/checks/*.rs`), so every input a fuzzer found interesting stays a regression test.
#![allow(clippy::unwrap_used)]

#[path = "../../../fuzz/checks/frontmatter.rs"]
mod frontmatter;
#[path = "../../../fuzz/checks/memory_md.rs"]
mod memory_md;

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
fn frontmatter_corpus_passes_its_fuzz_checks() {
    let inputs = corpus("frontmatter");
    assert!(
        inputs.len() >= 10,
        "the kept corpus of frontmatter is missing"
    );
    for input in inputs {
        frontmatter::check(&input);
    }
}

#[test]
fn memory_md_corpus_passes_its_fuzz_checks() {
    let inputs = corpus("memory_md");
    assert!(
        inputs.len() >= 10,
        "the kept corpus of memory_md is missing"
    );
    for input in inputs {
        memory_md::check(&input);
    }
}
