//! Group `sessions`: `memory_agent::pi::sessions::search_sessions` over >= 1 GiB of generated pi
//! session files against `rg -F -i` on the same directory, in the same run.
//!
//! The corpus imitates pi 1.6.0 files (`docs/pi-host.md` §h): header, `session_info`, model and
//! thinking changes, then turns of user prompt, hidden recall `custom_message`, assistant
//! message with thinking + text + tool call, a large `toolResult` (code dump) and a final
//! assistant answer, with an occasional compaction. The query literal appears, in mixed case,
//! in a handful of sessions only, so both tools must read every byte. Files live in a temp
//! dir under /tmp that is deleted at the end (also on error).

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

use anyhow::{Context, Result, bail, ensure};
use memory_agent::pi::session_tools::{Caller, search_session};
use memory_agent::pi::sessions::{SessionSearchOptions, SessionStorage, search_sessions};
use serde_json::{Value, json};

use crate::timing::{self, HEADER, Stats};

/// Total bytes to generate.
const TARGET_BYTES: u64 = 1 << 30;
/// The searched literal; the corpus contains it in these spellings.
const QUERY: &str = "zebrafish-quorum";
const PLANTED: [&str; 3] = ["Zebrafish-Quorum", "ZEBRAFISH-QUORUM", "zebrafish-quorum"];
/// Sessions with the literal in searchable text, and one with it only in a tool result.
const SEARCHABLE_PLANTS: usize = 6;
const SAMPLES: usize = 5;
/// Cyrillic: every letter has two spellings, so the prefilter gets 64 literals.
const CYRILLIC_QUERY: &str = "ошибка";
/// U+0307 alone (second half of `İ`'s fold) has no raw spelling: every line is parsed.
const FALLBACK_QUERY: &str = "\u{307}";

/// Runs the group.
pub(crate) fn run() -> Result<()> {
    let tmp = tempfile::Builder::new()
        .prefix("memory-bench-sessions-")
        .tempdir_in("/tmp")
        .context("creating the corpus directory under /tmp")?;
    let dir = tmp.path().join("--home-u-app--");
    std::fs::create_dir(&dir)?;
    let t = Instant::now();
    let (files, bytes) = generate(&dir)?;
    eprintln!(
        "sessions: generated {files} files, {:.2} GiB in {:.1} s",
        bytes as f64 / (1u64 << 30) as f64,
        t.elapsed().as_secs_f64()
    );

    let opts = SessionSearchOptions::default();
    let one_thread = SessionSearchOptions {
        threads: 1,
        ..SessionSearchOptions::default()
    };
    // Correctness first: every planted searchable session is found, nothing else.
    let found = search_sessions(&dir, None, QUERY, &opts)?;
    ensure!(
        found.hits.len() == SEARCHABLE_PLANTS,
        "expected {SEARCHABLE_PLANTS} sessions with hits, got {}",
        found.hits.len()
    );

    let ours = timing::measure(SAMPLES, || search_sessions(&dir, None, QUERY, &opts));
    let ours_1 = timing::measure(SAMPLES, || search_sessions(&dir, None, QUERY, &one_thread));
    let cyrillic = timing::measure(SAMPLES, || {
        search_sessions(&dir, None, CYRILLIC_QUERY, &opts)
    });
    // A query without any raw spelling parses every line: the slow path, for scale.
    let fallback = timing::measure(2, || search_sessions(&dir, None, FALLBACK_QUERY, &opts));
    // The `search-session` tool end to end: its limits (20 sessions, 5 segments, 2 000
    // characters), user and assistant text only, the status JSON.
    let caller = Caller::new(
        "/home/u/app".into(),
        SessionStorage::PerCwd {
            root: tmp.path().to_path_buf(),
        },
    );
    let args = json!({ "query": QUERY });
    let tool = search_session(&args, &caller);
    ensure!(
        tool.status["sessions"].as_array().map(Vec::len) == Some(SEARCHABLE_PLANTS),
        "search-session found {}",
        tool.status
    );
    let tool_stats = timing::measure(SAMPLES, || search_session(&args, &caller));

    println!(
        "Corpus: {files} session files, {:.2} GiB (generated, page cache warm); query `{QUERY}` \
         (planted in mixed case in {} sessions). Median of {SAMPLES} runs after one warm-up.\n",
        bytes as f64 / (1u64 << 30) as f64,
        SEARCHABLE_PLANTS + 1
    );
    println!("{HEADER}");
    println!("{}", row("search_sessions (auto threads)", &ours, bytes));
    println!("{}", row("search_sessions (1 thread)", &ours_1, bytes));
    println!(
        "{}",
        row(
            &format!("search_sessions, query `{CYRILLIC_QUERY}` (64 literals)"),
            &cyrillic,
            bytes
        )
    );
    println!(
        "{}",
        row(
            "search_sessions, query U+0307: no prefilter, every line parsed",
            &fallback,
            bytes
        )
    );
    println!(
        "{}",
        row(
            "search-session tool (20 × 5 × 2000, user and assistant text, status JSON)",
            &tool_stats,
            bytes
        )
    );

    match rg_version() {
        None => {
            println!(
                "\n`rg` (ripgrep) is not on PATH: comparison skipped. Install it with \
                 `cargo install ripgrep` and rerun."
            );
        }
        Some(version) => {
            let rg = rg_stats(&dir, &[])?;
            let rg_1 = rg_stats(&dir, &["-j1"])?;
            println!(
                "{}",
                row("rg -F -i --no-messages (auto threads)", &rg, bytes)
            );
            println!("{}", row("rg -F -i --no-messages -j1", &rg_1, bytes));
            println!(
                "\nRatio ours / ripgrep (median): auto threads **{:.2}x**, 1 thread {:.2}x \
                 (target <= 1.5x); the search-session tool **{:.2}x** (target <= 1.5x). \
                 ripgrep: {version}.",
                ratio(&ours, &rg),
                ratio(&ours_1, &rg_1),
                ratio(&tool_stats, &rg)
            );
        }
    }
    drop(tmp);
    println!();
    crate::session_refs::run()
}

fn row(name: &str, s: &Stats, bytes: u64) -> String {
    let gbs = bytes as f64 / s.median.as_secs_f64() / 1e9;
    timing::row(&format!("{name} ({gbs:.2} GB/s)"), s)
}

fn ratio(a: &Stats, b: &Stats) -> f64 {
    a.median.as_secs_f64() / b.median.as_secs_f64()
}

fn rg_version() -> Option<String> {
    let out = Command::new("rg").arg("--version").output().ok()?;
    out.status.success().then(|| {
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .next()
            .unwrap_or("rg")
            .to_owned()
    })
}

fn rg_stats(dir: &Path, extra: &[&str]) -> Result<Stats> {
    let run = || -> Result<()> {
        let status = Command::new("rg")
            .args(["-F", "-i", "--no-messages"])
            .args(extra)
            .arg(QUERY)
            .arg(dir)
            .stdout(Stdio::null())
            .status()
            .context("running rg")?;
        if !status.success() {
            bail!("rg found nothing ({status})");
        }
        Ok(())
    };
    run()?;
    let mut failed = None;
    let stats = timing::measure(SAMPLES, || {
        if let Err(e) = run() {
            failed = Some(e);
        }
    });
    match failed {
        Some(e) => Err(e),
        None => Ok(stats),
    }
}

// --- corpus generation -------------------------------------------------------------------

/// xorshift64*: deterministic, dependency-free.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    fn pick<'a>(&mut self, v: &[&'a str]) -> &'a str {
        v[self.below(v.len())]
    }
}

const WORDS: &[&str] = &[
    "the",
    "a",
    "to",
    "of",
    "and",
    "in",
    "is",
    "it",
    "that",
    "for",
    "on",
    "with",
    "this",
    "we",
    "you",
    "can",
    "should",
    "will",
    "not",
    "be",
    "are",
    "was",
    "function",
    "return",
    "error",
    "value",
    "file",
    "test",
    "build",
    "config",
    "session",
    "memory",
    "lock",
    "thread",
    "async",
    "struct",
    "impl",
    "trait",
    "module",
    "cargo",
    "clippy",
    "warning",
    "index",
    "write",
    "read",
    "path",
    "buffer",
    "parse",
    "json",
    "line",
    "token",
    "model",
    "tool",
    "result",
    "output",
    "input",
    "string",
    "vector",
    "option",
    "match",
    "branch",
    "commit",
    "refactor",
    "payment",
    "handler",
    "request",
    "response",
    "client",
    "server",
    "database",
    "query",
    "cache",
    "timeout",
    "retry",
    "deadline",
    "queue",
    "worker",
    "pool",
    "connection",
    "socket",
    "stream",
    "chunk",
    "bytes",
    "encoding",
    "decode",
    "encode",
    "because",
    "instead",
    "when",
    "then",
    "after",
    "before",
    "make",
    "sure",
    "check",
    "update",
    "remove",
    "add",
    "fix",
    "failing",
    "passes",
    "slow",
    "fast",
    "memory",
    "leak",
    "deadlock",
    "mutex",
    "Arc",
    "Vec",
    "HashMap",
    "String",
    "Result",
    "Option",
    "unwrap",
    "expect",
    "serde",
    "tokio",
    "axum",
    "sqlx",
    "Docker",
    "Kubernetes",
    "GitHub",
    "CI",
    "pipeline",
    "release",
    "version",
    "dependency",
    "upgrade",
];

const IDENTS: &[&str] = &[
    "handle_request",
    "parse_config",
    "conn",
    "pool",
    "buf",
    "len",
    "idx",
    "state",
    "ctx",
    "payload",
    "headers",
    "retry_count",
    "deadline",
    "tx",
    "rx",
    "guard",
    "entry",
    "key",
    "value",
    "items",
    "cache",
    "store",
    "session_id",
    "user_id",
    "timeout_ms",
    "path",
];

fn sentence(rng: &mut Rng, out: &mut String) {
    let n = 6 + rng.below(14);
    for i in 0..n {
        let w = rng.pick(WORDS);
        if i == 0 {
            let mut cs = w.chars();
            if let Some(c) = cs.next() {
                out.extend(c.to_uppercase());
                out.push_str(cs.as_str());
            }
        } else {
            out.push(' ');
            if rng.below(12) == 0 {
                out.push('`');
                out.push_str(rng.pick(IDENTS));
                out.push('`');
            } else {
                out.push_str(w);
            }
        }
    }
    out.push_str(if rng.below(6) == 0 { "?" } else { "." });
}

fn prose(rng: &mut Rng, min_chars: usize) -> String {
    let mut s = String::with_capacity(min_chars + 200);
    while s.len() < min_chars {
        sentence(rng, &mut s);
        s.push_str(match rng.below(8) {
            0 => "\n\n",
            1 => "\n- ",
            _ => " ",
        });
    }
    s
}

fn prose_between(rng: &mut Rng, min: usize, spread: usize) -> String {
    let n = min + rng.below(spread);
    prose(rng, n)
}

fn code_between(rng: &mut Rng, min: usize, spread: usize) -> String {
    let n = min + rng.below(spread);
    code(rng, n)
}

fn code(rng: &mut Rng, min_chars: usize) -> String {
    let mut s = String::with_capacity(min_chars + 200);
    let mut depth = 0usize;
    let mut n = 1;
    while s.len() < min_chars {
        s.push_str(&format!("{n:>4}\t"));
        s.push_str(&"    ".repeat(depth));
        match rng.below(7) {
            0 => {
                s.push_str(&format!(
                    "fn {}(&mut self, {}: &str) -> Result<(), Error> {{",
                    rng.pick(IDENTS),
                    rng.pick(IDENTS)
                ));
                depth += 1;
            }
            1 if depth > 0 => {
                s.push('}');
                depth -= 1;
            }
            2 => s.push_str(&format!(
                "let {} = {}.get(\"{}\").ok_or_else(|| anyhow!(\"missing {}\"))?;",
                rng.pick(IDENTS),
                rng.pick(IDENTS),
                rng.pick(IDENTS),
                rng.pick(WORDS)
            )),
            3 => s.push_str(&format!("// {}", prose(rng, 40).trim_end())),
            _ => s.push_str(&format!(
                "{}.{}({}, {})?;",
                rng.pick(IDENTS),
                rng.pick(IDENTS),
                rng.pick(IDENTS),
                rng.below(10_000)
            )),
        }
        s.push('\n');
        n += 1;
    }
    s
}

struct Writer {
    out: BufWriter<File>,
    bytes: u64,
    n: u32,
    last: Option<String>,
    ms: i64,
}

impl Writer {
    fn line(&mut self, v: &Value) -> Result<()> {
        let s = serde_json::to_string(v)?;
        self.out.write_all(s.as_bytes())?;
        self.out.write_all(b"\n")?;
        self.bytes += s.len() as u64 + 1;
        Ok(())
    }

    fn entry(&mut self, kind: &str, mut v: Value) -> Result<()> {
        self.n += 1;
        self.ms += 1_000 + (self.n as i64 * 7919) % 20_000;
        let id = format!("{:08x}", self.n.wrapping_mul(2_654_435_761));
        if let Some(o) = v.as_object_mut() {
            o.insert("type".into(), json!(kind));
            o.insert("id".into(), json!(id));
            o.insert("parentId".into(), json!(self.last));
            o.insert("timestamp".into(), json!(iso(self.ms)));
        }
        self.last = Some(id);
        self.line(&v)
    }
}

fn iso(ms: i64) -> String {
    jiff::Timestamp::from_millisecond(ms)
        .map(|t| t.strftime("%Y-%m-%dT%H:%M:%S%.3fZ").to_string())
        .unwrap_or_default()
}

/// Where the literal goes in a session, if anywhere.
#[derive(Clone, Copy)]
enum Plant {
    None,
    User,
    Assistant,
    ToolResultOnly,
}

fn generate(dir: &Path) -> Result<(usize, u64)> {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut total = 0u64;
    let mut files = 0usize;
    let base_ms: i64 = 1_790_000_000_000;
    while total < TARGET_BYTES {
        // Sessions from 100 KB to ~6 MB.
        let size = 100_000 + rng.below(6_000_000) as u64;
        let plant = match files {
            3 | 41 | 97 | 250 => Plant::User,
            150 | 199 => Plant::Assistant,
            177 => Plant::ToolResultOnly,
            _ => Plant::None,
        };
        let start = base_ms + files as i64 * 3_600_000;
        let id = format!(
            "0191{:04x}-{:04x}-7{:03x}-8{:03x}-{:012x}",
            rng.below(0xffff),
            rng.below(0xffff),
            rng.below(0xfff),
            rng.below(0xfff),
            rng.next() & 0xffff_ffff_ffff
        );
        let file = dir.join(format!(
            "{}_{id}.jsonl",
            iso(start).replace([':', '.'], "-")
        ));
        let mut w = Writer {
            out: BufWriter::with_capacity(1 << 20, File::create(&file)?),
            bytes: 0,
            n: 0,
            last: None,
            ms: start,
        };
        write_session(&mut w, &mut rng, &id, size, plant)?;
        w.out.flush()?;
        total += w.bytes;
        files += 1;
    }
    Ok((files, total))
}

fn write_session(w: &mut Writer, rng: &mut Rng, id: &str, size: u64, plant: Plant) -> Result<()> {
    w.line(
        &json!({"type":"session","version":3,"id":id,"timestamp":iso(w.ms),"cwd":"/home/u/app"}),
    )?;
    if rng.below(3) == 0 {
        w.entry("session_info", json!({"name": prose(rng, 10).trim()}))?;
    }
    w.entry(
        "model_change",
        json!({"provider":"anthropic","modelId":"claude-sonnet-4-5"}),
    )?;
    w.entry("thinking_level_change", json!({"thinkingLevel":"medium"}))?;
    let planted_turn = 1 + rng.below(3);
    let mut turn = 0;
    while w.bytes < size {
        let mut user = prose_between(rng, 60, 500);
        let mut answer = prose_between(rng, 300, 1500);
        let mut tool_out = code_between(rng, 1_000, 15_000);
        if turn == planted_turn {
            let lit = PLANTED[turn % PLANTED.len()];
            match plant {
                Plant::User => user.push_str(&format!("\nWhy does the {lit} check fail?")),
                Plant::Assistant => answer.push_str(&format!("\nThe {lit} path is the culprit.")),
                Plant::ToolResultOnly => tool_out.push_str(&format!("// {lit}\n")),
                Plant::None => {}
            }
        }
        w.entry("message", json!({"message":{"role":"user","content":[{"type":"text","text":user}],"timestamp":w.ms}}))?;
        if rng.below(5) == 0 {
            w.entry("custom_message", json!({"customType":"pi-memory-recall","content":format!("<relevant_memories>\n{}\n</relevant_memories>", prose(rng, 300)),"display":false,"details":{"files":["notes.md"]}}))?;
        }
        let usage = json!({"input":1200 + rng.below(50_000),"output":rng.below(4000),"cacheRead":rng.below(90_000),"cacheWrite":0,"totalTokens":rng.below(140_000),"cost":{"input":0.0036,"output":0.015,"cacheRead":0.0003,"cacheWrite":0,"total":0.0189}});
        w.entry("message", json!({"message":{"role":"assistant","content":[
            {"type":"thinking","thinking":prose_between(rng, 200, 600),"thinkingSignature":"EuYBCkQYAiJA"},
            {"type":"text","text":prose(rng, 40)},
            {"type":"toolCall","id":format!("toolu_{:016x}", rng.next()),"name":"read","arguments":{"path":format!("src/{}.rs", rng.pick(IDENTS))}}],
            "api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet-4-5","usage":usage,"stopReason":"toolUse","timestamp":w.ms}}))?;
        w.entry("message", json!({"message":{"role":"toolResult","toolCallId":format!("toolu_{:016x}", rng.next()),"toolName":"read","content":[{"type":"text","text":tool_out}],"isError":false,"timestamp":w.ms}}))?;
        w.entry("message", json!({"message":{"role":"assistant","content":[{"type":"text","text":answer}],
            "api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet-4-5","usage":usage,"stopReason":"stop","timestamp":w.ms}}))?;
        if rng.below(60) == 0 {
            w.entry("compaction", json!({"summary":prose(rng, 1500),"firstKeptEntryId":"00000001","tokensBefore":150_000,"details":{"readFiles":[],"modifiedFiles":[]}}))?;
        }
        turn += 1;
    }
    Ok(())
}
