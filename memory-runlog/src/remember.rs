//! `/experience remember E3` (beyond pi-experience): an experience becomes a memory entry
//! through the [`Store`], so what was learned reaches later sessions through the index and
//! surfacing. The store validates the entry and refuses secrets like any other write; a
//! refused write changes neither the memory directory nor the run log.

use memory_core::{AddRequest, EntryType, Store, StoreError};

use crate::error::ExperienceError;
use crate::ids::ExpNo;
use crate::log::RunLog;
use crate::texts;

/// Why an experience could not become a memory.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RememberError {
    /// The experience is unknown, merged, or the run log failed.
    #[error(transparent)]
    Experience(#[from] ExperienceError),
    /// The store refused the entry (validation, a secret, a lock).
    #[error("{exp} could not be saved as a memory: {source}")]
    Store {
        /// The experience.
        exp: ExpNo,
        /// The store's error.
        source: StoreError,
    },
    /// An experience without a summary has nothing to remember.
    #[error("{0} has no summary yet: give it one (experience tool, action update) first")]
    Empty(ExpNo),
}

/// What was saved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Remembered {
    /// The store's `Saved "<name>" (<file>).` text.
    pub saved: String,
    /// The entry file.
    pub file: String,
}

/// The entry body an experience becomes: its summary, then where it came from.
pub fn entry_body(e: &crate::ExperienceRow) -> String {
    let sources: Vec<String> = e.sources.iter().map(ToString::to_string).collect();
    let mut body = e.summary.trim().to_owned();
    body.push_str(&format!("\n\nFrom experience {}", e.number));
    if !sources.is_empty() {
        body.push_str(&format!(" (runs {})", sources.join(", ")));
    }
    if let Some(start) = e.range.start {
        body.push_str(&format!(
            ", {} – {}",
            texts::time(start),
            e.range
                .end
                .map(texts::time)
                .unwrap_or_else(|| "?".to_owned())
        ));
    }
    body.push_str(" in the run log.");
    body
}

/// Saves experience `exp` as a project memory named after its title, then records the entry
/// file on the experience.
///
/// # Errors
/// [`RememberError`]; on a store refusal nothing is written anywhere.
pub fn remember(
    log: &mut RunLog,
    store: &Store,
    exp: ExpNo,
    at: i64,
) -> Result<Remembered, RememberError> {
    let e = log.experience(exp)?;
    if e.summary.trim().is_empty() {
        return Err(RememberError::Empty(exp));
    }
    let out = store
        .add(AddRequest {
            name: e.title.clone(),
            description: None,
            entry_type: Some(EntryType::Project),
            body: entry_body(&e),
            created: None,
        })
        .map_err(|source| RememberError::Store { exp, source })?;
    log.set_remembered(exp, &out.file, at)?;
    Ok(Remembered {
        saved: out.saved_text(),
        file: out.file,
    })
}
