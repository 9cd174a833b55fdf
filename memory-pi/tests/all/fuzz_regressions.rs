//! The minimised corpus of the `jsonrpc` fuzz target, kept in `fuzz/regressions/jsonrpc/`,
//! replayed through the very checks the fuzzer runs (`fuzz/checks/jsonrpc.rs`). Each input
//! is fed to a `pimem serve` child process with a private HOME and agent dir, so a fuzzed
//! `session/start` never reaches the real `~/.pi`.
#![allow(clippy::unwrap_used)]

use std::io::Write;
use std::process::{Command, Stdio};

#[path = "../../../fuzz/checks/corpus.rs"]
mod corpus;
#[path = "../../../fuzz/checks/jsonrpc.rs"]
mod jsonrpc;

use corpus::corpus;

#[test]
fn jsonrpc_corpus_passes_its_fuzz_checks() {
    let home = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(home.path().join("agent")).unwrap();
    for (n, input) in corpus(env!("CARGO_MANIFEST_DIR"), "jsonrpc")
        .into_iter()
        .enumerate()
    {
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
            assert!(out.status.success(), "corpus input {n}: pimem serve failed");
            out.stdout
        });
    }
}
