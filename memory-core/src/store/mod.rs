//! The [`Store`]: every read and write of one project memory directory.
//!
//! * [`types`]: requests, outcomes, [`Version`], [`Notice`];
//! * `cache`: the mtime-cached listing (PM-43) every read goes through;
//! * `write`: the write pipeline (PM-44) every mutation goes through;
//! * `round`: [`Round`] (one logical-lock holder for many writes) and [`Target`].

mod cache;
mod hold;
mod round;
pub(crate) mod types;
mod watch;
mod write;

use std::io;
use std::sync::Arc;
use std::time::Duration;

use camino::{Utf8Path, Utf8PathBuf};
use memory_index::{injection_window, sanitize_for_injection};
use memory_lock::{
    LockState, atomic_write, clean_stale_temps, ensure_private_dir, inspect, lock_logical,
    remove_lock, try_lock_logical,
};
use parking_lot::Mutex;

use crate::clock::Clock;
use crate::config::Config;
use crate::error::StoreError;
use cache::{Cache, read_bounded};
pub use hold::DirHold;
pub use round::{Round, Target};
use types::{
    AddRequest, DreamMeta, IndexSection, RebuildOutcome, RemoveOutcome, ReplaceRequest,
    StoredEntry, Version, WriteOutcome,
};
use write::STANDALONE;

/// The index file of every memory directory.
pub const INDEX_FILE: &str = memory_index::INDEX_FILE_NAME;
/// The dream bookkeeping file (PM-69).
pub const DREAM_META_FILE: &str = ".dream-meta.json";
/// The directory of files kept beside the memories only to go faster (the persisted
/// lexical index): a dot directory, so pi-memory, listings and snapshots never look at it.
pub const CACHE_DIR: &str = ".pimem";
/// Largest body a write accepts (beyond the original, which had no limit: a multi-megabyte
/// "memory" is always a mistake and would be cut at injection anyway).
pub const MAX_BODY_BYTES: usize = 1 << 20;

/// Tunables of a [`Store`]. `Default` is pi-memory 2.5's defaults; a host with a
/// `memory.json` converts it with `StoreOptions::from(&config)`.
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
    /// The persistent memory switch every write checks (PA-15); `None`: no switch (an
    /// embedding host without pi-auto-memory's setting). pimem's pi sidecar and CLI set it to
    /// `<agentDir>/auto-memory.json`.
    pub switch: Option<crate::switch::Switch>,
}

impl Default for StoreOptions {
    fn default() -> Self {
        StoreOptions::from(&Config::default())
    }
}

/// Counters of the listing cache, for diagnostics and tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct CacheStats {
    /// Entry files read and parsed since the store was created (each cache miss; an
    /// unchanged file is never read twice).
    pub parsed: u64,
    /// Listings answered from file-system notifications, without the full stat scan.
    pub watched: u64,
    /// Whether a watch is running now.
    pub watching: bool,
    /// Files in the cache now.
    pub files: usize,
}

/// What a file looked like when the listing cache read it (device, inode, size, mtime,
/// ctime): an unchanged stamp means unchanged bytes (PM-43). Persisted by hosts that keep
/// the cache across processes ([`Store::cached_files`], [`Store::seed_cache`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileStamp(cache::Stamp);

impl FileStamp {
    /// The stamp as seven numbers: device, inode, size, mtime s/ns, ctime s/ns.
    pub fn to_words(self) -> [i64; 7] {
        self.0.words()
    }

    /// The stamp of [`FileStamp::to_words`].
    pub fn from_words(words: [i64; 7]) -> FileStamp {
        FileStamp(cache::Stamp::from_words(words))
    }
}

/// One row of the listing cache: a candidate file, its stamp, and the entry read from it
/// (`None` for a file that did not parse).
#[derive(Debug, Clone)]
pub struct CachedFile {
    /// The file name in the memory directory.
    pub file: String,
    /// Its stamp when it was read.
    pub stamp: FileStamp,
    /// The entry, if the file parsed.
    pub entry: Option<Arc<StoredEntry>>,
}

/// The memory store of one project directory. Cheap to share between threads (`&Store`).
pub struct Store {
    dir: Utf8PathBuf,
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
    pub fn new(dir: impl Into<Utf8PathBuf>, opts: StoreOptions) -> Self {
        Store {
            dir: dir.into(),
            opts,
            cache: Mutex::new(Cache::default()),
        }
    }

    /// The project memory directory.
    pub fn dir(&self) -> &Utf8Path {
        &self.dir
    }

    /// The options in effect.
    pub fn options(&self) -> &StoreOptions {
        &self.opts
    }

    /// What the mtime cache did so far (PM-43).
    pub fn cache_stats(&self) -> CacheStats {
        let cache = self.cache.lock();
        CacheStats {
            parsed: cache.parsed,
            watched: cache.watched_listings,
            watching: cache.watch.is_some(),
            files: cache.rows.len(),
        }
    }

    /// Keeps the listing warm with file-system notifications (inotify on Linux): later
    /// listings `lstat` only the files the kernel reported changed instead of every file.
    /// Meant for long-lived processes; returns whether the watch runs. Changes made by any
    /// process, editors writing in place included, are seen by the next listing; whenever
    /// the notifications cannot vouch for the directory (overflow, an error, a network file
    /// system, no directory yet) listings fall back to the full stat scan, which stays the
    /// source of truth. See the `watch` module docs for the barrier that makes this exact.
    pub fn watch(&self) -> bool {
        self.start_watch()
    }

    /// The listing cache's rows (sorted by file), for persisting them.
    pub fn cached_files(&self) -> Vec<CachedFile> {
        self.cache_rows()
            .into_iter()
            .map(|(file, stamp, entry)| CachedFile {
                file,
                stamp: FileStamp(stamp),
                entry,
            })
            .collect()
    }

    /// Seeds an empty listing cache with rows persisted by an earlier process, so that files
    /// whose stamp did not change are not read again. The next listing still `lstat`s every
    /// file and re-reads any whose stamp differs: persisted rows are never trusted over the
    /// files. Returns how many rows were taken (0 when the cache was not empty).
    pub fn seed_cache(&self, files: impl IntoIterator<Item = CachedFile>) -> usize {
        self.seed_rows(files.into_iter().map(|f| (f.file, f.stamp.0, f.entry)))
    }

    /// Where standalone writes go (`Target::Store(self)`).
    pub fn target(&self) -> Target<'_, 'static> {
        Target::Store(self)
    }

    fn index_path(&self) -> Utf8PathBuf {
        self.dir.join(INDEX_FILE)
    }

    // ---------------------------------------------------------------- reads

    /// Every parseable entry, ordered by `(modified, file)` ascending (PM-39).
    pub fn list(&self) -> Result<Vec<Arc<StoredEntry>>, StoreError> {
        Ok(self.scan_with(false)?.entries)
    }

    /// The entry with this file name, else this exact name (PM-36).
    pub fn read(&self, reference: &str) -> Result<Option<Arc<StoredEntry>>, StoreError> {
        Ok(write::lookup(&self.scan_with(false)?.entries, reference).cloned())
    }

    /// Entries whose name, description or body contains `query`, case-insensitively (PM-40).
    pub fn search(&self, query: &str) -> Result<Vec<Arc<StoredEntry>>, StoreError> {
        if query.trim().is_empty() {
            return Err(StoreError::EmptyQuery);
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
        let path = self.index_path();
        match read_bounded(path.as_std_path()) {
            Ok(Some(bytes)) => Ok(String::from_utf8_lossy(&bytes).into_owned()),
            Ok(None) => Ok(String::new()),
            Err(e) => Err(StoreError::io("reading", path, e)),
        }
    }

    /// The raw `MEMORY.md` text (lossy for invalid UTF-8) and the [`Version`] of its bytes; a
    /// missing file reads as `""` at the version of no bytes.
    pub fn read_index_versioned(&self) -> Result<(String, Version), StoreError> {
        let path = self.index_path();
        match read_bounded(path.as_std_path()) {
            Ok(bytes) => {
                let bytes = bytes.unwrap_or_default();
                let version = Version::of(&bytes);
                Ok((String::from_utf8_lossy(&bytes).into_owned(), version))
            }
            Err(e) => Err(StoreError::io("reading", path, e)),
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
    /// the directory and in its `.pimem/` cache directory (their pid is dead and they are
    /// over a minute old). Returns how many. Best effort: a missing directory or an
    /// unremovable file is not an error.
    pub fn clean_stale_temps(&self) -> usize {
        clean_stale_temps(self.dir.as_std_path()).unwrap_or(0)
            + clean_stale_temps(self.dir.join(CACHE_DIR).as_std_path()).unwrap_or(0)
    }

    /// The state of the cross-process lock.
    pub fn lock_state(&self) -> Result<LockState, StoreError> {
        inspect(self.dir.as_std_path())
            .map_err(|e| StoreError::io("inspecting", self.dir.join(".lock"), e))
    }

    /// Removes `.lock` (`/memory unlock`, PM-77). `false` when there was none.
    pub fn remove_lock(&self) -> Result<bool, StoreError> {
        remove_lock(self.dir.as_std_path())
            .map_err(|e| StoreError::io("removing", self.dir.join(".lock"), e))
    }

    /// `.dream-meta.json`, when present and well-formed.
    pub fn dream_meta(&self) -> Option<DreamMeta> {
        let bytes = read_bounded(self.dir.join(DREAM_META_FILE).as_std_path()).ok()??;
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
        write_private_file(&path, &json)
    }

    // ---------------------------------------------------------------- rounds

    /// Holds the logical lock for a whole round (dream): writes through the [`Round`] do not
    /// take it again. Waits up to `timeout`.
    pub fn begin_round(&self, timeout: Duration) -> Result<Round<'_>, StoreError> {
        Ok(Round::new(
            self,
            lock_logical(self.dir.as_std_path(), timeout)?,
        ))
    }

    /// Like [`Store::begin_round`] but never waits: `None` when another round or write holds
    /// the logical lock (extraction skips its turn, PM-65).
    pub fn try_begin_round(&self) -> Option<Round<'_>> {
        Some(Round::new(self, try_lock_logical(self.dir.as_std_path())?))
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
        expected_version: Option<&Version>,
    ) -> Result<WriteOutcome, StoreError> {
        self.rename_in(reference, new_name, expected_version, STANDALONE)
    }

    /// Deletes an entry file and its index line (PM-37).
    pub fn remove(
        &self,
        reference: &str,
        expected_version: Option<&Version>,
    ) -> Result<RemoveOutcome, StoreError> {
        self.remove_in(reference, expected_version, STANDALONE)
    }

    /// Replaces `MEMORY.md` with a person's edit (`/memory list` → edit, PA-19): refused
    /// with `Memory conflict: stale version` unless the file is still at `expected`, with a
    /// secret or an oversized text refused before anything is touched; the old file is
    /// snapshotted first. Returns the new version.
    pub fn replace_index(
        &self,
        text: &str,
        expected: Option<&Version>,
    ) -> Result<Version, StoreError> {
        self.replace_index_in(text, expected, STANDALONE)
    }

    /// Rebuilds `MEMORY.md` from the entry files (PM-29).
    pub fn rebuild_index(&self) -> Result<RebuildOutcome, StoreError> {
        self.rebuild_in(STANDALONE)
    }
}

/// Writes `bytes` to `path` atomically (temp file, fsync, rename), creating missing parent
/// directories private (0700) and the file 0600 — for files kept beside the memories, such
/// as `.dream-meta.json` and saved headless sessions.
pub fn write_private_file(path: &Utf8Path, bytes: &[u8]) -> Result<(), StoreError> {
    if let Some(dir) = path.parent() {
        ensure_private_dir(dir.as_std_path()).map_err(|e| StoreError::io("creating", dir, e))?;
    }
    atomic_write(path.as_std_path(), bytes).map_err(|e| StoreError::io("writing", path, e))
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_lock_crate_keys_the_logical_lock_on_the_same_index_file() {
        assert_eq!(super::INDEX_FILE, memory_lock::INDEX_FILE);
    }
}
