//! Query matching: a raw-byte prefilter that may over-approximate, and an exact Unicode
//! case-insensitive confirmation on decoded text.
//!
//! **Semantics.** A text matches when its per-character lowercase (`char::to_lowercase`,
//! no final-sigma context rule) contains the query's per-character lowercase `q`.
//!
//! **Prefilter.** For each character `q[p]` we list its *raw spellings*: how every source
//! character that folds to it appears in a line written by pi's `JSON.stringify`:
//! - the source characters themselves, UTF-8 encoded (`é` → `é`, `É`; `k` → `k`, `K`, the
//!   Kelvin sign `K`; `死` → `死`), ASCII letters being matched case-insensitively;
//! - the JSON escape for `"`, `\` and control characters (`\"`, `\\`, `\n`, `\u0001`),
//!   the only characters `JSON.stringify` escapes;
//! - for the one multi-character fold (`İ` → `i` + U+0307), `İ` counts as a source of `i`
//!   only where the query's next characters allow it, and U+0307 (second half of that fold)
//!   has no raw spelling.
//!
//! The prefilter searches for the concatenated spellings of the longest window of `q`
//! whose spelling combinations number at most [`MAX_PATTERNS`]; a window never crosses a
//! character without spellings. **Soundness:** if a decoded text matches, each window
//! character comes from one source character (adjacent in the text, so adjacent in the raw
//! line), written as one of its spellings, so the raw line contains one pattern. Only a
//! query made solely of characters without spellings parses every line.

use std::collections::HashMap;
use std::sync::OnceLock;

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, MatchKind};
use memchr::memmem;

/// Upper bound on the number of literal patterns handed to the prefilter.
pub(crate) const MAX_PATTERNS: usize = 64;

/// Per-character lowercase (no context rules), the folding used on both sides of a match.
pub(crate) fn fold(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        out.extend(c.to_lowercase());
    }
    out
}

/// Which characters fold into a given folded character.
#[derive(Debug, Default)]
struct Sources {
    /// `x` with `to_lowercase(x) == [c]`.
    single: Vec<char>,
    /// `x` with `to_lowercase(x) == [c, rest…]`.
    multi: Vec<(char, Vec<char>)>,
    /// `c` appears after the first position of some multi-character fold.
    non_first: bool,
}

/// Inverse of `char::to_lowercase` for every character with a non-trivial inverse (some
/// other character folds into it, or it is part of a multi-character fold).
fn inverse_fold() -> &'static HashMap<char, Sources> {
    static TABLE: OnceLock<HashMap<char, Sources>> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut t: HashMap<char, Sources> = HashMap::new();
        for x in (0..=0x10_FFFFu32).filter_map(char::from_u32) {
            let mut img = x.to_lowercase();
            let (Some(first), rest) = (img.next(), img.collect::<Vec<char>>()) else {
                continue;
            };
            if rest.is_empty() {
                if first != x {
                    t.entry(first).or_default().single.push(x);
                }
            } else {
                for &c in &rest {
                    t.entry(c).or_default().non_first = true;
                }
                t.entry(first).or_default().multi.push((x, rest));
            }
        }
        for (c, s) in &mut t {
            if is_fixed_point(*c) {
                s.single.push(*c);
            }
        }
        t
    })
}

fn is_fixed_point(c: char) -> bool {
    let mut l = c.to_lowercase();
    l.next() == Some(c) && l.next().is_none()
}

/// How `JSON.stringify` writes `c`, when it escapes it.
fn json_escape(c: char) -> Option<String> {
    Some(match c {
        '"' => "\\\"".to_owned(),
        '\\' => "\\\\".to_owned(),
        '\n' => "\\n".to_owned(),
        '\r' => "\\r".to_owned(),
        '\t' => "\\t".to_owned(),
        '\u{8}' => "\\b".to_owned(),
        '\u{c}' => "\\f".to_owned(),
        c if (c as u32) < 0x20 => format!("\\u{:04x}", c as u32),
        _ => return None,
    })
}

/// Raw spellings of `q[p]` (ASCII-lowercased, sorted, deduplicated; ASCII letters are
/// matched case-insensitively), or `None` when the character cannot be prefiltered.
pub(crate) fn raw_spellings(q: &[char], p: usize) -> Option<Vec<String>> {
    let c = q[p];
    if let Some(e) = json_escape(c) {
        return Some(vec![e]);
    }
    let mut v: Vec<String> = match inverse_fold().get(&c) {
        None if is_fixed_point(c) => vec![c.to_string()],
        None => return None,
        Some(s) if s.non_first => return None,
        Some(s) => {
            let tail = &q[p + 1..];
            let mut v: Vec<String> = s.single.iter().map(char::to_string).collect();
            for (x, rest) in &s.multi {
                // `x` can produce q[p] only if the query continues with the rest of its fold
                // (or ends inside it).
                if tail.iter().zip(rest).all(|(a, b)| a == b) {
                    v.push(x.to_string());
                }
            }
            v
        }
    };
    if v.is_empty() {
        return None;
    }
    for s in &mut v {
        s.make_ascii_lowercase();
    }
    v.sort();
    v.dedup();
    Some(v)
}

/// The literal patterns of the best prefilter window of the folded query `q`: the window
/// maximising the guaranteed byte length with at most [`MAX_PATTERNS`] combinations.
/// Empty when no character has raw spellings.
pub(crate) fn prefilter_patterns(q: &str) -> Vec<String> {
    let chars: Vec<char> = q.chars().collect();
    let spellings: Vec<Option<Vec<String>>> =
        (0..chars.len()).map(|p| raw_spellings(&chars, p)).collect();
    let min_len = |v: &Vec<String>| v.iter().map(String::len).min().unwrap_or(0);
    let mut best: Option<(usize, usize, usize)> = None; // (score, from, to)
    let mut from = 0;
    let mut combos = 1usize;
    let mut score = 0usize;
    for to in 0..chars.len() {
        let Some(v) = &spellings[to] else {
            (from, combos, score) = (to + 1, 1, 0);
            continue;
        };
        combos = combos.saturating_mul(v.len());
        score += min_len(v);
        while combos > MAX_PATTERNS && from <= to {
            if let Some(w) = &spellings[from] {
                combos /= w.len();
                score -= min_len(w);
            }
            from += 1;
        }
        if from <= to && best.is_none_or(|(s, _, _)| score > s) {
            best = Some((score, from, to + 1));
        }
    }
    let Some((_, from, to)) = best else {
        return Vec::new();
    };
    let mut patterns = vec![String::new()];
    for v in spellings[from..to].iter().flatten() {
        patterns = patterns
            .iter()
            .flat_map(|p| v.iter().map(move |s| format!("{p}{s}")))
            .collect();
    }
    patterns
}

/// Raw-byte search for a candidate line.
#[derive(Debug, Clone)]
pub(crate) enum Prefilter {
    /// One pattern without ASCII letters: exact substring search.
    Exact(Box<memmem::Finder<'static>>),
    /// Several patterns, or ASCII letters (matched case-insensitively).
    Patterns(AhoCorasick),
}

impl Prefilter {
    fn new(patterns: &[String]) -> Option<Prefilter> {
        match patterns {
            [] => None,
            [one] if !one.bytes().any(|b| b.is_ascii_alphabetic()) => Some(Prefilter::Exact(
                Box::new(memmem::Finder::new(one.as_bytes()).into_owned()),
            )),
            // Case-insensitive matching disables aho-corasick's SIMD (Teddy) prefilter, so
            // turn it on only when some pattern has an ASCII letter.
            _ => AhoCorasickBuilder::new()
                .ascii_case_insensitive(
                    patterns
                        .iter()
                        .any(|p| p.bytes().any(|b| b.is_ascii_alphabetic())),
                )
                .match_kind(MatchKind::LeftmostFirst)
                .build(patterns)
                .ok()
                .map(Prefilter::Patterns),
        }
    }

    /// Offset of the first candidate in `hay`.
    #[inline]
    pub(crate) fn find(&self, hay: &[u8]) -> Option<usize> {
        match self {
            Prefilter::Exact(f) => f.find(hay),
            Prefilter::Patterns(ac) => ac.find(hay).map(|m| m.start()),
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
            Prefilter::new(&prefilter_patterns(&folded))
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

    fn spell(q: &str, p: usize) -> Option<Vec<String>> {
        let chars: Vec<char> = q.chars().collect();
        raw_spellings(&chars, p)
    }

    #[test]
    fn raw_spellings_cover_every_source_character() {
        let v = |a: &[&str]| Some(a.iter().map(|s| s.to_string()).collect::<Vec<_>>());
        assert_eq!(spell("a", 0), v(&["a"]));
        assert_eq!(spell("k", 0), v(&["k", "\u{212A}"]));
        assert_eq!(
            spell("é", 0),
            v(&["é", "É"]).map(|mut x| {
                x.sort();
                x
            })
        );
        assert_eq!(spell("死", 0), v(&["死"]));
        assert_eq!(spell("\"", 0), v(&["\\\""]));
        assert_eq!(spell("\\", 0), v(&["\\\\"]));
        assert_eq!(spell("\n", 0), v(&["\\n"]));
        assert_eq!(spell("\u{1}", 0), v(&["\\u0001"]));
        assert_eq!(spell("\u{1f}", 0), v(&["\\u001f"]));
        // `İ` folds to "i\u{307}": a source of `i` only when the query allows the dot.
        assert_eq!(spell("is", 0), v(&["i"]));
        assert_eq!(spell("i", 0), v(&["i", "İ"]));
        assert_eq!(spell("i\u{307}", 0), v(&["i", "İ"]));
        assert_eq!(spell("i\u{307}", 1), None);
        // Final sigma has no uppercase of its own; sigma has two.
        assert_eq!(spell("ς", 0), v(&["ς"]));
        assert_eq!(spell("σ", 0).map(|x| x.len()), Some(2));
    }

    #[test]
    fn json_escapes_match_serde_json_which_matches_json_stringify() {
        for c in (0u32..0x20).filter_map(char::from_u32).chain(['"', '\\']) {
            let written = serde_json::to_string(&c.to_string()).unwrap();
            assert_eq!(
                json_escape(c).as_deref(),
                Some(&written[1..written.len() - 1]),
                "{c:?}"
            );
        }
        assert_eq!(json_escape('/'), None);
        assert_eq!(json_escape('\u{7f}'), None);
        assert_eq!(json_escape('\u{2028}'), None);
    }

    #[test]
    fn prefilter_window_choice() {
        assert_eq!(
            prefilter_patterns("deadlock"),
            ["deadlock", "deadloc\u{212A}"]
        );
        assert_eq!(
            prefilter_patterns("lock file"),
            ["lock file", "loc\u{212A} file"]
        );
        assert_eq!(prefilter_patterns("say \"hi\""), ["say \\\"hi\\\""]);
        assert_eq!(prefilter_patterns("修复死锁"), ["修复死锁"]);
        assert_eq!(prefilter_patterns("ük").len(), 4);
        // Six Cyrillic letters with two cases each: exactly 64 combinations.
        assert_eq!(prefilter_patterns("ошибка").len(), 64);
        // Seven: the window drops one letter.
        assert_eq!(prefilter_patterns("ошибкаx").len(), 64);
        assert!(prefilter_patterns("\u{307}").is_empty());
        assert_eq!(prefilter_patterns("ab\u{307}cde"), ["cde"]);
    }

    #[test]
    fn prefilter_is_ascii_case_insensitive() {
        let m = Matcher::new("DeadLock", true);
        let pf = m.prefilter().unwrap();
        assert_eq!(pf.find(br#"{"text":"a DEADLOCK"}"#), Some(11));
        assert_eq!(pf.find(br#"{"text":"dead lock"}"#), None);
        let m = Matcher::new("5 K", true);
        let pf = m.prefilter().unwrap();
        assert_eq!(pf.find("{\"text\":\"5 \u{212A}\"}".as_bytes()), Some(9));
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
