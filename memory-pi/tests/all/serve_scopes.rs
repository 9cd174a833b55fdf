//! The user and team sections through the sidecar (issue 16): none with project memories
//! only, `memory_user` always, `memory_team` only when trusted, recorded when fresh and
//! replayed (never on `new`).

use std::fs;
use std::process::Command;

use serde_json::{Value, json};

use super::Sandbox;

fn add(sb: &Sandbox, scope: &str, name: &str) {
    let out = Command::new(env!("CARGO_BIN_EXE_pimem"))
        .args([
            "--scope",
            scope,
            "add",
            "--name",
            name,
            "--content",
            "body <b>",
            "--agent-dir",
        ])
        .arg(&sb.agent)
        .current_dir(&sb.project)
        .env("HOME", &sb.home)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env_remove("PI_CODING_AGENT_DIR")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn names(r: &Value) -> Vec<String> {
    r["scopeSections"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn scope_sections_follow_trust_are_recorded_when_fresh_and_replayed() {
    let sb = Sandbox::new();
    let git = Command::new("git")
        .args(["init", "-q"])
        .current_dir(&sb.project)
        .env("HOME", &sb.home)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .status()
        .unwrap();
    assert!(git.success());
    add(&sb, "project", "Only project");
    let mut pi = sb.spawn();
    let r = pi.start(sb.start_params(json!({})));
    assert_eq!(
        r["scopeSections"],
        json!([]),
        "project memories only: no extra section"
    );
    assert_eq!(r["scopeRecord"], Value::Null, "and nothing recorded");
    pi.finish();

    add(&sb, "user", "Mine");
    add(&sb, "team", "Ours");
    let mut pi = sb.spawn();
    let r = pi.start(sb.start_params(json!({ "trusted": false })));
    assert_eq!(names(&r), ["memory_user"], "untrusted: no team section");
    let user = r["scopeSections"][0]["value"].as_str().unwrap().to_owned();
    assert!(user.starts_with("User memory: "), "{user}");
    assert!(
        user.ends_with("- [Mine](Mine.md) — body &lt;b&gt;\n"),
        "sanitised: {user}"
    );
    pi.finish();

    let mut pi = sb.spawn();
    let r = pi.start(sb.start_params(json!({ "trusted": true })));
    assert_eq!(names(&r), ["memory_team", "memory_user"]);
    let team = r["scopeSections"][0]["value"].as_str().unwrap();
    assert!(
        team.starts_with("Team memory: written by other contributors"),
        "{team}"
    );
    assert_eq!(r["scopeRecord"]["sections"], r["scopeSections"]);
    let recorded = r["scopeRecord"].clone();
    pi.finish();

    // The user memory changes; a continued session keeps its recorded sections, a new one
    // reads them again.
    fs::remove_file(sb.home.join(".pi/memory/user/Mine.md")).unwrap();
    fs::remove_file(sb.home.join(".pi/memory/user/MEMORY.md")).unwrap();
    for reason in ["startup", "resume", "fork", "reload"] {
        let mut pi = sb.spawn();
        let r = pi.start(sb.start_params(json!({ "reason": reason, "recordedScopes": recorded })));
        assert_eq!(r["scopeSections"], recorded["sections"], "{reason}");
        assert_eq!(r["scopeRecord"], Value::Null, "{reason}");
        pi.finish();
    }
    let mut pi = sb.spawn();
    let r = pi.start(sb.start_params(json!({ "reason": "new", "recordedScopes": recorded })));
    assert_eq!(names(&r), ["memory_team"], "/new reads the scopes again");
    pi.finish();
}
