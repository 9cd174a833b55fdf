//! Three-way merge of `MEMORY.md`, for git's merge driver (`pimem merge-index %O %A %B`).
//!
//! The index is a set of entry lines keyed by the entry's file name, in a frame of other lines
//! (title, hand-written groups, comments, blank lines). Git's line merge conflicts whenever both
//! sides append a line at the end of the index, which is what every new memory does; keyed by
//! file, two branches that add, replace or remove *different* memories always merge.
//!
//! The merge works per file name: a line one side changed (added, rewritten, removed) and the
//! other left as in the base takes the changed side; a line both sides changed the same way is
//! taken once. The result is written with the same surgical edits the store uses
//! ([`remove_index_line`], [`replace_index_line`], [`upsert_index_line`]), so order and
//! formatting are exactly what a store applying the other side's writes would produce: lines
//! keep their place, a new line goes after the last entry line, in the order the other side
//! added them.
//!
//! Limitations: lines are compared parsed (name, file, description, trimmed), so a change of
//! spacing alone is not a change; a second line for the same file, which the store never reads,
//! is treated as a frame line; when both sides changed the frame differently, theirs' frame
//! changes are dropped (reported as [`IndexConflict::Frame`]; entry lines are still merged).

use std::collections::{BTreeMap, BTreeSet};

use crate::index::{
    IndexLine, parse_index_line, remove_index_line, replace_index_line, split_lines,
    upsert_index_line,
};

/// A line both sides changed differently (see [`merge_index`] for what was kept).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IndexConflict {
    /// Both sides changed the line of `file` differently (edited it in two ways, or one edited
    /// and the other removed it). The entry file itself is then a git conflict too; once it is
    /// resolved, its frontmatter is the truth and the index line follows it.
    Entry {
        /// The entry's file name.
        file: String,
        /// Ours' line (`None`: ours removed it).
        ours: Option<IndexLine>,
        /// Theirs' line (`None`: theirs removed it).
        theirs: Option<IndexLine>,
    },
    /// Both sides changed the lines that are not entry lines (title, groups, comments)
    /// differently; ours' were kept.
    Frame,
}

/// Result of [`merge_index`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexMerge {
    /// The merged `MEMORY.md`.
    pub text: String,
    /// What could not be merged cleanly, in file-name order (the frame last).
    pub conflicts: Vec<IndexConflict>,
}

/// One side's index: its entry lines by file (first line per file, as the store reads them),
/// the files in line order, and its frame (every other line, blank ones included).
struct Side {
    lines: BTreeMap<String, IndexLine>,
    order: Vec<String>,
    frame: Vec<String>,
}

impl Side {
    fn parse(text: &str) -> Side {
        let mut side = Side {
            lines: BTreeMap::new(),
            order: Vec::new(),
            frame: Vec::new(),
        };
        for raw in split_lines(text) {
            match parse_index_line(&raw) {
                Some(line) if !side.lines.contains_key(&line.file) => {
                    side.order.push(line.file.clone());
                    side.lines.insert(line.file.clone(), line);
                }
                // A second line for the same file is never read by the store: it is frame.
                _ => side.frame.push(raw),
            }
        }
        side
    }
}

/// Merges the index `ours` and `theirs` derived from `base` (git's `%A`, `%B`, `%O`).
///
/// Per entry file name: unchanged on one side → the other side's line; changed the same way
/// on both → that line; changed differently on both → an [`IndexConflict::Entry`], and the
/// merge keeps ours' line, or theirs' when ours removed it (an edit is never lost to a
/// removal). The frame (non-entry lines) of the side that changed it is kept, ours' when both
/// did ([`IndexConflict::Frame`]); the other side's line changes are then applied to that
/// text with the store's own edits. When nothing needs applying, the kept side's text is
/// returned byte for byte.
///
// Decision: a line both sides changed is not written with conflict markers. The driver cannot
// know the merged entry file (git may merge it after the index), and markers in `MEMORY.md`
// would hide every memory from the index parser; the entry file carries the git conflict, and
// `pimem doctor` reports an index line that disagrees with its (resolved) entry file.
pub fn merge_index(base: &str, ours: &str, theirs: &str) -> IndexMerge {
    let b = Side::parse(base);
    let o = Side::parse(ours);
    let t = Side::parse(theirs);

    let files: BTreeSet<&String> = b
        .lines
        .keys()
        .chain(o.lines.keys())
        .chain(t.lines.keys())
        .collect();
    let mut merged: BTreeMap<String, Option<IndexLine>> = BTreeMap::new();
    let mut conflicts = Vec::new();
    for file in files {
        let (bv, ov, tv) = (b.lines.get(file), o.lines.get(file), t.lines.get(file));
        let value = if ov == tv || tv == bv {
            ov
        } else if ov == bv {
            tv
        } else {
            conflicts.push(IndexConflict::Entry {
                file: file.clone(),
                ours: ov.cloned(),
                theirs: tv.cloned(),
            });
            ov.or(tv)
        };
        merged.insert(file.clone(), value.cloned());
    }

    // The text to edit: the side whose frame survives.
    let theirs_frame = o.frame == b.frame && t.frame != b.frame;
    if !theirs_frame && t.frame != b.frame && t.frame != o.frame {
        conflicts.push(IndexConflict::Frame);
    }
    let (mut text, kept, other) = if theirs_frame {
        (theirs.to_owned(), &t, &o)
    } else {
        (ours.to_owned(), &o, &t)
    };

    for file in &kept.order {
        let want = merged.get(file).cloned().flatten();
        if want.as_ref() == kept.lines.get(file) {
            continue;
        }
        text = match want {
            Some(line) => replace_index_line(&text, file, &line),
            None => remove_index_line(&text, file).unwrap_or(text),
        };
    }
    for file in &other.order {
        if kept.lines.contains_key(file) {
            continue;
        }
        if let Some(Some(line)) = merged.get(file) {
            text = upsert_index_line(&text, line);
        }
    }
    IndexMerge { text, conflicts }
}
