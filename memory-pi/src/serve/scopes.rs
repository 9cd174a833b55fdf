//! The frozen user and team sections (issue 16): `memory_user` and `memory_team`, computed at
//! `session/start` from memory-core's `Scopes::extra_sections` and frozen for the session
//! like `memory_index` (recorded by the extension, replayed on `-c`, fork and reload, fresh on
//! `/new`).
//!
//! Surfacing ranks the user's entries and, when trusted, the team's together with the
//! project's ([`surfacing_extra`]); they reach the model as `Name (user memory)` /
//! `Name (team memory)`.
//!
//! Decision: the team section needs `trusted` (pi's `ctx.isProjectTrusted()`, docs/pi-host.md
//! §g): team memory is repository content written by others. pi 1.6.0 asks for trust only
//! when the project has trust-requiring resources (`.pi/settings.json`, ...); a repository
//! whose only `.pi/` content is `memory/` is trusted by pi, so its team memory is injected.
//!
//! Decision: like `memory_index`, nothing is sent while memory is off or paused at the start;
//! unlike it, switching memory off or on mid-session leaves these two sections as they were
//! until the next session (they are read once, at the start).

use std::sync::{Arc, OnceLock};

use serde_json::Value;

use memory_core::{Scope, Scopes, StoredEntry, home_dir};

use super::protocol::{ScopeSectionValue, ScopeSectionsRecord};
use super::session::Session;

/// The sections to set, and the record to append when they were computed fresh.
pub(super) fn start_sections(
    session: &Session,
    recorded: Option<&Value>,
) -> (Vec<ScopeSectionValue>, Option<ScopeSectionsRecord>) {
    if session.live.lock().suspended {
        return (Vec::new(), None);
    }
    let replayed = (session.info.reason != "new")
        .then(|| recorded.cloned())
        .flatten()
        .and_then(|v| serde_json::from_value::<ScopeSectionsRecord>(v).ok());
    if let Some(record) = replayed {
        return (record.sections, None);
    }
    if session.project_if_open().is_none() {
        return (Vec::new(), None);
    }
    let sections = Scopes::open(&session.cfg, &session.info.cwd, None, home_dir().as_deref())
        .ok()
        .and_then(|scopes| {
            scopes
                .extra_sections(&session.cfg.scopes, session.info.trusted)
                .ok()
        })
        .unwrap_or_default();
    let sections: Vec<ScopeSectionValue> = sections
        .into_iter()
        .map(|s| ScopeSectionValue {
            name: s.name.to_owned(),
            value: s.value,
        })
        .collect();
    // Decision: nothing is recorded when there is no section, so a session with project
    // memories only has exactly the entries it had before scopes existed; such a session
    // computes the sections again when continued.
    let record = (!sections.is_empty()).then(|| ScopeSectionsRecord {
        sections: sections.clone(),
    });
    (sections, record)
}

/// The session's user and team stores, opened at first use and kept (their listing caches
/// stay warm across turns).
#[derive(Debug, Default)]
pub(super) struct ScopeStores(OnceLock<Option<Scopes>>);

/// The label of user entries in surfacing (`Name (user memory)`).
const USER_LABEL: &str = "user memory";
/// The label of team entries in surfacing: marks them as team-provided.
const TEAM_LABEL: &str = "team memory";

/// Entries of the user scope and, when pi trusts the project, of the team scope, labelled
/// for surfacing, which ranks them together with the project's (memory-agent's
/// `SurfacingRequest::extra`). Unreadable scopes contribute nothing.
pub(super) fn surfacing_extra(session: &Session) -> Vec<(String, Arc<StoredEntry>)> {
    let Some(scopes) = session
        .scopes
        .0
        .get_or_init(|| {
            Scopes::open(&session.cfg, &session.info.cwd, None, home_dir().as_deref()).ok()
        })
        .as_ref()
    else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut take = |scope: Scope, label: &str| {
        if let Ok(entries) = scopes.store(scope).and_then(|s| {
            s.list()
                .map_err(|source| memory_core::ScopeError::Store { scope, source })
        }) {
            out.extend(entries.into_iter().map(|e| (label.to_owned(), e)));
        }
    };
    if session.info.trusted && scopes.available().contains(&Scope::Team) {
        take(Scope::Team, TEAM_LABEL);
    }
    take(Scope::User, USER_LABEL);
    out
}
