//! The CLI in Simplified Chinese (PA-03): `pimem status`, `pimem doctor`, `pimem off|on`
//! with `"language": "zh-CN"` in memory.json and with `LANG=zh_CN.UTF-8`; `"language": "en"`
//! wins over a Chinese locale; check ids, states and what the model reads stay English.
#![allow(clippy::unwrap_used)]

use std::process::Output;

use testkit::Sandbox;

fn pimem(sandbox: &Sandbox, envs: &[(&str, &str)], args: &[&str]) -> Output {
    let mut c = sandbox.command(env!("CARGO_BIN_EXE_pimem"));
    c.args(["--cwd", sandbox.dir("project").as_str()])
        .args(["--memory-dir", sandbox.path("memory").as_str()])
        .args(["--agent-dir", sandbox.dir("agent").as_str()])
        .args(args);
    for (k, v) in envs {
        c.env(k, v);
    }
    c.output().unwrap()
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn seeded() -> Sandbox {
    let sandbox = Sandbox::new();
    let add = pimem(
        &sandbox,
        &[],
        &["add", "--name", "Build", "--content", "cargo xtask ci"],
    );
    assert!(add.status.success(), "{}", text(&add));
    sandbox
}

#[test]
fn status_and_doctor_follow_memory_json_language() {
    let sandbox = seeded();
    sandbox.write("agent/memory.json", r#"{"language": "zh-CN"}"#);
    let status = text(&pimem(&sandbox, &[], &["status"]));
    for line in [
        "目录：",
        "索引：",
        "注入：",
        "条目：1",
        "模块：",
        "上次整理：从未",
        "锁：空闲",
    ] {
        assert!(status.contains(line), "{line} missing:\n{status}");
    }
    assert!(!status.contains("Entries:"), "{status}");

    let doctor = text(&pimem(&sandbox, &[], &["doctor"]));
    assert!(doctor.starts_with("记忆诊断："), "{doctor}");
    // Check ids and states stay English (PA-03).
    assert!(doctor.contains("ok        index.capacity"), "{doctor}");
    assert!(
        doctor.contains("unchecked protocol          此处没有运行 pi 扩展"),
        "{doctor}"
    );
    assert!(doctor.contains("未配置模型：整理已关闭"), "{doctor}");

    let json = pimem(&sandbox, &[], &["--json", "status"]);
    let v: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(
        v["modules"], "dream=off(no model) extractMemories=off autoSurfacing=on(lexical)",
        "JSON keeps the machine-readable English spelling: {v}"
    );

    // The switch's answers, and the status line while off.
    let off = text(&pimem(&sandbox, &[], &["off"]));
    assert!(
        off.contains("已为此 pi agent 目录下的所有项目关闭记忆"),
        "{off}"
    );
    assert!(
        off.contains("运行 /memory on（或 `pimem on`）即可重新启用。"),
        "{off}"
    );
    let status = text(&pimem(&sandbox, &[], &["status"]));
    assert!(status.starts_with("记忆：已关闭——"), "{status}");
    let on = text(&pimem(&sandbox, &[], &["on"]));
    assert!(on.contains("记忆已开启（已保存到 "), "{on}");
    let unlock = text(&pimem(&sandbox, &[], &["unlock", "--yes"]));
    assert!(unlock.contains("没有锁。"), "{unlock}");
}

#[test]
fn the_locale_chooses_when_memory_json_does_not() {
    let sandbox = seeded();
    let zh = [("LANG", "zh_CN.UTF-8")];
    let status = text(&pimem(&sandbox, &zh, &["status"]));
    assert!(status.contains("条目：1"), "{status}");
    let doctor = text(&pimem(&sandbox, &[("LC_ALL", "zh_CN.UTF-8")], &["doctor"]));
    assert!(doctor.starts_with("记忆诊断："), "{doctor}");

    // memory.json wins over the locale.
    sandbox.write("agent/memory.json", r#"{"language": "en"}"#);
    let status = text(&pimem(&sandbox, &zh, &["status"]));
    assert!(status.contains("Entries: 1"), "{status}");
    assert!(!status.contains("条目"), "{status}");

    // No locale at all (the sandbox removes it): English, PM-75's text.
    std::fs::remove_file(sandbox.path("agent/memory.json")).unwrap();
    let status = text(&pimem(&sandbox, &[], &["status"]));
    assert!(status.contains("\nEntries: 1\n"), "{status}");
    assert!(status.contains("Last dream: never\nLock: free"), "{status}");
}

#[test]
fn what_the_model_reads_stays_english_in_chinese() {
    let sandbox = seeded();
    sandbox.write("agent/memory.json", r#"{"language": "zh-CN"}"#);
    // The tool's texts (`pimem add` prints the memory tool's result) are pi-memory's English.
    let add = text(&pimem(
        &sandbox,
        &[("LANG", "zh_CN.UTF-8")],
        &["add", "--name", "Deploy", "--content", "make ship"],
    ));
    assert!(add.contains("Saved \"Deploy\" (Deploy.md)."), "{add}");
    assert!(
        !add.chars().any(|c| ('\u{4e00}'..='\u{9fff}').contains(&c)),
        "{add}"
    );
}

#[test]
fn a_paused_switch_is_explained_in_chinese_but_the_store_error_stays_english() {
    let sandbox = seeded();
    sandbox.write("agent/memory.json", r#"{"language": "zh-CN"}"#);
    sandbox.write(
        "agent/auto-memory.json",
        r#"{"version": 1, "enabled": "yes"}"#,
    );
    let status = text(&pimem(&sandbox, &[], &["status"]));
    assert!(
        status.starts_with("记忆：已暂停——") && status.contains("中的 \"enabled\" 为 \"yes\"；它必须是 true 或 false。请把它改为 {\"version\": 1, \"enabled\": true}"),
        "{status}"
    );
    let doctor = text(&pimem(&sandbox, &[], &["doctor"]));
    assert!(
        doctor.contains("failure   switch") && doctor.contains("它永远不会被自动覆盖"),
        "{doctor}"
    );
    // What the memory tool answers (the model reads it) is pi-auto-memory's English.
    let add = text(&pimem(
        &sandbox,
        &[],
        &["add", "--name", "X", "--content", "y"],
    ));
    assert!(add.contains("Memory is paused: "), "{add}");
    assert!(
        add.contains("has \"enabled\": \"yes\"; it must be true or false"),
        "{add}"
    );
}

/// The catalog's English of texts pi-memory pins elsewhere is byte for byte the same.
#[test]
fn catalog_english_is_pi_memory_s_text() {
    use memory_agent::dream::{DREAM_CONFIRM_BODY, DREAM_CONFIRM_TITLE, DREAM_STATUS_TEXT};
    use memory_core::Language::En;
    use memory_core::catalog::Text;
    assert_eq!(Text::DreamConfirmTitle.template(En), DREAM_CONFIRM_TITLE);
    assert_eq!(Text::DreamConfirmBody.template(En), DREAM_CONFIRM_BODY);
    assert_eq!(Text::DreamStatus.template(En), DREAM_STATUS_TEXT);
    assert_eq!(
        Text::TurnOnHint.template(En),
        memory_core::messages::TURN_ON_HINT
    );
}

/// PM-76's block: the header in the reader's language, the error classes as they are.
#[test]
fn the_misconfigured_block_translates_its_header_only() {
    use memory_core::Language::{En, ZhCn};
    let errors = vec!["Failed to load memory config: bad".to_owned()];
    assert_eq!(
        memory_core::misconfigured_block_in(En, &errors),
        "Memory: misconfigured\nDir: not initialized\n- Failed to load memory config: bad"
    );
    assert_eq!(
        memory_core::misconfigured_block(&errors),
        memory_core::misconfigured_block_in(En, &errors)
    );
    assert_eq!(
        memory_core::misconfigured_block_in(ZhCn, &errors),
        "记忆：配置有误\n目录：未初始化\n- Failed to load memory config: bad"
    );
}

#[test]
fn export_and_surface_answer_in_chinese() {
    let sandbox = seeded();
    sandbox.write("agent/memory.json", r#"{"language": "zh-CN"}"#);
    let out = sandbox.path("backup.json");
    let export = text(&pimem(&sandbox, &[], &["export", "--out", out.as_str()]));
    assert!(
        export.contains(&format!("pimem：已导出到 {out}")),
        "{export}"
    );
    let surface = text(&pimem(
        &sandbox,
        &[],
        &["surface", "zzz-nothing-matches-this"],
    ));
    assert!(surface.contains("没有相关的记忆。"), "{surface}");
}
