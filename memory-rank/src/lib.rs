//! Lexical relevance, with no I/O and no model: a BM25F ranker over memory entries, for
//! auto-surfacing, hybrid pre-ranking and benchmarks. Central type: [`LexicalIndex`].
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
//! [`Cutoff::SELECT`] (what [`LexicalIndex::rank`] uses) makes two decisions. The *gate*:
//! is the prompt about anything the store knows? The best document must score
//! [`MIN_SCORE`] when it shares two or more distinct full-weight words with the query, and
//! the higher [`MIN_SCORE_SINGLE_TERM`] when it shares one: one common word found in an
//! entry's name ("suggest a *name* for my cat" → *Branch naming*) is the typical false
//! positive. Then how far down to go: later documents need [`MIN_SHARE`] of the best score.
//! Everyday prompt words ("write", "explain", "time", …) and one- or two-digit numbers count
//! [`GENERIC_WEIGHT`] and never as a full-weight word: a small store cannot learn from its
//! own statistics that they say little. [`Cutoff::ANY`] ranks the same documents without a
//! cutoff, for a model to choose from. The figures (recall@1/@3, MRR, false surfacing per
//! kind of prompt, on a tuning and a held-out half) are in BENCHMARKS.md, "Retrieval
//! quality"; `cargo xtask bench retrieval` prints them.
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
//!   `-e`, doubled final consonants): on the retrieval set it is worth 6 points of recall@3
//!   over no stemming; Snowball's English (Porter2) was measured too and did no better on
//!   the held-out half, so the light one (no dependency) stays;
//! - Han and kana runs (Chinese and Japanese write no spaces) become character bigrams plus
//!   unigrams; unigrams count [`CJK_UNIGRAM_WEIGHT`] in a query, so bigrams (most Chinese
//!   words are two characters) dominate;
//! - small English and Chinese stopword lists, and single ASCII letters, are dropped. A query
//!   with no token left selects nothing.
//!
//! # Expansion
//!
//! Each query word becomes a *concept* scored by its best variant (a variant never adds to
//! its original, so a synonym cannot count twice):
//! - **synonyms** ([`Options::synonyms`]): a small list of general software vocabulary that
//!   people use interchangeably (`db`/`database`, `k8s`/`kubernetes`, `login`/`sso`, …) at
//!   [`SYNONYM_WEIGHT`], and a Chinese ↔ English glossary of the same kind of words
//!   (`部署` ↔ `deploy`, `数据库` ↔ `database`) at [`TRANSLATION_WEIGHT`], so a Chinese prompt
//!   finds an English memory and the other way round;
//! - **typos** ([`Options::typos`]): a word no document contains is corrected to the closest
//!   indexed word with the same first letter (optimal string alignment distance 1 for words
//!   of 4–7 letters, 2 from 8), most frequent first, at [`TYPO_WEIGHT`];
//! - **feedback** ([`Options::feedback`], off): the best documents' name and description
//!   words added for the final order. Measured and not adopted.
//!
//! Expansion is deterministic and needs no model: the lists are data in `words.rs`, the typo
//! lookup reads the index's own dictionary.
//!
//! Queries are used whole: a host that shows the same prompt to a model cuts it first (the
//! pi binding cuts to pi-memory's 4000 UTF-16 units), so both see the same text.
//!
//! # Example
//! ```
//! use memory_rank::{LexicalDoc, LexicalIndex};
//!
//! let index = LexicalIndex::build([
//!     LexicalDoc { file: "ssh.md", name: "SSH port on staging", description: "staging SSH listens on 2222",
//!                  body: "Use port 2222.", modified: "2026-10-01T00:00:00.000Z" },
//!     LexicalDoc { file: "db.md", name: "Database migrations", description: "sqlx migrate add",
//!                  body: "Always write the down migration.", modified: "2026-10-02T00:00:00.000Z" },
//! ]);
//! let hits = index.rank("how do I ssh into staging?", 3, &|_| false);
//! assert_eq!(hits[0].file, "ssh.md");
//! assert!(index.rank("suggest a name for my cat", 3, &|_| false).is_empty());
//! ```
//!
//! # Limitations
//! * The stemmer is English-only and deliberately light (ASCII words, one suffix); other
//!   languages are matched on their surface forms (and CJK by bigrams).
//! * A paraphrase that shares no word (after stemming, synonyms and translations) with the
//!   memory is missed: on the held-out half of the retrieval set recall@3 is 0.76, short of
//!   the 0.90 a model-based selector can reach (BENCHMARKS.md, "Retrieval quality").
//! * The synonym list and the glossary are small and general; a project's own jargon is only
//!   matched as written.
//! * Scores are comparable within one index only; the cutoff constants were tuned on the
//!   tuning half of the retrieval set in `memory-agent/tests/all/retrieval` and may need
//!   re-tuning if weights change.

#![forbid(unsafe_code)]

pub mod codec;
mod expand;
mod index;
mod persist;
mod stem;
mod tokenize;
mod words;

pub use expand::{SYNONYM_WEIGHT, TRANSLATION_WEIGHT, TYPO_WEIGHT};
pub use index::LexicalIndex;
pub use persist::{DecodeError, tokenizer_fingerprint};
pub use stem::Stemmer;
pub use tokenize::{tokenize, tokenize_with};

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
/// The normalised score the best document must reach, when it matches two or more query
/// words, for [`LexicalIndex::rank`] to select anything.
pub const MIN_SCORE: f64 = 0.3;
/// The same when the best document matches one query word.
pub const MIN_SCORE_SINGLE_TERM: f64 = 0.9;
/// Documents after the best one are selected down to this share of its score.
pub const MIN_SHARE: f64 = 0.25;

/// What the ranker does beyond plain BM25F; each part can be switched off to measure what
/// it is worth (`cargo xtask bench retrieval` prints the ablations).
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct Options {
    /// How words are reduced to stems (index and query alike).
    pub stemmer: Stemmer,
    /// Field weights: name, description, body.
    pub weights: [f64; FIELDS],
    /// BM25 term-frequency saturation.
    pub k1: f64,
    /// BM25 length normalisation.
    pub b: f64,
    /// Expand query words with their synonyms and Chinese ↔ English translations.
    pub synonyms: bool,
    /// Correct query words no document contains to the closest indexed word.
    pub typos: bool,
    /// Pseudo-relevance feedback: add the best documents' name and description words to the
    /// query for the final order (after the gate). Off by default: on the retrieval set's
    /// held-out half it moved recall@3 by +0.003 and recall@1 by −0.006.
    pub feedback: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            stemmer: Stemmer::default(),
            weights: WEIGHTS,
            k1: K1,
            b: B,
            synonyms: true,
            typos: true,
            feedback: false,
        }
    }
}

impl Options {
    /// The defaults with another stemmer.
    pub fn with_stemmer(mut self, stemmer: Stemmer) -> Self {
        self.stemmer = stemmer;
        self
    }

    /// The ranking before issue 17: no expansion, no typo correction, no feedback; for
    /// comparisons.
    pub fn baseline() -> Self {
        Options {
            stemmer: Stemmer::Light,
            synonyms: false,
            typos: false,
            feedback: false,
            ..Options::default()
        }
    }
}

/// Number of fields (name, description, body).
pub const FIELDS: usize = 3;
pub(crate) const WEIGHTS: [f64; FIELDS] = [NAME_WEIGHT, DESCRIPTION_WEIGHT, BODY_WEIGHT];

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
/// Two decisions: whether the prompt is related to the store at all (the *gate*: the best
/// document must reach `min_score`, or `min_score_single_term` when it matches a single
/// query word: one common word found in an entry's name is the commonest false positive,
/// "suggest a name for my cat" → *Branch naming*), and then how far down the list to go
/// (`min_share` of the best score).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Cutoff {
    /// Minimum score of the best document when it matches at least two distinct
    /// full-weight query words.
    pub min_score: f64,
    /// Minimum score of the best document when it matches fewer.
    pub min_score_single_term: f64,
    /// Later documents need at least this share of the best document's score.
    pub min_share: f64,
}

impl Cutoff {
    /// The selection rule of the lexical selector (tuned on the retrieval evaluation in
    /// memory-agent; see BENCHMARKS.md, "Retrieval quality").
    pub const SELECT: Cutoff = Cutoff {
        min_score: MIN_SCORE,
        min_score_single_term: MIN_SCORE_SINGLE_TERM,
        min_share: MIN_SHARE,
    };
    /// Every document sharing at least one token with the query.
    pub const ANY: Cutoff = Cutoff {
        min_score: 0.0,
        min_score_single_term: 0.0,
        min_share: 0.0,
    };

    /// Whether a best document with this score and this many matched full-weight words
    /// opens the gate.
    pub fn passes(self, score: f64, terms: u32) -> bool {
        score
            >= if terms >= 2 {
                self.min_score
            } else {
                self.min_score_single_term
            }
    }
}

#[cfg(test)]
mod tests;
