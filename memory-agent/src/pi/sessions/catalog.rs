//! A cached listing of pi's session files, for the `@s:` / `@as:` references and
//! `ask-session` (PS-05..PS-08, PS-23).
//!
//! pi's own listing (`SessionManager.listAll`) parses every file completely on every call:
//! the session name can be set anywhere in a file (`/name` appends a `session_info` entry),
//! so a listing must read every byte. With 10,000 sessions that is far too slow for an
//! autocomplete that runs on every keystroke. [`SessionCatalog`] reads each file once and
//! remembers, per path, its size, modification time and inode with what was found (header,
//! name, last activity). A later listing only `stat`s each file:
//! - unchanged (same size, mtime and inode): the cached entry is used as it is;
//! - grown with the same header line (pi appends one line per entry): only the appended
//!   complete lines are read, continuing the name and activity from the cached state;
//! - anything else (shorter, replaced, rewritten header): the whole file is read again.
//!
//! The rules are those of [`super::list_sessions`] (header, latest `session_info` name,
//! last user/assistant activity, newest first, ties by path), so a cached listing equals a
//! fresh one; a property test checks it after random appends.
//!
//! # Limitations
//! - A file rewritten in place with the same size, inode and modification time (to the
//!   nanosecond) is not noticed until it changes again.
//! - A partial last line (pi mid-append) is not consumed; it is read once it is complete.
//! - Every listing still `stat`s every file of its scope (in parallel; about what `find`
//!   costs over the same files: 10,000 files in tens of milliseconds). Going below that would
//!   need change notification (inotify), which this catalog does not use.
//! - The cache grows with the number of session files seen (a few hundred bytes each) and
//!   lives as long as the catalog (the sidecar keeps one per pi session runtime).

use std::collections::HashMap;
use std::ffi::{OsStr, OsString};
use std::fs::{self, File};
use std::io::{self, Read, Seek, SeekFrom};
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::SystemTime;

use jiff::Timestamp;

use super::SessionError;
use super::matcher::fold;
use super::paths::{default_session_root, session_dir_for_cwd};
use super::scan::{self, NameTracker, for_each_region, last_activity_in, parse_iso, read_header};
use super::search::{SessionInfo, run_ordered};

/// Where pi keeps the sessions of every project.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SessionStorage {
    /// pi's default layout: one `--<encoded cwd>--` directory per project under `root`
    /// (`<agentDir>/sessions`).
    PerCwd {
        /// The session root.
        root: PathBuf,
    },
    /// One flat directory for every project (`--session-dir`, `PI_CODING_AGENT_SESSION_DIR`,
    /// the `sessionDir` setting); a project's sessions are those whose header `cwd` is it.
    Flat {
        /// The directory.
        dir: PathBuf,
    },
}

impl SessionStorage {
    /// The storage pi uses, from its agent directory, the session's cwd and the session
    /// directory pi reports (`ctx.sessionManager.getSessionDir()`): the default layout when
    /// that directory is absent or is the cwd's default directory, else a flat directory.
    ///
    /// ```
    /// use std::path::Path;
    /// use memory_agent::pi::sessions::SessionStorage;
    /// let agent = Path::new("/home/u/.pi/agent");
    /// let cwd = Path::new("/home/u/app");
    /// assert_eq!(
    ///     SessionStorage::detect(agent, cwd, Some(Path::new("/home/u/.pi/agent/sessions/--home-u-app--"))),
    ///     SessionStorage::PerCwd { root: "/home/u/.pi/agent/sessions".into() },
    /// );
    /// assert_eq!(
    ///     SessionStorage::detect(agent, cwd, Some(Path::new("/data/pi-sessions"))),
    ///     SessionStorage::Flat { dir: "/data/pi-sessions".into() },
    /// );
    /// ```
    pub fn detect(agent_dir: &Path, cwd: &Path, session_dir: Option<&Path>) -> SessionStorage {
        let root = default_session_root(agent_dir);
        match session_dir {
            // pi reports "" for an in-memory session (`--no-session`): no directory.
            Some(dir) if dir.as_os_str().is_empty() => SessionStorage::PerCwd { root },
            Some(dir) if !same_dir(dir, &session_dir_for_cwd(&root, cwd)) => SessionStorage::Flat {
                dir: dir.to_path_buf(),
            },
            _ => SessionStorage::PerCwd { root },
        }
    }

    /// The directory holding `cwd`'s sessions, and the header-`cwd` filter it needs.
    pub fn project(&self, cwd: &Path) -> (PathBuf, Option<PathBuf>) {
        match self {
            SessionStorage::PerCwd { root } => (session_dir_for_cwd(root, cwd), None),
            SessionStorage::Flat { dir } => (dir.clone(), Some(cwd.to_path_buf())),
        }
    }

    /// Every directory that may hold sessions of `scope`.
    fn dirs(&self, scope: &Scope) -> Result<Vec<PathBuf>, SessionError> {
        match (self, scope) {
            (_, Scope::Project(cwd)) => Ok(vec![self.project(cwd).0]),
            (SessionStorage::Flat { dir }, Scope::All) => Ok(vec![dir.clone()]),
            (SessionStorage::PerCwd { root }, Scope::All) => {
                let read_dir = match fs::read_dir(root) {
                    Ok(r) => r,
                    Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
                    Err(source) => {
                        return Err(SessionError::ReadDir {
                            path: root.clone(),
                            source,
                        });
                    }
                };
                let mut dirs = Vec::new();
                for entry in read_dir {
                    let entry = entry.map_err(|source| SessionError::ReadDir {
                        path: root.clone(),
                        source,
                    })?;
                    let is_dir = match entry.file_type() {
                        Ok(t) if t.is_symlink() => entry.path().is_dir(),
                        Ok(t) => t.is_dir(),
                        Err(_) => false,
                    };
                    if is_dir {
                        dirs.push(entry.path());
                    }
                }
                dirs.sort();
                Ok(dirs)
            }
        }
    }
}

/// Which sessions a listing covers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scope {
    /// The sessions of one project (its working directory, as pi recorded it).
    Project(PathBuf),
    /// Every project in the storage.
    All,
}

/// What the catalog remembers about one file.
#[derive(Debug, Clone)]
struct Cached {
    /// The `stat` the entry was read at.
    stamp: Stamp,
    /// Bytes consumed: the end of the last complete line read.
    consumed: u64,
    /// The header line, to notice a rewritten file that only grew.
    header_line: Vec<u8>,
    id: String,
    cwd: String,
    parent_session: Option<String>,
    created: Option<Timestamp>,
    name: Option<String>,
    /// `name`, case-folded for the name queries.
    folded_name: Option<String>,
    /// The last user/assistant activity found in the consumed lines.
    activity: Option<Timestamp>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stamp {
    len: u64,
    mtime: Option<SystemTime>,
    ino: u64,
}

impl Stamp {
    fn of(meta: &fs::Metadata) -> Stamp {
        #[cfg(unix)]
        let ino = std::os::unix::fs::MetadataExt::ino(meta);
        #[cfg(not(unix))]
        let ino = 0;
        Stamp {
            len: meta.len(),
            mtime: meta.modified().ok(),
            ino,
        }
    }
}

impl Cached {
    fn info(&self, path: &Path) -> SessionInfo {
        let modified = self
            .activity
            .or(self.created)
            .or_else(|| self.stamp.mtime.and_then(scan::from_system_time))
            .unwrap_or(Timestamp::UNIX_EPOCH);
        SessionInfo {
            path: path.to_path_buf(),
            id: self.id.clone(),
            cwd: self.cwd.clone(),
            name: self.name.clone(),
            parent_session: self.parent_session.clone(),
            created: self.created,
            modified,
        }
    }
}

/// A listing of session files that remembers what it read (see the module docs).
///
/// ```
/// use memory_agent::pi::sessions::{Scope, SessionCatalog, SessionStorage};
/// let tmp = tempfile::tempdir()?;
/// let dir = tmp.path().join("--home-u-app--");
/// std::fs::create_dir_all(&dir)?;
/// std::fs::write(dir.join("2026-01-01T00-00-00-000Z_s1.jsonl"), concat!(
///     r#"{"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/home/u/app"}"#, "\n",
///     r#"{"type":"session_info","id":"a1","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","name":"Refactor auth"}"#, "\n",
/// ))?;
/// let catalog = SessionCatalog::new();
/// let storage = SessionStorage::PerCwd { root: tmp.path().to_path_buf() };
/// let named = catalog.named(&storage, &Scope::All, "AUTH", 20)?;
/// assert_eq!(named[0].name.as_deref(), Some("Refactor auth"));
/// assert_eq!(catalog.find(&storage, &Scope::Project("/home/u/app".into()), "s1")?.unwrap().id, "s1");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Default)]
pub struct SessionCatalog {
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    /// Incremented by every refresh; a file not seen by the latest one is forgotten.
    generation: u64,
    /// Per directory, per file name.
    dirs: HashMap<PathBuf, HashMap<OsString, Slot>>,
}

#[derive(Debug)]
struct Slot {
    stamp: Stamp,
    seen: u64,
    /// `None`: not a session file (remembered, so it is not read again until it changes).
    entry: Option<Cached>,
}

impl SessionCatalog {
    /// An empty catalog.
    pub fn new() -> SessionCatalog {
        SessionCatalog::default()
    }

    /// Every session of `scope`, newest activity first (ties: path order), as
    /// [`super::list_sessions`] lists them. Unreadable and foreign files are skipped.
    ///
    /// # Errors
    /// [`SessionError::ReadDir`] when a directory of the scope exists but cannot be listed.
    pub fn list(
        &self,
        storage: &SessionStorage,
        scope: &Scope,
    ) -> Result<Vec<SessionInfo>, SessionError> {
        let mut out = Vec::new();
        self.each(storage, scope, |dir, name, c| {
            out.push(c.info(&dir.join(name)))
        })?;
        sort_newest_first(&mut out);
        Ok(out)
    }

    /// The named sessions of `scope` whose name contains `query` case-insensitively (per
    /// character Unicode lowercase; an empty query matches every name), newest activity
    /// first, at most `limit` (PS-05..PS-07).
    ///
    /// # Errors
    /// As [`SessionCatalog::list`].
    pub fn named(
        &self,
        storage: &SessionStorage,
        scope: &Scope,
        query: &str,
        limit: usize,
    ) -> Result<Vec<SessionInfo>, SessionError> {
        let q = fold(query);
        let mut out = Vec::new();
        self.each(storage, scope, |dir, name, c| {
            if c.folded_name.as_deref().is_some_and(|n| n.contains(&q)) {
                out.push(c.info(&dir.join(name)));
            }
        })?;
        sort_newest_first(&mut out);
        out.truncate(limit);
        Ok(out)
    }

    /// The session of `scope` whose id is exactly `id`, if any (the newest one when
    /// several files share the id).
    ///
    /// # Errors
    /// As [`SessionCatalog::list`].
    pub fn find(
        &self,
        storage: &SessionStorage,
        scope: &Scope,
        id: &str,
    ) -> Result<Option<SessionInfo>, SessionError> {
        Ok(self.find_all(storage, scope, &[id])?.pop().flatten())
    }

    /// [`SessionCatalog::find`] for several ids with one listing, in the order given.
    ///
    /// # Errors
    /// As [`SessionCatalog::list`].
    pub fn find_all(
        &self,
        storage: &SessionStorage,
        scope: &Scope,
        ids: &[&str],
    ) -> Result<Vec<Option<SessionInfo>>, SessionError> {
        let mut found: Vec<Vec<SessionInfo>> = vec![Vec::new(); ids.len()];
        self.each(storage, scope, |dir, name, c| {
            for (i, id) in ids.iter().enumerate() {
                if c.id == *id {
                    found[i].push(c.info(&dir.join(name)));
                }
            }
        })?;
        Ok(found
            .into_iter()
            .map(|mut v| {
                sort_newest_first(&mut v);
                v.into_iter().next()
            })
            .collect())
    }

    /// Brings the cache up to date for the scope's directories, then calls `f` with each
    /// session of the scope (directory, file name, what is known).
    fn each(
        &self,
        storage: &SessionStorage,
        scope: &Scope,
        mut f: impl FnMut(&Path, &OsStr, &Cached),
    ) -> Result<(), SessionError> {
        let dirs = storage.dirs(scope)?;
        let filter = match (storage, scope) {
            (SessionStorage::Flat { .. }, Scope::Project(cwd)) => Some(cwd.as_path()),
            _ => None,
        };
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        refresh(&mut state, &dirs)?;
        for dir in &dirs {
            let Some(files) = state.dirs.get(dir) else {
                continue;
            };
            for (name, slot) in files {
                if let Some(c) = &slot.entry
                    && filter.is_none_or(|cwd| Path::new(&c.cwd) == cwd)
                {
                    f(dir, name, c);
                }
            }
        }
        Ok(())
    }
}

/// Newest activity first, ties by path (the order of [`super::list_sessions`]).
fn sort_newest_first(v: &mut [SessionInfo]) {
    v.sort_by(|a, b| {
        b.modified
            .cmp(&a.modified)
            .then_with(|| a.path.cmp(&b.path))
    });
}

/// Brings `state` up to date for `dirs`: one `stat` per file, reads only for new or changed
/// files (in parallel), forgets files that are gone.
fn refresh(state: &mut State, dirs: &[PathBuf]) -> Result<(), SessionError> {
    state.generation += 1;
    let generation = state.generation;
    // Directories are listed and their files `stat`ed in parallel: on a warm catalog that is
    // all the work there is.
    let threads = |jobs: usize| {
        std::thread::available_parallelism()
            .map(|n| n.get().min(4))
            .unwrap_or(1)
            .clamp(1, jobs.max(1))
    };
    let listed = run_ordered(
        dirs.len(),
        threads(dirs.len()),
        |i, _| list_dir(&dirs[i]),
        |_| false,
    );
    // (directory, file name, stamp, what was known before)
    let mut work: Vec<(PathBuf, OsString, Stamp, Option<Cached>)> = Vec::new();
    for (dir, listing) in dirs.iter().zip(listed) {
        // `None`: the directory does not exist (its files are forgotten below).
        let listing = match listing {
            Some(result) => result?,
            None => None,
        };
        let files = state.dirs.entry(dir.clone()).or_default();
        for (name, stamp) in listing.into_iter().flatten() {
            match files.get_mut(&name) {
                Some(slot) if slot.stamp == stamp => slot.seen = generation,
                Some(slot) => work.push((dir.clone(), name, stamp, slot.entry.clone())),
                None => work.push((dir.clone(), name, stamp, None)),
            }
        }
    }
    let read = run_ordered(
        work.len(),
        threads(work.len()),
        |k, buf| {
            let (dir, name, stamp, previous) = &work[k];
            read_entry(&dir.join(name), *stamp, previous.as_ref(), buf)
        },
        |_| false,
    );
    for ((dir, name, stamp, _), result) in work.into_iter().zip(read) {
        // An unreadable file is not remembered: it is tried again next time.
        if let Some(Ok(entry)) = result {
            state.dirs.entry(dir).or_default().insert(
                name,
                Slot {
                    stamp,
                    seen: generation,
                    entry,
                },
            );
        }
    }
    for dir in dirs {
        if let Some(files) = state.dirs.get_mut(dir) {
            files.retain(|_, slot| slot.seen == generation);
        }
    }
    Ok(())
}

/// The `*.jsonl` files of `dir` with their stamps; `Ok(None)` when `dir` does not exist.
fn list_dir(dir: &Path) -> Result<Option<Vec<(OsString, Stamp)>>, SessionError> {
    let read_dir = match fs::read_dir(dir) {
        Ok(r) => r,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(source) => {
            return Err(SessionError::ReadDir {
                path: dir.to_path_buf(),
                source,
            });
        }
    };
    let mut out = Vec::new();
    for entry in read_dir {
        let entry = entry.map_err(|source| SessionError::ReadDir {
            path: dir.to_path_buf(),
            source,
        })?;
        let name = entry.file_name();
        if !name.as_encoded_bytes().ends_with(b".jsonl") {
            continue;
        }
        // `DirEntry::metadata` is an `fstatat` relative to the directory (no path walk); a
        // symlink is followed, as pi's `statSync` does. A file that vanished since the
        // directory was read is skipped.
        let meta = match entry.file_type() {
            Ok(t) if t.is_symlink() => fs::metadata(entry.path()),
            _ => entry.metadata(),
        };
        match meta {
            Ok(m) if m.is_file() => out.push((name, Stamp::of(&m))),
            _ => {}
        }
    }
    Ok(Some(out))
}

/// Reads what changed in one file since `previous`. `Ok(None)`: not a session file.
fn read_entry(
    path: &Path,
    stamp: Stamp,
    previous: Option<&Cached>,
    buf: &mut Vec<u8>,
) -> io::Result<Option<Cached>> {
    let mut file = File::open(path)?;
    if let Some(prev) = previous
        && stamp.ino == prev.stamp.ino
        && stamp.len >= prev.consumed
        && same_prefix(&mut file, &prev.header_line)?
    {
        let mut next = prev.clone();
        next.stamp = stamp;
        file.seek(SeekFrom::Start(prev.consumed))?;
        scan_lines(&mut file.take(stamp.len - prev.consumed), buf, &mut next)?;
        return Ok(Some(next));
    }
    let Some((header_end, header)) = read_header(&mut file, stamp.len, buf)? else {
        return Ok(None);
    };
    let header_line = scan::read_at(&mut file, 0, header_end as usize, buf).map(|n| {
        let line = &buf[..n];
        line.strip_suffix(b"\n").unwrap_or(line).to_vec()
    })?;
    let mut entry = Cached {
        stamp,
        consumed: header_end,
        header_line,
        id: header.id,
        cwd: header.cwd,
        parent_session: header.parent_session,
        created: header.timestamp.as_deref().and_then(parse_iso),
        name: None,
        folded_name: None,
        activity: None,
    };
    if header_end as usize > entry.header_line.len() {
        file.seek(SeekFrom::Start(header_end))?;
        scan_lines(
            &mut file.take(stamp.len.saturating_sub(header_end)),
            buf,
            &mut entry,
        )?;
    } else {
        // The header is the whole file, without a line break yet.
        entry.consumed = 0;
    }
    Ok(Some(entry))
}

/// Whether the file starts with `line` followed by a line break.
fn same_prefix(file: &mut File, line: &[u8]) -> io::Result<bool> {
    let mut buf = Vec::new();
    let n = scan::read_at(file, 0, line.len() + 1, &mut buf)?;
    Ok(n == line.len() + 1 && buf[..line.len()] == *line && buf[line.len()] == b'\n')
}

/// Reads the complete lines of `r`, updating the name, the activity and `consumed`.
fn scan_lines(r: &mut impl Read, buf: &mut Vec<u8>, entry: &mut Cached) -> io::Result<()> {
    let mut names = NameTracker::starting_with(entry.name.take());
    let mut consumed = entry.consumed;
    let mut activity = entry.activity;
    for_each_region(r, buf, |region| {
        // Only complete lines count: a partial last line is read again once it is whole.
        let complete = match memchr::memrchr(b'\n', region) {
            Some(i) => &region[..=i],
            None => &region[..0],
        };
        if !complete.is_empty() {
            names.feed(complete);
            if let Some(t) = last_activity_in(&complete[..complete.len() - 1]) {
                activity = Some(t);
            }
            consumed += complete.len() as u64;
        }
        ControlFlow::Continue(())
    })?;
    entry.name = names.into_name();
    entry.folded_name = entry.name.as_deref().map(fold);
    entry.activity = activity;
    entry.consumed = consumed;
    Ok(())
}

fn same_dir(a: &Path, b: &Path) -> bool {
    a == b
        || matches!(
            (fs::canonicalize(a), fs::canonicalize(b)),
            (Ok(x), Ok(y)) if x == y
        )
}
