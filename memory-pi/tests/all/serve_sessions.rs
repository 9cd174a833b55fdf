//! The `sessions/*` methods of `pimem serve` (pi-session: search-session, `@s:`/`@as:`,
//! ask-session) over its real stdio. `ask-session`'s target pi is a POSIX `sh` stand-in
//! speaking pi's RPC lines (the e2e suite runs the real one).
#![allow(clippy::unwrap_used)]

use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::serve::{Pi, Sandbox};

const T0: i64 = 1_795_988_245_400;

fn iso(ms: i64) -> String {
    memory_core::clock::iso_millis(jiff::Timestamp::from_millisecond(ms).unwrap())
}

/// Writes a named session of `cwd` in pi's layout under `agent/sessions`.
fn session(agent: &Path, cwd: &Path, id: &str, name: Option<&str>, ms: i64, text: &str) -> PathBuf {
    let dir = memory_agent::pi::sessions::session_dir_for_cwd(&agent.join("sessions"), cwd);
    fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{}_{id}.jsonl", iso(ms).replace([':', '.'], "-")));
    let mut lines =
        vec![json!({"type":"session","version":3,"id":id,"timestamp":iso(ms),"cwd":cwd})];
    if let Some(n) = name {
        lines.push(
            json!({"type":"session_info","id":"i1","parentId":null,"timestamp":iso(ms),"name":n}),
        );
    }
    lines.push(json!({"type":"message","id":"m1","parentId":null,"timestamp":iso(ms),"message":{"role":"user","content":[{"type":"text","text":text}],"timestamp":ms}}));
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    fs::write(&path, text).unwrap();
    path
}

fn caller(sb: &Sandbox, id: &str) -> Value {
    json!({"cwd": sb.project, "agentDir": sb.agent, "sessionDir": null, "sessionId": id, "sessionFile": null})
}

#[test]
fn search_returns_the_status_json_as_text_and_details() {
    let sb = Sandbox::new();
    session(
        &sb.agent,
        &sb.project,
        "s1",
        Some("Zebra talk"),
        T0,
        "about the Zebra",
    );
    let mut pi = sb.spawn();
    let r = pi.call(
        "sessions/search",
        json!({"caller": caller(&sb, "me"), "args": {"query": "zebra"}}),
    );
    let text: Value = serde_json::from_str(r["text"].as_str().unwrap()).unwrap();
    assert_eq!(text, r["details"]);
    assert_eq!(r["isError"], false);
    assert_eq!(r["guidance"], Value::Null);
    assert_eq!(text["sessions"][0]["name"], "Zebra talk");
    assert_eq!(
        text["sessions"][0]["segments"][0]["text"],
        "about the Zebra"
    );
    // Errors keep the shape: status JSON, marked as an error.
    let r = pi.call(
        "sessions/search",
        json!({"caller": caller(&sb, "me"), "args": {"query": "zebra", "cwd": "relative"}}),
    );
    assert_eq!(r["isError"], true);
    assert_eq!(r["details"]["status"], "error");
    // A missing caller is an invalid request.
    let r = pi.request("sessions/search", json!({"args": {}}));
    assert_eq!(
        r["error"]["message"],
        "invalid params: \"caller\" is required"
    );
    assert!(pi.finish().success());
}

#[test]
fn candidates_and_expansion() {
    let sb = Sandbox::new();
    let path = session(
        &sb.agent,
        &sb.project,
        "id-auth-1",
        Some("Refactor auth"),
        T0,
        "x",
    );
    session(
        &sb.agent,
        &sb.project,
        "id-pay-1",
        Some("Payments"),
        T0 + 1000,
        "x",
    );
    let other = sb.home.join("other");
    fs::create_dir_all(&other).unwrap();
    session(
        &sb.agent,
        &other,
        "id-far-1",
        Some("Far auth"),
        T0 + 2000,
        "x",
    );
    let mut pi = sb.spawn();
    let c = |pi: &mut Pi, prefix: &str, q: &str| {
        let r = pi.call(
            "sessions/candidates",
            json!({"caller": caller(&sb, "me"), "prefix": prefix, "query": q}),
        );
        r["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i["id"].as_str().unwrap().to_owned())
            .collect::<Vec<_>>()
    };
    assert_eq!(c(&mut pi, "s", "AUTH"), ["id-auth-1"]);
    assert_eq!(c(&mut pi, "as", "auth"), ["id-far-1", "id-auth-1"]);
    assert_eq!(c(&mut pi, "s", ""), ["id-pay-1", "id-auth-1"]);
    let r = pi.call(
        "sessions/candidates",
        json!({"caller": caller(&sb, "me"), "prefix": "s", "query": "auth"}),
    );
    assert_eq!(
        r["items"][0],
        json!({"id": "id-auth-1", "name": "Refactor auth", "cwd": sb.project, "path": path, "activity": iso(T0)})
    );
    let r = pi.call(
        "sessions/expand",
        json!({"caller": caller(&sb, "me"), "text": "see @s:id-auth-1 and @s:nope"}),
    );
    assert_eq!(
        r,
        json!({"text": format!("see Read or search Refactor auth {} if more context is needed. and @s:nope", path.display()), "warning": null})
    );
    let r = pi.call(
        "sessions/expand",
        json!({"caller": caller(&sb, "me"), "text": "@s:nope"}),
    );
    assert_eq!(r, json!({"text": null, "warning": null}));
    assert!(pi.finish().success());
}

/// A stand-in for `pi --mode rpc --session <file>`: `$1` is a directory where it logs its
/// arguments, cwd and input lines and where a `go` file releases the run. Prompts containing
/// HANDLE are consumed like an input handler would; steering containing HANDLE too; a prompt
/// containing DIE makes it exit with an error.
const FAKE_PI: &str = r#"
dir="$1"; shift
printf '%s\n' "$*" > "$dir/args"; pwd > "$dir/cwd"; env > "$dir/env"
while IFS= read -r line; do
  printf '%s\n' "$line" >> "$dir/input"
  id=$(printf '%s' "$line" | sed 's/.*"id":"\([^"]*\)".*/\1/')
  kind=; flag=
  case "$line" in *'"type":"prompt"'*) kind=prompt ;; *'"type":"steer"'*) kind=steer ;; esac
  case "$line" in *HANDLE*) flag=handle ;; *DIE*) flag=die ;; esac
  case "$kind/$flag" in
    prompt/die) echo "fake pi: exploded on purpose" >&2; exit 3 ;;
    prompt/handle) echo "{\"type\":\"response\",\"id\":\"$id\",\"command\":\"prompt\",\"success\":true,\"data\":{\"disposition\":\"handled\"}}" ;;
    prompt/)
      echo "{\"type\":\"response\",\"id\":\"$id\",\"command\":\"prompt\",\"success\":true,\"data\":{\"disposition\":\"started\"}}"
      echo '{"type":"extension_ui_request","id":"ui1","method":"confirm","title":"t","message":"m"}'
      ( while [ ! -f "$dir/go" ] && kill -0 $$ 2>/dev/null; do sleep 0.05; done
        [ -f "$dir/go" ] || exit 0
        echo '{"type":"message_end","message":{"role":"assistant","content":[{"type":"thinking","thinking":"t"},{"type":"text","text":"THE ANSWER"}],"stopReason":"stop"}}'
        echo '{"type":"agent_settled","aborted":false}' ) & ;;
    steer/handle) echo "{\"type\":\"response\",\"id\":\"$id\",\"command\":\"steer\",\"success\":true,\"data\":{\"disposition\":\"handled\"}}" ;;
    steer/) echo "{\"type\":\"response\",\"id\":\"$id\",\"command\":\"steer\",\"success\":true,\"data\":{\"disposition\":\"queued\"}}" ;;
  esac
done
"#;

struct Fake {
    dir: PathBuf,
}

impl Fake {
    fn new(sb: &Sandbox, name: &str) -> Fake {
        let dir = sb.home.join(name);
        fs::create_dir_all(&dir).unwrap();
        Fake { dir }
    }

    fn command(&self) -> Value {
        json!(["sh", "-c", FAKE_PI, "fake-pi", self.dir])
    }

    fn read(&self, file: &str) -> String {
        fs::read_to_string(self.dir.join(file)).unwrap_or_default()
    }

    /// Waits until `file` contains `text` (the child works in the background).
    fn wait_for(&self, file: &str, text: &str) {
        let deadline = Instant::now() + Duration::from_secs(20);
        while !self.read(file).contains(text) {
            assert!(
                Instant::now() < deadline,
                "{file} never contained {text:?}: {:?}",
                self.read(file)
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

fn ask(pi: &mut Pi, sb: &Sandbox, fake: &Fake, args: Value) -> (Value, Option<String>) {
    let r = pi.call(
        "sessions/ask",
        json!({"caller": caller(sb, "caller-1"), "args": args, "piCommand": fake.command()}),
    );
    let status: Value = serde_json::from_str(r["text"].as_str().unwrap()).unwrap();
    assert_eq!(status, r["details"]);
    (status, r["guidance"].as_str().map(str::to_owned))
}

fn is_report(n: &Value) -> bool {
    n["method"] == "sessions/report"
}

#[test]
fn ps_v11_ask_accepted_busy_steered_handled_then_reported() {
    let sb = Sandbox::new();
    let target = session(
        &sb.agent,
        &sb.project,
        "target-1",
        Some("Target"),
        T0,
        "earlier talk",
    );
    let fake = Fake::new(&sb, "fake1");
    let mut pi = sb.spawn();
    let (s, guidance) = ask(
        &mut pi,
        &sb,
        &fake,
        json!({"id": "target-1", "prompt": "what did we decide?"}),
    );
    assert_eq!(s["status"], "accepted");
    assert_eq!(s["path"], json!(target));
    assert!(s["pid"].as_u64().is_some());
    assert!(guidance.unwrap().contains("Do not poll"));
    // The child runs the original session in its directory, without pi's bash markers.
    fake.wait_for("input", "what did we decide?");
    assert_eq!(
        fake.read("args").trim(),
        format!("--mode rpc --session {}", target.display())
    );
    assert_eq!(fake.read("cwd").trim(), sb.project.display().to_string());
    assert!(fake.read("env").contains("PIMEM_ASK_TARGET=1"));
    // PS-V11: a second ordinary ask is busy; steering reaches the running ask.
    let (s, _) = ask(
        &mut pi,
        &sb,
        &fake,
        json!({"id": "target-1", "prompt": "again"}),
    );
    assert_eq!(s["status"], "busy");
    // Steering needs the child's answer to the prompt ("started"); until the sidecar has read
    // it the ask is still loading, and the refusal says to try again shortly.
    let deadline = Instant::now() + Duration::from_secs(20);
    let (s, g) = loop {
        let (s, g) = ask(
            &mut pi,
            &sb,
            &fake,
            json!({"id": "target-1", "prompt": "focus on auth", "steer": true}),
        );
        let loading = s["error"]
            .as_str()
            .is_some_and(|e| e.contains("is still loading and cannot be steered yet"));
        if !loading || Instant::now() > deadline {
            break (s, g);
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(
        (s["status"].as_str(), s.get("pid")),
        (Some("steered"), None)
    );
    assert!(g.unwrap().contains("No separate report"));
    fake.wait_for("input", "focus on auth");
    let (s, _) = ask(
        &mut pi,
        &sb,
        &fake,
        json!({"id": "target-1", "prompt": "HANDLE this", "steer": true}),
    );
    assert_eq!(s["status"], "handled");
    // The dialog the child opened was declined at once.
    fake.wait_for("input", r#""confirmed":false"#);
    // The run ends: one report, with the full ID, the path and the answer.
    fs::write(fake.dir.join("go"), "").unwrap();
    let report = pi.wait_note(is_report);
    let p = &report["params"];
    assert_eq!(p["customType"], "session-report");
    assert_eq!(p["details"]["status"], "completed");
    assert_eq!(p["details"]["answer"], "THE ANSWER");
    assert_eq!(p["details"]["id"], "target-1");
    let content = p["content"].as_str().unwrap();
    assert!(
        content.contains(&format!("ID: target-1\nPath: {}", target.display())),
        "{content}"
    );
    // The ID is free again: a new ask is accepted, not busy.
    fs::remove_file(fake.dir.join("go")).unwrap();
    let (s, _) = ask(
        &mut pi,
        &sb,
        &fake,
        json!({"id": "target-1", "prompt": "one more"}),
    );
    assert_eq!(s["status"], "accepted");
    let (notes, status) = pi.finish_collecting();
    assert!(status.success());
    // Closing the connection closed the second ask without a report (PS-30).
    assert_eq!(notes.iter().filter(|n| is_report(n)).count(), 1);
}

#[test]
fn handled_prompts_and_dying_targets_are_reported_and_steer_needs_a_running_ask() {
    let sb = Sandbox::new();
    session(&sb.agent, &sb.project, "t-handled", None, T0, "x");
    session(&sb.agent, &sb.project, "t-dies", None, T0, "y");
    let fake = Fake::new(&sb, "fake2");
    let mut pi = sb.spawn();
    let (s, _) = ask(
        &mut pi,
        &sb,
        &fake,
        json!({"id": "t-handled", "prompt": "steer me", "steer": true}),
    );
    assert_eq!(s["status"], "error");
    assert!(
        s["error"]
            .as_str()
            .unwrap()
            .contains("no running ask from this session to steer")
    );
    let (s, _) = ask(
        &mut pi,
        &sb,
        &fake,
        json!({"id": "t-handled", "prompt": "HANDLE it"}),
    );
    assert_eq!(s["status"], "accepted");
    let r = pi.wait_note(|n| is_report(n) && n["params"]["details"]["id"] == "t-handled");
    assert_eq!(r["params"]["details"]["status"], "handled");
    let (s, _) = ask(
        &mut pi,
        &sb,
        &fake,
        json!({"id": "t-dies", "prompt": "DIE now"}),
    );
    assert_eq!(s["status"], "accepted");
    let r = pi.wait_note(|n| is_report(n) && n["params"]["details"]["id"] == "t-dies");
    let error = r["params"]["details"]["error"].as_str().unwrap();
    assert!(
        error.contains("exploded on purpose") && error.contains("exit status: 3"),
        "{error}"
    );
    // Refusals keep the status-JSON shape.
    let (s, _) = ask(
        &mut pi,
        &sb,
        &fake,
        json!({"id": "caller-1", "prompt": "x"}),
    );
    assert!(
        s["error"]
            .as_str()
            .unwrap()
            .contains("cannot ask the calling session itself")
    );
    let (s, _) = ask(
        &mut pi,
        &sb,
        &fake,
        json!({"id": "t-dies", "prompt": "x", "cwd": "rel"}),
    );
    assert_eq!(s["error"], "cwd \"rel\" must be an absolute path");
    assert!(pi.finish().success());
}

#[test]
fn shutdown_closes_running_asks_and_drops_their_reports() {
    let sb = Sandbox::new();
    session(&sb.agent, &sb.project, "t-long", None, T0, "x");
    let fake = Fake::new(&sb, "fake3");
    let mut pi = sb.spawn();
    let (s, _) = ask(
        &mut pi,
        &sb,
        &fake,
        json!({"id": "t-long", "prompt": "take your time"}),
    );
    let pid = s["pid"].as_u64().unwrap();
    fake.wait_for("input", "take your time");
    let r = pi.call("session/shutdown", json!({}));
    assert_eq!(r["finished"], true);
    // The child is gone (reaped by the sidecar: no /proc entry, or a zombie no more).
    assert!(
        !Path::new(&format!("/proc/{pid}")).exists()
            || fs::read_to_string(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|c| !c.contains("fake-pi"))
    );
    // Released now, the run would settle, but nobody reports it any more.
    fs::write(fake.dir.join("go"), "").unwrap();
    let (s, _) = ask(
        &mut pi,
        &sb,
        &fake,
        json!({"id": "t-long", "prompt": "after"}),
    );
    assert_eq!(s["error"], "the calling session is closing; no new asks");
    let (notes, status) = pi.finish_collecting();
    assert!(status.success());
    assert!(notes.iter().all(|n| !is_report(n)), "{notes:?}");
}
