//! Auto-surfacing formats (PM-61..PM-64): manifest, side-query prompt, reply parsing and the
//! `<relevant_memories>` block. The model call itself lives in memory-agent.

use std::cmp::Reverse;

use crate::entry::EntryType;
use crate::sanitize::sanitize_for_injection;
use memory_js::{utf8_prefix, utf16_prefix};

/// Most entries a manifest lists.
pub const MANIFEST_MAX_ENTRIES: usize = 200;
/// Total description budget of a manifest, in UTF-16 units, shared by the candidates.
pub const MANIFEST_DESCRIPTION_CHARS: usize = 4000;
/// Floor of the per-description budget.
pub const MIN_DESCRIPTION_CHARS: usize = 80;
/// Longest user query put into the side-query prompt, in UTF-16 units.
pub const QUERY_MAX_CHARS: usize = 4000;
/// Appended to a surfaced body that was cut (distinct from the index marker on purpose).
pub const ENTRY_TRUNCATION_MARKER: &str = "[truncated: memory entry exceeds injection limit]";
/// Line limit pi-memory applies to a surfaced body (effectively none).
pub const ENTRY_MAX_LINES: usize = 999_999;
/// Default `autoSurfacing.maxFiles`.
pub const DEFAULT_MAX_FILES: usize = 3;
/// Default `autoSurfacing.maxEntryBytes`.
pub const DEFAULT_MAX_ENTRY_BYTES: usize = 3072;
/// Default `autoSurfacing.maxInjectionBytes`.
pub const DEFAULT_MAX_INJECTION_BYTES: usize = 10_240;

/// One candidate of the side query.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ManifestEntry {
    /// Entry file name.
    pub file: String,
    /// Entry type.
    pub entry_type: EntryType,
    /// Entry description (cut when rendered).
    pub description: String,
    /// `modified` timestamp (sort key).
    pub modified: String,
}

/// Sorts by `modified` descending, ties by file ascending ([`memory_js::locale_compare`], as
/// pi-memory's `localeCompare`), and keeps the first 200.
///
/// Order of operations as in pi-memory: order and cap the whole list first, then the caller
/// removes files already injected this session, then [`render_manifest`] splits the budget
/// over what is left.
pub fn order_manifest(entries: &mut Vec<ManifestEntry>) {
    entries.sort_by(|a, b| {
        Reverse(&a.modified)
            .cmp(&Reverse(&b.modified))
            .then_with(|| memory_js::locale_compare(&a.file, &b.file))
    });
    entries.truncate(MANIFEST_MAX_ENTRIES);
}

/// Per-description budget `max(80, floor(4000 / n))` in UTF-16 units (VECTORS K).
///
/// Note (VECTORS §Z7): with 50 or more candidates the floor wins and the manifest exceeds 4000.
pub fn description_budget(candidates: usize) -> usize {
    (MANIFEST_DESCRIPTION_CHARS / candidates.max(1)).max(MIN_DESCRIPTION_CHARS)
}

/// Manifest lines `[type] file — description`, joined by LF; descriptions cut to
/// [`description_budget`] of `entries.len()`.
///
// Decision (VECTORS §Z8): the cut counts UTF-16 code units like JavaScript `slice`, so it
// matches pi-memory, but an astral character straddling the cut is dropped whole.
pub fn render_manifest(entries: &[ManifestEntry]) -> String {
    let budget = description_budget(entries.len());
    entries
        .iter()
        .map(|e| {
            format!(
                "[{}] {} — {}",
                e.entry_type,
                e.file,
                utf16_prefix(&e.description, budget)
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The side-query task (VECTORS K); the query is cut to 4000 UTF-16 units.
pub fn side_query_prompt(manifest: &str, query: &str, max_files: usize) -> String {
    let mut lines = vec![
        format!(
            "You are a memory relevance selector. Select up to {max_files} memory files most \
             relevant to the user query."
        ),
        "If nothing matches, select none.".to_owned(),
        String::new(),
        "=== Memory Files ===".to_owned(),
    ];
    if !manifest.is_empty() {
        lines.push(manifest.to_owned());
    }
    lines.extend([
        String::new(),
        "=== User Query ===".to_owned(),
        utf16_prefix(query, QUERY_MAX_CHARS).to_owned(),
        String::new(),
        r#"Respond with ONLY a JSON object: {"selected_files": ["filename.md", ...]}"#.to_owned(),
    ]);
    lines.join("\n")
}

/// The first `{…}` that contains `"selected_files"` and no inner `}` (pi-memory's
/// `/\{[^}]*"selected_files"[^}]*\}/s`).
fn first_selection_object(reply: &str) -> Option<&str> {
    for (start, _) in reply.match_indices('{') {
        let len = reply[start + 1..].find('}')?;
        let candidate = &reply[start..start + 1 + len + 1];
        if candidate.contains("\"selected_files\"") {
            return Some(candidate);
        }
    }
    None
}

/// Parses the side-query reply (PM-62).
///
/// Takes the first `{…"selected_files"…}` object without nested braces, parses it as JSON and
/// keeps the string elements of `selected_files` that name a manifest file, at most
/// `max_files`. `None` when the reply holds no such object (none at all, invalid JSON, or
/// `selected_files` not an array): pi-memory injected nothing then, a caller may fall back.
/// `Some(vec![])` is an answer: nothing is relevant.
///
// Decision: duplicates are dropped (first occurrence kept); pi-memory would inject the same
// entry twice.
pub fn parse_selected_files(
    reply: &str,
    manifest_files: &[&str],
    max_files: usize,
) -> Option<Vec<String>> {
    let object = first_selection_object(reply)?;
    let value = serde_json::from_str::<serde_json::Value>(object).ok()?;
    let files = value.get("selected_files")?.as_array()?;
    let mut out: Vec<String> = Vec::new();
    for file in files.iter().filter_map(|f| f.as_str()) {
        if out.len() >= max_files {
            break;
        }
        if manifest_files.contains(&file) && !out.iter().any(|o| o == file) {
            out.push(file.to_owned());
        }
    }
    Some(out)
}

/// Cuts a surfaced body: first `max_lines` lines, then a UTF-8 prefix of `max_bytes` on a
/// character boundary; a cut body gets `\n` + [`ENTRY_TRUNCATION_MARKER`]. Returns the text and
/// whether it was cut.
pub fn truncate_entry_body(content: &str, max_lines: usize, max_bytes: usize) -> (String, bool) {
    let mut truncated = true;
    let mut out: &str = content;
    if max_lines == 0 {
        out = "";
    } else if let Some((end, _)) = content.match_indices('\n').nth(max_lines - 1) {
        out = &content[..end];
    } else {
        truncated = false;
    }
    if out.len() > max_bytes {
        out = utf8_prefix(out, max_bytes);
        truncated = true;
    }
    let mut text = out.to_owned();
    if truncated {
        text.push('\n');
        text.push_str(ENTRY_TRUNCATION_MARKER);
    }
    (text, truncated)
}

/// One selected entry to inject.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SurfacedBlock<'a> {
    /// Entry name (sanitised when rendered).
    pub name: &'a str,
    /// Entry body without frontmatter (cut, then sanitised when rendered).
    pub body: &'a str,
}

/// The surfaced message (PM-63): `<relevant_memories>\n## name\nbody\n\n## …\n</relevant_memories>`.
///
/// Each body is cut to `max_entry_bytes` first, then name and body are sanitised (cutting before
/// sanitising never splits an `&lt;`). Blocks are added while the sum of block bytes
/// (`## name\nbody`, separators and wrapper not counted) stays within `max_injection_bytes`;
/// the first block that would exceed it ends the list. No block → `""`.
pub fn render_relevant_memories(
    blocks: &[SurfacedBlock<'_>],
    max_entry_bytes: usize,
    max_injection_bytes: usize,
) -> String {
    relevant_memories(blocks, max_entry_bytes, max_injection_bytes).0
}

/// [`render_relevant_memories`] and how many of `blocks` (a prefix) made it into the message.
pub fn relevant_memories(
    blocks: &[SurfacedBlock<'_>],
    max_entry_bytes: usize,
    max_injection_bytes: usize,
) -> (String, usize) {
    let mut rendered: Vec<String> = Vec::new();
    let mut total = 0usize;
    for block in blocks {
        let (body, _) = truncate_entry_body(block.body, ENTRY_MAX_LINES, max_entry_bytes);
        let text = format!(
            "## {}\n{}",
            sanitize_for_injection(block.name),
            sanitize_for_injection(&body)
        );
        if total + text.len() > max_injection_bytes {
            break;
        }
        total += text.len();
        rendered.push(text);
    }
    if rendered.is_empty() {
        return (String::new(), 0);
    }
    let kept = rendered.len();
    let text = format!(
        "<relevant_memories>\n{}\n</relevant_memories>",
        rendered.join("\n\n")
    );
    (text, kept)
}

/// The `N` of the `Recalled: N entries` notification: occurrences of `\n## ` in the message.
///
/// Kept from pi-memory (VECTORS §Z12): a body line starting with `## ` inflates the count.
pub fn recalled_count(message: &str) -> usize {
    message.matches("\n## ").count()
}
