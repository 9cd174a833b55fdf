//! `pimem serve` over its real stdio: the JSON-RPC protocol v1 with a scripted pi on the other
//! end (answering `model/complete`, `models/resolve` and `ui/confirm`).
#![allow(clippy::unwrap_used)]

use std::collections::VecDeque;
use std::fs;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

const WAIT: Duration = Duration::from_secs(20);

/// A temp HOME, agent dir and project dir.
pub struct Sandbox {
    _tmp: tempfile::TempDir,
    pub home: PathBuf,
    pub agent: PathBuf,
    pub project: PathBuf,
}

impl Sandbox {
    pub fn new() -> Self {
        let tmp = tempfile::tempdir().unwrap();
        let root = fs::canonicalize(tmp.path()).unwrap();
        let (home, agent, project) = (root.join("home"), root.join("agent"), root.join("project"));
        for d in [&home, &agent, &project] {
            fs::create_dir_all(d).unwrap();
        }
        Sandbox {
            _tmp: tmp,
            home,
            agent,
            project,
        }
    }

    fn config(&self, v: Value) {
        fs::write(self.agent.join("memory.json"), v.to_string()).unwrap();
    }

    /// The project's memory directory (a non-git cwd maps to `local/<path>`).
    fn memory_dir(&self) -> PathBuf {
        let out = Command::new(env!("CARGO_BIN_EXE_pimem"))
            .args(["dir", "--agent-dir"])
            .arg(&self.agent)
            .current_dir(&self.project)
            .env("HOME", &self.home)
            .env_remove("PI_CODING_AGENT_DIR")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        PathBuf::from(String::from_utf8(out.stdout).unwrap().trim_end())
    }

    fn start_params(&self, extra: Value) -> Value {
        let mut p = json!({
            "reason": "startup", "cwd": self.project, "agentDir": self.agent, "trusted": true,
            "hasUI": true, "mode": "rpc", "sessionId": "s1", "sessionFile": "/tmp/s1.jsonl",
            "sessionDir": null, "child": false, "recorded": null, "sectionPatches": [],
        });
        for (k, v) in extra.as_object().unwrap() {
            p[k] = v.clone();
        }
        p
    }

    pub fn spawn(&self) -> Pi {
        Pi::spawn(&self.home, &self.project)
    }
}

/// How the fake pi answers the sidecar's requests.
#[derive(Default)]
struct Script {
    /// Replies to `model/complete`, in order (`Err(message)` answers -32011).
    completions: VecDeque<Result<Value, String>>,
    /// Answer to `ui/confirm`.
    confirm: bool,
    /// Answer to `models/resolve` for every spec.
    resolvable: bool,
    /// Never answer `model/complete` (a model call that hangs).
    hold_model: bool,
}

/// The pi side of one `pimem serve` process.
pub struct Pi {
    child: Child,
    stdin: Option<ChildStdin>,
    rx: Receiver<Value>,
    next: u64,
    script: Script,
    /// Notifications received, in order.
    pub notes: Vec<Value>,
    /// Requests the sidecar sent us, in order.
    asked: Vec<Value>,
    /// Responses read while waiting for another id.
    stash: Vec<Value>,
}

impl Pi {
    fn spawn(home: &Path, cwd: &Path) -> Self {
        Pi::spawn_with(cwd, |c| {
            c.env("HOME", home);
        })
    }

    /// `pimem serve` in `cwd`, its command adjusted by `env` first.
    fn spawn_with(cwd: &Path, env: impl FnOnce(&mut Command)) -> Self {
        let mut command = Command::new(env!("CARGO_BIN_EXE_pimem"));
        // No locale: the texts a person reads are English unless a test sets one.
        command.env_remove("LC_ALL").env_remove("LANG");
        env(&mut command);
        let mut child = command
            .arg("serve")
            .current_dir(cwd)
            .env_remove("PI_CODING_AGENT_DIR")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let line = line.unwrap();
                let v: Value = serde_json::from_str(&line)
                    .unwrap_or_else(|e| panic!("sidecar wrote a non-JSON line {line:?}: {e}"));
                if tx.send(v).is_err() {
                    return;
                }
            }
        });
        Pi {
            stdin: child.stdin.take(),
            child,
            rx,
            next: 1000,
            script: Script {
                confirm: true,
                resolvable: true,
                ..Script::default()
            },
            notes: Vec::new(),
            asked: Vec::new(),
            stash: Vec::new(),
        }
    }

    fn send_raw(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().unwrap();
        stdin.write_all(bytes).unwrap();
        stdin.flush().unwrap();
    }

    fn send(&mut self, v: &Value) {
        let mut line = v.to_string();
        line.push('\n');
        self.send_raw(line.as_bytes());
    }

    /// Reads until a response with `id` arrives, answering the sidecar's requests meanwhile.
    fn wait_for(&mut self, id: &Value) -> Value {
        if let Some(i) = self.stash.iter().position(|m| &m["id"] == id) {
            return self.stash.remove(i);
        }
        let deadline = Instant::now() + WAIT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let msg = match self.rx.recv_timeout(left) {
                Ok(m) => m,
                Err(RecvTimeoutError::Timeout) => panic!("no response to id {id} in time"),
                Err(RecvTimeoutError::Disconnected) => panic!("sidecar closed stdout"),
            };
            if msg.get("method").is_some() {
                self.on_request(msg);
                continue;
            }
            if &msg["id"] == id {
                return msg;
            }
            self.stash.push(msg);
        }
    }

    fn on_request(&mut self, msg: Value) {
        let method = msg["method"].as_str().unwrap().to_owned();
        let Some(id) = msg.get("id").cloned() else {
            self.notes.push(msg);
            return;
        };
        self.asked.push(msg.clone());
        if method == "model/complete" && self.script.hold_model {
            return;
        }
        let reply = match method.as_str() {
            "models/resolve" => {
                let n = msg["params"]["specs"].as_array().unwrap().len();
                json!({ "result": { "resolvable": vec![self.script.resolvable; n] } })
            }
            "ui/confirm" => json!({ "result": { "confirmed": self.script.confirm } }),
            "model/complete" => match self.script.completions.pop_front() {
                Some(Ok(c)) => json!({ "result": c }),
                Some(Err(m)) => json!({ "error": { "code": -32011, "message": m } }),
                None => json!({ "error": { "code": -32011, "message": "script exhausted" } }),
            },
            other => panic!("unexpected request {other}"),
        };
        let mut reply = reply;
        reply["jsonrpc"] = json!("2.0");
        reply["id"] = id;
        self.send(&reply);
    }

    /// Waits until the sidecar has asked `method` (answering its requests meanwhile).
    fn wait_asked(&mut self, method: &str) -> Value {
        let deadline = Instant::now() + WAIT;
        loop {
            if let Some(m) = self.asked.iter().find(|m| m["method"] == method) {
                return m.clone();
            }
            let left = deadline.saturating_duration_since(Instant::now());
            match self.rx.recv_timeout(left) {
                Ok(m) if m.get("method").is_some() => self.on_request(m),
                Ok(m) => self.stash.push(m),
                Err(_) => panic!("the sidecar never asked {method}; asked {:?}", self.asked),
            }
        }
    }

    /// Sends a request and returns the whole response message.
    pub fn request(&mut self, method: &str, params: Value) -> Value {
        self.next += 1;
        let id = json!(self.next);
        self.send(&json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }));
        self.wait_for(&id)
    }

    /// Sends a request and returns its `result` (panics on an error response).
    pub fn call(&mut self, method: &str, params: Value) -> Value {
        let r = self.request(method, params);
        assert!(r.get("error").is_none(), "{method} failed: {r}");
        r["result"].clone()
    }

    /// Initialises and starts a session.
    fn start(&mut self, params: Value) -> Value {
        self.call("initialize", json!({ "protocol": 1, "client": "test" }));
        self.call("session/start", params)
    }

    /// Waits for a notification whose message satisfies `pred`.
    pub fn wait_note(&mut self, pred: impl Fn(&Value) -> bool) -> Value {
        let deadline = Instant::now() + WAIT;
        loop {
            if let Some(n) = self.notes.iter().find(|n| pred(n)) {
                return n.clone();
            }
            let left = deadline.saturating_duration_since(Instant::now());
            match self.rx.recv_timeout(left) {
                Ok(m) if m.get("method").is_some() => self.on_request(m),
                Ok(m) => panic!("unexpected message {m}"),
                Err(_) => panic!("notification not seen; got {:?}", self.notes),
            }
        }
    }

    fn tool(&mut self, args: Value) -> Value {
        self.call("tool/execute", json!({ "toolCallId": "c1", "args": args }))
    }

    /// Closes stdin and returns the exit status.
    /// Closes stdin, reads everything the sidecar still writes, and returns every
    /// notification received (before and after) with the exit status.
    pub fn finish_collecting(mut self) -> (Vec<Value>, std::process::ExitStatus) {
        drop(self.stdin.take());
        while let Ok(m) = self.rx.recv_timeout(WAIT) {
            if m.get("method").is_some() && m.get("id").is_none() {
                self.notes.push(m);
            }
        }
        let status = self.child.wait().unwrap();
        (std::mem::take(&mut self.notes), status)
    }

    pub fn finish(mut self) -> std::process::ExitStatus {
        drop(self.stdin.take());
        self.child.wait().unwrap()
    }
}

fn completion_text(text: &str) -> Value {
    json!({ "text": text, "toolCalls": [], "stopReason": "stop" })
}

fn completion_tool(id: &str, args: Value) -> Value {
    json!({ "text": "", "toolCalls": [{ "id": id, "name": "memory", "arguments": args }], "stopReason": "toolUse" })
}

// ------------------------------------------------------------------ transport

#[test]
fn handshake_reports_version_and_the_tool_schema_of_tool_schema() {
    let sb = Sandbox::new();
    let mut pi = sb.spawn();
    let r = pi.call(
        "initialize",
        json!({ "protocol": 1, "client": "pimem-pi", "clientVersion": "0.1.0" }),
    );
    assert_eq!(r["protocol"], 1);
    assert_eq!(r["version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(r["section"], "memory_index");
    let out = Command::new(env!("CARGO_BIN_EXE_pimem"))
        .arg("tool-schema")
        .output()
        .unwrap();
    let printed: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r["tool"], printed);
    assert_eq!(printed["name"], "memory");
    assert_eq!(
        printed["parameters"]["properties"]["action"]["enum"],
        json!(["add", "replace", "remove", "list", "search"])
    );
    // The extension declares the tool from its committed copy, without waiting for us.
    let committed: Value = serde_json::from_str(
        &std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/extension/tool.json"))
            .unwrap(),
    )
    .unwrap();
    assert_eq!(
        committed, printed,
        "extension/tool.json is stale: run `pimem tool-schema > memory-pi/extension/tool.json`"
    );
    assert!(pi.finish().success());
}

/// The extension needs pi's system-prompt sections (`systemPromptOptions.sections`, the frozen
/// `memory_index`), verified with pi 1.6.0, and pi needs Node >= 22.19: the package says so
/// instead of accepting any pi (`*`) and breaking on an older one.
#[test]
fn the_package_declares_the_pi_and_node_it_needs() {
    let text = fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/extension/package.json"
    ))
    .unwrap();
    let pkg: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(
        pkg["peerDependencies"]["@earendil-works/pi-coding-agent"],
        ">=1.6.0 <2"
    );
    assert_eq!(pkg["engines"]["node"], ">=22.19");
}

#[test]
fn a_protocol_mismatch_is_refused_with_what_to_rebuild() {
    let sb = Sandbox::new();
    let mut pi = sb.spawn();
    let r = pi.request("initialize", json!({ "protocol": 2 }));
    assert_eq!(r["error"]["code"], -32002);
    assert_eq!(
        r["error"]["message"],
        format!(
            "pimem {} speaks protocol 1 but the pi extension speaks protocol 2: rebuild and reinstall both from the same checkout (cargo xtask install)",
            env!("CARGO_PKG_VERSION")
        )
    );
    assert_eq!(r["error"]["data"]["tool"]["name"], "memory");
    let r = pi.request("initialize", json!({}));
    assert_eq!(r["error"]["code"], -32602);
    assert_eq!(
        r["error"]["message"],
        "invalid params: \"protocol\" is required"
    );
}

#[test]
fn malformed_unknown_invalid_and_over_long_lines_each_get_one_error_and_the_connection_stays() {
    let sb = Sandbox::new();
    let mut pi = sb.spawn();
    pi.send_raw(b"{not json\n");
    let r = pi.wait_for(&Value::Null);
    assert_eq!(r["error"]["code"], -32700);

    let r = pi.request("no/such", json!({}));
    assert_eq!(r["error"]["code"], -32601);
    assert_eq!(r["error"]["message"], "Method not found: no/such");

    let r = pi.request("session/start", json!({ "cwd": 5 }));
    assert_eq!(r["error"]["code"], -32602);
    assert_eq!(
        r["error"]["message"],
        "invalid params: \"cwd\": invalid type: integer `5`, expected a string"
    );

    let r = pi.request("command/run", json!({ "name": "forget", "args": "" }));
    assert_eq!(r["error"]["code"], -32602);

    // 16 MiB + 1 byte of payload on one line: refused, discarded, connection kept.
    let mut long = vec![b' '; (16 << 20) + 1];
    long.push(b'\n');
    pi.send_raw(&long);
    let r = pi.wait_for(&Value::Null);
    assert_eq!(r["error"]["code"], -32600);

    // neither a request nor a response
    pi.send(&json!({ "jsonrpc": "2.0", "id": 7 }));
    let r = pi.wait_for(&json!(7));
    assert_eq!(r["error"]["code"], -32600);

    // blank lines and a CRLF line are fine
    pi.send_raw(b"\n\r\n{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"initialize\",\"params\":{\"protocol\":1}}\r\n");
    let r = pi.wait_for(&json!(8));
    assert_eq!(r["result"]["protocol"], 1);
    assert!(pi.finish().success());
}

#[test]
fn pipelined_requests_see_the_session_started_before_them() {
    let sb = Sandbox::new();
    let mut pi = sb.spawn();
    let start = json!({ "jsonrpc": "2.0", "id": 1, "method": "session/start", "params": sb.start_params(json!({})) });
    let tool = json!({ "jsonrpc": "2.0", "id": 2, "method": "tool/execute", "params": { "toolCallId": "t", "args": { "action": "list" } } });
    pi.send_raw(format!("{start}\n{tool}\n").as_bytes());
    let r2 = pi.wait_for(&json!(2));
    assert_eq!(r2["result"]["text"], "No memories yet.");
    assert_eq!(pi.wait_for(&json!(1))["result"]["section"], "");
}

// ------------------------------------------------------------------ session, section, tool

#[test]
fn fresh_sections_are_recorded_and_recorded_or_replayed_ones_are_reused() {
    let sb = Sandbox::new();
    let dir = sb.memory_dir();
    fs::create_dir_all(&dir).unwrap();
    fs::write(dir.join("MEMORY.md"), "- [A](a.md) — alpha <b>\n").unwrap();

    let mut pi = sb.spawn();
    let r = pi.start(sb.start_params(json!({})));
    assert_eq!(r["section"], "- [A](a.md) — alpha &lt;b&gt;\n");
    assert_eq!(r["record"]["value"], r["section"]);
    assert_eq!(r["record"]["lines"], 1);
    assert_eq!(r["lockTimeoutMs"], 5000);
    assert_eq!(r["notifications"], json!([]));
    let recorded = r["record"].clone();
    pi.finish();

    // The index changed on disk; a continued session keeps its recorded value.
    // Decision (docs/compat/features.md PM-57): also for reason `startup`, which is what pi
    // 1.6.0 reports for `pi -c` and `pi --session <file>`; pi-memory 2.5 re-reads MEMORY.md
    // there. Replaying keeps the provider's prompt cache warm and the conversation's system
    // prompt identical to what the model already answered under.
    fs::write(dir.join("MEMORY.md"), "- [B](b.md) — beta\n").unwrap();
    for reason in ["resume", "fork", "reload"] {
        let mut pi = sb.spawn();
        let r = pi.start(sb.start_params(json!({ "reason": reason, "recorded": recorded })));
        assert_eq!(r["section"], "- [A](a.md) — alpha &lt;b&gt;\n", "{reason}");
        assert_eq!(r["record"], Value::Null, "{reason}");
        pi.finish();
    }
    let mut pi = sb.spawn();
    let r = pi.start(sb.start_params(json!({ "recorded": recorded })));
    assert_eq!(r["section"], "- [A](a.md) — alpha &lt;b&gt;\n");
    assert_eq!(r["record"], Value::Null);
    // /memory reports the frozen window, not the disk (PM-75 Inject line)
    let status = pi.call("command/run", json!({ "name": "memory", "args": "" }));
    let text = status["text"].as_str().unwrap();
    assert_eq!(text.lines().count(), 7, "{text}");
    assert!(
        text.contains("\nInject: 1/50 lines, 26/16384 bytes\n"),
        "{text}"
    );
    // compaction refreshes from disk and clears nothing else
    let c = pi.call("session/compact", json!({}));
    assert_eq!(c["section"], "- [B](b.md) — beta\n");
    assert_eq!(c["record"]["value"], c["section"]);
    pi.finish();

    // A session begun under TypeScript pi-memory: pi's own patches are replayed (PM-57).
    let mut pi = sb.spawn();
    let patches = json!([
        { "memory_index": "<memory_index>\nOLD\n</memory_index>", "tools": "x" },
        { "memory_index": null },
        { "memory_index": "<memory_index>\nTS VALUE\n</memory_index>" },
    ]);
    let r = pi.start(sb.start_params(json!({ "sectionPatches": patches })));
    assert_eq!(r["section"], "TS VALUE");
    assert_eq!(r["record"], Value::Null);
    pi.finish();

    // reason "new" is always fresh, and so is a `startup` whose branch records nothing
    // (a plain `pi`): the only case where pimem and pi-memory differ is `startup` with a
    // record on the branch.
    for extra in [
        json!({ "reason": "new", "recorded": recorded }),
        json!({ "reason": "startup", "recorded": null }),
    ] {
        let mut pi = sb.spawn();
        let r = pi.start(sb.start_params(extra));
        assert_eq!(r["section"], "- [B](b.md) — beta\n");
        assert!(r["record"].is_object());
        pi.finish();
    }
}

#[test]
fn search_results_carry_their_count_like_pi_memory() {
    let sb = Sandbox::new();
    let mut pi = sb.spawn();
    pi.start(sb.start_params(json!({ "hasUI": false })));
    pi.tool(json!({ "action": "add", "name": "Alpha", "content": "alpha body" }));
    pi.tool(json!({ "action": "add", "name": "Beta", "content": "beta body" }));
    let r = pi.tool(json!({ "action": "search", "query": "BODY" }));
    assert_eq!(r["details"]["count"], 2);
    let r = pi.tool(json!({ "action": "search", "query": "gamma" }));
    assert_eq!(r["text"], "No matches in memory.");
    assert_eq!(r["details"]["count"], 0);
    // other actions carry no count
    let r = pi.tool(json!({ "action": "list" }));
    assert!(r["details"].get("count").is_none(), "{r}");
}

#[test]
fn an_initialisation_failure_lasts_only_until_its_cause_is_fixed() {
    let sb = Sandbox::new();
    // memoryDir under `~` with no HOME: the project cannot be opened (PM-74).
    sb.config(json!({ "memoryDir": "~/mem" }));
    let mut pi = Pi::spawn_with(&sb.project, |c| {
        c.env_remove("HOME");
    });
    let r = pi.start(sb.start_params(json!({ "hasUI": false })));
    assert_eq!(r["section"], "");
    let r = pi.tool(json!({ "action": "list" }));
    assert_eq!(r["isError"], true);
    assert_eq!(
        r["text"],
        "Memory not initialized — Failed to initialize memory: project identity unavailable: cannot expand \"~\": the HOME environment variable is not set; run /memory for details"
    );
    let status = pi.call("command/run", json!({ "name": "memory", "args": "" }));
    assert_eq!(
        status["text"],
        "Memory: misconfigured\nDir: not initialized\n- Failed to initialize memory: project identity unavailable: cannot expand \"~\": the HOME environment variable is not set"
    );
    // The user fixes memory.json: the next call works, no restart needed.
    let mem = sb.project.parent().unwrap().join("fixed-mem");
    sb.config(json!({ "memoryDir": mem }));
    let r = pi.tool(json!({ "action": "add", "name": "A", "content": "a" }));
    assert_eq!(r["text"], "Saved \"A\" (A.md).", "{r}");
    assert!(fs::read_dir(&mem).unwrap().next().is_some());
    assert!(pi.finish().success());
}

#[test]
fn an_unreadable_memory_json_is_failed_to_load_memory_config() {
    let sb = Sandbox::new();
    // A memory.json that exists but cannot be read: nobody knows where the memories live.
    fs::create_dir_all(sb.agent.join("memory.json")).unwrap();
    let mut pi = sb.spawn();
    let r = pi.start(sb.start_params(json!({})));
    let notes = notification_messages(&r);
    assert!(
        notes
            .iter()
            .any(|n| n.starts_with("Failed to load memory config: ")
                && n.contains("memory.json: cannot read")),
        "{notes:?}"
    );
    let r = pi.tool(json!({ "action": "list" }));
    assert!(
        r["text"]
            .as_str()
            .unwrap()
            .starts_with("Memory not initialized — Failed to load memory config: "),
        "{r}"
    );
    // Nothing was created under the default memory root either.
    assert!(!sb.home.join(".pi/memory").exists());
    // Fixed: the directory goes, the defaults apply at the next call.
    fs::remove_dir(sb.agent.join("memory.json")).unwrap();
    let r = pi.tool(json!({ "action": "list" }));
    assert_eq!(r["text"], "No memories yet.");
}

#[test]
fn the_tool_returns_pi_memory_texts_and_a_bad_call_changes_nothing() {
    let sb = Sandbox::new();
    let mut pi = sb.spawn();
    let r = pi.call(
        "tool/execute",
        json!({ "toolCallId": "x", "args": { "action": "list" } }),
    );
    assert_eq!(r["text"], "Memory not initialized (no session_start yet)");
    assert_eq!(r["isError"], true);

    pi.start(sb.start_params(json!({})));
    let r =
        pi.tool(json!({ "action": "add", "name": "lock-probe", "content": "0-byte lock probe" }));
    assert_eq!(r["text"], "Saved \"lock-probe\" (lock-probe.md)."); // Q1
    assert_eq!(r["isError"], false);
    assert_eq!(r["details"]["saved"], "lock-probe");
    let saved = pi.wait_note(|n| n["params"]["message"] == "Saved: lock-probe");
    assert_eq!(saved["method"], "ui/notify");

    let dir = sb.memory_dir();
    let before = fs::read(dir.join("MEMORY.md")).unwrap();
    let r = pi.tool(json!({ "action": "remove", "name": "nope" }));
    assert_eq!(r["text"], "Entry \"nope\" not found");
    assert_eq!(r["isError"], true);
    let r = pi.tool(json!({ "action": "add", "name": "x" }));
    assert_eq!(r["isError"], true);
    let r = pi.tool(json!({ "action": "rename", "name": "lock-probe", "new_name": "y" }));
    assert_eq!(r["text"], "Unknown action: rename");
    assert_eq!(fs::read(dir.join("MEMORY.md")).unwrap(), before);

    let r = pi.tool(json!({ "action": "search", "query": "nothing" }));
    assert_eq!(r["text"], "No matches in memory.");
    let r = pi.tool(json!({ "action": "search", "query": "anything", "scope": "sessions" }));
    assert_eq!(r["text"], "No matches in sessions.");
    let r = pi.tool(json!({ "action": "replace", "name": "lock-probe", "content": "new body" }));
    assert_eq!(r["isError"], false, "{r}");
    let r = pi.tool(json!({ "action": "remove", "name": "lock-probe" }));
    assert_eq!(r["isError"], false, "{r}");
    let r = pi.tool(json!({ "action": "list" }));
    assert_eq!(r["text"], "No memories yet.");
}

#[test]
fn headless_sessions_never_notify() {
    let sb = Sandbox::new();
    let mut pi = sb.spawn();
    pi.start(sb.start_params(json!({ "hasUI": false, "mode": "print" })));
    pi.tool(json!({ "action": "add", "name": "quiet", "content": "no notification" }));
    pi.call("command/run", json!({ "name": "memory", "args": "" }));
    // notifications are written before the response they belong to
    assert_eq!(pi.notes, Vec::<Value>::new());
    assert!(pi.finish().success());
}

// ------------------------------------------------------------------ commands

#[test]
fn memory_status_is_seven_lines_with_modules_explaining_what_is_off() {
    let sb = Sandbox::new();
    let mut pi = sb.spawn();
    let r = pi.call("command/run", json!({ "name": "memory", "args": "" }));
    assert_eq!(r["text"], "Memory not initialized.");
    pi.start(sb.start_params(json!({})));
    let r = pi.call("command/run", json!({ "name": "memory", "args": "status" }));
    let expected = format!(
        "Dir: {}\nIndex: 0/200 lines, 0/25600 bytes, 0 unrecognized lines\nInject: 0/50 lines, 0/16384 bytes\nEntries: 0\nModules: dream=off(no model) extractMemories=off autoSurfacing=on(lexical)\nLast dream: never\nLock: free",
        sb.memory_dir().display()
    );
    assert_eq!(r["text"], expected);
    // Other words are treated as status (PM-76); `on`, `off` and `doctor` are
    // pi-auto-memory's (tested in `serve::pa`).
    let r2 = pi.call("command/run", json!({ "name": "memory", "args": "bogus" }));
    assert_eq!(r2["text"], expected);
}

#[test]
fn configured_models_are_validated_through_pi() {
    let sb = Sandbox::new();
    sb.config(
        json!({ "defaults": { "model": "fake/model" }, "extractMemories": { "enabled": true } }),
    );
    let mut pi = sb.spawn();
    pi.script.resolvable = false;
    let r = pi.start(sb.start_params(json!({})));
    assert_eq!(pi.asked[0]["params"]["specs"], json!(["fake/model"]));
    assert_eq!(
        r["notifications"],
        json!([{ "level": "error", "message": "pi-memory config error:\n- model \"fake/model\" for dream is not resolvable (unknown id or missing credentials)\n- model \"fake/model\" for extractMemories is not resolvable (unknown id or missing credentials)\n- model \"fake/model\" for autoSurfacing is not resolvable (unknown id or missing credentials)" }])
    );
    let s = pi.call("command/run", json!({ "name": "memory", "args": "" }));
    assert!(
        s["text"].as_str().unwrap().contains(
            "\nModules: dream=off(unresolvable model fake/model) extractMemories=off(unresolvable model fake/model) autoSurfacing=on(lexical)\n"
        ),
        "{s}"
    );
    let d = pi.call("command/run", json!({ "name": "dream", "args": "" }));
    assert_eq!(
        d["text"],
        "Dream failed: model \"fake/model\" for dream is not resolvable (unknown id or missing credentials)"
    );
    // but the store still works
    let t = pi.tool(json!({ "action": "list" }));
    assert_eq!(t["text"], "No memories yet.");
}

fn write_lock(dir: &Path, pid: u32) -> String {
    fs::create_dir_all(dir).unwrap();
    let host = fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_owned())
        .unwrap_or_default();
    let host = if host.is_empty() {
        "localhost".to_owned()
    } else {
        host
    };
    fs::write(
        dir.join(".lock"),
        json!({ "pid": pid, "hostname": host, "startedAt": "2026-10-02T00:00:00.000Z", "op": "dream" }).to_string(),
    )
    .unwrap();
    format!("dream (pid {pid} on {host}, started 2026-10-02T00:00:00.000Z)")
}

#[test]
fn unlock_asks_first_and_follows_m12_m13_m14() {
    let sb = Sandbox::new();
    let dir = sb.memory_dir();
    let mut pi = sb.spawn();
    pi.start(sb.start_params(json!({})));
    // M14
    let r = pi.call("command/run", json!({ "name": "memory", "args": "unlock" }));
    assert_eq!(r["text"], "No lock present.");
    assert!(pi.asked.iter().all(|a| a["method"] != "ui/confirm"));

    // M12: a live holder (this test process) shows in the status
    let holder = write_lock(&dir, std::process::id());
    let s = pi.call("command/run", json!({ "name": "memory", "args": "" }));
    assert!(
        s["text"]
            .as_str()
            .unwrap()
            .ends_with(&format!("\nLock: held by {holder}")),
        "{s}"
    );

    // M13 cancel: lock stays, nothing shown
    pi.script.confirm = false;
    let r = pi.call("command/run", json!({ "name": "memory", "args": "unlock" }));
    assert_eq!(r["text"], Value::Null);
    let ask = pi
        .asked
        .iter()
        .rev()
        .find(|a| a["method"] == "ui/confirm")
        .unwrap();
    assert_eq!(ask["params"]["title"], "Memory lock");
    assert_eq!(
        ask["params"]["body"],
        format!(
            "Remove the memory lock file? It is held by {holder}. Only do this if no memory operation is running."
        )
    );
    assert!(dir.join(".lock").exists());

    // a held lock fails writes with the exact error (short timeout keeps the test fast)
    // M13 confirm
    pi.script.confirm = true;
    let r = pi.call("command/run", json!({ "name": "memory", "args": "unlock" }));
    assert_eq!(r["text"], "Memory lock removed.");
    assert!(!dir.join(".lock").exists());
}

#[test]
fn a_held_lock_fails_a_write_with_the_holder_named() {
    let sb = Sandbox::new();
    sb.config(json!({ "lock": { "timeoutMs": 200 } }));
    let dir = sb.memory_dir();
    let pid = std::process::id();
    write_lock(&dir, pid);
    let mut pi = sb.spawn();
    pi.start(sb.start_params(json!({})));
    let r = pi.tool(json!({ "action": "add", "name": "blocked", "content": "x" }));
    assert_eq!(r["isError"], true);
    assert_eq!(
        r["text"],
        format!("Memory is locked by dream (pid {pid}, started 2026-10-02T00:00:00.000Z)")
    );
    assert!(!dir.join("blocked.md").exists());
}

// ------------------------------------------------------------------ surfacing

#[test]
fn lexical_surfacing_injects_relevant_memories_once_per_session_and_never_in_children() {
    let sb = Sandbox::new();
    let mut pi = sb.spawn();
    pi.start(sb.start_params(json!({})));
    for (name, content) in [
        (
            "Deploy command",
            "Deploy the staging stack with `make ship STAGE=staging`.",
        ),
        (
            "Database port",
            "The local Postgres database listens on port 5433.",
        ),
        (
            "Lint rules",
            "Run clippy with warnings denied before committing.",
        ),
    ] {
        pi.tool(json!({ "action": "add", "name": name, "content": content }));
    }
    let before = |prompt: &str, extra: Value| {
        let mut p = json!({ "prompt": prompt, "messageType": "user", "systemPrompt": "" });
        for (k, v) in extra.as_object().unwrap() {
            p[k] = v.clone();
        }
        p
    };
    let r = pi.call(
        "agent/before_start",
        before(
            "how do I deploy the staging stack with make ship?",
            json!({}),
        ),
    );
    assert_eq!(r["message"]["customType"], "memory-auto-surfacing");
    assert_eq!(r["message"]["display"], false);
    let content = r["message"]["content"].as_str().unwrap();
    assert!(
        content.starts_with("<relevant_memories>\n## Deploy command\n"),
        "{content}"
    );
    assert!(content.ends_with("\n</relevant_memories>"));
    assert_eq!(r["message"]["details"]["files"][0], "Deploy-command.md");
    assert!(r["notify"].as_str().unwrap().starts_with("Recalled: "));

    // already surfaced this session: not again
    let r = pi.call(
        "agent/before_start",
        before("deploy the staging stack with make ship", json!({})),
    );
    assert_eq!(r["message"], Value::Null);
    // unrelated prompt
    let r = pi.call(
        "agent/before_start",
        before("what is the weather on mars", json!({})),
    );
    assert_eq!(r["message"], Value::Null);
    // PM-60 skips
    let r = pi.call(
        "agent/before_start",
        before(
            "database port postgres",
            json!({ "systemPrompt": "x <active_agent name=\"sub\"/>" }),
        ),
    );
    assert_eq!(r["message"], Value::Null);
    let r = pi.call(
        "agent/before_start",
        before("database port postgres", json!({ "messageType": "custom" })),
    );
    assert_eq!(r["message"], Value::Null);
    // compaction clears the surfaced set
    pi.call("session/compact", json!({}));
    let r = pi.call(
        "agent/before_start",
        before(
            "how do I deploy the staging stack with make ship?",
            json!({}),
        ),
    );
    assert_eq!(r["message"]["details"]["files"][0], "Deploy-command.md");
    pi.finish();

    let mut child = sb.spawn();
    child.start(sb.start_params(json!({ "child": true, "hasUI": false, "sessionFile": null })));
    let r = child.call(
        "agent/before_start",
        before(
            "how do I deploy the staging stack with make ship?",
            json!({}),
        ),
    );
    assert_eq!(r["message"], Value::Null);
}

// ------------------------------------------------------------------ model-driven

#[test]
fn dream_asks_then_runs_through_pis_model_and_reports_the_summary() {
    let sb = Sandbox::new();
    sb.config(json!({ "defaults": { "model": "fake/model" } }));
    let mut pi = sb.spawn();
    pi.start(sb.start_params(json!({})));
    pi.tool(
        json!({ "action": "add", "name": "Deploy command", "content": "Deploy with make ship." }),
    );
    pi.tool(json!({ "action": "add", "name": "Deploy command (dup)", "content": "Deploy with make ship." }));
    pi.script.completions = VecDeque::from(vec![
        Ok(completion_tool(
            "d1",
            json!({ "action": "remove", "name": "Deploy command (dup)" }),
        )),
        Ok(completion_text("Merged 1 duplicate.")),
    ]);
    // cancelled: nothing happens
    pi.script.confirm = false;
    let r = pi.call("command/run", json!({ "name": "dream", "args": "" }));
    assert_eq!(r["text"], Value::Null);
    assert!(pi.asked.iter().all(|a| a["method"] != "model/complete"));
    let ask = pi
        .asked
        .iter()
        .find(|a| a["method"] == "ui/confirm")
        .unwrap();
    assert_eq!(
        ask["params"],
        json!({ "title": "Dream", "body": "Consolidate all memory files? This rewrites them in-place." })
    );

    pi.script.confirm = true;
    let r = pi.call("command/run", json!({ "name": "dream", "args": "" }));
    assert_eq!(r["text"], "Merged 1 duplicate.");
    assert_eq!(r["level"], "info");
    let calls: Vec<&Value> = pi
        .asked
        .iter()
        .filter(|a| a["method"] == "model/complete")
        .collect();
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[0]["params"]["model"], "fake/model");
    assert_eq!(calls[0]["params"]["thinkLevel"], "high");
    let tools = calls[0]["params"]["tools"].as_array().unwrap();
    assert_eq!(
        tools[0]["parameters"]["properties"]["action"]["enum"],
        json!([
            "add",
            "replace",
            "remove",
            "list",
            "search",
            "rename",
            "rebuild_index"
        ])
    );
    assert!(calls[0]["params"]["timeoutMs"].as_u64().unwrap() > 0);
    // the second call carries the tool result back
    let msgs = calls[1]["params"]["messages"].as_array().unwrap();
    assert_eq!(msgs.last().unwrap()["role"], "toolResult");
    let dir = sb.memory_dir();
    assert!(!dir.join("Deploy-command-(dup).md").exists());
    assert!(dir.join(".dream-meta.json").exists());
    let status: Vec<&Value> = pi
        .notes
        .iter()
        .filter(|n| n["method"] == "ui/status")
        .collect();
    assert_eq!(
        status[0]["params"],
        json!({ "key": "dream", "text": "Consolidating memory..." })
    );
    assert_eq!(status[1]["params"], json!({ "key": "dream", "text": null }));

    // confirmed by the nudge: no second question
    pi.asked.clear();
    pi.script.completions = VecDeque::from(vec![Err("429 rate limited".to_owned())]);
    let r = pi.call(
        "command/run",
        json!({ "name": "dream", "args": "", "confirmed": true }),
    );
    assert!(pi.asked.iter().all(|a| a["method"] != "ui/confirm"));
    assert_eq!(r["text"], "Dream failed: 429 rate limited");
    assert_eq!(r["level"], "error");
}

#[test]
fn headless_dream_explains_that_it_needs_a_confirmation() {
    let sb = Sandbox::new();
    sb.config(json!({ "defaults": { "model": "fake/model" } }));
    let mut pi = sb.spawn();
    pi.start(sb.start_params(json!({ "hasUI": false, "mode": "print" })));
    let r = pi.call("command/run", json!({ "name": "dream", "args": "" }));
    assert!(
        r["text"].as_str().unwrap().starts_with("Dream not started"),
        "{r}"
    );
    assert!(pi.asked.iter().all(|a| a["method"] != "ui/confirm"));
}

fn turn(user: &str) -> Value {
    json!([
        { "role": "user", "content": [{ "type": "text", "text": user }], "timestamp": 1 },
        { "role": "assistant", "content": [{ "type": "text", "text": "Noted." }], "stopReason": "stop", "timestamp": 2 },
    ])
}

#[test]
fn extraction_runs_after_a_settled_run_and_notifies_once_on_failure() {
    let sb = Sandbox::new();
    sb.config(
        json!({ "defaults": { "model": "fake/model" }, "extractMemories": { "enabled": true } }),
    );
    let mut pi = sb.spawn();
    pi.start(sb.start_params(json!({})));
    pi.call(
        "agent/before_start",
        json!({ "prompt": "hi", "messageType": "user", "systemPrompt": "<project_instructions path=\"/p/AGENTS.md\">\nUse tabs.\n</project_instructions>" }),
    );
    pi.script.completions = VecDeque::from(vec![
        Ok(completion_tool(
            "e1",
            json!({ "action": "add", "name": "Staging port", "content": "Staging SSH listens on 2222." }),
        )),
        Ok(completion_text("Saved one memory.")),
    ]);
    let r = pi.call(
        "agent/settled",
        json!({ "messages": turn("staging ssh is on port 2222"), "aborted": false }),
    );
    assert_eq!(r, json!({}));
    pi.wait_note(|n| n["params"]["message"] == "Extracted 1 memory.");
    assert!(sb.memory_dir().join("Staging-port.md").exists());
    let first = pi
        .asked
        .iter()
        .find(|a| a["method"] == "model/complete")
        .unwrap();
    let task = first["params"]["messages"][0]["content"].as_str().unwrap();
    assert!(task.contains("staging ssh is on port 2222"), "{task}");
    assert!(task.contains(
        "<project_instructions path=\"/p/AGENTS.md\">\nUse tabs.\n</project_instructions>"
    ));

    // aborted runs and empty batches do nothing
    let n = pi.asked.len();
    pi.call(
        "agent/settled",
        json!({ "messages": turn("x"), "aborted": true }),
    );
    pi.call("agent/settled", json!({ "messages": [], "aborted": false }));

    // failures: one notification per session
    pi.script.completions = VecDeque::from(vec![Err("boom".to_owned()), Err("boom".to_owned())]);
    pi.call(
        "agent/settled",
        json!({ "messages": turn("first"), "aborted": false }),
    );
    pi.wait_note(|n| n["params"]["message"] == "Extract failed: boom");
    pi.call(
        "agent/settled",
        json!({ "messages": turn("second"), "aborted": false }),
    );
    let r = pi.call("session/shutdown", json!({}));
    assert_eq!(r["finished"], true);
    assert_eq!(pi.asked.len(), n + 2);
    let failures = pi
        .notes
        .iter()
        .filter(|n| {
            n["params"]["message"]
                .as_str()
                .unwrap_or("")
                .starts_with("Extract failed")
        })
        .count();
    assert_eq!(failures, 1);
    assert!(pi.finish().success());
}

#[test]
fn the_dream_nudge_comes_with_session_start_for_ui_sessions_only_s3() {
    let sb = Sandbox::new();
    sb.config(json!({ "defaults": { "model": "fake/model" } }));
    let encoded = format!(
        "--{}--",
        sb.project
            .to_string_lossy()
            .trim_start_matches('/')
            .replace('/', "-")
    );
    let dir = sb.agent.join("sessions").join(encoded);
    fs::create_dir_all(&dir).unwrap();
    for i in 1..=5 {
        let header = json!({ "type": "session", "version": 3, "id": format!("s{i}"),
            "timestamp": format!("2026-11-0{i}T00:00:00.000Z"), "cwd": sb.project });
        fs::write(
            dir.join(format!("2026-11-0{i}T00-00-00-000Z_s{i}.jsonl")),
            format!("{header}\n"),
        )
        .unwrap();
    }
    let mut pi = sb.spawn();
    let r = pi.start(sb.start_params(json!({})));
    assert_eq!(
        r["nudge"],
        json!({ "title": "Memory Consolidation", "body": "💡 5 sessions, 5 new entries since last dream. /dream\n\nConsolidate memory files now?" })
    );
    pi.finish();
    // headless: never
    let mut pi = sb.spawn();
    let r = pi.start(sb.start_params(json!({ "hasUI": false })));
    assert_eq!(r["nudge"], Value::Null);
    pi.finish();
    // no usable dream model: a nudge could only lead to "Dream failed"
    sb.config(json!({}));
    let mut pi = sb.spawn();
    let r = pi.start(sb.start_params(json!({})));
    assert_eq!(r["nudge"], Value::Null);
}

#[test]
fn end_of_input_waits_for_background_work_and_exits_zero() {
    let sb = Sandbox::new();
    sb.config(
        json!({ "defaults": { "model": "fake/model" }, "extractMemories": { "enabled": true } }),
    );
    let mut pi = sb.spawn();
    pi.script.hold_model = true;
    pi.start(sb.start_params(json!({ "hasUI": false })));
    // the model call is in flight and never answered: closing stdin fails it, the
    // extraction ends, and the sidecar exits 0. (The call may reach us before or after the
    // `agent/settled` response: the extraction runs on its own thread.)
    pi.call(
        "agent/settled",
        json!({ "messages": turn("REMEMBER: nothing"), "aborted": false }),
    );
    pi.wait_asked("model/complete");
    assert!(pi.finish().success());
}

// The run log through the protocol: a child module, so it uses the fake pi above.
/// The messages of `session/start`'s `notifications`.
fn notification_messages(r: &Value) -> Vec<&str> {
    r["notifications"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|n| n["message"].as_str())
        .collect()
}

#[path = "serve_experience.rs"]
mod experience;

#[path = "serve_pa.rs"]
mod pa;

#[path = "serve_curate.rs"]
mod curate;
