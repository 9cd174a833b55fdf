//! The `Index:` and `Inject:` lines of `/memory` (PM-75, VECTORS J).

use crate::capacity::index_capacity;
use crate::index::parse_index;
use crate::window::injection_window;

/// `Index: L/<max> lines, B/<max> bytes, U unrecognized lines` for the raw index (`""` when
/// `MEMORY.md` is missing). L and B are the write-side [`crate::Capacity`] numbers.
pub fn index_status_line(raw: &str, max_lines: usize, max_bytes: usize) -> String {
    let cap = index_capacity(raw);
    let unrecognized = parse_index(raw).unrecognized;
    format!(
        "Index: {}/{max_lines} lines, {}/{max_bytes} bytes, {unrecognized} unrecognized lines",
        cap.lines, cap.bytes
    )
}

/// `Inject: l/<max> lines, b/<max> bytes` from the same computation as the injected value
/// ([`injection_window`]), so the numbers can never disagree with what is injected.
pub fn inject_status_line(raw: &str, max_lines: usize, max_bytes: usize) -> String {
    let window = injection_window(raw, max_lines, max_bytes);
    format!(
        "Inject: {}/{max_lines} lines, {}/{max_bytes} bytes",
        window.lines, window.bytes
    )
}
