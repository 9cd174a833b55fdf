//! The six MCP tools: their schemas, the argument check that turns a malformed call into a
//! JSON-RPC error naming the field, and the run that produces pi's texts.
//!
//! Each tool maps onto one action of the pi `memory` tool (`memory_core::tool`), whose
//! validation and texts it reuses: `memory_add` → `add`, `memory_replace` → `replace`,
//! `memory_remove` → `remove`, `memory_list` → `list`, `memory_search` → `search`,
//! `session_search` → `search` with `scope: "sessions"` (PM-41).

use std::sync::Arc;

use memory_agent::pi::sessions::ProjectSessions;
use memory_core::tool::{
    self, MAIN_ACTIONS, SessionSearch, ToolOutput, VersionBook, list_text, search_text,
};
use memory_core::{EntryType, Store, StoredEntry, Target, Version};
use serde_json::{Map, Value, json};

/// One of the server's tools.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolName {
    /// `memory_add`.
    Add,
    /// `memory_replace`.
    Replace,
    /// `memory_remove`.
    Remove,
    /// `memory_list`.
    List,
    /// `memory_search`.
    Search,
    /// `session_search`.
    SessionSearch,
}

impl ToolName {
    /// Every tool, in the order `tools/list` shows them.
    pub const ALL: [ToolName; 6] = [
        ToolName::Add,
        ToolName::Replace,
        ToolName::Remove,
        ToolName::List,
        ToolName::Search,
        ToolName::SessionSearch,
    ];

    /// The tool's MCP name.
    pub fn as_str(self) -> &'static str {
        match self {
            ToolName::Add => "memory_add",
            ToolName::Replace => "memory_replace",
            ToolName::Remove => "memory_remove",
            ToolName::List => "memory_list",
            ToolName::Search => "memory_search",
            ToolName::SessionSearch => "session_search",
        }
    }

    /// The tool named `name`.
    pub fn parse(name: &str) -> Option<ToolName> {
        ToolName::ALL.into_iter().find(|t| t.as_str() == name)
    }

    /// Whether the tool changes the memory directory.
    pub fn writes(self) -> bool {
        matches!(self, ToolName::Add | ToolName::Replace | ToolName::Remove)
    }

    /// The tool's description for the model.
    pub fn description(self) -> &'static str {
        match self {
            ToolName::Add => {
                "Save a memory of this project, shared across sessions and agents: one Markdown file plus a MEMORY.md index line. Adding an existing name overwrites it. The description is the only thing a future session sees when deciding relevance: make it one self-contained line."
            }
            ToolName::Replace => {
                "Rewrite an existing memory's content (and optionally its description and type). Conditional on the version this session was shown by memory_list/memory_search, or on expected_version when given: a memory changed meanwhile fails with \"Memory conflict: stale version\"."
            }
            ToolName::Remove => {
                "Delete a memory: its file and its index line. Conditional like memory_replace."
            }
            ToolName::List => "List the project's memories, one line each, oldest first.",
            ToolName::Search => {
                "Case-insensitive substring search over the memories' names, descriptions and bodies."
            }
            ToolName::SessionSearch => {
                "Search the project's past pi sessions (conversations) for a text."
            }
        }
    }

    /// The JSON schema of the tool's arguments.
    pub fn input_schema(self) -> Map<String, Value> {
        let required: &[&str] = match self {
            ToolName::Add | ToolName::Replace => &["name", "content"],
            ToolName::Remove => &["name"],
            ToolName::List => &[],
            ToolName::Search | ToolName::SessionSearch => &["query"],
        };
        let mut schema = Map::new();
        schema.insert("type".into(), json!("object"));
        schema.insert("properties".into(), props(self));
        schema.insert("required".into(), json!(required));
        schema.insert("additionalProperties".into(), json!(false));
        schema
    }

    fn allowed(self) -> &'static [&'static str] {
        match self {
            ToolName::Add => &["name", "content", "description", "type"],
            ToolName::Replace => &["name", "content", "description", "type", "expected_version"],
            ToolName::Remove => &["name", "expected_version"],
            ToolName::List => &[],
            ToolName::Search | ToolName::SessionSearch => &["query"],
        }
    }

    fn action(self) -> &'static str {
        match self {
            ToolName::Add => "add",
            ToolName::Replace => "replace",
            ToolName::Remove => "remove",
            ToolName::List => "list",
            ToolName::Search | ToolName::SessionSearch => "search",
        }
    }
}

fn prop(description: &str) -> Value {
    json!({ "type": "string", "description": description })
}

/// The property schemas (the pi tool's descriptions where it has the property).
fn props(tool: ToolName) -> Value {
    let name = prop("Memory name: a unique, human-readable title and the lookup key");
    let reference = prop("Name (or file name) of an existing memory");
    let content = prop("The memory body (Markdown)");
    let description = prop(
        "One self-contained line describing the memory; defaults to the first sentence of content",
    );
    let entry_type = json!({ "type": "string", "enum": ["user", "feedback", "project", "reference"],
        "description": "Memory type (default feedback, or the existing memory's type)" });
    let version = json!({ "type": "string", "pattern": "^[0-9a-fA-F]{16}$",
        "description": "Only write if the memory is still at this version (16 hex digits, as memory_list/memory_search/a write return it in structuredContent)" });
    let query = prop("Search text (case-insensitive substring)");
    match tool {
        ToolName::Add => {
            json!({ "name": name, "content": content, "description": description, "type": entry_type })
        }
        ToolName::Replace => {
            json!({ "name": reference, "content": content, "description": description,
            "type": entry_type, "expected_version": version })
        }
        ToolName::Remove => json!({ "name": reference, "expected_version": version }),
        ToolName::List => json!({}),
        ToolName::Search | ToolName::SessionSearch => json!({ "query": query }),
    }
}

/// A bad request: the JSON-RPC error `-32602` naming `field`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArgError {
    /// The argument at fault (`name`, `expected_version`, ...).
    pub field: String,
    /// The message (pi's text where pi has one).
    pub message: String,
}

impl ArgError {
    fn new(field: &str, message: impl Into<String>) -> Self {
        ArgError {
            field: field.to_owned(),
            message: message.into(),
        }
    }
}

/// A tool call that passed the argument check.
#[derive(Debug, Clone)]
pub struct Call {
    tool: ToolName,
    /// The arguments in the pi tool's shape (`action` included).
    pi_args: Value,
    /// Explicit `expected_version`.
    expected: Option<Version>,
    /// The `name` argument (replace/remove) or `query` (searches).
    key: String,
}

impl Call {
    /// The tool called.
    pub fn tool(&self) -> ToolName {
        self.tool
    }
}

/// Checks a call's arguments against the tool's schema, with pi's texts for missing ones.
///
/// # Errors
/// The first problem found, naming its field: an unknown argument, a non-string value, a
/// missing or empty required argument (JavaScript's `!value`, like the pi tool: a
/// whitespace-only value goes on to the store's own validation), a `type` that is not one of
/// the four, an `expected_version` that is not 16 hex digits.
pub fn check(tool: ToolName, args: &Map<String, Value>) -> Result<Call, ArgError> {
    // Decision: what violates the advertised schema is a JSON-RPC error (-32602) naming the
    // field, with pi's text where pi has one; what the store refuses stays a tool result
    // with pi's text (see the module docs of `mcp`). Unlike the pi tool, which turns numbers
    // and booleans into strings, only strings (or null) are accepted: the schema says so.
    let allowed = tool.allowed();
    if let Some(key) = args.keys().find(|k| !allowed.contains(&k.as_str())) {
        let expected = if allowed.is_empty() {
            "it takes no arguments".to_owned()
        } else {
            format!("expected {}", allowed.join(", "))
        };
        return Err(ArgError::new(
            key,
            format!(
                "unknown argument \"{key}\" for {}: {expected}",
                tool.as_str()
            ),
        ));
    }
    let mut strings = Map::new();
    for (key, value) in args {
        match value {
            Value::String(_) => {
                strings.insert(key.clone(), value.clone());
            }
            Value::Null => {}
            _ => return Err(ArgError::new(key, format!("{key} must be a string"))),
        }
    }
    let text = |key: &str| strings.get(key).and_then(Value::as_str).unwrap_or("");
    let need = |key: &str, message: &str| -> Result<(), ArgError> {
        if text(key).is_empty() {
            return Err(ArgError::new(key, message));
        }
        Ok(())
    };
    match tool {
        ToolName::Add => {
            need("name", "name is required for add")?;
            need("content", memory_index::CONTENT_REQUIRED_FOR_ADD)?;
        }
        ToolName::Replace => {
            need("name", "name is required for replace")?;
            need("content", "content is required for replace")?;
        }
        ToolName::Remove => need("name", "name is required for remove")?,
        ToolName::List => {}
        ToolName::Search | ToolName::SessionSearch => {
            need("query", memory_index::QUERY_REQUIRED_FOR_SEARCH)?;
        }
    }
    let entry_type = text("type").trim();
    if !entry_type.is_empty() {
        entry_type
            .parse::<EntryType>()
            .map_err(|e| ArgError::new("type", e.to_string()))?;
    }
    let expected = match text("expected_version").trim() {
        "" => None,
        v => Some(
            v.parse::<Version>()
                .map_err(|e| ArgError::new("expected_version", e.to_string()))?,
        ),
    };
    let key = match tool {
        ToolName::Search | ToolName::SessionSearch => text("query").to_owned(),
        _ => text("name").to_owned(),
    };
    strings.remove("expected_version");
    strings.insert("action".into(), json!(tool.action()));
    if tool == ToolName::SessionSearch {
        strings.insert("scope".into(), json!("sessions"));
    }
    Ok(Call {
        tool,
        pi_args: Value::Object(strings),
        expected,
        key,
    })
}

/// What a tool call returned: pi's text plus the structured details an MCP client can use.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// The pi tool's text.
    pub text: String,
    /// Whether the call failed (`isError`).
    pub is_error: bool,
    /// Whether the memory directory changed.
    pub wrote: bool,
    /// `structuredContent`: versions and entries.
    pub structured: Option<Value>,
    /// Notices for the user (a reclaimed lock, a repaired index).
    pub notices: Vec<String>,
}

/// Runs a checked call against `store`. `versions` is the session's book.
pub fn run(
    store: &Store,
    sessions: Option<&ProjectSessions>,
    versions: &mut VersionBook,
    call: &Call,
) -> Outcome {
    match call.tool {
        ToolName::List => match store.list() {
            Ok(entries) => Outcome {
                text: list_text(&entries, versions),
                structured: Some(json!({ "entries": entries_json(&entries) })),
                ..Outcome::ok()
            },
            Err(e) => Outcome::error(e.to_string()),
        },
        ToolName::Search => match store.search(&call.key) {
            Ok(hits) => Outcome {
                text: search_text(&hits, versions),
                structured: Some(json!({ "count": hits.len(), "entries": entries_json(&hits) })),
                ..Outcome::ok()
            },
            Err(e) => Outcome::error(e.to_string()),
        },
        _ => {
            if let Some(v) = call.expected {
                versions.expect(&call.key, v);
            }
            let session_search = sessions.map(|s| s as &dyn SessionSearch);
            let out = tool::execute(
                Target::Store(store),
                MAIN_ACTIONS,
                &call.pi_args,
                session_search,
                versions,
            );
            // The entry's own name (the call may have referenced it by file name).
            let name = match (&out.saved, &out.file) {
                (Some(name), _) => name.clone(),
                (None, Some(file)) => store
                    .read(file)
                    .ok()
                    .flatten()
                    .map_or_else(|| call.key.clone(), |e| e.meta.name.clone()),
                (None, None) => call.key.clone(),
            };
            from_tool_output(call, &name, out)
        }
    }
}

fn from_tool_output(call: &Call, name: &str, out: ToolOutput) -> Outcome {
    let structured = match (&out.file, out.version) {
        (Some(file), Some(version)) => Some(json!({
            "name": name,
            "file": file,
            "version": version,
        })),
        _ if call.tool == ToolName::Remove && !out.is_error => Some(json!({ "removed": call.key })),
        _ => None,
    };
    Outcome {
        text: out.text,
        is_error: out.is_error,
        wrote: out.wrote,
        structured,
        notices: out.notices.iter().map(ToString::to_string).collect(),
    }
}

impl Outcome {
    fn ok() -> Self {
        Outcome {
            text: String::new(),
            is_error: false,
            wrote: false,
            structured: None,
            notices: Vec::new(),
        }
    }

    fn error(text: String) -> Self {
        Outcome {
            text,
            is_error: true,
            ..Outcome::ok()
        }
    }
}

/// The metadata of entries (no bodies) as `structuredContent` lists them.
pub fn entries_json(entries: &[Arc<StoredEntry>]) -> Value {
    Value::Array(
        entries
            .iter()
            .map(|e| {
                json!({
                    "name": e.meta.name,
                    "file": e.file,
                    "description": e.meta.description,
                    "type": e.meta.entry_type.as_str(),
                    "created": e.meta.created,
                    "modified": e.meta.modified,
                    "version": e.version,
                    "uri": super::resources::entry_uri(&e.file),
                })
            })
            .collect(),
    )
}
