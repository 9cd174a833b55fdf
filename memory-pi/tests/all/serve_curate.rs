//! Curating memory through the sidecar (issue 12): `/memory list` and `memory/list`
//! (PA-30..PA-32), `memory/open` → `memory/save` / `memory/delete` with compare-and-swap, the
//! switch and session invalidation (PA-19..PA-21, PA-44..PA-46), secrets refused (PA-48),
//! `/memory reload`, and the session usage summary of `/memory` (PA-26..PA-29).

use std::fs;
use std::path::Path;

use serde_json::{Value, json};

use super::{Pi, Sandbox};

fn memory(pi: &mut Pi, args: &str) -> String {
    let r = pi.call("command/run", json!({ "name": "memory", "args": args }));
    r["text"].as_str().unwrap_or_default().to_owned()
}

fn started(sb: &Sandbox) -> Pi {
    let mut pi = sb.spawn();
    pi.start(sb.start_params(json!({})));
    pi
}

fn add(pi: &mut Pi, name: &str, content: &str) {
    let r = pi.call(
        "tool/execute",
        json!({ "toolCallId": "c", "args": { "action": "add", "name": name, "content": content } }),
    );
    assert_eq!(r["isError"], false, "{r}");
}

fn open(pi: &mut Pi, file: &str) -> Value {
    pi.call("memory/open", json!({ "file": file }))
}

fn save(pi: &mut Pi, view: &Value, text: &str) -> Value {
    pi.call(
        "memory/save",
        json!({ "file": view["file"], "version": view["version"], "token": view["token"], "text": text }),
    )
}

fn delete(pi: &mut Pi, view: &Value) -> Value {
    pi.call(
        "memory/delete",
        json!({ "file": view["file"], "version": view["version"], "token": view["token"] }),
    )
}

fn read(dir: &Path, file: &str) -> String {
    fs::read_to_string(dir.join(file)).unwrap()
}

fn files_of(list: &Value) -> Vec<String> {
    list["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["file"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn pa30_the_list_shows_the_index_and_entries_never_a_symlink_and_an_empty_directory_says_so() {
    let sb = Sandbox::new();
    let mut pi = started(&sb);
    assert_eq!(memory(&mut pi, "list"), "No memory files yet.");
    let list = pi.call("memory/list", json!({}));
    assert_eq!(list["empty"], "No memory files yet.");
    assert_eq!(list["items"], json!([]));

    add(
        &mut pi,
        "Deploy command",
        "Deploy the staging stack with make ship.",
    );
    add(&mut pi, "Tabs", "Indent with tabs.");
    let dir = sb.memory_dir();
    // A symlink to a valid entry outside the directory is never listed or opened.
    let outside = sb.home.join("elsewhere.md");
    fs::write(&outside, read(&dir, "Tabs.md").replace("Tabs", "Linked")).unwrap();
    std::os::unix::fs::symlink(&outside, dir.join("Linked.md")).unwrap();

    let list = pi.call("memory/list", json!({}));
    assert_eq!(list["empty"], Value::Null);
    assert_eq!(
        files_of(&list),
        ["MEMORY.md", "Deploy-command.md", "Tabs.md"]
    );
    let labels: Vec<&str> = list["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["label"].as_str().unwrap())
        .collect();
    assert!(
        labels[0].starts_with("MEMORY.md · index · modified 20"),
        "{labels:?}"
    );
    assert!(
        labels[1].starts_with("Deploy command · feedback · modified 20")
            && labels[1].ends_with(" B · Deploy-command.md"),
        "{labels:?}"
    );
    assert!(
        !list.to_string().contains("make ship"),
        "no body in the list"
    );
    let printed = memory(&mut pi, "list");
    assert!(
        printed.starts_with(&format!(
            "Memory files in {} (3):\n  MEMORY.md · index",
            dir.display()
        )),
        "{printed}"
    );
    assert!(
        printed.contains("\n  Tabs · feedback · modified "),
        "{printed}"
    );
    assert!(!printed.contains("Linked"), "{printed}");
    let v = open(&mut pi, "Linked.md");
    assert_eq!(v["error"], "Linked.md is not a memory file of this project");
    assert_eq!(v["text"], "");
}

#[test]
fn pa19_an_edit_is_saved_with_its_version_and_an_index_change_waits_for_memory_reload() {
    let sb = Sandbox::new();
    let mut pi = started(&sb);
    add(
        &mut pi,
        "Deploy command",
        "Deploy the staging stack with make ship.",
    );
    let dir = sb.memory_dir();
    let v = open(&mut pi, "Deploy-command.md");
    assert_eq!(v["error"], Value::Null);
    assert_eq!(v["text"], read(&dir, "Deploy-command.md"));
    assert_eq!(v["deletable"], true);

    // unchanged → nothing written
    let r = save(&mut pi, &v, v["text"].as_str().unwrap());
    assert_eq!(
        (r["done"].clone(), r["text"].clone()),
        (json!(false), json!("No changes; nothing saved."))
    );

    // a body-only edit: the index line stays, so no reload is needed
    let edited = format!(
        "{}Run it from the repository root.\n",
        v["text"].as_str().unwrap()
    );
    let r = save(&mut pi, &v, &edited);
    assert_eq!(r["done"], true, "{r}");
    assert_eq!(r["text"], "Saved Deploy-command.md.");
    assert!(
        read(&dir, "Deploy-command.md").ends_with("make ship.\nRun it from the repository root.\n")
    );
    assert!(!memory(&mut pi, "").contains("Index changed"));

    // a description edit changes the frozen index: reload hint and the mark
    let v = open(&mut pi, "Deploy-command.md");
    let edited = v["text"].as_str().unwrap().replace(
        "description: Deploy the staging stack with make ship.",
        "description: How to deploy",
    );
    assert_ne!(edited, v["text"].as_str().unwrap());
    let r = save(&mut pi, &v, &edited);
    assert_eq!(
        r["text"],
        "Saved Deploy-command.md. The memory index the model sees changes only after /memory reload, at the next turn."
    );
    assert!(read(&dir, "MEMORY.md").contains("How to deploy"));
    let status = memory(&mut pi, "");
    assert!(
        status.contains("\n\nIndex changed: run /memory reload to refresh it at the next turn"),
        "{status}"
    );
    // the next turn keeps the frozen section until /memory reload
    let turn = json!({ "prompt": "hello", "messageType": "user", "systemPrompt": "" });
    let r = pi.call("agent/before_start", turn.clone());
    assert_eq!(r["section"], Value::Null);
    assert_eq!(
        memory(&mut pi, "reload"),
        "The memory index will be read again at the next turn."
    );
    assert!(memory(&mut pi, "").contains("\n\nIndex changed, refresh at the next turn"));
    let r = pi.call("agent/before_start", turn);
    assert!(
        r["section"].as_str().unwrap().contains("How to deploy"),
        "{r}"
    );
    assert!(r["record"].is_object(), "the new section is recorded: {r}");
    assert!(!memory(&mut pi, "").contains("Index changed"));

    // an entry text that is no longer an entry is refused, nothing written
    let before = read(&dir, "Deploy-command.md");
    let v = open(&mut pi, "Deploy-command.md");
    let r = save(&mut pi, &v, "just a body");
    assert_eq!(r["done"], false);
    assert!(
        r["text"]
            .as_str()
            .unwrap()
            .starts_with("Not saved: the text is not a memory entry"),
        "{r}"
    );
    assert_eq!(read(&dir, "Deploy-command.md"), before);
}

#[test]
fn pa44_pa48_a_stale_version_or_a_secret_saves_nothing_and_the_secret_is_never_echoed() {
    let sb = Sandbox::new();
    let mut pi = started(&sb);
    add(
        &mut pi,
        "Deploy command",
        "Deploy the staging stack with make ship.",
    );
    let dir = sb.memory_dir();
    let v = open(&mut pi, "Deploy-command.md");
    let index = open(&mut pi, "MEMORY.md");
    assert_eq!(index["deletable"], false);

    // another writer changes the entry and the index meanwhile
    add(&mut pi, "Deploy command", "Deploy with the new pipeline.");
    let current = read(&dir, "Deploy-command.md");
    let r = save(
        &mut pi,
        &v,
        &v["text"].as_str().unwrap().replace("make ship", "make it"),
    );
    assert_eq!(r["text"], "Not saved: Memory conflict: stale version");
    assert_eq!(
        (r["done"].clone(), r["level"].clone()),
        (json!(false), json!("error"))
    );
    assert_eq!(read(&dir, "Deploy-command.md"), current);
    let r = delete(&mut pi, &v);
    assert_eq!(r["text"], "Not deleted: Memory conflict: stale version");
    assert!(dir.join("Deploy-command.md").exists());
    add(&mut pi, "Tabs", "Indent with tabs.");
    let index_now = read(&dir, "MEMORY.md");
    let r = save(&mut pi, &index, "# mine\n");
    assert_eq!(r["text"], "Not saved: Memory conflict: stale version");
    assert_eq!(read(&dir, "MEMORY.md"), index_now);

    // secrets: refused in an entry and in the index, never repeated
    let secret = "ghp_0123456789abcdefghijABCDEFGHIJ012345";
    let v = open(&mut pi, "Deploy-command.md");
    let r = save(
        &mut pi,
        &v,
        &format!("{}\ntoken {secret}\n", v["text"].as_str().unwrap()),
    );
    let text = r["text"].as_str().unwrap();
    assert!(
        text.starts_with("Not saved: Refusing to store a secret"),
        "{text}"
    );
    assert!(!text.contains("ghp_"), "{text}");
    assert_eq!(read(&dir, "Deploy-command.md"), current);
    let index = open(&mut pi, "MEMORY.md");
    let r = save(&mut pi, &index, &format!("{index_now}\n{secret}\n"));
    assert!(!r.to_string().contains("ghp_"), "{r}");
    assert_eq!(r["done"], false);
    assert_eq!(read(&dir, "MEMORY.md"), index_now);

    // the index edited at its version: saved, the old bytes kept in a snapshot
    let edited = format!("# Notes kept by hand\n{index_now}");
    let r = save(&mut pi, &index, &edited);
    assert_eq!(r["done"], true, "{r}");
    assert_eq!(read(&dir, "MEMORY.md"), edited);
    let snapshots = fs::read_dir(dir.join(".backups")).unwrap().count();
    assert!(snapshots > 0);
}

#[test]
fn pa45_pa46_switched_off_or_a_session_change_during_the_edit_saves_nothing() {
    let sb = Sandbox::new();
    let mut pi = started(&sb);
    add(
        &mut pi,
        "Deploy command",
        "Deploy the staging stack with make ship.",
    );
    let dir = sb.memory_dir();
    let before = read(&dir, "Deploy-command.md");
    let edit = |v: &Value| v["text"].as_str().unwrap().replace("make ship", "make it");

    // switched off by another process while the editor was open
    let v = open(&mut pi, "Deploy-command.md");
    let off = std::process::Command::new(env!("CARGO_BIN_EXE_pimem"))
        .args(["off", "--agent-dir"])
        .arg(&sb.agent)
        .current_dir(&sb.project)
        .env("HOME", &sb.home)
        .output()
        .unwrap();
    assert!(off.status.success());
    let r = save(&mut pi, &v, &edit(&v));
    assert_eq!(r["text"], "Not saved: Memory is off");
    assert_eq!(read(&dir, "Deploy-command.md"), before);
    let r = delete(&mut pi, &v);
    assert_eq!(r["text"], "Not deleted: Memory is off");
    assert_eq!(open(&mut pi, "Deploy-command.md")["error"], "Memory is off");
    memory(&mut pi, "on");

    // tree navigation
    let v = open(&mut pi, "Deploy-command.md");
    // what the extension shows when its sidecar was replaced while the editor was open
    assert_eq!(
        v["invalidated"],
        "Not saved: Memory operation invalidated by a session change"
    );
    pi.call("session/tree", json!({}));
    let r = save(&mut pi, &v, &edit(&v));
    assert_eq!(
        r["text"],
        "Not saved: Memory operation invalidated by a session change"
    );
    let r = delete(&mut pi, &v);
    assert_eq!(
        r["text"],
        "Not deleted: Memory operation invalidated by a session change"
    );
    assert_eq!(read(&dir, "Deploy-command.md"), before);

    // new, resume, switch, reload: a session/start (or shutdown) of the sidecar
    let v = open(&mut pi, "Deploy-command.md");
    pi.call("session/start", sb.start_params(json!({ "reason": "new" })));
    let r = save(&mut pi, &v, &edit(&v));
    assert_eq!(
        r["text"],
        "Not saved: Memory operation invalidated by a session change"
    );
    assert_eq!(read(&dir, "Deploy-command.md"), before);
    let v = open(&mut pi, "Deploy-command.md");
    pi.call("session/shutdown", json!({}));
    let r = save(&mut pi, &v, &edit(&v));
    assert_eq!(
        r["text"],
        "Not saved: Memory operation invalidated by a session change"
    );
    assert_eq!(read(&dir, "Deploy-command.md"), before);

    // a view opened after the change saves
    let v = open(&mut pi, "Deploy-command.md");
    assert_eq!(save(&mut pi, &v, &edit(&v))["done"], true);
}

#[test]
fn pa32_delete_asks_with_the_name_removes_exactly_that_version_and_keeps_a_snapshot() {
    let sb = Sandbox::new();
    let mut pi = started(&sb);
    add(
        &mut pi,
        "Deploy command",
        "Deploy the staging stack with make ship.",
    );
    add(&mut pi, "Tabs", "Indent with tabs.");
    let dir = sb.memory_dir();
    let v = open(&mut pi, "Deploy-command.md");

    pi.script.confirm = false;
    let r = delete(&mut pi, &v);
    assert_eq!(
        (r["done"].clone(), r["text"].clone()),
        (json!(false), Value::Null)
    );
    assert!(dir.join("Deploy-command.md").exists());
    let asked = pi.asked.last().unwrap().clone();
    assert_eq!(asked["method"], "ui/confirm");
    assert_eq!(asked["params"]["title"], "Delete memory");
    assert!(
        asked["params"]["body"]
            .as_str()
            .unwrap()
            .starts_with("Delete \"Deploy command\" (Deploy-command.md)?"),
        "{asked}"
    );

    pi.script.confirm = true;
    let backups_before = fs::read_dir(dir.join(".backups"))
        .map(|d| d.count())
        .unwrap_or(0);
    let r = delete(&mut pi, &v);
    assert_eq!(r["done"], true, "{r}");
    assert_eq!(
        r["text"],
        "Deleted \"Deploy command\".\nIndex changed: run /memory reload to refresh it at the next turn"
    );
    assert!(!dir.join("Deploy-command.md").exists());
    assert!(!read(&dir, "MEMORY.md").contains("Deploy-command.md"));
    assert!(read(&dir, "MEMORY.md").contains("Tabs.md"));
    let backups: Vec<_> = fs::read_dir(dir.join(".backups"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert!(backups.len() > backups_before);
    assert!(
        backups.iter().any(|b| b.join("Deploy-command.md").exists()),
        "the deleted entry is in a snapshot: {backups:?}"
    );
    // the index is never deleted
    let index = open(&mut pi, "MEMORY.md");
    let r = delete(&mut pi, &index);
    assert_eq!(
        r["text"],
        "Not deleted: MEMORY.md cannot be deleted; edit it instead"
    );
    assert!(dir.join("MEMORY.md").exists());
}

#[test]
fn pa26_pa29_the_usage_summary_counts_saves_surfacing_and_reads_and_starts_over_with_a_session() {
    let sb = Sandbox::new();
    let mut pi = started(&sb);
    let plain = memory(&mut pi, "");
    assert_eq!(
        plain.lines().count(),
        7,
        "nothing used yet: pi-memory's status: {plain}"
    );
    add(
        &mut pi,
        "Deploy command",
        "Deploy the staging stack with make ship.",
    );
    let r = pi.call(
        "agent/before_start",
        json!({ "prompt": "how do I deploy the staging stack with make ship?", "messageType": "user", "systemPrompt": "" }),
    );
    assert!(r["message"].is_object(), "{r}");
    let dir = sb.memory_dir();
    let g = pi.call(
        "files/guard",
        json!({ "toolName": "read", "input": { "path": dir.join("Deploy-command.md") }, "cwd": sb.project }),
    );
    assert_eq!(g["block"], Value::Null);
    // a file that is not an entry of the memory directory does not count
    pi.call(
        "files/guard",
        json!({ "toolName": "read", "input": { "path": "src/lib.rs" }, "cwd": sb.project }),
    );
    let v = open(&mut pi, "Deploy-command.md");
    save(
        &mut pi,
        &v,
        &format!("{}More.\n", v["text"].as_str().unwrap()),
    );

    let status = memory(&mut pi, "");
    let summary = status.split("\n\n").nth(1).unwrap_or_default();
    assert_eq!(
        summary,
        "Session usage:\n  Saves (2): Deploy command (edit, turn 1), Deploy command (tool, turn 0)\n  Surfaced (1): Deploy command ×1 (last turn 1)\n  Read by the model (1): Deploy-command.md ×1 (last turn 1)",
        "{status}"
    );
    assert!(
        !status.contains("make "),
        "no body in the summary: {status}"
    );

    // off: still shown, marked unavailable
    memory(&mut pi, "off");
    let status = memory(&mut pi, "");
    assert!(
        status.contains(
            "\n\nSession usage (currently unavailable: memory is off or paused):\n  Saves (2)"
        ),
        "{status}"
    );
    memory(&mut pi, "on");

    // a new session starts with an empty summary
    pi.call("session/start", sb.start_params(json!({ "reason": "new" })));
    assert_eq!(memory(&mut pi, "").lines().count(), 7);
}

#[test]
fn the_curation_texts_follow_the_language_setting() {
    let sb = Sandbox::new();
    sb.config(json!({ "language": "zh-CN" }));
    let mut pi = started(&sb);
    assert_eq!(memory(&mut pi, "list"), "还没有记忆文件。");
    add(
        &mut pi,
        "Deploy command",
        "Deploy the staging stack with make ship.",
    );
    let v = open(&mut pi, "Deploy-command.md");
    assert_eq!(v["title"], "Deploy-command.md（只读）");
    assert_eq!(v["keys"], "e 编辑 · d 删除 · ↑↓ 滚动 · Esc 返回列表");
    pi.call("session/tree", json!({}));
    let r = save(&mut pi, &v, "x");
    // the error class stays English inside the localised wrapping
    assert_eq!(
        r["text"],
        "未保存：Memory operation invalidated by a session change"
    );
    assert!(
        memory(&mut pi, "")
            .contains("本会话的记忆使用：\n  保存（1）：Deploy command（工具，第 0 轮）")
    );
}

#[test]
fn pa26_an_extraction_save_is_in_the_usage_summary() {
    let sb = Sandbox::new();
    sb.config(
        json!({ "defaults": { "model": "fake/model" }, "extractMemories": { "enabled": true } }),
    );
    let mut pi = started(&sb);
    pi.call(
        "agent/before_start",
        json!({ "prompt": "hi", "messageType": "user", "systemPrompt": "" }),
    );
    pi.script.completions = std::collections::VecDeque::from(vec![
        Ok(super::completion_tool(
            "e1",
            json!({ "action": "add", "name": "Staging port", "content": "Staging SSH listens on 2222." }),
        )),
        Ok(super::completion_text("Saved one memory.")),
    ]);
    pi.call(
        "agent/settled",
        json!({ "messages": super::turn("staging ssh is on port 2222"), "aborted": false }),
    );
    pi.wait_note(|n| n["params"]["message"] == "Extracted 1 memory.");
    let status = memory(&mut pi, "");
    assert!(
        status.contains("\n\nSession usage:\n  Saves (1): Staging port (extraction, turn 1)\n"),
        "{status}"
    );
    assert!(!status.contains("2222"), "no body: {status}");
}

#[test]
fn pa26_a_dream_write_is_in_the_usage_summary() {
    let sb = Sandbox::new();
    sb.config(json!({ "defaults": { "model": "fake/model" } }));
    let mut pi = started(&sb);
    add(&mut pi, "Deploy command", "Deploy with make ship.");
    add(&mut pi, "Deploy command (dup)", "Deploy with make ship.");
    pi.script.completions = std::collections::VecDeque::from(vec![
        Ok(super::completion_tool(
            "d1",
            json!({ "action": "remove", "name": "Deploy command (dup)" }),
        )),
        Ok(super::completion_text("Merged 1 duplicate.")),
    ]);
    let r = pi.call(
        "command/run",
        json!({ "name": "dream", "args": "", "confirmed": true }),
    );
    assert_eq!(r["text"], "Merged 1 duplicate.");
    let status = memory(&mut pi, "");
    assert!(
        status.contains("\n  Saves (3): Deploy command (dup) (dream, turn 0), Deploy command (dup) (tool, turn 0), Deploy command (tool, turn 0)\n"),
        "{status}"
    );
}
