//! pi-auto-memory through the sidecar: the switch at every turn start, tool call and command
//! (PA-11..PA-16, PA-45), `files/guard` (PA-33..PA-37), `/memory doctor` (PA-26) and the
//! fail-closed memory directory (PA-49).

use std::fs;

use serde_json::{Value, json};

use super::{Pi, Sandbox};

fn before(pi: &mut Pi, prompt: &str) -> Value {
    pi.call(
        "agent/before_start",
        json!({ "prompt": prompt, "messageType": "user", "systemPrompt": "" }),
    )
}

fn memory(pi: &mut Pi, args: &str) -> String {
    let r = pi.call("command/run", json!({ "name": "memory", "args": args }));
    r["text"].as_str().unwrap_or_default().to_owned()
}

fn started_with_an_entry(sb: &Sandbox) -> Pi {
    let mut pi = sb.spawn();
    pi.start(sb.start_params(json!({ "hasUI": false })));
    let r = pi.tool(json!({ "action": "add", "name": "Deploy command", "content": "Deploy the staging stack with make ship." }));
    assert_eq!(r["isError"], false, "{r}");
    pi
}

#[test]
fn pa15_pa16_off_is_seen_at_the_next_turn_tool_call_and_command_and_on_reads_the_index_again() {
    let sb = Sandbox::new();
    let mut pi = started_with_an_entry(&sb);
    let r = before(&mut pi, "how do I deploy the staging stack with make ship?");
    assert_eq!(r["section"], Value::Null, "on: the frozen section stays");
    assert!(r["message"].is_object());

    // `off` from another process (the CLI here; another pi session alike).
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_pimem"))
        .args(["off", "--agent-dir"])
        .arg(&sb.agent)
        .current_dir(&sb.project)
        .env("HOME", &sb.home)
        .output()
        .unwrap();
    assert!(out.status.success());
    let files_before = fs::read_dir(sb.memory_dir()).unwrap().count();

    let r = before(&mut pi, "how do I deploy the staging stack with make ship?");
    assert_eq!(r["section"], "", "off: no section from this turn on");
    assert_eq!(r["record"], Value::Null);
    assert_eq!(r["message"], Value::Null, "off: nothing surfaced");
    let r = pi.tool(json!({ "action": "list" }));
    assert_eq!(r["text"], "Memory is off");
    assert_eq!(r["isError"], true);
    let r = pi.tool(json!({ "action": "add", "name": "New", "content": "x" }));
    assert_eq!(r["text"], "Memory is off");
    let status = memory(&mut pi, "");
    assert!(
        status.starts_with("Memory: off — Run /memory on"),
        "{status}"
    );
    assert!(status.contains("\nDir: "), "{status}");
    let r = pi.call(
        "command/run",
        json!({ "name": "dream", "args": "", "confirmed": true }),
    );
    assert!(
        r["text"]
            .as_str()
            .unwrap()
            .starts_with("Dream not started: Memory is off"),
        "{r}"
    );
    let r = pi.call("session/compact", json!({}));
    assert_eq!(r["section"], "");
    assert_eq!(
        fs::read_dir(sb.memory_dir()).unwrap().count(),
        files_before,
        "files kept"
    );

    let on = memory(&mut pi, "on");
    assert!(on.starts_with("Memory is on (saved in "), "{on}");
    let r = before(&mut pi, "what is the weather on mars");
    let section = r["section"].as_str().unwrap();
    assert!(
        section.contains("[Deploy command](Deploy-command.md)"),
        "{section}"
    );
    assert_eq!(
        r["record"]["value"], section,
        "the fresh section is recorded"
    );
    let r = before(&mut pi, "another turn");
    assert_eq!(r["section"], Value::Null, "frozen again");
    let r = pi.tool(json!({ "action": "list" }));
    assert_eq!(r["isError"], false);
    let off = memory(&mut pi, "off");
    assert!(off.starts_with("Memory is off for every project"), "{off}");
    let again = memory(&mut pi, "off");
    assert!(again.contains("it already was"), "{again}");
}

#[test]
fn pa12_a_corrupt_switch_pauses_memory_and_is_never_rewritten() {
    let sb = Sandbox::new();
    let path = sb.agent.join("auto-memory.json");
    fs::write(&path, "{\"version\": 1, \"enabled\": 1}").unwrap();
    let mut pi = sb.spawn();
    let r = pi.start(sb.start_params(json!({ "hasUI": true })));
    assert_eq!(r["section"], "");
    assert_eq!(r["nudge"], Value::Null);
    let notes = super::notification_messages(&r);
    assert!(
        notes
            .iter()
            .any(|n| n.starts_with("pimem: Memory is paused: ")
                && n.contains("has \"enabled\": 1; it must be true or false")),
        "{notes:?}"
    );
    let r = pi.tool(json!({ "action": "list" }));
    assert!(
        r["text"]
            .as_str()
            .unwrap()
            .starts_with("Memory is paused: "),
        "{r}"
    );
    let on = memory(&mut pi, "on");
    assert!(on.starts_with("Memory switch not changed: "), "{on}");
    let doctor = memory(&mut pi, "doctor");
    assert!(doctor.contains("failure   switch"), "{doctor}");
    assert_eq!(
        fs::read_to_string(&path).unwrap(),
        "{\"version\": 1, \"enabled\": 1}"
    );
}

#[test]
fn files_guard_blocks_writes_and_internals_and_narrows_scans() {
    let sb = Sandbox::new();
    let mut pi = started_with_an_entry(&sb);
    let dir = sb.memory_dir();
    let root = sb.home.join(".pi/memory");
    let guard = |pi: &mut Pi, tool: &str, input: Value| {
        pi.call(
            "files/guard",
            json!({ "toolName": tool, "input": input, "cwd": sb.project }),
        )["block"]
            .clone()
    };
    let b = guard(
        &mut pi,
        "write",
        json!({ "path": dir.join("x.md"), "content": "x" }),
    );
    assert!(b.as_str().unwrap().contains("Use the memory tool"), "{b}");
    let b = guard(
        &mut pi,
        "edit",
        json!({ "path": format!("@{}", dir.join("MEMORY.md").display()) }),
    );
    assert!(b.is_string());
    assert_eq!(
        guard(
            &mut pi,
            "read",
            json!({ "path": dir.join("Deploy-command.md") })
        ),
        Value::Null
    );
    assert!(guard(&mut pi, "read", json!({ "path": dir.join(".lock") })).is_string());
    assert!(guard(&mut pi, "ls", json!({ "path": dir })).is_string());
    assert_eq!(
        guard(&mut pi, "write", json!({ "path": "src/x.rs" })),
        Value::Null
    );
    assert!(!root.join(".ignore").exists());
    assert_eq!(
        guard(&mut pi, "grep", json!({ "pattern": "x", "path": sb.home })),
        Value::Null
    );
    let ignore = fs::read_to_string(root.join(".ignore")).unwrap();
    assert!(ignore.contains(".backups/\n"), "{ignore}");
    // Off: entries are not readable either, and scans exclude everything.
    memory(&mut pi, "off");
    assert!(
        guard(
            &mut pi,
            "read",
            json!({ "path": dir.join("Deploy-command.md") })
        )
        .is_string()
    );
    assert_eq!(
        guard(
            &mut pi,
            "find",
            json!({ "pattern": "*.md", "path": sb.home })
        ),
        Value::Null
    );
    assert!(
        fs::read_to_string(root.join(".ignore"))
            .unwrap()
            .ends_with("*\n")
    );
    assert!(guard(&mut pi, "unknown-tool", json!({ "path": dir })).is_null());
}

#[test]
fn pa26_memory_doctor_runs_read_only_checks_and_compares_the_extension() {
    let sb = Sandbox::new();
    let mut pi = started_with_an_entry(&sb);
    // The session's background warm-up may persist its index (`.pimem/`, a cache) at any
    // moment: the doctor's read-only promise is about everything else.
    let memory_files = || {
        let mut t = testkit::tree(&sb.memory_dir());
        t.retain(|k, _| !k.starts_with(".pimem/"));
        t
    };
    let before_tree = memory_files();
    let text = memory(&mut pi, "doctor");
    assert!(text.starts_with("Memory doctor: "), "{text}");
    for id in [
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
    ] {
        assert!(
            text.lines()
                .any(|l| l.split_whitespace().nth(1) == Some(id)),
            "{id} missing:\n{text}"
        );
    }
    // `start` sends protocol 1 with no version: the versions differ, the protocol agrees.
    assert!(
        text.lines()
            .any(|l| l.starts_with("warning   protocol") && l.contains("protocol 1 on both sides")),
        "{text}"
    );
    assert_eq!(memory_files(), before_tree, "read-only");
}

#[test]
fn pa49_an_unusable_memory_directory_fails_closed_and_recovers_at_the_next_call() {
    let sb = Sandbox::new();
    let root = sb.home.join("mem");
    sb.config(json!({ "memoryDir": root }));
    let mut pi = sb.spawn();
    pi.start(sb.start_params(json!({ "hasUI": false })));
    // A file where the memory root should be: inaccessible. The session's background
    // warm-up may be creating the directory (and persisting its index into it) right now,
    // so a removal can meet a new file: retry until the file stands.
    let mut placed = false;
    for _ in 0..500 {
        if root.is_dir() {
            let _ = fs::remove_dir_all(&root);
        }
        if !root.exists() && fs::write(&root, "not a directory").is_ok() && root.is_file() {
            placed = true;
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    assert!(
        placed,
        "could not put a file where the memory root should be"
    );
    let r = pi.tool(json!({ "action": "list" }));
    assert_eq!(r["isError"], true);
    let text = r["text"].as_str().unwrap();
    assert!(
        text.starts_with("Memory unavailable — memory directory inaccessible: "),
        "{text}"
    );
    // A symlink loop: the path cannot be resolved.
    fs::remove_file(&root).unwrap();
    std::os::unix::fs::symlink(&root, &root).unwrap();
    let r = pi.tool(json!({ "action": "list" }));
    let text = r["text"].as_str().unwrap();
    assert!(
        text.starts_with("Memory unavailable — path resolution failure: "),
        "{text}"
    );
    // Ordinary files stay unaffected: the guard lets them through.
    let g = pi.call(
        "files/guard",
        json!({ "toolName": "write", "input": { "path": "src/lib.rs" }, "cwd": sb.project }),
    );
    assert_eq!(g["block"], Value::Null);
    // Fixed: the very next call works (no cached failure).
    fs::remove_file(&root).unwrap();
    let r = pi.tool(json!({ "action": "add", "name": "A", "content": "b" }));
    assert_eq!(r["isError"], false, "{r}");
}
