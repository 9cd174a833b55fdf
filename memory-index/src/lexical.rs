//! Lexical relevance: a BM25F ranker over memory entries, for auto-surfacing without a model.
//!
//! [`LexicalIndex`] holds one document per entry file with three fields — name, description,
//! body — and ranks them against a user prompt with BM25F (Robertson & Zaragoza's
//! per-field-normalised variant): for each query term the field term frequencies are
//! length-normalised per field, weighted ([`NAME_WEIGHT`] > [`DESCRIPTION_WEIGHT`] >
//! [`BODY_WEIGHT`]) and summed into one pseudo-frequency `tf`, which is then saturated once
//! (`tf / (K1 + tf)`) and multiplied by the term's IDF. Weighting before saturation (rather
//! than summing three BM25 scores) keeps a term repeated in every field from counting three
//! times. Everything is deterministic: no randomness, no hash-order dependence, ties broken by
//! `modified` descending then file name ascending.
//!
//! # Scores and the cutoff
//!
//! Scores are *normalised*: the raw BM25F score divided by the IDF a term would have if it
//! occurred in exactly one document. A score of `1.0` therefore means "about one rare term,
//! matched strongly" whatever the size of the store, which lets one [`Cutoff`] separate
//! related from unrelated prompts both for a store of 3 entries and one of 10 000. IDF uses a
//! document count of at least [`MIN_DOCS`]: with only a handful of entries every shared term
//! would otherwise look equally uninformative (`ln(1 + 0.5/1.5)` for a one-entry store), and
//! the first memories a user writes must surface too.
//!
//! [`Cutoff::SELECT`] (what [`LexicalIndex::rank`] uses) asks [`MIN_SCORE`] of a document
//! that shares two or more distinct full-weight terms with the query, and the higher
//! [`MIN_SCORE_SINGLE_TERM`] of one that shares a single term: one common word found in an
//! entry's name ("suggest a *name* for my cat" → *Branch naming*) is the typical false
//! positive. Everyday prompt words ("write", "explain", "time", …) and one- or two-digit
//! numbers count [`GENERIC_WEIGHT`] and never as a full-weight term: a small store cannot
//! learn from its own statistics that they say little. On the retrieval evaluation this keeps
//! 94 % of unrelated prompts silent at a recall@3 of 0.75; [`Cutoff::ANY`] ranks the same
//! documents without a cutoff (recall@3 0.89), for a model to choose from.
//!
//! # Tokens
//!
//! [`tokenize`] is built for the text of coding-agent memories and prompts:
//! - Unicode lowercase; format characters (zero-width space, soft hyphen, bidi marks, …) are
//!   ignored so `pass\u{200B}word` reads as `password`;
//! - words are runs of letters and digits; a run joined by `_`, `-` or `.`
//!   (`snake_case`, `kebab-case`, `Cargo.toml`) and camelCase / PascalCase / letter–digit
//!   boundaries (`getUserById`, `HTTPServer`, `utf8`) are split into parts, and the whole
//!   compound is kept as one more token, so both `user id` and `user_id` find `user_id`;
//! - a light English stemmer on ASCII words (plural `-s`/`-es`/`-ies`, `-ing`, `-ed`, a final
//!   `-e`, doubled final consonants), which on the retrieval evaluation in memory-agent lifts
//!   recall@3 (see BENCHMARKS.md, "Retrieval quality");
//! - Han and kana runs (Chinese and Japanese write no spaces) become character bigrams plus
//!   unigrams; unigrams count [`CJK_UNIGRAM_WEIGHT`] in a query, so bigrams (most Chinese
//!   words are two characters) dominate;
//! - small English and Chinese stopword lists, and single ASCII letters, are dropped. A query
//!   with no token left selects nothing.
//!
//! Queries are cut to [`QUERY_MAX_CHARS`] UTF-16 units first, like the
//! side-query prompt.

use std::cmp::Ordering;
use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::OnceLock;

use unicode_properties::{GeneralCategory, UnicodeGeneralCategory};

use crate::surfacing::QUERY_MAX_CHARS;
use memory_js::utf16_prefix;

/// BM25 term-frequency saturation.
pub const K1: f64 = 1.2;
/// BM25 length normalisation (the same for every field).
pub const B: f64 = 0.75;
/// Weight of a term occurrence in the entry name.
pub const NAME_WEIGHT: f64 = 3.0;
/// Weight of a term occurrence in the description.
pub const DESCRIPTION_WEIGHT: f64 = 2.0;
/// Weight of a term occurrence in the body.
pub const BODY_WEIGHT: f64 = 1.0;
/// Query weight of a single Han/kana character (bigrams weigh 1).
pub const CJK_UNIGRAM_WEIGHT: f64 = 0.5;
/// Query weight of an everyday word (see `GENERIC` in the source) and of a number of one or
/// two digits.
pub const GENERIC_WEIGHT: f64 = 0.35;
/// The document count IDF assumes at least (see the module docs).
pub const MIN_DOCS: usize = 20;
/// The normalised score a document matching two or more query terms needs to be selected by
/// [`LexicalIndex::rank`].
pub const MIN_SCORE: f64 = 0.4;
/// The normalised score a document matching one query term needs.
pub const MIN_SCORE_SINGLE_TERM: f64 = 0.8;

const FIELDS: usize = 3;
const WEIGHTS: [f64; FIELDS] = [NAME_WEIGHT, DESCRIPTION_WEIGHT, BODY_WEIGHT];

/// One entry to index. `modified` only breaks ties (ISO-8601 strings compare as text).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LexicalDoc<'a> {
    /// Entry file name: the document's identity.
    pub file: &'a str,
    /// Entry name.
    pub name: &'a str,
    /// Entry description.
    pub description: &'a str,
    /// Entry body.
    pub body: &'a str,
    /// `modified` timestamp.
    pub modified: &'a str,
}

/// One ranked document.
#[derive(Debug, Clone, PartialEq)]
pub struct LexicalHit {
    /// Entry file name.
    pub file: String,
    /// Normalised BM25F score (see the module docs).
    pub score: f64,
    /// Distinct full-weight query terms the document contains (everyday words, short numbers
    /// and single CJK characters not counted).
    pub terms: u32,
}

/// Which documents [`LexicalIndex::rank_with`] may return.
///
/// One query word found in an entry's name is the commonest false positive ("suggest a name
/// for my cat" → *Branch naming*), while two distinct query words are good evidence, so a
/// document matching a single full-weight term needs a higher score.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Cutoff {
    /// Minimum score of a document matching at least two distinct full-weight query terms.
    pub min_score: f64,
    /// Minimum score of a document matching fewer.
    pub min_score_single_term: f64,
}

impl Cutoff {
    /// The selection rule of the lexical selector (tuned on the retrieval evaluation in
    /// memory-agent; see BENCHMARKS.md, "Retrieval quality").
    pub const SELECT: Cutoff = Cutoff {
        min_score: MIN_SCORE,
        min_score_single_term: MIN_SCORE_SINGLE_TERM,
    };
    /// Every document sharing at least one token with the query.
    pub const ANY: Cutoff = Cutoff {
        min_score: 0.0,
        min_score_single_term: 0.0,
    };

    /// Whether a document with this score and this many matched full-weight terms passes.
    pub fn passes(self, score: f64, terms: u32) -> bool {
        score
            >= if terms >= 2 {
                self.min_score
            } else {
                self.min_score_single_term
            }
    }
}

#[derive(Debug, Clone, Copy)]
struct Posting {
    doc: u32,
    tf: [u32; FIELDS],
}

#[derive(Debug, Clone)]
struct Doc {
    file: String,
    modified: String,
    lens: [u32; FIELDS],
    /// The distinct term ids of the document, for removal.
    terms: Vec<u32>,
}

/// FxHash (rustc's hasher): a multiply-rotate hash, several times faster than SipHash on the
/// short keys of an index. Keys are terms of the user's own memories and prompts, so hash
/// flooding is not a concern.
#[derive(Debug, Clone, Copy, Default)]
struct FxHasher(u64);

impl FxHasher {
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(0x517c_c1b7_2722_0a95);
    }
}

impl Hasher for FxHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            let mut word = [0u8; 8];
            word.copy_from_slice(chunk);
            self.add(u64::from_le_bytes(word));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut word = [0u8; 8];
            word[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(word));
        }
    }

    fn write_u8(&mut self, i: u8) {
        self.add(u64::from(i));
    }

    fn write_u32(&mut self, i: u32) {
        self.add(u64::from(i));
    }

    fn write_u64(&mut self, i: u64) {
        self.add(i);
    }

    fn write_usize(&mut self, i: usize) {
        self.add(i as u64);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

type FxMap<K, V> = HashMap<K, V, BuildHasherDefault<FxHasher>>;

/// An in-memory BM25F index over entries; see the module docs.
///
/// Documents can be inserted and removed one at a time, so a caller can keep the index in
/// step with a changing directory without rebuilding it; the ranking only depends on the set
/// of documents, never on the order of insertions.
///
/// Terms are interned: the dictionary maps each term ever indexed to an id, and the postings
/// of a term are a vector indexed by that id (a term whose documents were all removed keeps
/// its id with an empty list).
#[derive(Debug, Clone, Default)]
pub struct LexicalIndex {
    docs: Vec<Option<Doc>>,
    free: Vec<u32>,
    by_file: FxMap<String, u32>,
    dict: FxMap<Box<str>, u32>,
    postings: Vec<Vec<Posting>>,
    len_sums: [u64; FIELDS],
}

impl LexicalIndex {
    /// An empty index.
    pub fn new() -> Self {
        LexicalIndex::default()
    }

    /// An index over `docs` (a later document with the same file replaces an earlier one).
    pub fn build<'a>(docs: impl IntoIterator<Item = LexicalDoc<'a>>) -> Self {
        let mut index = LexicalIndex::new();
        for doc in docs {
            index.insert(doc);
        }
        index
    }

    /// Number of documents.
    pub fn len(&self) -> usize {
        self.by_file.len()
    }

    /// Whether the index has no document.
    pub fn is_empty(&self) -> bool {
        self.by_file.is_empty()
    }

    /// Whether a document with this file is indexed.
    pub fn contains(&self, file: &str) -> bool {
        self.by_file.contains_key(file)
    }

    /// Adds a document, replacing any document with the same file.
    pub fn insert(&mut self, doc: LexicalDoc<'_>) {
        self.remove(doc.file);
        let mut counts: FxMap<u32, [u32; FIELDS]> = FxMap::default();
        let mut lens = [0u32; FIELDS];
        for (field, text) in [doc.name, doc.description, doc.body]
            .into_iter()
            .enumerate()
        {
            for_each_token(text, false, |token, _| {
                lens[field] = lens[field].saturating_add(1);
                let term = match self.dict.get(token) {
                    Some(&id) => id,
                    None => {
                        let id = u32::try_from(self.postings.len()).unwrap_or(u32::MAX);
                        self.postings.push(Vec::new());
                        self.dict.insert(token.into(), id);
                        id
                    }
                };
                let slot = counts.entry(term).or_insert([0; FIELDS]);
                slot[field] = slot[field].saturating_add(1);
            });
        }
        let id = match self.free.pop() {
            Some(id) => id,
            None => {
                self.docs.push(None);
                // More than u32::MAX documents cannot be held in memory anyway.
                u32::try_from(self.docs.len() - 1).unwrap_or(u32::MAX)
            }
        };
        let mut terms: Vec<u32> = Vec::with_capacity(counts.len());
        for (term, tf) in counts {
            if let Some(list) = self.postings.get_mut(term as usize) {
                list.push(Posting { doc: id, tf });
                terms.push(term);
            }
        }
        for (sum, len) in self.len_sums.iter_mut().zip(lens) {
            *sum += u64::from(len);
        }
        self.by_file.insert(doc.file.to_owned(), id);
        self.docs[id as usize] = Some(Doc {
            file: doc.file.to_owned(),
            modified: doc.modified.to_owned(),
            lens,
            terms,
        });
    }

    /// Removes the document with this file; returns whether there was one.
    pub fn remove(&mut self, file: &str) -> bool {
        let Some(id) = self.by_file.remove(file) else {
            return false;
        };
        let Some(doc) = self.docs.get_mut(id as usize).and_then(Option::take) else {
            return false;
        };
        for &term in &doc.terms {
            if let Some(list) = self.postings.get_mut(term as usize)
                && let Some(pos) = list.iter().position(|p| p.doc == id)
            {
                list.swap_remove(pos);
            }
        }
        for (sum, len) in self.len_sums.iter_mut().zip(doc.lens) {
            *sum -= u64::from(len);
        }
        self.free.push(id);
        true
    }

    /// The best `k` documents passing [`Cutoff::SELECT`], skipping files `exclude` accepts;
    /// best first (score desc, then `modified` desc, then file asc).
    pub fn rank(&self, query: &str, k: usize, exclude: &dyn Fn(&str) -> bool) -> Vec<LexicalHit> {
        self.rank_with(query, k, Cutoff::SELECT, exclude)
    }

    /// Like [`rank`](Self::rank) with an explicit cutoff; [`Cutoff::ANY`] keeps every
    /// document that shares at least one query token.
    pub fn rank_with(
        &self,
        query: &str,
        k: usize,
        cutoff: Cutoff,
        exclude: &dyn Fn(&str) -> bool,
    ) -> Vec<LexicalHit> {
        let n = self.len();
        if k == 0 || n == 0 {
            return Vec::new();
        }
        let terms = query_terms(utf16_prefix(query, QUERY_MAX_CHARS));
        if terms.is_empty() {
            return Vec::new();
        }
        let n_eff = n.max(MIN_DOCS) as f64;
        let idf = |df: usize| (1.0 + (n_eff - df as f64 + 0.5) / (df as f64 + 0.5)).ln();
        let idf_ref = idf(1);
        let mut avg = [0f64; FIELDS];
        for (a, sum) in avg.iter_mut().zip(self.len_sums) {
            *a = (sum as f64 / n as f64).max(1.0);
        }
        // Per document: score and number of distinct full-weight query terms matched.
        let mut scores: FxMap<u32, (f64, u32)> = FxMap::default();
        for (term, weight) in &terms {
            let Some(list) = self
                .dict
                .get(term.as_str())
                .and_then(|&id| self.postings.get(id as usize))
                .filter(|l| !l.is_empty())
            else {
                continue;
            };
            let term_idf = idf(list.len()) / idf_ref;
            for p in list {
                let Some(doc) = self.docs.get(p.doc as usize).and_then(Option::as_ref) else {
                    continue;
                };
                let mut tf = 0.0;
                for f in 0..FIELDS {
                    if p.tf[f] > 0 {
                        let norm = 1.0 - B + B * f64::from(doc.lens[f]) / avg[f];
                        tf += WEIGHTS[f] * f64::from(p.tf[f]) / norm;
                    }
                }
                let slot = scores.entry(p.doc).or_insert((0.0, 0));
                slot.0 += weight * term_idf * tf / (K1 + tf);
                slot.1 += u32::from(*weight >= 1.0);
            }
        }
        let mut hits: Vec<(&Doc, f64, u32)> = scores
            .into_iter()
            .filter(|&(_, (s, terms))| s > 0.0 && cutoff.passes(s, terms))
            .filter_map(|(id, (s, t))| self.docs.get(id as usize)?.as_ref().map(|d| (d, s, t)))
            .filter(|(d, ..)| !exclude(&d.file))
            .collect();
        hits.sort_by(|(a, sa, _), (b, sb, _)| {
            sb.partial_cmp(sa)
                .unwrap_or(Ordering::Equal)
                .then_with(|| b.modified.cmp(&a.modified))
                .then_with(|| a.file.cmp(&b.file))
        });
        hits.truncate(k);
        hits.into_iter()
            .map(|(d, score, terms)| LexicalHit {
                file: d.file.clone(),
                score,
                terms,
            })
            .collect()
    }
}

/// The distinct query terms in first-occurrence order, each with its weight.
fn query_terms(query: &str) -> Vec<(String, f64)> {
    let mut out: Vec<(String, f64)> = Vec::new();
    for_each_token(query, true, |token, kind| {
        if !out.iter().any(|(t, _)| t == token) {
            let weight = match kind {
                Kind::CjkUnigram => CJK_UNIGRAM_WEIGHT,
                Kind::Generic => GENERIC_WEIGHT,
                Kind::Word => 1.0,
            };
            out.push((token.to_owned(), weight));
        }
    });
    out
}

/// The tokens of `text` in order, as indexed and queried (see the module docs).
pub fn tokenize(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for_each_token(text, false, |t, _| out.push(t.to_owned()));
    out
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
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
fn for_each_token(text: &str, query: bool, mut emit: impl FnMut(&str, Kind)) {
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
                flush_word(&mut word, &mut scratch, query, &mut emit);
                pending_connector = None;
                cjk.push(c);
            }
            Class::Connector => {
                flush_cjk(&mut cjk, &mut emit);
                if pending_connector.is_some() {
                    // Two connectors in a row (`a--b`, `..`): not a compound.
                    flush_word(&mut word, &mut scratch, query, &mut emit);
                    pending_connector = None;
                } else if !word.is_empty() {
                    pending_connector = Some(c);
                }
            }
            Class::Break => {
                flush_cjk(&mut cjk, &mut emit);
                flush_word(&mut word, &mut scratch, query, &mut emit);
                pending_connector = None;
            }
        }
    }
    flush_cjk(&mut cjk, &mut emit);
    flush_word(&mut word, &mut scratch, query, &mut emit);
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
            stem_in_place(scratch);
            let kind = if query && (is_generic_stem(scratch) || is_short_number(scratch)) {
                Kind::Generic
            } else {
                Kind::Word
            };
            emit(scratch, kind);
        });
    }
    if parts > 1 {
        lower_into(word, scratch);
        stem_in_place(scratch);
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

fn is_single_ascii_letter(s: &str) -> bool {
    s.len() == 1 && s.as_bytes()[0].is_ascii_alphabetic()
}

/// Splits at lower→upper (`getUser`), at the last capital of a capital run followed by a
/// lowercase letter (`HTTPServer` → `HTTP`, `Server`) and at letter↔digit changes (`utf8`).
fn camel_parts<'s>(segment: &'s str, mut part: impl FnMut(&'s str)) {
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

/// A light suffix stripper for lowercase ASCII words; other words are left alone.
///
/// One suffix at most (`-ies`→`-y`, `-sses`→`-ss`, `-xes`/`-ches`/`-shes`/`-zes`→ drop `es`,
/// `-s` unless `-ss`/`-us`/`-is`, `-ing`, `-ed` unless `-eed`; the stem keeps a vowel), then a
/// doubled final consonant is undoubled after `-ing`/`-ed` (`running`→`run`, but `installed`
/// keeps `ll`), then a final `-e` is dropped, so `cache`, `caches`, `caching` and `cached` all
/// become `cach`. Consistency between index and query matters, not linguistics.
fn stem_in_place(w: &mut String) {
    if w.len() < 3 || !w.bytes().all(|b| b.is_ascii_lowercase()) {
        return;
    }
    let has_vowel = |s: &str| s.bytes().any(|b| b"aeiouy".contains(&b));
    let mut verbal = false;
    if w.len() == 3 {
        // Only a plural `s` (`ids`, `ops`); then the final-e rule below.
        if w.ends_with('s') && !["ss", "us", "is"].iter().any(|s| w.ends_with(s)) {
            w.pop();
        }
    } else if w.ends_with("ies") && w.len() > 4 {
        w.truncate(w.len() - 3);
        w.push('y');
    } else if ["sses", "xes", "ches", "shes", "zes"]
        .iter()
        .any(|s| w.ends_with(s))
    {
        w.truncate(w.len() - 2);
    } else if w.ends_with('s') && !["ss", "us", "is"].iter().any(|s| w.ends_with(s)) {
        w.truncate(w.len() - 1);
    } else if w.ends_with("ing") && has_vowel(&w[..w.len() - 3]) && w.len() >= 5 {
        w.truncate(w.len() - 3);
        verbal = true;
    } else if w.ends_with("ed") && !w.ends_with("eed") && has_vowel(&w[..w.len() - 2]) {
        w.truncate(w.len() - 2);
        verbal = true;
    }
    let b = w.as_bytes();
    if verbal
        && b.len() >= 3
        && b[b.len() - 1] == b[b.len() - 2]
        && !b"aeioulsz".contains(&b[b.len() - 1])
    {
        w.pop();
    }
    // `use` is the one frequent three-letter word whose inflections (`using`, `used`) would
    // otherwise stem differently.
    if (w.len() > 3 || w == "use") && w.ends_with('e') && !w.ends_with("ee") {
        w.pop();
    }
}

/// Whether a stemmed word is the stem of an everyday word (so `takes` counts like `take`).
fn is_generic_stem(stem: &str) -> bool {
    static STEMS: OnceLock<HashSet<String, BuildHasherDefault<FxHasher>>> = OnceLock::new();
    STEMS
        .get_or_init(|| {
            GENERIC
                .iter()
                .map(|w| {
                    let mut s = (*w).to_owned();
                    stem_in_place(&mut s);
                    s
                })
                .collect()
        })
        .contains(stem)
}

fn is_short_number(w: &str) -> bool {
    w.len() <= 2 && w.bytes().all(|b| b.is_ascii_digit())
}

fn is_stopword(w: &str) -> bool {
    static SET: OnceLock<HashSet<&'static str, BuildHasherDefault<FxHasher>>> = OnceLock::new();
    // Every stopword is short ASCII: most tokens are rejected without hashing.
    w.len() <= 7
        && SET
            .get_or_init(|| STOPWORDS.iter().copied().collect())
            .contains(w)
}

/// English function words and chat filler (sorted, for review).
const STOPWORDS: &[&str] = &[
    "about", "again", "all", "also", "am", "an", "and", "any", "are", "as", "at", "be", "been",
    "being", "but", "by", "can", "could", "did", "didn", "do", "does", "doesn", "doing", "don",
    "for", "from", "had", "has", "have", "he", "hello", "her", "here", "hey", "hi", "him", "his",
    "how", "if", "im", "in", "into", "is", "isn", "it", "its", "ll", "me", "might", "my", "no",
    "not", "now", "of", "ok", "okay", "on", "or", "our", "please", "re", "she", "should", "so",
    "some", "than", "thank", "thanks", "that", "the", "their", "them", "then", "there", "these",
    "they", "this", "those", "to", "too", "us", "ve", "very", "was", "we", "were", "what", "when",
    "where", "which", "who", "why", "will", "with", "would", "you", "your",
];

/// Everyday words of prompts (verbs of asking and doing, vague nouns and adjectives) and
/// common file extensions (`main.rs` keeps its full-weight whole token): kept,
/// but a query counts them [`GENERIC_WEIGHT`]. A memory store is too small to learn that
/// "write" or "time" say little about the topic, so their IDF alone would overrate them
/// (sorted for binary search).
const GENERIC: &[&str] = &[
    "add",
    "another",
    "anything",
    "ask",
    "back",
    "bad",
    "best",
    "better",
    "big",
    "bit",
    "change",
    "check",
    "come",
    "convert",
    "create",
    "describe",
    "different",
    "done",
    "each",
    "easy",
    "enough",
    "even",
    "ever",
    "every",
    "example",
    "explain",
    "few",
    "find",
    "fine",
    "first",
    "fix",
    "follow",
    "get",
    "give",
    "go",
    "going",
    "good",
    "great",
    "happen",
    "help",
    "idea",
    "instead",
    "js",
    "keep",
    "kind",
    "know",
    "last",
    "later",
    "like",
    "little",
    "long",
    "look",
    "lot",
    "lots",
    "make",
    "many",
    "maybe",
    "md",
    "mean",
    "more",
    "most",
    "much",
    "need",
    "new",
    "next",
    "nice",
    "one",
    "only",
    "other",
    "out",
    "over",
    "own",
    "part",
    "put",
    "py",
    "quick",
    "quickly",
    "really",
    "right",
    "rs",
    "same",
    "say",
    "see",
    "seem",
    "seems",
    "set",
    "show",
    "simple",
    "since",
    "small",
    "something",
    "start",
    "still",
    "stuff",
    "sure",
    "take",
    "tell",
    "thing",
    "things",
    "think",
    "time",
    "try",
    "ts",
    "two",
    "txt",
    "understand",
    "up",
    "use",
    "used",
    "using",
    "want",
    "way",
    "well",
    "while",
    "work",
    "works",
    "write",
    "wrong",
];

/// Chinese single characters that carry no topic (particles, pronouns, question words).
const CJK_STOP_UNIGRAMS: &[char] = &[
    '的', '了', '是', '在', '我', '你', '他', '她', '它', '们', '这', '那', '有', '和', '与', '就',
    '不', '也', '都', '要', '把', '吗', '呢', '吧', '啊', '个', '一', '么', '什', '怎', '如', '何',
    '请', '帮', '能', '会', '可', '以', '到', '说', '对', '被', '给', '让', '还', '没', '很', '再',
    '又', '得', '地', '着', '过', '下', '上',
];

/// Chinese particles that end a word: no bigram spans them (`的超` in `MySQL的超时`).
const CJK_PARTICLES: &[char] = &['的', '了', '吗', '呢', '吧', '啊'];

/// Chinese two-character function words.
const CJK_STOP_BIGRAMS: &[&str] = &[
    "什么", "怎么", "如何", "可以", "我们", "你们", "他们", "这个", "那个", "一下", "帮我", "请问",
    "是不", "不是", "没有", "为什", "是什", "一个", "的时", "时候", "怎样", "能不", "不能", "的话",
];

#[cfg(test)]
mod tests {
    use super::*;

    fn doc<'a>(file: &'a str, name: &'a str, body: &'a str) -> LexicalDoc<'a> {
        LexicalDoc {
            file,
            name,
            description: "",
            body,
            modified: "2026-01-01T00:00:00.000Z",
        }
    }

    #[test]
    fn word_lists_are_sorted_short_and_disjoint() {
        assert!(STOPWORDS.windows(2).all(|w| w[0] < w[1]));
        assert!(STOPWORDS.iter().all(|w| w.len() <= 7 && w.is_ascii()));
        assert!(GENERIC.windows(2).all(|w| w[0] < w[1]));
        assert!(!GENERIC.iter().any(|w| is_stopword(w)));
    }

    #[test]
    fn code_identifiers_split_and_keep_the_whole() {
        assert_eq!(
            tokenize("getUserById"),
            ["get", "user", "id", "getuserbyid"]
        );
        assert_eq!(tokenize("user_ids"), ["user", "id", "user_ids"]);
        assert_eq!(tokenize("HTTPServer"), ["http", "server", "httpserver"]);
        assert_eq!(tokenize("Cargo.toml"), ["cargo", "toml", "cargo.toml"]);
        assert_eq!(tokenize("utf8"), ["utf", "8", "utf8"]);
        assert_eq!(
            tokenize("pre-commit hook"),
            ["pre", "commit", "pre-commit", "hook"]
        );
    }

    #[test]
    fn trailing_punctuation_is_not_part_of_a_word() {
        assert_eq!(tokenize("Run tests."), ["run", "test"]);
        assert_eq!(tokenize("ab--cd ..xy"), ["ab", "cd", "xy"]);
    }

    #[test]
    fn stemming_conflates_inflections() {
        for group in [
            &["cache", "caches", "caching", "cached"][..],
            &["test", "tests", "testing", "tested"],
            &["fail", "fails", "failing", "failed"],
            &["run", "runs", "running"],
            &["query", "queries"],
            &["fix", "fixes", "fixed"],
            &["use", "uses", "using", "used"],
        ] {
            let stems: Vec<Vec<String>> = group.iter().map(|w| tokenize(w)).collect();
            assert!(
                stems.windows(2).all(|w| w[0] == w[1]),
                "{group:?}: {stems:?}"
            );
        }
        assert_eq!(tokenize("installed"), ["install"]);
        assert_eq!(tokenize("status"), ["status"]);
        assert_eq!(tokenize("string"), ["string"]);
        assert_eq!(tokenize("need"), ["need"]);
    }

    #[test]
    fn chinese_becomes_bigrams_and_unigrams() {
        assert_eq!(
            tokenize("数据库超时"),
            ["数", "数据", "据", "据库", "库", "库超", "超", "超时", "时"]
        );
        // Mixed scripts split at the script change; stop characters and particle-spanning
        // bigrams dropped (`my` is an English stopword).
        assert_eq!(
            tokenize("MySQL的超时"),
            ["sql", "mysql", "超", "超时", "时"]
        );
    }

    #[test]
    fn format_characters_are_ignored_and_case_is_folded() {
        assert_eq!(tokenize("Pass\u{200B}word"), ["password"]);
        assert_eq!(tokenize("ÉCOLE Straße"), ["école", "straße"]);
    }

    #[test]
    fn stopword_only_queries_select_nothing() {
        let index = LexicalIndex::build([doc("a.md", "What is this", "it is what it is")]);
        assert!(tokenize("what is it? is it this?").is_empty());
        assert!(
            index
                .rank_with("what is it", 3, Cutoff::ANY, &|_| false)
                .is_empty()
        );
        assert!(index.rank("", 3, &|_| false).is_empty());
    }

    #[test]
    fn name_outweighs_description_outweighs_body() {
        let index = LexicalIndex::build([
            LexicalDoc {
                file: "body.md",
                name: "alpha",
                description: "beta",
                body: "postgres",
                modified: "2026-01-01",
            },
            LexicalDoc {
                file: "desc.md",
                name: "alpha",
                description: "postgres",
                body: "beta",
                modified: "2026-01-01",
            },
            LexicalDoc {
                file: "name.md",
                name: "postgres",
                description: "alpha",
                body: "beta",
                modified: "2026-01-01",
            },
        ]);
        let files: Vec<String> = index
            .rank_with("postgres", 3, Cutoff::ANY, &|_| false)
            .into_iter()
            .map(|h| h.file)
            .collect();
        assert_eq!(files, ["name.md", "desc.md", "body.md"]);
    }

    #[test]
    fn ties_break_by_modified_desc_then_file_asc() {
        let mut docs = vec![
            doc("b.md", "deploy", "x"),
            doc("a.md", "deploy", "x"),
            doc("c.md", "deploy", "x"),
        ];
        docs[2].modified = "2027-01-01T00:00:00.000Z";
        let index = LexicalIndex::build(docs);
        let files: Vec<String> = index
            .rank_with("deploy", 3, Cutoff::ANY, &|_| false)
            .into_iter()
            .map(|h| h.file)
            .collect();
        assert_eq!(files, ["c.md", "a.md", "b.md"]);
    }

    #[test]
    fn the_minimum_score_separates_related_from_unrelated_even_with_one_entry() {
        let index = LexicalIndex::build([LexicalDoc {
            file: "SSH-port-on-staging.md",
            name: "SSH port on staging",
            description: "staging SSH listens on 2222, not 22.",
            body: "staging SSH listens on 2222, not 22. Use `ssh -p 2222 deploy@staging`.",
            modified: "2026-01-01T00:00:00.000Z",
        }]);
        let hits = index.rank("how do I ssh into the staging box?", 3, &|_| false);
        assert_eq!(hits.len(), 1, "{hits:?}");
        assert!(hits[0].score >= MIN_SCORE);
        assert!(
            index
                .rank("write a haiku about autumn leaves", 3, &|_| false)
                .is_empty()
        );
        // Sharing one ordinary body word is not enough.
        assert!(
            index
                .rank("deploy the frontend to production", 3, &|_| false)
                .is_empty()
        );
    }

    #[test]
    fn remove_and_reinsert_restore_the_same_ranking() {
        let docs = [
            doc("a.md", "Postgres pool size", "max 20 connections per pod"),
            doc("b.md", "Redis cache TTL", "keys expire after 300 seconds"),
            doc(
                "c.md",
                "Deploy with helm",
                "helm upgrade --install api ./chart",
            ),
        ];
        let fresh = LexicalIndex::build(docs);
        let mut edited = LexicalIndex::build(docs);
        assert!(edited.remove("b.md"));
        assert!(!edited.remove("b.md"));
        assert!(!edited.contains("b.md"));
        edited.insert(doc("z.md", "temp", "cache pool helm"));
        edited.insert(docs[1]);
        assert!(edited.remove("z.md"));
        assert_eq!(edited.len(), 3);
        for q in ["redis cache", "pool connections", "helm deploy", "cache"] {
            assert_eq!(
                fresh.rank_with(q, 3, Cutoff::ANY, &|_| false),
                edited.rank_with(q, 3, Cutoff::ANY, &|_| false),
                "{q}"
            );
        }
    }

    #[test]
    fn queries_are_cut_to_4000_utf16_units_like_the_side_query() {
        let index = LexicalIndex::build([doc("a.md", "kafka consumer lag", "kafka lag")]);
        let pad = "😀".repeat(QUERY_MAX_CHARS / 2); // exactly 4000 UTF-16 units
        assert!(
            index
                .rank_with(&format!("{pad} kafka"), 3, Cutoff::ANY, &|_| false)
                .is_empty()
        );
        let pad = "😀".repeat(QUERY_MAX_CHARS / 2 - 4);
        assert_eq!(
            index
                .rank_with(&format!("{pad} kafka"), 3, Cutoff::ANY, &|_| false)
                .len(),
            1
        );
    }

    #[test]
    fn excluded_files_are_never_returned() {
        let index = LexicalIndex::build([
            doc("a.md", "redis", "redis"),
            doc("b.md", "redis cache", "redis"),
        ]);
        let hits = index.rank_with("redis", 3, Cutoff::ANY, &|f| f == "b.md");
        assert_eq!(hits.len(), 1);
        assert_eq!(hits[0].file, "a.md");
    }

    mod properties {
        use proptest::prelude::*;

        use super::super::*;

        const WORDS: &[&str] = &[
            "redis",
            "cache",
            "caching",
            "postgres",
            "pool",
            "deploy",
            "helm",
            "test",
            "tests",
            "getUserById",
            "user_id",
            "Cargo.toml",
            "数据库",
            "超时",
            "端口",
            "staging",
            "ssh",
            "the",
            "of",
            "ÉCOLE",
            "2222",
            "v2",
        ];

        fn text() -> impl Strategy<Value = String> {
            prop::collection::vec(
                prop_oneof![
                    4 => prop::sample::select(WORDS).prop_map(str::to_owned),
                    1 => "\\PC{0,8}",
                ],
                0..8,
            )
            .prop_map(|w| w.join(" "))
        }

        fn docs() -> impl Strategy<Value = Vec<(String, String, String, String, String)>> {
            prop::collection::vec(
                (
                    text(),
                    text(),
                    text(),
                    prop::sample::select(&["2026-01", "2026-02", "2026-03"][..]),
                ),
                0..12,
            )
            .prop_map(|rows| {
                rows.into_iter()
                    .enumerate()
                    .map(|(i, (n, d, b, m))| (format!("f{i:02}.md"), n, d, b, m.to_owned()))
                    .collect()
            })
        }

        fn build(rows: &[(String, String, String, String, String)]) -> LexicalIndex {
            LexicalIndex::build(
                rows.iter()
                    .map(|(file, name, description, body, modified)| LexicalDoc {
                        file,
                        name,
                        description,
                        body,
                        modified,
                    }),
            )
        }

        proptest! {
            /// Ranking depends on the set of documents only: building in reverse order, or
            /// inserting everything, removing some and re-inserting them, ranks identically;
            /// and it never returns an excluded file or a file twice.
            #[test]
            fn ranking_is_deterministic_and_respects_exclusion(
                rows in docs(),
                query in text(),
                k in 0usize..6,
                excluded in prop::collection::vec(0usize..12, 0..4),
            ) {
                let excluded: Vec<String> = excluded.iter().map(|i| format!("f{i:02}.md")).collect();
                let exclude = |f: &str| excluded.iter().any(|e| e == f);
                let a = build(&rows);
                let mut reversed = rows.clone();
                reversed.reverse();
                let b = build(&reversed);
                let mut c = build(&rows);
                for (file, ..) in rows.iter().step_by(2) {
                    prop_assert!(c.remove(file));
                }
                for (file, name, description, body, modified) in rows.iter().step_by(2) {
                    c.insert(LexicalDoc { file, name, description, body, modified });
                }
                for cutoff in [Cutoff::ANY, Cutoff::SELECT] {
                    let ra = a.rank_with(&query, k, cutoff, &exclude);
                    prop_assert_eq!(&ra, &b.rank_with(&query, k, cutoff, &exclude));
                    prop_assert_eq!(&ra, &c.rank_with(&query, k, cutoff, &exclude));
                    prop_assert!(ra.len() <= k);
                    for (i, hit) in ra.iter().enumerate() {
                        prop_assert!(!exclude(&hit.file));
                        prop_assert!(hit.score > 0.0 && cutoff.passes(hit.score, hit.terms));
                        prop_assert!(!ra[..i].iter().any(|h| h.file == hit.file));
                    }
                }
            }

            /// The tokenizer never panics and never yields an empty token.
            #[test]
            fn tokens_are_non_empty(s in "\\PC{0,64}") {
                for t in tokenize(&s) {
                    prop_assert!(!t.is_empty());
                }
            }
        }
    }
}
