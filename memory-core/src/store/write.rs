//! The write pipeline (PM-44), in this fixed order so locks never invert: validate input
//! (before any lock, so bad input never touches the disk) → in-process logical lock (unless
//! the caller holds a [`Round`](super::Round)) → cross-process `.lock` → the memory switch's
//! commit permit (PA-15; checked once lock-free before anything else too) → snapshot of the
//! files about to change (unless the round already snapshotted the whole directory) →
//! read-modify-write with atomic replacement → release.

use std::collections::HashSet;
use std::fs;
use std::io;
use std::sync::Arc;
use std::time::Duration;

use memory_index::{
    EntryMeta, IndexLine, RebuildEntry, capacity_warning, derive_description, entry_file_name,
    index_capacity, is_entry_candidate, parse_index, rebuild_index, remove_index_line,
    render_entry, replace_index_line, unique_file_name, upsert_index_line, validate_body,
    validate_created, validate_description, validate_name,
};
use memory_lock::{
    FileLockGuard, LockOptions, LogicalGuard, acquire, atomic_write, clean_stale_temps,
    ensure_private_dir, lock_logical, move_file, remove_file, snapshot_files,
};

use super::cache::read_bounded;
use super::types::{
    AddRequest, Notice, RebuildOutcome, RemoveOutcome, ReplaceRequest, StoredEntry, Version,
    WriteOutcome,
};
use super::{INDEX_FILE, MAX_BODY_BYTES, Store};
use crate::clock::{iso_date, iso_millis};
use crate::error::StoreError;
use crate::secrets::find_secret_at;

/// How a write runs: standalone (takes the logical lock) or inside a [`Round`].
#[derive(Debug, Clone, Copy)]
pub(crate) struct Mode {
    pub(crate) logical_held: bool,
    pub(crate) skip_snapshot: bool,
}

pub(crate) const STANDALONE: Mode = Mode {
    logical_held: false,
    skip_snapshot: false,
};

impl Store {
    pub(crate) fn add_in(&self, req: AddRequest, mode: Mode) -> Result<WriteOutcome, StoreError> {
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
        let (mut out, notices) = self.pipeline("add", mode, |tx| {
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
        })?;
        out.notices = notices;
        Ok(out)
    }

    pub(crate) fn replace_in(
        &self,
        req: ReplaceRequest,
        mode: Mode,
    ) -> Result<WriteOutcome, StoreError> {
        let new_name = req.name.as_deref().map(validate_name).transpose()?;
        let description = validate_description(req.description.as_deref())?;
        let body = req.body.as_deref().map(validate_body).transpose()?;
        check_content(
            new_name.as_deref().unwrap_or(""),
            description.as_deref(),
            body.as_deref(),
        )?;
        let (mut out, notices) = self.pipeline("replace", mode, |tx| {
            let scan = self.scan()?;
            let current = lookup(&scan.entries, &req.reference)
                .cloned()
                .ok_or_else(|| StoreError::NotFound {
                    reference: req.reference.clone(),
                })?;
            check_version(&current, req.expected_version.as_ref())?;
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
        })?;
        out.notices = notices;
        Ok(out)
    }

    pub(crate) fn rename_in(
        &self,
        reference: &str,
        new_name: &str,
        expected_version: Option<&Version>,
        mode: Mode,
    ) -> Result<WriteOutcome, StoreError> {
        self.replace_in(
            ReplaceRequest {
                reference: reference.to_owned(),
                name: Some(new_name.to_owned()),
                expected_version: expected_version.copied(),
                ..ReplaceRequest::default()
            },
            mode,
        )
    }

    pub(crate) fn remove_in(
        &self,
        reference: &str,
        expected_version: Option<&Version>,
        mode: Mode,
    ) -> Result<RemoveOutcome, StoreError> {
        let (mut out, notices) = self.pipeline("remove", mode, |tx| {
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
        })?;
        out.notices = notices;
        Ok(out)
    }

    pub(crate) fn rebuild_in(&self, mode: Mode) -> Result<RebuildOutcome, StoreError> {
        let (mut out, notices) = self.pipeline("rebuild", mode, |tx| {
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
        })?;
        out.notices = notices;
        Ok(out)
    }

    /// Replaces `MEMORY.md` with a person's edit of it (PA-19): secret-scanned and size-checked
    /// like an entry body, then written only if the file is still at `expected` (the version
    /// of the bytes that were shown; a missing file has the version of no bytes).
    pub(crate) fn replace_index_in(
        &self,
        text: &str,
        expected: Option<&Version>,
        mode: Mode,
    ) -> Result<Version, StoreError> {
        check_content("", None, Some(text))?;
        let (version, _notices) = self.pipeline("index", mode, |tx| {
            let path = self.index_path();
            let current = match read_bounded(path.as_std_path()) {
                Ok(bytes) => bytes.unwrap_or_default(),
                Err(e) => return Err(StoreError::io("reading", path, e)),
            };
            let actual = Version::of(&current);
            if let Some(v) = expected
                && *v != actual
            {
                return Err(StoreError::Conflict {
                    file: INDEX_FILE.to_owned(),
                    expected: *v,
                    actual,
                });
            }
            tx.snapshot("index", &[INDEX_FILE])?;
            atomic_write(path.as_std_path(), text.as_bytes())
                .map_err(|e| StoreError::io("writing", &path, e))?;
            Ok(Version::of(text.as_bytes()))
        })?;
        Ok(version)
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

    /// The cross-process lock settings of this store.
    pub(super) fn lock_options(&self) -> LockOptions {
        LockOptions {
            timeout: self.opts.lock_timeout,
            poll: Duration::from_millis(50),
            reclaim_dead: self.opts.reclaim_dead,
        }
    }

    /// The write pipeline shared by every mutation: `body` runs while `.lock` is held; the
    /// notices of a reclaim come back beside its result.
    fn pipeline<T>(
        &self,
        op: &str,
        mode: Mode,
        body: impl FnOnce(&mut Tx<'_>) -> Result<T, StoreError>,
    ) -> Result<(T, Vec<Notice>), StoreError> {
        // Off or paused: refuse before any lock or directory is touched.
        if let Some(refusal) = self.opts.switch.as_ref().and_then(|s| s.state().refusal()) {
            return Err(refusal);
        }
        let _logical: Option<LogicalGuard> = if mode.logical_held {
            None
        } else {
            Some(lock_logical(
                self.dir.as_std_path(),
                self.opts.lock_timeout,
            )?)
        };
        ensure_private_dir(self.dir.as_std_path())
            .map_err(|e| StoreError::io("creating", &self.dir, e))?;
        let guard = acquire(self.dir.as_std_path(), op, &self.lock_options())?;
        // The permit is held until this write's last rename: `off` waits for it, and a
        // write that passed an older check cannot land after `off` returned (PA-15).
        let _permit = match &self.opts.switch {
            Some(switch) => Some(switch.permit()?),
            None => None,
        };
        let mut tx = Tx {
            store: self,
            skip_snapshot: mode.skip_snapshot,
            _guard: &guard,
        };
        let mut notices = Vec::new();
        if let Some(holder) = guard.reclaimed() {
            notices.push(Notice::ReclaimedLock {
                holder: holder.clone(),
            });
            // Temp files of crashed writers are dot files (invisible to scans); tidy them.
            let _ = clean_stale_temps(self.dir.as_std_path());
            let repaired = tx.repair_index()?;
            if repaired > 0 {
                notices.push(Notice::RepairedIndex { lines: repaired });
            }
        }
        let out = body(&mut tx)?;
        drop(_permit);
        drop(guard);
        Ok((out, notices))
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
            self.store.dir.as_std_path(),
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
        match read_bounded(path.as_std_path()) {
            Ok(Some(bytes)) => {
                String::from_utf8(bytes).map_err(|_| StoreError::IndexNotUtf8 { path })
            }
            Ok(None) => Ok(String::new()),
            Err(e) => Err(StoreError::io("reading", path, e)),
        }
    }

    fn write_entry(&self, file: &str, meta: &EntryMeta, body: &str) -> Result<Version, StoreError> {
        let text = render_entry(meta, body);
        let path = self.store.dir.join(file);
        atomic_write(path.as_std_path(), text.as_bytes())
            .map_err(|e| StoreError::io("writing", &path, e))?;
        self.store.cache.lock().invalidate(file);
        Ok(Version::of(text.as_bytes()))
    }

    fn move_entry_file(&self, from: &str, to: &str) -> Result<(), StoreError> {
        let (src, dst) = (self.store.dir.join(from), self.store.dir.join(to));
        move_file(src.as_std_path(), dst.as_std_path())
            .map_err(|e| StoreError::io("renaming", &src, e))?;
        let mut cache = self.store.cache.lock();
        cache.invalidate(from);
        cache.invalidate(to);
        Ok(())
    }

    fn remove_entry_file(&self, file: &str) -> Result<(), StoreError> {
        let path = self.store.dir.join(file);
        remove_file(path.as_std_path()).map_err(|e| StoreError::io("removing", &path, e))?;
        self.store.cache.lock().invalidate(file);
        Ok(())
    }

    /// Writes the index unless the new text equals the old (no needless rewrite).
    fn write_index(&self, old: &str, new: &str) -> Result<(), StoreError> {
        let path = self.store.index_path();
        if old == new && path.exists() {
            return Ok(());
        }
        atomic_write(path.as_std_path(), new.as_bytes())
            .map_err(|e| StoreError::io("writing", &path, e))
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
pub(super) fn lookup<'a>(
    entries: &'a [Arc<StoredEntry>],
    reference: &str,
) -> Option<&'a Arc<StoredEntry>> {
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

fn check_version(entry: &StoredEntry, expected: Option<&Version>) -> Result<(), StoreError> {
    match expected {
        Some(v) if *v != entry.version => Err(StoreError::Conflict {
            file: entry.file.clone(),
            expected: *v,
            actual: entry.version,
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
        if let Some(hit) = value.and_then(find_secret_at) {
            return Err(StoreError::Secret {
                field,
                kind: hit.kind.0,
                line: hit.line,
                column: hit.column,
            });
        }
    }
    Ok(())
}
