//! The startup timeline (issue 17, part 5): with `PIMEM_TRACE=<file>` set, the sidecar appends
//! one JSON line per step to `<file>` — `{"who":"sidecar","ev":"…","t":<ms since the epoch>}`
//! — next to the lines the extension writes (`extension/index.ts`, same variable), so
//! `cargo xtask bench pi` can put pi's, the extension's and the sidecar's moments on one
//! timeline. Unset (always, outside the benchmark), every call is one load of a `OnceLock`.
//!
//! Decision: an environment variable rather than a protocol field, so the extension's and the
//! sidecar's steps before the handshake (process start, first line read) are covered too, and
//! the protocol stays as it is. A failed write is ignored: the timeline is a measurement aid,
//! never a reason for a request to fail.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::sync::OnceLock;
use std::time::{SystemTime, UNIX_EPOCH};

use parking_lot::Mutex;

static SINK: OnceLock<Option<Mutex<File>>> = OnceLock::new();

/// Opens the trace file named by `PIMEM_TRACE`, if any. Called once at process start.
pub(super) fn init() {
    SINK.get_or_init(|| {
        #[allow(clippy::disallowed_methods)] // the sidecar's own option, read where it is used
        let path = std::env::var_os("PIMEM_TRACE").filter(|p| !p.is_empty())?;
        OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .ok()
            .map(Mutex::new)
    });
}

/// Records that `ev` (and `method`, if any) happened now.
pub(super) fn mark(ev: &str, method: &str) {
    let Some(Some(file)) = SINK.get() else {
        return;
    };
    let t = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs_f64() * 1000.0)
        .unwrap_or(0.0);
    let line = serde_json::json!({ "who": "sidecar", "ev": ev, "method": method, "t": t });
    // one write(2) per line on an O_APPEND file: lines of the two writers never interleave
    let _ = file.lock().write_all(format!("{line}\n").as_bytes());
}
