//! [`MemoryTool`]: the `memory` tool for an agent loop, in one value — its definition for the
//! model and its execution, with pi-memory's texts and compare-and-swap versions.

use memory_core::tool::{
    Action, DREAM_ACTIONS, DuplicateCheck, MAIN_ACTIONS, SessionSearch, TOOL_DESCRIPTION,
    TOOL_NAME, ToolOutput, VersionBook, execute_with, parameters_schema,
};
use memory_core::{Round, Store, StoredEntry, Target};
use serde_json::Value;

use crate::live::LiveIndex;
use crate::model::ToolDef;

/// The `memory` tool over one store (or one held round).
///
/// [`MemoryTool::def`] is what the model is offered; [`MemoryTool::call`] runs one call and
/// returns the text for the model. The tool remembers the version of every entry the model
/// was shown (by `list`, `search`, or [`MemoryTool::saw`] for entries a prompt listed), so a
/// `replace`/`remove` of an entry that changed meanwhile fails with
/// `Memory conflict: stale version` instead of overwriting someone else's write.
///
/// ```
/// use memory_agent::MemoryTool;
/// use memory_core::{Store, StoreOptions};
/// use serde_json::json;
///
/// let dir = tempfile::tempdir()?;
/// let store = Store::new(dir.path().join("proj").to_str().unwrap(), StoreOptions::default());
/// let mut tool = MemoryTool::new(&store);
/// assert_eq!(tool.def().name, "memory");
/// let out = tool.call(&json!({"action": "add", "name": "Test command", "content": "cargo xtask ci"}));
/// assert_eq!(out.text, "Saved \"Test command\" (Test-command.md).");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct MemoryTool<'a, 's> {
    target: Target<'a, 's>,
    actions: &'static [Action],
    versions: VersionBook,
    sessions: Option<&'a dyn SessionSearch>,
    /// The index for duplicate warnings on `add` ([`MemoryTool::with_duplicate_warnings`]).
    duplicates: Option<LiveIndex>,
}

impl std::fmt::Debug for MemoryTool<'_, '_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemoryTool")
            .field("target", &self.target)
            .field("actions", &self.actions)
            .field("sessions", &self.sessions.is_some())
            .field("duplicate_warnings", &self.duplicates.is_some())
            .finish()
    }
}

impl<'a> MemoryTool<'a, 'static> {
    /// The main agent's tool over `store`: `add`, `replace`, `remove`, `list`, `search`.
    pub fn new(store: &'a Store) -> Self {
        MemoryTool::over(Target::Store(store), MAIN_ACTIONS)
    }
}

impl<'a, 's> MemoryTool<'a, 's> {
    /// The tool over any target with these actions.
    pub fn over(target: Target<'a, 's>, actions: &'static [Action]) -> Self {
        MemoryTool {
            target,
            actions,
            versions: VersionBook::default(),
            sessions: None,
            duplicates: None,
        }
    }

    /// Appends a duplicate warning to an `add` that creates an entry much like an existing
    /// one (see [`memory_core::tool::execute_with`]); the index is built at the first `add`.
    pub fn with_duplicate_warnings(mut self) -> Self {
        self.duplicates = Some(LiveIndex::default());
        self
    }

    /// The dream's tool inside its round: all seven actions (PM-31).
    pub fn dream(round: &'a Round<'s>) -> Self {
        MemoryTool::over(Target::Round(round), DREAM_ACTIONS)
    }

    /// Backs `search` with `scope: "sessions"`.
    pub fn with_sessions(mut self, sessions: Option<&'a dyn SessionSearch>) -> Self {
        self.sessions = sessions;
        self
    }

    /// Records that the model was shown `entry` (its current version becomes the one a
    /// later `replace`/`remove`/`rename` of it expects).
    pub fn saw(&mut self, entry: &StoredEntry) {
        self.versions.saw(entry);
    }

    /// The versions the model has been shown.
    pub fn versions(&mut self) -> &mut VersionBook {
        &mut self.versions
    }

    /// Where the tool reads and writes.
    pub fn target(&self) -> Target<'a, 's> {
        self.target
    }

    /// The actions offered.
    pub fn actions(&self) -> &'static [Action] {
        self.actions
    }

    /// The definition offered to the model (name, description, JSON schema).
    pub fn def(&self) -> ToolDef {
        ToolDef {
            name: TOOL_NAME.to_owned(),
            description: TOOL_DESCRIPTION.to_owned(),
            parameters: parameters_schema(self.actions),
        }
    }

    /// Runs one call with the model's JSON arguments. Never panics; a bad call is an error
    /// output the model can read and correct.
    pub fn call(&mut self, args: &Value) -> ToolOutput {
        execute_with(
            self.target,
            self.actions,
            args,
            self.sessions,
            self.duplicates
                .as_mut()
                .map(|d| d as &mut dyn DuplicateCheck),
            &mut self.versions,
        )
    }
}
