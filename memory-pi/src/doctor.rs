//! `/memory doctor` and `pimem doctor [--json]` (PA-26, PA-52): read-only checks with stable
//! ids and the states `ok`, `warning`, `failure`, `unchecked`, each with a one-line reason and,
//! where there is one, the fix.
//!
//! The checks never take a lock, write, create probe files, call a model or fix anything:
//! they read configuration, the switch file, directory metadata, `MEMORY.md`, the entry files'
//! frontmatter (through the store's listing) and `.lock` (without acting on it). They describe
//! one point in time.
//!
//! | id | what |
//! |---|---|
//! | `config.agent`, `config.project` | `memory.json` of the agent directory and of the project (per file) |
//! | `switch` | `auto-memory.json`: on, off or paused (corrupt) |
//! | `root.reachable` | the memory root and the project directory can be used (PA-49 categories) |
//! | `root.private` | directories 0700, files 0600 |
//! | `project.identity` | kind, key, directory and how the identity was derived |
//! | `index.parse` | `MEMORY.md` is UTF-8 and how its lines parse |
//! | `index.agreement` | unlisted entries, dangling lines, files that are not entries |
//! | `index.capacity` | the write capacity, warning at 90 % |
//! | `index.window` | the injection window, warning at 90 %, naming the entries outside it |
//! | `lock` | `.lock`: free, live holder, dead holder, other host, unreadable |
//! | `models` | configured models resolvable (only pi can tell: `unchecked` in the CLI) |
//! | `protocol` | extension ↔ binary protocol and versions (`unchecked` in the CLI) |
//! | `layout.legacy` | a pre-2.5 Windows nested layout, or orphaned directories (renamed remote, remote added later) |
//! | `snapshots` | number and size of `.backups/` snapshots |
//! | `scope.duplicates` | a memory name in more than one scope (project, team, user; issue 16) |
//! | `git.merge` | conflict markers in memory files, a stopped `pimem sync`, index lines that disagree with their entry files after a merge (project, user and team directories; `memory_pi::gitmem`) |
//!
//! Decision: 90 % means "at or above 90 %" (VECTORS §Z 15 settles it the same way for
//! pi-auto-memory's index warning); exactly at a limit is a warning, not "over".

use std::collections::{BTreeSet, HashSet};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use memory_core::messages::doctor as msg;
use memory_core::{
    Config, Language, LockState, Project, Switch, SwitchState, check_dir_usable, load_config,
    open_project, ui_language,
};
use memory_index::{index_capacity, injection_window, is_entry_candidate, parse_index};
use memory_keys::{Platform, ProjectKind, Source, dir_name, identify_with};
use serde_json::{Value, json};

/// The state of one check.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    /// Nothing wrong.
    Ok,
    /// Works, but deserves attention.
    Warning,
    /// Broken: memory (or part of it) does not work.
    Failure,
    /// Could not be checked here.
    Unchecked,
}

impl State {
    /// `ok`, `warning`, `failure`, `unchecked`.
    pub fn as_str(self) -> &'static str {
        match self {
            State::Ok => "ok",
            State::Warning => "warning",
            State::Failure => "failure",
            State::Unchecked => "unchecked",
        }
    }
}

/// One check's result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Check {
    /// The stable id (`index.window`).
    pub id: &'static str,
    /// Its state.
    pub state: State,
    /// One line: what was found.
    pub reason: String,
    /// How to fix it, when there is something to do.
    pub fix: Option<String>,
}

impl Check {
    fn new(id: &'static str, state: State, reason: impl Into<String>) -> Self {
        Check {
            id,
            state,
            reason: reason.into(),
            fix: None,
        }
    }

    fn fix(mut self, fix: impl Into<String>) -> Self {
        self.fix = Some(fix.into());
        self
    }
}

/// What the models check knows.
#[derive(Debug, Clone)]
pub enum Models {
    /// pi answered: each configured model spec and whether it is usable.
    Resolved(Vec<(String, bool)>),
    /// Nobody could ask (the CLI): the reason.
    Unchecked(String),
}

/// What the protocol check knows.
#[derive(Debug, Clone)]
pub enum Protocol {
    /// The extension's `initialize`: its protocol and package version.
    Extension {
        /// The extension's protocol number.
        protocol: u32,
        /// Its package version.
        version: String,
    },
    /// No extension at hand (the CLI): the reason.
    Unchecked(String),
}

/// Everything the doctor looks at.
#[derive(Debug, Clone)]
pub struct Input {
    /// The working directory whose project is meant.
    pub cwd: PathBuf,
    /// pi's agent directory (`None`: unknown, no `HOME`).
    pub agent_dir: Option<PathBuf>,
    /// Whether `<cwd>/.pi/memory.json` is read.
    pub trusted: bool,
    /// `--memory-dir`, overriding `memoryDir`.
    pub memory_dir: Option<String>,
    /// The models check.
    pub models: Models,
    /// The protocol check.
    pub protocol: Protocol,
    /// The binary's protocol and version.
    pub binary: (u32, String),
    /// Whose naming rules apply (the current platform; tests pass Windows).
    pub platform: Platform,
}

/// The doctor's findings, in check order.
#[derive(Debug, Clone)]
pub struct Report {
    /// Every check.
    pub checks: Vec<Check>,
    /// The language of the reasons and fixes.
    pub language: Language,
}

impl Report {
    /// Whether any check failed (the CLI's exit status is non-zero then).
    pub fn failed(&self) -> bool {
        self.checks.iter().any(|c| c.state == State::Failure)
    }

    /// The check with this id.
    pub fn get(&self, id: &str) -> Option<&Check> {
        self.checks.iter().find(|c| c.id == id)
    }

    /// One line per check (`ok       index.window  …`), the fix indented below.
    pub fn text(&self) -> String {
        let width = self.checks.iter().map(|c| c.id.len()).max().unwrap_or(0);
        let mut out = String::new();
        let counts = |s: State| self.checks.iter().filter(|c| c.state == s).count();
        let l = self.language;
        out.push_str(&msg::summary(
            l,
            counts(State::Ok),
            counts(State::Warning),
            counts(State::Failure),
            counts(State::Unchecked),
        ));
        for c in &self.checks {
            out.push('\n');
            out.push_str(&format!(
                "{:<9} {:<width$}  {}",
                c.state.as_str(),
                c.id,
                c.reason
            ));
            if let Some(fix) = &c.fix {
                out.push_str(&format!(
                    "\n{:<9} {:<width$}  {} {fix}",
                    "",
                    "",
                    msg::fix(self.language)
                ));
            }
        }
        out
    }

    /// `{"failed": bool, "checks": [{"id", "state", "reason", "fix"}]}`.
    pub fn json(&self) -> Value {
        json!({
            "failed": self.failed(),
            "checks": self.checks.iter().map(|c| json!({
                "id": c.id, "state": c.state.as_str(), "reason": c.reason, "fix": c.fix,
            })).collect::<Vec<_>>(),
        })
    }
}

/// Runs every check.
pub fn run(input: &Input) -> Report {
    let l = language(input);
    let mut checks = Vec::new();
    let config = config_checks(input, &mut checks, l);
    checks.push(switch_check(input, l));
    let opened = open_project(
        &config,
        &input.cwd,
        input.memory_dir.as_deref(),
        memory_core::home_dir().as_deref(),
    );
    let project = match opened {
        Ok(p) => Some(p),
        Err(e) => {
            checks.push(Check::new(
                "root.reachable",
                State::Unchecked,
                msg::no_project(l),
            ));
            checks.push(
                Check::new(
                    "project.identity",
                    State::Failure,
                    msg::identity_failed(l, &e),
                )
                .fix(msg::identity_fix(l)),
            );
            None
        }
    };
    if let Some(project) = &project {
        checks.push(reachable_check(project, l));
        checks.push(privacy_check(project, l));
        checks.push(identity_check(input, project, l));
        index_checks(project, &config, &mut checks, l);
        checks.push(lock_check(project, l));
    }
    checks.push(models_check(input, &config, l));
    checks.push(protocol_check(input, l));
    if let Some(project) = &project {
        checks.push(layout_check(input, project, l));
        checks.push(snapshot_check(project, &config, l));
        let team = repo_root(&input.cwd).map(|r| r.join(".pi").join("memory"));
        let mut dirs = vec![
            ("project", project.dir.path.clone()),
            ("user", project.memory_root.join("user")),
        ];
        dirs.extend(team.map(|t| ("team", t)));
        checks.push(crate::gitmem::doctor_check(&dirs, &project.memory_root));
    }
    if let Some(project) = project {
        checks.push(scope_duplicates_check(project, &input.cwd, l));
    }
    Report {
        checks,
        language: l,
    }
}

/// The language of the report's texts: `memory.json`'s `language`, else the locale
/// (`memory_core::ui_language`). Check ids and states stay English (PA-03).
fn language(input: &Input) -> Language {
    let config = match &input.agent_dir {
        Some(dir) => load_config(dir, &input.cwd, input.trusted).config,
        None => Config::default(),
    };
    ui_language(&config)
}

fn config_checks(input: &Input, checks: &mut Vec<Check>, l: Language) -> Config {
    let Some(agent_dir) = &input.agent_dir else {
        checks.push(
            Check::new("config.agent", State::Failure, msg::no_agent_dir(l))
                .fix(msg::no_agent_dir_fix(l)),
        );
        checks.push(Check::new(
            "config.project",
            State::Unchecked,
            msg::no_agent_dir(l),
        ));
        return Config::default();
    };
    let loaded = load_config(agent_dir, &input.cwd, input.trusted);
    let agent_file = agent_dir.join(memory_core::config::CONFIG_FILE);
    let project_file = input.cwd.join(".pi").join(memory_core::config::CONFIG_FILE);
    for (id, file, read) in [
        ("config.agent", &agent_file, true),
        ("config.project", &project_file, input.trusted),
    ] {
        if !read {
            checks.push(Check::new(
                id,
                State::Unchecked,
                msg::config_untrusted(l, file),
            ));
            continue;
        }
        let problems: Vec<_> = loaded.problems.iter().filter(|p| &p.path == file).collect();
        let check = if let Some(fatal) = problems.iter().find(|p| p.fatal) {
            Check::new(id, State::Failure, msg::config_fatal(l, &fatal.to_string()))
                .fix(msg::config_fix(l, file))
        } else if !problems.is_empty() {
            let text: Vec<String> = problems.iter().map(|p| p.message.clone()).collect();
            Check::new(id, State::Warning, msg::config_problems(l, file, &text))
                .fix(msg::config_fix(l, file))
        } else if loaded.sources.contains(file) {
            Check::new(id, State::Ok, msg::config_ok(l, file))
        } else {
            Check::new(id, State::Ok, msg::config_missing(l, file))
        };
        checks.push(check);
    }
    loaded.config
}

fn switch_check(input: &Input, l: Language) -> Check {
    let Some(agent_dir) = &input.agent_dir else {
        return Check::new("switch", State::Unchecked, msg::no_agent_dir(l));
    };
    let switch = Switch::new(agent_dir, std::time::Duration::ZERO);
    match switch.state() {
        SwitchState::On { file } => {
            Check::new("switch", State::Ok, msg::switch_on(l, &switch.path(), file))
        }
        SwitchState::Off => {
            Check::new("switch", State::Warning, msg::switch_off(l, &switch.path()))
                .fix(memory_core::messages::turn_on_hint(l))
        }
        SwitchState::Paused(p) => Check::new(
            "switch",
            State::Failure,
            memory_core::messages::switch_problem_in(l, &p),
        )
        .fix(msg::switch_paused_fix(l, &switch.path())),
    }
}

fn reachable_check(project: &Project, l: Language) -> Check {
    for dir in [project.memory_root.as_path(), project.dir.path.as_path()] {
        if let Err(problem) = check_dir_usable(dir) {
            return Check::new("root.reachable", State::Failure, problem.to_string())
                .fix(msg::reachable_fix(l, dir));
        }
    }
    if !project.memory_root.exists() {
        return Check::new(
            "root.reachable",
            State::Ok,
            msg::root_not_created(l, &project.memory_root),
        );
    }
    Check::new(
        "root.reachable",
        State::Ok,
        msg::root_ok(l, &project.memory_root, project.dir.path.exists()),
    )
}

fn privacy_check(project: &Project, l: Language) -> Check {
    let mut loose: Vec<String> = Vec::new();
    let mut visit = |path: &Path, want_dir: bool| {
        if let Ok(m) = std::fs::symlink_metadata(path) {
            let mode = m.permissions().mode() & 0o777;
            let open_bits = mode & 0o077;
            if open_bits != 0 && (m.is_dir() == want_dir) {
                loose.push(format!("{} ({:o})", path.display(), mode));
            }
        }
    };
    visit(&project.memory_root, true);
    visit(&project.dir.path, true);
    if let Ok(rd) = std::fs::read_dir(&project.dir.path) {
        for e in rd.flatten() {
            let p = e.path();
            match e.file_type() {
                Ok(t) if t.is_file() => visit(&p, false),
                Ok(t) if t.is_dir() => visit(&p, true),
                _ => {}
            }
        }
    }
    if !project.memory_root.exists() {
        return Check::new(
            "root.private",
            State::Unchecked,
            msg::root_not_created(l, &project.memory_root),
        );
    }
    if loose.is_empty() {
        Check::new("root.private", State::Ok, msg::private_ok(l))
    } else {
        Check::new(
            "root.private",
            State::Warning,
            msg::private_loose(l, &loose),
        )
        .fix(msg::private_fix(l, &project.memory_root))
    }
}

fn identity_check(input: &Input, project: &Project, l: Language) -> Check {
    let found = identify_with(&input.cwd, &memory_keys::GitEnv::from_process());
    let how = match (&project.dir.kind, &found.source) {
        (ProjectKind::Git, Source::Native) => msg::derived_git(l, true, None),
        (ProjectKind::Git, Source::Git { reason }) => msg::derived_git(l, false, Some(reason)),
        (ProjectKind::Local, source) => {
            let via_git = match source {
                Source::Native => None,
                Source::Git { reason } => Some(reason.as_str()),
            };
            let at_cwd = Path::new(&project.dir.key) == input.cwd;
            msg::derived_local(l, at_cwd, via_git)
        }
    };
    Check::new(
        "project.identity",
        State::Ok,
        msg::identity(
            l,
            project.dir.kind.as_str(),
            &project.dir.key,
            &project.dir.path,
            &how,
        ),
    )
}

fn index_checks(project: &Project, cfg: &Config, checks: &mut Vec<Check>, l: Language) {
    let store = &project.store;
    let index_path = project.dir.path.join(memory_core::INDEX_FILE);
    let raw_bytes = match std::fs::read(&index_path) {
        Ok(b) => Some(b),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => {
            checks.push(Check::new(
                "index.parse",
                State::Failure,
                msg::index_unreadable(l, &index_path, &e),
            ));
            return;
        }
    };
    let raw = match raw_bytes {
        None => {
            checks.push(Check::new("index.parse", State::Ok, msg::index_missing(l)));
            String::new()
        }
        Some(bytes) => match String::from_utf8(bytes) {
            Ok(text) => {
                let parsed = parse_index(&text);
                checks.push(Check::new(
                    "index.parse",
                    State::Ok,
                    msg::index_parsed(l, parsed.entries.len(), parsed.unrecognized),
                ));
                text
            }
            Err(e) => {
                checks.push(
                    Check::new(
                        "index.parse",
                        State::Failure,
                        msg::index_not_utf8(l, e.utf8_error().valid_up_to()),
                    )
                    .fix(msg::index_rebuild_fix(l)),
                );
                String::from_utf8_lossy(e.as_bytes()).into_owned()
            }
        },
    };
    let parsed = parse_index(&raw);
    let entries = match store.list() {
        Ok(e) => e,
        Err(e) => {
            checks.push(Check::new("index.agreement", State::Failure, e.to_string()));
            return;
        }
    };
    let files: HashSet<&str> = entries.iter().map(|e| e.file.as_str()).collect();
    let listed: HashSet<&str> = parsed
        .entries
        .iter()
        .map(|l| l.line.file.as_str())
        .collect();
    let unlisted: Vec<String> = entries
        .iter()
        .filter(|e| !listed.contains(e.file.as_str()))
        .map(|e| e.file.clone())
        .collect();
    let dangling: Vec<String> = parsed
        .entries
        .iter()
        .filter(|l| !files.contains(l.line.file.as_str()))
        .map(|l| l.line.file.clone())
        .collect();
    let mut not_entries: BTreeSet<String> = BTreeSet::new();
    if let Ok(rd) = std::fs::read_dir(&project.dir.path) {
        for e in rd.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let regular = e.file_type().is_ok_and(|t| t.is_file());
            if regular && is_entry_candidate(&name) && !files.contains(name.as_str()) {
                not_entries.insert(name);
            }
        }
    }
    let agreement = if unlisted.is_empty() && dangling.is_empty() && not_entries.is_empty() {
        Check::new(
            "index.agreement",
            State::Ok,
            msg::agreement_ok(l, entries.len()),
        )
    } else {
        let not_entries: Vec<String> = not_entries.into_iter().collect();
        Check::new(
            "index.agreement",
            State::Warning,
            msg::agreement(l, &unlisted, &dangling, &not_entries),
        )
        .fix(msg::index_rebuild_fix(l))
    };
    checks.push(agreement);

    let cap = index_capacity(&raw);
    let (lines_max, bytes_max) = (cfg.mem_index_max_lines, cfg.mem_index_max_bytes);
    // Decision (VECTORS §Z 15): "90 % of either limit" is at or above 90 %; exactly at a limit
    // warns, it is not "over".
    let near = |v: usize, max: usize| max > 0 && v * 10 >= max * 9;
    let capacity = if !cap.fits(lines_max, bytes_max) {
        Check::new(
            "index.capacity",
            State::Warning,
            msg::capacity_over(l, cap.lines, lines_max, cap.bytes, bytes_max),
        )
        .fix(msg::capacity_fix(l))
    } else if near(cap.lines, lines_max) || near(cap.bytes, bytes_max) {
        Check::new(
            "index.capacity",
            State::Warning,
            msg::capacity_near(l, cap.lines, lines_max, cap.bytes, bytes_max),
        )
        .fix(msg::capacity_fix(l))
    } else {
        Check::new(
            "index.capacity",
            State::Ok,
            msg::capacity_ok(l, cap.lines, lines_max, cap.bytes, bytes_max),
        )
    };
    checks.push(capacity);

    let (win_lines, win_bytes) = (
        cfg.mem_index_inject_max_lines,
        cfg.mem_index_inject_max_bytes,
    );
    let window = injection_window(&raw, win_lines, win_bytes);
    let normalized = raw.replace("\r\n", "\n").replace('\r', "\n");
    let mut all: Vec<&str> = if normalized.is_empty() {
        Vec::new()
    } else {
        normalized.split('\n').collect()
    };
    while all.last().is_some_and(|l| l.trim().is_empty()) {
        all.pop();
    }
    let first_in = all.len().saturating_sub(window.lines);
    let outside: Vec<String> = parsed
        .entries
        .iter()
        .filter(|l| l.line_no < first_in)
        .map(|l| l.line.name.clone())
        .collect();
    let window_check = if !outside.is_empty() || window.truncated {
        Check::new(
            "index.window",
            State::Warning,
            msg::window_outside(
                l,
                window.lines,
                win_lines,
                window.bytes,
                win_bytes,
                &outside,
            ),
        )
        .fix(msg::window_fix(l))
    } else if near(window.lines, win_lines) || near(window.bytes, win_bytes) {
        Check::new(
            "index.window",
            State::Warning,
            msg::window_near(l, window.lines, win_lines, window.bytes, win_bytes),
        )
        .fix(msg::window_fix(l))
    } else {
        Check::new(
            "index.window",
            State::Ok,
            msg::window_ok(l, window.lines, win_lines, window.bytes, win_bytes),
        )
    };
    checks.push(window_check);
}

fn lock_check(project: &Project, l: Language) -> Check {
    match project.store.lock_state() {
        Ok(LockState::Free) => Check::new("lock", State::Ok, msg::lock_free(l)),
        Ok(LockState::Held(h)) => {
            let here = h.hostname == memory_core::lock_info::hostname();
            if !here {
                Check::new(
                    "lock",
                    State::Warning,
                    msg::lock_other_host(l, &h.describe()),
                )
                .fix(msg::lock_unlock_fix(l))
            } else if memory_core::lock_info::pid_alive(h.pid) {
                Check::new("lock", State::Ok, msg::lock_live(l, &h.describe()))
            } else {
                Check::new("lock", State::Warning, msg::lock_dead(l, &h.describe()))
                    .fix(msg::lock_unlock_fix(l))
            }
        }
        Ok(LockState::Unreadable { empty }) => {
            Check::new("lock", State::Failure, msg::lock_unreadable(l, empty))
                .fix(msg::lock_unlock_fix(l))
        }
        Err(e) => Check::new("lock", State::Failure, e.to_string()),
    }
}

fn models_check(input: &Input, cfg: &Config, l: Language) -> Check {
    let tasks = cfg.tasks_needing_models();
    let configured: Vec<(&str, &str)> = tasks
        .iter()
        .filter_map(|t| cfg.task_model(*t).map(|m| (t.key(), m)))
        .collect();
    if configured.is_empty() {
        return Check::new("models", State::Ok, msg::models_none(l));
    }
    match &input.models {
        Models::Unchecked(reason) => Check::new("models", State::Unchecked, reason.clone()),
        Models::Resolved(answers) => {
            let bad: Vec<String> = configured
                .iter()
                .filter(|(_, m)| answers.iter().any(|(s, ok)| s == m && !ok))
                .map(|(t, m)| format!("{t}: {m}"))
                .collect();
            if bad.is_empty() {
                let all: Vec<String> = configured
                    .iter()
                    .map(|(t, m)| format!("{t}: {m}"))
                    .collect();
                Check::new("models", State::Ok, msg::models_ok(l, &all))
            } else {
                Check::new("models", State::Failure, msg::models_bad(l, &bad))
                    .fix(msg::models_fix(l))
            }
        }
    }
}

fn protocol_check(input: &Input, l: Language) -> Check {
    let (protocol, version) = &input.binary;
    match &input.protocol {
        Protocol::Unchecked(reason) => Check::new("protocol", State::Unchecked, reason.clone()),
        Protocol::Extension {
            protocol: p,
            version: v,
        } if p != protocol => Check::new(
            "protocol",
            State::Failure,
            msg::protocol_mismatch(l, *p, v, *protocol, version),
        )
        .fix(msg::protocol_fix(l)),
        Protocol::Extension { version: v, .. } if v != version => Check::new(
            "protocol",
            State::Warning,
            msg::version_mismatch(l, *protocol, v, version),
        )
        .fix(msg::protocol_fix(l)),
        Protocol::Extension { .. } => Check::new(
            "protocol",
            State::Ok,
            msg::protocol_ok(l, *protocol, version),
        ),
    }
}

/// pre-2.5 Windows nested layout, and directories another identity of this project used.
fn layout_check(input: &Input, project: &Project, l: Language) -> Check {
    let root = &project.memory_root;
    let mut found: Vec<String> = Vec::new();
    if input.platform == Platform::Windows && project.dir.kind == ProjectKind::Local {
        // Before 2.5, `\` was not a separator on Windows: `C:\a\b` named `C_3a\a\b`, which
        // Windows then created as nested directories.
        let legacy = dir_name(&project.dir.key, Platform::Posix);
        if legacy.contains('\\') {
            let nested = root.join("local").join(legacy.replace('\\', "/"));
            if nested.is_dir() {
                found.push(msg::legacy_nested(l, &nested));
            }
        }
    }
    if project.dir.kind == ProjectKind::Git {
        // The same repository under another identity: its local/ directory (memories from
        // before a remote existed), or git/ directories of the same repository name (a renamed
        // remote or owner).
        if let Some(top) = repo_root(&input.cwd) {
            let key = top.to_string_lossy();
            let local = root.join("local").join(dir_name(&key, input.platform));
            if has_memories(&local) {
                found.push(msg::orphan_local(l, &local));
            }
        }
        let repo = project
            .dir
            .name
            .rsplit("__")
            .next()
            .unwrap_or("")
            .to_owned();
        if let Ok(rd) = std::fs::read_dir(root.join("git")) {
            let mut others: Vec<PathBuf> = rd
                .flatten()
                .map(|e| e.path())
                .filter(|p| p != &project.dir.path)
                .filter(|p| {
                    p.file_name()
                        .map(|n| n.to_string_lossy().rsplit("__").next() == Some(repo.as_str()))
                        .unwrap_or(false)
                })
                .filter(|p| has_memories(p))
                .collect();
            others.sort();
            for p in others {
                found.push(msg::orphan_git(l, &p));
            }
        }
    }
    if found.is_empty() {
        Check::new("layout.legacy", State::Ok, msg::layout_ok(l))
    } else {
        Check::new(
            "layout.legacy",
            State::Warning,
            msg::layout_found(l, &found),
        )
        .fix(msg::layout_fix(l, &project.dir.path))
    }
}

fn has_memories(dir: &Path) -> bool {
    dir.join(memory_core::INDEX_FILE).is_file()
        || std::fs::read_dir(dir).is_ok_and(|rd| {
            rd.flatten()
                .any(|e| is_entry_candidate(&e.file_name().to_string_lossy()))
        })
}

/// The nearest ancestor of `cwd` holding `.git`.
fn repo_root(cwd: &Path) -> Option<PathBuf> {
    cwd.ancestors()
        .find(|d| d.join(".git").exists())
        .map(Path::to_path_buf)
}

/// A name in several scopes: what a promote interrupted between its two steps leaves.
fn scope_duplicates_check(project: Project, cwd: &Path, l: Language) -> Check {
    const ID: &str = "scope.duplicates";
    let scopes = match memory_core::Scopes::from_project(project, cwd) {
        Ok(s) => s,
        Err(e) => return Check::new(ID, State::Unchecked, msg::scopes_unreadable(l, &e)),
    };
    match scopes.duplicates() {
        Err(e) => Check::new(ID, State::Warning, msg::scopes_unreadable(l, &e)),
        Ok(dups) if dups.is_empty() => {
            let names: Vec<&str> = scopes.available().iter().map(|s| s.as_str()).collect();
            Check::new(ID, State::Ok, msg::scopes_distinct(l, &names.join(", ")))
        }
        Ok(dups) => {
            let list = dups
                .iter()
                .map(|d| {
                    let scopes: Vec<&str> = d.scopes.iter().map(|s| s.as_str()).collect();
                    let same = if d.identical { "; identical" } else { "" };
                    format!("{} ({}{same})", d.name, scopes.join(", "))
                })
                .collect::<Vec<_>>()
                .join(", ");
            Check::new(ID, State::Warning, msg::scope_duplicates(l, &list))
                .fix(msg::scope_duplicates_fix(l))
        }
    }
}

fn snapshot_check(project: &Project, cfg: &Config, l: Language) -> Check {
    let backups = project.dir.path.join(memory_keys::layout::BACKUPS_DIR);
    let Ok(rd) = std::fs::read_dir(&backups) else {
        return Check::new("snapshots", State::Ok, msg::snapshots_none(l));
    };
    let mut count = 0usize;
    let mut migrate = 0usize;
    let mut bytes = 0u64;
    for e in rd.flatten() {
        if !e.file_type().is_ok_and(|t| t.is_dir()) {
            continue;
        }
        if e.file_name().to_string_lossy().starts_with("migrate-") {
            migrate += 1;
        } else {
            count += 1;
        }
        bytes += dir_size(&e.path());
    }
    let state = if count > cfg.lock.snapshot_keep {
        State::Warning
    } else {
        State::Ok
    };
    let check = Check::new(
        "snapshots",
        state,
        msg::snapshots(l, count, migrate, bytes, cfg.lock.snapshot_keep),
    );
    if state == State::Warning {
        check.fix(msg::snapshots_fix(l))
    } else {
        check
    }
}

fn dir_size(dir: &Path) -> u64 {
    let mut total = 0;
    if let Ok(rd) = std::fs::read_dir(dir) {
        for e in rd.flatten() {
            match e.metadata() {
                Ok(m) if m.is_dir() => total += dir_size(&e.path()),
                Ok(m) => total += m.len(),
                Err(_) => {}
            }
        }
    }
    total
}
