//! The tokenizer: code-aware words, CJK bigrams, stopwords (see the crate docs, "Tokens").

use unicode_properties::{GeneralCategory, UnicodeGeneralCategory};

use crate::stem::{Stemmer, stem_in_place};
use crate::words::{
    CJK_PARTICLES, CJK_STOP_BIGRAMS, CJK_STOP_UNIGRAMS, is_generic_stem, is_short_number,
    is_stopword,
};

/// The tokens of `text` in order, as indexed and queried (see the module docs).
pub fn tokenize(text: &str) -> Vec<String> {
    tokenize_with(text, Stemmer::default())
}

/// [`tokenize`] with an explicit stemmer.
pub fn tokenize_with(text: &str, stemmer: Stemmer) -> Vec<String> {
    let mut out = Vec::new();
    for_each_token(text, false, stemmer, |t, _| out.push(t.to_owned()));
    out
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Word,
    /// An everyday word or a short number.
    Generic,
    CjkUnigram,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Class {
    /// A letter or digit outside the CJK scripts.
    Alnum,
    /// A Han or kana character.
    Cjk,
    /// `_`, `-`, `.`: joins two word runs into one compound.
    Connector,
    /// Anything else: ends the current run.
    Break,
}

fn classify(c: char) -> Option<Class> {
    if c.is_ascii() {
        // No ASCII character is a format character or CJK: skip the table lookups.
        return Some(if c.is_ascii_alphanumeric() {
            Class::Alnum
        } else if matches!(c, '_' | '-' | '.') {
            Class::Connector
        } else {
            Class::Break
        });
    }
    if c.general_category() == GeneralCategory::Format {
        return None; // ignored entirely
    }
    Some(if is_cjk(c) {
        Class::Cjk
    } else if c.is_alphanumeric() {
        Class::Alnum
    } else if matches!(c, '_' | '-' | '.') {
        Class::Connector
    } else {
        Class::Break
    })
}

/// Han (CJK ideographs, extensions, compatibility) and Japanese kana.
fn is_cjk(c: char) -> bool {
    matches!(c,
        '\u{3040}'..='\u{30FF}'   // hiragana, katakana
        | '\u{3400}'..='\u{4DBF}' // extension A
        | '\u{4E00}'..='\u{9FFF}' // unified ideographs
        | '\u{F900}'..='\u{FAFF}' // compatibility ideographs
        | '\u{20000}'..='\u{3134F}' // extensions B..G
    )
}

/// Calls `emit` for every token of `text`. Token kinds (query weights) are only worked out
/// when `query` is set; indexing treats every token alike.
pub(crate) fn for_each_token(
    text: &str,
    query: bool,
    stemmer: Stemmer,
    mut emit: impl FnMut(&str, Kind),
) {
    // The current compound (original case, format characters removed, connectors kept) or
    // CJK run.
    let mut word = String::new();
    let mut cjk: Vec<char> = Vec::new();
    let mut pending_connector: Option<char> = None;
    let mut scratch = String::new();
    for c in text.chars() {
        let Some(class) = classify(c) else { continue };
        match class {
            Class::Alnum => {
                flush_cjk(&mut cjk, &mut emit);
                // Set only after a non-empty word, and cleared with it.
                if let Some(conn) = pending_connector.take() {
                    word.push(conn);
                }
                word.push(c);
            }
            Class::Cjk => {
                flush_word(&mut word, &mut scratch, query, stemmer, &mut emit);
                pending_connector = None;
                cjk.push(c);
            }
            Class::Connector => {
                flush_cjk(&mut cjk, &mut emit);
                if pending_connector.is_some() {
                    // Two connectors in a row (`a--b`, `..`): not a compound.
                    flush_word(&mut word, &mut scratch, query, stemmer, &mut emit);
                    pending_connector = None;
                } else if !word.is_empty() {
                    pending_connector = Some(c);
                }
            }
            Class::Break => {
                flush_cjk(&mut cjk, &mut emit);
                flush_word(&mut word, &mut scratch, query, stemmer, &mut emit);
                pending_connector = None;
            }
        }
    }
    flush_cjk(&mut cjk, &mut emit);
    flush_word(&mut word, &mut scratch, query, stemmer, &mut emit);
}

fn flush_cjk(run: &mut Vec<char>, emit: &mut impl FnMut(&str, Kind)) {
    if run.is_empty() {
        return;
    }
    let mut buf = [0u8; 8];
    for (i, &c) in run.iter().enumerate() {
        let uni = c.encode_utf8(&mut buf);
        if !CJK_STOP_UNIGRAMS.contains(&c) {
            emit(uni, Kind::CjkUnigram);
        }
        if let Some(&next) = run.get(i + 1) {
            if CJK_PARTICLES.contains(&c) || CJK_PARTICLES.contains(&next) {
                continue;
            }
            let bigram: String = [c, next].iter().collect();
            if !CJK_STOP_BIGRAMS.contains(&bigram.as_str()) {
                emit(&bigram, Kind::Word);
            }
        }
    }
    run.clear();
}

/// Emits the parts of a compound, then the whole compound when it has several parts.
fn flush_word(
    word: &mut String,
    scratch: &mut String,
    query: bool,
    stemmer: Stemmer,
    emit: &mut impl FnMut(&str, Kind),
) {
    if word.is_empty() {
        return;
    }
    let mut parts = 0usize;
    for segment in word.split(['_', '-', '.']) {
        camel_parts(segment, |part| {
            parts += 1;
            lower_into(part, scratch);
            if is_stopword(scratch) || is_single_ascii_letter(scratch) {
                return;
            }
            stem_in_place(scratch, stemmer);
            let kind = if query && (is_generic_stem(scratch, stemmer) || is_short_number(scratch)) {
                Kind::Generic
            } else {
                Kind::Word
            };
            emit(scratch, kind);
        });
    }
    if parts > 1 {
        lower_into(word, scratch);
        stem_in_place(scratch, stemmer);
        emit(scratch, Kind::Word);
    }
    word.clear();
}

fn lower_into(s: &str, out: &mut String) {
    out.clear();
    if s.is_ascii() {
        out.push_str(s);
        out.make_ascii_lowercase();
    } else {
        for c in s.chars() {
            out.extend(c.to_lowercase());
        }
    }
}

pub(crate) fn is_single_ascii_letter(s: &str) -> bool {
    s.len() == 1 && s.as_bytes()[0].is_ascii_alphabetic()
}

/// Splits at lower→upper (`getUser`), at the last capital of a capital run followed by a
/// lowercase letter (`HTTPServer` → `HTTP`, `Server`) and at letter↔digit changes (`utf8`).
pub(crate) fn camel_parts<'s>(segment: &'s str, mut part: impl FnMut(&'s str)) {
    let mut start = 0usize;
    let mut chars = segment.char_indices().peekable();
    let mut prev: Option<char> = None;
    while let Some((pos, c)) = chars.next() {
        if let Some(prev) = prev {
            let next = chars.peek().map(|&(_, n)| n);
            // A single leading capital stays with the next part (`IPv4` → `IPv`, `4`).
            let boundary = (prev.is_lowercase() && c.is_uppercase())
                || (prev.is_uppercase()
                    && c.is_uppercase()
                    && next.is_some_and(char::is_lowercase)
                    && pos - start > prev.len_utf8())
                || (prev.is_alphabetic() && c.is_numeric())
                || (prev.is_numeric() && c.is_alphabetic());
            if boundary {
                part(&segment[start..pos]);
                start = pos;
            }
        }
        prev = Some(c);
    }
    part(&segment[start..]);
}
