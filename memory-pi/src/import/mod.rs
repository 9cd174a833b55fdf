//! `pimem import --from <source> <path>`: memories from another tool's directory into the
//! project's store.
//!
//! A source ([`Source`]) only *reads*: it turns a directory into [`Candidate`]s (name,
//! description, type, created, body) and per-file [`Problem`]s. Everything else is shared:
//! [`plan`] decides per candidate (add, unchanged, kept, refused, invalid) against the store
//! without writing, and [`apply`] performs the adds. Adding another source is one more module
//! implementing [`Source`] and one more [`SourceKind`] variant.
//!
//! # Rules (all sources)
//! * **The source is never modified**: it is only opened for reading.
//! * **Bodies byte for byte**, except what pi-memory's entry format cannot hold: line endings
//!   become LF and surrounding whitespace is trimmed (PM-15, PM-18). A BOM is dropped.
//! * **Names and descriptions** are single lines in pi-memory: a multi-line YAML value
//!   (`>`/`|` block scalars) is joined with single spaces. A type outside the four becomes
//!   the default with a note; `created` is kept when it is (or starts with) `YYYY-MM-DD`.
//! * **Secrets are refused per entry** with the field and the kind (never the value); the
//!   rest of the import goes on.
//! * **Idempotent**: a memory whose name exists with the same body (and, when the source has
//!   them, the same description and type) is `unchanged`. Decision: one whose name exists with
//!   different content is `kept` and reported, never overwritten, so re-importing an old
//!   export can never undo edits made since.
//! * Two source files with the same name: the first (in file-name order) wins, the other is
//!   reported.

pub mod claude_code;
pub mod dir;
pub mod frontmatter;
pub mod pi_auto_memory;
pub mod pi_memory;

use std::collections::HashSet;
use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use memory_core::catalog::{Text, t};
use memory_core::secrets::find_secret_at;
use memory_core::{AddRequest, EntryType, Language, Store, StoreError};
use memory_index::{normalize_newlines, validate_body, validate_created, validate_description};
use serde_json::{Value, json};

/// One memory read from a source, before any check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    /// Where it came from, relative to the source directory (`topic.md`).
    pub origin: String,
    /// The memory's name.
    pub name: String,
    /// Its description, when the source has one.
    pub description: Option<String>,
    /// Its type, when the source has one.
    pub entry_type: Option<EntryType>,
    /// Its creation day (`YYYY-MM-DD`), when the source has one.
    pub created: Option<String>,
    /// The body, as in the source file.
    pub body: String,
    /// Things the user should know about how it was mapped.
    pub notes: Vec<String>,
}

/// A source file that yields no candidate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// The file, relative to the source directory.
    pub origin: String,
    /// Why it is skipped.
    pub reason: String,
}

/// What a source found.
#[derive(Debug, Clone, Default)]
pub struct Scan {
    /// The directory actually read (a source may descend from the path it was given).
    pub root: PathBuf,
    /// The memories found, in file-name order.
    pub candidates: Vec<Candidate>,
    /// Files skipped, with reasons.
    pub problems: Vec<Problem>,
}

/// Why a source could not be read at all.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ImportError {
    /// The path is missing or not a directory.
    #[error("{path}: {reason}")]
    BadSource {
        /// The path given.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
    /// A directory could not be listed or a file read.
    #[error("reading {path}: {source}")]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
}

impl ImportError {
    pub(crate) fn io(path: &Path, source: std::io::Error) -> Self {
        ImportError::Io {
            path: path.to_path_buf(),
            source,
        }
    }

    pub(crate) fn bad(path: &Path, reason: impl Into<String>) -> Self {
        ImportError::BadSource {
            path: path.to_path_buf(),
            reason: reason.into(),
        }
    }
}

/// Something that reads memories out of a directory.
pub trait Source {
    /// Reads `path`. Never writes anything.
    ///
    /// # Errors
    /// When `path` cannot be used as this kind of source at all; problems with single files
    /// are [`Problem`]s in the scan instead.
    fn scan(&self, path: &Path) -> Result<Scan, ImportError>;
}

/// The sources `--from` accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum SourceKind {
    /// Claude Code's auto memory (`~/.claude/projects/<project>/memory/`).
    ClaudeCode,
    /// A pi-memory directory: an orphaned one, another machine's, a pre-2.5 Windows nested
    /// layout.
    PiMemory,
    /// Any directory of Markdown files (YAML frontmatter optional).
    Dir,
    /// A pi-auto-memory project directory (`<agentDir>/memory/<git-|cwd-><sha256>/`, PA-05),
    /// found by its identity rule when no directory is given ([`pi_auto_memory::locate`]).
    PiAutoMemory,
}

impl SourceKind {
    /// Every kind, as `--from` spells them.
    pub const ALL: [SourceKind; 4] = [
        SourceKind::ClaudeCode,
        SourceKind::PiMemory,
        SourceKind::Dir,
        SourceKind::PiAutoMemory,
    ];

    /// The `--from` spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            SourceKind::ClaudeCode => "claude-code",
            SourceKind::PiMemory => "pi-memory",
            SourceKind::Dir => "dir",
            SourceKind::PiAutoMemory => "pi-auto-memory",
        }
    }

    /// The reader of this kind.
    pub fn source(self) -> Box<dyn Source> {
        match self {
            SourceKind::ClaudeCode => Box::new(claude_code::ClaudeCode),
            SourceKind::PiMemory => Box::new(pi_memory::PiMemory),
            SourceKind::Dir => Box::new(dir::MarkdownDir),
            SourceKind::PiAutoMemory => Box::new(pi_auto_memory::PiAutoMemory),
        }
    }
}

impl fmt::Display for SourceKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for SourceKind {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        SourceKind::ALL
            .into_iter()
            .find(|k| k.as_str() == s)
            .ok_or_else(|| {
                let all: Vec<&str> = SourceKind::ALL.iter().map(|k| k.as_str()).collect();
                format!("unknown source \"{s}\": expected one of {}", all.join(", "))
            })
    }
}

/// What happens (or would happen) to one source file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// Written as a new memory (or would be, in a dry run).
    Add,
    /// A memory with this name and content already exists.
    Unchanged,
    /// A memory with this name exists with other content: left as it is.
    Kept,
    /// Looks like a secret: not imported.
    Refused {
        /// `name`, `description` or `content`.
        field: &'static str,
        /// The kind of secret.
        kind: &'static str,
        /// 1-based line of the secret within the field.
        line: usize,
        /// 1-based column (in characters) of the secret within its line.
        column: usize,
    },
    /// Not importable (bad frontmatter, empty body, a name pi-memory cannot hold, ...).
    Skipped(String),
    /// The write failed.
    Failed(String),
}

/// One line of the plan or report.
#[derive(Debug, Clone)]
pub struct Item {
    /// The source file.
    pub origin: String,
    /// The memory's name, when the file yielded one.
    pub name: Option<String>,
    /// What happens.
    pub action: Action,
    /// The entry file written (after [`apply`]).
    pub file: Option<String>,
    /// Mapping notes.
    pub notes: Vec<String>,
    request: Option<AddRequest>,
}

/// Joins a multi-line value with single spaces (names and descriptions are one line).
pub fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Maps a type value: the four names (any case), else `None` with a note.
pub fn map_type(raw: Option<&str>, notes: &mut Vec<String>) -> Option<EntryType> {
    let raw = raw?.trim();
    if raw.is_empty() {
        return None;
    }
    match raw.to_ascii_lowercase().parse::<EntryType>() {
        Ok(t) => Some(t),
        Err(_) => {
            notes.push(format!(
                "type \"{raw}\" is not user, feedback, project or reference: the default applies"
            ));
            None
        }
    }
}

/// Keeps `created` when it is, or starts with, `YYYY-MM-DD`; else `None` with a note.
pub fn map_created(raw: Option<&str>, notes: &mut Vec<String>) -> Option<String> {
    let raw = raw?.trim();
    if raw.is_empty() {
        return None;
    }
    let day = raw.get(..10).unwrap_or(raw);
    match validate_created(day) {
        Ok(()) => Some(day.to_owned()),
        Err(_) => {
            notes.push(format!("created \"{raw}\" is not a date: today is used"));
            None
        }
    }
}

/// Decides what to do with every candidate, without writing.
///
/// # Errors
/// Listing the store failed.
pub fn plan(store: &Store, scan: &Scan) -> Result<Vec<Item>, StoreError> {
    let mut items: Vec<Item> = scan
        .problems
        .iter()
        .map(|p| Item {
            origin: p.origin.clone(),
            name: None,
            action: Action::Skipped(p.reason.clone()),
            file: None,
            notes: Vec::new(),
            request: None,
        })
        .collect();
    let mut seen = HashSet::new();
    for c in &scan.candidates {
        let mut item = Item {
            origin: c.origin.clone(),
            name: Some(c.name.clone()),
            action: Action::Add,
            file: None,
            notes: c.notes.clone(),
            request: None,
        };
        item.action = decide(store, c, &mut seen, &mut item.request)?;
        items.push(item);
    }
    items.sort_by(|a, b| a.origin.cmp(&b.origin));
    Ok(items)
}

fn decide(
    store: &Store,
    c: &Candidate,
    seen: &mut HashSet<String>,
    request: &mut Option<AddRequest>,
) -> Result<Action, StoreError> {
    let name = match memory_index::validate_name(&one_line(&c.name)) {
        Ok(n) => n,
        Err(e) => return Ok(Action::Skipped(format!("name: {e}"))),
    };
    let description = match validate_description(c.description.as_deref().map(one_line).as_deref())
    {
        Ok(d) => d,
        Err(e) => return Ok(Action::Skipped(format!("description: {e}"))),
    };
    let body = match validate_body(&normalize_newlines(&c.body)) {
        Ok(b) => b,
        Err(e) => return Ok(Action::Skipped(e.to_string())),
    };
    for (field, text) in [
        ("name", name.as_str()),
        ("description", description.as_deref().unwrap_or("")),
        ("content", body.as_str()),
    ] {
        if let Some(hit) = find_secret_at(text) {
            return Ok(Action::Refused {
                field,
                kind: hit.kind.0,
                line: hit.line,
                column: hit.column,
            });
        }
    }
    if !seen.insert(name.clone()) {
        return Ok(Action::Skipped(format!(
            "another source file already has the name \"{name}\""
        )));
    }
    // Decision: an existing memory of the same name is never overwritten (`kept` when it
    // differs), so re-importing an old source cannot undo edits made since.
    if let Some(existing) = store.read(&name)?.filter(|e| e.meta.name == name) {
        let same = existing.body == body
            && description
                .as_ref()
                .is_none_or(|d| *d == existing.meta.description)
            && c.entry_type.is_none_or(|t| t == existing.meta.entry_type);
        return Ok(if same {
            Action::Unchanged
        } else {
            Action::Kept
        });
    }
    *request = Some(AddRequest {
        name,
        description,
        entry_type: c.entry_type,
        body,
        created: c.created.clone(),
    });
    Ok(Action::Add)
}

/// Performs the plan's adds (none when `dry_run`), one store write per memory.
pub fn apply(store: &Store, items: &mut [Item], dry_run: bool) {
    if dry_run {
        return;
    }
    for item in items.iter_mut() {
        let Some(req) = item.request.take() else {
            continue;
        };
        match store.add(req) {
            Ok(out) => {
                item.file = Some(out.file.clone());
                for n in &out.notices {
                    item.notes.push(n.to_string());
                }
            }
            Err(StoreError::Secret {
                field,
                kind,
                line,
                column,
            }) => {
                item.action = Action::Refused {
                    field,
                    kind,
                    line,
                    column,
                }
            }
            Err(e) => item.action = Action::Failed(e.to_string()),
        }
    }
}

/// The human-readable report in `l` (PA-03): one line per source file (notes indented
/// below), then a summary. Names, origins, reasons from the source and secret kinds are
/// shown as they are.
pub fn report_text(l: Language, items: &[Item], dry_run: bool) -> String {
    let mut out = String::new();
    let quoted = |i: &Item| {
        i.name
            .as_deref()
            .map(|n| format!("\"{n}\" "))
            .unwrap_or_default()
    };
    for i in items {
        let name = quoted(i);
        let origin = &i.origin;
        let base: [(&str, &dyn fmt::Display); 2] = [("name", &name), ("origin", origin)];
        let line = match &i.action {
            Action::Add if dry_run => t(l, Text::ImportWouldAdd, &base),
            Action::Add => match &i.file {
                Some(f) => t(
                    l,
                    Text::ImportAdded,
                    &[("name", &name), ("origin", origin), ("file", f)],
                ),
                None => t(l, Text::ImportAddedPlain, &base),
            },
            Action::Unchanged => t(l, Text::ImportUnchanged, &base),
            Action::Kept => t(l, Text::ImportKept, &base),
            Action::Refused {
                field,
                kind,
                line,
                column,
            } => t(
                l,
                Text::ImportRefused,
                &[
                    ("origin", origin),
                    ("field", field),
                    ("kind", kind),
                    ("line", line),
                    ("column", column),
                ],
            ),
            Action::Skipped(reason) => t(
                l,
                Text::ImportSkipped,
                &[("origin", origin), ("reason", reason)],
            ),
            Action::Failed(reason) => t(
                l,
                Text::ImportFailed,
                &[("origin", origin), ("reason", reason)],
            ),
        };
        out.push_str(&line);
        out.push('\n');
        for n in &i.notes {
            out.push_str(&t(l, Text::ImportNote, &[("note", n)]));
            out.push('\n');
        }
    }
    let count = |f: fn(&Action) -> bool| items.iter().filter(|i| f(&i.action)).count();
    let added = count(|a| matches!(a, Action::Add));
    let noun = t(
        l,
        if added == 1 {
            Text::ImportNounOne
        } else {
            Text::ImportNounMany
        },
        &[],
    );
    let summary = if dry_run {
        Text::ImportSummaryDry
    } else {
        Text::ImportSummary
    };
    out.push_str(&t(
        l,
        summary,
        &[
            ("added", &added),
            ("noun", &noun),
            ("unchanged", &count(|a| matches!(a, Action::Unchanged))),
            ("kept", &count(|a| matches!(a, Action::Kept))),
            ("refused", &count(|a| matches!(a, Action::Refused { .. }))),
            ("skipped", &count(|a| matches!(a, Action::Skipped(_)))),
            ("failed", &count(|a| matches!(a, Action::Failed(_)))),
        ],
    ));
    out.push('\n');
    out
}

/// The report as JSON (`pimem --json import`).
pub fn report_json(items: &[Item], dry_run: bool, source: SourceKind, root: &Path) -> Value {
    let items: Vec<Value> = items
        .iter()
        .map(|i| {
            let (action, reason) = match &i.action {
                Action::Add => ("add", None),
                Action::Unchanged => ("unchanged", None),
                Action::Kept => ("kept", None),
                Action::Refused {
                    field,
                    kind,
                    line,
                    column,
                } => (
                    "refused",
                    Some(format!(
                        "the {field} contains what looks like a {kind} at line {line}, column {column}"
                    )),
                ),
                Action::Skipped(r) => ("skipped", Some(r.clone())),
                Action::Failed(r) => ("failed", Some(r.clone())),
            };
            json!({ "origin": i.origin, "name": i.name, "action": action, "reason": reason,
                    "file": i.file, "notes": i.notes })
        })
        .collect();
    json!({ "source": source.as_str(), "root": root, "dryRun": dry_run, "items": items })
}

/// Lists the regular `.md` files directly in `dir` (no dotfiles), sorted by name; other
/// entries are ignored. Non-UTF-8 names are reported.
pub(crate) fn markdown_files(dir: &Path) -> Result<(Vec<String>, Vec<Problem>), ImportError> {
    let mut files = Vec::new();
    let mut problems = Vec::new();
    let entries = std::fs::read_dir(dir).map_err(|e| ImportError::io(dir, e))?;
    for entry in entries {
        let entry = entry.map_err(|e| ImportError::io(dir, e))?;
        let Ok(name) = entry.file_name().into_string() else {
            problems.push(Problem {
                origin: entry.file_name().to_string_lossy().into_owned(),
                reason: "the file name is not UTF-8".to_owned(),
            });
            continue;
        };
        // `file_type` does not follow symlinks: a link is not imported.
        let is_file = entry.file_type().is_ok_and(|t| t.is_file());
        if is_file && name.ends_with(".md") && !name.starts_with('.') {
            files.push(name);
        }
    }
    files.sort();
    Ok((files, problems))
}

/// Reads a source file as UTF-8.
pub(crate) fn read_text(path: &Path) -> Result<String, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read it: {e}"))?;
    String::from_utf8(bytes).map_err(|_| "not UTF-8 text".to_owned())
}
