//! Per-session state and `session/start`: configuration, model validation through pi, the
//! store, the frozen section.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use memory_agent::pi::sessions::{
    ProjectSessions, SessionSearchOptions, default_session_root, session_dir_for_cwd,
};
use memory_agent::{Surfacer, SurfacingOptions};
use memory_core::tool::VersionBook;
use memory_core::{
    Config, IndexSection, LoadedConfig, Modules, Project, Switch, Task, home_dir, load_config,
    open_project,
};
use parking_lot::Mutex;

use super::protocol::{Level, ModelsResolveParams, Notification, SessionStartParams};
use super::rpc::Peer;
use super::section;

/// How long `session/start` waits for pi to answer `models/resolve`.
const RESOLVE_TIMEOUT: Duration = Duration::from_secs(10);

/// What pi told us about the session in `session/start`.
#[derive(Debug, Clone)]
pub struct StartInfo {
    /// `session_start` reason (`startup`, `new`, `resume`, `fork`, `reload`).
    pub reason: String,
    /// The session's working directory.
    pub cwd: PathBuf,
    /// pi's agent directory.
    pub agent_dir: PathBuf,
    /// Whether `<cwd>/.pi/` may be read.
    pub trusted: bool,
    /// Whether pi has a UI (tui, rpc); notifications and dialogs only then.
    pub has_ui: bool,
    /// pi's session directory for this session, when known.
    pub session_dir: Option<PathBuf>,
    /// A headless child session (subagent): no surfacing, extraction or nudge.
    pub child: bool,
    /// pi's session id (the run log's session).
    pub session_id: String,
    /// pi's session file; `None` for an in-memory session.
    pub session_file: Option<String>,
}

impl From<&SessionStartParams> for StartInfo {
    /// The `session/start` parameters without the section sources.
    fn from(p: &SessionStartParams) -> Self {
        StartInfo {
            reason: p.reason.clone().unwrap_or_else(|| "startup".to_owned()),
            cwd: PathBuf::from(&p.cwd),
            agent_dir: PathBuf::from(&p.agent_dir),
            trusted: p.trusted,
            has_ui: p.has_ui,
            session_dir: p.session_dir.as_ref().map(PathBuf::from),
            child: p.child,
            session_id: p.session_id.clone(),
            session_file: p.session_file.clone(),
        }
    }
}

/// Mutable per-session state.
#[derive(Debug)]
pub struct Live {
    /// The frozen `memory_index` section (PM-57).
    pub section: IndexSection,
    /// `Extract failed:` was shown already (at most once per session, PM-68).
    pub extract_error_shown: bool,
    /// `<project_instructions>` blocks of the last system prompt (PM-67).
    pub instructions: Vec<String>,
    /// Memory was off (or paused) at the last turn start: the section sent was `""`, and the
    /// index is read again when it is back on (PA-16, PA-17).
    pub suspended: bool,
    /// `/memory reload` asked for the section to be read again at the next turn (PA-20).
    pub refresh: bool,
    /// This instance saved or deleted something that changed the index after the section was
    /// frozen (PA-21): `/memory` says so until the section is read again.
    pub index_changed: bool,
}

/// One pi session as the sidecar sees it.
pub struct Session {
    /// Parameters of `session/start`.
    pub info: StartInfo,
    /// Effective configuration.
    pub cfg: Config,
    /// The persistent switch of the agent directory (`auto-memory.json`, PA-11).
    pub switch: Switch,
    /// Module states after model validation.
    pub modules: Modules,
    /// The opened project, or why it could not be opened (the misconfigured state, retried
    /// at every use so a fixed `memory.json` takes effect without restarting pi).
    opened: Mutex<Result<Arc<Project>, Vec<String>>>,
    /// Past sessions of this project (the tool's `scope: "sessions"`).
    pub sessions: Arc<ProjectSessions>,
    /// Mutable state.
    pub live: Mutex<Live>,
    /// Surfacing state: what was surfaced this session (cleared at compaction, PM-64).
    pub surfacer: Mutex<Surfacer>,
    /// Versions the main agent has seen (compare-and-swap for its replace/remove).
    pub versions: Mutex<VersionBook>,
    /// This session's usage summary (PA-26..PA-29), shown by `/memory`.
    pub(super) usage: Mutex<super::usage::Usage>,
    /// Set while the warm-up loads the index: the first surfacing waits for it.
    pub(super) warming: super::index::Warming,
}

/// What `session/start` answers, besides the session itself.
pub(super) struct Started {
    /// The session.
    pub session: Session,
    /// Whether the section was computed fresh (the extension records it).
    pub record: bool,
    /// Notifications for the user (shown by the extension when it has a UI).
    pub notifications: Vec<Notification>,
}

/// The PM-73 problem texts for the tasks that need a model.
pub(super) fn model_errors(cfg: &Config, resolvable: &dyn Fn(&str) -> bool) -> Vec<(Task, String)> {
    cfg.tasks_needing_models()
        .into_iter()
        .filter_map(|task| {
            let key = task.key();
            match cfg.task_model(task) {
                None => Some((
                    task,
                    format!("no model for {key} — set \"{key}.model\" or \"defaults.model\" in memory.json"),
                )),
                Some(m) if !resolvable(m) => Some((
                    task,
                    format!("model \"{m}\" for {key} is not resolvable (unknown id or missing credentials)"),
                )),
                Some(_) => None,
            }
        })
        .collect()
}

/// Asks pi which of the configured models it can use. When pi cannot answer, every model
/// counts as resolvable (a later call reports the real error).
pub(super) fn resolve_models(peer: &Peer, cfg: &Config) -> HashMap<String, bool> {
    let mut specs: Vec<String> = Vec::new();
    for task in cfg.tasks_needing_models() {
        if let Some(m) = cfg.task_model(task)
            && !specs.iter().any(|s| s == m)
        {
            specs.push(m.to_owned());
        }
    }
    if specs.is_empty() {
        return HashMap::new();
    }
    let question = ModelsResolveParams {
        specs: specs.clone(),
    };
    // No answer (an error, a timeout, a malformed result) leaves every flag unset.
    let flags = peer
        .call(&question, RESOLVE_TIMEOUT, None)
        .map(|r| r.resolvable)
        .unwrap_or_default();
    specs
        .into_iter()
        .enumerate()
        .map(|(i, s)| (s, flags.get(i).copied().unwrap_or(true)))
        .collect()
}

/// The session search scope for the session's own project.
fn project_sessions(info: &StartInfo, cfg: &Config) -> ProjectSessions {
    let options = SessionSearchOptions {
        max_sessions: cfg.session_search.max_sessions,
        max_matches: cfg.session_search.max_matches,
        ..SessionSearchOptions::default()
    };
    let default_dir = session_dir_for_cwd(&default_session_root(&info.agent_dir), &info.cwd);
    match &info.session_dir {
        Some(dir) if !same_dir(dir, &default_dir) => {
            ProjectSessions::flat(dir.clone(), info.cwd.clone(), options)
        }
        _ => ProjectSessions::for_agent_dir(&info.agent_dir, &info.cwd, options),
    }
}

fn same_dir(a: &Path, b: &Path) -> bool {
    a == b
        || matches!(
            (std::fs::canonicalize(a), std::fs::canonicalize(b)),
            (Ok(x), Ok(y)) if x == y
        )
}

/// `session/start`: loads configuration, validates models, opens the store and decides the
/// frozen section: the last record on the branch, else pi's replayed section patches (a
/// session begun under pi-memory), else a fresh read of `MEMORY.md`.
pub(super) fn start(peer: &Peer, p: SessionStartParams) -> Started {
    let info = StartInfo::from(&p);

    let loaded = load_config(&info.agent_dir, &info.cwd, info.trusted);
    let mut notifications = Vec::new();
    for problem in loaded.problems.iter().filter(|p| !p.fatal) {
        notifications.push(Notification::new(
            format!("pimem: {problem}"),
            Level::Warning,
        ));
    }
    let opened = open(&info, &loaded);
    let cfg = loaded.config;
    let switch = Switch::new(&info.agent_dir, Duration::from_millis(cfg.lock.timeout_ms));
    let switch_state = switch.state();
    if let memory_core::SwitchState::Paused(problem) = &switch_state {
        notifications.push(Notification::new(
            format!("pimem: {}", memory_core::messages::memory_paused(problem)),
            Level::Error,
        ));
    }

    let resolvable = resolve_models(peer, &cfg);
    let is_resolvable = |m: &str| resolvable.get(m).copied().unwrap_or(true);
    let modules = Modules::from_config(&cfg, is_resolvable);
    // Decision: a missing model only switches its module off (`/memory` shows why); a model
    // that is configured but unusable is a mistake worth a notification (PM-73 text).
    let unusable: Vec<String> = model_errors(&cfg, &is_resolvable)
        .into_iter()
        .filter(|(task, _)| cfg.task_model(*task).is_some())
        .map(|(_, e)| e)
        .collect();
    if !unusable.is_empty() {
        let mut text = String::from("pi-memory config error:");
        for e in &unusable {
            text.push_str("\n- ");
            text.push_str(e);
        }
        notifications.push(Notification::new(text, Level::Error));
    }

    let project = opened.as_ref().ok().cloned();
    if let Err(errors) = &opened {
        for e in errors {
            notifications.push(Notification::new(e.clone(), Level::Error));
        }
    }

    let replayed = if info.reason == "new" {
        None // a new session never inherits a section
    } else {
        p.recorded
            .as_ref()
            .and_then(section::from_record)
            .or_else(|| section::from_patches(&p.section_patches))
    };
    let suspended = !switch_state.is_on();
    let (frozen, record) = match (replayed, &project) {
        // Off or paused: no section; the index is read when memory is back on (PA-16).
        _ if suspended => (section::empty(), false),
        (Some(s), _) => (s, false),
        (None, Some(project)) => match project.store.index_section(
            cfg.mem_index_inject_max_lines,
            cfg.mem_index_inject_max_bytes,
        ) {
            Ok(s) => (s, true),
            Err(e) => {
                notifications.push(Notification::new(
                    format!("pimem: cannot read the memory index: {e}"),
                    Level::Error,
                ));
                (section::empty(), true)
            }
        },
        (None, None) => (section::empty(), false),
    };

    let sessions = Arc::new(project_sessions(&info, &cfg));
    let surfacer = Surfacer::new(SurfacingOptions::from(&cfg));
    Started {
        session: Session {
            info,
            cfg,
            switch,
            modules,
            opened: Mutex::new(opened),
            sessions,
            live: Mutex::new(Live {
                section: frozen,
                extract_error_shown: false,
                instructions: Vec::new(),
                suspended,
                refresh: false,
                index_changed: false,
            }),
            usage: Mutex::new(super::usage::Usage::default()),
            surfacer: Mutex::new(surfacer),
            versions: Mutex::new(VersionBook::default()),
            warming: super::index::Warming::default(),
        },
        record,
        notifications,
    }
}

/// Opens the session's project (PM-74): `Failed to load memory config: …` when a
/// `memory.json` exists but cannot be read, `Failed to initialize memory: …` when the
/// project directory cannot be resolved.
fn open(info: &StartInfo, loaded: &LoadedConfig) -> Result<Arc<Project>, Vec<String>> {
    if let Some(problem) = loaded.fatal() {
        return Err(vec![format!("Failed to load memory config: {problem}")]);
    }
    let switch = Switch::new(
        &info.agent_dir,
        Duration::from_millis(loaded.config.lock.timeout_ms),
    );
    open_project(&loaded.config, &info.cwd, None, home_dir().as_deref())
        .map(|p| Arc::new(p.with_switch(switch)))
        .map_err(|e| {
            vec![format!(
                "Failed to initialize memory: {}: {e}",
                memory_core::messages::CATEGORY_IDENTITY
            )]
        })
}

impl Session {
    /// The project, opening it again if it failed before (with `memory.json` read again):
    /// an initialisation failure lasts only until its cause is fixed (PM-74, PM-78).
    pub fn project(&self) -> Result<Arc<Project>, Vec<String>> {
        let mut opened = self.opened.lock();
        if opened.is_err() {
            let loaded = load_config(&self.info.agent_dir, &self.info.cwd, self.info.trusted);
            *opened = open(&self.info, &loaded);
        }
        opened.clone()
    }

    /// The project if it is open now (no retry).
    pub fn project_if_open(&self) -> Option<Arc<Project>> {
        self.opened.lock().as_ref().ok().cloned()
    }

    /// Why a task cannot run: the PM-73 text for a missing or unusable model.
    pub fn model_problem(&self, task: Task) -> String {
        let key = task.key();
        match self.cfg.task_model(task) {
            None => format!(
                "no model for {key} — set \"{key}.model\" or \"defaults.model\" in memory.json"
            ),
            Some(m) => format!(
                "model \"{m}\" for {key} is not resolvable (unknown id or missing credentials)"
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;

    fn cfg(v: Value) -> Config {
        memory_core::config::config_from_value(&v).0
    }

    #[test]
    fn model_errors_follow_pm73_order_and_texts_o1_o2_o4_o5() {
        // O1: no models, defaults otherwise (surfacing without a model is lexical: no error)
        let errs: Vec<String> = model_errors(&cfg(json!({})), &|_| true)
            .into_iter()
            .map(|e| e.1)
            .collect();
        assert_eq!(
            errs,
            vec!["no model for dream — set \"dream.model\" or \"defaults.model\" in memory.json"]
        );
        // O2: unresolvable default model
        let errs: Vec<String> =
            model_errors(&cfg(json!({"defaults": {"model": "nope/nope"}})), &|_| {
                false
            })
            .into_iter()
            .map(|e| e.1)
            .collect();
        assert_eq!(
            errs,
            vec![
                "model \"nope/nope\" for dream is not resolvable (unknown id or missing credentials)",
                "model \"nope/nope\" for autoSurfacing is not resolvable (unknown id or missing credentials)",
            ]
        );
        // O4: extraction enabled, no models: dream, then extractMemories
        let errs: Vec<Task> =
            model_errors(&cfg(json!({"extractMemories": {"enabled": true}})), &|_| {
                true
            })
            .into_iter()
            .map(|e| e.0)
            .collect();
        assert_eq!(errs, vec![Task::Dream, Task::ExtractMemories]);
        // O5: surfacing off, only dream.model
        assert!(
            model_errors(
                &cfg(json!({"autoSurfacing": {"enabled": false}, "dream": {"model": "a/b"}})),
                &|_| true
            )
            .is_empty()
        );
    }
}
