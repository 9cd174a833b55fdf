//! Tool result texts of the `memory` tool (PM-31, PM-39, PM-40, PM-42, VECTORS Q). Pure.

use crate::entry::EntryMeta;

/// `list` on an empty store.
pub const NO_MEMORIES: &str = "No memories yet.";
/// `search` (scope memory) without a hit.
pub const NO_MATCHES_IN_MEMORY: &str = "No matches in memory.";
/// `add` without `content`.
pub const CONTENT_REQUIRED_FOR_ADD: &str = "content is required for add";
/// `search` with a blank query.
pub const QUERY_REQUIRED_FOR_SEARCH: &str = "query is required for search";
/// A compare-and-swap write refused: the entry changed since the caller read it.
pub const STALE_VERSION: &str = "Memory conflict: stale version";

/// `- <name> (<type>, modified <ISO>) — <description> [<file>]` (PM-39).
pub fn list_line(meta: &EntryMeta, file: &str) -> String {
    format!(
        "- {} ({}, modified {}) — {} [{file}]",
        meta.name, meta.entry_type, meta.modified, meta.description
    )
}

/// The `list` result: one [`list_line`] per entry in the given order (the caller sorts by
/// modified, then file), or [`NO_MEMORIES`].
pub fn render_list<'a>(entries: impl IntoIterator<Item = (&'a EntryMeta, &'a str)>) -> String {
    let lines: Vec<String> = entries
        .into_iter()
        .map(|(meta, file)| list_line(meta, file))
        .collect();
    if lines.is_empty() {
        NO_MEMORIES.to_owned()
    } else {
        lines.join("\n")
    }
}

/// `## <name>\nfile: <file>\ntype: <type>\n\n<body>` (PM-40).
pub fn search_block(meta: &EntryMeta, file: &str, body: &str) -> String {
    format!(
        "## {}\nfile: {file}\ntype: {}\n\n{body}",
        meta.name, meta.entry_type
    )
}

/// The `search` result: blocks separated by a blank line, or [`NO_MATCHES_IN_MEMORY`].
pub fn render_search(blocks: &[String]) -> String {
    if blocks.is_empty() {
        NO_MATCHES_IN_MEMORY.to_owned()
    } else {
        blocks.join("\n\n")
    }
}

/// Case-insensitive substring match of `query` over name, description and body (PM-40).
///
// Decision: "case-insensitive" is full Unicode lowercasing of both sides (`str::to_lowercase`,
// which like JavaScript's `toLowerCase` applies the final-sigma rule), then a plain substring
// test. The query is used as given (not trimmed); the tool rejects a blank one first.
pub fn matches_query(meta: &EntryMeta, body: &str, query: &str) -> bool {
    let needle = query.to_lowercase();
    [meta.name.as_str(), meta.description.as_str(), body]
        .iter()
        .any(|field| field.to_lowercase().contains(&needle))
}

/// `Saved "<name>" (<file>).`
pub fn saved_text(name: &str, file: &str) -> String {
    format!("Saved \"{name}\" ({file}).")
}

/// `Replaced "<name>" (<file>).`
pub fn replaced_text(name: &str, file: &str) -> String {
    format!("Replaced \"{name}\" ({file}).")
}

/// `Removed "<name>".`
pub fn removed_text(name: &str) -> String {
    format!("Removed \"{name}\".")
}

/// `Renamed "<a>" → "<b>" (<file>).`
pub fn renamed_text(old_name: &str, new_name: &str, file: &str) -> String {
    format!("Renamed \"{old_name}\" → \"{new_name}\" ({file}).")
}

/// `Rebuilt index: <n> entries (<h> header lines).`
pub fn rebuilt_text(entries: usize, header_lines: usize) -> String {
    format!("Rebuilt index: {entries} entries ({header_lines} header lines).")
}

/// Appends a capacity warning after a blank line, when there is one (PM-42).
pub fn with_capacity_warning(text: String, warning: Option<&str>) -> String {
    match warning {
        Some(w) => format!("{text}\n\n{w}"),
        None => text,
    }
}

/// The note appended to an `add` result when the new entry looks like an existing one (not
/// a pi-memory text: pimem appends it after pi-memory's complete result).
pub fn duplicate_warning(existing_name: &str, existing_file: &str, new_name: &str) -> String {
    format!(
        "Possible duplicate: this looks like the existing memory \"{existing_name}\" ({existing_file}). If it is the same memory, keep one: replace \"{existing_name}\" with the combined content and remove \"{new_name}\"."
    )
}

/// `Entry "<ref>" not found`.
pub fn entry_not_found(reference: &str) -> String {
    format!("Entry \"{reference}\" not found")
}

/// `Entry "<name>" already exists` (rename onto an existing name).
pub fn entry_already_exists(name: &str) -> String {
    format!("Entry \"{name}\" already exists")
}

/// `Unknown action: <action>`.
pub fn unknown_action(action: &str) -> String {
    format!("Unknown action: {action}")
}
