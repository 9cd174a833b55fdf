//! The `/memory` status block (PM-75, PM-76, VECTORS J and P).

use memory_index::{index_capacity, parse_index};
use memory_lock::LockState;

use crate::catalog::{Text, t};
use crate::config::{Config, Language, Selector, Task, ui_language};
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
    fn render(&self, l: Language) -> String {
        match self {
            ModuleState::On(m) => t(l, Text::ModuleOn, &[("model", m)]),
            ModuleState::OnLexical => t(l, Text::ModuleOnLexical, &[]),
            ModuleState::Off => t(l, Text::ModuleOff, &[]),
            ModuleState::NoModel => t(l, Text::ModuleNoModel, &[]),
            ModuleState::Unresolvable(m) => t(l, Text::ModuleUnresolvable, &[("model", m)]),
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

    /// `Modules: dream=on(m) extractMemories=off autoSurfacing=on(m)` (English: the
    /// machine-readable spelling `pimem --json status` also uses).
    pub fn line(&self) -> String {
        self.line_in(Language::En)
    }

    /// The `Modules:` line in `l` (the module keys stay as `memory.json` spells them).
    pub fn line_in(&self, l: Language) -> String {
        t(
            l,
            Text::StatusModules,
            &[
                ("dream", &self.dream.render(l)),
                ("extract", &self.extract_memories.render(l)),
                ("surfacing", &self.auto_surfacing.render(l)),
            ],
        )
    }
}

/// Renders the healthy 7-line status block, in the reader's language
/// ([`ui_language`]`(cfg)`; English is PM-75's text byte for byte).
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
    let l = ui_language(cfg);
    let entries = store.list()?.len();
    let last_dream = store
        .dream_meta()
        .map(|m| m.last_dream_at)
        .unwrap_or_else(|| t(l, Text::StatusNeverDreamed, &[]));
    let lock = match store.lock_state()? {
        LockState::Free => t(l, Text::StatusLockFree, &[]),
        LockState::Unreadable { .. } => t(l, Text::StatusLockUnreadable, &[]),
        LockState::Held(h) => t(l, Text::StatusLockHeld, &[("holder", &h.describe())]),
    };
    Ok(t(
        l,
        Text::StatusBlock,
        &[
            ("dir", &store.dir()),
            ("lines", &cap.lines),
            ("max_lines", &cfg.mem_index_max_lines),
            ("bytes", &cap.bytes),
            ("max_bytes", &cfg.mem_index_max_bytes),
            ("unrecognized", &unrecognized),
            ("inject_lines", &inject.lines),
            ("inject_max_lines", &cfg.mem_index_inject_max_lines),
            ("inject_bytes", &inject.bytes),
            ("inject_max_bytes", &cfg.mem_index_inject_max_bytes),
            ("entries", &entries),
            ("modules", &modules.line_in(l)),
            ("last_dream", &last_dream),
            ("lock", &lock),
        ],
    ))
}

/// The misconfigured block (PM-76): `Memory: misconfigured`, `Dir: not initialized`, one
/// `- <error>` line per problem.
pub fn misconfigured_block(errors: &[String]) -> String {
    misconfigured_block_in(Language::En, errors)
}

/// [`misconfigured_block`] in `l`: the two header lines are translated, the errors (error
/// classes such as `Failed to load memory config`) are not.
pub fn misconfigured_block_in(l: Language, errors: &[String]) -> String {
    let mut out = t(l, Text::StatusMisconfigured, &[]);
    for e in errors {
        out.push_str("\n- ");
        out.push_str(e);
    }
    out
}
