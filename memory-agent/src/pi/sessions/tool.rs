//! The memory tool's `search` with `scope: "sessions"` for one project (PM-41).

use std::path::PathBuf;

use super::{
    SessionError, SessionSearchOptions, default_session_root, list_sessions,
    render_session_results, search_sessions, session_dir_for_cwd,
};

/// Where a project's past sessions live, and how to search them. Implements
/// [`memory_core::tool::SessionSearch`] so hosts pass it to `memory_core::tool::execute`.
#[derive(Debug, Clone)]
pub struct ProjectSessions {
    /// The session directory to scan: pi's per-cwd directory under the session root, or a
    /// flat `sessionDir`.
    pub dir: PathBuf,
    /// In a flat directory, only sessions whose header `cwd` is this path.
    pub cwd_filter: Option<PathBuf>,
    /// Limits (`sessionSearch.maxSessions` / `maxMatches`).
    pub options: SessionSearchOptions,
}

impl ProjectSessions {
    /// pi's default layout: `<agentDir>/sessions/--<cwd>--/`.
    pub fn for_agent_dir(
        agent_dir: &std::path::Path,
        cwd: &std::path::Path,
        options: SessionSearchOptions,
    ) -> Self {
        ProjectSessions {
            dir: session_dir_for_cwd(&default_session_root(agent_dir), cwd),
            cwd_filter: None,
            options,
        }
    }

    /// A flat session directory (`--session-dir`, `PI_CODING_AGENT_SESSION_DIR`, the
    /// `sessionDir` setting), filtered on the header `cwd`.
    pub fn flat(dir: PathBuf, cwd: PathBuf, options: SessionSearchOptions) -> Self {
        ProjectSessions {
            dir,
            cwd_filter: Some(cwd),
            options,
        }
    }
}

impl ProjectSessions {
    /// How many sessions the project has, counted as pi's `SessionManager.list(cwd)` would
    /// list them (the dream nudge's count).
    ///
    /// # Errors
    /// [`SessionError::ReadDir`] when the directory exists but cannot be listed; a missing
    /// directory counts 0.
    pub fn count(&self) -> Result<u64, SessionError> {
        Ok(list_sessions(&self.dir, self.cwd_filter.as_deref())?.len() as u64)
    }
}

impl memory_core::tool::SessionSearch for ProjectSessions {
    fn search_sessions(&self, query: &str) -> Result<String, String> {
        search_sessions(&self.dir, self.cwd_filter.as_deref(), query, &self.options)
            .map(|found| render_session_results(&found))
            .map_err(|e| e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use memory_core::tool::SessionSearch;

    #[test]
    fn missing_directory_means_no_matches_and_blank_query_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let s = ProjectSessions::for_agent_dir(
            tmp.path(),
            "/home/u/app".as_ref(),
            SessionSearchOptions::default(),
        );
        assert_eq!(
            s.search_sessions("anything").unwrap(),
            "No matches in sessions."
        );
        assert_eq!(
            s.search_sessions("  ").unwrap_err(),
            "query is required for search"
        );
    }
}
