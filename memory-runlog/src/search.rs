//! Keyword search over run metadata (first prompt, status, model), summaries and
//! experiences: SQLite FTS5, kept current by triggers; no vector recall (PX-20).
//!
//! The user's words are quoted one by one (`"word"*`, a prefix match), so FTS5's query syntax
//! never reaches them: `search NOT (foo` finds runs containing those words. All words must
//! match (AND); hits are ordered by BM25, best first.

use rusqlite::params;
use serde::Serialize;

use crate::error::RunLogError;
use crate::ids::{ExpNo, RunNo};
use crate::log::RunLog;

/// What a hit is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", content = "ref", rename_all = "camelCase")]
pub enum HitRef {
    /// A run.
    Run(RunNo),
    /// An experience.
    Experience(ExpNo),
}

/// One search hit.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Hit {
    /// The run or experience.
    #[serde(flatten)]
    pub target: HitRef,
    /// Its title (first prompt, or the experience's title).
    pub title: String,
    /// The matching text around the hit, with `[` `]` around matched words.
    pub snippet: String,
}

/// The FTS5 query for the user's words: each word quoted as a prefix term, all required.
/// `None` when there is no word.
pub fn fts_query(words: &str) -> Option<String> {
    let terms: Vec<String> = words
        .split(|c: char| c.is_whitespace() || c == '"')
        .filter(|w| w.chars().any(char::is_alphanumeric))
        .map(|w| format!("\"{w}\"*"))
        .collect();
    (!terms.is_empty()).then(|| terms.join(" "))
}

impl RunLog {
    /// Runs and experiences matching every word, best first, at most `limit`.
    ///
    /// # Errors
    /// [`RunLogError::Sql`].
    pub fn search(&self, words: &str, limit: usize) -> Result<Vec<Hit>, RunLogError> {
        let Some(query) = fts_query(words) else {
            return Ok(Vec::new());
        };
        let mut st = self
            .conn
            .prepare_cached(
                "SELECT kind, ref, title, snippet(search, -1, '[', ']', '…', 12) FROM search \
                 WHERE search MATCH ?1 ORDER BY bm25(search, 0, 0, 2.0, 1.0) LIMIT ?2",
            )
            .map_err(RunLogError::sql("searching"))?;
        let rows = st
            .query_map(params![query, limit as i64], |r| {
                let kind: String = r.get(0)?;
                let number: u32 = r.get(1)?;
                Ok(Hit {
                    target: if kind == "run" {
                        HitRef::Run(RunNo(number))
                    } else {
                        HitRef::Experience(ExpNo(number))
                    },
                    title: r.get(2)?,
                    snippet: r.get(3)?,
                })
            })
            .map_err(RunLogError::sql("searching"))?;
        rows.collect::<rusqlite::Result<_>>()
            .map_err(RunLogError::sql("searching"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_become_quoted_prefix_terms() {
        assert_eq!(
            fts_query("deploy staging").as_deref(),
            Some("\"deploy\"* \"staging\"*")
        );
        assert_eq!(
            fts_query("NOT (foo\"").as_deref(),
            Some("\"NOT\"* \"(foo\"*")
        );
        assert_eq!(fts_query("  -- !! "), None);
    }
}
