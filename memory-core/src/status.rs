//! The `/memory` status block (PM-75, PM-76, VECTORS J and P).

use memory_index::{index_capacity, parse_index};
use memory_lock::LockState;

use crate::config::{Config, Selector, Task};
use crate::error::StoreError;
use crate::store::Store;
use crate::store::types::IndexSection;

/// Why a model-driven module is off or which model it uses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModuleState {
    /// On with this model (`provider/model-id`).
    On(String),
    /// On without a model (lexical surfacing).
    OnLexical,
    /// Switched off in `memory.json`.
    Off,
    /// Off because no model is configured.
    NoModel,
    /// Off because the configured model cannot be resolved by the host.
    Unresolvable(String),
}

impl ModuleState {
    fn render(&self) -> String {
        match self {
            ModuleState::On(m) => format!("on({m})"),
            ModuleState::OnLexical => "on(lexical)".to_owned(),
            ModuleState::Off => "off".to_owned(),
            ModuleState::NoModel => "off(no model)".to_owned(),
            ModuleState::Unresolvable(m) => format!("off(unresolvable model {m})"),
        }
    }
}

/// The three modules of the `Modules:` line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Modules {
    /// `/dream`.
    pub dream: ModuleState,
    /// Extraction.
    pub extract_memories: ModuleState,
    /// Surfacing.
    pub auto_surfacing: ModuleState,
}

impl Modules {
    /// Module states from configuration alone; `resolvable` says whether the host can use a
    /// model (`|_| true` when nobody can tell, e.g. the CLI without an HTTP model).
    pub fn from_config(cfg: &Config, resolvable: impl Fn(&str) -> bool) -> Self {
        let with_model = |task: Task| match cfg.task_model(task) {
            Some(m) if resolvable(m) => ModuleState::On(m.to_owned()),
            Some(m) => ModuleState::Unresolvable(m.to_owned()),
            None => ModuleState::NoModel,
        };
        Modules {
            dream: with_model(Task::Dream),
            extract_memories: if cfg.extract_memories.enabled {
                with_model(Task::ExtractMemories)
            } else {
                ModuleState::Off
            },
            auto_surfacing: if !cfg.auto_surfacing.enabled {
                ModuleState::Off
            } else if cfg.effective_selector() == Selector::Lexical {
                ModuleState::OnLexical
            } else {
                match with_model(Task::AutoSurfacing) {
                    ModuleState::On(m) => ModuleState::On(m),
                    // A model failure falls back to lexical surfacing.
                    _ => ModuleState::OnLexical,
                }
            },
        }
    }

    /// `Modules: dream=on(m) extractMemories=off autoSurfacing=on(m)`.
    pub fn line(&self) -> String {
        format!(
            "Modules: dream={} extractMemories={} autoSurfacing={}",
            self.dream.render(),
            self.extract_memories.render(),
            self.auto_surfacing.render()
        )
    }
}

/// Renders the healthy 7-line status block.
///
/// `inject` is the frozen section of the running session when there is one; otherwise the
/// window is computed from disk now.
pub fn status_block(
    store: &Store,
    cfg: &Config,
    modules: &Modules,
    inject: Option<&IndexSection>,
) -> Result<String, StoreError> {
    let raw = store.read_index()?;
    let cap = index_capacity(&raw);
    let unrecognized = parse_index(&raw).unrecognized;
    let computed;
    let inject = match inject {
        Some(s) => s,
        None => {
            computed = store.index_section(
                cfg.mem_index_inject_max_lines,
                cfg.mem_index_inject_max_bytes,
            )?;
            &computed
        }
    };
    let entries = store.list()?.len();
    let last_dream = store
        .dream_meta()
        .map(|m| m.last_dream_at)
        .unwrap_or_else(|| "never".to_owned());
    let lock = match store.lock_state()? {
        LockState::Free => "free".to_owned(),
        LockState::Unreadable { .. } => "unreadable — run /memory unlock".to_owned(),
        LockState::Held(h) => format!("held by {}", h.describe()),
    };
    Ok(format!(
        "Dir: {}\nIndex: {}/{} lines, {}/{} bytes, {} unrecognized lines\nInject: {}/{} lines, {}/{} bytes\nEntries: {}\n{}\nLast dream: {}\nLock: {}",
        store.dir(),
        cap.lines,
        cfg.mem_index_max_lines,
        cap.bytes,
        cfg.mem_index_max_bytes,
        unrecognized,
        inject.lines,
        cfg.mem_index_inject_max_lines,
        inject.bytes,
        cfg.mem_index_inject_max_bytes,
        entries,
        modules.line(),
        last_dream,
        lock
    ))
}

/// The misconfigured block (PM-76): `Memory: misconfigured`, `Dir: not initialized`, one
/// `- <error>` line per problem.
pub fn misconfigured_block(errors: &[String]) -> String {
    let mut out = String::from("Memory: misconfigured\nDir: not initialized");
    for e in errors {
        out.push_str("\n- ");
        out.push_str(e);
    }
    out
}
