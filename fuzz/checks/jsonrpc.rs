//! Fuzzes the sidecar's JSON-RPC input: arbitrary bytes fed to `pimem serve` in-process. It
//! must never panic or fail, and everything it writes must be JSON-RPC 2.0 lines.
//!
//! Methods that write to a memory directory (`tool/execute`, `command/run`, `agent/settled`)
//! are filtered out so a fuzzed `session/start` can never make the fuzzer write into a real
//! store (the fuzz target also points HOME and the agent dir into a private temp dir).

use std::io::{Cursor, Write};
use std::sync::{Arc, Mutex};

use serde_json::Value;

#[derive(Clone, Default)]
struct Sink(Arc<Mutex<Vec<u8>>>);

impl Write for Sink {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

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

/// The fuzz target's checks; also run over the kept corpus by the workspace tests.
pub fn check(data: &[u8]) {
    if writes(data) {
        return;
    }
    let sink = Sink::default();
    memory_pi::serve::serve(Cursor::new(data.to_vec()), Box::new(sink.clone()))
        .expect("serve never fails on its input");
    let out = sink.0.lock().unwrap().clone();
    assert!(out.is_empty() || out.ends_with(b"\n"), "unterminated output line");
    for line in out.split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
        let v: Value = serde_json::from_slice(line).expect("every output line is JSON");
        assert_eq!(v["jsonrpc"], "2.0", "{v}");
        assert!(v.get("id").is_some() || v.get("method").is_some(), "{v}");
    }
}

