//! Fuzzes the sidecar's JSON-RPC input: arbitrary bytes fed to `pimem serve` in-process. It
//! must never panic or fail, and everything it writes must be JSON-RPC 2.0 lines.
//!
//! Methods that write to a memory directory (`tool/execute`, `command/run`, `agent/settled`)
//! are filtered out so a fuzzed `session/start` can never make the fuzzer write into a real
//! store (the fuzz target also points HOME and the agent dir into a private temp dir).

use serde_json::Value;

const WRITERS: &[&str] = &["tool/execute", "command/run", "agent/settled"];

fn writes(data: &[u8]) -> bool {
    data.split(|b| *b == b'\n').any(|line| {
        serde_json::from_slice::<Value>(line).is_ok_and(|v| {
            v.get("method")
                .and_then(Value::as_str)
                .is_some_and(|m| WRITERS.contains(&m))
        })
    })
}

/// The fuzz target's checks, with `serve` running the sidecar over the input and returning
/// what it wrote: in-process in the fuzzer, as a `pimem serve` child process (with a private
/// HOME) in the workspace regression test.
pub fn check_with(data: &[u8], serve: impl FnOnce(&[u8]) -> Vec<u8>) {
    if writes(data) {
        return;
    }
    let out = serve(data);
    assert!(
        out.is_empty() || out.ends_with(b"\n"),
        "unterminated output line"
    );
    for line in out.split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
        let v: Value = serde_json::from_slice(line).expect("every output line is JSON");
        assert_eq!(v["jsonrpc"], "2.0", "{v}");
        assert!(v.get("id").is_some() || v.get("method").is_some(), "{v}");
    }
}
