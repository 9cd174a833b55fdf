//! Write-side capacity of `MEMORY.md` (PM-30).

use crate::entry::normalize_newlines;
use memory_js::js_trim;

/// Default `memIndexMaxLines`.
pub const DEFAULT_INDEX_MAX_LINES: usize = 200;
/// Default `memIndexMaxBytes`.
pub const DEFAULT_INDEX_MAX_BYTES: usize = 25_600;

/// Size of an index as the write side counts it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Capacity {
    /// Non-blank lines after newline normalisation.
    pub lines: usize,
    /// Raw UTF-8 bytes, every `\r` included.
    pub bytes: usize,
}

impl Capacity {
    /// True when both numbers are within their limits (exactly at the limit is fine).
    pub fn fits(self, max_lines: usize, max_bytes: usize) -> bool {
        self.lines <= max_lines && self.bytes <= max_bytes
    }
}

/// Measures `raw` (VECTORS H6: bytes counted raw, lines after normalisation).
pub fn index_capacity(raw: &str) -> Capacity {
    let normalized = normalize_newlines(raw);
    Capacity {
        lines: normalized
            .split('\n')
            .filter(|l| !js_trim(l).is_empty())
            .count(),
        bytes: raw.len(),
    }
}

/// The warning appended to a write's result when the index is over its limit (VECTORS H5).
///
/// The write itself never fails on capacity.
pub fn capacity_warning(cap: Capacity, max_lines: usize, max_bytes: usize) -> Option<String> {
    if cap.fits(max_lines, max_bytes) {
        return None;
    }
    Some(format!(
        "MEMORY.md is over its limit: {}/{max_lines} lines, {}/{max_bytes} bytes. The write \
         succeeded, but everything past the limit is dropped on the next load. Rewrite it now: \
         keep one line per entry, merge or drop stale entries, and move detail into entry bodies \
         rather than the index.",
        cap.lines, cap.bytes
    ))
}
