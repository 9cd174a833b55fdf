//! `memory.json`: loading, layering and defaults (PM-71, PM-72).
//!
//! Layers, later wins: built-in defaults ← `<agentDir>/memory.json` ← `<cwd>/.pi/memory.json`
//! (the project layer only when the caller says the project is trusted). Nested objects are
//! deep-merged as JSON values first, then every known key is read leniently: a value of the
//! wrong type is reported as a [`ConfigProblem`] and its default is used, so one typo never
//! disables the whole file. Unknown keys (legacy `enabled`, `maxTopicBytes`, ...) are ignored.
//! Malformed JSON is reported, not fatal (the original ignored it silently; a user editing the
//! file deserves to know why their setting has no effect).

use std::fmt;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

/// The file name of the configuration in the agent directory and in `<cwd>/.pi/`.
pub const CONFIG_FILE: &str = "memory.json";

/// Which selector picks memories to surface each turn (`autoSurfacing.selector`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Selector {
    /// Hybrid when a model is available, lexical otherwise (the default: unset in
    /// `memory.json`).
    #[default]
    Auto,
    /// BM25 over name, description and body; zero model calls.
    Lexical,
    /// The original side query: the model picks from the manifest.
    Model,
    /// BM25 pre-ranks, the model chooses from the top of that list.
    Hybrid,
}

impl Selector {
    /// The configuration spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Selector::Auto => "auto",
            Selector::Lexical => "lexical",
            Selector::Model => "model",
            Selector::Hybrid => "hybrid",
        }
    }
}

/// Headless-session persistence of one task (`sessionPersistence`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SessionPersistence {
    /// Persist the headless sessions of the task.
    pub enabled: bool,
    /// Where to persist them (default `<project memory dir>/sessions/`).
    pub session_dir: Option<String>,
}

/// Lock settings (`lock`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LockConfig {
    /// How long a writer waits for the logical and the cross-process lock (ms).
    pub timeout_ms: u64,
    /// How many snapshots `.backups/` keeps.
    pub snapshot_keep: usize,
    /// Reclaim a `.lock` whose holder is provably dead on this host (beyond the original).
    pub reclaim_dead: bool,
}

/// `defaults`: values every task falls back to.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Defaults {
    /// `provider/model-id` used by every task without its own model.
    pub model: Option<String>,
    /// Default session persistence.
    pub session_persistence: SessionPersistence,
}

/// `dream`.
#[derive(Debug, Clone, PartialEq)]
pub struct DreamConfig {
    /// The task's own model.
    pub model: Option<String>,
    /// Nudge after this many new sessions.
    pub nudge_after_sessions: u64,
    /// ... and this many hours since the last dream.
    pub nudge_after_hours: f64,
    /// Thinking level passed to the model.
    pub think_level: String,
    /// Per-task session persistence.
    pub session_persistence: Option<SessionPersistence>,
}

/// `sessionSearch`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionSearchConfig {
    /// At most this many sessions with hits.
    pub max_sessions: usize,
    /// At most this many matches per session.
    pub max_matches: usize,
}

/// `autoSurfacing`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AutoSurfacingConfig {
    /// Module switch.
    pub enabled: bool,
    /// The task's own model.
    pub model: Option<String>,
    /// Thinking level passed to the model.
    pub think_level: String,
    /// At most this many memories per turn.
    pub max_files: usize,
    /// Per-entry body budget in bytes.
    pub max_entry_bytes: usize,
    /// Whole-message budget in bytes.
    pub max_injection_bytes: usize,
    /// The selector ([`Selector::Auto`] when unset).
    pub selector: Selector,
    /// Per-task session persistence.
    pub session_persistence: Option<SessionPersistence>,
}

/// `extractMemories`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExtractConfig {
    /// Module switch (off by default since pi-memory 2.2).
    pub enabled: bool,
    /// The task's own model.
    pub model: Option<String>,
    /// Thinking level passed to the model.
    pub think_level: String,
    /// Transcript budget in tokens (×4 characters).
    pub max_context_tokens: usize,
    /// Per tool-result cut.
    pub max_tool_result_chars: usize,
    /// Per assistant-text cut.
    pub max_assistant_chars: usize,
    /// Per-task session persistence.
    pub session_persistence: Option<SessionPersistence>,
}

/// The language of what a person reads: panels, command output, notifications (PA-03).
/// Texts sent to the model, command names, IDs and error classes stay English in every
/// language.
///
/// Chosen by `memory.json` `"language"` (`"en"` or `"zh-CN"`), else by the locale
/// (`LC_ALL`, then `LANG`), else English: [`ui_language`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Language {
    /// English.
    #[default]
    En,
    /// Simplified Chinese.
    ZhCn,
}

impl Language {
    /// The `memory.json` spelling: `"en"` or `"zh-CN"` (case and `-`/`_` are not significant).
    pub fn from_setting(value: &str) -> Option<Language> {
        match value.trim().to_ascii_lowercase().replace('_', "-").as_str() {
            "en" => Some(Language::En),
            "zh-cn" => Some(Language::ZhCn),
            _ => None,
        }
    }

    /// A POSIX locale name (`zh_CN.UTF-8`, `en_US`, `C`): `None` when it is empty, so the next
    /// source is asked.
    ///
    /// Decision: every `zh*` locale (Taiwan and Hong Kong included) selects Simplified
    /// Chinese, the only Chinese catalog; a reader of Traditional Chinese reads it more easily
    /// than English. Any other non-empty locale (`C` and `POSIX` too) selects English.
    pub fn from_locale(value: &str) -> Option<Language> {
        let value = value.trim();
        if value.is_empty() {
            return None;
        }
        Some(if value.to_ascii_lowercase().starts_with("zh") {
            Language::ZhCn
        } else {
            Language::En
        })
    }

    /// The first source that decides: the setting, then `LC_ALL`, then `LANG`, else English.
    pub fn choose(setting: Option<Language>, lc_all: Option<&str>, lang: Option<&str>) -> Language {
        setting
            .or_else(|| lc_all.and_then(Language::from_locale))
            .or_else(|| lang.and_then(Language::from_locale))
            .unwrap_or_default()
    }
}

/// The language of what a person reads, for this configuration and this process's locale
/// ([`Language::choose`] with `LC_ALL` and `LANG` from the environment).
#[allow(clippy::disallowed_methods)] // the locale is this concern's own input
pub fn ui_language(cfg: &Config) -> Language {
    let env = |k: &str| std::env::var(k).ok();
    Language::choose(
        cfg.language,
        env("LC_ALL").as_deref(),
        env("LANG").as_deref(),
    )
}

/// `experience`: the run log and its summaries (PX-02..PX-09; beyond pi-memory 2.5, whose
/// `memory.json` has no such key).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExperienceConfig {
    /// Record pi's runs into the project's run log (capture starts when enabled, PX-17).
    pub enabled: bool,
    /// The summaries' own model (else `defaults.model`).
    pub model: Option<String>,
    /// Thinking level passed to the model.
    pub think_level: String,
    /// Per-task session persistence of the summary calls.
    pub session_persistence: Option<SessionPersistence>,
}

/// The whole effective configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// Memory root as written (`~` not yet expanded).
    pub memory_dir: String,
    /// Write capacity of `MEMORY.md` in non-empty lines.
    pub mem_index_max_lines: usize,
    /// Write capacity of `MEMORY.md` in bytes.
    pub mem_index_max_bytes: usize,
    /// Injection window in lines.
    pub mem_index_inject_max_lines: usize,
    /// Injection window in bytes.
    pub mem_index_inject_max_bytes: usize,
    /// Locks and snapshots.
    pub lock: LockConfig,
    /// Task defaults.
    pub defaults: Defaults,
    /// Dream.
    pub dream: DreamConfig,
    /// Session search.
    pub session_search: SessionSearchConfig,
    /// Auto-surfacing.
    pub auto_surfacing: AutoSurfacingConfig,
    /// Extraction.
    pub extract_memories: ExtractConfig,
    /// The run log and its summaries.
    pub experience: ExperienceConfig,
    /// `language`: what a person reads (`None`: the locale decides, [`ui_language`]).
    pub language: Option<Language>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            memory_dir: "~/.pi/memory".to_owned(),
            mem_index_max_lines: memory_index::DEFAULT_INDEX_MAX_LINES,
            mem_index_max_bytes: memory_index::DEFAULT_INDEX_MAX_BYTES,
            mem_index_inject_max_lines: memory_index::DEFAULT_INJECT_MAX_LINES,
            mem_index_inject_max_bytes: memory_index::DEFAULT_INJECT_MAX_BYTES,
            lock: LockConfig {
                timeout_ms: 5000,
                snapshot_keep: 5,
                reclaim_dead: true,
            },
            defaults: Defaults::default(),
            dream: DreamConfig {
                model: None,
                nudge_after_sessions: 5,
                nudge_after_hours: 24.0,
                think_level: "high".to_owned(),
                session_persistence: None,
            },
            session_search: SessionSearchConfig {
                max_sessions: 10,
                max_matches: 5,
            },
            auto_surfacing: AutoSurfacingConfig {
                enabled: true,
                model: None,
                think_level: "off".to_owned(),
                max_files: memory_index::DEFAULT_MAX_FILES,
                max_entry_bytes: memory_index::DEFAULT_MAX_ENTRY_BYTES,
                max_injection_bytes: memory_index::DEFAULT_MAX_INJECTION_BYTES,
                selector: Selector::Auto,
                session_persistence: None,
            },
            extract_memories: ExtractConfig {
                enabled: false,
                model: None,
                think_level: "high".to_owned(),
                max_context_tokens: 2000,
                max_tool_result_chars: 500,
                max_assistant_chars: 2000,
                session_persistence: None,
            },
            experience: ExperienceConfig {
                enabled: true,
                model: None,
                think_level: "off".to_owned(),
                session_persistence: None,
            },
            language: None,
        }
    }
}

impl From<&Config> for crate::StoreOptions {
    /// The store's part of the configuration (capacity, locks, snapshots).
    fn from(cfg: &Config) -> Self {
        crate::StoreOptions {
            index_max_lines: cfg.mem_index_max_lines,
            index_max_bytes: cfg.mem_index_max_bytes,
            lock_timeout: std::time::Duration::from_millis(cfg.lock.timeout_ms),
            snapshot_keep: cfg.lock.snapshot_keep,
            reclaim_dead: cfg.lock.reclaim_dead,
            clock: crate::Clock::system(),
            switch: None,
        }
    }
}

/// The model-driven tasks, in the order the original validates them (PM-73).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Task {
    /// `/dream` consolidation.
    Dream,
    /// Per-turn extraction.
    ExtractMemories,
    /// Per-turn surfacing.
    AutoSurfacing,
    /// The summary of a recorded run (the run log's `experience` key; never validated at
    /// start, never in `/memory`'s module line).
    Experience,
}

impl Task {
    /// The configuration key of the task.
    pub fn key(self) -> &'static str {
        match self {
            Task::Dream => "dream",
            Task::ExtractMemories => "extractMemories",
            Task::AutoSurfacing => "autoSurfacing",
            Task::Experience => "experience",
        }
    }
}

impl Config {
    /// The effective model of a task: its own, else `defaults.model` (PM-73).
    pub fn task_model(&self, task: Task) -> Option<&str> {
        let own = match task {
            Task::Dream => &self.dream.model,
            Task::ExtractMemories => &self.extract_memories.model,
            Task::AutoSurfacing => &self.auto_surfacing.model,
            Task::Experience => &self.experience.model,
        };
        own.as_deref().or(self.defaults.model.as_deref())
    }

    /// The effective session persistence of a task.
    pub fn task_session_persistence(&self, task: Task) -> &SessionPersistence {
        let own = match task {
            Task::Dream => &self.dream.session_persistence,
            Task::ExtractMemories => &self.extract_memories.session_persistence,
            Task::AutoSurfacing => &self.auto_surfacing.session_persistence,
            Task::Experience => &self.experience.session_persistence,
        };
        own.as_ref().unwrap_or(&self.defaults.session_persistence)
    }

    /// The selector surfacing uses when its model (if any) is usable: the configured one;
    /// [`Selector::Auto`] resolves to hybrid with a configured model and lexical without.
    pub fn effective_selector(&self) -> Selector {
        match (
            self.auto_surfacing.selector,
            self.task_model(Task::AutoSurfacing),
        ) {
            (Selector::Auto, Some(_)) => Selector::Hybrid,
            (Selector::Auto, None) => Selector::Lexical,
            (s, _) => s,
        }
    }

    /// The tasks that need a model in this configuration, in validation order (PM-73):
    /// dream always, extraction and surfacing only when enabled (surfacing only when its
    /// selector uses a model).
    pub fn tasks_needing_models(&self) -> Vec<Task> {
        let mut out = vec![Task::Dream];
        if self.extract_memories.enabled {
            out.push(Task::ExtractMemories);
        }
        if self.auto_surfacing.enabled && self.effective_selector() != Selector::Lexical {
            out.push(Task::AutoSurfacing);
        }
        out
    }
}

/// A problem found while loading configuration. Most are not fatal: the affected value (or
/// a malformed file, VECTORS O9) falls back to its default and the problem is shown to the
/// user. A file that exists but cannot be read is fatal: without it nobody knows where the
/// user's memories live (`memoryDir`), and writing them to the default place would scatter
/// them (PM-74, `Failed to load memory config: …`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigProblem {
    /// The file the problem is in.
    pub path: PathBuf,
    /// What is wrong, naming the key.
    pub message: String,
    /// Whether memory must not start with this configuration.
    pub fatal: bool,
}

impl fmt::Display for ConfigProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path.display(), self.message)
    }
}

/// The result of [`load_config`]: the effective configuration and every problem found.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadedConfig {
    /// Effective configuration.
    pub config: Config,
    /// Problems (malformed JSON, wrong types, unreadable files); empty when all is well.
    pub problems: Vec<ConfigProblem>,
    /// The files that were read, in layering order.
    pub sources: Vec<PathBuf>,
}

impl LoadedConfig {
    /// The first problem that forbids starting memory (an existing file that cannot be read).
    pub fn fatal(&self) -> Option<&ConfigProblem> {
        self.problems.iter().find(|p| p.fatal)
    }
}

/// Loads `<agent_dir>/memory.json`, then `<cwd>/.pi/memory.json` when `trusted`.
///
/// A missing file is not a problem. Unreadable or malformed files are reported and skipped.
pub fn load_config(agent_dir: &Path, cwd: &Path, trusted: bool) -> LoadedConfig {
    let mut layers = vec![agent_dir.join(CONFIG_FILE)];
    if trusted {
        layers.push(cwd.join(".pi").join(CONFIG_FILE));
    }
    let mut merged = Value::Object(Map::new());
    let mut problems = Vec::new();
    let mut sources = Vec::new();
    let mut origin = agent_dir.join(CONFIG_FILE);
    for path in layers {
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => {
                problems.push(ConfigProblem {
                    path: path.clone(),
                    message: format!("cannot read: {e}"),
                    fatal: true,
                });
                continue;
            }
        };
        match serde_json::from_str::<Value>(&text) {
            Ok(Value::Object(obj)) => {
                deep_merge(&mut merged, Value::Object(obj));
                origin = path.clone();
                sources.push(path);
            }
            Ok(_) => problems.push(ConfigProblem {
                path,
                message: "must contain a JSON object; file ignored".to_owned(),
                fatal: false,
            }),
            Err(e) => problems.push(ConfigProblem {
                path,
                message: format!("malformed JSON ({e}); file ignored"),
                fatal: false,
            }),
        }
    }
    let (config, messages) = config_from_value(&merged);
    problems.extend(messages.into_iter().map(|message| ConfigProblem {
        path: origin.clone(),
        message,
        fatal: false,
    }));
    LoadedConfig {
        config,
        problems,
        sources,
    }
}

/// Merges `overlay` into `base`: objects recursively, everything else replaced.
pub fn deep_merge(base: &mut Value, overlay: Value) {
    match (base, overlay) {
        (Value::Object(b), Value::Object(o)) => {
            for (k, v) in o {
                match b.get_mut(&k) {
                    Some(slot) if slot.is_object() && v.is_object() => deep_merge(slot, v),
                    _ => {
                        b.insert(k, v);
                    }
                }
            }
        }
        (slot, v) => *slot = v,
    }
}

/// Reads a merged JSON object into a [`Config`], leniently. Returns the problems found.
pub fn config_from_value(value: &Value) -> (Config, Vec<String>) {
    let mut r = Reader {
        problems: Vec::new(),
    };
    let d = Config::default();
    let root = value.as_object();
    let get = |key: &str| root.and_then(|o| o.get(key));
    let lock = r.object(get("lock"), "lock");
    let defaults = r.object(get("defaults"), "defaults");
    let dream = r.object(get("dream"), "dream");
    let search = r.object(get("sessionSearch"), "sessionSearch");
    let surf = r.object(get("autoSurfacing"), "autoSurfacing");
    let extract = r.object(get("extractMemories"), "extractMemories");
    let experience = r.object(get("experience"), "experience");
    let config = Config {
        memory_dir: r.string(get("memoryDir"), "memoryDir", &d.memory_dir),
        mem_index_max_lines: r.count(
            get("memIndexMaxLines"),
            "memIndexMaxLines",
            d.mem_index_max_lines,
        ),
        mem_index_max_bytes: r.count(
            get("memIndexMaxBytes"),
            "memIndexMaxBytes",
            d.mem_index_max_bytes,
        ),
        mem_index_inject_max_lines: r.count(
            get("memIndexInjectMaxLines"),
            "memIndexInjectMaxLines",
            d.mem_index_inject_max_lines,
        ),
        mem_index_inject_max_bytes: r.count(
            get("memIndexInjectMaxBytes"),
            "memIndexInjectMaxBytes",
            d.mem_index_inject_max_bytes,
        ),
        lock: LockConfig {
            timeout_ms: r.count(
                field(lock, "timeoutMs"),
                "lock.timeoutMs",
                d.lock.timeout_ms as usize,
            ) as u64,
            snapshot_keep: r.count(
                field(lock, "snapshotKeep"),
                "lock.snapshotKeep",
                d.lock.snapshot_keep,
            ),
            reclaim_dead: r.boolean(
                field(lock, "reclaimDead"),
                "lock.reclaimDead",
                d.lock.reclaim_dead,
            ),
        },
        defaults: Defaults {
            model: r.model(field(defaults, "model"), "defaults.model"),
            session_persistence: r
                .persistence(
                    field(defaults, "sessionPersistence"),
                    "defaults.sessionPersistence",
                )
                .unwrap_or_default(),
        },
        dream: DreamConfig {
            model: r.model(field(dream, "model"), "dream.model"),
            nudge_after_sessions: r.count(
                field(dream, "nudgeAfterSessions"),
                "dream.nudgeAfterSessions",
                d.dream.nudge_after_sessions as usize,
            ) as u64,
            nudge_after_hours: r.number(
                field(dream, "nudgeAfterHours"),
                "dream.nudgeAfterHours",
                d.dream.nudge_after_hours,
            ),
            think_level: r.string(
                field(dream, "thinkLevel"),
                "dream.thinkLevel",
                &d.dream.think_level,
            ),
            session_persistence: r.persistence(
                field(dream, "sessionPersistence"),
                "dream.sessionPersistence",
            ),
        },
        session_search: SessionSearchConfig {
            max_sessions: r.count(
                field(search, "maxSessions"),
                "sessionSearch.maxSessions",
                d.session_search.max_sessions,
            ),
            max_matches: r.count(
                field(search, "maxMatches"),
                "sessionSearch.maxMatches",
                d.session_search.max_matches,
            ),
        },
        auto_surfacing: AutoSurfacingConfig {
            enabled: r.boolean(
                field(surf, "enabled"),
                "autoSurfacing.enabled",
                d.auto_surfacing.enabled,
            ),
            model: r.model(field(surf, "model"), "autoSurfacing.model"),
            think_level: r.string(
                field(surf, "thinkLevel"),
                "autoSurfacing.thinkLevel",
                &d.auto_surfacing.think_level,
            ),
            max_files: r.count(
                field(surf, "maxFiles"),
                "autoSurfacing.maxFiles",
                d.auto_surfacing.max_files,
            ),
            max_entry_bytes: r.count(
                field(surf, "maxEntryBytes"),
                "autoSurfacing.maxEntryBytes",
                d.auto_surfacing.max_entry_bytes,
            ),
            max_injection_bytes: r.count(
                field(surf, "maxInjectionBytes"),
                "autoSurfacing.maxInjectionBytes",
                d.auto_surfacing.max_injection_bytes,
            ),
            selector: r.selector(field(surf, "selector")),
            session_persistence: r.persistence(
                field(surf, "sessionPersistence"),
                "autoSurfacing.sessionPersistence",
            ),
        },
        extract_memories: ExtractConfig {
            enabled: r.boolean(
                field(extract, "enabled"),
                "extractMemories.enabled",
                d.extract_memories.enabled,
            ),
            model: r.model(field(extract, "model"), "extractMemories.model"),
            think_level: r.string(
                field(extract, "thinkLevel"),
                "extractMemories.thinkLevel",
                &d.extract_memories.think_level,
            ),
            max_context_tokens: r.count(
                field(extract, "maxContextTokens"),
                "extractMemories.maxContextTokens",
                d.extract_memories.max_context_tokens,
            ),
            max_tool_result_chars: r.count(
                field(extract, "maxToolResultChars"),
                "extractMemories.maxToolResultChars",
                d.extract_memories.max_tool_result_chars,
            ),
            max_assistant_chars: r.count(
                field(extract, "maxAssistantChars"),
                "extractMemories.maxAssistantChars",
                d.extract_memories.max_assistant_chars,
            ),
            session_persistence: r.persistence(
                field(extract, "sessionPersistence"),
                "extractMemories.sessionPersistence",
            ),
        },
        experience: ExperienceConfig {
            enabled: r.boolean(
                field(experience, "enabled"),
                "experience.enabled",
                d.experience.enabled,
            ),
            model: r.model(field(experience, "model"), "experience.model"),
            think_level: r.string(
                field(experience, "thinkLevel"),
                "experience.thinkLevel",
                &d.experience.think_level,
            ),
            session_persistence: r.persistence(
                field(experience, "sessionPersistence"),
                "experience.sessionPersistence",
            ),
        },
        language: r.language(get("language")),
    };
    (config, r.problems)
}

fn field<'a>(obj: Option<&'a Map<String, Value>>, key: &str) -> Option<&'a Value> {
    obj.and_then(|o| o.get(key))
}

/// Lenient typed reads; `null` counts as absent (VECTORS O7: `"dream": null` → defaults).
struct Reader {
    problems: Vec<String>,
}

impl Reader {
    fn wrong(&mut self, key: &str, expected: &str, fallback: impl fmt::Display) {
        self.problems
            .push(format!("{key} must be {expected}; using {fallback}"));
    }

    fn object<'a>(&mut self, v: Option<&'a Value>, key: &str) -> Option<&'a Map<String, Value>> {
        match v {
            None | Some(Value::Null) => None,
            Some(Value::Object(o)) => Some(o),
            Some(_) => {
                self.wrong(key, "an object", "the defaults");
                None
            }
        }
    }

    fn count(&mut self, v: Option<&Value>, key: &str, default: usize) -> usize {
        match v {
            None | Some(Value::Null) => default,
            Some(Value::Number(n)) => match n.as_u64() {
                Some(u) => usize::try_from(u).unwrap_or(usize::MAX),
                None => match n.as_f64() {
                    Some(f) if f >= 0.0 && f.fract() == 0.0 => f as usize,
                    _ => {
                        self.wrong(key, "a non-negative integer", default);
                        default
                    }
                },
            },
            Some(_) => {
                self.wrong(key, "a non-negative integer", default);
                default
            }
        }
    }

    fn number(&mut self, v: Option<&Value>, key: &str, default: f64) -> f64 {
        match v {
            None | Some(Value::Null) => default,
            Some(Value::Number(n)) => match n.as_f64() {
                Some(f) if f >= 0.0 => f,
                _ => {
                    self.wrong(key, "a non-negative number", default);
                    default
                }
            },
            Some(_) => {
                self.wrong(key, "a non-negative number", default);
                default
            }
        }
    }

    fn boolean(&mut self, v: Option<&Value>, key: &str, default: bool) -> bool {
        match v {
            None | Some(Value::Null) => default,
            Some(Value::Bool(b)) => *b,
            Some(_) => {
                self.wrong(key, "true or false", default);
                default
            }
        }
    }

    fn string(&mut self, v: Option<&Value>, key: &str, default: &str) -> String {
        match v {
            None | Some(Value::Null) => default.to_owned(),
            Some(Value::String(s)) => s.clone(),
            Some(_) => {
                self.wrong(key, "a string", format_args!("{default:?}"));
                default.to_owned()
            }
        }
    }

    fn model(&mut self, v: Option<&Value>, key: &str) -> Option<String> {
        match v {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) if s.trim().is_empty() => None,
            Some(Value::String(s)) => Some(s.trim().to_owned()),
            Some(_) => {
                self.wrong(key, "a \"provider/model-id\" string", "no model");
                None
            }
        }
    }

    fn selector(&mut self, v: Option<&Value>) -> Selector {
        let key = "autoSurfacing.selector";
        let parsed = match v {
            None | Some(Value::Null) => return Selector::Auto,
            Some(Value::String(s)) => match s.as_str() {
                "auto" => Some(Selector::Auto),
                "lexical" => Some(Selector::Lexical),
                "model" => Some(Selector::Model),
                "hybrid" => Some(Selector::Hybrid),
                _ => None,
            },
            Some(_) => None,
        };
        parsed.unwrap_or_else(|| {
            self.wrong(
                key,
                "\"auto\", \"lexical\", \"model\" or \"hybrid\"",
                "the automatic choice",
            );
            Selector::Auto
        })
    }

    fn language(&mut self, v: Option<&Value>) -> Option<Language> {
        match v {
            None | Some(Value::Null) => None,
            Some(v) => {
                let language = v.as_str().and_then(Language::from_setting);
                if language.is_none() {
                    self.wrong("language", "\"en\" or \"zh-CN\"", "the locale's language");
                }
                language
            }
        }
    }

    fn persistence(&mut self, v: Option<&Value>, key: &str) -> Option<SessionPersistence> {
        let obj = self.object(v, key)?;
        Some(SessionPersistence {
            enabled: self.boolean(obj.get("enabled"), &format!("{key}.enabled"), false),
            session_dir: match obj.get("sessionDir") {
                None | Some(Value::Null) => None,
                Some(Value::String(s)) => Some(s.clone()),
                Some(_) => {
                    self.wrong(&format!("{key}.sessionDir"), "a string", "the default");
                    None
                }
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, text: &str) {
        std::fs::create_dir_all(dir).unwrap();
        std::fs::write(dir.join(CONFIG_FILE), text).unwrap();
    }

    /// PM-72: every default of pi-memory 2.5's `memory.json`, written out as the spec states
    /// it (the constants in memory-index are not used here on purpose: this table is the
    /// contract they must meet).
    #[test]
    fn pm72_defaults() {
        let (cfg, problems) = config_from_value(&serde_json::json!({}));
        assert!(problems.is_empty());
        assert_eq!(cfg, Config::default());
        let Config {
            memory_dir,
            mem_index_max_lines,
            mem_index_max_bytes,
            mem_index_inject_max_lines,
            mem_index_inject_max_bytes,
            lock,
            defaults,
            dream,
            session_search,
            auto_surfacing,
            extract_memories,
            experience,
            language,
        } = cfg.clone();
        assert_eq!(language, None, "not a pi-memory key: the locale decides");
        assert_eq!(memory_dir, "~/.pi/memory");
        assert_eq!(mem_index_max_lines, 200);
        assert_eq!(mem_index_max_bytes, 25600);
        assert_eq!(mem_index_inject_max_lines, 50);
        assert_eq!(mem_index_inject_max_bytes, 16384);
        assert_eq!(
            lock,
            LockConfig {
                timeout_ms: 5000,
                snapshot_keep: 5,
                reclaim_dead: true,
            }
        );
        assert_eq!(defaults, Defaults::default());
        assert_eq!(defaults.model, None);
        assert_eq!(defaults.session_persistence, SessionPersistence::default());
        assert!(!defaults.session_persistence.enabled);
        assert_eq!(
            dream,
            DreamConfig {
                model: None,
                nudge_after_sessions: 5,
                nudge_after_hours: 24.0,
                think_level: "high".into(),
                session_persistence: None,
            }
        );
        assert_eq!(
            session_search,
            SessionSearchConfig {
                max_sessions: 10,
                max_matches: 5,
            }
        );
        assert_eq!(
            auto_surfacing,
            AutoSurfacingConfig {
                enabled: true,
                model: None,
                think_level: "off".into(),
                max_files: 3,
                max_entry_bytes: 3072,
                max_injection_bytes: 10240,
                selector: Selector::Auto,
                session_persistence: None,
            }
        );
        assert_eq!(
            extract_memories,
            ExtractConfig {
                enabled: false,
                model: None,
                think_level: "high".into(),
                max_context_tokens: 2000,
                max_tool_result_chars: 500,
                max_assistant_chars: 2000,
                session_persistence: None,
            }
        );
        assert_eq!(cfg.task_model(Task::Dream), None);
        assert_eq!(cfg.effective_selector(), Selector::Lexical);
        assert_eq!(cfg.tasks_needing_models(), vec![Task::Dream]);
        // Beyond pi-memory: the run log records by default, summaries need a model.
        assert_eq!(
            experience,
            ExperienceConfig {
                enabled: true,
                model: None,
                think_level: "off".into(),
                session_persistence: None,
            }
        );
    }

    #[test]
    fn language_comes_from_the_setting_then_lc_all_then_lang() {
        use Language::{En, ZhCn};
        // (setting, LC_ALL, LANG) -> language
        type Row = (
            Option<Language>,
            Option<&'static str>,
            Option<&'static str>,
            Language,
        );
        let table: [Row; 9] = [
            (None, None, None, En),
            (None, None, Some("zh_CN.UTF-8"), ZhCn),
            (None, Some("en_US.UTF-8"), Some("zh_CN.UTF-8"), En),
            (None, Some(""), Some("zh_TW.UTF-8"), ZhCn),
            (None, Some("C"), Some("zh_CN"), En),
            (Some(En), Some("zh_CN.UTF-8"), None, En),
            (Some(ZhCn), Some("en_GB"), Some("en_GB"), ZhCn),
            (None, Some("  "), Some(""), En),
            (None, Some("ZH_SG"), None, ZhCn),
        ];
        for (setting, lc_all, lang, want) in table {
            assert_eq!(
                Language::choose(setting, lc_all, lang),
                want,
                "{setting:?} {lc_all:?} {lang:?}"
            );
        }
        for (text, want) in [
            ("en", Some(En)),
            ("zh-CN", Some(ZhCn)),
            ("zh_cn", Some(ZhCn)),
            (" EN ", Some(En)),
            ("zh", None),
            ("fr", None),
            ("", None),
        ] {
            assert_eq!(Language::from_setting(text), want, "{text:?}");
        }
    }

    #[test]
    fn language_key_is_read_and_a_bad_value_is_a_problem() {
        let (cfg, problems) = config_from_value(&serde_json::json!({"language": "zh-CN"}));
        assert!(problems.is_empty(), "{problems:?}");
        assert_eq!(cfg.language, Some(Language::ZhCn));
        let (cfg, problems) = config_from_value(&serde_json::json!({}));
        assert!(problems.is_empty());
        assert_eq!(cfg.language, None);
        for bad in [serde_json::json!("klingon"), serde_json::json!(7)] {
            let (cfg, problems) = config_from_value(&serde_json::json!({ "language": bad }));
            assert_eq!(cfg.language, None);
            assert_eq!(
                problems,
                ["language must be \"en\" or \"zh-CN\"; using the locale's language"]
            );
        }
    }

    #[test]
    fn experience_reads_its_own_model_and_falls_back_to_the_default() {
        let (cfg, problems) = config_from_value(&serde_json::json!({
            "defaults": {"model": "prov/base"},
            "experience": {"enabled": false, "thinkLevel": "low"},
        }));
        assert!(problems.is_empty(), "{problems:?}");
        assert!(!cfg.experience.enabled);
        assert_eq!(cfg.task_model(Task::Experience), Some("prov/base"));
        let (cfg, problems) = config_from_value(
            &serde_json::json!({"experience": {"model": "p/own", "enabled": "yes"}}),
        );
        assert_eq!(cfg.task_model(Task::Experience), Some("p/own"));
        assert_eq!(
            problems,
            ["experience.enabled must be true or false; using true"]
        );
        assert_eq!(Task::Experience.key(), "experience");
        // never validated at start: /memory's module line is pi-memory's
        assert!(!cfg.tasks_needing_models().contains(&Task::Experience));
    }

    #[test]
    fn o8_project_layer_only_when_trusted_and_deep_merged() {
        let tmp = tempfile::tempdir().unwrap();
        let agent = tmp.path().join("agent");
        let cwd = tmp.path().join("proj");
        write(
            &agent,
            r#"{"memIndexMaxLines": 100, "lock": {"timeoutMs": 100, "snapshotKeep": 9}, "enabled": false, "maxTopicBytes": 5}"#,
        );
        write(
            &cwd.join(".pi"),
            r#"{"memIndexMaxLines": 50, "lock": {"timeoutMs": 200}}"#,
        );
        let untrusted = load_config(&agent, &cwd, false);
        assert_eq!(untrusted.config.mem_index_max_lines, 100);
        assert!(untrusted.problems.is_empty(), "unknown keys are ignored");
        let trusted = load_config(&agent, &cwd, true);
        assert_eq!(trusted.config.mem_index_max_lines, 50);
        assert_eq!(trusted.config.lock.timeout_ms, 200);
        assert_eq!(
            trusted.config.lock.snapshot_keep, 9,
            "nested objects deep-merge"
        );
        assert_eq!(trusted.sources.len(), 2);
    }

    #[test]
    fn o9_malformed_json_is_reported_and_skipped() {
        let tmp = tempfile::tempdir().unwrap();
        write(tmp.path(), "{ not json");
        let loaded = load_config(tmp.path(), tmp.path(), false);
        assert_eq!(loaded.config, Config::default());
        assert_eq!(loaded.problems.len(), 1);
        assert!(loaded.problems[0].message.starts_with("malformed JSON"));
        assert!(loaded.problems[0].to_string().contains("memory.json"));
        assert_eq!(loaded.fatal(), None, "VECTORS O9: defaults, not a failure");
    }

    #[test]
    fn pm74_an_unreadable_file_is_fatal() {
        let tmp = tempfile::tempdir().unwrap();
        // A directory where the file should be: it exists, and reading it fails.
        std::fs::create_dir_all(tmp.path().join(CONFIG_FILE)).unwrap();
        let loaded = load_config(tmp.path(), tmp.path(), false);
        let fatal = loaded.fatal().expect("an unreadable memory.json is fatal");
        assert!(
            fatal.message.starts_with("cannot read: "),
            "{}",
            fatal.message
        );
        assert!(fatal.to_string().contains("memory.json"));
    }

    #[test]
    fn o7_null_task_and_wrong_types_fall_back_with_a_problem() {
        let (cfg, problems) = config_from_value(&serde_json::json!({
            "dream": null,
            "memIndexMaxLines": "many",
            "autoSurfacing": {"maxFiles": -1, "selector": "psychic", "enabled": "yes"},
            "defaults": {"model": "  "},
        }));
        assert_eq!(cfg.task_model(Task::Dream), None);
        assert_eq!(cfg.mem_index_max_lines, 200);
        assert_eq!(cfg.auto_surfacing.max_files, 3);
        assert!(cfg.auto_surfacing.enabled);
        assert_eq!(cfg.auto_surfacing.selector, Selector::Auto);
        assert_eq!(problems.len(), 4, "{problems:?}");
        assert!(
            problems
                .iter()
                .any(|p| p.starts_with("memIndexMaxLines must be"))
        );
    }

    #[test]
    fn models_select_the_hybrid_default_and_needed_tasks() {
        let (cfg, _) = config_from_value(&serde_json::json!({
            "defaults": {"model": "prov/base"},
            "extractMemories": {"enabled": true, "model": "prov/small"},
        }));
        assert_eq!(cfg.task_model(Task::Dream), Some("prov/base"));
        assert_eq!(cfg.task_model(Task::ExtractMemories), Some("prov/small"));
        assert_eq!(cfg.effective_selector(), Selector::Hybrid);
        assert_eq!(
            cfg.tasks_needing_models(),
            vec![Task::Dream, Task::ExtractMemories, Task::AutoSurfacing]
        );
    }
}
