//! The `pimem` CLI end to end: tool texts on stdout, errors on stderr with exit 1, rejected
//! input leaves the disk unchanged, memory.json layering, `--json`.
#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

struct Env {
    _tmp: tempfile::TempDir,
    home: PathBuf,
    proj: PathBuf,
}

impl Env {
    fn new() -> Self {
        let tmp = tempfile::tempdir().unwrap();
        let root = fs::canonicalize(tmp.path()).unwrap();
        let home = root.join("home");
        let proj = root.join("proj");
        fs::create_dir_all(home.join(".pi/agent")).unwrap();
        fs::create_dir_all(&proj).unwrap();
        Env {
            _tmp: tmp,
            home,
            proj,
        }
    }

    fn run(&self, args: &[&str]) -> Output {
        self.run_stdin(args, None)
    }

    fn run_stdin(&self, args: &[&str], stdin: Option<&str>) -> Output {
        let mut child = Command::new(env!("CARGO_BIN_EXE_pimem"))
            .args(args)
            .current_dir(&self.proj)
            .env("HOME", &self.home)
            .env_remove("PI_CODING_AGENT_DIR")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut input = child.stdin.take().unwrap();
        if let Some(text) = stdin {
            input.write_all(text.as_bytes()).unwrap();
        }
        drop(input);
        child.wait_with_output().unwrap()
    }

    fn ok(&self, args: &[&str]) -> String {
        let out = self.run(args);
        assert!(
            out.status.success(),
            "pimem {args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    }

    fn fail(&self, args: &[&str]) -> String {
        let out = self.run(args);
        assert_eq!(out.status.code(), Some(1), "pimem {args:?} should fail");
        assert!(out.stdout.is_empty(), "errors never go to stdout");
        String::from_utf8(out.stderr).unwrap()
    }

    fn mem_dir(&self) -> PathBuf {
        PathBuf::from(self.ok(&["dir"]).trim_end())
    }
}

fn tree(root: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    if let Ok(rd) = fs::read_dir(root) {
        for e in rd {
            let p = e.unwrap().path();
            if p.is_dir() {
                out.extend(tree(&p));
            } else {
                out.insert(p.clone(), fs::read(&p).unwrap());
            }
        }
    }
    out
}

#[test]
fn texts_of_every_command() {
    let env = Env::new();
    let dir = env.mem_dir();
    assert!(dir.ends_with(format!(
        "local/{}",
        env.proj.to_string_lossy().trim_start_matches('/').replace('/', "__")
    )));
    assert_eq!(env.ok(&["list"]), "No memories yet.\n");
    assert_eq!(
        env.ok(&[
            "add",
            "--name",
            "A",
            "--content",
            "alpha body.",
            "--description",
            "desc a"
        ]),
        "Saved \"A\" (A.md).\n"
    );
    assert_eq!(
        fs::read_to_string(dir.join("MEMORY.md")).unwrap(),
        "- [A](A.md) — desc a\n"
    );
    assert_eq!(
        env.run_stdin(
            &["add", "--name", "B", "--content", "-"],
            Some("from stdin\n")
        )
        .status
        .code(),
        Some(0)
    );
    assert!(
        env.ok(&["search", "STDIN"])
            .starts_with("## B\nfile: B.md\ntype: feedback\n\nfrom stdin")
    );
    assert_eq!(
        env.ok(&["search", "nothing-here"]),
        "No matches in memory.\n"
    );
    assert_eq!(
        env.ok(&["replace", "--name", "A", "--content", "new body"]),
        "Replaced \"A\" (A.md).\n"
    );
    assert_eq!(
        env.ok(&["rename", "--name", "A", "--new-name", "A2"]),
        "Renamed \"A\" → \"A2\" (A2.md).\n"
    );
    assert_eq!(env.ok(&["remove", "--name", "B"]), "Removed \"B\".\n");
    assert_eq!(
        env.ok(&["rebuild-index"]),
        "Rebuilt index: 1 entries (2 header lines).\n"
    );
    assert_eq!(
        env.ok(&["section"]),
        "# Memory Index\n\n- [A2](A2.md) — new body\n"
    );
    let status = env.ok(&["status"]);
    let lines: Vec<&str> = status.lines().collect();
    assert_eq!(lines.len(), 7, "{status}");
    assert_eq!(lines[0], format!("Dir: {}", dir.display()));
    assert_eq!(
        lines[1],
        "Index: 2/200 lines, 43/25600 bytes, 1 unrecognized lines"
    );
    assert_eq!(lines[2], "Inject: 3/50 lines, 43/16384 bytes");
    assert_eq!(lines[3], "Entries: 1");
    assert_eq!(
        lines[4],
        "Modules: dream=off(no model) extractMemories=off autoSurfacing=on(lexical)"
    );
    assert_eq!(lines[5], "Last dream: never");
    assert_eq!(lines[6], "Lock: free");
    assert_eq!(env.ok(&["unlock"]), "No lock present.\n");
}

#[test]
fn errors_go_to_stderr_and_change_nothing() {
    let env = Env::new();
    env.ok(&["add", "--name", "A", "--content", "a"]);
    let dir = env.mem_dir();
    let before = tree(&dir);
    let cases: &[(&[&str], &str)] = &[
        (&["remove", "--name", "nope"], "Entry \"nope\" not found"),
        (
            &["add", "--name", "  ", "--content", "x"],
            "name is required",
        ),
        (
            &["add", "--name", "x", "--content", "  "],
            "body is required",
        ),
        (
            &["add", "--name", "a\nb", "--content", "x"],
            "name must be a single line",
        ),
        (
            &["add", "--name", "x", "--content", "y", "--type", "bogus"],
            "type must be one of: user, feedback, project, reference",
        ),
        (&["rename", "--name", "A", "--new-name", "A"], ""),
        (&["replace", "--name", "A"], "nothing to replace"),
        (
            &[
                "add",
                "--name",
                "k",
                "--content",
                "AKIAIOSFODNN7EXAMPLE is the key",
            ],
            "AWS access key",
        ),
        (&["search", " "], "query is required for search"),
        (
            &[
                "replace",
                "--name",
                "A",
                "--content",
                "x",
                "--expect-version",
                "0000",
            ],
            "invalid version \"0000\": expected 16 hexadecimal digits",
        ),
        (
            &[
                "replace",
                "--name",
                "A",
                "--content",
                "x",
                "--expect-version",
                "00000000000000ff",
            ],
            "Memory conflict: stale version",
        ),
        (
            &["remove", "--name", "A", "--expect-version", "xyz"],
            "invalid version \"xyz\"",
        ),
    ];
    for (args, message) in cases {
        if args[0] == "rename" {
            continue; // renaming onto itself is a no-op write, checked elsewhere
        }
        let err = env.fail(args);
        assert!(err.contains(message), "{args:?}: {err}");
        assert!(
            !err.contains("AKIAIOSFODNN7EXAMPLE"),
            "secret echoed: {err}"
        );
        assert_eq!(tree(&dir), before, "{args:?} changed the disk");
    }
}

#[test]
fn memory_json_layers_and_trust() {
    let env = Env::new();
    fs::write(
        env.home.join(".pi/agent/memory.json"),
        r#"{"memoryDir": "~/mymem", "memIndexMaxLines": 100, "defaults": {"model": "prov/m"}}"#,
    )
    .unwrap();
    fs::create_dir_all(env.proj.join(".pi")).unwrap();
    fs::write(
        env.proj.join(".pi/memory.json"),
        r#"{"memIndexMaxLines": 50, "autoSurfacing": {"enabled": false}}"#,
    )
    .unwrap();
    let untrusted = env.ok(&["status"]);
    assert!(untrusted.starts_with(&format!("Dir: {}/mymem/local/", env.home.display())));
    assert!(untrusted.contains("Index: 0/100 lines"), "{untrusted}");
    assert!(
        untrusted
            .contains("Modules: dream=on(prov/m) extractMemories=off autoSurfacing=on(prov/m)")
    );
    let trusted = env.ok(&["--trust-project", "status"]);
    assert!(trusted.contains("Index: 0/50 lines"), "{trusted}");
    assert!(trusted.contains("autoSurfacing=off"), "{trusted}");
    // Malformed JSON is reported, not fatal.
    fs::write(env.home.join(".pi/agent/memory.json"), "{ not json").unwrap();
    let out = env.run(&["status"]);
    assert!(out.status.success());
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("memory.json") && err.contains("malformed JSON"),
        "{err}"
    );
}

#[test]
fn json_output_is_structured() {
    let env = Env::new();
    env.ok(&["add", "--name", "A", "--content", "alpha", "--type", "user"]);
    let list: serde_json::Value = serde_json::from_str(&env.ok(&["--json", "list"])).unwrap();
    assert_eq!(list[0]["name"], "A");
    assert_eq!(list[0]["type"], "user");
    assert_eq!(list[0]["version"].as_str().unwrap().len(), 16);
    let status: serde_json::Value = serde_json::from_str(&env.ok(&["--json", "status"])).unwrap();
    assert_eq!(status["entries"], 1);
    assert_eq!(status["lock"]["state"], "free");
    let section: serde_json::Value = serde_json::from_str(&env.ok(&["--json", "section"])).unwrap();
    assert_eq!(section["value"], "- [A](A.md) — alpha\n");
}

#[test]
fn unlock_needs_confirmation_without_a_terminal() {
    let env = Env::new();
    env.ok(&["add", "--name", "A", "--content", "a"]);
    let dir = env.mem_dir();
    fs::write(
        dir.join(".lock"),
        r#"{"pid":1,"hostname":"elsewhere","startedAt":"2026-10-02T00:00:00.000Z","op":"dream"}"#,
    )
    .unwrap();
    assert!(
        env.ok(&["status"]).ends_with(
            "Lock: held by dream (pid 1 on elsewhere, started 2026-10-02T00:00:00.000Z)\n"
        )
    );
    let err = env.fail(&["unlock"]);
    assert!(
        err.contains("It is held by dream (pid 1 on elsewhere"),
        "{err}"
    );
    assert!(err.contains("--yes"), "{err}");
    assert!(dir.join(".lock").exists());
    assert_eq!(env.ok(&["unlock", "--yes"]), "Memory lock removed.\n");
    assert!(!dir.join(".lock").exists());
}
