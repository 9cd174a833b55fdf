//! The pure formats of a pi-memory directory, byte-compatible with pi-memory 2.5.
//!
//! This crate does no I/O at all: no file system, no clock, no environment. Timestamps and file
//! listings are passed in; every function maps text to text. It holds:
//!
//! - the entry-file codec ([`render_entry`], [`parse_entry`]): pi-memory's line-based
//!   frontmatter, written raw and read back exactly (it is *not* YAML);
//! - write-side validation and description derivation ([`validate_name`],
//!   [`derive_description`], …) with pi-memory's exact error texts;
//! - file names ([`entry_file_name`], [`unique_file_name`], [`is_entry_candidate`]);
//! - `MEMORY.md` ([`parse_index`] and the surgical edits [`upsert_index_line`],
//!   [`replace_index_line`], [`remove_index_line`], plus [`rebuild_index`]) and its capacity;
//! - the three-way merge of `MEMORY.md` keyed by entry file ([`merge_index`]), behind git's
//!   merge driver `pimem merge-index`;
//! - the injection side: [`injection_window`], [`sanitize_for_injection`], the auto-surfacing
//!   manifest, prompt, reply parser and `<relevant_memories>` block;
//! - tool result texts and the `/memory` `Index:`/`Inject:` lines.
//!
//! The central types are [`EntryMeta`]/[`Entry`] (one memory) and [`IndexLine`] (its line in
//! `MEMORY.md`).
//!
//! # Key decisions
//!
//! - **JavaScript string semantics where they decide bytes.** `trim` and `\s` use the
//!   ECMAScript whitespace set (U+FEFF is whitespace, U+0085 is not), through `memory-js`. Character limits that
//!   the original counts with JS `length` (description 200, manifest budget, query 4000) count
//!   UTF-16 code units so cuts land where pi-memory's do, but a character is never split: an
//!   astral character straddling the cut is dropped (VECTORS §Z8). Byte limits count UTF-8 and
//!   cut on a character boundary.
//! - **Peer quirks kept** where files or prompts would otherwise differ: `v1.2` derives `v1.`
//!   (F11), the device-name prefix comes after the 100-byte cut (D27, 101-byte stem), U+200B
//!   survives in file names (D28), a leading BOM makes an entry file or index line invisible
//!   (E10, G14), `rebuild_index` is byte-identical to pi-memory and therefore not idempotent on
//!   its own default header (§Z3), `Recalled: N` counts `\n## ` (§Z12).
//! - **U+2028/U+2029 (§E17, §G15).** The parser treats them as ordinary characters, so entries
//!   pi-memory wrote with them (and then hid, because JS `.` stops there) become visible again;
//!   validation rejects them in names and descriptions ("must be a single line") and derived
//!   descriptions stop at them, so every file this crate writes is also readable by 2.5.
//! - **Deliberate small deviations**, each documented where it lives: equal-`modified` ties are
//!   ordered by bytes, not ICU `localeCompare`; `MEMORY.md` is taken case-insensitively when
//!   choosing a new file name; duplicate files in a side-query reply are dropped.
//!
//! # Example
//!
//! ```
//! use memory_index::*;
//!
//! let name = validate_name("  Use real DB in tests ").unwrap();
//! let body = validate_body("Integration tests hit a real database. Mocks hid a bug.").unwrap();
//! let meta = EntryMeta {
//!     description: derive_description(&body, &name),
//!     name,
//!     entry_type: EntryType::default(),
//!     created: "2026-10-01".into(),
//!     modified: "2026-10-01T09:12:33.123Z".into(),
//! };
//! let file = unique_file_name(&entry_file_name(&meta.name), |f| f == "other.md");
//! assert_eq!(file, "Use-real-DB-in-tests.md");
//!
//! let text = render_entry(&meta, &body);
//! assert_eq!(parse_entry(&text).unwrap().meta, meta);
//!
//! let index = upsert_index_line("# Memory Index\n", &IndexLine::new(&meta.name, &file, &meta.description));
//! assert_eq!(
//!     index,
//!     "# Memory Index\n- [Use real DB in tests](Use-real-DB-in-tests.md) — Integration tests hit a real database.\n"
//! );
//! assert_eq!(remove_index_line(&index, "missing.md"), None);
//! let window = injection_window(&index, 50, 16_384);
//! assert_eq!(sanitize_for_injection(&window.text), index);
//! ```
//!
//! # Limitations
//!
//! - The `Cf` set of [`sanitize_for_injection`] follows the Unicode version of
//!   `unicode-properties`, which can differ from a given Node.js build's.
//! - Case-insensitive search uses Rust's Unicode lowercasing; the JS engine's tables may be a
//!   different Unicode version.
//! - [`unique_file_name`] only knows what its predicate says; probing a case-insensitive or
//!   normalising file system is the caller's job.
//! - The side-query reply parser uses `serde_json`, which rejects lone-surrogate escapes that
//!   `JSON.parse` accepts (such a reply yields no selection).
#![forbid(unsafe_code)]

mod capacity;
mod entry;
mod filename;
mod index;
mod merge;
mod sanitize;
mod status;
mod surfacing;
mod texts;
mod validate;
mod window;

pub use capacity::{
    Capacity, DEFAULT_INDEX_MAX_BYTES, DEFAULT_INDEX_MAX_LINES, capacity_warning, index_capacity,
};
pub use entry::{
    Entry, EntryMeta, EntryType, ParseEntryTypeError, normalize_newlines, parse_entry, render_entry,
};
pub use filename::{
    ENTRY_EXT, INDEX_FILE_NAME, STEM_MAX_BYTES, entry_file_name, is_entry_candidate,
    is_reserved_device_name, unique_file_name,
};
pub use index::{
    DEFAULT_INDEX_HEADER, IndexLine, IndexedLine, ParsedIndex, RebuildEntry, Rebuilt,
    compare_modified_then_file, format_index_line, parse_index, parse_index_line, rebuild_index,
    remove_index_line, replace_index_line, split_lines, upsert_index_line,
};
pub use merge::{IndexConflict, IndexMerge, merge_index};
pub use sanitize::sanitize_for_injection;
pub use status::{index_status_line, inject_status_line};
pub use surfacing::{
    DEFAULT_MAX_ENTRY_BYTES, DEFAULT_MAX_FILES, DEFAULT_MAX_INJECTION_BYTES, ENTRY_MAX_LINES,
    ENTRY_TRUNCATION_MARKER, MANIFEST_DESCRIPTION_CHARS, MANIFEST_MAX_ENTRIES,
    MIN_DESCRIPTION_CHARS, ManifestEntry, QUERY_MAX_CHARS, SurfacedBlock, description_budget,
    order_manifest, parse_selected_files, recalled_count, relevant_memories, render_manifest,
    render_relevant_memories, side_query_prompt, truncate_entry_body,
};
pub use texts::{
    CONTENT_REQUIRED_FOR_ADD, NO_MATCHES_IN_MEMORY, NO_MEMORIES, QUERY_REQUIRED_FOR_SEARCH,
    STALE_VERSION, duplicate_warning, entry_already_exists, entry_not_found, list_line,
    matches_query, rebuilt_text, removed_text, renamed_text, render_list, render_search,
    replaced_text, saved_text, search_block, unknown_action, with_capacity_warning,
};
pub use validate::{
    DESCRIPTION_MAX_UNITS, ValidationError, derive_description, validate_body, validate_created,
    validate_description, validate_name,
};
pub use window::{
    DEFAULT_INJECT_MAX_BYTES, DEFAULT_INJECT_MAX_LINES, INDEX_TRUNCATION_MARKER, Window,
    injection_window,
};
