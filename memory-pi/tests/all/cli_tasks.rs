//! `pimem surface`, `pimem dream` and `pimem extract` without pi: lexical surfacing with no
//! model, and the model tasks against a local fake OpenAI-compatible server found through
//! pi's models.json (key from an environment variable, never printed).
#![allow(clippy::unwrap_used)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

struct Env {
    _tmp: tempfile::TempDir,
    home: PathBuf,
    proj: PathBuf,
}

impl Env {
    fn new() -> Self {
        let tmp = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(tmp.path()).unwrap();
        let home = root.join("home");
        let proj = root.join("proj");
        std::fs::create_dir_all(home.join(".pi/agent")).unwrap();
        std::fs::create_dir_all(&proj).unwrap();
        Env {
            _tmp: tmp,
            home,
            proj,
        }
    }

    fn agent(&self) -> PathBuf {
        self.home.join(".pi/agent")
    }

    fn run(&self, args: &[&str], stdin: &str) -> Output {
        let mut child = Command::new(env!("CARGO_BIN_EXE_pimem"))
            .args(args)
            .current_dir(&self.proj)
            .env("HOME", &self.home)
            .env_remove("PI_CODING_AGENT_DIR")
            .env_remove("PIMEM_MODEL_URL")
            .env_remove("PIMEM_API_KEY_ENV")
            .env("FAKE_KEY", "sk-test-not-a-real-key-1234567890")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(stdin.as_bytes())
            .unwrap();
        child.wait_with_output().unwrap()
    }

    fn ok(&self, args: &[&str]) -> String {
        let out = self.run(args, "");
        assert!(
            out.status.success(),
            "pimem {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    }
}

/// Requests the fake server saw: (authorization header line, JSON body).
type Seen = Arc<Mutex<Vec<(String, Value)>>>;

/// A fake chat-completions server: one scripted JSON body per request, bodies logged.
fn fake_server(script: Vec<Value>) -> (String, Seen) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    let log = Arc::new(Mutex::new(Vec::new()));
    let seen = log.clone();
    std::thread::spawn(move || {
        for reply in script {
            let Ok((stream, _)) = listener.accept() else {
                return;
            };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut len = 0usize;
            let mut auth = String::new();
            loop {
                let mut line = String::new();
                reader.read_line(&mut line).unwrap();
                let lower = line.to_ascii_lowercase();
                if let Some(v) = lower.strip_prefix("content-length:") {
                    len = v.trim().parse().unwrap();
                }
                if lower.starts_with("authorization:") {
                    auth = line.trim().to_owned();
                }
                if line.trim().is_empty() {
                    break;
                }
            }
            let mut body = vec![0; len];
            reader.read_exact(&mut body).unwrap();
            seen.lock()
                .unwrap()
                .push((auth, serde_json::from_slice(&body).unwrap()));
            let text = reply.to_string();
            let mut stream = stream;
            write!(
                stream,
                "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{text}",
                text.len()
            )
            .unwrap();
        }
    });
    (url, log)
}

fn choice(message: Value, finish: &str) -> Value {
    json!({"id": "x", "object": "chat.completion", "choices": [
        {"index": 0, "message": message, "finish_reason": finish}]})
}

fn tool_call(id: &str, args: Value) -> Value {
    json!({"id": id, "type": "function", "function": {"name": "memory", "arguments": args.to_string()}})
}

fn configure(env: &Env, url: &str) {
    std::fs::write(
        env.agent().join("memory.json"),
        json!({"defaults": {"model": "fake/fake-model"}, "autoSurfacing": {"selector": "lexical"}})
            .to_string(),
    )
    .unwrap();
    std::fs::write(
        env.agent().join("models.json"),
        json!({"providers": {"fake": {"baseUrl": url, "api": "openai-completions",
               "apiKey": "FAKE_KEY", "models": [{"id": "fake-model"}]}}})
        .to_string(),
    )
    .unwrap();
}

fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(".md") && n != "MEMORY.md")
        .collect();
    v.sort();
    v
}

#[test]
fn surface_without_any_model_is_lexical() {
    let env = Env::new();
    env.ok(&[
        "add",
        "--name",
        "SSH port on staging",
        "--content",
        "staging SSH listens on 2222, not 22.",
    ]);
    env.ok(&[
        "add",
        "--name",
        "Test command",
        "--content",
        "run cargo xtask ci",
    ]);
    let out = env.ok(&["surface", "how do I ssh into staging?"]);
    assert_eq!(
        out,
        "<relevant_memories>\n## SSH port on staging\nstaging SSH listens on 2222, not 22.\n</relevant_memories>\n"
    );
    let quiet = env.run(&["surface", "what is the capital of France"], "");
    assert!(quiet.status.success());
    assert!(quiet.stdout.is_empty());
}

#[test]
fn dream_consolidates_through_models_json_and_never_prints_the_key() {
    let env = Env::new();
    env.ok(&[
        "add",
        "--name",
        "Use pnpm",
        "--content",
        "Use pnpm, not npm.",
    ]);
    env.ok(&[
        "add",
        "--name",
        "pnpm only",
        "--content",
        "The repo uses pnpm.",
    ]);
    let (url, log) = fake_server(vec![
        choice(
            json!({"role": "assistant", "content": null, "tool_calls": [
                tool_call("c1", json!({"action": "replace", "name": "Use pnpm",
                                       "content": "Use pnpm, never npm: the lockfile is pnpm-lock.yaml."})),
                tool_call("c2", json!({"action": "remove", "name": "pnpm only"})),
            ]}),
            "tool_calls",
        ),
        choice(
            json!({"role": "assistant", "content": "Merged 2 duplicates."}),
            "stop",
        ),
    ]);
    configure(&env, &url);
    let refused = env.run(&["dream"], "");
    assert_eq!(
        refused.status.code(),
        Some(1),
        "no --yes without a terminal"
    );
    let out = env.run(&["dream", "--yes"], "");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{stderr}");
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        "Merged 2 duplicates.\n"
    );
    assert!(!stderr.contains("sk-test"), "{stderr}");
    let dir = PathBuf::from(env.ok(&["dir"]).trim_end());
    assert_eq!(names(&dir), ["Use-pnpm.md"]);
    assert!(dir.join(".dream-meta.json").is_file());
    let requests = log.lock().unwrap();
    assert_eq!(requests.len(), 2);
    assert!(
        requests[0]
            .0
            .to_ascii_lowercase()
            .ends_with("bearer sk-test-not-a-real-key-1234567890")
    );
    assert_eq!(requests[0].1["model"], "fake-model");
    let tools = requests[0].1["tools"].as_array().unwrap();
    let actions = &tools[0]["function"]["parameters"]["properties"]["action"]["enum"];
    assert!(
        actions
            .as_array()
            .unwrap()
            .contains(&json!("rebuild_index"))
    );
}

#[test]
fn extract_writes_memories_from_a_transcript() {
    let env = Env::new();
    let (url, _log) = fake_server(vec![
        choice(
            json!({"role": "assistant", "content": null, "tool_calls": [
                tool_call("c1", json!({"action": "add", "name": "Deploy needs VPN",
                                       "content": "Deploying to staging needs the office VPN."})),
            ]}),
            "tool_calls",
        ),
        choice(
            json!({"role": "assistant", "content": "Saved one."}),
            "stop",
        ),
    ]);
    configure(&env, &url);
    let messages = json!([
        {"role": "user", "content": "deploy to staging", "timestamp": 1},
        {"role": "assistant", "content": [{"type": "text", "text": "It failed: you need the office VPN."}],
         "stopReason": "stop", "timestamp": 2}
    ]);
    let out = env.run(&["extract", "--messages", "-"], &messages.to_string());
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        "Extracted 1 memory.\n"
    );
    let dir = PathBuf::from(env.ok(&["dir"]).trim_end());
    assert_eq!(names(&dir), ["Deploy-needs-VPN.md"]);
}

#[test]
fn model_tasks_without_a_model_say_what_to_configure() {
    let env = Env::new();
    let out = env.run(&["dream", "--yes"], "");
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains(
            "no model for dream — set \"dream.model\" or \"defaults.model\" in memory.json"
        )
    );
}

/// `--model` with `--model-url`: no memory.json, no models.json needed.
#[test]
fn dream_with_model_and_model_url_needs_no_configuration() {
    let env = Env::new();
    env.ok(&["add", "--name", "A", "--content", "a"]);
    let (url, log) = fake_server(vec![choice(
        json!({"role": "assistant", "content": "Nothing to merge."}),
        "stop",
    )]);
    let out = env.run(
        &[
            "dream",
            "--yes",
            "--model",
            "local/qwen3-8b",
            "--model-url",
            &url,
        ],
        "",
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        "Nothing to merge.\n"
    );
    // The provider prefix is pi's registry key; the server gets the bare id.
    assert_eq!(log.lock().unwrap()[0].1["model"], "qwen3-8b");
    // Not a terminal: no progress lines.
    assert!(!String::from_utf8_lossy(&out.stderr).contains("turn 1"));
}

/// On a terminal, a dream shows each turn and each tool call as it lands, with the time.
#[test]
fn a_dream_on_a_terminal_shows_its_progress() {
    let env = Env::new();
    env.ok(&["add", "--name", "Use pnpm", "--content", "Use pnpm."]);
    let (url, _log) = fake_server(vec![
        choice(
            json!({"role": "assistant", "content": null, "tool_calls": [
                tool_call("c1", json!({"action": "list"})),
                tool_call("c2", json!({"action": "remove", "name": "nope"})),
            ]}),
            "tool_calls",
        ),
        choice(json!({"role": "assistant", "content": "Done."}), "stop"),
    ]);
    // `script` runs the command on a pseudo-terminal and copies what it printed.
    let pimem = env!("CARGO_BIN_EXE_pimem");
    let out = Command::new("script")
        .args(["-qfec"])
        .arg(format!(
            "{pimem} dream --yes --model fake/m --model-url {url} 2>&1"
        ))
        .arg("/dev/null")
        .current_dir(&env.proj)
        .env("HOME", &env.home)
        .env_remove("PI_CODING_AGENT_DIR")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let screen = String::from_utf8_lossy(&out.stdout).replace('\r', "");
    assert!(out.status.success(), "{screen}");
    for expected in [
        "Consolidating memory...",
        "s] turn 1: asking the model…",
        "s]   ✓ list: - Use pnpm (feedback, modified ",
        "s]   ✗ remove: Entry \"nope\" not found",
        "s] turn 2: asking the model…",
        "Done.",
    ] {
        assert!(
            screen.contains(expected),
            "{expected:?} missing in:\n{screen}"
        );
    }
}
