//! `pimem import --from pi-auto-memory`: fixtures laid out like pi-auto-memory's project
//! directories (`<agentDir>/memory/<git-|cwd-><sha256>/`, PA-05..PA-09): found by the git
//! identity (from a worktree too) and the cwd identity (a symlinked alias shares it, a child
//! does not), nested topics, a secret in one topic, dry run, re-run idempotence, the source
//! unchanged byte for byte.
#![allow(clippy::unwrap_used)]

use std::path::Path;
use std::process::Output;

use sha2::{Digest, Sha256};
use testkit::Sandbox;

/// The project id pi-auto-memory gives an identity path (full lowercase hex).
fn project_id(prefix: &str, identity: &Path) -> String {
    let digest = Sha256::digest(identity.to_str().unwrap().as_bytes());
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    format!("{prefix}{hex}")
}

/// Runs pimem in `cwd` with the sandbox's agent directory and a memory directory of its own.
fn pimem(sandbox: &Sandbox, cwd: &Path, args: &[&str]) -> Output {
    sandbox
        .command(env!("CARGO_BIN_EXE_pimem"))
        .args(["--cwd", cwd.to_str().unwrap()])
        .args(["--memory-dir", sandbox.path("pimem-memory").as_str()])
        .args(["--agent-dir", sandbox.path("agent").as_str()])
        .args(args)
        .env("GIT_CEILING_DIRECTORIES", sandbox.root())
        .output()
        .unwrap()
}

fn stdout_ok(out: &Output) -> String {
    assert!(
        out.status.success(),
        "stdout: {}\nstderr: {}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout.clone()).unwrap()
}

/// A pi-auto-memory project directory: an index with link lines (one to a nested topic),
/// a note written straight into the index, a topic with frontmatter, one without, and one
/// holding a secret.
fn fixture(sandbox: &Sandbox, id: &str) -> String {
    let dir = format!("agent/memory/{id}");
    sandbox.write(
        &format!("{dir}/MEMORY.md"),
        "# Memory\n\n- [Build commands](build.md) — cargo xtask ci runs everything\n- [Staging deploy](deploy/staging.md): needs the VPN up\n- [Tokens](tokens.md) — where the deploy token lives\n\nThe CI runner is flaky on Mondays.\n",
    );
    sandbox.write(
        &format!("{dir}/build.md"),
        "Run `cargo xtask ci` before pushing.\n",
    );
    sandbox.write(
        &format!("{dir}/deploy/staging.md"),
        "---\ntype: project\n---\n\nStaging deploys need the VPN and `make deploy-staging`.\n",
    );
    sandbox.write(
        &format!("{dir}/tokens.md"),
        "The deploy key is AKIAIOSFODNN7EXAMPLE, keep it safe.\n",
    );
    sandbox.write(
        &format!("{dir}/notes/unlisted.md"),
        "A topic the index does not list.\n",
    );
    dir
}

#[test]
fn git_identity_from_a_worktree_nested_topics_secret_dry_run_and_rerun() {
    let sandbox = Sandbox::new();
    let repo = sandbox.dir("repo");
    sandbox.git(&repo, &["init", "-q"]);
    sandbox.write("repo/README", "x");
    sandbox.git(&repo, &["add", "README"]);
    sandbox.git(&repo, &["commit", "-q", "-m", "init"]);
    sandbox.git(&repo, &["worktree", "add", "-q", "../repo-wt"]);
    // PA-07: the realpath of the common git directory, shared by the worktree.
    let id = project_id("git-", repo.join(".git").as_std_path());
    let dir = fixture(&sandbox, &id);
    let before = sandbox.tree(&dir);
    let wt_sub = sandbox.dir("repo-wt/src");

    let dry = stdout_ok(&pimem(
        &sandbox,
        wt_sub.as_std_path(),
        &["import", "--from", "pi-auto-memory", "--dry-run"],
    ));
    assert!(
        dry.contains("would add  \"Staging deploy\" <- deploy/staging.md"),
        "{dry}"
    );
    assert!(
        dry.contains("would add  \"notes/unlisted\" <- notes/unlisted.md"),
        "{dry}"
    );
    assert!(
        dry.contains("refused    tokens.md: the content contains what looks like a AWS access key"),
        "{dry}"
    );
    assert!(!dry.contains("AKIAIOSFODNN7EXAMPLE"), "{dry}");
    assert!(
        dry.contains("Would import 4 memories, 0 unchanged, 0 kept, 1 refused"),
        "{dry}"
    );
    assert!(
        !sandbox.path("pimem-memory").exists(),
        "a dry run writes nothing"
    );

    let real = pimem(
        &sandbox,
        wt_sub.as_std_path(),
        &["--json", "import", "--from", "pi-auto-memory"],
    );
    let report: serde_json::Value = serde_json::from_str(&stdout_ok(&real)).unwrap();
    assert!(!report.to_string().contains("AKIAIOSFODNN7EXAMPLE"));
    assert_eq!(
        report["root"].as_str().unwrap(),
        sandbox.path(&dir).as_str(),
        "{report}"
    );
    let stderr = String::from_utf8_lossy(&real.stderr);
    assert!(!stderr.contains("AKIAIOSFODNN7EXAMPLE"), "{stderr}");

    // topic -> one memory; its index line -> description.
    let shown = stdout_ok(&pimem(
        &sandbox,
        wt_sub.as_std_path(),
        &["--json", "show", "Staging deploy"],
    ));
    assert!(shown.contains("needs the VPN up"), "{shown}");
    assert!(shown.contains("make deploy-staging"), "{shown}");
    let listed = stdout_ok(&pimem(&sandbox, wt_sub.as_std_path(), &["list"]));
    assert!(
        listed.contains("- Build commands (") && listed.contains("- Staging deploy (project"),
        "{listed}"
    );
    assert!(
        listed.contains("Notes from the imported index"),
        "the index's own note is kept: {listed}"
    );
    assert!(!listed.contains("Tokens"), "the secret topic is refused");

    // Re-run: nothing new, nothing rewritten.
    let memory_before = sandbox.tree("pimem-memory");
    let again = stdout_ok(&pimem(
        &sandbox,
        wt_sub.as_std_path(),
        &["import", "--from", "pi-auto-memory"],
    ));
    assert!(
        again.contains("Imported 0 memories, 4 unchanged, 0 kept, 1 refused"),
        "{again}"
    );
    assert_eq!(sandbox.tree("pimem-memory"), memory_before);
    // The main work tree finds the same directory as its worktree (PA-07).
    let from_main: serde_json::Value = serde_json::from_str(&stdout_ok(&pimem(
        &sandbox,
        repo.as_std_path(),
        &["--json", "import", "--from", "pi-auto-memory", "--dry-run"],
    )))
    .unwrap();
    assert_eq!(from_main["root"], report["root"], "{from_main}");
    // The source is never modified.
    assert_eq!(sandbox.tree(&dir), before);
}

#[test]
fn cwd_identity_aliases_share_children_do_not_and_dir_overrides() {
    let sandbox = Sandbox::new();
    let proj = sandbox.dir("plain/proj");
    let child = sandbox.dir("plain/proj/child");
    std::os::unix::fs::symlink(proj.as_std_path(), sandbox.path("alias")).unwrap();
    // Decision: a truncated hash (length not pinned by the spec) is accepted as a prefix.
    let full = project_id("cwd-", proj.as_std_path());
    let dir = fixture(&sandbox, &full[..4 + 16]);

    let via_alias = stdout_ok(&pimem(
        &sandbox,
        sandbox.path("alias").as_std_path(),
        &["import", "--from", "pi-auto-memory", "--dry-run"],
    ));
    assert!(via_alias.contains("Would import 4 memories"), "{via_alias}");

    let from_child = pimem(
        &sandbox,
        child.as_std_path(),
        &["import", "--from", "pi-auto-memory", "--dry-run"],
    );
    assert!(!from_child.status.success());
    let err = String::from_utf8_lossy(&from_child.stderr);
    assert!(
        err.contains("no pi-auto-memory directory for this project") && err.contains("--dir"),
        "{err}"
    );

    let with_dir = stdout_ok(&pimem(
        &sandbox,
        child.as_std_path(),
        &[
            "import",
            "--from",
            "pi-auto-memory",
            "--dir",
            sandbox.path(&dir).as_str(),
        ],
    ));
    assert!(with_dir.contains("Imported 4 memories"), "{with_dir}");
}

#[test]
fn a_bare_repository_is_refused_not_guessed() {
    let sandbox = Sandbox::new();
    let bare = sandbox.dir("bare.git");
    sandbox.git(&bare, &["init", "-q", "--bare"]);
    let out = pimem(
        &sandbox,
        bare.as_std_path(),
        &["import", "--from", "pi-auto-memory", "--dry-run"],
    );
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("bare git repository"), "{err}");
    let other = pimem(&sandbox, bare.as_std_path(), &["import", "--from", "dir"]);
    assert!(!other.status.success());
    assert!(
        String::from_utf8_lossy(&other.stderr).contains("needs the source directory"),
        "{}",
        String::from_utf8_lossy(&other.stderr)
    );
}

#[test]
fn the_report_is_in_chinese_with_language_zh_cn() {
    let sandbox = Sandbox::new();
    let proj = sandbox.dir("plain/proj");
    let dir = fixture(&sandbox, &project_id("cwd-", proj.as_std_path()));
    sandbox.write("agent/memory.json", r#"{"language": "zh-CN"}"#);
    let out = pimem(
        &sandbox,
        proj.as_std_path(),
        &["import", "--from", "pi-auto-memory", "--dry-run"],
    );
    let report = stdout_ok(&out);
    assert!(
        report.contains("将添加    \"Staging deploy\" <- deploy/staging.md"),
        "{report}"
    );
    // The field name and the secret's kind stay English (PA-03: error classes); never the value.
    assert!(
        report.contains(
            "拒绝      tokens.md：content 第 1 行第 19 列疑似包含 AWS access key，未导入"
        ),
        "{report}"
    );
    assert!(!report.contains("AKIAIOSFODNN7EXAMPLE"), "{report}");
    assert!(
        report.contains("将导入 4 条记忆，0 条未变，0 条保留，1 条拒绝，0 条跳过，0 条失败（试运行：未写入任何内容）。"),
        "{report}"
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!("pimem：从 {} 导入", sandbox.path(&dir))),
        "{stderr}"
    );
}
