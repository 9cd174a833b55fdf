//! The mtime cache (PM-43): one `readdir` plus one `lstat` per candidate file; a file is
//! re-read only when its (device, inode, size, mtime, ctime) stamp changed. Atomic
//! replacement always gives a rewritten file a new inode, so our own writes can never be
//! mistaken for unchanged.

use std::collections::{HashMap, HashSet};
use std::fs;
use std::io::{self, Read};
use std::path::Path;
use std::sync::Arc;

use memory_index::{is_entry_candidate, parse_entry};

use super::Store;
use super::types::{StoredEntry, Version};
use super::watch::{Changes, Watch};
use crate::error::StoreError;

/// Entry files larger than this are not read at all (treated as unparseable, left alone).
const MAX_READ_BYTES: u64 = 16 << 20;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Stamp {
    dev: u64,
    ino: u64,
    len: u64,
    mtime: (i64, i64),
    ctime: (i64, i64),
}

impl Stamp {
    /// The seven numbers of the stamp (for persisting it).
    pub(super) fn words(self) -> [i64; 7] {
        [
            self.dev as i64,
            self.ino as i64,
            self.len as i64,
            self.mtime.0,
            self.mtime.1,
            self.ctime.0,
            self.ctime.1,
        ]
    }

    /// The stamp of [`Stamp::words`].
    pub(super) fn from_words(w: [i64; 7]) -> Stamp {
        Stamp {
            dev: w[0] as u64,
            ino: w[1] as u64,
            len: w[2] as u64,
            mtime: (w[3], w[4]),
            ctime: (w[5], w[6]),
        }
    }

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

pub(super) struct CacheRow {
    pub(super) stamp: Stamp,
    pub(super) entry: Option<Arc<StoredEntry>>,
    /// The scan that last saw this file (rows of vanished files are dropped).
    generation: u64,
}

/// The mtime cache: one row per candidate file, plus the sorted listing of the last scan,
/// reused as-is while no row changed (the warm path allocates no strings for sorting).
#[derive(Default)]
pub(super) struct Cache {
    pub(super) rows: HashMap<String, CacheRow>,
    /// Entry files parsed since the store was created (cache misses).
    pub(super) parsed: u64,
    generation: u64,
    sorted: Vec<Arc<StoredEntry>>,
    sorted_valid: bool,
    /// File-system notifications narrowing the warm listing ([`Store::watch`]).
    pub(super) watch: Option<Watch>,
    /// [`Store::watch`] was called: re-establish a watch that broke.
    pub(super) watch_wanted: bool,
    /// Listings answered from the watch (no full stat scan).
    pub(super) watched_listings: u64,
    /// A row was dropped since `sorted` was built (our own write): rebuild the order.
    resort_needed: bool,
}

impl Cache {
    /// Forgets one file (after we wrote, moved or removed it).
    pub(super) fn invalidate(&mut self, file: &str) {
        self.rows.remove(file);
        match &self.watch {
            // The next listing looks at this name and rebuilds the order.
            Some(w) if w.healthy() => {
                w.touch(file);
                self.resort_needed = true;
            }
            _ => self.sorted_valid = false,
        }
    }

    fn resort(&mut self) {
        let mut entries: Vec<Arc<StoredEntry>> =
            self.rows.values().filter_map(|r| r.entry.clone()).collect();
        entries.sort_by(|a, b| {
            memory_index::compare_modified_then_file(
                &a.meta.modified,
                &a.file,
                &b.meta.modified,
                &b.file,
            )
        });
        self.sorted = entries;
        self.sorted_valid = true;
        self.resort_needed = false;
    }
}

/// One directory listing: the parseable entries (sorted by `(modified, file)`) and every name
/// present in the directory (parseable or not), which new file names must avoid.
pub(super) struct Scan {
    pub(super) entries: Vec<Arc<StoredEntry>>,
    pub(super) names: HashSet<String>,
}

impl Store {
    /// Lists the directory through the cache. `with_names` also collects every directory
    /// entry's name (writes need them to pick free file names; reads do not pay for it).
    pub(super) fn scan_with(&self, with_names: bool) -> Result<Scan, StoreError> {
        if !with_names && let Some(entries) = self.watched_listing() {
            return Ok(Scan {
                entries,
                names: HashSet::new(),
            });
        }
        self.full_scan(with_names)
    }

    /// The listing from the watch: only the names the kernel reported are looked at. `None`
    /// when the watch cannot vouch for the directory (then the full scan runs).
    fn watched_listing(&self) -> Option<Vec<Arc<StoredEntry>>> {
        let mut cache = self.cache.lock();
        let cache = &mut *cache;
        let watch = cache.watch.as_ref().filter(|w| w.healthy())?;
        if !cache.sorted_valid {
            return None;
        }
        let Changes::Names(names) = watch.take() else {
            return None;
        };
        let mut changed = false;
        for name in names {
            if !is_entry_candidate(&name) {
                continue;
            }
            let path = self.dir.join(&name);
            let stamp = rustix::fs::lstat(path.as_std_path())
                .ok()
                .filter(|st| {
                    rustix::fs::FileType::from_raw_mode(st.st_mode)
                        == rustix::fs::FileType::RegularFile
                })
                .map(|st| Stamp::of(&st));
            match stamp {
                None => changed |= cache.rows.remove(&name).is_some(),
                Some(stamp) => {
                    if cache.rows.get(&name).is_some_and(|r| r.stamp == stamp) {
                        continue;
                    }
                    let entry = read_entry_file(path.as_std_path(), &name).map(Arc::new);
                    cache.parsed += 1;
                    cache.rows.insert(
                        name,
                        CacheRow {
                            stamp,
                            entry,
                            generation: cache.generation,
                        },
                    );
                    changed = true;
                }
            }
        }
        if changed || cache.resort_needed {
            cache.resort();
        }
        cache.watched_listings += 1;
        Some(cache.sorted.clone())
    }

    /// Starts file-system notifications for this directory if they are not running; see
    /// [`Store::watch`].
    pub(super) fn start_watch(&self) -> bool {
        let mut cache = self.cache.lock();
        cache.watch_wanted = true;
        if cache.watch.as_ref().is_some_and(Watch::healthy) {
            return true;
        }
        cache.watch = Watch::start(self.dir.as_std_path());
        // Whatever happened before the watch started is unknown to it.
        cache.sorted_valid = false;
        cache.watch.is_some()
    }

    /// One `readdir` plus one `lstat` per candidate: the source of truth.
    fn full_scan(&self, with_names: bool) -> Result<Scan, StoreError> {
        use rustix::fs::{Dir, FileType, Mode, OFlags};
        let list_err = |e: io::Error| StoreError::io("listing", &self.dir, e);
        {
            let mut cache = self.cache.lock();
            if cache.watch_wanted && !cache.watch.as_ref().is_some_and(Watch::healthy) {
                cache.watch = Watch::start(self.dir.as_std_path());
            }
            // Changes reported from now on are looked at again by the next listing.
            if let Some(w) = &cache.watch {
                w.clear();
            }
        }
        let fd = match rustix::fs::open(
            self.dir.as_std_path(),
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        ) {
            Ok(fd) => fd,
            Err(rustix::io::Errno::NOENT) => {
                let mut cache = self.cache.lock();
                let wanted = cache.watch_wanted;
                *cache = Cache::default();
                cache.watch_wanted = wanted;
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
        let mut cache = self.cache.lock();
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
                    let entry =
                        read_entry_file(self.dir.join(&name).as_std_path(), &name).map(Arc::new);
                    cache.parsed += 1;
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
            cache.resort();
        }
        Ok(Scan {
            entries: cache.sorted.clone(),
            names,
        })
    }

    /// A listing with every directory name (what writes need).
    pub(super) fn scan(&self) -> Result<Scan, StoreError> {
        self.scan_with(true)
    }

    /// The cache's rows, for persisting them.
    pub(super) fn cache_rows(&self) -> Vec<(String, Stamp, Option<Arc<StoredEntry>>)> {
        let cache = self.cache.lock();
        let mut rows: Vec<_> = cache
            .rows
            .iter()
            .map(|(name, row)| (name.clone(), row.stamp, row.entry.clone()))
            .collect();
        rows.sort_by(|a, b| a.0.cmp(&b.0));
        rows
    }

    /// Seeds an empty cache with persisted rows; the next listing checks every stamp.
    pub(super) fn seed_rows(
        &self,
        rows: impl IntoIterator<Item = (String, Stamp, Option<Arc<StoredEntry>>)>,
    ) -> usize {
        let mut cache = self.cache.lock();
        if !cache.rows.is_empty() {
            return 0;
        }
        let generation = cache.generation;
        for (name, stamp, entry) in rows {
            cache.rows.insert(
                name,
                CacheRow {
                    stamp,
                    entry,
                    generation,
                },
            );
        }
        cache.sorted_valid = false;
        cache.rows.len()
    }
}

/// Reads a regular file without following symlinks or blocking on FIFOs. `None` when it does
/// not exist.
pub(super) fn read_bounded(path: &Path) -> io::Result<Option<Vec<u8>>> {
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
        version: Version::of(&bytes),
    })
}
