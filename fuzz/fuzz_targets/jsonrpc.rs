//! Fuzzes the sidecar's JSON-RPC input: arbitrary bytes fed to `pimem serve` in-process. It
//! must never panic or fail, and everything it writes must be JSON-RPC 2.0 lines.
//!
//! Methods that write to a memory directory (`tool/execute`, `command/run`, `agent/settled`)
//! are filtered out so a fuzzed `session/start` can never make the fuzzer write into a real
//! store; HOME and the agent dir point into a private temp dir anyway.
#![no_main]

use std::io::{Cursor, Write};
use std::sync::{Arc, Mutex};

#[path = "../checks/jsonrpc.rs"]
mod check;

static SANDBOX: std::sync::Once = std::sync::Once::new();

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    SANDBOX.call_once(|| {
        let dir = std::env::temp_dir().join(format!("pimem-fuzz-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("agent")).unwrap();
        // SAFETY: set once, before the first server thread starts.
        unsafe {
            std::env::set_var("HOME", &dir);
            std::env::set_var("PI_CODING_AGENT_DIR", dir.join("agent"));
        }
    });
    check::check_with(data, |input| {
        let sink = Sink::default();
        memory_pi::serve::serve(Cursor::new(input.to_vec()), Box::new(sink.clone()))
            .expect("serve never fails on its input");
        let out = sink.0.lock().unwrap().clone();
        out
    })
});

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
