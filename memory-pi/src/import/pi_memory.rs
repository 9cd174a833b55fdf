//! `--from pi-memory`: another pi-memory directory into this project.
//!
//! For the directories pi-memory leaves behind (PM-12): one orphaned when the project's
//! remote was renamed or changed or the project moved (`~/.pi/memory/git/<old name>/`), one
//! copied from another machine, and the **pre-2.5 Windows nested layout**: before 2.5,
//! Windows split a local key only on `/`, so `C:\Users\me\proj` became the name
//! `C_3a\Users\me\proj`, which Windows stores as nested directories
//! `local/C_3a/Users/me/proj/` (PM-08/PM-10 describe the 2.5 rules that fixed it).
//!
//! The path may be the memory directory itself or any directory above it: when it holds no
//! entry, the source descends (skipping `.backups/`) to the one directory below it that
//! holds a `MEMORY.md` or entries; several candidates are an error that lists them.
//!
//! Files are read with pi-memory's own codec (`memory_index::parse_entry`, PM-16/PM-17), not
//! YAML: pi-memory writes values raw, so `description: a: b` is valid there. A file that
//! pi-memory itself would not list is reported, not imported. `created` is kept; `modified`
//! becomes the import time (the store always sets it, PM-19).

use std::path::{Path, PathBuf};

use super::{Candidate, ImportError, Problem, Scan, Source};

/// How deep the search for a nested directory goes.
const MAX_DEPTH: usize = 12;

/// The `pi-memory` source.
#[derive(Debug, Clone, Copy, Default)]
pub struct PiMemory;

impl Source for PiMemory {
    fn scan(&self, path: &Path) -> Result<Scan, ImportError> {
        if !path.is_dir() {
            return Err(ImportError::bad(path, "not a directory"));
        }
        let root = find_memory_dir(path)?;
        let (files, mut problems) = super::markdown_files(&root)?;
        let mut candidates = Vec::new();
        for file in files.iter().filter(|f| *f != memory_core::INDEX_FILE) {
            let text = match super::read_text(&root.join(file)) {
                Ok(t) => t,
                Err(reason) => {
                    problems.push(Problem {
                        origin: file.clone(),
                        reason,
                    });
                    continue;
                }
            };
            // Decision: a BOM (which hides the file from pi-memory, VECTORS E10) is dropped
            // here, so an import recovers such a file instead of losing it.
            let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
            let Some(entry) = memory_index::parse_entry(text) else {
                problems.push(Problem {
                    origin: file.clone(),
                    reason: "not a pi-memory entry: name, created and modified must be set, type one of the four, and a description line present (PM-17)".to_owned(),
                });
                continue;
            };
            let mut notes = Vec::new();
            let created = super::map_created(Some(&entry.meta.created), &mut notes);
            candidates.push(Candidate {
                origin: file.clone(),
                name: entry.meta.name,
                description: Some(entry.meta.description).filter(|d| !d.is_empty()),
                entry_type: Some(entry.meta.entry_type),
                created,
                body: entry.body,
                notes,
            });
        }
        Ok(Scan {
            root,
            candidates,
            problems,
        })
    }
}

/// Whether `dir` holds an index or any `.md` file (a memory directory).
fn holds_memories(dir: &Path) -> bool {
    dir.join(memory_core::INDEX_FILE).is_file()
        || super::markdown_files(dir).is_ok_and(|(files, _)| !files.is_empty())
}

/// `path` itself when it is a memory directory, else the single one below it.
fn find_memory_dir(path: &Path) -> Result<PathBuf, ImportError> {
    if holds_memories(path) {
        return Ok(path.to_path_buf());
    }
    let mut found = Vec::new();
    let mut stack = vec![(path.to_path_buf(), 0usize)];
    while let Some((dir, depth)) = stack.pop() {
        if depth >= MAX_DEPTH {
            continue;
        }
        let entries = std::fs::read_dir(&dir).map_err(|e| ImportError::io(&dir, e))?;
        for entry in entries.flatten() {
            let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
            let name = entry.file_name();
            if !is_dir || name.to_string_lossy().starts_with('.') {
                continue;
            }
            let sub = entry.path();
            if holds_memories(&sub) {
                found.push(sub);
            } else {
                stack.push((sub, depth + 1));
            }
        }
    }
    found.sort();
    match found.len() {
        0 => Err(ImportError::bad(
            path,
            "no pi-memory directory here: neither it nor any directory below it holds MEMORY.md or entry files",
        )),
        1 => Ok(found.remove(0)),
        _ => {
            let list: Vec<String> = found.iter().map(|p| p.display().to_string()).collect();
            Err(ImportError::bad(
                path,
                format!(
                    "several memory directories below it; import one of them:\n  {}",
                    list.join("\n  ")
                ),
            ))
        }
    }
}
