//! The minimised corpus of the `jsonrpc` fuzz target, kept in `fuzz/regressions/jsonrpc/`,
//! replayed through the very checks the fuzzer runs (`fuzz/checks/jsonrpc.rs`). Each input
//! is fed to a `pimem serve` child process with a private HOME and agent dir, so a fuzzed
//! `session/start` never reaches the real `~/.pi`.
#![allow(clippy::unwrap_used)]

use std::io::Write;
use std::process::{Command, Stdio};

#[path = "../../../fuzz/checks/jsonrpc.rs"]
mod jsonrpc;

#[test]
fn jsonrpc_corpus_passes_its_fuzz_checks() {
    let dir =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/regressions/jsonrpc");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    assert!(files.len() >= 10, "the kept corpus of jsonrpc is missing");
    let home = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(home.path().join("agent")).unwrap();
    for file in files {
        let input = std::fs::read(&file).unwrap();
        jsonrpc::check_with(&input, |data| {
            let mut child = Command::new(env!("CARGO_BIN_EXE_pimem"))
                .arg("serve")
                .env("HOME", home.path())
                .env("PI_CODING_AGENT_DIR", home.path().join("agent"))
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::null())
                .spawn()
                .unwrap();
            let mut stdin = child.stdin.take().unwrap();
            let data = data.to_vec();
            let writer = std::thread::spawn(move || {
                let _ = stdin.write_all(&data);
            });
            let out = child.wait_with_output().unwrap();
            writer.join().unwrap();
            assert!(
                out.status.success(),
                "{}: pimem serve failed",
                file.display()
            );
            out.stdout
        });
    }
}
