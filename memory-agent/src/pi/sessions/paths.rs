//! Where pi keeps session files (`docs/pi-host.md` §h "Location").

use std::io;
use std::path::{Path, PathBuf};

use super::SessionError;

/// `<agentDir>/sessions`, pi's default session root.
///
/// ```
/// use std::path::Path;
/// use memory_agent::pi::sessions::default_session_root;
/// assert_eq!(default_session_root(Path::new("/home/u/.pi/agent")), Path::new("/home/u/.pi/agent/sessions"));
/// ```
pub fn default_session_root(agent_dir: &Path) -> PathBuf {
    agent_dir.join("sessions")
}

/// The per-project directory pi uses under `session_root` for `cwd`:
/// `--<cwd without one leading / or \, with every / \ : replaced by ->--`.
///
/// Only for the default layout; with `--session-dir`, `PI_CODING_AGENT_SESSION_DIR` or the
/// `sessionDir` setting, pi writes every session flat into that directory instead (search it
/// with a `cwd_filter`). A cwd that is not valid Unicode is converted lossily (pi's paths are
/// JavaScript strings).
///
/// ```
/// use std::path::Path;
/// use memory_agent::pi::sessions::session_dir_for_cwd;
/// assert_eq!(
///     session_dir_for_cwd(Path::new("/w/agent/sessions"), Path::new("/tmp/pi-e2e/work/project")),
///     Path::new("/w/agent/sessions/--tmp-pi-e2e-work-project--"),
/// );
/// ```
pub fn session_dir_for_cwd(session_root: &Path, cwd: &Path) -> PathBuf {
    session_root.join(encode_cwd(&cwd.to_string_lossy()))
}

/// The directory-name encoding of [`session_dir_for_cwd`].
pub(crate) fn encode_cwd(cwd: &str) -> String {
    let rest = cwd
        .strip_prefix('/')
        .or_else(|| cwd.strip_prefix('\\'))
        .unwrap_or(cwd);
    let mut out = String::with_capacity(rest.len() + 4);
    out.push_str("--");
    out.extend(rest.chars().map(|c| match c {
        '/' | '\\' | ':' => '-',
        c => c,
    }));
    out.push_str("--");
    out
}

/// Every `*.jsonl` file directly in `dir`, sorted by path. A missing directory has none.
pub(crate) fn session_files(dir: &Path) -> Result<Vec<PathBuf>, SessionError> {
    let read_dir = match std::fs::read_dir(dir) {
        Ok(r) => r,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(source) => {
            return Err(SessionError::ReadDir {
                path: dir.to_path_buf(),
                source,
            });
        }
    };
    let mut files = Vec::new();
    for entry in read_dir {
        let entry = entry.map_err(|source| SessionError::ReadDir {
            path: dir.to_path_buf(),
            source,
        })?;
        let path = entry.path();
        let is_jsonl = path
            .file_name()
            .is_some_and(|n| n.as_encoded_bytes().ends_with(b".jsonl"));
        if is_jsonl && path.is_file() {
            files.push(path);
        }
    }
    files.sort();
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodes_like_pi() {
        // docs/pi-host.md §h example.
        assert_eq!(
            encode_cwd("/tmp/pi-e2e/work/project"),
            "--tmp-pi-e2e-work-project--"
        );
        // Only one leading separator is dropped.
        assert_eq!(encode_cwd("//srv/x"), "---srv-x--");
        // Windows paths.
        assert_eq!(encode_cwd("C:\\Users\\me\\repo"), "--C--Users-me-repo--");
        assert_eq!(encode_cwd("\\\\server\\share"), "---server-share--");
        assert_eq!(encode_cwd("/"), "----");
        assert_eq!(encode_cwd("/home/u/my project"), "--home-u-my project--");
    }

    #[test]
    fn missing_dir_lists_nothing() {
        let tmp = tempfile::tempdir().unwrap();
        assert!(session_files(&tmp.path().join("nope")).unwrap().is_empty());
    }
}
