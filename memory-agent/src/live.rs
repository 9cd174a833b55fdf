//! [`LiveIndex`]: the lexical index of one store, kept in step with its listing, persisted
//! between processes, and asked for near-duplicates.
//!
//! **In step.** [`LiveIndex::sync`] compares the store's listing with the indexed
//! `(file, version)` pairs (pointer equality first: an unchanged store hands back the very
//! same `Arc`s) and re-indexes only what changed.
//!
//! **Persisted.** [`LiveIndex::open`] reads `<memory dir>/.pimem/lexical-index` (see
//! [`INDEX_PATH`]): the store's listing cache (file stamps and parsed entries) and the
//! encoded index, behind a magic number and a checksum. The rows seed the store's cache, so
//! a new process reads only the files whose stamp changed, and the index needs only those
//! entries re-indexed instead of a rebuild. It is an optimisation only: a file that is
//! missing, damaged, from another version or built by another tokenizer is ignored (and
//! rewritten by the next [`LiveIndex::save`]), and every persisted row is checked against
//! the files by the store's stat scan before anything is used. The file lives in a dot
//! directory, which pi-memory's listings, pimem's snapshots and `MEMORY.md` never look at;
//! it is written atomically (memory-lock's `atomic_write`).
//!
//! **Duplicates.** [`LiveIndex::duplicate_of`] finds the existing entry a new one repeats
//! (cosine similarity of the field-weighted term vectors, [`DUPLICATE_THRESHOLD`]), for the
//! warning the `memory` tool appends to `add`.

use std::collections::{HashMap, HashSet};
use std::io;
use std::sync::Arc;

use camino::Utf8PathBuf;
use memory_core::tool::{DuplicateCheck, Similar};
use memory_core::{
    CachedFile, EntryMeta, EntryType, FileStamp, Store, StoreError, StoredEntry, Version,
    write_private_file,
};
use memory_rank::codec::{ByteReader, put_str, put_varint as put};
use memory_rank::{LexicalDoc, LexicalIndex, Options};

/// Where the persisted index lives, relative to the memory directory (inside
/// [`memory_core::CACHE_DIR`]).
pub const INDEX_PATH: &str = ".pimem/lexical-index";

/// The cosine similarity at which a new entry is reported as a likely duplicate of an
/// existing one (measured on the retrieval set's near-duplicates; BENCHMARKS.md,
/// "Duplicate warning").
pub const DUPLICATE_THRESHOLD: f64 = 0.5;

const MAGIC: &[u8; 8] = b"pimemli1";
/// Files larger than this are not read (a damaged or foreign file).
const MAX_FILE_BYTES: u64 = 1 << 30;

/// What [`LiveIndex::open`] found on disk.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Loaded {
    /// The persisted index was used; this many entries had to be (re-)indexed.
    Persisted {
        /// Entries indexed because they were new or changed since it was written.
        reindexed: usize,
    },
    /// There was none.
    Missing,
    /// It could not be used (the reason); the index was built from the files.
    Rebuilt(String),
}

/// The lexical index of one store; see the module docs.
#[derive(Debug, Clone)]
pub struct LiveIndex {
    index: LexicalIndex,
    /// The last listing, in the store's `(modified, file)` order.
    listing: Vec<Arc<StoredEntry>>,
    by_file: HashMap<String, Arc<StoredEntry>>,
    /// Documents decoded from the persisted index whose entry the next listing provides
    /// (known by version until then).
    pending: HashMap<String, Version>,
    /// Changed since it was loaded or saved.
    dirty: bool,
}

impl Default for LiveIndex {
    fn default() -> Self {
        LiveIndex::new(Options::default())
    }
}

fn doc_of(e: &StoredEntry) -> LexicalDoc<'_> {
    LexicalDoc {
        file: &e.file,
        name: &e.meta.name,
        description: &e.meta.description,
        body: &e.body,
        modified: &e.meta.modified,
    }
}

impl LiveIndex {
    /// An empty index ranking with `opts`.
    pub fn new(opts: Options) -> Self {
        LiveIndex {
            index: LexicalIndex::with_options(opts),
            listing: Vec::new(),
            by_file: HashMap::new(),
            pending: HashMap::new(),
            dirty: true,
        }
    }

    /// The index.
    pub fn index(&self) -> &LexicalIndex {
        &self.index
    }

    /// The last listing synced, in the store's `(modified, file)` order.
    pub fn listing(&self) -> &[Arc<StoredEntry>] {
        &self.listing
    }

    /// The indexed entry of `file`.
    pub fn entry(&self, file: &str) -> Option<&Arc<StoredEntry>> {
        self.by_file.get(file)
    }

    /// Whether the index changed since it was opened or saved.
    pub fn is_dirty(&self) -> bool {
        self.dirty
    }

    /// Brings the index in step with `entries` (the store's listing); returns how many
    /// entries were (re-)indexed or removed.
    pub fn sync(&mut self, entries: Vec<Arc<StoredEntry>>) -> usize {
        let unchanged = self.pending.is_empty()
            && entries.len() == self.listing.len()
            && entries
                .iter()
                .zip(&self.listing)
                .all(|(a, b)| Arc::ptr_eq(a, b) || (a.file == b.file && a.version == b.version));
        if unchanged {
            self.listing = entries;
            return 0;
        }
        let mut live: HashSet<&str> = HashSet::with_capacity(entries.len());
        let mut changed = 0;
        for e in &entries {
            live.insert(e.file.as_str());
            let same = match self.by_file.get(&e.file) {
                Some(old) => old.version == e.version,
                None => self.pending.get(&e.file) == Some(&e.version),
            };
            self.pending.remove(&e.file);
            if !same {
                self.index.insert(doc_of(e));
                self.by_file.insert(e.file.clone(), Arc::clone(e));
                changed += 1;
            } else {
                // The same content: keep the store's `Arc` (later syncs compare pointers).
                self.by_file.insert(e.file.clone(), Arc::clone(e));
            }
        }
        let gone: Vec<String> = self
            .by_file
            .keys()
            .filter(|f| !live.contains(f.as_str()))
            .cloned()
            .collect();
        for file in gone {
            self.index.remove(&file);
            self.by_file.remove(&file);
            changed += 1;
        }
        for (file, _) in self.pending.drain() {
            self.index.remove(&file);
            changed += 1;
        }
        self.listing = entries;
        self.dirty |= changed > 0;
        changed
    }

    /// Lists `store` and syncs with it; returns how many entries changed.
    pub fn refresh(&mut self, store: &Store) -> Result<usize, StoreError> {
        Ok(self.sync(store.list()?))
    }

    /// The existing entry `added` most likely repeats (similarity at least
    /// [`DUPLICATE_THRESHOLD`]), never `added` itself.
    pub fn duplicate_of(&self, added: &StoredEntry) -> Option<Similar> {
        let (file, similarity) = self.index.similar(doc_of(added), 1).into_iter().next()?;
        if similarity < DUPLICATE_THRESHOLD {
            return None;
        }
        let entry = self.by_file.get(&file)?;
        Some(Similar {
            name: entry.meta.name.clone(),
            file,
            similarity,
        })
    }

    /// The persisted index's path for `store`.
    pub fn path(store: &Store) -> Utf8PathBuf {
        store.dir().join(INDEX_PATH)
    }

    /// The index of `store` from its persisted file (seeding the store's listing cache with
    /// the persisted rows), synced with the store's listing; from the files when there is no
    /// usable persisted file. Ranks with the default [`Options`].
    pub fn open(store: &Store) -> Result<(LiveIndex, Loaded), StoreError> {
        LiveIndex::open_with(store, Options::default())
    }

    /// [`open`](Self::open) ranking with `opts`.
    pub fn open_with(store: &Store, opts: Options) -> Result<(LiveIndex, Loaded), StoreError> {
        let path = LiveIndex::path(store);
        // A store that has listed already (a long-lived process) needs no persisted rows:
        // its own cache is warmer.
        let cold = store.cache_stats().files == 0;
        let mut live = match read_persisted(&path, opts, cold) {
            Ok(Some((live, rows))) => {
                // Every row's stamp is checked by the listing below.
                store.seed_cache(rows);
                live
            }
            Ok(None) => return LiveIndex::fresh(store, opts, Loaded::Missing),
            Err(why) => return LiveIndex::fresh(store, opts, Loaded::Rebuilt(why)),
        };
        let reindexed = live.refresh(store)?;
        live.dirty = reindexed > 0;
        Ok((live, Loaded::Persisted { reindexed }))
    }

    fn fresh(
        store: &Store,
        opts: Options,
        loaded: Loaded,
    ) -> Result<(LiveIndex, Loaded), StoreError> {
        let mut live = LiveIndex::new(opts);
        live.refresh(store)?;
        Ok((live, loaded))
    }

    /// Writes the persisted index if it changed since it was opened or saved (atomically,
    /// creating `.pimem/` private). Returns whether it wrote. The store is listed first so
    /// the rows and the index agree.
    pub fn save(&mut self, store: &Store) -> Result<bool, StoreError> {
        match self.snapshot(store)? {
            Some(bytes) => {
                LiveIndex::write_snapshot(store, &bytes)?;
                Ok(true)
            }
            None => Ok(false),
        }
    }

    /// [`save`](Self::save) in two steps, so a host can write outside its lock: the bytes
    /// to persist if the index changed (it counts as saved from now on), then
    /// [`write_snapshot`](Self::write_snapshot).
    pub fn snapshot(&mut self, store: &Store) -> Result<Option<Vec<u8>>, StoreError> {
        self.refresh(store)?;
        if !self.dirty {
            return Ok(None);
        }
        self.dirty = false;
        Ok(Some(self.encode(store)))
    }

    /// Writes bytes from [`snapshot`](Self::snapshot) atomically.
    pub fn write_snapshot(store: &Store, bytes: &[u8]) -> Result<(), StoreError> {
        write_private_file(&LiveIndex::path(store), bytes)
    }

    /// The persisted file's bytes: magic, checksum, then the documents (file and version
    /// of every indexed entry), the listing cache's rows and the encoded index.
    fn encode(&self, store: &Store) -> Vec<u8> {
        let cached: HashMap<String, CachedFile> = store
            .cached_files()
            .into_iter()
            .map(|c| (c.file.clone(), c))
            .collect();
        let mut docs: Vec<&Arc<StoredEntry>> = self.by_file.values().collect();
        docs.sort_by(|a, b| a.file.cmp(&b.file));
        let mut payload = Vec::new();
        put(&mut payload, docs.len() as u64);
        for e in &docs {
            put_str(&mut payload, &e.file);
            payload.extend_from_slice(&e.version.to_bytes());
        }
        let mut rows = Vec::new();
        let mut n_rows = 0u64;
        for e in &docs {
            // The stamp vouches for this entry only if the cache holds this very entry.
            let Some(c) = cached
                .get(&e.file)
                .filter(|c| c.entry.as_ref().is_some_and(|ce| Arc::ptr_eq(ce, e)))
            else {
                continue;
            };
            n_rows += 1;
            put_row(&mut rows, &e.file, c.stamp, Some(e));
        }
        // Files that did not parse: their stamps spare a re-read.
        for c in cached.values().filter(|c| c.entry.is_none()) {
            n_rows += 1;
            put_row(&mut rows, &c.file, c.stamp, None);
        }
        let mut counted = Vec::new();
        put(&mut counted, n_rows);
        put(&mut payload, (counted.len() + rows.len()) as u64);
        payload.extend_from_slice(&counted);
        payload.extend_from_slice(&rows);
        let index = self.index.encode();
        put(&mut payload, index.len() as u64);
        payload.extend_from_slice(&index);
        let mut out = Vec::with_capacity(payload.len() + 16);
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&checksum(&payload).to_le_bytes());
        out.extend_from_slice(&payload);
        out
    }
}

fn put_row(out: &mut Vec<u8>, file: &str, stamp: FileStamp, entry: Option<&Arc<StoredEntry>>) {
    put_str(out, file);
    for w in stamp.to_words() {
        put(out, zigzag(w));
    }
    match entry {
        None => out.push(0),
        Some(e) => {
            out.push(1);
            out.extend_from_slice(&e.version.to_bytes());
            put_str(out, &e.meta.name);
            put_str(out, &e.meta.description);
            put_str(out, e.meta.entry_type.as_str());
            put_str(out, &e.meta.created);
            put_str(out, &e.meta.modified);
            put_str(out, &e.body);
        }
    }
}

/// The persisted index, `None` when there is no file, `Err(why)` when it cannot be used.
/// With `seed`, the persisted rows seed the (cold) store's cache and provide the entries;
/// without, the entries are matched by version against the store's next listing.
fn read_persisted(
    path: &camino::Utf8Path,
    opts: Options,
    seed: bool,
) -> Result<Option<(LiveIndex, Vec<CachedFile>)>, String> {
    let bytes = match std::fs::metadata(path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("cannot read {path}: {e}")),
        Ok(m) if !m.is_file() || m.len() > MAX_FILE_BYTES => {
            return Err(format!("{path} is not a regular file of a sane size"));
        }
        Ok(_) => std::fs::read(path).map_err(|e| format!("cannot read {path}: {e}"))?,
    };
    if bytes.len() < 16 || &bytes[..8] != MAGIC {
        return Err(format!("{path}: unknown format or version"));
    }
    let mut sum = [0u8; 8];
    sum.copy_from_slice(&bytes[8..16]);
    let payload = &bytes[16..];
    if u64::from_le_bytes(sum) != checksum(payload) {
        return Err(format!("{path}: checksum mismatch (damaged)"));
    }
    decode_payload(payload, opts, seed)
        .map_err(|e| format!("{path}: {e}"))
        .map(Some)
}

fn decode_payload(
    payload: &[u8],
    opts: Options,
    seed: bool,
) -> Result<(LiveIndex, Vec<CachedFile>), String> {
    let mut r = ByteReader::new(payload);
    let n_docs = r.count(1)?;
    let mut versions: HashMap<&str, Version> = HashMap::with_capacity(n_docs);
    for _ in 0..n_docs {
        let file = r.str()?;
        let v = read_version(&mut r)?;
        versions.insert(file, v);
    }
    let rows_len = r.count(1)?;
    let rows_bytes = r.take(rows_len)?;
    let index_len = r.count(1)?;
    let index_bytes = r.take(index_len)?;
    if !r.is_at_end() {
        return Err("trailing bytes".to_owned());
    }
    let index = LexicalIndex::decode(index_bytes, opts).map_err(|e| e.to_string())?;
    if index.len() != versions.len() || versions.keys().any(|f| !index.contains(f)) {
        return Err("documents and index disagree".to_owned());
    }
    let rows = if seed {
        decode_rows(rows_bytes)?
    } else {
        Vec::new()
    };
    // The indexed documents are known by version until the store's listing provides their
    // entries (the seeded rows' entries, or the warm cache's).
    let pending = versions
        .into_iter()
        .map(|(f, v)| (f.to_owned(), v))
        .collect();
    let live = LiveIndex {
        index,
        listing: Vec::new(),
        by_file: HashMap::new(),
        pending,
        dirty: false,
    };
    Ok((live, rows))
}

fn decode_rows(bytes: &[u8]) -> Result<Vec<CachedFile>, String> {
    let mut r = ByteReader::new(bytes);
    let n = r.count(1)?;
    let mut rows = Vec::with_capacity(n);
    for _ in 0..n {
        let file = r.str()?.to_owned();
        let mut words = [0i64; 7];
        for w in &mut words {
            *w = unzigzag(r.varint()?);
        }
        let entry = match r.byte()? {
            0 => None,
            1 => {
                let version = read_version(&mut r)?;
                let name = r.str()?.to_owned();
                let description = r.str()?.to_owned();
                let entry_type: EntryType = r.str()?.parse().map_err(|_| "bad entry type")?;
                let created = r.str()?.to_owned();
                let modified = r.str()?.to_owned();
                let body = r.str()?.to_owned();
                Some(Arc::new(StoredEntry {
                    file: file.clone(),
                    meta: EntryMeta {
                        name,
                        description,
                        entry_type,
                        created,
                        modified,
                    },
                    body,
                    version,
                }))
            }
            _ => return Err("bad row marker".to_owned()),
        };
        rows.push(CachedFile {
            file,
            stamp: FileStamp::from_words(words),
            entry,
        });
    }
    if !r.is_at_end() {
        return Err("trailing bytes in rows".to_owned());
    }
    Ok(rows)
}

/// A 64-bit checksum of `bytes` (word-wise multiply-rotate; catches damage, not attacks).
fn checksum(bytes: &[u8]) -> u64 {
    const K: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut h: u64 = bytes.len() as u64 ^ K;
    let mut chunks = bytes.chunks_exact(8);
    for c in &mut chunks {
        let mut w = [0u8; 8];
        w.copy_from_slice(c);
        h = (h.rotate_left(23) ^ u64::from_le_bytes(w)).wrapping_mul(K);
    }
    for &b in chunks.remainder() {
        h = (h.rotate_left(23) ^ u64::from(b)).wrapping_mul(K);
    }
    h ^ (h >> 29)
}

fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

fn unzigzag(v: u64) -> i64 {
    ((v >> 1) as i64) ^ -((v & 1) as i64)
}

/// An 8-byte [`Version`] as written by `encode_rows` and the document list.
fn read_version(r: &mut ByteReader<'_>) -> Result<Version, String> {
    let mut v = [0u8; 8];
    v.copy_from_slice(r.take(8)?);
    Ok(Version::from_bytes(v))
}

impl DuplicateCheck for LiveIndex {
    fn similar_to(
        &mut self,
        added: &StoredEntry,
        listing: Vec<Arc<StoredEntry>>,
    ) -> Option<Similar> {
        self.sync(listing);
        self.duplicate_of(added)
    }
}
