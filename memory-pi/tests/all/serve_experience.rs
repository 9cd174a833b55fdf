//! The run log through the sidecar's protocol (a child module of `serve`, whose fake pi it
//! uses): `run/event` notifications, the background summary, `/experience`, the panel, the
//! `experience` tool, `remember`, and a run cut off by end of input.

use serde_json::{Value, json};

use super::{Sandbox, completion_text};

fn ev(pi: &mut super::Pi, at: i64, event: Value) {
    pi.send(
        &json!({ "jsonrpc": "2.0", "method": "run/event", "params": { "at": at, "event": event } }),
    );
}

fn run_text(pi: &mut super::Pi, args: &str) -> String {
    pi.call("experience/run", json!({ "args": args }))["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

fn cli_json(sb: &Sandbox, args: &[&str]) -> Value {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_pimem"))
        .args(["--json", "--agent-dir"])
        .arg(&sb.agent)
        .arg("experience")
        .args(args)
        .current_dir(&sb.project)
        .env("HOME", &sb.home)
        .env_remove("PI_CODING_AGENT_DIR")
        .env_remove("LC_ALL")
        .env_remove("LANG")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn one_run(pi: &mut super::Pi, t: i64, prompt: &str) {
    ev(pi, t, json!({ "kind": "runStart" }));
    ev(pi, t + 1, json!({ "kind": "prompt", "text": prompt }));
    ev(
        pi,
        t + 2,
        json!({ "kind": "toolCall", "id": "c1", "name": "bash", "args": { "command": "make ship" } }),
    );
    ev(
        pi,
        t + 3,
        json!({ "kind": "toolResult", "id": "c1", "name": "bash", "text": "deployed", "isError": false }),
    );
    ev(
        pi,
        t + 4,
        json!({ "kind": "assistant", "text": "Deployed.", "stopReason": "stop", "error": null, "model": "p/m" }),
    );
    ev(pi, t + 5, json!({ "kind": "settled", "aborted": false }));
}

#[test]
fn runs_are_recorded_summarized_shown_merged_and_remembered() {
    let sb = Sandbox::new();
    sb.config(
        json!({ "defaults": { "model": "p/m" }, "autoSurfacing": { "selector": "lexical" } }),
    );
    let mut pi = sb.spawn();
    pi.script.resolvable = true;
    pi.script.confirm = true;
    pi.script
        .completions
        .push_back(Ok(completion_text("Deployed staging with make ship.")));
    pi.start(sb.start_params(json!({ "sessionFile": null })));
    one_run(&mut pi, 1_000, "deploy staging");
    // the summary is asked in the background, through pi, with no tools
    let asked = pi.wait_asked("model/complete");
    assert_eq!(asked["params"]["model"], "p/m");
    assert_eq!(asked["params"]["tools"], json!([]));
    assert!(
        asked["params"]["messages"][0]["content"]
            .as_str()
            .unwrap()
            .contains("User: deploy staging\nTool call bash: {\"command\":\"make ship\"}")
    );
    let mut shown = String::new();
    for _ in 0..100 {
        shown = run_text(&mut pi, "show R01");
        if shown.contains("Summary: Deployed staging") {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert!(shown.starts_with("R01 · completed\nUUID: "), "{shown}");
    assert!(shown.contains("(in memory (no session file))"), "{shown}");
    assert!(
        shown.contains("Summary: Deployed staging with make ship."),
        "{shown}"
    );
    assert!(run_text(&mut pi, "runs").starts_with("Runs, newest first (1 of 1):\nR01   completed"));
    assert!(run_text(&mut pi, "search staging").starts_with("R01   deploy staging"));
    assert_eq!(run_text(&mut pi, "fly"), memory_runlog::texts::EN.usage);

    // prepare: the audited runs go to the agent after the confirmation
    let r = pi.call("experience/run", json!({ "args": "prepare" }));
    assert_eq!(r["text"], "Handed 1 runs to the agent.");
    let prompt = r["prompt"].as_str().unwrap();
    assert!(
        prompt.contains("with the `experience` tool") && prompt.contains("R01 (completed,"),
        "{prompt}"
    );
    let confirm = pi.wait_asked("ui/confirm");
    assert_eq!(confirm["params"]["title"], "Experience");

    // the agent's tool
    let t = pi.call(
        "experience/tool",
        json!({ "toolCallId": "c9", "args": { "action": "create", "title": "Staging deploys", "summary": "Use make ship.", "runs": ["R01"] } }),
    );
    assert_eq!(
        t,
        json!({ "text": "Created E1 (sources R01).", "isError": false })
    );
    let t = pi.call("experience/tool", json!({ "toolCallId": "c10", "args": { "action": "create", "title": "x", "runs": ["R01"] } }));
    assert_eq!(
        t,
        json!({ "text": "R01 overlaps R01, a source of E1", "isError": true })
    );

    // remember: through the store
    let r = run_text(&mut pi, "remember E1");
    assert_eq!(
        r,
        "E1 is now a memory: Saved \"Staging deploys\" (Staging-deploys.md)."
    );
    assert!(sb.memory_dir().join("Staging-deploys.md").exists());

    // panel and debug
    let p = pi.call("experience/panel", json!({ "view": "overview" }));
    assert_eq!(
        p["title"],
        "Experience — recorded runs and what was learned"
    );
    assert_eq!(
        p["lines"][0],
        "1 runs · 0 running · 0 need recovery · 0 summaries pending · 1 experiences"
    );
    let p = pi.call("experience/panel", json!({ "view": "runs" }));
    assert_eq!(p["runs"], json!(["R01"]));
    let p = pi.call("experience/panel", json!({ "view": "run", "run": "R01" }));
    assert_eq!(p["lines"][0], "R01 · completed");
    let d = pi.call(
        "experience/run",
        json!({ "args": "debug", "forwarding": { "events": 6, "p50Us": 4.5, "p99Us": 20.0, "maxUs": 31.0 } }),
    );
    let d = d["text"].as_str().unwrap();
    assert!(
        d.contains("journal_mode=wal · synchronous=2 · integrity ok"),
        "{d}"
    );
    assert!(d.contains("Recorder: recording into "), "{d}");
    assert!(d.contains("6 events received, 6 written"), "{d}");
    assert!(
        d.contains("Forwarding in pi: 6 events · p50 4.5 µs · p99 20.0 µs · max 31.0 µs per event"),
        "{d}"
    );

    // a run cut off by end of input: recovery_required, no end time, number and events kept
    ev(&mut pi, 9_000, json!({ "kind": "runStart" }));
    ev(
        &mut pi,
        9_001,
        json!({ "kind": "prompt", "text": "cut off" }),
    );
    assert!(pi.finish().success());
    let r2 = &cli_json(&sb, &["show", "R02"])["run"];
    assert_eq!(r2["status"], "recovery_required");
    assert_eq!(r2["endedAt"], Value::Null);
    assert_eq!(r2["events"], 2);
    let runs = cli_json(&sb, &["runs"]);
    assert_eq!(runs["runs"].as_array().unwrap().len(), 2);
}

#[test]
fn without_a_model_runs_say_why_the_summary_is_missing_and_disabled_records_nothing() {
    let sb = Sandbox::new();
    let mut pi = sb.spawn();
    pi.start(sb.start_params(json!({})));
    one_run(&mut pi, 1_000, "hello");
    let shown = run_text(&mut pi, "show R01");
    assert!(
        shown.ends_with("Summary (unavailable): no model for experience — set \"experience.model\" or \"defaults.model\" in memory.json"),
        "{shown}"
    );
    assert!(pi.finish().success());

    let sb = Sandbox::new();
    sb.config(json!({ "experience": { "enabled": false } }));
    let mut pi = sb.spawn();
    pi.start(sb.start_params(json!({})));
    one_run(&mut pi, 1_000, "hello");
    assert_eq!(
        run_text(&mut pi, "runs"),
        "Run recording is off (\"experience.enabled\": false in memory.json)."
    );
    assert!(pi.finish().success());
    assert!(!sb.memory_dir().join(".experience").exists());
}

/// PA-03 for the run log: `/experience`, its panel and `pimem experience` speak Simplified
/// Chinese with `"language": "zh-CN"` or a `zh_*` locale; what the model reads stays English.
#[test]
fn experience_texts_follow_the_language_setting_and_the_locale() {
    let sb = Sandbox::new();
    sb.config(json!({ "language": "zh-CN", "autoSurfacing": { "selector": "lexical" } }));
    let mut pi = sb.spawn();
    pi.start(sb.start_params(json!({ "sessionFile": null })));
    let panel = pi.call("experience/panel", json!({ "view": "overview" }));
    assert_eq!(panel["title"], memory_runlog::texts::ZH.panel_title);
    assert_eq!(panel["keys"], memory_runlog::texts::ZH.panel_keys);
    assert_eq!(run_text(&mut pi, "fly"), memory_runlog::texts::ZH.usage);
    one_run(&mut pi, 1_000, "deploy staging");
    let mut runs = String::new();
    for _ in 0..100 {
        runs = run_text(&mut pi, "runs");
        if runs.contains("R01") {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert!(
        runs.starts_with("运行，最新的在前（1 次中的 1 次）：\nR01   completed"),
        "{runs}"
    );
    // The experience tool's results are for the model: English.
    let tool = pi.call(
        "experience/tool",
        json!({ "toolCallId": "t1", "args": { "action": "bogus" } }),
    );
    let text = tool["text"].as_str().unwrap_or_default();
    assert!(
        !text.is_empty() && !text.chars().any(|c| ('\u{4e00}'..='\u{9fff}').contains(&c)),
        "{text}"
    );
    drop(pi);

    // The CLI: no setting, the locale decides; the setting wins over the locale.
    sb.config(json!({ "autoSurfacing": { "selector": "lexical" } }));
    let cli = |envs: &[(&str, &str)]| {
        let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_pimem"));
        c.args(["--agent-dir"])
            .arg(&sb.agent)
            .args(["experience", "runs"])
            .current_dir(&sb.project)
            .env("HOME", &sb.home)
            .env_remove("PI_CODING_AGENT_DIR")
            .env_remove("LC_ALL")
            .env_remove("LANG");
        for (k, v) in envs {
            c.env(k, v);
        }
        let out = c.output().unwrap();
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    };
    let en = cli(&[]);
    let zh = cli(&[("LANG", "zh_CN.UTF-8")]);
    let forced = cli(&[("LANG", "en_US.UTF-8"), ("LC_ALL", "zh_CN.UTF-8")]);
    assert_ne!(en, zh, "the locale changes the texts: {en} / {zh}");
    assert_eq!(zh, forced, "LC_ALL wins over LANG");
    sb.config(json!({ "language": "en", "autoSurfacing": { "selector": "lexical" } }));
    assert_eq!(
        cli(&[("LANG", "zh_CN.UTF-8")]),
        en,
        "the setting wins over the locale"
    );
}
