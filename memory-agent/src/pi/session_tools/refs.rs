//! `@s:<query>` / `@as:<query>` session references (PS-05..PS-13): the tokens, the
//! completion candidates, and the expansion on submit.

use std::path::Path;

use memory_core::clock::iso_millis;

use super::Caller;
use crate::pi::sessions::{Scope, SessionCatalog, SessionError, SessionInfo};

/// At most this many completion candidates (PS-07).
pub const MAX_CANDIDATES: usize = 20;

/// Which sessions a reference looks in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RefScope {
    /// `@s:`: the named sessions of the caller's working directory.
    Cwd,
    /// `@as:`: the named sessions of every project in pi's session storage.
    All,
}

impl RefScope {
    /// The token's prefix (`@s:` or `@as:`).
    pub fn prefix(self) -> &'static str {
        match self {
            RefScope::Cwd => "@s:",
            RefScope::All => "@as:",
        }
    }

    fn scope(self, caller: &Caller) -> Scope {
        match self {
            RefScope::Cwd => Scope::Project(caller.cwd.clone()),
            RefScope::All => Scope::All,
        }
    }
}

/// One reference token in a text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RefToken<'a> {
    /// Byte range of the whole token (`@s:…`) in the text.
    pub range: std::ops::Range<usize>,
    /// Which prefix it has.
    pub scope: RefScope,
    /// What follows the prefix (a name query while typing, a full ID once completed).
    pub query: &'a str,
}

/// The reference tokens of `text` (PS-06): `@s:` or `@as:` at the start of a line or after
/// whitespace, up to the next whitespace. `x@s:id` is not a token (PS-V3); in `@s:my
/// session` the query is `my` (PS-V6). A prefix with nothing after it is a token with an
/// empty query.
///
/// ```
/// use memory_agent::pi::session_tools::{ref_tokens, RefScope};
/// let t = ref_tokens("see @s:abc-1 and x@s:no\n@as:def");
/// assert_eq!(t.len(), 2);
/// assert_eq!((t[0].scope, t[0].query), (RefScope::Cwd, "abc-1"));
/// assert_eq!((t[1].scope, t[1].query), (RefScope::All, "def"));
/// ```
pub fn ref_tokens(text: &str) -> Vec<RefToken<'_>> {
    let mut out = Vec::new();
    let mut prev_ws = true;
    let mut iter = text.char_indices().peekable();
    while let Some((i, c)) = iter.next() {
        if prev_ws && c == '@' {
            let rest = &text[i..];
            let scope = if rest.starts_with("@s:") {
                Some(RefScope::Cwd)
            } else if rest.starts_with("@as:") {
                Some(RefScope::All)
            } else {
                None
            };
            if let Some(scope) = scope {
                let q_start = i + scope.prefix().len();
                let q_end = text[q_start..]
                    .find(char::is_whitespace)
                    .map_or(text.len(), |n| q_start + n);
                out.push(RefToken {
                    range: i..q_end,
                    scope,
                    query: &text[q_start..q_end],
                });
                while iter.peek().is_some_and(|(j, _)| *j < q_end) {
                    iter.next();
                }
                prev_ws = false;
                continue;
            }
        }
        prev_ws = c.is_whitespace();
    }
    out
}

/// The token being typed at the end of `before_cursor`, if it is a reference: what the
/// completion provider completes (the reserved prefixes, PS-13).
///
/// ```
/// use memory_agent::pi::session_tools::{token_at_end, RefScope};
/// assert_eq!(token_at_end("look at @s:auth").map(|t| (t.scope, t.query)), Some((RefScope::Cwd, "auth")));
/// assert_eq!(token_at_end("look at @s:auth ").map(|t| t.query), None);
/// assert_eq!(token_at_end("@as:").map(|t| (t.scope, t.query)), Some((RefScope::All, "")));
/// assert_eq!(token_at_end("@src/main.rs"), None);
/// ```
pub fn token_at_end(before_cursor: &str) -> Option<RefToken<'_>> {
    ref_tokens(before_cursor)
        .pop()
        .filter(|t| t.range.end == before_cursor.len())
}

/// The sentence a valid reference becomes (PS-09): `Read or search <session name>
/// <absolute path> if more context is needed.`
pub fn reference_sentence(name: &str, path: &Path) -> String {
    format!(
        "Read or search {name} {} if more context is needed.",
        path.display()
    )
}

/// One completion candidate (PS-07).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    /// The full session ID (inserted as `@s:<id>` / `@as:<id>`, PS-08).
    pub id: String,
    /// The session name.
    pub name: String,
    /// The session's working directory.
    pub cwd: String,
    /// The session file.
    pub path: String,
    /// Last activity, ISO 8601.
    pub activity: String,
}

/// The named sessions of the reference's scope whose name contains `query`
/// (case-insensitively), the 20 most recently active first (PS-05..PS-07, PS-V5).
///
/// # Errors
/// A directory of the scope cannot be listed.
pub fn candidates(
    catalog: &SessionCatalog,
    caller: &Caller,
    scope: RefScope,
    query: &str,
) -> Result<Vec<Candidate>, SessionError> {
    Ok(catalog
        .named(&caller.storage, &scope.scope(caller), query, MAX_CANDIDATES)?
        .into_iter()
        .map(|s| Candidate {
            name: s.name.clone().unwrap_or_default(),
            activity: iso_millis(s.modified),
            cwd: s.cwd,
            path: s.path.display().to_string(),
            id: s.id,
        })
        .collect())
}

/// What [`expand_references`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Expansion {
    /// Nothing to replace (no token, or only unknown IDs): submit the input as it is.
    Unchanged,
    /// The input with every valid reference replaced.
    Expanded(String),
    /// The sessions could not be enumerated: the input stays unchanged and the user gets
    /// this warning (PS-11).
    Failed(String),
}

/// Replaces every reference whose query is the full ID of a session of its scope by
/// [`reference_sentence`] (PS-09). Only the token is replaced; the whitespace around it is
/// kept (VECTORS §Z 16). Unknown IDs stay as they are (PS-V2). Nothing of the referenced
/// conversation is inserted (PS-12).
///
/// Decision (VECTORS §Z 18): a full ID of an *unnamed* session is a valid reference too (an
/// RPC client can submit any ID, PS-10); its sentence names the session by its ID.
pub fn expand_references(text: &str, catalog: &SessionCatalog, caller: &Caller) -> Expansion {
    let tokens: Vec<RefToken<'_>> = ref_tokens(text)
        .into_iter()
        .filter(|t| !t.query.is_empty())
        .collect();
    if tokens.is_empty() {
        return Expansion::Unchanged;
    }
    // One listing per scope, for every ID of that scope at once.
    let mut found: Vec<Option<SessionInfo>> = vec![None; tokens.len()];
    for scope in [RefScope::Cwd, RefScope::All] {
        let at: Vec<usize> = (0..tokens.len())
            .filter(|&i| tokens[i].scope == scope)
            .collect();
        if at.is_empty() {
            continue;
        }
        let ids: Vec<&str> = at.iter().map(|&i| tokens[i].query).collect();
        match catalog.find_all(&caller.storage, &scope.scope(caller), &ids) {
            Ok(sessions) => {
                for (i, s) in at.into_iter().zip(sessions) {
                    found[i] = s;
                }
            }
            Err(e) => {
                return Expansion::Failed(format!(
                    "Session references were not expanded (the input is sent unchanged): {e}"
                ));
            }
        }
    }
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    let mut changed = false;
    for (t, s) in tokens.iter().zip(&found) {
        if let Some(s) = s {
            out.push_str(&text[at..t.range.start]);
            let path = std::path::absolute(&s.path).unwrap_or_else(|_| s.path.clone());
            out.push_str(&reference_sentence(
                s.name.as_deref().unwrap_or(&s.id),
                &path,
            ));
            at = t.range.end;
            changed = true;
        }
    }
    if !changed {
        return Expansion::Unchanged;
    }
    out.push_str(&text[at..]);
    Expansion::Expanded(out)
}
