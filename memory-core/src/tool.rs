//! The `memory` tool: JSON arguments in, pi-memory's result texts out (PM-31..PM-42).
//!
//! Hosts (the pi sidecar, the headless agents of `memory-agent`, the CLI) all run tool calls
//! through [`execute`], so the texts a model sees are identical everywhere. The main agent and
//! the extractor get [`MAIN_ACTIONS`]; only the dream gets [`DREAM_ACTIONS`] (PM-31).
//!
//! Compare-and-swap: a [`VersionBook`] remembers the version of every entry the model was
//! shown (by `list`, `search`, or a prompt built from the store). A later `replace`, `remove`
//! or `rename` of that entry is conditional on it, so a memory changed by another process in
//! the meantime is never overwritten: the model gets `Memory conflict: stale version` and can
//! re-read.

use std::collections::HashMap;
use std::sync::Arc;

use memory_index::{EntryType, list_line, search_block};
use serde_json::{Value, json};

use crate::error::StoreError;
use crate::store::Target;
use crate::store::types::{AddRequest, Notice, ReplaceRequest, StoredEntry, Version};

/// One action of the memory tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// Create or overwrite by name.
    Add,
    /// Rewrite an existing entry.
    Replace,
    /// Delete an entry.
    Remove,
    /// One line per entry.
    List,
    /// Substring search over memories or past sessions.
    Search,
    /// Dream only: rename an entry.
    Rename,
    /// Dream only: rebuild `MEMORY.md` from the files.
    RebuildIndex,
}

impl Action {
    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Action::Add => "add",
            Action::Replace => "replace",
            Action::Remove => "remove",
            Action::List => "list",
            Action::Search => "search",
            Action::Rename => "rename",
            Action::RebuildIndex => "rebuild_index",
        }
    }

    fn parse(s: &str) -> Option<Action> {
        DREAM_ACTIONS.iter().copied().find(|a| a.as_str() == s)
    }
}

/// The main agent's and the extractor's actions.
pub const MAIN_ACTIONS: &[Action] = &[
    Action::Add,
    Action::Replace,
    Action::Remove,
    Action::List,
    Action::Search,
];

/// The dream's actions (PM-31).
pub const DREAM_ACTIONS: &[Action] = &[
    Action::Add,
    Action::Replace,
    Action::Remove,
    Action::List,
    Action::Search,
    Action::Rename,
    Action::RebuildIndex,
];

/// The tool's name as registered with the host.
pub const TOOL_NAME: &str = "memory";

/// The tool description shown to the model.
pub const TOOL_DESCRIPTION: &str = "Persistent project memory shared across sessions: one memory per Markdown file plus a MEMORY.md index line each. \
Actions: add (name + content [+ description, type]; adding an existing name overwrites it), replace (name + content [+ description, type]), \
remove (name), list, search (query; scope \"memory\" or \"sessions\" for past conversations). \
The description is the only thing a future session sees when deciding relevance: make it one self-contained line.";

/// JSON schema of the tool's parameters for the given action set.
pub fn parameters_schema(actions: &[Action]) -> Value {
    let names: Vec<&str> = actions.iter().map(|a| a.as_str()).collect();
    let mut props = json!({
        "action": { "type": "string", "enum": names },
        "name": { "type": "string", "description": "Memory name: a unique, human-readable title and the lookup key for replace/remove" },
        "description": { "type": "string", "description": "One self-contained line describing the memory; defaults to the first sentence of content" },
        "content": { "type": "string", "description": "The memory body (Markdown)" },
        "type": { "type": "string", "enum": ["user", "feedback", "project", "reference"], "description": "Memory type (default feedback)" },
        "query": { "type": "string", "description": "Search text (case-insensitive substring)" },
        "scope": { "type": "string", "enum": ["memory", "sessions"], "description": "What search looks through (default memory)" }
    });
    if actions.contains(&Action::Rename) {
        props["new_name"] = json!({ "type": "string", "description": "New name (rename)" });
    }
    json!({ "type": "object", "properties": props, "required": ["action"] })
}

/// Searches past sessions for `search` with `scope: "sessions"` (PM-41). Implemented by
/// `memory-agent`; storage knows nothing about pi sessions.
pub trait SessionSearch {
    /// The tool text for a session search.
    fn search_sessions(&self, query: &str) -> Result<String, String>;
}

/// An existing entry that a newly added one looks like ([`DuplicateCheck`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Similar {
    /// The existing entry's name.
    pub name: String,
    /// Its file.
    pub file: String,
    /// How similar they are, `0.0..=1.0`.
    pub similarity: f64,
}

/// Finds the existing entry a new one repeats, for the duplicate warning of `add`.
/// Implemented by `memory-agent` (lexical similarity); storage does no ranking.
pub trait DuplicateCheck {
    /// The entry of `listing` (the store after the write) that `added` most likely repeats,
    /// never `added` itself; `None` when nothing is similar enough.
    fn similar_to(
        &mut self,
        added: &StoredEntry,
        listing: Vec<Arc<StoredEntry>>,
    ) -> Option<Similar>;
}

/// Versions of entries the model has been shown, by file and by name.
#[derive(Debug, Clone, Default)]
pub struct VersionBook {
    by_ref: HashMap<String, Version>,
}

impl VersionBook {
    /// Records that the model saw `entry` at its current version.
    pub fn saw(&mut self, entry: &StoredEntry) {
        self.by_ref.insert(entry.file.clone(), entry.version);
        self.by_ref.insert(entry.meta.name.clone(), entry.version);
    }

    /// The version recorded for a name or file reference.
    pub fn expected(&self, reference: &str) -> Option<Version> {
        self.by_ref.get(reference).copied()
    }

    /// Makes the next `replace`, `remove` or `rename` of `reference` conditional on
    /// `version`, as if the model had been shown the entry at that version. For hosts whose
    /// clients pass versions explicitly (the MCP server's `expected_version`).
    pub fn expect(&mut self, reference: &str, version: Version) {
        self.by_ref.insert(reference.to_owned(), version);
    }

    fn wrote(&mut self, old_refs: &[&str], name: &str, file: &str, version: Version) {
        for r in old_refs {
            self.by_ref.remove(*r);
        }
        self.by_ref.insert(file.to_owned(), version);
        self.by_ref.insert(name.to_owned(), version);
    }
}

/// The result of one tool call.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ToolOutput {
    /// The text returned to the model.
    pub text: String,
    /// Whether the call failed (the host marks the result as an error).
    pub is_error: bool,
    /// Whether the call changed the memory directory.
    pub wrote: bool,
    /// The name saved by `add` (hosts notify `Saved: <name>`, PM-79).
    pub saved: Option<String>,
    /// Notices for the user (reclaimed lock, repair), not part of `text`.
    pub notices: Vec<Notice>,
    /// How many memories a `search` found (pi-memory's result `details.count`).
    pub count: Option<usize>,
    /// The file an `add`, `replace` or `rename` wrote.
    pub file: Option<String>,
    /// The version that write produced (for a host that hands versions to its client).
    pub version: Option<Version>,
    /// The existing entry a new one looks like (`add` with a [`DuplicateCheck`]); its
    /// warning is already at the end of `text`.
    pub duplicate_of: Option<Similar>,
}

impl ToolOutput {
    fn ok(text: String) -> Self {
        ToolOutput {
            text,
            ..ToolOutput::default()
        }
    }

    fn err(text: impl Into<String>) -> Self {
        ToolOutput {
            text: text.into(),
            is_error: true,
            ..ToolOutput::default()
        }
    }
}

fn string_arg(args: &Value, key: &str) -> Result<Option<String>, String> {
    match args.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(Value::Number(n)) => Ok(Some(n.to_string())),
        Some(Value::Bool(b)) => Ok(Some(b.to_string())),
        Some(_) => Err(format!("{key} must be a string")),
    }
}

/// A parameter the action needs: absent, `null` or blank fails with `message`.
fn required(value: Option<String>, message: &str) -> Result<String, String> {
    match value {
        Some(v) if !v.trim().is_empty() => Ok(v),
        _ => Err(message.to_owned()),
    }
}

/// JavaScript's `if (!params.x)`: only absent, `null` and `""` fail with `message`; a
/// whitespace-only value goes on to the store's own validation (`body is required`, PM-32).
fn present(value: Option<String>, message: &str) -> Result<String, String> {
    match value {
        Some(v) if !v.is_empty() => Ok(v),
        _ => Err(message.to_owned()),
    }
}

fn entry_type_arg(args: &Value) -> Result<Option<EntryType>, String> {
    match string_arg(args, "type")? {
        None => Ok(None),
        Some(t) if t.trim().is_empty() => Ok(None),
        Some(t) => t
            .trim()
            .parse::<EntryType>()
            .map(Some)
            .map_err(|e| e.to_string()),
    }
}

/// Runs one tool call. Never panics on any JSON input; errors become error outputs.
pub fn execute(
    target: Target<'_, '_>,
    actions: &[Action],
    args: &Value,
    sessions: Option<&dyn SessionSearch>,
    versions: &mut VersionBook,
) -> ToolOutput {
    execute_with(target, actions, args, sessions, None, versions)
}

/// [`execute`] with a duplicate check: an `add` that creates a new entry (not one that
/// overwrites an entry of the same name, PM-33) looking like an existing one gets
/// [`memory_index::duplicate_warning`] after pi-memory's complete result text, separated by
/// a blank line like the capacity warning (PM-42). The write happens either way.
pub fn execute_with(
    target: Target<'_, '_>,
    actions: &[Action],
    args: &Value,
    sessions: Option<&dyn SessionSearch>,
    duplicates: Option<&mut dyn DuplicateCheck>,
    versions: &mut VersionBook,
) -> ToolOutput {
    match run(target, actions, args, sessions, duplicates, versions) {
        Ok(out) => out,
        Err(text) => ToolOutput::err(text),
    }
}

fn run(
    target: Target<'_, '_>,
    actions: &[Action],
    args: &Value,
    sessions: Option<&dyn SessionSearch>,
    duplicates: Option<&mut dyn DuplicateCheck>,
    versions: &mut VersionBook,
) -> Result<ToolOutput, String> {
    if !args.is_object() {
        return Err("arguments must be a JSON object".to_owned());
    }
    let action_text = required(string_arg(args, "action")?, "action is required")?;
    let action = Action::parse(&action_text)
        .filter(|a| actions.contains(a))
        .ok_or_else(|| memory_index::unknown_action(&action_text))?;
    let text_of = |e: StoreError| e.to_string();
    match action {
        Action::Add => {
            let content = present(
                string_arg(args, "content")?,
                memory_index::CONTENT_REQUIRED_FOR_ADD,
            )?;
            let req = AddRequest {
                name: present(string_arg(args, "name")?, "name is required for add")?,
                description: string_arg(args, "description")?,
                entry_type: entry_type_arg(args)?,
                body: content,
                created: None,
            };
            // Decision: overwriting an entry of the same name (PM-33) is the model updating
            // that memory, never a duplicate; only a new entry is compared.
            let overwrites = match &duplicates {
                Some(_) => {
                    let name = req.name.trim();
                    target
                        .list()
                        .map_err(text_of)?
                        .iter()
                        .any(|e| e.meta.name == name)
                }
                None => true,
            };
            let out = target.add(req).map_err(text_of)?;
            versions.wrote(&[], &out.name, &out.file, out.version);
            let mut text = out.saved_text();
            let mut duplicate_of = None;
            if let Some(check) = duplicates
                && !overwrites
                && let Ok(listing) = target.list()
                && let Some(added) = listing.iter().find(|e| e.file == out.file).cloned()
                && let Some(similar) = check.similar_to(&added, listing)
            {
                text.push_str("\n\n");
                text.push_str(&memory_index::duplicate_warning(
                    &similar.name,
                    &similar.file,
                    &out.name,
                ));
                duplicate_of = Some(similar);
            }
            Ok(ToolOutput {
                text,
                wrote: true,
                saved: Some(out.name.clone()),
                file: Some(out.file.clone()),
                version: Some(out.version),
                notices: out.notices,
                duplicate_of,
                ..ToolOutput::default()
            })
        }
        Action::Replace => {
            let name = present(string_arg(args, "name")?, "name is required for replace")?;
            let content = present(
                string_arg(args, "content")?,
                "content is required for replace",
            )?;
            let req = ReplaceRequest {
                expected_version: versions.expected(&name),
                reference: name.clone(),
                name: None,
                description: string_arg(args, "description")?,
                entry_type: entry_type_arg(args)?,
                body: Some(content),
            };
            let out = target.replace(req).map_err(text_of)?;
            versions.wrote(&[&name], &out.name, &out.file, out.version);
            Ok(ToolOutput {
                text: out.replaced_text(),
                wrote: true,
                file: Some(out.file.clone()),
                version: Some(out.version),
                notices: out.notices,
                ..ToolOutput::default()
            })
        }
        Action::Remove => {
            let name = present(string_arg(args, "name")?, "name is required for remove")?;
            let expected = versions.expected(&name);
            let out = target.remove(&name, expected.as_ref()).map_err(text_of)?;
            Ok(ToolOutput {
                text: out.text(),
                wrote: true,
                notices: out.notices,
                ..ToolOutput::default()
            })
        }
        Action::Rename => {
            let name = present(string_arg(args, "name")?, "name is required for rename")?;
            let new_name = present(
                string_arg(args, "new_name")?,
                "new_name is required for rename",
            )?;
            let expected = versions.expected(&name);
            let old_name = target
                .read(&name)
                .map_err(text_of)?
                .map(|e| e.meta.name.clone())
                .unwrap_or_else(|| name.clone());
            let out = target
                .rename(&name, &new_name, expected.as_ref())
                .map_err(text_of)?;
            versions.wrote(&[&name, &old_name], &out.name, &out.file, out.version);
            Ok(ToolOutput {
                text: out.renamed_text(&old_name),
                wrote: true,
                file: Some(out.file.clone()),
                version: Some(out.version),
                notices: out.notices,
                ..ToolOutput::default()
            })
        }
        Action::RebuildIndex => {
            let out = target.rebuild_index().map_err(text_of)?;
            Ok(ToolOutput {
                text: out.text(),
                wrote: true,
                notices: out.notices,
                ..ToolOutput::default()
            })
        }
        Action::List => {
            let entries = target.list().map_err(text_of)?;
            Ok(ToolOutput::ok(list_text(&entries, versions)))
        }
        Action::Search => {
            let query = present(
                string_arg(args, "query")?,
                memory_index::QUERY_REQUIRED_FOR_SEARCH,
            )?;
            match string_arg(args, "scope")?.as_deref() {
                None | Some("") | Some("memory") => {
                    let hits = target.search(&query).map_err(text_of)?;
                    Ok(ToolOutput {
                        count: Some(hits.len()),
                        ..ToolOutput::ok(search_text(&hits, versions))
                    })
                }
                Some("sessions") => match sessions {
                    Some(s) => s.search_sessions(&query).map(ToolOutput::ok),
                    None => Err("Session search is not available in this context".to_owned()),
                },
                Some(other) => Err(format!(
                    "scope must be \"memory\" or \"sessions\" (got \"{other}\")"
                )),
            }
        }
    }
}

/// PM-39: one line per entry, or `No memories yet.`; records the versions shown.
pub fn list_text(entries: &[Arc<StoredEntry>], versions: &mut VersionBook) -> String {
    if entries.is_empty() {
        return memory_index::NO_MEMORIES.to_owned();
    }
    entries
        .iter()
        .map(|e| {
            versions.saw(e);
            list_line(&e.meta, &e.file)
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// PM-40: result blocks separated by a blank line, or `No matches in memory.`; records the
/// versions shown.
pub fn search_text(hits: &[Arc<StoredEntry>], versions: &mut VersionBook) -> String {
    if hits.is_empty() {
        return memory_index::NO_MATCHES_IN_MEMORY.to_owned();
    }
    hits.iter()
        .map(|e| {
            versions.saw(e);
            search_block(&e.meta, &e.file, &e.body)
        })
        .collect::<Vec<_>>()
        .join("\n\n")
}
