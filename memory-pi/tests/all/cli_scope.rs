//! `pimem --scope`, `list`/`search` across scopes, `pimem promote`, and the doctor's
//! `scope.duplicates` check (issue 16).
#![allow(clippy::unwrap_used)]

use std::process::Output;

use testkit::Sandbox;

fn pimem(sb: &Sandbox, cwd: &camino::Utf8Path, args: &[&str]) -> Output {
    sb.command(env!("CARGO_BIN_EXE_pimem"))
        .args(["--memory-dir", sb.path("mem").as_str(), "--agent-dir"])
        .arg(sb.agent_dir())
        .args(args)
        .current_dir(cwd)
        .output()
        .unwrap()
}

fn ok(sb: &Sandbox, cwd: &camino::Utf8Path, args: &[&str]) -> String {
    let out = pimem(sb, cwd, args);
    assert!(
        out.status.success(),
        "pimem {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn repo(sb: &Sandbox) -> camino::Utf8PathBuf {
    let top = sb.project();
    sb.git(&top, &["init", "-q"]);
    top
}

#[test]
fn add_with_a_scope_writes_that_scopes_directory_and_list_labels_every_entry() {
    let sb = Sandbox::new();
    let top = repo(&sb);
    ok(
        &sb,
        &top,
        &[
            "add",
            "--name",
            "Test command",
            "--content",
            "cargo xtask ci",
        ],
    );
    let project_only = ok(&sb, &top, &["list"]);
    assert!(
        project_only.starts_with("- Test command (feedback, modified "),
        "{project_only}"
    );
    ok(
        &sb,
        &top,
        &[
            "--scope",
            "user",
            "add",
            "--name",
            "Use pnpm",
            "--content",
            "pnpm, never npm",
        ],
    );
    ok(
        &sb,
        &top,
        &[
            "--scope",
            "team",
            "add",
            "--name",
            "Release",
            "--content",
            "tag then release",
        ],
    );
    assert_eq!(
        sb.read("mem/user/MEMORY.md"),
        "- [Use pnpm](Use-pnpm.md) — pnpm, never npm\n"
    );
    assert_eq!(
        sb.read("project/.pi/memory/MEMORY.md"),
        "- [Release](Release.md) — tag then release\n"
    );
    let all = ok(&sb, &top, &["list"]);
    let labels: Vec<&str> = all.lines().map(|l| l.split(']').next().unwrap()).collect();
    assert_eq!(labels, ["- [project", "- [team", "- [user"], "{all}");
    assert_eq!(ok(&sb, &top, &["--scope", "project", "list"]), project_only);
    let hits = ok(&sb, &top, &["search", "pnpm"]);
    assert_eq!(
        hits,
        "## Use pnpm\nscope: user\nfile: Use-pnpm.md\ntype: feedback\n\npnpm, never npm\n"
    );
    let json: serde_json::Value =
        serde_json::from_str(&ok(&sb, &top, &["--json", "list"])).unwrap();
    let scopes: Vec<&str> = json
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["scope"].as_str().unwrap())
        .collect();
    assert_eq!(scopes, ["project", "team", "user"]);
}

#[test]
fn team_scope_outside_a_repository_and_unknown_scopes_are_clear_errors_that_write_nothing() {
    let sb = Sandbox::new();
    let cwd = sb.project();
    let _ = (sb.agent_dir(), sb.home(), sb.git_global());
    let before = sb.tree("");
    let out = pimem(
        &sb,
        &cwd,
        &["--scope", "team", "add", "--name", "x", "--content", "y"],
    );
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("not inside a git work tree"), "{err}");
    let out = pimem(&sb, &cwd, &["--scope", "global", "list"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("unknown scope \"global\""), "{err}");
    assert_eq!(sb.tree(""), before);
}

#[test]
fn promote_moves_between_scopes_and_a_user_memory_is_seen_from_an_unrelated_project() {
    let sb = Sandbox::new();
    let top = repo(&sb);
    ok(
        &sb,
        &top,
        &["add", "--name", "Use pnpm", "--content", "pnpm, never npm"],
    );
    assert_eq!(
        ok(&sb, &top, &["promote", "Use pnpm", "--to", "user"]),
        "Moved \"Use pnpm\" (Use-pnpm.md) from project to user.\n"
    );
    let other = sb.dir("elsewhere");
    let listed = ok(&sb, &other, &["list"]);
    assert!(
        listed.starts_with("- [user] Use pnpm (feedback"),
        "{listed}"
    );
    let json: serde_json::Value = serde_json::from_str(&ok(
        &sb,
        &top,
        &["--json", "promote", "Use-pnpm.md", "--to", "team"],
    ))
    .unwrap();
    assert_eq!(json["from"], "user");
    assert_eq!(json["to"], "team");
    assert!(sb.path("project/.pi/memory/Use-pnpm.md").is_file());
    assert!(!sb.path("mem/user/Use-pnpm.md").exists());
}

#[test]
fn doctor_reports_a_memory_in_two_scopes_with_the_fix() {
    let sb = Sandbox::new();
    let cwd = sb.project();
    let doctor = |sb: &Sandbox| {
        let out = pimem(sb, &cwd, &["--json", "doctor"]);
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        v["checks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["id"] == "scope.duplicates")
            .cloned()
            .unwrap()
    };
    assert_eq!(doctor(&sb)["state"], "ok");
    ok(
        &sb,
        &cwd,
        &["add", "--name", "Use pnpm", "--content", "pnpm"],
    );
    ok(
        &sb,
        &cwd,
        &[
            "--scope",
            "user",
            "add",
            "--name",
            "Use pnpm",
            "--content",
            "pnpm",
        ],
    );
    let check = doctor(&sb);
    assert_eq!(check["state"], "warning");
    assert!(
        check["reason"]
            .as_str()
            .unwrap()
            .ends_with("Use pnpm (project, user; identical)"),
        "{check}"
    );
    assert!(
        check["fix"].as_str().unwrap().contains("pimem promote"),
        "{check}"
    );
    // Promoting again finishes the move: only the old copy goes.
    ok(&sb, &cwd, &["promote", "Use pnpm", "--to", "user"]);
    assert_eq!(doctor(&sb)["state"], "ok");
}

#[test]
fn section_per_scope_the_team_one_only_with_trust_and_memory_index_unchanged() {
    let sb = Sandbox::new();
    let top = repo(&sb);
    ok(
        &sb,
        &top,
        &[
            "add",
            "--name",
            "Test command",
            "--content",
            "cargo xtask ci",
        ],
    );
    let before = ok(&sb, &top, &["section"]);
    assert_eq!(
        before,
        "- [Test command](Test-command.md) — cargo xtask ci\n"
    );
    ok(
        &sb,
        &top,
        &[
            "--scope",
            "user",
            "add",
            "--name",
            "Use pnpm",
            "--content",
            "pnpm",
        ],
    );
    ok(
        &sb,
        &top,
        &[
            "--scope",
            "team",
            "add",
            "--name",
            "Deploy",
            "--content",
            "make deploy",
        ],
    );
    assert_eq!(
        ok(&sb, &top, &["section"]),
        before,
        "memory_index is the project's alone"
    );
    let user = ok(&sb, &top, &["--scope", "user", "section"]);
    assert!(user.starts_with("User memory: "), "{user}");
    assert!(
        user.ends_with("\n- [Use pnpm](Use-pnpm.md) — pnpm\n"),
        "{user}"
    );
    let out = pimem(&sb, &top, &["--scope", "team", "section"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--trust-project"));
    let team = ok(
        &sb,
        &top,
        &["--trust-project", "--scope", "team", "section"],
    );
    assert!(
        team.starts_with("Team memory: written by other contributors"),
        "{team}"
    );
    assert!(
        team.ends_with("\n- [Deploy](Deploy.md) — make deploy\n"),
        "{team}"
    );
}
