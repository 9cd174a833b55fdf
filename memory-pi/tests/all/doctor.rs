#![allow(clippy::unwrap_used)]
//! `memory_pi::doctor` (PA-26, PA-52): one fixture per state of every check, and the CLI's
//! exit status.

use std::fs;
use std::os::unix::fs::PermissionsExt;

use memory_keys::Platform;
use memory_pi::doctor::{Input, Models, Protocol, Report, State, run};
use serde_json::json;

struct Fx {
    sb: testkit::Sandbox,
}

impl Fx {
    fn new() -> Self {
        let sb = testkit::Sandbox::new();
        fs::create_dir_all(sb.agent_dir()).unwrap();
        fs::create_dir_all(sb.project()).unwrap();
        Fx { sb }
    }
    fn root(&self) -> std::path::PathBuf {
        self.sb.path("mem").into_std_path_buf()
    }
    fn input(&self) -> Input {
        Input {
            cwd: self.sb.project().into_std_path_buf(),
            agent_dir: Some(self.sb.agent_dir().into_std_path_buf()),
            trusted: false,
            memory_dir: Some(self.root().display().to_string()),
            models: Models::Unchecked("cli".into()),
            protocol: Protocol::Unchecked("cli".into()),
            binary: (1, "0.1.0".into()),
            platform: Platform::Posix,
        }
    }
    fn run(&self) -> Report {
        run(&self.input())
    }
    /// The project's memory directory.
    fn dir(&self) -> std::path::PathBuf {
        let report = self.run();
        let line = &report.get("project.identity").unwrap().reason;
        let path = line
            .split(" → ")
            .nth(1)
            .unwrap()
            .split("; derived")
            .next()
            .unwrap();
        std::path::PathBuf::from(path)
    }
    fn store(&self) -> memory_core::Store {
        memory_core::Store::new(
            camino::Utf8PathBuf::from_path_buf(self.dir()).unwrap(),
            memory_core::StoreOptions::default(),
        )
    }
    fn add(&self, name: &str) {
        self.store()
            .add(memory_core::AddRequest {
                name: name.into(),
                body: format!("body of {name}"),
                ..Default::default()
            })
            .unwrap();
    }
}

fn state(r: &Report, id: &str) -> State {
    r.get(id)
        .unwrap_or_else(|| panic!("no {id}: {}", r.text()))
        .state
}

fn reason<'a>(r: &'a Report, id: &str) -> &'a str {
    &r.get(id).unwrap().reason
}

#[test]
fn a_fresh_setup_is_all_ok_or_unchecked_and_the_report_is_stable() {
    let fx = Fx::new();
    let r = fx.run();
    let ids: Vec<&str> = r.checks.iter().map(|c| c.id).collect();
    assert_eq!(
        ids,
        [
            "config.agent",
            "config.project",
            "switch",
            "root.reachable",
            "root.private",
            "project.identity",
            "index.parse",
            "index.agreement",
            "index.capacity",
            "index.window",
            "lock",
            "models",
            "protocol",
            "layout.legacy",
            "snapshots",
            "git.merge",
            "scope.duplicates",
        ]
    );
    assert!(!r.failed(), "{}", r.text());
    assert_eq!(state(&r, "root.private"), State::Unchecked, "no root yet");
    assert!(r.text().starts_with("Memory doctor: "));
    let j = r.json();
    assert_eq!(j["failed"], false);
    assert_eq!(j["checks"][0]["id"], "config.agent");
    assert!(!fx.root().exists(), "the doctor creates nothing");
}

#[test]
fn config_checks_per_file() {
    let fx = Fx::new();
    fx.sb.write("agent/memory.json", "{ not json");
    let r = fx.run();
    assert_eq!(state(&r, "config.agent"), State::Warning);
    assert!(reason(&r, "config.agent").contains("malformed JSON"));
    assert_eq!(state(&r, "config.project"), State::Unchecked);
    fs::remove_file(fx.sb.path("agent/memory.json")).unwrap();
    fs::create_dir(fx.sb.path("agent/memory.json")).unwrap();
    let r = fx.run();
    assert_eq!(state(&r, "config.agent"), State::Failure);
    assert!(r.failed());
    fs::remove_dir(fx.sb.path("agent/memory.json")).unwrap();
    fx.sb
        .write("project/.pi/memory.json", r#"{"memIndexMaxLines": "many"}"#);
    let mut input = fx.input();
    input.trusted = true;
    let r = run(&input);
    assert_eq!(state(&r, "config.agent"), State::Ok);
    assert_eq!(state(&r, "config.project"), State::Warning, "{}", r.text());
    assert!(reason(&r, "config.project").contains("memIndexMaxLines must be"));
}

#[test]
fn switch_states() {
    let fx = Fx::new();
    assert_eq!(state(&fx.run(), "switch"), State::Ok);
    fx.sb
        .write("agent/auto-memory.json", r#"{"version":1,"enabled":false}"#);
    assert_eq!(state(&fx.run(), "switch"), State::Warning);
    fx.sb
        .write("agent/auto-memory.json", r#"{"version":3,"enabled":false}"#);
    let r = fx.run();
    assert_eq!(state(&r, "switch"), State::Failure);
    assert!(
        r.get("switch")
            .unwrap()
            .fix
            .as_deref()
            .unwrap()
            .contains("or delete it")
    );
    assert_eq!(
        fx.sb.read("agent/auto-memory.json"),
        r#"{"version":3,"enabled":false}"#
    );
}

#[test]
fn root_reachable_and_private() {
    let fx = Fx::new();
    fx.add("A");
    let r = fx.run();
    assert_eq!(state(&r, "root.reachable"), State::Ok);
    assert_eq!(state(&r, "root.private"), State::Ok, "{}", r.text());
    fs::set_permissions(fx.root(), fs::Permissions::from_mode(0o755)).unwrap();
    let r = fx.run();
    assert_eq!(state(&r, "root.private"), State::Warning);
    assert!(reason(&r, "root.private").contains("(755)"));
    let backup = fx.sb.path("mem-real").into_std_path_buf();
    fs::rename(fx.root(), &backup).unwrap();
    fs::write(fx.root(), "a file").unwrap();
    let r = fx.run();
    assert_eq!(state(&r, "root.reachable"), State::Failure);
    assert!(reason(&r, "root.reachable").starts_with("memory directory inaccessible"));
    fs::remove_file(fx.root()).unwrap();
    std::os::unix::fs::symlink(fx.root(), fx.root()).unwrap();
    let r = fx.run();
    assert_eq!(state(&r, "root.reachable"), State::Failure);
    assert!(
        reason(&r, "root.reachable").starts_with("path resolution failure"),
        "{}",
        r.text()
    );
    assert!(r.failed());
}

#[test]
fn identity_is_explained() {
    let fx = Fx::new();
    let r = fx.run();
    assert_eq!(state(&r, "project.identity"), State::Ok);
    assert!(
        reason(&r, "project.identity").starts_with("local key "),
        "{}",
        r.text()
    );
    assert!(reason(&r, "project.identity").contains("derived the working directory"));
}

#[test]
fn an_identity_that_cannot_be_derived_is_a_failure_and_nothing_is_created() {
    let fx = Fx::new();
    // `~/…` with no HOME: the memory root, hence the project's directory, cannot be derived.
    fx.sb
        .write("agent/memory.json", r#"{"memoryDir": "~/pimem-root"}"#);
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_pimem"))
        .args([
            "--agent-dir",
            fx.sb.agent_dir().as_str(),
            "doctor",
            "--json",
        ])
        .current_dir(fx.sb.project())
        .env_remove("HOME")
        .env_remove("PI_CODING_AGENT_DIR")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let check = |id: &str| {
        j["checks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["id"] == id)
            .cloned()
    };
    let identity = check("project.identity").unwrap();
    assert_eq!(identity["state"], "failure", "{j}");
    assert!(
        identity["reason"].as_str().unwrap().contains("HOME"),
        "{identity}"
    );
    assert!(identity["fix"].is_string(), "{identity}");
    assert_eq!(check("root.reachable").unwrap()["state"], "unchecked");
    // The checks that need a project are left out rather than guessed.
    for id in ["index.parse", "lock", "snapshots"] {
        assert!(check(id).is_none(), "{id}: {j}");
    }
    assert!(!fx.sb.home().join("pimem-root").exists());
}

#[test]
fn index_parse_and_agreement() {
    let fx = Fx::new();
    fx.add("A");
    fx.add("B");
    let r = fx.run();
    assert_eq!(state(&r, "index.parse"), State::Ok);
    assert_eq!(state(&r, "index.agreement"), State::Ok);
    let dir = fx.dir();
    let index = fs::read_to_string(dir.join("MEMORY.md")).unwrap();
    let without_b: String = index
        .lines()
        .filter(|l| !l.contains("[B]"))
        .map(|l| format!("{l}\n"))
        .collect();
    fs::write(
        dir.join("MEMORY.md"),
        format!("{without_b}- [Gone](Gone.md) — gone\n"),
    )
    .unwrap();
    fs::write(dir.join("notes.md"), "no frontmatter").unwrap();
    let r = fx.run();
    assert_eq!(state(&r, "index.agreement"), State::Warning);
    let why = reason(&r, "index.agreement");
    assert!(
        why.contains("entries missing from MEMORY.md (never injected): B.md"),
        "{why}"
    );
    assert!(
        why.contains("lines pointing at missing files: Gone.md"),
        "{why}"
    );
    assert!(why.contains("not entries (invisible): notes.md"), "{why}");
    fs::write(dir.join("MEMORY.md"), b"- [A](A.md) \xff\n").unwrap();
    let r = fx.run();
    assert_eq!(state(&r, "index.parse"), State::Failure);
}

#[test]
fn capacity_and_window_warn_at_90_percent_and_name_what_falls_outside() {
    let fx = Fx::new();
    fx.sb.write(
        "agent/memory.json",
        r#"{"memIndexInjectMaxLines": 10, "memIndexMaxLines": 20}"#,
    );
    for i in 0..8 {
        fx.add(&format!("M{i}"));
    }
    let r = fx.run();
    assert_eq!(state(&r, "index.window"), State::Ok, "{}", r.text());
    assert_eq!(state(&r, "index.capacity"), State::Ok);
    fx.add("M8");
    let r = fx.run();
    assert_eq!(
        state(&r, "index.window"),
        State::Warning,
        "9/10 is 90 %: {}",
        r.text()
    );
    for i in 9..18 {
        fx.add(&format!("M{i}"));
    }
    let r = fx.run();
    assert_eq!(state(&r, "index.capacity"), State::Warning, "18/20");
    assert_eq!(state(&r, "index.window"), State::Warning);
    let why = reason(&r, "index.window");
    assert!(
        why.starts_with("8 entries fall outside the injected window")
            && why.ends_with(": M0, M1, M2, M3, M4, M5, M6, M7"),
        "{why}"
    );
    for i in 18..21 {
        fx.add(&format!("M{i}"));
    }
    let r = fx.run();
    assert!(reason(&r, "index.capacity").starts_with("MEMORY.md is over its limit: 21/20"));
}

#[test]
fn lock_states() {
    let fx = Fx::new();
    fx.add("A");
    let dir = fx.dir();
    assert_eq!(state(&fx.run(), "lock"), State::Ok);
    let host = memory_core::lock_info::hostname();
    let record = |pid: u32, host: &str| {
        json!({"pid": pid, "hostname": host, "startedAt": "2026-10-02T00:00:00.000Z", "op": "add"})
            .to_string()
    };
    fs::write(dir.join(".lock"), record(std::process::id(), &host)).unwrap();
    let r = fx.run();
    assert_eq!(state(&r, "lock"), State::Ok);
    assert!(reason(&r, "lock").contains("which is running"));
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let dead = child.id();
    child.wait().unwrap();
    fs::write(dir.join(".lock"), record(dead, &host)).unwrap();
    let r = fx.run();
    assert_eq!(state(&r, "lock"), State::Warning);
    assert!(reason(&r, "lock").contains("not running"));
    fs::write(dir.join(".lock"), record(1, "elsewhere.example")).unwrap();
    assert!(reason(&fx.run(), "lock").contains("on another host"));
    fs::write(dir.join(".lock"), "garbage").unwrap();
    let r = fx.run();
    assert_eq!(state(&r, "lock"), State::Failure);
    assert!(
        dir.join(".lock").exists(),
        "the doctor never removes a lock"
    );
}

#[test]
fn models_and_protocol() {
    let fx = Fx::new();
    assert_eq!(state(&fx.run(), "models"), State::Ok, "no model configured");
    fx.sb
        .write("agent/memory.json", r#"{"defaults": {"model": "p/m"}}"#);
    assert_eq!(state(&fx.run(), "models"), State::Unchecked);
    let mut input = fx.input();
    input.models = Models::Resolved(vec![("p/m".into(), false)]);
    input.protocol = Protocol::Extension {
        protocol: 2,
        version: "0.2.0".into(),
    };
    let r = run(&input);
    assert_eq!(state(&r, "models"), State::Failure);
    assert_eq!(state(&r, "protocol"), State::Failure);
    input.models = Models::Resolved(vec![("p/m".into(), true)]);
    input.protocol = Protocol::Extension {
        protocol: 1,
        version: "0.0.9".into(),
    };
    let r = run(&input);
    assert_eq!(state(&r, "models"), State::Ok);
    assert_eq!(state(&r, "protocol"), State::Warning);
    input.protocol = Protocol::Extension {
        protocol: 1,
        version: "0.1.0".into(),
    };
    assert_eq!(state(&run(&input), "protocol"), State::Ok);
}

#[test]
fn orphaned_and_legacy_directories() {
    let fx = Fx::new();
    let project = fx.sb.project();
    fx.sb.git(&project, &["init", "-q"]);
    fx.sb.git(
        &project,
        &[
            "remote",
            "add",
            "origin",
            "https://github.com/new-owner/repo.git",
        ],
    );
    let r = fx.run();
    assert!(
        reason(&r, "project.identity").starts_with("git key \"github.com/new-owner/repo\""),
        "{}",
        r.text()
    );
    assert_eq!(state(&r, "layout.legacy"), State::Ok);
    let old = fx.root().join("git/github.com__old-owner__repo");
    fs::create_dir_all(&old).unwrap();
    fs::write(old.join("MEMORY.md"), "- [a](a.md) — a\n").unwrap();
    let local = fx
        .root()
        .join("local")
        .join(memory_keys::dir_name(project.as_str(), Platform::Posix));
    fs::create_dir_all(&local).unwrap();
    fs::write(local.join("MEMORY.md"), "- [b](b.md) — b\n").unwrap();
    let r = fx.run();
    assert_eq!(state(&r, "layout.legacy"), State::Warning);
    let why = reason(&r, "layout.legacy");
    assert!(
        why.contains("github.com__old-owner__repo has the same repository name"),
        "{why}"
    );
    assert!(
        why.contains("from before this repository had a usable remote"),
        "{why}"
    );
    // The pre-2.5 nested layout only arose on Windows, where `\` in a key became a directory
    // separator; a POSIX directory named `a\b` stands in for such a key here.
    let fx = Fx::new();
    let cwd = fx.sb.path("proj\\sub");
    fs::create_dir_all(&cwd).unwrap();
    let mut input = fx.input();
    input.cwd = cwd.clone().into_std_path_buf();
    input.platform = Platform::Windows;
    assert_eq!(state(&run(&input), "layout.legacy"), State::Ok);
    let legacy = memory_keys::dir_name(cwd.as_str(), Platform::Posix);
    let nested = fx.root().join("local").join(legacy.replace('\\', "/"));
    fs::create_dir_all(&nested).unwrap();
    let r = run(&input);
    assert_eq!(state(&r, "layout.legacy"), State::Warning, "{}", r.text());
    assert!(reason(&r, "layout.legacy").contains("pre-2.5 nested Windows layout"));
    input.platform = Platform::Posix;
    assert_eq!(
        state(&run(&input), "layout.legacy"),
        State::Ok,
        "POSIX never nested"
    );
}

#[test]
fn snapshots_are_counted() {
    let fx = Fx::new();
    assert_eq!(state(&fx.run(), "snapshots"), State::Ok);
    for i in 0..3 {
        fx.add(&format!("S{i}"));
    }
    let r = fx.run();
    assert!(
        reason(&r, "snapshots").starts_with("3 snapshots (lock.snapshotKeep 5)"),
        "{}",
        r.text()
    );
    let extra = fx.dir().join(".backups/2000-01-01T00-00-00-000Z-write");
    for i in 0..6 {
        fs::create_dir_all(format!("{}-{i}", extra.display())).unwrap();
    }
    assert_eq!(state(&fx.run(), "snapshots"), State::Warning);
}

#[test]
fn the_cli_exits_non_zero_on_a_failure_and_prints_json() {
    let fx = Fx::new();
    let run = |args: &[&str]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_pimem"))
            .args(["--agent-dir", fx.sb.agent_dir().as_str()])
            .args(args)
            .current_dir(fx.sb.project())
            .env("HOME", fx.sb.home())
            .env_remove("PI_CODING_AGENT_DIR")
            .output()
            .unwrap();
        (out.status.code(), String::from_utf8(out.stdout).unwrap())
    };
    let (code, out) = run(&["doctor"]);
    assert_eq!(code, Some(0), "{out}");
    fx.sb.write("agent/auto-memory.json", "{");
    let (code, out) = run(&["doctor", "--json"]);
    assert_eq!(code, Some(1));
    let j: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(j["failed"], true);
    assert!(
        j["checks"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["id"] == "switch" && c["state"] == "failure")
    );
    assert_eq!(fx.sb.read("agent/auto-memory.json"), "{");
}

#[test]
fn the_remaining_config_switch_and_protocol_states() {
    let fx = Fx::new();
    // No agent directory: its config fails, the switch and the project config are unchecked.
    let mut input = fx.input();
    input.agent_dir = None;
    let r = run(&input);
    assert_eq!(state(&r, "config.agent"), State::Failure);
    assert_eq!(state(&r, "config.project"), State::Unchecked);
    assert_eq!(state(&r, "switch"), State::Unchecked);
    assert_eq!(
        state(&r, "protocol"),
        State::Unchecked,
        "the CLI has no extension"
    );
    // A trusted, valid project config is ok.
    fx.sb
        .write("project/.pi/memory.json", r#"{"memIndexMaxLines": 150}"#);
    let mut input = fx.input();
    input.trusted = true;
    assert_eq!(state(&run(&input), "config.project"), State::Ok);
}
