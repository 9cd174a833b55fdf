//! From a query to the concepts that are scored: each query token with its synonyms, its
//! typo corrections and its translations (see the crate docs, "Expansion").

use std::sync::OnceLock;

use rustc_hash::FxHashMap;

use crate::index::LexicalIndex;
use crate::stem::Stemmer;
use crate::tokenize::{Kind, for_each_token};
use crate::words::{GLOSSARY, SYNONYMS, is_generic_stem, is_short_number, is_stopword};
use crate::{CJK_UNIGRAM_WEIGHT, GENERIC_WEIGHT};

/// Weight of a synonym relative to the word it stands for.
pub const SYNONYM_WEIGHT: f64 = 0.7;
/// Weight of a translation (Chinese ↔ English glossary) relative to the word.
pub const TRANSLATION_WEIGHT: f64 = 0.8;
/// Weight of a typo correction relative to the word.
pub const TYPO_WEIGHT: f64 = 0.8;
/// Documents feedback expansion reads.
pub(crate) const FEEDBACK_DOCS: usize = 3;
/// Terms feedback expansion adds.
pub(crate) const FEEDBACK_TERMS: usize = 8;
/// Weight of the strongest feedback term.
pub(crate) const FEEDBACK_WEIGHT: f64 = 0.3;

/// One thing the query asks about: the token as written and the words that stand for it.
#[derive(Debug, Clone)]
pub(crate) struct Concept {
    /// Term ids with their relative weights; a document scores its best variant.
    pub(crate) variants: Vec<(u32, f64)>,
    /// Query weight (everyday words and single CJK characters weigh less).
    pub(crate) weight: f64,
    /// Whether matching it counts as a matched full-weight term for the cutoff.
    pub(crate) full: bool,
}

/// The largest edit distance a typo correction may have for a word of `len` bytes.
pub(crate) fn typo_distance(len: usize) -> usize {
    match len {
        0..=3 => 0,
        4..=7 => 1,
        _ => 2,
    }
}

/// The optimal-string-alignment distance of `a` and `b` (ASCII) if it is at most `max`.
pub(crate) fn distance_within(a: &str, b: &str, max: usize) -> Option<usize> {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len().abs_diff(b.len()) > max {
        return None;
    }
    let w = b.len() + 1;
    let mut rows = vec![0usize; 3 * w];
    for (j, cell) in rows[..w].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        let (cur, prev2) = ((i % 3) * w, ((i + 1) % 3) * w);
        let prev = ((i + 2) % 3) * w;
        rows[cur] = i;
        let mut row_min = i;
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut v = (rows[prev + j] + 1)
                .min(rows[cur + j - 1] + 1)
                .min(rows[prev + j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                v = v.min(rows[prev2 + j - 2] + 1);
            }
            rows[cur + j] = v;
            row_min = row_min.min(v);
        }
        if row_min > max {
            return None;
        }
    }
    let d = rows[(a.len() % 3) * w + b.len()];
    (d <= max).then_some(d)
}

/// Whether a document term may be added by feedback expansion.
pub(crate) fn feedback_term(term: &str) -> bool {
    term.chars().count() >= 3
        && !term.bytes().all(|b| b.is_ascii_digit())
        && !is_stopword(term)
        && !is_generic_stem(term, Stemmer::Light)
}

fn stemmer_slot(stemmer: Stemmer) -> usize {
    match stemmer {
        Stemmer::None => 0,
        Stemmer::Light => 1,
    }
}

fn stemmed(word: &str, stemmer: Stemmer) -> Vec<String> {
    let mut out = Vec::new();
    for_each_token(word, false, stemmer, |t, _| out.push(t.to_owned()));
    out
}

/// Stem → the stems of its synonyms.
fn synonyms(stemmer: Stemmer) -> &'static FxHashMap<String, Vec<String>> {
    static MAPS: [OnceLock<FxHashMap<String, Vec<String>>>; 2] = [OnceLock::new(), OnceLock::new()];
    MAPS[stemmer_slot(stemmer)].get_or_init(|| {
        let mut map: FxHashMap<String, Vec<String>> = FxHashMap::default();
        for group in SYNONYMS {
            // A group member may be several words (`pull request`): its last token stands
            // for it.
            let stems: Vec<String> = group
                .iter()
                .filter_map(|w| stemmed(w, stemmer).pop())
                .collect();
            for s in &stems {
                let list = map.entry(s.clone()).or_default();
                for other in &stems {
                    if other != s && !list.contains(other) {
                        list.push(other.clone());
                    }
                }
            }
        }
        map
    })
}

/// English stem → the CJK tokens (bigrams, or the single character) of its translations.
fn english_to_cjk(stemmer: Stemmer) -> &'static FxHashMap<String, Vec<String>> {
    static MAPS: [OnceLock<FxHashMap<String, Vec<String>>>; 2] = [OnceLock::new(), OnceLock::new()];
    MAPS[stemmer_slot(stemmer)].get_or_init(|| {
        let mut map: FxHashMap<String, Vec<String>> = FxHashMap::default();
        for (cjk, english) in GLOSSARY {
            let chars: Vec<char> = cjk.chars().collect();
            let tokens: Vec<String> = if chars.len() == 1 {
                vec![cjk.to_string()]
            } else {
                chars.windows(2).map(|w| w.iter().collect()).collect()
            };
            for word in *english {
                if let Some(stem) = stemmed(word, stemmer).pop() {
                    let list = map.entry(stem).or_default();
                    for t in &tokens {
                        if !list.contains(t) {
                            list.push(t.clone());
                        }
                    }
                }
            }
        }
        map
    })
}

/// The concepts of `query` against `index` (see the crate docs, "Expansion").
pub(crate) fn plan(index: &LexicalIndex, query: &str) -> Vec<Concept> {
    let opts = index.opts;
    let mut seen: Vec<String> = Vec::new();
    let mut out: Vec<Concept> = Vec::new();
    for_each_token(query, true, opts.stemmer, |token, kind| {
        if seen.iter().any(|t| t == token) {
            return;
        }
        seen.push(token.to_owned());
        let weight = match kind {
            Kind::CjkUnigram => CJK_UNIGRAM_WEIGHT,
            Kind::Generic => GENERIC_WEIGHT,
            Kind::Word => 1.0,
        };
        let mut variants: Vec<(u32, f64)> = index
            .live_term(token)
            .map(|id| (id, 1.0))
            .into_iter()
            .collect();
        if kind == Kind::Word {
            if opts.synonyms {
                for syn in synonyms(opts.stemmer).get(token).into_iter().flatten() {
                    if let Some(id) = index.live_term(syn) {
                        variants.push((id, SYNONYM_WEIGHT));
                    }
                }
                for cjk in english_to_cjk(opts.stemmer)
                    .get(token)
                    .into_iter()
                    .flatten()
                {
                    if let Some(id) = index.live_term(cjk) {
                        variants.push((id, TRANSLATION_WEIGHT));
                    }
                }
            }
            if opts.typos
                && variants.is_empty()
                && token.is_ascii()
                && !is_short_number(token)
                && token.bytes().any(|b| b.is_ascii_alphabetic())
                && let Some(&id) = index.typo_candidates(token).first()
            {
                variants.push((id, TYPO_WEIGHT));
            }
        }
        out.push(Concept {
            variants,
            weight,
            full: kind == Kind::Word,
        });
    });
    if opts.synonyms {
        // Chinese words of the glossary found in the query: their English translations.
        for (cjk, english) in GLOSSARY {
            if !query.contains(cjk) {
                continue;
            }
            let mut variants: Vec<(u32, f64)> = Vec::new();
            for word in *english {
                for t in stemmed(word, opts.stemmer) {
                    if let Some(id) = index.live_term(&t)
                        && !variants.iter().any(|&(v, _)| v == id)
                    {
                        variants.push((id, TRANSLATION_WEIGHT));
                    }
                }
            }
            out.push(Concept {
                variants,
                weight: 1.0,
                full: true,
            });
        }
    }
    out
}
