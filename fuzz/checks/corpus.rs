//! Reading a kept fuzz corpus (`fuzz/regressions/<target>/`) from a workspace crate's tests.

/// Every file of `fuzz/regressions/<target>/`, sorted by name. `manifest_dir` is the calling
/// crate's `CARGO_MANIFEST_DIR` (every crate sits one level below the root).
pub fn corpus(manifest_dir: &str, target: &str) -> Vec<Vec<u8>> {
    let dir = std::path::Path::new(manifest_dir)
        .join("../fuzz/regressions")
        .join(target);
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    let inputs: Vec<Vec<u8>> = files
        .into_iter()
        .map(|p| std::fs::read(p).unwrap())
        .collect();
    assert!(inputs.len() >= 10, "the kept corpus of {target} is missing");
    inputs
}
