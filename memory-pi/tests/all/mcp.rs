//! `pimem mcp` over stdio with raw JSON-RPC lines (the official TypeScript SDK drives it in
//! `cargo xtask e2e`, memory-pi/e2e/mcp.mjs): pi's texts, versions in structuredContent,
//! list-changed notifications, and JSON-RPC errors naming the field with nothing changed.
#![allow(clippy::unwrap_used)]

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use serde_json::{Value, json};
use testkit::Sandbox;

struct Mcp {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    id: u64,
    notifications: Vec<Value>,
}

impl Mcp {
    fn start(sandbox: &Sandbox) -> Mcp {
        let proj = sandbox.dir("proj");
        let mut child = Command::new(env!("CARGO_BIN_EXE_pimem"))
            .args(["--cwd", proj.as_str()])
            .args(["--memory-dir", sandbox.path("memory").as_str()])
            .args(["--agent-dir", sandbox.path("agent").as_str()])
            .args(["mcp", "--watch-interval-ms", "0"])
            .env("HOME", sandbox.home())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let mut mcp = Mcp {
            child,
            stdin,
            stdout,
            id: 0,
            notifications: Vec::new(),
        };
        let init = mcp.request(
            "initialize",
            json!({ "protocolVersion": "2025-06-18", "capabilities": {},
                    "clientInfo": { "name": "test", "version": "1" } }),
        );
        assert_eq!(init["result"]["serverInfo"]["name"], "pimem", "{init}");
        mcp.send(json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }));
        mcp
    }

    fn send(&mut self, msg: Value) {
        writeln!(self.stdin, "{msg}").unwrap();
        self.stdin.flush().unwrap();
    }

    /// The whole response message (`result` or `error`).
    fn request(&mut self, method: &str, params: Value) -> Value {
        self.id += 1;
        let id = self.id;
        self.send(json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }));
        loop {
            let mut line = String::new();
            assert!(
                self.stdout.read_line(&mut line).unwrap() > 0,
                "server closed"
            );
            let msg: Value = serde_json::from_str(&line).unwrap();
            if msg["id"] == json!(id) {
                return msg;
            }
            self.notifications.push(msg);
        }
    }

    fn call(&mut self, tool: &str, args: Value) -> Value {
        self.request("tools/call", json!({ "name": tool, "arguments": args }))
    }
}

impl Drop for Mcp {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn text(response: &Value) -> &str {
    response["result"]["content"][0]["text"].as_str().unwrap()
}

#[test]
fn tools_answer_with_pi_texts_and_versions() {
    let sandbox = Sandbox::new();
    let mut mcp = Mcp::start(&sandbox);
    let tools = mcp.request("tools/list", json!({}));
    let names: Vec<&str> = tools["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "memory_add",
            "memory_replace",
            "memory_remove",
            "memory_list",
            "memory_search",
            "session_search"
        ]
    );
    let added = mcp.call(
        "memory_add",
        json!({ "name": "Test command", "content": "Run cargo xtask ci." }),
    );
    assert_eq!(text(&added), "Saved \"Test command\" (Test-command.md).");
    let version = added["result"]["structuredContent"]["version"]
        .as_str()
        .unwrap()
        .to_owned();
    // The list-changed notification is sent before the tool's answer.
    assert!(
        mcp.notifications
            .iter()
            .any(|n| n["method"] == "notifications/resources/list_changed"),
        "{:?}",
        mcp.notifications
    );
    let stale = mcp.call(
        "memory_replace",
        json!({ "name": "Test command", "content": "x", "expected_version": "0123456789abcdef" }),
    );
    assert_eq!(stale["result"]["isError"], true);
    assert_eq!(text(&stale), "Memory conflict: stale version");
    let ok = mcp.call(
        "memory_replace",
        json!({ "name": "Test command", "content": "Run cargo xtask ci, always.",
                "expected_version": version }),
    );
    assert_eq!(text(&ok), "Replaced \"Test command\" (Test-command.md).");
    // Referenced by file name: the structured result still names the memory.
    let by_file = mcp.call(
        "memory_replace",
        json!({ "name": "Test-command.md", "content": "Run cargo xtask ci, every time." }),
    );
    assert_eq!(
        by_file["result"]["structuredContent"]["name"], "Test command",
        "{by_file}"
    );
    let listed = mcp.call("memory_list", json!({}));
    assert!(text(&listed).starts_with("- Test command (feedback, modified "));
    let read = mcp.request(
        "resources/read",
        json!({ "uri": "pimem://entry/Test-command.md" }),
    );
    let file = sandbox
        .path("memory")
        .join("local")
        .read_dir_utf8()
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path()
        .join("Test-command.md");
    assert_eq!(
        read["result"]["contents"][0]["text"].as_str().unwrap(),
        std::fs::read_to_string(file).unwrap()
    );
}

#[test]
fn bad_requests_are_json_rpc_errors_naming_the_field() {
    let sandbox = Sandbox::new();
    let mut mcp = Mcp::start(&sandbox);
    for (tool, args, field, message) in [
        (
            "memory_add",
            json!({ "name": 1, "content": "x" }),
            "name",
            "name must be a string",
        ),
        (
            "memory_add",
            json!({ "name": "", "content": "x" }),
            "name",
            "name is required for add",
        ),
        (
            "memory_replace",
            json!({ "name": "a" }),
            "content",
            "content is required for replace",
        ),
        (
            "memory_remove",
            json!({ "name": "a", "expected_version": "12" }),
            "expected_version",
            "invalid version",
        ),
        (
            "memory_add",
            json!({ "name": "a", "content": "b", "type": "Note" }),
            "type",
            "type must be one of",
        ),
        (
            "memory_list",
            json!({ "all": true }),
            "all",
            "unknown argument \"all\" for memory_list",
        ),
        (
            "memory_forget",
            json!({}),
            "name",
            "unknown tool \"memory_forget\"",
        ),
    ] {
        let r = mcp.call(tool, args);
        let err = &r["error"];
        assert_eq!(err["code"], -32602, "{tool}: {r}");
        assert_eq!(err["data"]["field"], field, "{tool}: {r}");
        assert!(
            err["message"].as_str().unwrap().contains(message),
            "{tool}: {r}"
        );
    }
    let r = mcp.request(
        "resources/read",
        json!({ "uri": "pimem://entry/a%2F..%2Fb.md" }),
    );
    assert_eq!(r["error"]["data"]["field"], "uri", "{r}");
    let r = mcp.request("prompts/get", json!({ "name": "relevant_memories" }));
    assert_eq!(r["error"]["data"]["field"], "text", "{r}");
    // Nothing was created: not even the memory directory.
    assert!(!sandbox.path("memory").exists());
}

/// `pimem` with the test's directories (the CLI side of the same agent directory).
fn pimem(sandbox: &Sandbox, args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_pimem"))
        .args(["--cwd", sandbox.path("proj").as_str()])
        .args(["--memory-dir", sandbox.path("memory").as_str()])
        .args(["--agent-dir", sandbox.path("agent").as_str()])
        .args(args)
        .env("HOME", sandbox.home())
        .output()
        .unwrap()
}

#[test]
fn mcp_tools_answer_memory_is_off_and_refuse_secrets_like_pi() {
    let sandbox = Sandbox::new();
    let mut mcp = Mcp::start(&sandbox);
    let added = mcp.call(
        "memory_add",
        json!({ "name": "Kept", "content": "Stays while memory is off." }),
    );
    assert_eq!(added["result"]["isError"], false, "{added}");
    // A secret is refused with its kind and position, never its value.
    let secret = "ghp_R8x2Kq9LmZ4vT7nB1cW5yH3jF6dP0sA2eU9i";
    let refused = mcp.call(
        "memory_add",
        json!({ "name": "Token", "content": format!("use {secret} for CI") }),
    );
    assert_eq!(refused["result"]["isError"], true, "{refused}");
    assert!(text(&refused).contains("line 1, column 5"), "{refused}");
    assert!(!refused.to_string().contains(secret));
    // Off in another process: the server's next call sees it (no cached state).
    let off = pimem(&sandbox, &["off"]);
    assert!(off.status.success(), "{off:?}");
    let store_dir = sandbox.path("memory");
    let before = testkit_files(store_dir.as_std_path());
    for (tool, args) in [
        (
            "memory_add",
            json!({ "name": "New", "content": "not saved" }),
        ),
        (
            "memory_replace",
            json!({ "name": "Kept", "content": "not changed" }),
        ),
        ("memory_remove", json!({ "name": "Kept" })),
        ("memory_list", json!({})),
    ] {
        let out = mcp.call(tool, args);
        assert_eq!(out["result"]["isError"], true, "{tool}: {out}");
        assert!(text(&out).starts_with("Memory is off"), "{tool}: {out}");
    }
    assert_eq!(
        testkit_files(store_dir.as_std_path()),
        before,
        "nothing written"
    );
    let on = pimem(&sandbox, &["on"]);
    assert!(on.status.success(), "{on:?}");
    let listed = mcp.call("memory_list", json!({}));
    assert!(text(&listed).starts_with("- Kept ("), "{listed}");
}

/// Every file under `dir` with its bytes, sorted.
fn testkit_files(dir: &std::path::Path) -> Vec<(std::path::PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push((p.clone(), std::fs::read(&p).unwrap()));
            }
        }
    }
    out.sort();
    out
}
