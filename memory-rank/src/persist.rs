//! A compact byte encoding of a [`LexicalIndex`], so a host can keep it across processes
//! (the bytes only; where they are stored is the host's business). Decoding checks every
//! length, id and string and fails instead of trusting a damaged or foreign encoding; the
//! tokenizer's fingerprint is part of the header, so an index built by a different
//! tokenizer is refused rather than queried with mismatched tokens.

use rustc_hash::FxHashMap;

use crate::codec::{ByteReader, put_str, put_varint as put};
use crate::index::{Doc, LexicalIndex, Posting, shape_of};
use crate::stem::Stemmer;
use crate::tokenize::tokenize_with;
use crate::{FIELDS, Options};

const MAGIC: &[u8; 8] = b"pimemrx1";

/// Why bytes could not be decoded as an index.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DecodeError {
    /// The bytes do not start with this encoding's magic number and version.
    #[error("not a lexical index encoding (or an older version of it)")]
    Format,
    /// The index was built by a different tokenizer or stemmer.
    #[error("the index was built by a different tokenizer")]
    Tokenizer,
    /// The bytes end early or hold an impossible value.
    #[error("damaged lexical index encoding: {0}")]
    Damaged(&'static str),
}

impl From<&'static str> for DecodeError {
    /// A [`codec`](crate::codec) reader's description of damaged bytes.
    fn from(damage: &'static str) -> Self {
        DecodeError::Damaged(damage)
    }
}

/// A fingerprint of the tokenizer with `stemmer`: the hash of the tokens of a probe text
/// exercising every rule (case, compounds, camelCase, digits, stemming, stopwords, CJK).
/// Any change to tokenization changes it, so a persisted index built by an older tokenizer
/// is refused.
pub fn tokenizer_fingerprint(stemmer: Stemmer) -> u64 {
    const PROBE: &str = "The caches were CACHED; getUserById user_ids HTTPServer utf8 \
        Cargo.toml pre-commit running installed queries fixes uses statuses need \
        ÉCOLE Straße pass\u{200B}word 数据库超时 MySQL的超时 カタカナ a-b..c 2222 v2 IPv4";
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for t in tokenize_with(PROBE, stemmer) {
        for b in t.bytes().chain([0xff]) {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    }
    h ^ match stemmer {
        Stemmer::None => 1,
        Stemmer::Light => 2,
    }
}

impl LexicalIndex {
    /// The index as bytes (see [`LexicalIndex::decode`]). Documents are written in id
    /// order and terms in id order, so the same index always gives the same bytes.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(64 + self.terms.len() * 12 + self.docs.len() * 256);
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&tokenizer_fingerprint(self.opts.stemmer).to_le_bytes());
        put(&mut out, self.terms.len() as u64);
        for t in &self.terms {
            put_str(&mut out, t);
        }
        put(&mut out, self.docs.len() as u64);
        for slot in &self.docs {
            let Some(d) = slot else {
                out.push(0);
                continue;
            };
            out.push(1);
            put_str(&mut out, &d.file);
            put_str(&mut out, &d.modified);
            for len in d.lens {
                put(&mut out, u64::from(len));
            }
            put(&mut out, d.terms.len() as u64);
            let mut prev = 0u32;
            for &(term, tf) in &d.terms {
                // Terms are sorted by id: store the gaps.
                put(&mut out, u64::from(term - prev));
                prev = term;
                for f in tf {
                    put(&mut out, u64::from(f));
                }
            }
        }
        out
    }

    /// An index from [`LexicalIndex::encode`]'s bytes, ranking with `opts`. Fails on bytes
    /// from another format or tokenizer (`opts.stemmer` must be the one the index was built
    /// with) and on any inconsistency; never panics.
    pub fn decode(bytes: &[u8], opts: Options) -> Result<LexicalIndex, DecodeError> {
        if bytes.len() < 16 || &bytes[..8] != MAGIC {
            return Err(DecodeError::Format);
        }
        let mut fp = [0u8; 8];
        fp.copy_from_slice(&bytes[8..16]);
        if u64::from_le_bytes(fp) != tokenizer_fingerprint(opts.stemmer) {
            return Err(DecodeError::Tokenizer);
        }
        let mut r = ByteReader::new(&bytes[16..]);
        let mut index = LexicalIndex::with_options(opts);
        let n_terms = r.count(1)?;
        index.terms.reserve(n_terms);
        index.postings.reserve(n_terms);
        index.dict.reserve(n_terms);
        for id in 0..n_terms {
            let t = r.str()?;
            if t.is_empty() || index.dict.insert(t.into(), id as u32).is_some() {
                return Err(DecodeError::Damaged("empty or repeated term"));
            }
            if let Some(shape) = shape_of(t) {
                index.shapes.entry(shape).or_default().push(id as u32);
            }
            index.terms.push(t.into());
            index.postings.push(Vec::new());
        }
        let n_docs = r.count(1)?;
        index.docs.reserve(n_docs);
        let mut df = vec![0u32; n_terms];
        let mut by_file: FxHashMap<String, u32> = FxHashMap::default();
        for id in 0..n_docs {
            let id = id as u32;
            let present = r.byte()?;
            if present == 0 {
                index.docs.push(None);
                index.free.push(id);
                continue;
            }
            if present != 1 {
                return Err(DecodeError::Damaged("document marker"));
            }
            let file = r.str()?.to_owned();
            let modified = r.str()?.to_owned();
            let mut lens = [0u32; FIELDS];
            for len in &mut lens {
                *len = r.u32()?;
            }
            let n = r.count(1 + FIELDS)?;
            let mut terms = Vec::with_capacity(n);
            let mut term = 0u32;
            for _ in 0..n {
                let gap = r.u32()?;
                if !terms.is_empty() && gap == 0 {
                    return Err(DecodeError::Damaged("terms out of order"));
                }
                term = term
                    .checked_add(gap)
                    .filter(|&t| (t as usize) < n_terms)
                    .ok_or(DecodeError::Damaged("term id out of range"))?;
                let mut tf = [0u32; FIELDS];
                for f in &mut tf {
                    *f = r.u32()?;
                }
                terms.push((term, tf));
                df[term as usize] += 1;
            }
            for (sum, len) in index.len_sums.iter_mut().zip(lens) {
                *sum += u64::from(len);
            }
            if by_file.insert(file.clone(), id).is_some() {
                return Err(DecodeError::Damaged("repeated file"));
            }
            index.docs.push(Some(Doc {
                file,
                modified,
                lens,
                terms,
            }));
        }
        if !r.is_at_end() {
            return Err(DecodeError::Damaged("trailing bytes"));
        }
        // Postings sized exactly, filled in document order (as inserts would).
        for (list, n) in index.postings.iter_mut().zip(&df) {
            list.reserve_exact(*n as usize);
        }
        for (id, slot) in index.docs.iter().enumerate() {
            if let Some(d) = slot {
                for &(term, tf) in &d.terms {
                    index.postings[term as usize].push(Posting { doc: id as u32, tf });
                }
            }
        }
        index.free.reverse();
        index.by_file = by_file;
        Ok(index)
    }
}
