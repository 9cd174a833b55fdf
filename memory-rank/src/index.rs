//! The inverted index: documents in, ranked hits out.

use std::cmp::Ordering;

use rustc_hash::{FxHashMap, FxHashSet};

use crate::expand::{Concept, plan};
use crate::tokenize::for_each_token;
use crate::{Cutoff, FIELDS, LexicalDoc, LexicalHit, MIN_DOCS, Options};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Posting {
    pub(crate) doc: u32,
    pub(crate) tf: [u32; FIELDS],
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Doc {
    pub(crate) file: String,
    pub(crate) modified: String,
    pub(crate) lens: [u32; FIELDS],
    /// The distinct terms of the document with their per-field frequencies (for removal and
    /// for feedback expansion).
    pub(crate) terms: Vec<(u32, [u32; FIELDS])>,
}

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
    pub(crate) opts: Options,
    pub(crate) docs: Vec<Option<Doc>>,
    pub(crate) free: Vec<u32>,
    pub(crate) by_file: FxHashMap<String, u32>,
    pub(crate) dict: FxHashMap<Box<str>, u32>,
    /// Term id → term text (the dictionary inverted).
    pub(crate) terms: Vec<Box<str>>,
    pub(crate) postings: Vec<Vec<Posting>>,
    pub(crate) len_sums: [u64; FIELDS],
    /// ASCII terms by (first byte, length), for typo lookups.
    pub(crate) shapes: FxHashMap<(u8, u8), Vec<u32>>,
}

/// One document's score while ranking.
#[derive(Debug, Clone, Copy, Default)]
struct Acc {
    score: f64,
    /// Distinct full-weight concepts matched.
    terms: u32,
}

impl LexicalIndex {
    /// An empty index.
    pub fn new() -> Self {
        LexicalIndex::default()
    }

    /// An empty index with these options.
    pub fn with_options(opts: Options) -> Self {
        LexicalIndex {
            opts,
            ..LexicalIndex::default()
        }
    }

    /// The options in effect.
    pub fn options(&self) -> Options {
        self.opts
    }

    /// An index over `docs` (a later document with the same file replaces an earlier one).
    pub fn build<'a>(docs: impl IntoIterator<Item = LexicalDoc<'a>>) -> Self {
        LexicalIndex::build_with(Options::default(), docs)
    }

    /// [`build`](Self::build) with explicit options.
    pub fn build_with<'a>(opts: Options, docs: impl IntoIterator<Item = LexicalDoc<'a>>) -> Self {
        let mut index = LexicalIndex::with_options(opts);
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

    /// How many documents contain `token` (a token as [`tokenize`](crate::tokenize) yields it).
    pub fn doc_freq(&self, token: &str) -> usize {
        self.dict
            .get(token)
            .and_then(|&id| self.postings.get(id as usize))
            .map_or(0, Vec::len)
    }

    /// Whether a document with this file is indexed.
    pub fn contains(&self, file: &str) -> bool {
        self.by_file.contains_key(file)
    }

    /// The indexed files, in no particular order.
    pub fn files(&self) -> impl Iterator<Item = &str> {
        self.by_file.keys().map(String::as_str)
    }

    fn intern(&mut self, token: &str) -> u32 {
        if let Some(&id) = self.dict.get(token) {
            return id;
        }
        let id = u32::try_from(self.postings.len()).unwrap_or(u32::MAX);
        self.postings.push(Vec::new());
        self.terms.push(token.into());
        self.dict.insert(token.into(), id);
        if let Some(shape) = shape_of(token) {
            self.shapes.entry(shape).or_default().push(id);
        }
        id
    }

    /// Adds a document, replacing any document with the same file.
    pub fn insert(&mut self, doc: LexicalDoc<'_>) {
        self.remove(doc.file);
        let mut counts: FxHashMap<u32, [u32; FIELDS]> = FxHashMap::default();
        let mut lens = [0u32; FIELDS];
        let stemmer = self.opts.stemmer;
        for (field, text) in [doc.name, doc.description, doc.body]
            .into_iter()
            .enumerate()
        {
            for_each_token(text, false, stemmer, |token, _| {
                lens[field] = lens[field].saturating_add(1);
                let term = self.intern(token);
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
        let mut terms: Vec<(u32, [u32; FIELDS])> = Vec::with_capacity(counts.len());
        for (term, tf) in counts {
            if let Some(list) = self.postings.get_mut(term as usize) {
                list.push(Posting { doc: id, tf });
                terms.push((term, tf));
            }
        }
        terms.sort_unstable_by_key(|&(t, _)| t);
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
        for &(term, _) in &doc.terms {
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

    /// The term id of `token` if some document holds it.
    pub(crate) fn live_term(&self, token: &str) -> Option<u32> {
        let &id = self.dict.get(token)?;
        (!self.postings.get(id as usize)?.is_empty()).then_some(id)
    }

    /// Live terms within typo distance of `token` (see `expand`), best first.
    pub(crate) fn typo_candidates(&self, token: &str) -> Vec<u32> {
        let Some((first, len)) = shape_of(token) else {
            return Vec::new();
        };
        let max = crate::expand::typo_distance(token.len());
        if max == 0 {
            return Vec::new();
        }
        let mut found: Vec<(usize, usize, &str, u32)> = Vec::new();
        for l in len.saturating_sub(max as u8)..=len.saturating_add(max as u8) {
            let Some(ids) = self.shapes.get(&(first, l)) else {
                continue;
            };
            for &id in ids {
                let list_len = self.postings.get(id as usize).map_or(0, Vec::len);
                let Some(term) = self.terms.get(id as usize) else {
                    continue;
                };
                if list_len == 0 || term.as_ref() == token {
                    continue;
                }
                if let Some(d) = crate::expand::distance_within(token, term, max) {
                    found.push((d, usize::MAX - list_len, term, id));
                }
            }
        }
        // Deterministic: closest, then most frequent, then alphabetical.
        found.sort_unstable();
        found.into_iter().map(|(.., id)| id).collect()
    }

    /// The share of the query's full-weight words (after expansion) that some document
    /// contains: 1.0 when the store knows every word of the prompt, near 0 for a prompt about
    /// something else entirely. 0.0 for a query with no full-weight word.
    pub fn query_coverage(&self, query: &str) -> f64 {
        let concepts = plan(self, query);
        let full = concepts.iter().filter(|c| c.full).count();
        let known = concepts
            .iter()
            .filter(|c| c.full && !c.variants.is_empty())
            .count();
        if full == 0 {
            0.0
        } else {
            known as f64 / full as f64
        }
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
        let concepts = plan(self, query);
        if concepts.is_empty() {
            return Vec::new();
        }
        let mut scores = self.score(&concepts);
        // The gate: is the prompt about something the store knows at all? Decided on the
        // best document of the first pass, whatever `exclude` says (a memory injected
        // earlier still shows that the prompt is related).
        let best = scores.values().copied().max_by(|a, b| {
            a.score
                .partial_cmp(&b.score)
                .unwrap_or(Ordering::Equal)
                .then(a.terms.cmp(&b.terms))
        });
        match best {
            Some(b) if b.score > 0.0 && cutoff.passes(b.score, b.terms) => {}
            _ => return Vec::new(),
        }
        if self.opts.feedback {
            let extra = self.feedback(&concepts, &scores);
            if !extra.is_empty() {
                for (doc, acc) in self.score(&extra) {
                    scores.entry(doc).or_default().score += acc.score;
                }
            }
        }
        let mut hits: Vec<(&Doc, Acc)> = scores
            .into_iter()
            .filter(|(_, a)| a.score > 0.0)
            .filter_map(|(id, a)| self.docs.get(id as usize)?.as_ref().map(|d| (d, a)))
            .collect();
        hits.sort_by(|(a, sa), (b, sb)| {
            sb.score
                .partial_cmp(&sa.score)
                .unwrap_or(Ordering::Equal)
                .then_with(|| b.modified.cmp(&a.modified))
                .then_with(|| a.file.cmp(&b.file))
        });
        let floor = hits
            .first()
            .map_or(0.0, |(_, a)| a.score * cutoff.min_share);
        let mut out = Vec::with_capacity(k.min(hits.len()));
        for (d, a) in hits {
            if out.len() == k || a.score < floor {
                break;
            }
            if !exclude(&d.file) {
                out.push(LexicalHit {
                    file: d.file.clone(),
                    score: a.score,
                    terms: a.terms,
                });
            }
        }
        out
    }

    /// IDF with the store-size floor, as a share of a one-document term's IDF.
    fn idf_norm(&self) -> impl Fn(usize) -> f64 {
        let n_eff = self.len().max(MIN_DOCS) as f64;
        let idf = move |df: usize| (1.0 + (n_eff - df as f64 + 0.5) / (df as f64 + 0.5)).ln();
        let idf_ref = idf(1);
        move |df| idf(df) / idf_ref
    }

    /// BM25F scores of every document matching a concept. Within a concept the best
    /// variant counts (a synonym or a corrected typo never adds to its original).
    fn score(&self, concepts: &[Concept]) -> FxHashMap<u32, Acc> {
        let n = self.len().max(1);
        let idf = self.idf_norm();
        let mut avg = [0f64; FIELDS];
        for (a, sum) in avg.iter_mut().zip(self.len_sums) {
            *a = (sum as f64 / n as f64).max(1.0);
        }
        let Options { weights, k1, b, .. } = self.opts;
        let mut scores: FxHashMap<u32, Acc> = FxHashMap::default();
        let mut best: FxHashMap<u32, f64> = FxHashMap::default();
        for concept in concepts {
            best.clear();
            for &(term, weight) in &concept.variants {
                let Some(list) = self.postings.get(term as usize).filter(|l| !l.is_empty()) else {
                    continue;
                };
                let term_idf = idf(list.len());
                for p in list {
                    let Some(doc) = self.docs.get(p.doc as usize).and_then(Option::as_ref) else {
                        continue;
                    };
                    let mut tf = 0.0;
                    for f in 0..FIELDS {
                        if p.tf[f] > 0 {
                            let norm = 1.0 - b + b * f64::from(doc.lens[f]) / avg[f];
                            tf += weights[f] * f64::from(p.tf[f]) / norm;
                        }
                    }
                    let s = concept.weight * weight * term_idf * tf / (k1 + tf);
                    let slot = best.entry(p.doc).or_insert(0.0);
                    if s > *slot {
                        *slot = s;
                    }
                }
            }
            for (&doc, &s) in &best {
                let acc = scores.entry(doc).or_default();
                acc.score += s;
                acc.terms += u32::from(concept.full);
            }
        }
        scores
    }

    /// Pseudo-relevance feedback: the name and description terms of the best documents
    /// that the query does not have, as low-weight extra concepts (see `expand`).
    fn feedback(&self, concepts: &[Concept], scores: &FxHashMap<u32, Acc>) -> Vec<Concept> {
        let mut top: Vec<(u32, f64)> = scores.iter().map(|(&d, a)| (d, a.score)).collect();
        top.sort_by(|a, b| {
            b.1.partial_cmp(&a.1)
                .unwrap_or(Ordering::Equal)
                .then(a.0.cmp(&b.0))
        });
        top.truncate(crate::expand::FEEDBACK_DOCS);
        let Some(&(_, best)) = top.first() else {
            return Vec::new();
        };
        let have: FxHashSet<u32> = concepts
            .iter()
            .flat_map(|c| c.variants.iter().map(|&(t, _)| t))
            .collect();
        let idf = self.idf_norm();
        let mut weight: FxHashMap<u32, f64> = FxHashMap::default();
        for &(doc, score) in &top {
            let Some(d) = self.docs.get(doc as usize).and_then(Option::as_ref) else {
                continue;
            };
            for &(term, tf) in &d.terms {
                if have.contains(&term) || (tf[0] == 0 && tf[1] == 0) {
                    continue;
                }
                let Some(text) = self.terms.get(term as usize) else {
                    continue;
                };
                if !crate::expand::feedback_term(text) {
                    continue;
                }
                let df = self.postings.get(term as usize).map_or(0, Vec::len);
                *weight.entry(term).or_default() += score / best * idf(df);
            }
        }
        let mut ranked: Vec<(u32, f64)> = weight.into_iter().collect();
        ranked.sort_by(|a, b| {
            b.1.partial_cmp(&a.1)
                .unwrap_or(Ordering::Equal)
                .then(a.0.cmp(&b.0))
        });
        ranked.truncate(crate::expand::FEEDBACK_TERMS);
        let Some(&(_, max)) = ranked.first() else {
            return Vec::new();
        };
        ranked
            .into_iter()
            .map(|(term, w)| Concept {
                variants: vec![(term, 1.0)],
                weight: crate::expand::FEEDBACK_WEIGHT * w / max,
                full: false,
            })
            .collect()
    }
}

/// The typo-lookup key of an ASCII term: first byte and length.
pub(crate) fn shape_of(token: &str) -> Option<(u8, u8)> {
    let first = *token.as_bytes().first()?;
    (token.is_ascii() && first.is_ascii_alphabetic() && token.len() <= 40)
        .then_some((first, token.len() as u8))
}

impl LexicalIndex {
    /// The indexed documents most similar to `doc` as a whole (name, description and body),
    /// best first, with their cosine similarity in `0.0..=1.0`: the documents' field-weighted
    /// term vectors (`(1 + ln tf) × idf`), compared by angle. `doc.file` itself is skipped,
    /// so a document already in the index can be compared with the others. Used to warn
    /// about near-duplicate memories.
    pub fn similar(&self, doc: LexicalDoc<'_>, k: usize) -> Vec<(String, f64)> {
        if k == 0 || self.is_empty() {
            return Vec::new();
        }
        let idf = self.idf_norm();
        let weights = self.opts.weights;
        let weigh = |tf: [u32; FIELDS]| {
            let w: f64 = (0..FIELDS).map(|f| weights[f] * f64::from(tf[f])).sum();
            if w > 0.0 { 1.0 + w.ln().max(0.0) } else { 0.0 }
        };
        // The new document's vector over the index's live terms (unknown terms only add to
        // its norm: they are words no other document shares).
        let mut counts: FxHashMap<String, [u32; FIELDS]> = FxHashMap::default();
        for (field, text) in [doc.name, doc.description, doc.body]
            .into_iter()
            .enumerate()
        {
            for_each_token(text, false, self.opts.stemmer, |token, _| {
                let slot = counts.entry(token.to_owned()).or_insert([0; FIELDS]);
                slot[field] = slot[field].saturating_add(1);
            });
        }
        let own = self.by_file.get(doc.file).copied();
        let mut norm = 0.0;
        let mut query: Vec<(u32, f64)> = Vec::new();
        for (token, tf) in &counts {
            let (id, df) = match self.dict.get(token.as_str()) {
                Some(&id) => {
                    let list = self
                        .postings
                        .get(id as usize)
                        .map_or(&[][..], Vec::as_slice);
                    let df = list.len()
                        - usize::from(own.is_some_and(|o| list.iter().any(|p| p.doc == o)));
                    (Some(id), df)
                }
                None => (None, 0),
            };
            let w = weigh(*tf) * idf(df.max(1));
            norm += w * w;
            if let Some(id) = id.filter(|_| df > 0) {
                query.push((id, w));
            }
        }
        if norm == 0.0 {
            return Vec::new();
        }
        let mut dots: FxHashMap<u32, f64> = FxHashMap::default();
        for &(term, w) in &query {
            for p in self.postings.get(term as usize).into_iter().flatten() {
                if Some(p.doc) != own {
                    *dots.entry(p.doc).or_default() +=
                        w * weigh(p.tf) * idf(self.doc_freq_of(term));
                }
            }
        }
        let mut out: Vec<(String, f64)> = dots
            .into_iter()
            .filter_map(|(id, dot)| {
                let d = self.docs.get(id as usize)?.as_ref()?;
                let n: f64 = d
                    .terms
                    .iter()
                    .map(|&(t, tf)| {
                        let w = weigh(tf) * idf(self.doc_freq_of(t));
                        w * w
                    })
                    .sum();
                (n > 0.0).then(|| (d.file.clone(), (dot / (n.sqrt() * norm.sqrt())).min(1.0)))
            })
            .collect();
        out.sort_by(|a, b| {
            b.1.partial_cmp(&a.1)
                .unwrap_or(Ordering::Equal)
                .then_with(|| a.0.cmp(&b.0))
        });
        out.truncate(k);
        out
    }

    fn doc_freq_of(&self, term: u32) -> usize {
        self.postings.get(term as usize).map_or(0, Vec::len)
    }
}
