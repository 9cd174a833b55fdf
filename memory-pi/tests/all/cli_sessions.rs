//! `pimem sessions list | search`: pi's past sessions from the command line, on the engine of
//! the `search-session` tool and the `@s:` / `@as:` references.
#![allow(clippy::unwrap_used)]

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::{Value, json};

const T0: i64 = 1_795_988_245_400;

fn iso(ms: i64) -> String {
    memory_core::clock::iso_millis(jiff::Timestamp::from_millisecond(ms).unwrap())
}

struct Env {
    _tmp: tempfile::TempDir,
    home: PathBuf,
    app: PathBuf,
    other: PathBuf,
}

impl Env {
    fn new() -> Env {
        let tmp = tempfile::tempdir().unwrap();
        let root = fs::canonicalize(tmp.path()).unwrap();
        let (home, app, other) = (root.join("home"), root.join("app"), root.join("other"));
        for d in [&home, &app, &other] {
            fs::create_dir_all(d).unwrap();
        }
        Env {
            _tmp: tmp,
            home,
            app,
            other,
        }
    }

    fn agent(&self) -> PathBuf {
        self.home.join(".pi/agent")
    }

    /// A pi-shaped session of `cwd` in `dir` (default: pi's per-cwd directory).
    fn session(
        &self,
        dir: Option<&Path>,
        cwd: &Path,
        id: &str,
        name: Option<&str>,
        ms: i64,
        text: &str,
    ) {
        let dir = dir.map(Path::to_path_buf).unwrap_or_else(|| {
            memory_agent::pi::sessions::session_dir_for_cwd(&self.agent().join("sessions"), cwd)
        });
        fs::create_dir_all(&dir).unwrap();
        let mut lines =
            vec![json!({"type":"session","version":3,"id":id,"timestamp":iso(ms),"cwd":cwd})];
        if let Some(n) = name {
            lines.push(json!({"type":"session_info","id":"i1","parentId":null,"timestamp":iso(ms),"name":n}));
        }
        lines.push(json!({"type":"message","id":"m1","parentId":null,"timestamp":iso(ms),"message":{"role":"user","content":[{"type":"text","text":text}],"timestamp":ms}}));
        lines.push(json!({"type":"message","id":"m2","parentId":"m1","timestamp":iso(ms),"message":{"role":"toolResult","toolCallId":"c","toolName":"bash","content":[{"type":"text","text":format!("tool says {text}")}],"isError":false,"timestamp":ms}}));
        let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
        fs::write(
            dir.join(format!("{}_{id}.jsonl", iso(ms).replace([':', '.'], "-"))),
            text,
        )
        .unwrap();
    }

    fn run(&self, args: &[&str]) -> Output {
        Command::new(env!("CARGO_BIN_EXE_pimem"))
            .args(args)
            .current_dir(&self.app)
            .env("HOME", &self.home)
            .env_remove("PI_CODING_AGENT_DIR")
            .env_remove("PI_CODING_AGENT_SESSION_DIR")
            .output()
            .unwrap()
    }

    fn ok(&self, args: &[&str]) -> String {
        let out = self.run(args);
        assert!(
            out.status.success(),
            "pimem {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    }

    fn json(&self, args: &[&str]) -> Value {
        serde_json::from_str(&self.ok(args)).unwrap()
    }
}

#[test]
fn list_this_project_every_project_and_named_only() {
    let e = Env::new();
    e.session(None, &e.app, "a-old", Some("Refactor auth"), T0, "x");
    e.session(None, &e.app, "a-new", None, T0 + 1000, "y");
    e.session(None, &e.other, "o-1", Some("Elsewhere"), T0 + 2000, "z");
    assert_eq!(
        e.ok(&["sessions", "list"]),
        format!(
            "{}  a-new  -\n{}  a-old  Refactor auth\n",
            iso(T0 + 1000),
            iso(T0)
        )
    );
    assert_eq!(
        e.ok(&["sessions", "list", "--all", "--named"]),
        format!(
            "{}  o-1  Elsewhere  {}\n{}  a-old  Refactor auth  {}\n",
            iso(T0 + 2000),
            e.other.display(),
            iso(T0),
            e.app.display()
        )
    );
    let v = e.json(&["sessions", "list", "--json"]);
    assert_eq!(v[1]["id"], "a-old");
    assert_eq!(v[1]["name"], "Refactor auth");
    assert_eq!(v[1]["cwd"], json!(e.app));
    assert_eq!(v[1]["activity"], iso(T0));
    assert!(v[1]["path"].as_str().unwrap().ends_with("_a-old.jsonl"));
    // Another project via the global --cwd; nothing when it has no sessions.
    assert_eq!(
        e.json(&[
            "--json",
            "sessions",
            "list",
            "--cwd",
            e.other.to_str().unwrap()
        ])[0]["id"],
        "o-1"
    );
    assert_eq!(
        e.ok(&["sessions", "list", "--cwd", e.home.to_str().unwrap()]),
        "No sessions.\n"
    );
}

#[test]
fn search_prints_search_session_results_and_json() {
    let e = Env::new();
    e.session(
        None,
        &e.app,
        "s1",
        Some("Zebra talk"),
        T0,
        "about the Zebra",
    );
    e.session(None, &e.other, "o1", None, T0, "zebra elsewhere");
    let text = e.ok(&["sessions", "search", "ZEBRA"]);
    assert!(text.starts_with("## Zebra talk\nid: s1\n"), "{text}");
    assert!(
        text.contains("\nuser: about the Zebra\n") || text.ends_with("\nuser: about the Zebra\n"),
        "{text}"
    );
    assert!(
        !text.contains("tool says"),
        "tool output is never searched: {text}"
    );
    let v = e.json(&["sessions", "search", "zebra", "--json"]);
    assert_eq!(
        (v["status"].as_str(), v["truncated"].as_bool()),
        (Some("ok"), Some(false))
    );
    assert_eq!(
        v["sessions"][0]["segments"],
        json!([{"role": "user", "text": "about the Zebra", "truncated": false}])
    );
    // The CLI runs as the user: another project needs no whitelist (VECTORS §Z 18).
    let v = e.json(&[
        "sessions",
        "search",
        "zebra",
        "--json",
        "--cwd",
        e.other.to_str().unwrap(),
    ]);
    assert_eq!(v["sessions"][0]["id"], "o1");
    assert_eq!(
        e.ok(&["sessions", "search", "nothing-like-this"]),
        format!("No matches in the sessions of {}.\n", e.app.display())
    );
    let out = e.run(&["sessions", "search", "  "]);
    assert!(!out.status.success());
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "pimem: query is required and must not be blank\n"
    );
}

#[test]
fn a_flat_session_directory() {
    let e = Env::new();
    let flat = e.home.join("flat");
    e.session(Some(&flat), &e.app, "f-app", Some("Flat app"), T0, "needle");
    e.session(
        Some(&flat),
        &e.other,
        "f-other",
        Some("Flat other"),
        T0 + 1000,
        "needle",
    );
    let flat_arg = flat.to_str().unwrap();
    let v = e.json(&["sessions", "list", "--json", "--session-dir", flat_arg]);
    assert_eq!(v.as_array().unwrap().len(), 1, "{v}");
    assert_eq!(v[0]["id"], "f-app");
    assert_eq!(
        e.json(&[
            "sessions",
            "list",
            "--all",
            "--json",
            "--session-dir",
            flat_arg
        ])
        .as_array()
        .unwrap()
        .len(),
        2
    );
    let v = e.json(&[
        "sessions",
        "search",
        "needle",
        "--json",
        "--session-dir",
        flat_arg,
    ]);
    assert_eq!(v["sessions"].as_array().unwrap().len(), 1);
    assert_eq!(v["sessions"][0]["id"], "f-app");
}
