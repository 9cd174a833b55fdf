//! The injection window of `MEMORY.md` (PM-58, VECTORS I and J).

use crate::entry::normalize_newlines;
use memory_js::{js_trim, utf8_prefix};

/// First line of a truncated window: the *oldest* lines were dropped.
pub const INDEX_TRUNCATION_MARKER: &str =
    "[truncated: memory index exceeds injection limit; older entries omitted]";

/// Default `memIndexInjectMaxLines`.
pub const DEFAULT_INJECT_MAX_LINES: usize = 50;
/// Default `memIndexInjectMaxBytes`.
pub const DEFAULT_INJECT_MAX_BYTES: usize = 16_384;

/// The part of the index that is injected, with the numbers `/memory` reports as `Inject:`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Window {
    /// The section value before sanitising.
    pub text: String,
    /// Index lines in the window (the marker not counted).
    pub lines: usize,
    /// Window bytes: lines, join newlines and one trailing LF (marker not counted); 0 if empty.
    pub bytes: usize,
    /// Whether anything was dropped or cut (then `text` starts with the marker).
    pub truncated: bool,
}

/// Computes the injection window (PM-58).
///
/// Trailing blank lines are ignored; the newest lines are kept while both budgets allow (join
/// newlines counted), in file order. If anything was dropped the text is the marker line
/// followed by the window lines. Otherwise the raw index is returned byte-identical, except
/// that CRLF/CR input comes back as LF. A newest line that alone exceeds `max_bytes` is cut to
/// a byte prefix on a character boundary. Either budget 0 gives an empty value and no marker.
pub fn injection_window(raw: &str, max_lines: usize, max_bytes: usize) -> Window {
    if max_lines == 0 || max_bytes == 0 {
        return Window {
            text: String::new(),
            lines: 0,
            bytes: 0,
            truncated: false,
        };
    }
    let normalized = normalize_newlines(raw);
    let mut lines: Vec<&str> = if normalized.is_empty() {
        Vec::new()
    } else {
        normalized.split('\n').collect()
    };
    while lines.last().is_some_and(|l| js_trim(l).is_empty()) {
        lines.pop();
    }

    let mut kept: Vec<&str> = Vec::new();
    let mut byte_len = 0usize;
    for line in lines.iter().rev() {
        let cost = if kept.is_empty() {
            line.len()
        } else {
            line.len() + 1
        };
        if kept.len() >= max_lines || byte_len + cost > max_bytes {
            break;
        }
        kept.push(line);
        byte_len += cost;
    }
    kept.reverse();
    let mut degenerated = false;
    if kept.is_empty()
        && let Some(newest) = lines.last()
    {
        let prefix = utf8_prefix(newest, max_bytes);
        kept.push(prefix);
        byte_len = prefix.len();
        degenerated = true;
    }
    let truncated = degenerated || kept.len() < lines.len();

    let joined = || {
        let mut s = kept.join("\n");
        if !kept.is_empty() {
            s.push('\n');
        }
        s
    };
    let text = if truncated {
        format!("{INDEX_TRUNCATION_MARKER}\n{}", joined())
    } else if raw.contains('\r') {
        joined()
    } else {
        raw.to_owned()
    };
    Window {
        text,
        lines: kept.len(),
        bytes: if kept.is_empty() { 0 } else { byte_len + 1 },
        truncated,
    }
}
