//! `--from dir`: any directory of Markdown files, one memory per file.
//!
//! Each `*.md` file directly in the directory (not `MEMORY.md`, no dotfiles, no
//! subdirectories, no symlinks) is one memory: `name`, `description`, `type` (or
//! `metadata.type`) and `created` from its YAML frontmatter when present. Without a `name`,
//! the title of the file's line in `MEMORY.md` is used, else the file name without `.md`;
//! without a `description`, the text after the link in `MEMORY.md`, else the store derives
//! one from the body (PM-34). Whatever `MEMORY.md` holds besides its link lines (notes
//! written straight into the index, as Claude Code's auto memory does) becomes one memory
//! named [`INDEX_NOTES_NAME`].

use std::collections::HashMap;
use std::path::Path;

use super::frontmatter;
use super::{Candidate, ImportError, Problem, Scan, Source, map_created, map_type};

/// The name of the memory made from `MEMORY.md`'s own notes.
pub const INDEX_NOTES_NAME: &str = "Notes from the imported index";
/// Its description.
pub const INDEX_NOTES_DESCRIPTION: &str =
    "Notes that were written directly into the imported MEMORY.md";

/// The `dir` source.
#[derive(Debug, Clone, Copy, Default)]
pub struct MarkdownDir;

impl Source for MarkdownDir {
    fn scan(&self, path: &Path) -> Result<Scan, ImportError> {
        scan_markdown_dir(path)
    }
}

/// One `- [Title](file.md) — hook` line of an index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexLink {
    /// The link text.
    pub title: String,
    /// The target file name.
    pub file: String,
    /// The text after the link, without its leading dash or colon.
    pub hook: String,
}

/// Parses an index link line (`-`, `*` or `+` bullets; `—`, `–`, `-` or `:` before the
/// hook); `None` for any other line.
pub fn parse_index_link(line: &str) -> Option<IndexLink> {
    let rest = line.trim_start();
    let rest = rest
        .strip_prefix("- [")
        .or_else(|| rest.strip_prefix("* ["))
        .or_else(|| rest.strip_prefix("+ ["))?;
    let close = rest.find("](")?;
    let title = &rest[..close];
    let after = &rest[close + 2..];
    let end = after.find(')')?;
    let target = after[..end].trim();
    let target = target
        .strip_prefix('<')
        .and_then(|t| t.strip_suffix('>'))
        .unwrap_or(target);
    let file = percent_encoding::percent_decode_str(target)
        .decode_utf8()
        .ok()?
        .into_owned();
    let hook = after[end + 1..].trim();
    let hook = ["—", "–", "-", ":"]
        .iter()
        .find_map(|d| hook.strip_prefix(d))
        .unwrap_or(hook)
        .trim();
    Some(IndexLink {
        title: title.trim().to_owned(),
        file,
        hook: hook.to_owned(),
    })
}

/// Reads a directory of Markdown files (shared by `dir` and `claude-code`).
pub(crate) fn scan_markdown_dir(path: &Path) -> Result<Scan, ImportError> {
    if !path.is_dir() {
        return Err(ImportError::bad(path, "not a directory"));
    }
    let (files, mut problems) = super::markdown_files(path)?;
    let mut links: HashMap<String, IndexLink> = HashMap::new();
    let mut candidates = Vec::new();
    let index_path = path.join(memory_core::INDEX_FILE);
    if index_path.is_file() {
        match super::read_text(&index_path) {
            Ok(text) => {
                let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
                let mut notes = String::new();
                // The index's own title (`# Memory Index`) is not a note.
                let text = match text.trim_start().split_once('\n') {
                    Some((first, rest)) if first.starts_with("# ") => rest,
                    _ => text,
                };
                for line in text.split_inclusive('\n') {
                    match parse_index_link(line) {
                        Some(link) if files.contains(&link.file) => {
                            links.insert(link.file.clone(), link);
                        }
                        _ => notes.push_str(line),
                    }
                }
                candidates.extend(index_notes_candidate(notes));
            }
            Err(reason) => problems.push(Problem {
                origin: memory_core::INDEX_FILE.to_owned(),
                reason,
            }),
        }
    }
    for file in files.iter().filter(|f| *f != memory_core::INDEX_FILE) {
        match topic_candidate(path, file, links.get(file)) {
            Ok(c) => candidates.push(c),
            Err(p) => problems.push(p),
        }
    }
    candidates.sort_by(|a, b| a.origin.cmp(&b.origin));
    Ok(Scan {
        root: path.to_path_buf(),
        candidates,
        problems,
    })
}

/// Whether `text` has nothing but blank lines and Markdown headings (an index's title).
/// One Markdown file below `root` (`file`: its relative path) as a candidate: the
/// frontmatter's name, else the title of its index line, else the path without `.md`; the
/// frontmatter's description, else the index line's text (shared by `dir`, `claude-code` and
/// `pi-auto-memory`).
pub(crate) fn topic_candidate(
    root: &Path,
    file: &str,
    link: Option<&IndexLink>,
) -> Result<Candidate, Problem> {
    let problem = |reason| Problem {
        origin: file.to_owned(),
        reason,
    };
    let text = super::read_text(&root.join(file)).map_err(problem)?;
    let doc = frontmatter::parse(&text).map_err(problem)?;
    let stem = file.strip_suffix(".md").unwrap_or(file);
    let mut notes = Vec::new();
    let f = doc.fields;
    let name = f
        .name
        .filter(|n| !n.trim().is_empty())
        .or_else(|| link.map(|l| l.title.clone()).filter(|t| !t.is_empty()))
        .unwrap_or_else(|| stem.to_owned());
    let description = f
        .description
        .filter(|d| !d.trim().is_empty())
        .or_else(|| link.map(|l| l.hook.clone()).filter(|h| !h.is_empty()));
    Ok(Candidate {
        origin: file.to_owned(),
        name,
        description,
        entry_type: map_type(f.entry_type.as_deref(), &mut notes),
        created: map_created(f.created.as_deref(), &mut notes),
        body: doc.body,
        notes,
    })
}

/// The text of `MEMORY.md` that is not a link to a topic file, as one memory, unless it is
/// only headings and blank lines (shared by `dir`, `claude-code` and `pi-auto-memory`).
pub(crate) fn index_notes_candidate(notes: String) -> Option<Candidate> {
    (!is_only_headings(&notes)).then(|| Candidate {
        origin: memory_core::INDEX_FILE.to_owned(),
        name: INDEX_NOTES_NAME.to_owned(),
        description: Some(INDEX_NOTES_DESCRIPTION.to_owned()),
        entry_type: Some(memory_core::EntryType::Project),
        created: None,
        body: notes,
        notes: Vec::new(),
    })
}

/// Whether the index's leftover text is only headings and blank lines (not worth a memory).
fn is_only_headings(text: &str) -> bool {
    text.lines()
        .all(|l| l.trim().is_empty() || l.trim_start().starts_with('#'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn index_links_in_their_common_spellings() {
        let l =
            parse_index_link("- [Deploy: staging](deploy-staging.md) — needs the VPN\n").unwrap();
        assert_eq!(l.title, "Deploy: staging");
        assert_eq!(l.file, "deploy-staging.md");
        assert_eq!(l.hook, "needs the VPN");
        let l = parse_index_link("* [A](<a b.md>): hook").unwrap();
        assert_eq!((l.file.as_str(), l.hook.as_str()), ("a b.md", "hook"));
        let l = parse_index_link("- [A](a%20b.md) - hook").unwrap();
        assert_eq!((l.file.as_str(), l.hook.as_str()), ("a b.md", "hook"));
        assert_eq!(parse_index_link("# Memory"), None);
        assert_eq!(parse_index_link("plain [x](y.md)"), None);
    }
}
