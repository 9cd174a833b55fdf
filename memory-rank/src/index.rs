//! The inverted index: documents in, ranked hits out.

use std::cmp::Ordering;

use rustc_hash::FxHashMap;

use crate::tokenize::{Kind, for_each_token};
use crate::{
    B, CJK_UNIGRAM_WEIGHT, Cutoff, FIELDS, GENERIC_WEIGHT, K1, LexicalDoc, LexicalHit, MIN_DOCS,
    WEIGHTS,
};

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
    by_file: FxHashMap<String, u32>,
    dict: FxHashMap<Box<str>, u32>,
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
        let mut counts: FxHashMap<u32, [u32; FIELDS]> = FxHashMap::default();
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
        let terms = query_terms(query);
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
        let mut scores: FxHashMap<u32, (f64, u32)> = FxHashMap::default();
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
