//! Every text a person reads in `/memory list` (the list, the read-only view, edit and delete),
//! `/memory reload` and the session usage summary of `/memory` (PA-03): one function per
//! text, each composing keys of pimem's one message catalog ([`memory_core::catalog`], the
//! `Curate*` and `Usage*` keys), where every text has its English and Simplified Chinese
//! template with the same placeholders (checked by the catalog's tests).
//!
//! The error classes the contract fixes in English (`Memory conflict: stale version`,
//! `Memory is off`, `Memory operation invalidated by a session change`) are passed in as
//! `{err}` and never translated; only the wrapping around them is.

use memory_core::Language;
use memory_core::catalog::{Text, t};

use super::usage::Via;

/// The error class of an edit or delete whose session changed while it waited (PA-46).
pub(super) const INVALIDATED: &str = "Memory operation invalidated by a session change";

/// A file size as a person reads it: bytes below 1 KiB, else KiB with one decimal.
pub(super) fn size(bytes: u64) -> String {
    if bytes < 1024 {
        format!("{bytes} B")
    } else {
        format!("{:.1} KiB", bytes as f64 / 1024.0)
    }
}

/// The list's title.
pub(super) fn list_title(lang: Language, dir: &str) -> String {
    t(lang, Text::CurateListTitle, &[("dir", &dir)])
}

/// An empty memory directory (PA-30).
pub(super) fn list_empty(lang: Language) -> String {
    t(lang, Text::CurateListEmpty, &[])
}

/// The index's line in the list.
pub(super) fn index_label(lang: Language, modified: &str, size: &str) -> String {
    t(
        lang,
        Text::CurateIndexLabel,
        &[("modified", &modified), ("size", &size)],
    )
}

/// An entry's line in the list.
pub(super) fn entry_label(
    lang: Language,
    name: &str,
    entry_type: &str,
    modified: &str,
    size: &str,
    file: &str,
) -> String {
    t(
        lang,
        Text::CurateEntryLabel,
        &[
            ("name", &name),
            ("entry_type", &entry_type),
            ("modified", &modified),
            ("size", &size),
            ("file", &file),
        ],
    )
}

/// The read-only view's title.
pub(super) fn view_title(lang: Language, file: &str) -> String {
    t(lang, Text::CurateViewTitle, &[("file", &file)])
}

/// The keys of the read-only view.
pub(super) fn view_keys(lang: Language, deletable: bool) -> String {
    let key = if deletable {
        Text::CurateViewKeys
    } else {
        Text::CurateViewKeysIndex
    };
    t(lang, key, &[])
}

/// The editor's title.
pub(super) fn edit_title(lang: Language, file: &str) -> String {
    t(lang, Text::CurateEditTitle, &[("file", &file)])
}

/// A saved edit that the model sees at once (surfacing reads entries live).
pub(super) fn saved(lang: Language, file: &str) -> String {
    t(lang, Text::CurateSaved, &[("file", &file)])
}

/// A saved edit or delete that changed the index the session froze (PA-19).
pub(super) fn saved_needs_reload(lang: Language, file: &str) -> String {
    t(lang, Text::CurateSavedNeedsReload, &[("file", &file)])
}

/// The editor was closed without a change.
pub(super) fn unchanged(lang: Language) -> String {
    t(lang, Text::CurateUnchanged, &[])
}

/// An edit or save refused; `err` is the store's reason (English error classes stay).
pub(super) fn not_saved(lang: Language, err: &str) -> String {
    t(lang, Text::CurateNotSaved, &[("err", &err)])
}

/// An edited entry that is no longer an entry file.
pub(super) fn not_an_entry(lang: Language) -> String {
    t(lang, Text::CurateNotAnEntry, &[])
}

/// The delete confirmation's title.
pub(super) fn delete_title(lang: Language) -> String {
    t(lang, Text::CurateDeleteTitle, &[])
}

/// The delete confirmation's question, naming the memory (PA-32).
pub(super) fn delete_body(lang: Language, name: &str, file: &str) -> String {
    t(
        lang,
        Text::CurateDeleteBody,
        &[("name", &name), ("file", &file)],
    )
}

/// A deleted memory.
pub(super) fn deleted(lang: Language, name: &str) -> String {
    t(lang, Text::CurateDeleted, &[("name", &name)])
}

/// A delete refused; `err` is the store's reason.
pub(super) fn not_deleted(lang: Language, err: &str) -> String {
    t(lang, Text::CurateNotDeleted, &[("err", &err)])
}

/// The index itself is never deleted from the list (no wipe-all, PA-32).
pub(super) fn index_not_deletable(lang: Language) -> String {
    t(lang, Text::CurateIndexNotDeletable, &[])
}

/// A file that is not in the list (gone, a symlink, not an entry).
pub(super) fn no_such_file(lang: Language, file: &str) -> String {
    t(lang, Text::CurateNoSuchFile, &[("file", &file)])
}

/// `/memory reload` (PA-20).
pub(super) fn reload_scheduled(lang: Language) -> String {
    t(lang, Text::CurateReloadScheduled, &[])
}

/// `/memory`'s mark after this session changed the index (PA-21), before `/memory reload`.
pub(super) fn mark_changed(lang: Language) -> String {
    t(lang, Text::CurateMarkChanged, &[])
}

/// `/memory`'s mark after `/memory reload` (PA-21).
pub(super) fn mark_refresh(lang: Language) -> String {
    t(lang, Text::CurateMarkRefresh, &[])
}

/// The usage summary's first line.
pub(super) fn usage_header(lang: Language, available: bool) -> String {
    let key = if available {
        Text::UsageHeader
    } else {
        Text::UsageHeaderUnavailable
    };
    t(lang, key, &[])
}

fn via(lang: Language, v: Via) -> &'static str {
    match v {
        Via::Tool => Text::UsageViaTool,
        Via::Edit => Text::UsageViaEdit,
        Via::Delete => Text::UsageViaDelete,
        Via::Extraction => Text::UsageViaExtraction,
        Via::Dream => Text::UsageViaDream,
    }
    .template(lang)
}

/// One save in the summary.
pub(super) fn usage_save_item(lang: Language, name: &str, v: Via, turn: u64) -> String {
    t(
        lang,
        Text::UsageSaveItem,
        &[("name", &name), ("how", &via(lang, v)), ("turn", &turn)],
    )
}

/// The saves line.
pub(super) fn usage_saves(lang: Language, n: usize, items: &str) -> String {
    t(lang, Text::UsageSaves, &[("n", &n), ("items", &items)])
}

/// No saves yet.
pub(super) fn usage_saves_none(lang: Language) -> String {
    t(lang, Text::UsageSavesNone, &[])
}

/// One surfaced memory or read file in the summary.
pub(super) fn usage_seen_item(lang: Language, name: &str, count: u64, last_turn: u64) -> String {
    t(
        lang,
        Text::UsageSeenItem,
        &[
            ("name", &name),
            ("count", &count),
            ("last_turn", &last_turn),
        ],
    )
}

/// The surfaced line.
pub(super) fn usage_surfaced(lang: Language, n: usize, items: &str) -> String {
    t(lang, Text::UsageSurfaced, &[("n", &n), ("items", &items)])
}

/// Nothing surfaced yet.
pub(super) fn usage_surfaced_none(lang: Language) -> String {
    t(lang, Text::UsageSurfacedNone, &[])
}

/// The read line.
pub(super) fn usage_reads(lang: Language, n: usize, items: &str) -> String {
    t(lang, Text::UsageReads, &[("n", &n), ("items", &items)])
}

/// No entry file read yet.
pub(super) fn usage_reads_none(lang: Language) -> String {
    t(lang, Text::UsageReadsNone, &[])
}

/// Older records were dropped (PA-28).
pub(super) fn usage_dropped(lang: Language, n: u64) -> String {
    t(lang, Text::UsageDropped, &[("n", &n)])
}

/// The headless listing's header (print, json and rpc modes).
pub(super) fn listing_header(lang: Language, dir: &str, n: usize) -> String {
    t(lang, Text::CurateListingHeader, &[("dir", &dir), ("n", &n)])
}
