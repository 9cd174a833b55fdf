//! `mcp`: one MCP tool call's round trip over stdio (`pimem mcp`, a long-lived process)
//! against the same operation through the CLI (`pimem search`, one process per call), on the
//! same project in the same run.
//!
//! The client side is a minimal newline-delimited JSON-RPC writer/reader on the child's pipes
//! (the same bytes an MCP client sends); the round trip is from writing the request to
//! reading its response line. Needs a release `pimem` with the `mcp` feature: `PIMEM_BIN`
//! (set by `cargo xtask bench`).

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};

use crate::timing::{fmt, stats_of};

const ENTRIES: usize = 200;
const MCP_CALLS: usize = 400;
const CLI_CALLS: usize = 60;

struct Server {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    next_id: u64,
}

impl Server {
    fn start(pimem: &Path, args: &[String], env: &[(&str, PathBuf)]) -> Result<Server> {
        let mut child = Command::new(pimem)
            .arg("mcp")
            .args(args)
            .args(["--watch-interval-ms", "0"])
            .envs(env.iter().map(|(k, v)| (*k, v)))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .with_context(|| format!("cannot start {} mcp", pimem.display()))?;
        let stdin = child.stdin.take().context("no stdin")?;
        let stdout = BufReader::new(child.stdout.take().context("no stdout")?);
        let mut server = Server {
            child,
            stdin,
            stdout,
            next_id: 1,
        };
        server.request(
            "initialize",
            json!({ "protocolVersion": "2025-06-18", "capabilities": {},
                    "clientInfo": { "name": "memory-bench", "version": "1" } }),
        )?;
        server.send(&json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }))?;
        Ok(server)
    }

    fn send(&mut self, msg: &Value) -> Result<()> {
        let mut line = serde_json::to_vec(msg)?;
        line.push(b'\n');
        self.stdin.write_all(&line)?;
        self.stdin.flush()?;
        Ok(())
    }

    /// Sends a request and reads lines until its response (skipping notifications).
    fn request(&mut self, method: &str, params: Value) -> Result<Value> {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }))?;
        let mut line = String::new();
        loop {
            line.clear();
            if self.stdout.read_line(&mut line)? == 0 {
                bail!("pimem mcp closed its output");
            }
            let msg: Value = serde_json::from_str(&line)?;
            if msg.get("id") == Some(&json!(id)) {
                if let Some(err) = msg.get("error") {
                    bail!("{method} failed: {err}");
                }
                return Ok(msg["result"].clone());
            }
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn pct(times: &mut [Duration], q: f64) -> Duration {
    times.sort();
    times[((times.len() - 1) as f64 * q).round() as usize]
}

pub(crate) fn run() -> Result<()> {
    let Some(pimem) = std::env::var_os("PIMEM_BIN").map(PathBuf::from) else {
        bail!(
            "the mcp group needs PIMEM_BIN (a release pimem with the mcp feature); `cargo xtask bench mcp` sets it"
        );
    };
    let tmp = tempfile::tempdir()?;
    let home = tmp.path().join("home");
    let agent = tmp.path().join("agent");
    let proj = tmp.path().join("proj");
    for d in [&home, &agent, &proj] {
        std::fs::create_dir_all(d)?;
    }
    let env = [
        ("HOME", home.clone()),
        ("PI_CODING_AGENT_DIR", agent.clone()),
    ];
    let global: Vec<String> = vec![
        "--cwd".into(),
        proj.display().to_string(),
        "--memory-dir".into(),
        tmp.path().join("memory").display().to_string(),
        "--agent-dir".into(),
        agent.display().to_string(),
    ];
    let mut server = Server::start(&pimem, &global, &env)?;
    for i in 0..ENTRIES {
        let result = server.request(
            "tools/call",
            json!({ "name": "memory_add", "arguments": {
                "name": format!("Fact {i}"),
                "content": format!("fact number {i} about module m{} and the staging deploy", i % 17) } }),
        )?;
        if result["isError"] == json!(true) {
            bail!("seeding failed: {result}");
        }
    }
    let search = json!({ "name": "memory_search", "arguments": { "query": "m7 and" } });
    let list = json!({ "name": "memory_list", "arguments": {} });
    let (mut t_search, mut t_list, mut t_cli) = (Vec::new(), Vec::new(), Vec::new());
    for i in 0..MCP_CALLS {
        let t = Instant::now();
        let out = server.request("tools/call", search.clone())?;
        t_search.push(t.elapsed());
        std::hint::black_box(out);
        let t = Instant::now();
        std::hint::black_box(server.request("tools/call", list.clone())?);
        t_list.push(t.elapsed());
        // Interleave the CLI baseline so both see the same machine state.
        if i % (MCP_CALLS / CLI_CALLS) == 0 && t_cli.len() < CLI_CALLS {
            let t = Instant::now();
            let out = Command::new(&pimem)
                .args(&global)
                .args(["search", "m7 and"])
                .envs(env.iter().map(|(k, v)| (*k, v)))
                .output()?;
            t_cli.push(t.elapsed());
            if !out.status.success() {
                bail!(
                    "pimem search failed: {}",
                    String::from_utf8_lossy(&out.stderr)
                );
            }
        }
    }
    println!(
        "`pimem mcp` (stdio, release) vs `pimem search` (one process per call), {ENTRIES} memories, same run:\n"
    );
    println!("| operation | p50 | p99 | samples |");
    println!("|---|---|---|---|");
    for (name, times) in [
        ("MCP tools/call memory_search (round trip)", &mut t_search),
        ("MCP tools/call memory_list (round trip)", &mut t_list),
        ("CLI `pimem search` (spawn to exit)", &mut t_cli),
    ] {
        let n = times.len();
        let (p50, p99) = (pct(times, 0.5), pct(times, 0.99));
        println!("| {name} | {} | {} | {n} |", fmt(p50), fmt(p99));
    }
    let ratio = stats_of(t_cli.clone()).median.as_secs_f64()
        / stats_of(t_search.clone()).median.as_secs_f64().max(1e-9);
    println!(
        "\nThe same search through MCP is {ratio:.1}× faster at the median than through the CLI."
    );
    Ok(())
}
