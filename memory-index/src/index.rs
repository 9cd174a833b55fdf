//! `MEMORY.md`: line format, parsing and surgical edits (PM-23..PM-29, PM-38).
//!
//! Every edit works on lines after newline normalisation and keeps all other lines (titles,
//! hand-written groups, comments, blank lines) byte-for-byte and in place. Output always uses
//! LF with a trailing newline, except [`remove_index_line`], which returns `None` when nothing
//! matched so the caller can leave the file untouched.

use std::cmp::Ordering;

use crate::entry::normalize_newlines;
use memory_js::{is_js_whitespace, js_trim};

/// Header written by [`rebuild_index`] when the index has none.
pub const DEFAULT_INDEX_HEADER: &str = "# Memory Index";

/// One recognised index line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexLine {
    /// Entry name (trimmed).
    pub name: String,
    /// Entry file name (trimmed).
    pub file: String,
    /// Description (trimmed, may be empty).
    pub description: String,
}

impl IndexLine {
    /// Convenience constructor.
    pub fn new(
        name: impl Into<String>,
        file: impl Into<String>,
        description: impl Into<String>,
    ) -> Self {
        IndexLine {
            name: name.into(),
            file: file.into(),
            description: description.into(),
        }
    }
}

/// A recognised line and its 0-based position among the normalised lines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexedLine {
    /// 0-based line number in [`split_lines`] of the normalised text.
    pub line_no: usize,
    /// The parsed line.
    pub line: IndexLine,
}

/// Result of [`parse_index`].
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ParsedIndex {
    /// Recognised entry lines, in file order.
    pub entries: Vec<IndexedLine>,
    /// Non-blank lines that are not entry lines (titles, groups, comments).
    pub unrecognized: usize,
}

/// `- [name](file) — description` (em dash U+2014, one space each side).
pub fn format_index_line(name: &str, file: &str, description: &str) -> String {
    format!("- [{name}]({file}) — {description}")
}

/// Parses one line with pi-memory's rule `^-\s+\[(.+?)\]\((.+?)\)\s*—\s*(.*)$` (PM-23).
///
/// Name and file are the *shortest* non-empty groups that let the rest match, so names with
/// `]`, files with `(`/`)` and descriptions with `) — ` round-trip; all three are trimmed.
/// A line with a leading BOM is not recognised (VECTORS G14, kept from the original).
///
// Decision (VECTORS §G15): U+2028/U+2029 inside the groups are ordinary characters (JavaScript's
// `.` refused them, leaving such lines unrecognised and duplicated on the next upsert). CR and
// LF are refused inside the groups like in JavaScript; callers pass normalised single lines.
pub fn parse_index_line(line: &str) -> Option<IndexLine> {
    let rest = line.strip_prefix('-')?;
    let after_space = rest.trim_start_matches(is_js_whitespace);
    if after_space.len() == rest.len() {
        return None;
    }
    let s = after_space.strip_prefix('[')?;
    let breaks = |t: &str| t.contains(['\n', '\r']);
    for (i, _) in s.match_indices("](") {
        let name = &s[..i];
        if breaks(name) {
            return None;
        }
        if name.is_empty() {
            continue;
        }
        let tail = &s[i + 2..];
        for (j, _) in tail.match_indices(')') {
            let file = &tail[..j];
            if breaks(file) {
                break;
            }
            if file.is_empty() {
                continue;
            }
            let after = tail[j + 1..].trim_start_matches(is_js_whitespace);
            let Some(description) = after.strip_prefix('—') else {
                continue;
            };
            let description = description.trim_start_matches(is_js_whitespace);
            if breaks(description) {
                continue;
            }
            return Some(IndexLine::new(
                js_trim(name),
                js_trim(file),
                js_trim(description),
            ));
        }
    }
    None
}

/// The index's lines after newline normalisation, without the empty element a final newline
/// would produce. `""` has no lines.
pub fn split_lines(text: &str) -> Vec<String> {
    split_normalized(&normalize_newlines(text))
        .into_iter()
        .map(str::to_owned)
        .collect()
}

fn split_normalized(text: &str) -> Vec<&str> {
    if text.is_empty() {
        return Vec::new();
    }
    let mut lines: Vec<&str> = text.split('\n').collect();
    if lines.last() == Some(&"") {
        lines.pop();
    }
    lines
}

fn parse_lines(lines: &[&str]) -> ParsedIndex {
    let mut parsed = ParsedIndex::default();
    for (line_no, line) in lines.iter().enumerate() {
        if js_trim(line).is_empty() {
            continue;
        }
        match parse_index_line(line) {
            Some(line) => parsed.entries.push(IndexedLine { line_no, line }),
            None => parsed.unrecognized += 1,
        }
    }
    parsed
}

fn join_lines(lines: &[&str]) -> String {
    if lines.is_empty() {
        return String::new();
    }
    let mut out = lines.join("\n");
    out.push('\n');
    out
}

/// Parses a whole index (CRLF and lone CR normalised first, so they never add to
/// `unrecognized`).
pub fn parse_index(text: &str) -> ParsedIndex {
    parse_lines(&split_normalized(&normalize_newlines(text)))
}

/// Adds or updates the line for `line.file` (PM-25).
///
/// An existing line for that file (the first, if several) is replaced in place; otherwise the
/// new line goes right after the last recognised line, or at the end when there is none.
pub fn upsert_index_line(text: &str, line: &IndexLine) -> String {
    let normalized = normalize_newlines(text);
    let formatted = format_index_line(&line.name, &line.file, &line.description);
    let mut lines = split_normalized(&normalized);
    let parsed = parse_lines(&lines);
    if let Some(existing) = parsed.entries.iter().find(|e| e.line.file == line.file) {
        lines[existing.line_no] = &formatted;
    } else if let Some(last) = parsed.entries.last() {
        lines.insert(last.line_no + 1, &formatted);
    } else {
        lines.push(&formatted);
    }
    join_lines(&lines)
}

/// Rewrites the line of `old_file` as `line`, keeping its position (rename, PM-38).
///
/// When the file changes, a stale line already pointing at `line.file` is dropped first (it
/// would otherwise coexist with the renamed one). When no line for `old_file` exists the
/// result is an ordinary [`upsert_index_line`].
pub fn replace_index_line(text: &str, old_file: &str, line: &IndexLine) -> String {
    let cleaned = if line.file == old_file {
        None
    } else {
        remove_index_line(text, &line.file)
    };
    let cleaned = cleaned.as_deref().unwrap_or(text);
    let normalized = normalize_newlines(cleaned);
    let mut lines = split_normalized(&normalized);
    let parsed = parse_lines(&lines);
    match parsed.entries.iter().find(|e| e.line.file == old_file) {
        Some(old) => {
            let formatted = format_index_line(&line.name, &line.file, &line.description);
            lines[old.line_no] = &formatted;
            join_lines(&lines)
        }
        None => upsert_index_line(cleaned, line),
    }
}

/// Deletes the (first) line for `file` (PM-26).
///
/// `None` when no line matched: the caller must then leave the file byte-identical (no newline
/// or CRLF rewrite).
pub fn remove_index_line(text: &str, file: &str) -> Option<String> {
    let normalized = normalize_newlines(text);
    let mut lines = split_normalized(&normalized);
    let target = parse_lines(&lines)
        .entries
        .into_iter()
        .find(|e| e.line.file == file)?;
    lines.remove(target.line_no);
    Some(join_lines(&lines))
}

/// One parseable entry file, as [`rebuild_index`] needs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RebuildEntry {
    /// Entry name.
    pub name: String,
    /// Entry file name.
    pub file: String,
    /// Description.
    pub description: String,
    /// `modified` timestamp (sort key).
    pub modified: String,
}

/// Result of [`rebuild_index`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rebuilt {
    /// The new `MEMORY.md` text (LF, trailing newline).
    pub text: String,
    /// Number of entry lines written.
    pub entries: usize,
    /// Number of header lines kept or written.
    pub header_lines: usize,
}

/// Listing order of entries (`list`, `rebuild_index`): `modified` ascending, then file name
/// by `localeCompare` ([`memory_js::locale_compare`]: `_x.md` < `a.md` < `B.md` < `c.md`),
/// as pi-memory sorts them.
///
// Decision: `modified` values are compared byte-wise. pi-memory compares them with
// `localeCompare` too; for the ISO-8601 strings the store writes (one format, same length)
// both orders agree, and byte order keeps the common case cheap.
pub fn compare_modified_then_file(
    a_modified: &str,
    a_file: &str,
    b_modified: &str,
    b_file: &str,
) -> Ordering {
    a_modified
        .cmp(b_modified)
        .then_with(|| memory_js::locale_compare(a_file, b_file))
}

/// Rebuilds the index from the parseable entry files (PM-29).
///
/// Keeps the lines above the first recognised line (minus trailing blank lines) as header, or
/// writes `# Memory Index` + a blank line when there is none; then one line per entry ordered
/// by (`modified`, file). Dangling lines and unrecognised lines below the first entry go.
///
// Decision (VECTORS §Z3): byte-for-byte like pi-memory, so rebuilding is not idempotent on a
// fresh index: the default header ends with a blank line, which the next rebuild (dropping
// trailing blank header lines) removes. `# Memory Index\n\n- …` becomes `# Memory Index\n- …`
// and is stable from then on.
pub fn rebuild_index(existing: &str, entries: &[RebuildEntry]) -> Rebuilt {
    let normalized = normalize_newlines(existing);
    let lines = split_normalized(&normalized);
    let parsed = parse_lines(&lines);
    let header_end = parsed.entries.first().map_or(lines.len(), |e| e.line_no);
    let mut header: Vec<&str> = lines[..header_end].to_vec();
    while header.last().is_some_and(|l| js_trim(l).is_empty()) {
        header.pop();
    }
    if header.is_empty() {
        header = vec![DEFAULT_INDEX_HEADER, ""];
    }

    let mut sorted: Vec<&RebuildEntry> = entries.iter().collect();
    sorted.sort_by(|a, b| compare_modified_then_file(&a.modified, &a.file, &b.modified, &b.file));
    let formatted: Vec<String> = sorted
        .iter()
        .map(|e| format_index_line(&e.name, &e.file, &e.description))
        .collect();

    let header_lines = header.len();
    let mut all = header;
    all.extend(formatted.iter().map(String::as_str));
    Rebuilt {
        text: join_lines(&all),
        entries: formatted.len(),
        header_lines,
    }
}
