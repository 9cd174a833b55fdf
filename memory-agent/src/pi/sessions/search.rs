//! Listing and searching session directories.

use std::fs::File;
use std::num::NonZeroUsize;
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use jiff::Timestamp;

use super::SessionError;
use super::entry::{SessionEntry, SessionHeader, TextSource};
use super::matcher::{Cut, Matcher};
use super::paths::session_files;
use super::scan::{self, NameTracker, Probe, for_each_region, is_blank, line_at};

/// Limits and switches of a session search. `Default` gives pi-memory's defaults.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionSearchOptions {
    /// Stop after this many sessions **with matches** (newest first); `sessionSearch.maxSessions`,
    /// default 10. `0` is treated as 1.
    pub max_sessions: usize,
    /// Keep at most this many segments per session; `sessionSearch.maxMatches`, default 5.
    /// `0` is treated as 1.
    pub max_matches: usize,
    /// Cut each segment to this many characters (Unicode scalar values) around the match;
    /// default 2000 (PS-20). `0` is treated as 1.
    pub max_segment_chars: usize,
    /// Also search tool results. Default `false`: the memory tool recalls the conversation,
    /// and tool output (file dumps, build logs) would drown it (PS-19 excludes it too).
    pub include_tool_results: bool,
    /// Search only the text blocks of `user` and `assistant` messages: no custom messages,
    /// compaction or branch summaries (and no tool results, whatever
    /// `include_tool_results` says). Default `false`; `search-session` sets it (PS-19).
    pub user_and_assistant_only: bool,
    /// Worker threads; `0` = the machine's parallelism, capped at 4.
    pub threads: usize,
}

impl Default for SessionSearchOptions {
    fn default() -> Self {
        SessionSearchOptions {
            max_sessions: 10,
            max_matches: 5,
            max_segment_chars: 2000,
            include_tool_results: false,
            user_and_assistant_only: false,
            threads: 0,
        }
    }
}

impl SessionSearchOptions {
    fn worker_count(&self, jobs: usize) -> usize {
        let auto = || {
            std::thread::available_parallelism()
                .map(NonZeroUsize::get)
                .unwrap_or(1)
                .min(4)
        };
        let t = if self.threads == 0 {
            auto()
        } else {
            self.threads
        };
        t.clamp(1, jobs.max(1))
    }
}

/// One session as pi's `SessionManager.list` describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionInfo {
    /// Absolute (or as given) path of the `.jsonl` file.
    pub path: PathBuf,
    /// Session id from the header.
    pub id: String,
    /// Header `cwd` (`""` when missing, as in pi).
    pub cwd: String,
    /// Name from the latest `session_info` entry (trimmed; empty clears it).
    pub name: Option<String>,
    /// Header `parentSession` (the file this one was forked from).
    pub parent_session: Option<String>,
    /// Header timestamp, when it parses.
    pub created: Option<Timestamp>,
    /// Last activity: the time of the last user/assistant message, else the header time,
    /// else the file's mtime. Sessions are ordered by this, newest first.
    pub modified: Timestamp,
}

impl SessionInfo {
    fn from_probe(p: Probe, name: Option<String>) -> SessionInfo {
        SessionInfo {
            path: p.path,
            id: p.id,
            cwd: p.cwd,
            name,
            parent_session: p.parent_session,
            created: p.created,
            modified: p.modified,
        }
    }
}

/// One matching line of a session's text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Segment {
    /// What kind of text matched.
    pub source: TextSource,
    /// Id of the entry holding the text.
    pub entry_id: Option<String>,
    /// The matching newline-delimited line (lines, for a query containing `\n`), without
    /// its line break, cut to `max_segment_chars` characters around the match.
    pub text: String,
    /// Whether `text` is only part of the line.
    pub truncated: bool,
    /// Characters of the line before `text` (non-zero when cut at the start).
    pub char_offset: usize,
    /// Length of the whole line in characters.
    pub line_chars: usize,
}

impl Segment {
    fn new(source: TextSource, entry_id: Option<&str>, cut: Cut) -> Segment {
        let shown = cut.text.chars().count();
        Segment {
            source,
            entry_id: entry_id.map(str::to_owned),
            truncated: shown < cut.line_chars,
            text: cut.text,
            char_offset: cut.char_offset,
            line_chars: cut.line_chars,
        }
    }
}

/// A session with matches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionHit {
    /// The session.
    pub info: SessionInfo,
    /// Matching segments in file order, at most `max_matches`.
    pub segments: Vec<Segment>,
    /// The session had more matching segments than `max_matches`.
    pub truncated: bool,
}

/// Result of [`search_sessions`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionSearch {
    /// The query as given.
    pub query: String,
    /// Sessions with matches, newest first.
    pub hits: Vec<SessionHit>,
    /// Session files found (after the cwd filter).
    pub sessions_total: usize,
    /// Sessions searched, newest first, before the search stopped.
    pub sessions_searched: usize,
    /// `max_sessions` sessions with matches were found before every session was searched:
    /// older sessions may match too.
    pub limit_reached: bool,
}

/// Lists the sessions in `dir`, newest activity first (ties: path order).
///
/// `dir` is a per-project directory ([`super::session_dir_for_cwd`]) or a flat session
/// directory; `cwd_filter` keeps only sessions whose header `cwd` is that path (needed for
/// the flat layout). Files that are not sessions or cannot be read are skipped, as pi does.
/// Reads every file completely (for the session name).
pub fn list_sessions(
    dir: &Path,
    cwd_filter: Option<&Path>,
) -> Result<Vec<SessionInfo>, SessionError> {
    let opts = SessionSearchOptions::default();
    let probes = probe_dir(dir, cwd_filter, &opts)?;
    let names = run_ordered(
        probes.len(),
        opts.worker_count(probes.len()),
        |i, buf| scan::read_name(&probes[i].path, buf),
        |_| false,
    );
    Ok(probes
        .into_iter()
        .zip(names)
        .filter_map(|(p, name)| match name {
            Some(Ok(name)) => Some(SessionInfo::from_probe(p, name)),
            _ => None,
        })
        .collect())
}

/// Searches the sessions in `dir` for `query` (case-insensitive substring, see the module
/// docs for exactly what text is searched), newest session first, stopping after
/// `max_sessions` sessions with matches.
///
/// # Errors
/// [`SessionError::EmptyQuery`] for a blank query, [`SessionError::ReadDir`] when `dir` exists
/// but cannot be listed. A missing `dir` gives no hits.
pub fn search_sessions(
    dir: &Path,
    cwd_filter: Option<&Path>,
    query: &str,
    opts: &SessionSearchOptions,
) -> Result<SessionSearch, SessionError> {
    search_with(dir, cwd_filter, query, opts, true)
}

/// [`search_sessions`], optionally without the raw-byte prefilter (every line parsed).
pub(crate) fn search_with(
    dir: &Path,
    cwd_filter: Option<&Path>,
    query: &str,
    opts: &SessionSearchOptions,
    use_prefilter: bool,
) -> Result<SessionSearch, SessionError> {
    if query.trim().is_empty() {
        return Err(SessionError::EmptyQuery);
    }
    let matcher = Matcher::new(query, use_prefilter);
    let max_sessions = opts.max_sessions.max(1);
    let probes = probe_dir(dir, cwd_filter, opts)?;
    let mut found = 0;
    let results = run_ordered(
        probes.len(),
        opts.worker_count(probes.len()),
        |i, buf| search_file(&probes[i].path, &matcher, opts, buf).ok(),
        |r| {
            if matches!(r, Some(f) if !f.segments.is_empty()) {
                found += 1;
            }
            found >= max_sessions
        },
    );
    let mut hits = Vec::new();
    let mut searched = 0;
    for (probe, result) in probes.iter().zip(results) {
        if hits.len() == max_sessions {
            break;
        }
        let Some(result) = result else { break };
        searched += 1;
        if let Some(f) = result
            && !f.segments.is_empty()
        {
            hits.push(SessionHit {
                info: SessionInfo::from_probe(probe.clone(), f.name),
                segments: f.segments,
                truncated: f.truncated,
            });
        }
    }
    Ok(SessionSearch {
        query: query.to_owned(),
        limit_reached: searched < probes.len(),
        hits,
        sessions_total: probes.len(),
        sessions_searched: searched,
    })
}

/// A whole session file, parsed. Lines that do not parse are counted, not fatal.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionFile {
    /// The header line.
    pub header: SessionHeader<'static>,
    /// Every other entry in file order (all branches).
    pub entries: Vec<SessionEntry<'static>>,
    /// Non-blank lines that were not JSON objects (torn last line, corruption).
    pub skipped_lines: usize,
}

/// Reads and parses a whole session file.
///
/// # Errors
/// [`SessionError::Read`] on I/O failure, [`SessionError::NotASession`] when the first
/// non-blank line is not a `session` header.
pub fn read_session(path: &Path) -> Result<SessionFile, SessionError> {
    let read_err = |source| SessionError::Read {
        path: path.to_path_buf(),
        source,
    };
    let mut file = File::open(path).map_err(read_err)?;
    let mut buf = Vec::new();
    let mut header = None;
    let mut entries = Vec::new();
    let mut skipped_lines = 0;
    let mut not_session = false;
    for_each_region(&mut file, &mut buf, |region| {
        for line in region.split(|b| *b == b'\n').filter(|l| !is_blank(l)) {
            match (SessionEntry::parse(line), header.is_some()) {
                (Ok(SessionEntry::Header(h)), false) => {
                    header = Some(SessionEntry::Header(h).into_owned());
                }
                (_, false) => {
                    not_session = true;
                    return ControlFlow::Break(());
                }
                (Ok(e), true) => entries.push(e.into_owned()),
                (Err(_), true) => skipped_lines += 1,
            }
        }
        ControlFlow::Continue(())
    })
    .map_err(read_err)?;
    match header {
        Some(SessionEntry::Header(header)) if !not_session => Ok(SessionFile {
            header,
            entries,
            skipped_lines,
        }),
        _ => Err(SessionError::NotASession {
            path: path.to_path_buf(),
        }),
    }
}

/// Probes every session file of `dir`, applies the cwd filter, sorts newest first.
fn probe_dir(
    dir: &Path,
    cwd_filter: Option<&Path>,
    opts: &SessionSearchOptions,
) -> Result<Vec<Probe>, SessionError> {
    let files = session_files(dir)?;
    let probes = run_ordered(
        files.len(),
        opts.worker_count(files.len()),
        |i, buf| scan::probe(&files[i], buf),
        |_| false,
    );
    let mut probes: Vec<Probe> = probes
        .into_iter()
        .filter_map(|p| p.and_then(Result::ok).flatten())
        .filter(|p| cwd_filter.is_none_or(|c| Path::new(&p.cwd) == c))
        .collect();
    probes.sort_by(|a, b| {
        b.modified
            .cmp(&a.modified)
            .then_with(|| a.path.cmp(&b.path))
    });
    Ok(probes)
}

/// What one file contributed to a search.
#[derive(Debug)]
pub(crate) struct FileHits {
    pub(crate) name: Option<String>,
    pub(crate) segments: Vec<Segment>,
    pub(crate) truncated: bool,
}

/// Streams one file: tracks the session name and collects matching segments.
pub(crate) fn search_file(
    path: &Path,
    matcher: &Matcher,
    opts: &SessionSearchOptions,
    buf: &mut Vec<u8>,
) -> std::io::Result<FileHits> {
    let mut file = File::open(path)?;
    let mut names = NameTracker::default();
    let mut collector = Collector {
        matcher,
        max_matches: opts.max_matches.max(1),
        max_chars: opts.max_segment_chars.max(1),
        include_tool_results: opts.include_tool_results && !opts.user_and_assistant_only,
        user_and_assistant_only: opts.user_and_assistant_only,
        segments: Vec::new(),
        truncated: false,
    };
    for_each_region(&mut file, buf, |region| {
        names.feed(region);
        if !collector.truncated {
            collector.region(region);
        }
        ControlFlow::Continue(())
    })?;
    Ok(FileHits {
        name: names.into_name(),
        segments: collector.segments,
        truncated: collector.truncated,
    })
}

struct Collector<'m> {
    matcher: &'m Matcher,
    max_matches: usize,
    max_chars: usize,
    include_tool_results: bool,
    user_and_assistant_only: bool,
    segments: Vec<Segment>,
    /// Set once a segment beyond `max_matches` was seen; stops matching.
    truncated: bool,
}

impl Collector<'_> {
    fn region(&mut self, region: &[u8]) {
        match self.matcher.prefilter() {
            Some(pf) => {
                let mut from = 0;
                while from < region.len()
                    && let Some(p) = pf.find(&region[from..])
                {
                    let (s, e) = line_at(region, from + p);
                    self.line(&region[s..e]);
                    if self.truncated {
                        return;
                    }
                    from = e + 1;
                }
            }
            None => {
                for line in region.split(|b| *b == b'\n') {
                    if !is_blank(line) {
                        self.line(line);
                        if self.truncated {
                            return;
                        }
                    }
                }
            }
        }
    }

    fn line(&mut self, line: &[u8]) {
        let Ok(entry) = SessionEntry::parse(line) else {
            return;
        };
        let id = entry.meta().and_then(|m| m.id.as_deref());
        let (matcher, max_chars, max_matches) = (self.matcher, self.max_chars, self.max_matches);
        let segments = &mut self.segments;
        let truncated = &mut self.truncated;
        let conversation_only = self.user_and_assistant_only;
        entry.for_each_text(self.include_tool_results, |source, text| {
            if *truncated
                || (conversation_only
                    && !matches!(source, TextSource::User | TextSource::Assistant))
            {
                return;
            }
            matcher.for_each_segment(text, max_chars, |cut| {
                if segments.len() == max_matches {
                    *truncated = true;
                    return false;
                }
                segments.push(Segment::new(source, id, cut));
                true
            });
        });
    }
}

/// Runs `work(i)` for `i in 0..len` on `threads` workers (each with its own scratch buffer)
/// and returns the results by index. `stop` sees results in index order and may end the run:
/// once it returns `true`, no new index is started; indices never started stay `None`.
pub(crate) fn run_ordered<T: Send>(
    len: usize,
    threads: usize,
    work: impl Fn(usize, &mut Vec<u8>) -> T + Sync,
    mut stop: impl FnMut(&T) -> bool + Send,
) -> Vec<Option<T>> {
    let mut slots: Vec<Option<T>> = (0..len).map(|_| None).collect();
    if threads <= 1 {
        let mut buf = Vec::new();
        for (i, slot) in slots.iter_mut().enumerate() {
            let r = work(i, &mut buf);
            let done = stop(&r);
            *slot = Some(r);
            if done {
                break;
            }
        }
        return slots;
    }
    struct State<T, S> {
        slots: Vec<Option<T>>,
        prefix: usize,
        stop: S,
    }
    let next = AtomicUsize::new(0);
    let halt = AtomicBool::new(false);
    let state = Mutex::new(State {
        slots,
        prefix: 0,
        stop: &mut stop,
    });
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| {
                let mut buf = Vec::new();
                while !halt.load(Ordering::Acquire) {
                    let i = next.fetch_add(1, Ordering::AcqRel);
                    if i >= len {
                        break;
                    }
                    let r = work(i, &mut buf);
                    let mut st = state.lock().unwrap_or_else(|e| e.into_inner());
                    st.slots[i] = Some(r);
                    while st.prefix < len && !halt.load(Ordering::Acquire) {
                        let p = st.prefix;
                        let State { slots, stop, .. } = &mut *st;
                        let Some(r) = &slots[p] else { break };
                        if stop(r) {
                            halt.store(true, Ordering::Release);
                        }
                        st.prefix += 1;
                    }
                }
            });
        }
    });
    let mut st = state.into_inner().unwrap_or_else(|e| e.into_inner());
    // Results past the stopping point were computed speculatively: drop them so the output
    // does not depend on thread timing.
    let keep = st.prefix;
    for slot in st.slots.iter_mut().skip(keep) {
        *slot = None;
    }
    st.slots
}
