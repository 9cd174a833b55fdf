//! The [`Store`]: every read and write of one project memory directory.
//!
//! Write pipeline (PM-44), in this fixed order so locks never invert:
//! validate input (before any lock, so bad input never touches the disk) → in-process logical
//! lock (unless the caller holds a [`Round`]) → cross-process `.lock` → snapshot of the files
//! about to change (unless the round already snapshotted the whole directory) →
//! read-modify-write with atomic replacement → release.
//!
//! Reads go through an mtime cache (PM-43): one `readdir` plus one `lstat` per entry; a file is
//! re-read only when its (inode, size, mtime, ctime) stamp changed. Atomic replacement always
//! gives a rewritten file a new inode, so our own writes can never be mistaken for unchanged.

use std::collections::{HashMap, HashSet};
use std::fs;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use memory_index::{
    EntryMeta, EntryType, IndexLine, RebuildEntry, capacity_warning, derive_description,
    entry_file_name, index_capacity, injection_window, is_entry_candidate, parse_entry,
    parse_index, rebuild_index, remove_index_line, render_entry, replace_index_line,
    sanitize_for_injection, unique_file_name, upsert_index_line, validate_body, validate_created,
    validate_description, validate_name,
};
use memory_lock::{
    FileLockGuard, LockOptions, LockState, LogicalGuard, acquire, atomic_write, clean_stale_temps,
    ensure_private_dir, inspect, lock_logical, move_file, remove_file, remove_lock, snapshot_all,
    snapshot_files, try_lock_logical,
};
use sha2::{Digest, Sha256};

use crate::clock::{Clock, iso_date, iso_millis};
use crate::config::Config;
use crate::error::StoreError;
use crate::secrets::find_secret;

/// The index file of every memory directory.
pub const INDEX_FILE: &str = "MEMORY.md";
/// The dream bookkeeping file (PM-69).
pub const DREAM_META_FILE: &str = ".dream-meta.json";
/// Largest body a write accepts (beyond the original, which had no limit: a multi-megabyte
/// "memory" is always a mistake and would be cut at injection anyway).
pub const MAX_BODY_BYTES: usize = 1 << 20;
/// Entry files larger than this are not read at all (treated as unparseable, left alone).
const MAX_READ_BYTES: u64 = 16 << 20;

/// Tunables of a [`Store`], usually derived from [`Config`] with [`StoreOptions::from_config`].
#[derive(Debug, Clone)]
pub struct StoreOptions {
    /// Write capacity in non-empty index lines (warning threshold, PM-30).
    pub index_max_lines: usize,
    /// Write capacity in index bytes.
    pub index_max_bytes: usize,
    /// How long to wait for the logical and the cross-process lock.
    pub lock_timeout: Duration,
    /// Snapshots kept in `.backups/`.
    pub snapshot_keep: usize,
    /// Reclaim locks of provably dead holders on this host.
    pub reclaim_dead: bool,
    /// Source of `modified`/`created` timestamps and snapshot names.
    pub clock: Clock,
}

impl Default for StoreOptions {
    fn default() -> Self {
        StoreOptions::from_config(&Config::default())
    }
}

impl StoreOptions {
    /// Options from the effective configuration.
    pub fn from_config(cfg: &Config) -> Self {
        StoreOptions {
            index_max_lines: cfg.mem_index_max_lines,
            index_max_bytes: cfg.mem_index_max_bytes,
            lock_timeout: Duration::from_millis(cfg.lock.timeout_ms),
            snapshot_keep: cfg.lock.snapshot_keep,
            reclaim_dead: cfg.lock.reclaim_dead,
            clock: Clock::system(),
        }
    }
}

/// One parseable entry file as read from disk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredEntry {
    /// File name inside the memory directory (`Use-real-DB.md`).
    pub file: String,
    /// The five frontmatter fields.
    pub meta: EntryMeta,
    /// The body (trimmed, as parsed).
    pub body: String,
    /// Content version: the first 16 hex digits of sha256 of the file bytes.
    pub version: String,
}

/// Input of [`Store::add`].
#[derive(Debug, Clone, Default)]
pub struct AddRequest {
    /// Entry name (trimmed; the lookup key).
    pub name: String,
    /// One-line description; derived from the body when absent or blank.
    pub description: Option<String>,
    /// Type; kept from an existing same-named entry, else `feedback`.
    pub entry_type: Option<EntryType>,
    /// The body (required, trimmed).
    pub body: String,
    /// `created` for a new entry (`YYYY-MM-DD`; default today). Ignored on overwrite.
    pub created: Option<String>,
}

/// Input of [`Store::replace`]. Absent fields keep their current value.
#[derive(Debug, Clone, Default)]
pub struct ReplaceRequest {
    /// File name or exact name of the entry (PM-36).
    pub reference: String,
    /// New name (renames the file too).
    pub name: Option<String>,
    /// New description; when absent and a new body is given, derived from the body (PM-35).
    pub description: Option<String>,
    /// New type.
    pub entry_type: Option<EntryType>,
    /// New body.
    pub body: Option<String>,
    /// Fail with `Memory conflict: stale version` unless the entry is at this version.
    pub expected_version: Option<String>,
}

/// Result of add, replace and rename.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WriteOutcome {
    /// The entry's name after the write.
    pub name: String,
    /// The entry's file after the write.
    pub file: String,
    /// The new version.
    pub version: String,
    /// PM-30 warning when the index is over its write capacity.
    pub capacity_warning: Option<String>,
    /// Things the user should know (a reclaimed lock, an automatic repair).
    pub notices: Vec<String>,
}

/// Result of remove.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoveOutcome {
    /// Name of the removed entry.
    pub name: String,
    /// Its file (now deleted).
    pub file: String,
    /// Things the user should know.
    pub notices: Vec<String>,
}

/// Result of rebuild_index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RebuildOutcome {
    /// Entry lines written.
    pub entries: usize,
    /// Header lines kept or created.
    pub header_lines: usize,
    /// PM-30 warning.
    pub capacity_warning: Option<String>,
    /// Things the user should know.
    pub notices: Vec<String>,
}

impl WriteOutcome {
    /// `Saved "<name>" (<file>).` plus the capacity warning (PM-42).
    pub fn saved_text(&self) -> String {
        memory_index::with_capacity_warning(
            memory_index::saved_text(&self.name, &self.file),
            self.capacity_warning.as_deref(),
        )
    }

    /// `Replaced "<name>" (<file>).` plus the capacity warning.
    pub fn replaced_text(&self) -> String {
        memory_index::with_capacity_warning(
            memory_index::replaced_text(&self.name, &self.file),
            self.capacity_warning.as_deref(),
        )
    }

    /// `Renamed "<old>" → "<new>" (<file>).` plus the capacity warning.
    pub fn renamed_text(&self, old_name: &str) -> String {
        memory_index::with_capacity_warning(
            memory_index::renamed_text(old_name, &self.name, &self.file),
            self.capacity_warning.as_deref(),
        )
    }
}

impl RemoveOutcome {
    /// `Removed "<name>".`
    pub fn text(&self) -> String {
        memory_index::removed_text(&self.name)
    }
}

impl RebuildOutcome {
    /// `Rebuilt index: <n> entries (<h> header lines).` plus the capacity warning.
    pub fn text(&self) -> String {
        memory_index::with_capacity_warning(
            memory_index::rebuilt_text(self.entries, self.header_lines),
            self.capacity_warning.as_deref(),
        )
    }
}

/// `.dream-meta.json` (PM-69).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct DreamMeta {
    /// When the last successful dream finished.
    #[serde(rename = "lastDreamAt")]
    pub last_dream_at: String,
    /// How many sessions the project had then.
    #[serde(rename = "sessionCountAtDream")]
    pub session_count_at_dream: u64,
}

/// The injected index value and its window numbers (PM-56..58, the `Inject:` status line).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexSection {
    /// The exact `memory_index` section value (windowed, then sanitised).
    pub value: String,
    /// Lines of the window (marker not counted).
    pub lines: usize,
    /// Bytes of the window (marker not counted).
    pub bytes: usize,
    /// Whether older lines were dropped.
    pub truncated: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stamp {
    dev: u64,
    ino: u64,
    len: u64,
    mtime: (i64, i64),
    ctime: (i64, i64),
}

impl Stamp {
    // The field types of `struct stat` differ between targets; the casts are no-ops here.
    #[allow(clippy::unnecessary_cast)]
    fn of(st: &rustix::fs::Stat) -> Self {
        Stamp {
            dev: st.st_dev as u64,
            ino: st.st_ino as u64,
            len: st.st_size as u64,
            mtime: (st.st_mtime as i64, st.st_mtime_nsec as i64),
            ctime: (st.st_ctime as i64, st.st_ctime_nsec as i64),
        }
    }
}

/// Directories with more candidate files than this are stat'ed by two threads.
const PARALLEL_STAT_THRESHOLD: usize = 512;

/// `lstat`s every name relative to the open directory: `Some(stamp)` for regular files,
/// `None` for anything else (symlinks are never followed) or names that vanished.
fn stat_all(dir: &rustix::fd::OwnedFd, names: &[String]) -> Vec<Option<Stamp>> {
    use rustix::fs::{AtFlags, FileType, statat};
    let one = |name: &String| {
        statat(dir, name.as_str(), AtFlags::SYMLINK_NOFOLLOW)
            .ok()
            .filter(|st| FileType::from_raw_mode(st.st_mode) == FileType::RegularFile)
            .map(|st| Stamp::of(&st))
    };
    if names.len() <= PARALLEL_STAT_THRESHOLD {
        return names.iter().map(one).collect();
    }
    let half = names.len() / 2;
    std::thread::scope(|s| {
        let first = s.spawn(|| names[..half].iter().map(one).collect::<Vec<_>>());
        let mut second: Vec<Option<Stamp>> = names[half..].iter().map(one).collect();
        match first.join() {
            Ok(mut out) => {
                out.append(&mut second);
                out
            }
            // A panicking stat thread is impossible in practice; fall back to one thread.
            Err(_) => names.iter().map(one).collect(),
        }
    })
}

struct CacheRow {
    stamp: Stamp,
    entry: Option<Arc<StoredEntry>>,
    /// The scan that last saw this file (rows of vanished files are dropped).
    generation: u64,
}

/// The mtime cache: one row per candidate file, plus the sorted listing of the last scan,
/// reused as-is while no row changed (the warm path allocates no strings for sorting).
#[derive(Default)]
struct Cache {
    rows: HashMap<String, CacheRow>,
    generation: u64,
    sorted: Vec<Arc<StoredEntry>>,
    sorted_valid: bool,
}

/// One directory listing: the parseable entries (sorted by `(modified, file)`) and every name
/// present in the directory (parseable or not), which new file names must avoid.
struct Scan {
    entries: Vec<Arc<StoredEntry>>,
    names: HashSet<String>,
}

/// How a write runs: standalone (takes the logical lock) or inside a [`Round`].
#[derive(Debug, Clone, Copy)]
struct Mode {
    logical_held: bool,
    skip_snapshot: bool,
}

const STANDALONE: Mode = Mode {
    logical_held: false,
    skip_snapshot: false,
};

/// The memory store of one project directory. Cheap to share between threads (`&Store`).
pub struct Store {
    dir: PathBuf,
    opts: StoreOptions,
    cache: Mutex<Cache>,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store").field("dir", &self.dir).finish()
    }
}

impl Store {
    /// A store over `dir` (created on the first write, private to the user). No I/O happens
    /// here; a missing directory simply has no entries.
    pub fn new(dir: impl Into<PathBuf>, opts: StoreOptions) -> Self {
        Store {
            dir: dir.into(),
            opts,
            cache: Mutex::new(Cache::default()),
        }
    }

    /// The project memory directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The options in effect.
    pub fn options(&self) -> &StoreOptions {
        &self.opts
    }

    fn index_path(&self) -> PathBuf {
        self.dir.join(INDEX_FILE)
    }

    fn cache(&self) -> MutexGuard<'_, Cache> {
        // A panic while holding the cache leaves it merely stale; recover the data.
        self.cache.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn invalidate(&self, file: &str) {
        let mut cache = self.cache();
        cache.rows.remove(file);
        cache.sorted_valid = false;
    }

    // ---------------------------------------------------------------- reads

    /// Lists the directory through the cache. `with_names` also collects every directory
    /// entry's name (writes need them to pick free file names; reads do not pay for it).
    fn scan_with(&self, with_names: bool) -> Result<Scan, StoreError> {
        use rustix::fs::{Dir, FileType, Mode, OFlags};
        let list_err = |e: io::Error| StoreError::io("listing", &self.dir, e);
        let fd = match rustix::fs::open(
            &self.dir,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        ) {
            Ok(fd) => fd,
            Err(rustix::io::Errno::NOENT) => {
                *self.cache() = Cache::default();
                return Ok(Scan {
                    entries: Vec::new(),
                    names: HashSet::new(),
                });
            }
            Err(e) => return Err(list_err(e.into())),
        };
        let mut dir = Dir::read_from(&fd).map_err(|e| list_err(e.into()))?;
        let mut names = HashSet::new();
        let mut candidates: Vec<String> = Vec::new();
        while let Some(dirent) = dir.read() {
            let dirent = dirent.map_err(|e| list_err(e.into()))?;
            let Ok(name) = dirent.file_name().to_str() else {
                continue; // not UTF-8: never an entry, never a name we would derive
            };
            if name == "." || name == ".." {
                continue;
            }
            // d_type lets us skip directories, symlinks and FIFOs without a stat.
            let maybe_file = matches!(
                dirent.file_type(),
                FileType::RegularFile | FileType::Unknown
            );
            if maybe_file && is_entry_candidate(name) {
                candidates.push(name.to_owned());
            }
            if with_names {
                names.insert(name.to_owned());
            }
        }
        let stamps = stat_all(&fd, &candidates);
        let mut cache = self.cache();
        let cache = &mut *cache;
        cache.generation = cache.generation.wrapping_add(1);
        let generation = cache.generation;
        let mut changed = !cache.sorted_valid;
        let mut present = 0usize;
        for (name, stamp) in candidates.into_iter().zip(stamps) {
            let Some(stamp) = stamp else {
                continue; // not a regular file, or vanished meanwhile
            };
            present += 1;
            match cache.rows.get_mut(&name) {
                Some(row) if row.stamp == stamp => row.generation = generation,
                _ => {
                    let entry = read_entry_file(&self.dir.join(&name), &name).map(Arc::new);
                    cache.rows.insert(
                        name,
                        CacheRow {
                            stamp,
                            entry,
                            generation,
                        },
                    );
                    changed = true;
                }
            }
        }
        if cache.rows.len() != present {
            cache.rows.retain(|_, row| row.generation == generation);
            changed = true;
        }
        if changed {
            let mut entries: Vec<Arc<StoredEntry>> = cache
                .rows
                .values()
                .filter_map(|r| r.entry.clone())
                .collect();
            entries.sort_by(|a, b| {
                (a.meta.modified.as_str(), a.file.as_str())
                    .cmp(&(b.meta.modified.as_str(), b.file.as_str()))
            });
            cache.sorted = entries;
            cache.sorted_valid = true;
        }
        Ok(Scan {
            entries: cache.sorted.clone(),
            names,
        })
    }

    fn scan(&self) -> Result<Scan, StoreError> {
        self.scan_with(true)
    }

    /// Every parseable entry, ordered by `(modified, file)` ascending (PM-39).
    pub fn list(&self) -> Result<Vec<Arc<StoredEntry>>, StoreError> {
        Ok(self.scan_with(false)?.entries)
    }

    /// The entry with this file name, else this exact name (PM-36).
    pub fn read(&self, reference: &str) -> Result<Option<Arc<StoredEntry>>, StoreError> {
        Ok(lookup(&self.scan_with(false)?.entries, reference).cloned())
    }

    /// Entries whose name, description or body contains `query`, case-insensitively (PM-40).
    pub fn search(&self, query: &str) -> Result<Vec<Arc<StoredEntry>>, StoreError> {
        if query.trim().is_empty() {
            return Err(StoreError::Parameter(
                memory_index::QUERY_REQUIRED_FOR_SEARCH.to_owned(),
            ));
        }
        Ok(self
            .scan_with(false)?
            .entries
            .into_iter()
            .filter(|e| memory_index::matches_query(&e.meta, &e.body, query))
            .collect())
    }

    /// The raw `MEMORY.md` text (lossy for invalid UTF-8); `""` when missing.
    pub fn read_index(&self) -> Result<String, StoreError> {
        match read_bounded(&self.index_path()) {
            Ok(Some(bytes)) => Ok(String::from_utf8_lossy(&bytes).into_owned()),
            Ok(None) => Ok(String::new()),
            Err(e) => Err(StoreError::io("reading", self.index_path(), e)),
        }
    }

    /// The `memory_index` section value as it would be injected now: the newest window of
    /// `MEMORY.md`, sanitised (PM-58, PM-59).
    pub fn index_section(
        &self,
        max_lines: usize,
        max_bytes: usize,
    ) -> Result<IndexSection, StoreError> {
        let raw = self.read_index()?;
        let window = injection_window(&raw, max_lines, max_bytes);
        Ok(IndexSection {
            value: sanitize_for_injection(&window.text),
            lines: window.lines,
            bytes: window.bytes,
            truncated: window.truncated,
        })
    }

    /// Removes temp files and lock-record files that crashed writers of this host left in
    /// the directory (their pid is dead and they are over a minute old). Returns how many.
    /// Best effort: a missing directory or an unremovable file is not an error.
    pub fn clean_stale_temps(&self) -> usize {
        clean_stale_temps(&self.dir).unwrap_or(0)
    }

    /// The state of the cross-process lock.
    pub fn lock_state(&self) -> Result<LockState, StoreError> {
        inspect(&self.dir).map_err(|e| StoreError::io("inspecting", self.dir.join(".lock"), e))
    }

    /// Removes `.lock` (`/memory unlock`, PM-77). `false` when there was none.
    pub fn remove_lock(&self) -> Result<bool, StoreError> {
        remove_lock(&self.dir).map_err(|e| StoreError::io("removing", self.dir.join(".lock"), e))
    }

    /// `.dream-meta.json`, when present and well-formed.
    pub fn dream_meta(&self) -> Option<DreamMeta> {
        let bytes = read_bounded(&self.dir.join(DREAM_META_FILE)).ok()??;
        serde_json::from_slice(&bytes).ok()
    }

    /// Writes `.dream-meta.json` atomically.
    pub fn write_dream_meta(&self, meta: &DreamMeta) -> Result<(), StoreError> {
        let path = self.dir.join(DREAM_META_FILE);
        let json = serde_json::to_vec(meta).map_err(|e| {
            StoreError::io(
                "encoding",
                &path,
                io::Error::new(io::ErrorKind::InvalidData, e),
            )
        })?;
        ensure_private_dir(&self.dir).map_err(|e| StoreError::io("creating", &self.dir, e))?;
        atomic_write(&path, &json).map_err(|e| StoreError::io("writing", &path, e))
    }

    // ---------------------------------------------------------------- rounds

    /// Holds the logical lock for a whole round (dream): writes through the [`Round`] do not
    /// take it again. Waits up to `timeout`.
    pub fn begin_round(&self, timeout: Duration) -> Result<Round<'_>, StoreError> {
        Ok(Round {
            store: self,
            _guard: lock_logical(&self.dir, timeout)?,
            skip_snapshots: false,
        })
    }

    /// Like [`Store::begin_round`] but never waits: `None` when another round or write holds
    /// the logical lock (extraction skips its turn, PM-65).
    pub fn try_begin_round(&self) -> Option<Round<'_>> {
        Some(Round {
            store: self,
            _guard: try_lock_logical(&self.dir)?,
            skip_snapshots: false,
        })
    }

    // ---------------------------------------------------------------- writes

    /// Creates an entry or overwrites the one with exactly this name (PM-32..34).
    pub fn add(&self, req: AddRequest) -> Result<WriteOutcome, StoreError> {
        self.add_in(req, STANDALONE)
    }

    /// Rewrites an existing entry (PM-35), optionally renaming it.
    pub fn replace(&self, req: ReplaceRequest) -> Result<WriteOutcome, StoreError> {
        self.replace_in(req, STANDALONE)
    }

    /// Renames an entry (dream only in pi, PM-38): file re-derived, index line kept in place.
    pub fn rename(
        &self,
        reference: &str,
        new_name: &str,
        expected_version: Option<&str>,
    ) -> Result<WriteOutcome, StoreError> {
        self.rename_in(reference, new_name, expected_version, STANDALONE)
    }

    /// Deletes an entry file and its index line (PM-37).
    pub fn remove(
        &self,
        reference: &str,
        expected_version: Option<&str>,
    ) -> Result<RemoveOutcome, StoreError> {
        self.remove_in(reference, expected_version, STANDALONE)
    }

    /// Rebuilds `MEMORY.md` from the entry files (PM-29).
    pub fn rebuild_index(&self) -> Result<RebuildOutcome, StoreError> {
        self.rebuild_in(STANDALONE)
    }

    fn add_in(&self, req: AddRequest, mode: Mode) -> Result<WriteOutcome, StoreError> {
        let name = validate_name(&req.name)?;
        let description = validate_description(req.description.as_deref())?;
        let created = match req.created.as_deref().map(str::trim) {
            Some(c) if !c.is_empty() => {
                validate_created(c)?;
                Some(c.to_owned())
            }
            _ => None,
        };
        let body = validate_body(&req.body)?;
        check_content(&name, description.as_deref(), Some(&body))?;
        self.pipeline("add", mode, |tx| {
            let scan = self.scan()?;
            let existing = scan.entries.iter().find(|e| e.meta.name == name).cloned();
            let file = match &existing {
                Some(e) => e.file.clone(),
                None => self.resolve_target_file(&name, None, &scan.names)?,
            };
            let now = self.opts.clock.now();
            let meta = EntryMeta {
                description: description.unwrap_or_else(|| derive_description(&body, &name)),
                entry_type: req
                    .entry_type
                    .or(existing.as_ref().map(|e| e.meta.entry_type))
                    .unwrap_or_default(),
                created: match &existing {
                    Some(e) => e.meta.created.clone(),
                    None => created.unwrap_or_else(|| iso_date(now)),
                },
                modified: iso_millis(now),
                name,
            };
            let index = tx.read_index_for_write()?;
            tx.snapshot("write", &[INDEX_FILE, &file])?;
            let version = tx.write_entry(&file, &meta, &body)?;
            let next = upsert_index_line(&index, &index_line(&meta, &file));
            tx.write_index(&index, &next)?;
            Ok(WriteOutcome {
                capacity_warning: self.capacity_warning(&next),
                name: meta.name,
                file,
                version,
                notices: Vec::new(),
            })
        })
    }

    fn replace_in(&self, req: ReplaceRequest, mode: Mode) -> Result<WriteOutcome, StoreError> {
        let new_name = req.name.as_deref().map(validate_name).transpose()?;
        let description = validate_description(req.description.as_deref())?;
        let body = req.body.as_deref().map(validate_body).transpose()?;
        check_content(
            new_name.as_deref().unwrap_or(""),
            description.as_deref(),
            body.as_deref(),
        )?;
        self.pipeline("replace", mode, |tx| {
            let scan = self.scan()?;
            let current = lookup(&scan.entries, &req.reference)
                .cloned()
                .ok_or_else(|| StoreError::NotFound {
                    reference: req.reference.clone(),
                })?;
            check_version(&current, req.expected_version.as_deref())?;
            let name = new_name.unwrap_or_else(|| current.meta.name.clone());
            if name != current.meta.name && scan.entries.iter().any(|e| e.meta.name == name) {
                return Err(StoreError::AlreadyExists { name });
            }
            let description = match (description, &body) {
                (Some(d), _) => d,
                (None, Some(b)) => {
                    let derived = derive_description(b, "");
                    if derived.is_empty() {
                        fallback(&current.meta.description, &name)
                    } else {
                        derived
                    }
                }
                (None, None) => fallback(&current.meta.description, &name),
            };
            let file = if name == current.meta.name {
                current.file.clone()
            } else {
                self.resolve_target_file(&name, Some(&current.file), &scan.names)?
            };
            let meta = EntryMeta {
                name,
                description,
                entry_type: req.entry_type.unwrap_or(current.meta.entry_type),
                created: current.meta.created.clone(),
                modified: iso_millis(self.opts.clock.now()),
            };
            let body = body.unwrap_or_else(|| current.body.clone());
            let index = tx.read_index_for_write()?;
            tx.snapshot("write", &[INDEX_FILE, &current.file, &file])?;
            // The new content lands under the old file name first, then moves in one atomic
            // rename: a crash leaves the entry under exactly one name (never both, which
            // would duplicate the memory, never neither).
            let version = tx.write_entry(&current.file, &meta, &body)?;
            let line = index_line(&meta, &file);
            let next = if file == current.file {
                upsert_index_line(&index, &line)
            } else {
                tx.move_entry_file(&current.file, &file)?;
                replace_index_line(&index, &current.file, &line)
            };
            tx.write_index(&index, &next)?;
            Ok(WriteOutcome {
                capacity_warning: self.capacity_warning(&next),
                name: meta.name,
                file,
                version,
                notices: Vec::new(),
            })
        })
    }

    fn rename_in(
        &self,
        reference: &str,
        new_name: &str,
        expected_version: Option<&str>,
        mode: Mode,
    ) -> Result<WriteOutcome, StoreError> {
        self.replace_in(
            ReplaceRequest {
                reference: reference.to_owned(),
                name: Some(new_name.to_owned()),
                expected_version: expected_version.map(str::to_owned),
                ..ReplaceRequest::default()
            },
            mode,
        )
    }

    fn remove_in(
        &self,
        reference: &str,
        expected_version: Option<&str>,
        mode: Mode,
    ) -> Result<RemoveOutcome, StoreError> {
        self.pipeline("remove", mode, |tx| {
            let scan = self.scan()?;
            let current =
                lookup(&scan.entries, reference)
                    .cloned()
                    .ok_or_else(|| StoreError::NotFound {
                        reference: reference.to_owned(),
                    })?;
            check_version(&current, expected_version)?;
            let index = tx.read_index_for_write()?;
            tx.snapshot("write", &[INDEX_FILE, &current.file])?;
            tx.remove_entry_file(&current.file)?;
            if let Some(next) = remove_index_line(&index, &current.file) {
                tx.write_index(&index, &next)?;
            }
            Ok(RemoveOutcome {
                name: current.meta.name.clone(),
                file: current.file.clone(),
                notices: Vec::new(),
            })
        })
    }

    fn rebuild_in(&self, mode: Mode) -> Result<RebuildOutcome, StoreError> {
        self.pipeline("rebuild", mode, |tx| {
            tx.snapshot("index", &[INDEX_FILE])?;
            let entries: Vec<RebuildEntry> = self
                .scan()?
                .entries
                .iter()
                .map(|e| RebuildEntry {
                    name: e.meta.name.clone(),
                    file: e.file.clone(),
                    description: e.meta.description.clone(),
                    modified: e.meta.modified.clone(),
                })
                .collect();
            // The index is replaced wholesale, so invalid UTF-8 is tolerated here (the
            // snapshot above keeps the original bytes).
            let index = self.read_index()?;
            let rebuilt = rebuild_index(&index, &entries);
            tx.write_index(&index, &rebuilt.text)?;
            Ok(RebuildOutcome {
                entries: rebuilt.entries,
                header_lines: rebuilt.header_lines,
                capacity_warning: self.capacity_warning(&rebuilt.text),
                notices: Vec::new(),
            })
        })
    }

    fn capacity_warning(&self, index: &str) -> Option<String> {
        capacity_warning(
            index_capacity(index),
            self.opts.index_max_lines,
            self.opts.index_max_bytes,
        )
    }

    /// Picks a file name for `name` that is free in the directory listing and on disk
    /// (case-insensitive and normalising file systems), PM-21. `exclude` is the entry's own
    /// current file, which a rename may reuse (PM-22, VECTORS D36).
    fn resolve_target_file(
        &self,
        name: &str,
        exclude: Option<&str>,
        names: &HashSet<String>,
    ) -> Result<String, StoreError> {
        let derived = entry_file_name(name);
        let mut probed: HashSet<String> = HashSet::new();
        for _ in 0..100 {
            let candidate = unique_file_name(&derived, |c| {
                probed.contains(c) || (names.contains(c) && Some(c) != exclude)
            });
            if Some(candidate.as_str()) == exclude {
                return Ok(candidate);
            }
            let safe = is_entry_candidate(&candidate)
                && !candidate.contains(['/', '\\', '\0'])
                && !candidate.eq_ignore_ascii_case(INDEX_FILE);
            if safe {
                match fs::symlink_metadata(self.dir.join(&candidate)) {
                    Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(candidate),
                    _ => {}
                }
            }
            probed.insert(candidate);
        }
        Err(StoreError::NoFreeFileName {
            name: name.to_owned(),
        })
    }

    /// The write pipeline shared by every mutation.
    fn pipeline<T>(
        &self,
        op: &str,
        mode: Mode,
        body: impl FnOnce(&mut Tx<'_>) -> Result<T, StoreError>,
    ) -> Result<T, StoreError>
    where
        T: HasNotices,
    {
        let _logical: Option<LogicalGuard> = if mode.logical_held {
            None
        } else {
            Some(lock_logical(&self.dir, self.opts.lock_timeout)?)
        };
        ensure_private_dir(&self.dir).map_err(|e| StoreError::io("creating", &self.dir, e))?;
        let guard = acquire(
            &self.dir,
            op,
            &LockOptions {
                timeout: self.opts.lock_timeout,
                poll: Duration::from_millis(50),
                reclaim_dead: self.opts.reclaim_dead,
            },
        )?;
        let mut tx = Tx {
            store: self,
            skip_snapshot: mode.skip_snapshot,
            _guard: &guard,
        };
        let mut notices = Vec::new();
        if let Some(holder) = guard.reclaimed() {
            notices.push(format!(
                "Reclaimed the memory lock left by {} — that process is gone.",
                holder.describe()
            ));
            // Temp files of crashed writers are dot files (invisible to scans); tidy them.
            let _ = clean_stale_temps(&self.dir);
            let repaired = tx.repair_index()?;
            if repaired > 0 {
                notices.push(format!(
                    "Repaired {repaired} MEMORY.md line(s) left inconsistent by the interrupted write."
                ));
            }
        }
        let mut out = body(&mut tx)?;
        drop(guard);
        out.notices_mut().splice(0..0, notices);
        Ok(out)
    }
}

/// Outcomes that can carry notices from the pipeline.
trait HasNotices {
    fn notices_mut(&mut self) -> &mut Vec<String>;
}

impl HasNotices for WriteOutcome {
    fn notices_mut(&mut self) -> &mut Vec<String> {
        &mut self.notices
    }
}
impl HasNotices for RemoveOutcome {
    fn notices_mut(&mut self) -> &mut Vec<String> {
        &mut self.notices
    }
}
impl HasNotices for RebuildOutcome {
    fn notices_mut(&mut self) -> &mut Vec<String> {
        &mut self.notices
    }
}

/// The physical-write half of the pipeline, alive only while `.lock` is held.
struct Tx<'s> {
    store: &'s Store,
    skip_snapshot: bool,
    _guard: &'s FileLockGuard,
}

impl Tx<'_> {
    fn snapshot(&self, label: &str, files: &[&str]) -> Result<(), StoreError> {
        if self.skip_snapshot {
            return Ok(());
        }
        let mut unique: Vec<&str> = Vec::with_capacity(files.len());
        for f in files {
            if !unique.contains(f) {
                unique.push(f);
            }
        }
        snapshot_files(
            &self.store.dir,
            label,
            &unique,
            self.store.opts.snapshot_keep,
            self.store.opts.clock.now(),
        )?;
        Ok(())
    }

    /// The index as text for a surgical edit; invalid UTF-8 refuses the write.
    fn read_index_for_write(&self) -> Result<String, StoreError> {
        let path = self.store.index_path();
        match read_bounded(&path) {
            Ok(Some(bytes)) => {
                String::from_utf8(bytes).map_err(|_| StoreError::IndexNotUtf8 { path })
            }
            Ok(None) => Ok(String::new()),
            Err(e) => Err(StoreError::io("reading", path, e)),
        }
    }

    fn write_entry(&self, file: &str, meta: &EntryMeta, body: &str) -> Result<String, StoreError> {
        let text = render_entry(meta, body);
        let path = self.store.dir.join(file);
        atomic_write(&path, text.as_bytes()).map_err(|e| StoreError::io("writing", &path, e))?;
        self.store.invalidate(file);
        Ok(version_of(text.as_bytes()))
    }

    fn move_entry_file(&self, from: &str, to: &str) -> Result<(), StoreError> {
        let (src, dst) = (self.store.dir.join(from), self.store.dir.join(to));
        move_file(&src, &dst).map_err(|e| StoreError::io("renaming", &src, e))?;
        self.store.invalidate(from);
        self.store.invalidate(to);
        Ok(())
    }

    fn remove_entry_file(&self, file: &str) -> Result<(), StoreError> {
        let path = self.store.dir.join(file);
        remove_file(&path).map_err(|e| StoreError::io("removing", &path, e))?;
        self.store.invalidate(file);
        Ok(())
    }

    /// Writes the index unless the new text equals the old (no needless rewrite).
    fn write_index(&self, old: &str, new: &str) -> Result<(), StoreError> {
        let path = self.store.index_path();
        if old == new && path.exists() {
            return Ok(());
        }
        atomic_write(&path, new.as_bytes()).map_err(|e| StoreError::io("writing", &path, e))
    }

    /// After reclaiming a dead writer's lock: make `MEMORY.md` agree with the entry files
    /// again, surgically (dangling lines of vanished files dropped, missing entries appended,
    /// stale name/description lines updated in place; every other line kept byte-for-byte).
    /// Returns how many lines changed.
    fn repair_index(&self) -> Result<usize, StoreError> {
        let scan = self.store.scan()?;
        let Ok(index) = self.read_index_for_write() else {
            return Ok(0); // an invalid-UTF-8 index is the user's to fix; never rewrite it
        };
        let parsed = parse_index(&index);
        let mut next = index.clone();
        let mut changed = 0;
        for line in &parsed.entries {
            let file = &line.line.file;
            if !scan.names.contains(file)
                && let Some(t) = remove_index_line(&next, file)
            {
                next = t;
                changed += 1;
            }
        }
        for entry in &scan.entries {
            let wanted = index_line(&entry.meta, &entry.file);
            let present = parsed.entries.iter().find(|l| l.line.file == entry.file);
            let stale = present.is_none_or(|l| {
                l.line.name != wanted.name || l.line.description != wanted.description
            });
            if stale {
                next = upsert_index_line(&next, &wanted);
                changed += 1;
            }
        }
        if changed > 0 {
            self.snapshot("index", &[INDEX_FILE])?;
            self.write_index(&index, &next)?;
        }
        Ok(changed)
    }
}

/// A whole-round holder of the logical lock (dream, extraction).
///
/// Writes through a round skip the logical lock (the round holds it) and, after
/// [`Round::snapshot_all`], skip per-write snapshots (one round, one rollback point, PM-55).
pub struct Round<'s> {
    store: &'s Store,
    _guard: LogicalGuard,
    skip_snapshots: bool,
}

impl std::fmt::Debug for Round<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Round")
            .field("dir", &self.store.dir)
            .field("skip_snapshots", &self.skip_snapshots)
            .finish()
    }
}

impl<'s> Round<'s> {
    fn mode(&self) -> Mode {
        Mode {
            logical_held: true,
            skip_snapshot: self.skip_snapshots,
        }
    }

    /// The store (for reads).
    pub fn store(&self) -> &'s Store {
        self.store
    }

    /// Snapshots every top-level non-dot regular file under `.backups/<ts>-<label>/` while
    /// holding `.lock`, and makes later writes of this round skip their own snapshots.
    pub fn snapshot_all(&mut self, label: &str) -> Result<PathBuf, StoreError> {
        let store = self.store;
        ensure_private_dir(&store.dir).map_err(|e| StoreError::io("creating", &store.dir, e))?;
        let _guard = acquire(
            &store.dir,
            label,
            &LockOptions {
                timeout: store.opts.lock_timeout,
                poll: Duration::from_millis(50),
                reclaim_dead: store.opts.reclaim_dead,
            },
        )?;
        let path = snapshot_all(
            &store.dir,
            label,
            store.opts.snapshot_keep,
            store.opts.clock.now(),
        )?;
        self.skip_snapshots = true;
        Ok(path)
    }

    /// [`Store::add`] inside the round.
    pub fn add(&self, req: AddRequest) -> Result<WriteOutcome, StoreError> {
        self.store.add_in(req, self.mode())
    }

    /// [`Store::replace`] inside the round.
    pub fn replace(&self, req: ReplaceRequest) -> Result<WriteOutcome, StoreError> {
        self.store.replace_in(req, self.mode())
    }

    /// [`Store::rename`] inside the round.
    pub fn rename(
        &self,
        reference: &str,
        new_name: &str,
        expected_version: Option<&str>,
    ) -> Result<WriteOutcome, StoreError> {
        self.store
            .rename_in(reference, new_name, expected_version, self.mode())
    }

    /// [`Store::remove`] inside the round.
    pub fn remove(
        &self,
        reference: &str,
        expected_version: Option<&str>,
    ) -> Result<RemoveOutcome, StoreError> {
        self.store
            .remove_in(reference, expected_version, self.mode())
    }

    /// [`Store::rebuild_index`] inside the round.
    pub fn rebuild_index(&self) -> Result<RebuildOutcome, StoreError> {
        self.store.rebuild_in(self.mode())
    }
}

fn fallback(description: &str, name: &str) -> String {
    if description.is_empty() {
        name.to_owned()
    } else {
        description.to_owned()
    }
}

fn index_line(meta: &EntryMeta, file: &str) -> IndexLine {
    IndexLine {
        name: meta.name.clone(),
        file: file.to_owned(),
        description: meta.description.clone(),
    }
}

/// PM-36: a file name first, then an exact name (then the trimmed reference as a courtesy).
fn lookup<'a>(entries: &'a [Arc<StoredEntry>], reference: &str) -> Option<&'a Arc<StoredEntry>> {
    let find = |r: &str| {
        entries
            .iter()
            .find(|e| e.file == r)
            .or_else(|| entries.iter().find(|e| e.meta.name == r))
    };
    find(reference).or_else(|| {
        let t = reference.trim();
        if t == reference { None } else { find(t) }
    })
}

fn check_version(entry: &StoredEntry, expected: Option<&str>) -> Result<(), StoreError> {
    match expected {
        Some(v) if v != entry.version => Err(StoreError::Conflict {
            file: entry.file.clone(),
            expected: v.to_owned(),
            actual: entry.version.clone(),
        }),
        _ => Ok(()),
    }
}

/// Size and secret gates shared by every write.
fn check_content(
    name: &str,
    description: Option<&str>,
    body: Option<&str>,
) -> Result<(), StoreError> {
    if let Some(b) = body
        && b.len() > MAX_BODY_BYTES
    {
        return Err(StoreError::TooLarge {
            bytes: b.len(),
            limit: MAX_BODY_BYTES,
        });
    }
    let fields = [
        ("name", Some(name)),
        ("description", description),
        ("content", body),
    ];
    for (field, value) in fields {
        if let Some(kind) = value.and_then(find_secret) {
            return Err(StoreError::Secret {
                field,
                kind: kind.0,
            });
        }
    }
    Ok(())
}

/// Writes `bytes` to `path` atomically (temp file, fsync, rename), creating missing parent
/// directories private (0700) and the file 0600 — for files kept beside the memories, such
/// as saved headless sessions.
pub fn write_private_file(path: &Path, bytes: &[u8]) -> Result<(), StoreError> {
    if let Some(dir) = path.parent() {
        ensure_private_dir(dir).map_err(|e| StoreError::io("creating", dir, e))?;
    }
    atomic_write(path, bytes).map_err(|e| StoreError::io("writing", path, e))
}

/// The version of file bytes: 16 hex digits of sha256.
pub fn version_of(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    digest[..8].iter().map(|b| format!("{b:02x}")).collect()
}

/// Reads a regular file without following symlinks or blocking on FIFOs. `None` when it does
/// not exist.
fn read_bounded(path: &Path) -> io::Result<Option<Vec<u8>>> {
    use std::os::unix::fs::OpenOptionsExt;
    let flags = rustix::fs::OFlags::NOFOLLOW | rustix::fs::OFlags::NONBLOCK;
    let file = match fs::OpenOptions::new()
        .read(true)
        .custom_flags(flags.bits() as i32)
        .open(path)
    {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    let meta = file.metadata()?;
    if !meta.file_type().is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "not a regular file",
        ));
    }
    if meta.len() > MAX_READ_BYTES {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("file is larger than {MAX_READ_BYTES} bytes"),
        ));
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    file.take(MAX_READ_BYTES + 1).read_to_end(&mut bytes)?;
    Ok(Some(bytes))
}

/// Parses one entry file; anything unreadable or unparseable is invisible (PM-17).
fn read_entry_file(path: &Path, file: &str) -> Option<StoredEntry> {
    let bytes = read_bounded(path).ok()??;
    let text = std::str::from_utf8(&bytes).ok()?;
    let entry = parse_entry(text)?;
    Some(StoredEntry {
        file: file.to_owned(),
        meta: entry.meta,
        body: entry.body,
        version: version_of(&bytes),
    })
}
