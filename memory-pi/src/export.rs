//! `pimem export`: the whole project memory as one document, for backups and review tools.
//!
//! * **JSON** (`--format json`): `{"format": "pimem-export", "version": 1, "directory",
//!   "index" (the raw `MEMORY.md`), "entries": [{name, description, type, created, modified,
//!   file, version, body}]}`, entries in the store's order (`modified`, then file; PM-39).
//!   Pretty-printed, keys as listed, no timestamp of its own, so two exports of an unchanged
//!   memory are identical.
//! * **Markdown** (`--format markdown`): a title, then one `##` section per memory with its
//!   metadata as a list and its body below, sections separated by a rule.

use std::fmt::Write as _;
use std::str::FromStr;

use memory_core::{Store, StoreError};
use serde::Serialize;

/// The export formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// One JSON document.
    Json,
    /// One Markdown document.
    Markdown,
}

impl FromStr for Format {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "json" => Ok(Format::Json),
            "markdown" | "md" => Ok(Format::Markdown),
            other => Err(format!(
                "unknown format \"{other}\": expected json or markdown"
            )),
        }
    }
}

#[derive(Serialize)]
struct Document<'a> {
    format: &'static str,
    version: u32,
    directory: &'a str,
    index: String,
    entries: Vec<Entry<'a>>,
}

#[derive(Serialize)]
struct Entry<'a> {
    name: &'a str,
    description: &'a str,
    #[serde(rename = "type")]
    entry_type: &'static str,
    created: &'a str,
    modified: &'a str,
    file: &'a str,
    version: String,
    body: &'a str,
}

/// Renders the project memory of `store` in `format`.
///
/// # Errors
/// Reading the directory or the index failed.
pub fn export(store: &Store, format: Format) -> Result<String, StoreError> {
    let entries = store.list()?;
    match format {
        Format::Json => {
            let doc = Document {
                format: "pimem-export",
                version: 1,
                directory: store.dir().as_str(),
                index: store.read_index()?,
                entries: entries
                    .iter()
                    .map(|e| Entry {
                        name: &e.meta.name,
                        description: &e.meta.description,
                        entry_type: e.meta.entry_type.as_str(),
                        created: &e.meta.created,
                        modified: &e.meta.modified,
                        file: &e.file,
                        version: e.version.to_string(),
                        body: &e.body,
                    })
                    .collect(),
            };
            let mut text = serde_json::to_string_pretty(&doc).unwrap_or_default();
            text.push('\n');
            Ok(text)
        }
        Format::Markdown => {
            let mut out = String::new();
            let n = entries.len();
            let _ = writeln!(out, "# Project memory\n");
            let _ = writeln!(
                out,
                "Directory: `{}` · {n} memor{}\n",
                store.dir(),
                if n == 1 { "y" } else { "ies" }
            );
            for (i, e) in entries.iter().enumerate() {
                if i > 0 {
                    out.push_str("\n---\n\n");
                }
                let _ = writeln!(out, "## {}\n", e.meta.name);
                let _ = writeln!(out, "- Description: {}", e.meta.description);
                let _ = writeln!(out, "- Type: {}", e.meta.entry_type.as_str());
                let _ = writeln!(
                    out,
                    "- Created: {} · Modified: {}",
                    e.meta.created, e.meta.modified
                );
                let _ = writeln!(out, "- File: `{}` · Version: `{}`\n", e.file, e.version);
                out.push_str(&e.body);
                out.push('\n');
            }
            Ok(out)
        }
    }
}
