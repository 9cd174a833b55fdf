//! Query matching: a raw-byte prefilter that may over-approximate, and an exact Unicode
//! case-insensitive confirmation on decoded text.
//!
//! **Semantics.** A text matches when its per-character lowercase (`char::to_lowercase`,
//! no final-sigma context rule) contains the query's per-character lowercase.
//!
//! **Prefilter soundness.** The prefilter searches the raw JSON line for one *run* of the
//! lowered query, matching ASCII letters case-insensitively and every other byte exactly.
//! A run only contains characters `c` for which this is sound:
//! - `c` is written verbatim by pi's `JSON.stringify` (so not `"`, `\` or a control
//!   character, which are escaped);
//! - `c` lowercases to itself, and the only characters whose lowercase contains `c` are `c`
//!   and, for ASCII, its uppercase letter. This excludes `i` (`İ` lowercases to `i̇`), `k`
//!   (the Kelvin sign `K`), `é` (from `É`), `ß` (from `ẞ`) and every other lowercase letter with
//!   a non-ASCII uppercase; it keeps other ASCII, digits, punctuation and uncased scripts
//!   (CJK, …).
//!
//! If a decoded text matches, each character of the run comes from exactly one source
//! character that is the run character itself or its ASCII uppercase, the source characters
//! are adjacent, and JSON writes them unescaped: the raw line contains the run. Queries with
//! no such run (`"ü"`, `"ik"`) parse every line instead.

use std::sync::OnceLock;

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, AhoCorasickKind, MatchKind};
use memchr::memmem;

/// Per-character lowercase (no context rules), the folding used on both sides of a match.
pub(crate) fn fold(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        out.extend(c.to_lowercase());
    }
    out
}

/// Characters that some *other* character lowercases into (ignoring ASCII `A`→`a` pairs).
fn foreign_lowercase_images() -> &'static [char] {
    static TABLE: OnceLock<Vec<char>> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut v = Vec::new();
        for x in (0..=0x10_FFFFu32).filter_map(char::from_u32) {
            for c in x.to_lowercase() {
                if c != x && !(x.is_ascii_uppercase() && c == x.to_ascii_lowercase()) {
                    v.push(c);
                }
            }
        }
        v.sort_unstable();
        v.dedup();
        v
    })
}

/// Whether `c` (a character of the lowered query) may be part of the raw-byte prefilter.
pub(crate) fn prefilter_safe(c: char) -> bool {
    if c == '"' || c == '\\' || (c as u32) < 0x20 {
        return false;
    }
    let mut lower = c.to_lowercase();
    if lower.next() != Some(c) || lower.next().is_some() {
        return false;
    }
    foreign_lowercase_images().binary_search(&c).is_err()
}

/// The longest run of prefilter-safe characters of an already folded query.
pub(crate) fn best_run(folded: &str) -> &str {
    let mut best = (0, 0);
    let mut start = None;
    for (i, c) in folded.char_indices().chain([(folded.len(), '"')]) {
        let safe = i < folded.len() && prefilter_safe(c);
        match (safe, start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                if i - s > best.1 - best.0 {
                    best = (s, i);
                }
                start = None;
            }
            _ => {}
        }
    }
    &folded[best.0..best.1]
}

/// Raw-byte search for a candidate line.
#[derive(Debug, Clone)]
pub(crate) enum Prefilter {
    /// The run has no ASCII letter: exact substring search.
    Exact(Box<memmem::Finder<'static>>),
    /// ASCII-case-insensitive search (non-letters and non-ASCII bytes match exactly).
    AsciiCi(AhoCorasick),
}

impl Prefilter {
    fn new(run: &str) -> Option<Prefilter> {
        if run.is_empty() {
            return None;
        }
        if !run.bytes().any(|b| b.is_ascii_alphabetic()) {
            return Some(Prefilter::Exact(Box::new(
                memmem::Finder::new(run.as_bytes()).into_owned(),
            )));
        }
        AhoCorasickBuilder::new()
            .ascii_case_insensitive(true)
            .match_kind(MatchKind::LeftmostFirst)
            .kind(Some(AhoCorasickKind::DFA))
            .build([run])
            .ok()
            .map(Prefilter::AsciiCi)
    }

    /// Offset of the first candidate in `hay`.
    #[inline]
    pub(crate) fn find(&self, hay: &[u8]) -> Option<usize> {
        match self {
            Prefilter::Exact(f) => f.find(hay),
            Prefilter::AsciiCi(ac) => ac.find(hay).map(|m| m.start()),
        }
    }
}

/// A compiled query.
#[derive(Debug, Clone)]
pub(crate) struct Matcher {
    folded: String,
    prefilter: Option<Prefilter>,
}

/// One matching line (or lines, for a query spanning a newline) of a text, possibly cut.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Cut {
    pub(crate) text: String,
    pub(crate) char_offset: usize,
    pub(crate) line_chars: usize,
}

impl Matcher {
    /// Compiles `query` (must not be empty); `use_prefilter: false` forces full parsing.
    pub(crate) fn new(query: &str, use_prefilter: bool) -> Matcher {
        let folded = fold(query);
        let prefilter = if use_prefilter {
            Prefilter::new(best_run(&folded))
        } else {
            None
        };
        Matcher { folded, prefilter }
    }

    /// The raw-line prefilter, `None` when every line must be parsed.
    pub(crate) fn prefilter(&self) -> Option<&Prefilter> {
        self.prefilter.as_ref()
    }

    /// Calls `emit` for every distinct line of `text` holding a match, in text order, each
    /// cut to at most `max_chars` characters around the match. Stops when `emit` returns
    /// `false`; returns `false` in that case.
    pub(crate) fn for_each_segment(
        &self,
        text: &str,
        max_chars: usize,
        mut emit: impl FnMut(Cut) -> bool,
    ) -> bool {
        let lowered = fold(text);
        if !lowered.contains(&self.folded) {
            return true;
        }
        // Lowered byte index -> byte index of the source character in `text`.
        let mut origin = Vec::with_capacity(lowered.len());
        for (i, c) in text.char_indices() {
            let n: usize = c.to_lowercase().map(char::len_utf8).sum();
            origin.extend(std::iter::repeat_n(i, n));
        }
        let mut covered_until = 0;
        for (a, m) in lowered.match_indices(&self.folded) {
            let start = origin[a];
            let last_char = origin[a + m.len() - 1];
            let end = last_char + text[last_char..].chars().next().map_or(0, char::len_utf8);
            if start < covered_until {
                continue;
            }
            let line_start = text[..start].rfind('\n').map_or(0, |i| i + 1);
            let line_end = text[last_char..]
                .find('\n')
                .map_or(text.len(), |i| last_char + i);
            covered_until = line_end.max(end);
            let mut line = &text[line_start..line_end];
            if line_end > end {
                line = line.strip_suffix('\r').unwrap_or(line);
            }
            if !emit(cut_around(line, start - line_start, end - start, max_chars)) {
                return false;
            }
        }
        true
    }
}

/// Cuts `line` to `max_chars` characters, keeping the match at byte `m_start` (length
/// `m_len` bytes) as central as possible.
fn cut_around(line: &str, m_start: usize, m_len: usize, max_chars: usize) -> Cut {
    let line_chars = line.chars().count();
    if line_chars <= max_chars {
        return Cut {
            text: line.to_owned(),
            char_offset: 0,
            line_chars,
        };
    }
    let m_char = line[..m_start].chars().count();
    let m_chars = line[m_start..(m_start + m_len).min(line.len())]
        .chars()
        .count();
    let slack = max_chars.saturating_sub(m_chars) / 2;
    let first = m_char.saturating_sub(slack).min(line_chars - max_chars);
    let byte_at = |n: usize| line.char_indices().nth(n).map_or(line.len(), |(i, _)| i);
    let (from, to) = (byte_at(first), byte_at(first + max_chars));
    Cut {
        text: line[from..to].to_owned(),
        char_offset: first,
        line_chars,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn segments(query: &str, text: &str, max: usize) -> Vec<Cut> {
        let m = Matcher::new(query, true);
        let mut out = Vec::new();
        m.for_each_segment(text, max, |c| {
            out.push(c);
            true
        });
        out
    }

    #[test]
    fn unsafe_characters_are_the_expected_ones() {
        for c in ['i', 'k', 'é', 'ß', 'σ', '"', '\\', '\n', '\t'] {
            assert!(!prefilter_safe(c), "{c:?} must not be prefiltered");
        }
        for c in ['a', 'd', 'z', '0', ' ', '-', '死', '锁', '✓', '/', '\u{7f}'] {
            assert!(prefilter_safe(c), "{c:?} should be prefiltered");
        }
    }

    #[test]
    fn best_run_picks_longest_safe_stretch() {
        assert_eq!(best_run("deadlock"), "deadloc");
        assert_eq!(best_run("say \"hello world\""), "hello world");
        assert_eq!(best_run("修复死锁"), "修复死锁");
        assert_eq!(best_run("ik"), "");
        assert_eq!(best_run("über"), "ber");
    }

    #[test]
    fn prefilter_is_ascii_case_insensitive() {
        let m = Matcher::new("DeadLock", true);
        let pf = m.prefilter().unwrap();
        assert_eq!(pf.find(br#"{"text":"a DEADLOCK"}"#), Some(11));
        assert_eq!(pf.find(br#"{"text":"dead lock"}"#), None);
    }

    #[test]
    fn unicode_folding_confirms_what_bytes_cannot() {
        // Kelvin sign and dotted capital I fold into ASCII letters.
        assert_eq!(segments("k", "5 \u{212A}", 2000).len(), 1);
        assert_eq!(segments("i", "\u{130}stanbul", 2000).len(), 1);
        assert_eq!(
            segments("ÉTÉ", "un été chaud", 2000)[0].text,
            "un été chaud"
        );
    }

    #[test]
    fn one_segment_per_matching_line() {
        let text = "first deadlock line\r\nno\nDEADLOCK again, deadlock twice\nend";
        let got: Vec<_> = segments("deadlock", text, 2000)
            .into_iter()
            .map(|c| c.text)
            .collect();
        assert_eq!(
            got,
            ["first deadlock line", "DEADLOCK again, deadlock twice"]
        );
    }

    #[test]
    fn multi_line_query_spans_lines() {
        let got = segments("a\nb", "x\nza\nbz\ny", 2000);
        assert_eq!(got[0].text, "za\nbz");
    }

    // PS-V9: a 5 000-character segment is cut to 2 000 characters around the match.
    #[test]
    fn ps_v9_long_segment_is_cut_around_the_match() {
        let line = format!("{}needle{}", "a".repeat(3000), "b".repeat(1994));
        let cut = &segments("NEEDLE", &line, 2000)[0];
        assert_eq!(cut.line_chars, 5000);
        assert_eq!(cut.text.chars().count(), 2000);
        assert!(cut.text.contains("needle"));
        assert_eq!(cut.char_offset, 3000 - 997);
    }

    #[test]
    fn cut_at_line_end_keeps_window_inside() {
        let line = format!("{}needle", "é".repeat(4000));
        let cut = &segments("needle", &line, 100)[0];
        assert_eq!(cut.text.chars().count(), 100);
        assert!(cut.text.ends_with("needle"));
        assert_eq!(cut.char_offset + 100, cut.line_chars);
    }
}
