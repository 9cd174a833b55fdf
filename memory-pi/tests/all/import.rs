//! `pimem import` and `pimem export`: fixtures laid out like Claude Code's and pi-memory's
//! directories (odd YAML: block-scalar descriptions, quoted colons, unknown fields, a BOM,
//! CRLF), golden results as insta snapshots, idempotence, dry runs, an untouched source.
#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;
use std::process::Command;

use memory_core::{AddRequest, Store, StoreOptions};
use memory_pi::export::{self, Format};
use memory_pi::import::{self, Action, SourceKind};
use testkit::{Sandbox, entry_text, stepping_clock};

fn store(sandbox: &Sandbox) -> Store {
    Store::new(
        sandbox.path("memory/local/proj"),
        StoreOptions {
            clock: stepping_clock(),
            ..StoreOptions::default()
        },
    )
}

fn write(path: &Path, text: &str) {
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, text).unwrap();
}

/// Every file under `dir` (relative path → bytes), to snapshot or compare.
fn files(dir: &Path) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            let rel = p.strip_prefix(dir).unwrap().to_string_lossy().into_owned();
            if rel.starts_with(".backups") {
                continue;
            }
            if p.is_dir() {
                stack.push(p);
            } else {
                out.insert(
                    rel,
                    String::from_utf8_lossy(&fs::read(&p).unwrap()).into_owned(),
                );
            }
        }
    }
    out
}

fn render(files: &BTreeMap<String, String>) -> String {
    files
        .iter()
        .map(|(k, v)| format!("===== {k}\n{v}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// A Claude Code auto-memory project directory (`~/.claude/projects/<p>/`).
fn claude_code_fixture(sandbox: &Sandbox) -> std::path::PathBuf {
    let project = sandbox.dir("claude/projects/-home-me-proj");
    let mem = project.join("memory");
    write(
        mem.join("MEMORY.md").as_std_path(),
        "# Memory Index\n\n- [Deploy: staging](deploy_staging.md) — staging deploys need the VPN\n- [User role](user_role.md) — senior Rust developer\n- [Gone](gone.md) — a link whose file was deleted\n\nThe CI runner is flaky on Mondays: re-run once before debugging.\n",
    );
    // BOM, CRLF, a quoted colon, a folded multi-line description, an unknown field.
    write(
        mem.join("deploy_staging.md").as_std_path(),
        "\u{feff}---\r\nname: \"Deploy: staging\"\r\ndescription: >\r\n  Staging deploys need the VPN\r\n  and a fresh token.\r\ntype: project\r\noriginSessionId: 7f3c\r\n---\r\n\r\nRun `make deploy-staging` only with the VPN up.\r\n\r\n- step one\r\n- step two\r\n",
    );
    // The type under `metadata:`, a single-quoted colon, a list-valued unknown field.
    write(
        mem.join("user_role.md").as_std_path(),
        "---\nname: User role\ndescription: 'The user: a senior Rust developer'\nmetadata:\n  type: user\n  tags: [rust, cli]\n---\nPrefers small commits and `cargo xtask ci` before pushing.\n",
    );
    // A literal block description, a date-typed `created`, an unknown type.
    write(
        mem.join("literal.md").as_std_path(),
        "---\nname: Literal block\ndescription: |\n  first line\n  second line\ntype: note\ncreated: 2025-03-04T10:11:12Z\n---\nBody with a --- rule inside\n\n---\n\nand more.\n",
    );
    write(
        mem.join("no_frontmatter.md").as_std_path(),
        "Plain note: the staging DB is read-only on Sundays.\n",
    );
    write(
        mem.join("secret.md").as_std_path(),
        "---\nname: AWS access\ndescription: how we reach AWS\ntype: reference\n---\nkey AKIAIOSFODNN7EXAMPLE is the CI user\n",
    );
    write(
        mem.join("broken.md").as_std_path(),
        "---\nname: [unclosed\n---\nbody\n",
    );
    write(mem.join("notes.txt").as_std_path(), "not markdown\n");
    project.into_std_path_buf()
}

#[test]
fn claude_code_golden() {
    let sandbox = Sandbox::new();
    let source = claude_code_fixture(&sandbox);
    let before = files(&source);
    let store = store(&sandbox);
    let scan = SourceKind::ClaudeCode.source().scan(&source).unwrap();
    assert!(scan.root.ends_with("memory"), "descends into memory/");
    let mut items = import::plan(&store, &scan).unwrap();
    import::apply(&store, &mut items, false);
    let report = import::report_text(memory_core::Language::En, &items, false);
    insta::assert_snapshot!("claude_code_report", report);
    insta::assert_snapshot!(
        "claude_code_store",
        render(&files(store.dir().as_std_path()))
    );
    assert_eq!(files(&source), before, "the source is never modified");
    // Bodies byte for byte (line endings normalised, outer whitespace trimmed).
    let deploy = store.read("Deploy: staging").unwrap().unwrap();
    assert_eq!(
        deploy.body,
        "Run `make deploy-staging` only with the VPN up.\n\n- step one\n- step two"
    );
    assert_eq!(
        deploy.meta.description,
        "Staging deploys need the VPN and a fresh token."
    );
    // The secret is refused and never echoed.
    assert!(report.contains("refused    secret.md: the content contains what looks like"));
    assert!(!report.contains("AKIAIOSFODNN7EXAMPLE"));
    assert!(store.read("AWS access").unwrap().is_none());
}

#[test]
fn import_is_idempotent_and_a_dry_run_writes_nothing() {
    let sandbox = Sandbox::new();
    let source = claude_code_fixture(&sandbox);
    let store = store(&sandbox);
    let scan = SourceKind::ClaudeCode.source().scan(&source).unwrap();

    let mut dry = import::plan(&store, &scan).unwrap();
    import::apply(&store, &mut dry, true);
    assert!(
        files(store.dir().as_std_path()).is_empty(),
        "dry run wrote nothing"
    );
    let dry_report = import::report_text(memory_core::Language::En, &dry, true);
    assert!(dry_report.contains("would add  \"Deploy: staging\" <- deploy_staging.md"));
    assert!(
        dry_report.ends_with("(dry run: nothing written).\n"),
        "{dry_report}"
    );

    let mut first = import::plan(&store, &scan).unwrap();
    import::apply(&store, &mut first, false);
    let after_first = files(store.dir().as_std_path());
    let mut second = import::plan(&store, &scan).unwrap();
    import::apply(&store, &mut second, false);
    assert_eq!(
        files(store.dir().as_std_path()),
        after_first,
        "a re-run changes nothing"
    );
    for item in &second {
        assert!(
            !matches!(item.action, Action::Add),
            "{} would be added again",
            item.origin
        );
    }
    let unchanged = second
        .iter()
        .filter(|i| i.action == Action::Unchanged)
        .count();
    assert_eq!(
        unchanged,
        5,
        "{}",
        import::report_text(memory_core::Language::En, &second, false)
    );
}

#[test]
fn an_existing_memory_with_other_content_is_kept() {
    let sandbox = Sandbox::new();
    let source = claude_code_fixture(&sandbox);
    let store = store(&sandbox);
    store
        .add(AddRequest {
            name: "User role".into(),
            body: "edited here since the last import".into(),
            ..AddRequest::default()
        })
        .unwrap();
    let scan = SourceKind::ClaudeCode.source().scan(&source).unwrap();
    let mut items = import::plan(&store, &scan).unwrap();
    import::apply(&store, &mut items, false);
    let role = items.iter().find(|i| i.origin == "user_role.md").unwrap();
    assert_eq!(role.action, Action::Kept);
    assert_eq!(
        store.read("User role").unwrap().unwrap().body,
        "edited here since the last import"
    );
}

/// pi-memory's nested layout of a pre-2.5 Windows local key (`C:\Users\me\proj` became
/// `local/C_3a/Users/me/proj/` on disk).
fn windows_nested_fixture(sandbox: &Sandbox) -> std::path::PathBuf {
    let root = sandbox.dir("old-memory/local/C_3a");
    let leaf = root.join("Users/me/proj");
    write(
        leaf.join("MEMORY.md").as_std_path(),
        "# Memory Index\n\n- [Build on Windows](Build-on-Windows.md) — use the x64 Native Tools prompt\n- [Ports: dev](Ports_-dev.md) — api: 8080, web: 3000\n",
    );
    write(
        leaf.join("Build-on-Windows.md").as_std_path(),
        &entry_text(
            "Build on Windows",
            "use the x64 Native Tools prompt",
            "project",
            "2024-01-02T03:04:05.000Z",
            "Open the x64 Native Tools prompt, then `cargo build`.",
        ),
    );
    // Raw values with colons: pi-memory's codec, not YAML.
    write(
        leaf.join("Ports_-dev.md").as_std_path(),
        &entry_text(
            "Ports: dev",
            "api: 8080, web: 3000",
            "reference",
            "2024-01-03T00:00:00.000Z",
            "api listens on 8080\nweb on 3000",
        )
        .replace('\n', "\r\n"),
    );
    write(
        leaf.join("1x-topic.md").as_std_path(),
        "---\nname: old topic\nupdated: 2023-01-01\n---\nfrom pi-memory 1.x\n",
    );
    write(
        leaf.join(".backups/x/Build-on-Windows.md").as_std_path(),
        "old",
    );
    sandbox.path("old-memory").into_std_path_buf()
}

#[test]
fn pi_memory_windows_nested_layout_golden() {
    let sandbox = Sandbox::new();
    let source = windows_nested_fixture(&sandbox);
    let before = files(&source);
    let store = store(&sandbox);
    let scan = SourceKind::PiMemory.source().scan(&source).unwrap();
    assert!(
        scan.root.ends_with("local/C_3a/Users/me/proj"),
        "{}",
        scan.root.display()
    );
    let mut items = import::plan(&store, &scan).unwrap();
    import::apply(&store, &mut items, false);
    insta::assert_snapshot!(
        "pi_memory_report",
        import::report_text(memory_core::Language::En, &items, false)
    );
    insta::assert_snapshot!("pi_memory_store", render(&files(store.dir().as_std_path())));
    assert_eq!(files(&source), before, "the source is never modified");
}

#[test]
fn pi_memory_orphaned_directory_and_ambiguous_parents() {
    let sandbox = Sandbox::new();
    // A directory orphaned by a renamed remote: `git/<old name>/`.
    let old = sandbox.dir("mem/git/github.com__me__old-name");
    write(
        old.join("Old-fact.md").as_std_path(),
        &entry_text(
            "Old fact",
            "kept across the rename",
            "project",
            "2024-01-01T00:00:00.000Z",
            "still true",
        ),
    );
    let store = store(&sandbox);
    let scan = SourceKind::PiMemory
        .source()
        .scan(old.as_std_path())
        .unwrap();
    let mut items = import::plan(&store, &scan).unwrap();
    import::apply(&store, &mut items, false);
    let e = store.read("Old fact").unwrap().unwrap();
    assert_eq!(
        (e.body.as_str(), e.meta.created.as_str()),
        ("still true", "2026-10-01")
    );
    // The memory root with two project directories: which one is meant is not guessed.
    let other = sandbox.dir("mem/git/github.com__me__other");
    write(
        other.join("X.md").as_std_path(),
        &entry_text("X", "x", "user", "2024-01-01T00:00:00.000Z", "x"),
    );
    let err = SourceKind::PiMemory
        .source()
        .scan(sandbox.path("mem").as_std_path())
        .unwrap_err()
        .to_string();
    assert!(err.contains("several memory directories"), "{err}");
    assert!(err.contains("old-name") && err.contains("other"), "{err}");
    let err = SourceKind::Dir
        .source()
        .scan(sandbox.path("missing").as_std_path())
        .unwrap_err()
        .to_string();
    assert!(err.contains("not a directory"), "{err}");
}

#[test]
fn export_golden() {
    let sandbox = Sandbox::new();
    let store = store(&sandbox);
    for (name, body) in [
        ("Test command", "Run `cargo xtask ci` before pushing."),
        (
            "Staging SSH",
            "staging SSH listens on 2222, not 22.\n\n## Why\n\nfirewall",
        ),
    ] {
        store
            .add(AddRequest {
                name: name.into(),
                body: body.into(),
                ..AddRequest::default()
            })
            .unwrap();
    }
    let dir = store.dir().to_string();
    let json = export::export(&store, Format::Json)
        .unwrap()
        .replace(&dir, "<dir>");
    insta::assert_snapshot!("export_json", json);
    let md = export::export(&store, Format::Markdown)
        .unwrap()
        .replace(&dir, "<dir>");
    insta::assert_snapshot!("export_markdown", md);
    let parsed: serde_json::Value =
        serde_json::from_str(&export::export(&store, Format::Json).unwrap()).unwrap();
    assert_eq!(parsed["entries"].as_array().unwrap().len(), 2);
}

/// The CLI: `--dry-run`, `--json`, `--out` (mode 0600) and a bad `--from`.
#[test]
fn cli_import_and_export() {
    let sandbox = Sandbox::new();
    let source = claude_code_fixture(&sandbox);
    let proj = sandbox.dir("proj");
    let mem = sandbox.path("pimem-memory");
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_pimem"))
            .args(["--cwd", proj.as_str(), "--memory-dir", mem.as_str()])
            .args(["--agent-dir", sandbox.path("agent").as_str()])
            .args(args)
            .env("HOME", sandbox.home())
            .output()
            .unwrap()
    };
    let src = source.to_str().unwrap();
    let dry = run(&["import", "--from", "claude-code", src, "--dry-run"]);
    assert!(
        dry.status.success(),
        "{}",
        String::from_utf8_lossy(&dry.stderr)
    );
    let out = String::from_utf8(dry.stdout).unwrap();
    assert!(out.contains("Would import 5 memories"), "{out}");
    assert!(!mem.exists(), "a dry run creates nothing");

    // Memory off (PA-15): the import is refused as a whole and writes nothing.
    assert!(run(&["off"]).status.success());
    let off = run(&["import", "--from", "claude-code", src]);
    assert!(!off.status.success());
    assert!(
        String::from_utf8_lossy(&off.stderr).contains("Memory is off"),
        "{}",
        String::from_utf8_lossy(&off.stderr)
    );
    assert!(!mem.exists(), "nothing imported while memory is off");
    assert!(run(&["on"]).status.success());

    let real = run(&["--json", "import", "--from", "claude-code", src]);
    assert!(real.status.success());
    let report: serde_json::Value = serde_json::from_slice(&real.stdout).unwrap();
    let actions: Vec<&str> = report["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["action"].as_str().unwrap())
        .collect();
    assert_eq!(
        actions.iter().filter(|a| **a == "add").count(),
        5,
        "{report}"
    );
    assert_eq!(actions.iter().filter(|a| **a == "refused").count(), 1);
    assert!(
        report
            .to_string()
            .contains("AWS access key at line 1, column 5"),
        "the refusal names the kind and the position: {report}"
    );
    assert!(!report.to_string().contains("AKIAIOSFODNN7EXAMPLE"));

    let listed = run(&["list"]);
    assert!(
        String::from_utf8_lossy(&listed.stdout).contains("- Deploy: staging (project, modified ")
    );

    let file = sandbox.path("backup.json");
    let exported = run(&["export", "--format", "json", "--out", file.as_str()]);
    assert!(
        exported.status.success(),
        "{}",
        String::from_utf8_lossy(&exported.stderr)
    );
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(
        fs::metadata(&file).unwrap().permissions().mode() & 0o777,
        0o600
    );
    let doc: serde_json::Value = serde_json::from_str(&fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(doc["entries"].as_array().unwrap().len(), 5);
    let md = run(&["export", "--format", "markdown"]);
    assert!(String::from_utf8_lossy(&md.stdout).starts_with("# Project memory\n"));

    let bad = run(&["import", "--from", "notion", src]);
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("unknown source \"notion\""));
    let bad = run(&["export", "--format", "yaml"]);
    assert!(String::from_utf8_lossy(&bad.stderr).contains("expected json or markdown"));
}
