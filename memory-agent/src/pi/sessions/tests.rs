//! Fixture-based tests of the whole module. Lines are shaped like the real pi 1.6.0 lines
//! quoted in `docs/pi-host.md` §h.

use std::borrow::Cow;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use jiff::Timestamp;
use proptest::prelude::*;
use serde_json::{Value, json};

use super::search::search_with;
use super::*;

const T0: i64 = 1_795_988_245_400; // 2026-11-29T21:37:25.400Z

fn iso(ms: i64) -> String {
    render::iso_millis(Timestamp::from_millisecond(ms).unwrap())
}

/// Builds session files line by line.
struct Session {
    lines: Vec<String>,
    last_id: Option<String>,
    n: usize,
}

impl Session {
    fn new(id: &str, cwd: &str, created_ms: i64) -> Session {
        let header =
            json!({"type":"session","version":3,"id":id,"timestamp":iso(created_ms),"cwd":cwd});
        Session {
            lines: vec![header.to_string()],
            last_id: None,
            n: 0,
        }
    }

    fn next_id(&mut self) -> String {
        self.n += 1;
        format!("{:08x}", self.n)
    }

    /// Appends an entry object (type, payload) with id/parentId/timestamp filled in.
    fn entry(&mut self, kind: &str, ms: i64, mut payload: Value) -> String {
        let id = self.next_id();
        let obj = payload.as_object_mut().unwrap();
        obj.insert("type".into(), json!(kind));
        obj.insert("id".into(), json!(id));
        obj.insert("parentId".into(), json!(self.last_id));
        obj.insert("timestamp".into(), json!(iso(ms)));
        self.lines.push(payload.to_string());
        self.last_id = Some(id.clone());
        id
    }

    fn msg(&mut self, role: &str, ms: i64, content: Value) -> String {
        self.entry(
            "message",
            ms,
            json!({"message":{"role":role,"content":content,"timestamp":ms}}),
        )
    }

    fn user(&mut self, ms: i64, text: &str) -> String {
        self.msg("user", ms, json!([{"type":"text","text":text}]))
    }

    fn assistant(&mut self, ms: i64, text: &str) -> String {
        self.msg(
            "assistant",
            ms,
            json!([{"type":"thinking","thinking":"hmm"},{"type":"text","text":text}]),
        )
    }

    fn raw(&mut self, line: &str) {
        self.lines.push(line.to_owned());
    }

    fn write(&self, dir: &Path, file: &str) -> PathBuf {
        std::fs::create_dir_all(dir).unwrap();
        let path = dir.join(file);
        let mut text = self.lines.join("\n");
        text.push('\n');
        std::fs::write(&path, text).unwrap();
        path
    }
}

fn opts() -> SessionSearchOptions {
    SessionSearchOptions::default()
}

fn search(dir: &Path, q: &str) -> SessionSearch {
    search_sessions(dir, None, q, &opts()).unwrap()
}

fn texts(r: &SessionSearch) -> Vec<Vec<String>> {
    r.hits
        .iter()
        .map(|h| h.segments.iter().map(|s| s.text.clone()).collect())
        .collect()
}

// --- entry parsing -------------------------------------------------------------------------

#[test]
fn parses_the_real_lines_from_pi_host() {
    let lines: [&[u8]; 5] = [
        br#"{"type":"session_info","id":"8c082399","parentId":null,"timestamp":"2026-11-29T21:37:25.309Z","name":"e2e main session"}"#,
        br#"{"type":"custom","customType":"e2e-memory-snapshot","data":{"text":"E2E-FROZEN-SNAPSHOT"},"id":"df10fe27","parentId":"7bd4b5ad","timestamp":"2026-11-29T21:37:25.309Z"}"#,
        br#"{"type":"message","id":"20771499","parentId":"977b3218","timestamp":"2026-11-29T21:37:25.400Z","message":{"role":"user","content":[{"type":"text","text":"hello there"}],"timestamp":1795988245400}}"#,
        br#"{"type":"custom_message","customType":"e2e-recall","content":"<e2e_recall>x</e2e_recall>","display":false,"details":{"source":"e2e"},"id":"740bfd3b","parentId":"20771499","timestamp":"2026-11-29T21:37:25.500Z"}"#,
        br#"{"type":"message","id":"c0d18907","parentId":"2bf969c3","timestamp":"2026-11-29T21:37:25.938Z","message":{"role":"toolResult","toolCallId":"call_fake_2","toolName":"e2e_recall","content":[{"type":"text","text":"RECALL(favorite color) = 42"}],"details":{"query":"favorite color","hits":1},"isError":false,"durationMs":0,"timestamp":1795988245938}}"#,
    ];
    let e: Vec<SessionEntry<'_>> = lines
        .iter()
        .map(|l| SessionEntry::parse(l).unwrap())
        .collect();
    assert!(
        matches!(&e[0], SessionEntry::SessionInfo { name: Some(n), meta } if n == "e2e main session" && meta.parent_id.is_none())
    );
    assert!(matches!(&e[1], SessionEntry::Other { kind, .. } if kind == "custom"));
    let SessionEntry::Message(m) = &e[2] else {
        panic!("{:?}", e[2])
    };
    assert_eq!(
        (m.role.clone(), m.texts.clone(), m.time_ms),
        (
            Role::User,
            vec![Cow::Borrowed("hello there")],
            Some(1795988245400.0)
        )
    );
    assert_eq!(m.meta.id.as_deref(), Some("20771499"));
    assert_eq!(m.meta.parent_id.as_deref(), Some("977b3218"));
    // Borrowed from the line, not copied.
    assert!(matches!(m.texts[0], Cow::Borrowed(_)));
    let SessionEntry::CustomMessage(c) = &e[3] else {
        panic!()
    };
    assert_eq!(c.custom_type.as_deref(), Some("e2e-recall"));
    assert_eq!(c.texts, ["<e2e_recall>x</e2e_recall>"]);
    let SessionEntry::Message(t) = &e[4] else {
        panic!()
    };
    assert_eq!(t.role, Role::ToolResult);
    assert_eq!(t.texts, ["RECALL(favorite color) = 42"]);
}

#[test]
fn header_and_system_and_summaries() {
    let h = SessionEntry::parse(br#"{"type":"session","version":3,"id":"01a2","timestamp":"2026-11-29T21:37:25.309Z","cwd":"/abs","parentSession":"/abs/parent.jsonl"}"#).unwrap();
    let SessionEntry::Header(h) = h else { panic!() };
    assert_eq!(h.id, "01a2");
    assert_eq!(h.cwd.as_deref(), Some("/abs"));
    assert_eq!(h.parent_session.as_deref(), Some("/abs/parent.jsonl"));
    assert_eq!(h.version, Some(3.0));

    let sys = SessionEntry::parse(br#"{"type":"message","id":"1","parentId":null,"timestamp":"t","message":{"role":"system","content":"","sections":{"memory_snapshot":"secret deadlock"},"toolsAdded":[{"name":"x"}],"timestamp":1}}"#).unwrap();
    let mut seen = Vec::new();
    sys.for_each_text(true, |s, t| seen.push((s, t.to_owned())));
    assert!(seen.is_empty(), "system messages are never searched");

    let c = SessionEntry::parse(br#"{"type":"compaction","id":"2","parentId":"1","timestamp":"t","summary":"we fixed it","firstKeptEntryId":"1","tokensBefore":10}"#).unwrap();
    let b = SessionEntry::parse(br#"{"type":"branch_summary","id":"3","parentId":"1","timestamp":"t","fromId":"2","summary":"tried X"}"#).unwrap();
    let mut seen = Vec::new();
    c.for_each_text(false, |s, t| seen.push((s, t.to_owned())));
    b.for_each_text(false, |s, t| seen.push((s, t.to_owned())));
    assert_eq!(
        seen,
        [
            (TextSource::Compaction, "we fixed it".to_owned()),
            (TextSource::BranchSummary, "tried X".to_owned())
        ]
    );
}

#[test]
fn tolerates_unknown_types_roles_fields_and_mistyped_values() {
    let e = SessionEntry::parse(br#"{"type":"future_thing","id":"9","parentId":null,"timestamp":"t","whatever":[1,{"a":null}]}"#).unwrap();
    assert!(matches!(e, SessionEntry::Other { kind, .. } if kind == "future_thing"));
    let e = SessionEntry::parse(br#"{"type":"message","id":"9","message":{"role":"narrator","content":"hi","extra":{"deep":[true]}}}"#).unwrap();
    let SessionEntry::Message(m) = e else {
        panic!()
    };
    assert_eq!(m.role, Role::Other(Cow::Borrowed("narrator")));
    assert_eq!(m.texts, ["hi"]);
    assert_eq!(m.time_ms, None);
    // Mistyped fields read as absent instead of failing the line.
    let e = SessionEntry::parse(
        br#"{"type":"session_info","id":7,"parentId":[],"timestamp":false,"name":3}"#,
    )
    .unwrap();
    assert_eq!(
        e,
        SessionEntry::SessionInfo {
            meta: EntryMeta::default(),
            name: None
        }
    );
    let e = SessionEntry::parse(br#"{"type":"message","id":"1","message":{"role":"user","content":[7,"x",{"type":"image","data":"AAAA","mimeType":"image/png"},{"type":"text","text":"ok"},{"type":"text","text":5}],"timestamp":"soon"}}"#).unwrap();
    let SessionEntry::Message(m) = e else {
        panic!()
    };
    assert_eq!(
        (m.texts, m.has_content, m.time_ms),
        (vec![Cow::Borrowed("ok")], true, None)
    );
    // `message` that is not an object, missing `type`: still an entry.
    assert!(matches!(
        SessionEntry::parse(br#"{"type":"message","message":"?"}"#).unwrap(),
        SessionEntry::Other { .. }
    ));
    assert!(matches!(
        SessionEntry::parse(br#"{"id":"x"}"#).unwrap(),
        SessionEntry::Other { kind, .. } if kind.is_empty()
    ));
    // A header without a string id is not a header.
    assert!(matches!(
        SessionEntry::parse(br#"{"type":"session","id":5}"#).unwrap(),
        SessionEntry::Other { .. }
    ));
}

#[test]
fn escaped_strings_are_decoded_and_crlf_is_whitespace() {
    let e = SessionEntry::parse(b"{\"type\":\"message\",\"message\":{\"role\":\"user\",\"content\":\"a\\\"b\\n\\u00e9\"}}\r").unwrap();
    let SessionEntry::Message(m) = e else {
        panic!()
    };
    assert_eq!(m.texts, ["a\"b\né"]);
    assert!(matches!(m.texts[0], Cow::Owned(_)));
}

#[test]
fn broken_lines_are_errors() {
    for bad in [
        &br#"{"type":"message","id":"1","message":{"role":"us"#[..],
        b"not json",
        b"[1,2]",
        b"",
    ] {
        assert!(
            SessionEntry::parse(bad).is_err(),
            "{:?}",
            String::from_utf8_lossy(bad)
        );
    }
}

// --- reading files -------------------------------------------------------------------------

#[test]
fn read_session_skips_bad_and_partial_lines() {
    let tmp = tempfile::tempdir().unwrap();
    let mut s = Session::new("s1", "/p", T0);
    s.user(T0 + 1, "first");
    s.raw("{garbage");
    s.raw("   ");
    s.assistant(T0 + 2, "second");
    let path = s.write(tmp.path(), "a.jsonl");
    let mut bytes = std::fs::read(&path).unwrap();
    bytes.extend_from_slice(
        br#"{"type":"message","id":"torn","message":{"role":"user","content":"par"#,
    );
    std::fs::write(&path, bytes).unwrap();
    let f = read_session(&path).unwrap();
    assert_eq!(f.header.id, "s1");
    assert_eq!(f.entries.len(), 2);
    assert_eq!(f.skipped_lines, 2);

    std::fs::write(tmp.path().join("b.jsonl"), "{\"type\":\"message\"}\n").unwrap();
    assert!(matches!(
        read_session(&tmp.path().join("b.jsonl")),
        Err(SessionError::NotASession { .. })
    ));
    assert!(matches!(
        read_session(&tmp.path().join("missing.jsonl")),
        Err(SessionError::Read { .. })
    ));
}

// --- listing -------------------------------------------------------------------------------

#[test]
fn list_orders_by_activity_and_applies_pi_rules() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    // Created first but active last.
    let mut a = Session::new("aaaa", "/p", T0);
    a.user(T0 + 10, "hello");
    a.entry("session_info", T0 + 11, json!({"name":"  first name "}));
    a.assistant(T0 + 5_000, "reply");
    a.entry("custom", T0 + 9_000, json!({"customType":"x","data":{}}));
    a.write(dir, "2026-a_aaaa.jsonl");
    // Named, then the name cleared by an empty session_info.
    let mut b = Session::new("bbbb", "/p", T0 + 100);
    b.entry("session_info", T0 + 101, json!({"name":"old"}));
    b.user(T0 + 200, "x");
    b.entry("session_info", T0 + 201, json!({"name":""}));
    b.write(dir, "2026-b_bbbb.jsonl");
    // No messages: falls back to the header time.
    let c = Session::new("cccc", "/p", T0 + 300);
    c.write(dir, "2026-c_cccc.jsonl");
    // Not sessions / not .jsonl.
    std::fs::write(dir.join("junk.jsonl"), "hello\n").unwrap();
    std::fs::write(dir.join("empty.jsonl"), "").unwrap();
    std::fs::write(dir.join("notes.txt"), "{}\n").unwrap();
    std::fs::create_dir(dir.join("sub.jsonl")).unwrap();

    let list = list_sessions(dir, None).unwrap();
    let got: Vec<(&str, Option<&str>, i64)> = list
        .iter()
        .map(|s| {
            (
                s.id.as_str(),
                s.name.as_deref(),
                s.modified.as_millisecond(),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            ("aaaa", Some("first name"), T0 + 5_000),
            ("cccc", None, T0 + 300),
            ("bbbb", None, T0 + 200),
        ]
    );
    assert_eq!(list[0].cwd, "/p");
    assert_eq!(list[0].created.unwrap().as_millisecond(), T0);
    assert!(list[0].path.ends_with("2026-a_aaaa.jsonl"));
}

#[test]
fn activity_uses_entry_time_without_numeric_timestamp_and_mtime_last() {
    let tmp = tempfile::tempdir().unwrap();
    let mut a = Session::new("a", "/p", T0);
    a.raw(&json!({"type":"message","id":"1","parentId":null,"timestamp":iso(T0 + 777),"message":{"role":"assistant","content":[]}}).to_string());
    // Not activity: no content key, wrong role, custom_message.
    a.raw(&json!({"type":"message","id":"2","parentId":"1","timestamp":iso(T0 + 900),"message":{"role":"user"}}).to_string());
    a.raw(&json!({"type":"message","id":"3","parentId":"2","timestamp":iso(T0 + 901),"message":{"role":"toolResult","content":[],"timestamp":T0 + 901}}).to_string());
    a.entry(
        "custom_message",
        T0 + 902,
        json!({"customType":"c","content":"x","display":false}),
    );
    a.write(tmp.path(), "a.jsonl");
    // Header without a usable timestamp: file mtime.
    std::fs::write(
        tmp.path().join("b.jsonl"),
        "{\"type\":\"session\",\"id\":\"b\",\"timestamp\":\"yesterday\"}\n",
    )
    .unwrap();
    let list = list_sessions(tmp.path(), None).unwrap();
    let a = list.iter().find(|s| s.id == "a").unwrap();
    assert_eq!(a.modified.as_millisecond(), T0 + 777);
    let b = list.iter().find(|s| s.id == "b").unwrap();
    assert!(b.created.is_none());
    assert!(b.modified > Timestamp::from_second(1_600_000_000).unwrap());
    assert_eq!(b.cwd, "");
}

#[test]
fn activity_found_behind_a_long_tail() {
    // The last user/assistant message sits before 300 KiB of custom entries: the tail window
    // has to grow.
    let tmp = tempfile::tempdir().unwrap();
    let mut a = Session::new("a", "/p", T0);
    a.user(T0 + 42, "q");
    for i in 0..300 {
        a.entry(
            "custom",
            T0 + 100 + i,
            json!({"customType":"c","data":{"blob":"z".repeat(1024)}}),
        );
    }
    a.write(tmp.path(), "a.jsonl");
    let list = list_sessions(tmp.path(), None).unwrap();
    assert_eq!(list[0].modified.as_millisecond(), T0 + 42);
}

#[test]
fn flat_directory_filters_on_header_cwd() {
    let tmp = tempfile::tempdir().unwrap();
    for (i, cwd) in ["/home/u/app", "/home/u/other", "/home/u/app/"]
        .iter()
        .enumerate()
    {
        let mut s = Session::new(&format!("s{i}"), cwd, T0 + i as i64);
        s.user(T0 + 10 + i as i64, "deadlock here");
        s.write(tmp.path(), &format!("{i}.jsonl"));
    }
    let only = |c: &str| {
        search_sessions(tmp.path(), Some(Path::new(c)), "deadlock", &opts())
            .unwrap()
            .hits
            .iter()
            .map(|h| h.info.id.clone())
            .collect::<Vec<_>>()
    };
    // Path equality ignores a trailing slash.
    assert_eq!(only("/home/u/app"), ["s2", "s0"]);
    assert_eq!(only("/home/u/other"), ["s1"]);
    assert!(only("/home/u").is_empty());
    assert_eq!(
        list_sessions(tmp.path(), Some(Path::new("/home/u/other")))
            .unwrap()
            .len(),
        1
    );
}

#[test]
fn per_cwd_directory_round_trip() {
    let tmp = tempfile::tempdir().unwrap();
    let root = default_session_root(tmp.path());
    let dir = session_dir_for_cwd(&root, Path::new("/tmp/pi-e2e/work/project"));
    assert!(dir.ends_with("sessions/--tmp-pi-e2e-work-project--"));
    let mut s = Session::new(
        "01a2293d-cb3c-7247-8f6b-aff8ab192f13",
        "/tmp/pi-e2e/work/project",
        T0,
    );
    s.user(T0 + 1, "hello there");
    s.write(
        &dir,
        "2026-11-29T21-37-25-309Z_01a2293d-cb3c-7247-8f6b-aff8ab192f13.jsonl",
    );
    assert_eq!(texts(&search(&dir, "HELLO")), [["hello there"]]);
    // No session directory yet: no hits, no error.
    let missing = session_dir_for_cwd(&root, Path::new("/nowhere"));
    assert_eq!(
        render_session_results(&search(&missing, "x")),
        "No matches in sessions."
    );
}

// --- searching -----------------------------------------------------------------------------

/// One session exercising every kind of line.
fn rich_session(dir: &Path) -> PathBuf {
    let mut s = Session::new("rich", "/p", T0);
    s.entry("session_info", T0, json!({"name":"payments"}));
    s.msg("system", T0 + 1, json!(""));
    s.user(
        T0 + 2,
        "Please fix the DEADLOCK in payment.rs\nsecond line without it",
    );
    s.entry(
        "custom_message",
        T0 + 3,
        json!({"customType":"recall","content":"<recall>deadlock notes</recall>","display":false}),
    );
    s.entry(
        "custom",
        T0 + 4,
        json!({"customType":"state","data":{"text":"deadlock in custom data"}}),
    );
    s.msg(
        "assistant",
        T0 + 5,
        json!([{"type":"thinking","thinking":"deadlock thinking"},{"type":"toolCall","id":"c1","name":"read","arguments":{"path":"deadlock.rs"}},{"type":"text","text":"Looking at the deadlock."}]),
    );
    s.msg(
        "toolResult",
        T0 + 6,
        json!([{"type":"text","text":"fn deadlock() {}"}]),
    );
    s.msg("bashExecution", T0 + 7, json!("deadlock"));
    s.entry("compaction", T0 + 8, json!({"summary":"Summary: fixed a deadlock.","firstKeptEntryId":"00000003","tokensBefore":100}));
    s.entry(
        "branch_summary",
        T0 + 9,
        json!({"fromId":"00000004","summary":"Abandoned: deadlock via mutex"}),
    );
    s.entry(
        "label",
        T0 + 10,
        json!({"targetId":"00000003","label":"deadlock"}),
    );
    s.msg("custom", T0 + 11, json!("custom-role deadlock"));
    s.raw(&json!({"type":"message","id":"sys2","parentId":null,"timestamp":iso(T0+12),"message":{"role":"system","content":"","sections":{"memory":"deadlock"}}}).to_string());
    s.write(dir, "rich.jsonl")
}

#[test]
fn searches_exactly_the_documented_texts() {
    let tmp = tempfile::tempdir().unwrap();
    rich_session(tmp.path());
    let all = SessionSearchOptions {
        max_matches: 100,
        ..opts()
    };
    let r = search_sessions(tmp.path(), None, "deadlock", &all).unwrap();
    let got: Vec<(TextSource, &str)> = r.hits[0]
        .segments
        .iter()
        .map(|s| (s.source, s.text.as_str()))
        .collect();
    assert_eq!(
        got,
        [
            (TextSource::User, "Please fix the DEADLOCK in payment.rs"),
            (TextSource::Custom, "<recall>deadlock notes</recall>"),
            (TextSource::Assistant, "Looking at the deadlock."),
            (TextSource::Compaction, "Summary: fixed a deadlock."),
            (TextSource::BranchSummary, "Abandoned: deadlock via mutex"),
            (TextSource::Custom, "custom-role deadlock"),
        ]
    );
    assert_eq!(r.hits[0].info.name.as_deref(), Some("payments"));
    assert_eq!(r.hits[0].segments[0].entry_id.as_deref(), Some("00000003"));
    let with_tools = SessionSearchOptions {
        include_tool_results: true,
        ..all
    };
    let r = search_sessions(tmp.path(), None, "deadlock", &with_tools).unwrap();
    assert!(
        r.hits[0]
            .segments
            .iter()
            .any(|s| s.source == TextSource::ToolResult && s.text == "fn deadlock() {}")
    );
}

#[test]
fn abandoned_branches_are_searched() {
    let tmp = tempfile::tempdir().unwrap();
    let mut s = Session::new("b", "/p", T0);
    let root = s.user(T0 + 1, "start");
    s.assistant(T0 + 2, "abandoned idea: use a spinlock");
    // Branch back to the root: the next entry's parent is `root`, not the previous leaf.
    s.last_id = Some(root);
    s.assistant(T0 + 3, "the kept answer");
    s.write(tmp.path(), "b.jsonl");
    assert_eq!(
        texts(&search(tmp.path(), "spinlock")),
        [["abandoned idea: use a spinlock"]]
    );
}

#[test]
fn no_match_and_blank_query() {
    let tmp = tempfile::tempdir().unwrap();
    rich_session(tmp.path());
    let r = search(tmp.path(), "nonexistent-term");
    assert!(r.hits.is_empty());
    // PM-41.
    assert_eq!(render_session_results(&r), "No matches in sessions.");
    for q in ["", "   ", "\n\t"] {
        let e = search_sessions(tmp.path(), None, q, &opts()).unwrap_err();
        assert_eq!(e.to_string(), "query is required for search");
    }
}

#[test]
fn bad_middle_line_partial_last_line_and_crlf() {
    let tmp = tempfile::tempdir().unwrap();
    let mut s = Session::new("x", "/p", T0);
    s.user(T0 + 1, "needle one");
    s.raw(r#"{"type":"message","id":"bad","message":{"role":"user","content":"needle broken"#);
    s.user(T0 + 2, "needle two");
    let path = s.write(tmp.path(), "x.jsonl");
    // CRLF line endings and a torn last line that also contains the query.
    let text = std::fs::read_to_string(&path)
        .unwrap()
        .replace('\n', "\r\n")
        + r#"{"type":"message","id":"torn","message":{"role":"user","content":"needle thr"#;
    std::fs::write(&path, text).unwrap();
    assert_eq!(
        texts(&search(tmp.path(), "needle")),
        [["needle one", "needle two"]]
    );
}

#[test]
fn newest_first_and_max_sessions_stops_early() {
    let tmp = tempfile::tempdir().unwrap();
    for i in 0..6i64 {
        let mut s = Session::new(&format!("s{i}"), "/p", T0 + i);
        // Every second session matches.
        s.user(T0 + 1000 * i, if i % 2 == 0 { "the needle" } else { "hay" });
        s.write(tmp.path(), &format!("f{i}.jsonl"));
    }
    let ids = |r: &SessionSearch| r.hits.iter().map(|h| h.info.id.clone()).collect::<Vec<_>>();
    let r = search(tmp.path(), "needle");
    assert_eq!(ids(&r), ["s4", "s2", "s0"]);
    assert_eq!(
        (r.sessions_total, r.sessions_searched, r.limit_reached),
        (6, 6, false)
    );
    for threads in [1, 2, 4] {
        let o = SessionSearchOptions {
            max_sessions: 2,
            threads,
            ..opts()
        };
        let r = search_sessions(tmp.path(), None, "needle", &o).unwrap();
        assert_eq!(ids(&r), ["s4", "s2"]);
        // s5, s4, s3, s2 searched; s1 and s0 not.
        assert_eq!((r.sessions_searched, r.limit_reached), (4, true));
        assert!(render_session_results(&r).ends_with(
            "(Stopped after 2 sessions with matches; 2 older session(s) not searched.)"
        ));
    }
}

#[test]
fn max_matches_per_session_sets_truncated() {
    let tmp = tempfile::tempdir().unwrap();
    let mut s = Session::new("m", "/p", T0);
    for i in 0..4 {
        s.user(T0 + i, &format!("needle {i}\nneedle {i}b"));
    }
    s.entry("session_info", T0 + 99, json!({"name":"named at the end"}));
    s.write(tmp.path(), "m.jsonl");
    let o = SessionSearchOptions {
        max_matches: 3,
        ..opts()
    };
    let r = search_sessions(tmp.path(), None, "NEEDLE", &o).unwrap();
    assert_eq!(texts(&r), [["needle 0", "needle 0b", "needle 1"]]);
    assert!(r.hits[0].truncated);
    // The name after the last match is still found.
    assert_eq!(r.hits[0].info.name.as_deref(), Some("named at the end"));
    let o = SessionSearchOptions {
        max_matches: 8,
        ..opts()
    };
    let r = search_sessions(tmp.path(), None, "NEEDLE", &o).unwrap();
    assert_eq!(r.hits[0].segments.len(), 8);
    assert!(!r.hits[0].truncated);
}

// PS-V9 end to end.
#[test]
fn ps_v9_segment_cut_to_2000_chars() {
    let tmp = tempfile::tempdir().unwrap();
    let mut s = Session::new("long", "/p", T0);
    let line = format!("{}needle{}", "α".repeat(2500), "ω".repeat(2494));
    s.user(T0 + 1, &line);
    s.write(tmp.path(), "l.jsonl");
    let r = search(tmp.path(), "needle");
    let seg = &r.hits[0].segments[0];
    assert!(seg.truncated);
    assert_eq!(seg.text.chars().count(), 2000);
    assert_eq!(seg.line_chars, 5000);
    assert!(seg.text.contains("needle"));
    let text = render_session_results(&r);
    assert!(text.contains(&format!(
        "…matched (user; chars {}-{} of 5000): \"",
        seg.char_offset + 1,
        seg.char_offset + 2000
    )));
}

#[test]
fn queries_the_prefilter_cannot_see_still_match() {
    let tmp = tempfile::tempdir().unwrap();
    let mut s = Session::new("u", "/p", T0);
    s.user(
        T0 + 1,
        "She said \"ok\\done\"\tthen\nİSTANBUL and 5 \u{212A} and ÉTÉ",
    );
    s.write(tmp.path(), "u.jsonl");
    for q in [
        "\"ok\\done\"\tthen",
        "stanbul AND 5 k",
        "5 k",
        "été",
        "i̇stanbul",
    ] {
        assert_eq!(search(tmp.path(), q).hits.len(), 1, "{q:?}");
    }
}

#[test]
fn render_snapshot() {
    let info = |id: &str, name: Option<&str>, ms: i64| SessionInfo {
        path: PathBuf::from(format!(
            "/home/u/.pi/agent/sessions/--home-u-app--/2026-11-29T21-37-25-309Z_{id}.jsonl"
        )),
        id: id.to_owned(),
        cwd: "/home/u/app".to_owned(),
        name: name.map(str::to_owned),
        parent_session: None,
        created: None,
        modified: Timestamp::from_millisecond(ms).unwrap(),
    };
    let seg = |source, text: &str| Segment {
        source,
        entry_id: Some("20771499".into()),
        text: text.to_owned(),
        truncated: false,
        char_offset: 0,
        line_chars: text.chars().count(),
    };
    let result = SessionSearch {
        query: "deadlock".into(),
        hits: vec![
            SessionHit {
                info: info(
                    "0191a2b3-7c1d-7e6f-9a0b-1c2d3e4f5a6b",
                    Some("Refactor auth"),
                    T0,
                ),
                segments: vec![
                    seg(TextSource::User, "fix the deadlock in payment"),
                    seg(TextSource::Assistant, "The deadlock comes from lock order."),
                    Segment {
                        truncated: true,
                        char_offset: 1002,
                        line_chars: 5000,
                        ..seg(TextSource::ToolResult, "…text around the deadlock…")
                    },
                ],
                truncated: true,
            },
            SessionHit {
                info: info(
                    "0191a2b3-0000-7e6f-9a0b-1c2d3e4f5a6b",
                    None,
                    T0 - 86_400_000,
                ),
                segments: vec![seg(TextSource::Compaction, "Summary: deadlock fixed")],
                truncated: false,
            },
        ],
        sessions_total: 14,
        sessions_searched: 9,
        limit_reached: true,
    };
    insta::assert_snapshot!(render_session_results(&result));
}

// --- properties ----------------------------------------------------------------------------

/// Characters that stress folding and JSON escaping.
const ALPHABET: &[&str] = &[
    "a", "A", "b", "D", "e", "k", "K", "\u{212A}", "i", "I", "\u{130}", "ß", "ẞ", "é", "É", "死",
    "锁", " ", "\n", "\r", "\"", "\\", "\t", "\u{1}", "Σ", "σ", "ς", "x", "/", "\u{2028}",
    "\u{307}", "ǅ", "ǆ", "Ǆ", "О", "о", "\u{7f}", "\u{1f}", "\u{8}", "s",
];

fn text_strategy() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(ALPHABET), 0..24).prop_map(|v| v.concat())
}

fn random_case(s: &str, flips: &[bool]) -> String {
    s.chars()
        .zip(flips.iter().cycle())
        .map(|(c, f)| {
            if *f {
                c.to_uppercase().collect::<String>()
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// Naive oracle: parse every line as a `Value`, collect searchable texts, fold, compare.
fn oracle(dir: &Path, query: &str) -> BTreeSet<(String, String)> {
    let folded = matcher::fold(query);
    let mut out = BTreeSet::new();
    for f in std::fs::read_dir(dir).unwrap() {
        let path = f.unwrap().path();
        let data = std::fs::read_to_string(&path).unwrap();
        let mut lines = data.split('\n');
        let header: Value = serde_json::from_str(lines.next().unwrap()).unwrap();
        let sid = header["id"].as_str().unwrap().to_owned();
        for line in lines {
            let Ok(v) = serde_json::from_str::<Value>(line) else {
                continue;
            };
            let texts: Vec<String> = match v["type"].as_str() {
                Some("message")
                    if matches!(
                        v["message"]["role"].as_str(),
                        Some("user" | "assistant" | "custom")
                    ) =>
                {
                    block_texts(&v["message"]["content"])
                }
                Some("custom_message") => block_texts(&v["content"]),
                Some("compaction" | "branch_summary") => v["summary"]
                    .as_str()
                    .map(str::to_owned)
                    .into_iter()
                    .collect(),
                _ => vec![],
            };
            if texts.iter().any(|t| matcher::fold(t).contains(&folded)) {
                out.insert((sid.clone(), v["id"].as_str().unwrap().to_owned()));
            }
        }
    }
    out
}

fn block_texts(c: &Value) -> Vec<String> {
    match c {
        Value::String(s) => vec![s.clone()],
        Value::Array(a) => a
            .iter()
            .filter(|b| b["type"] == "text")
            .filter_map(|b| b["text"].as_str().map(str::to_owned))
            .collect(),
        _ => vec![],
    }
}

fn matched_entries(r: &SessionSearch) -> BTreeSet<(String, String)> {
    r.hits
        .iter()
        .flat_map(|h| {
            h.segments
                .iter()
                .map(|s| (h.info.id.clone(), s.entry_id.clone().unwrap()))
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// The prefilter never changes a result: prefiltered search == full parse == oracle.
    #[test]
    fn prefilter_equals_full_parse(
        sessions in prop::collection::vec(prop::collection::vec((0u8..5, text_strategy()), 1..6), 1..4),
        pick in any::<prop::sample::Index>(),
        from in 0usize..24,
        len in 1usize..6,
        flips in prop::collection::vec(any::<bool>(), 1..8),
        random_query in text_strategy(),
        use_random in any::<bool>(),
    ) {
        let tmp = tempfile::tempdir().unwrap();
        let mut all_texts = Vec::new();
        for (si, entries) in sessions.iter().enumerate() {
            let mut s = Session::new(&format!("s{si}"), "/p", T0 + si as i64);
            for (ei, (kind, text)) in entries.iter().enumerate() {
                let ms = T0 + 10 * ei as i64;
                match kind {
                    0 => { s.user(ms, text); }
                    1 => { s.assistant(ms, text); }
                    2 => { s.entry("custom_message", ms, json!({"customType":"c","content":[{"type":"text","text":text}],"display":true})); }
                    3 => { s.entry("compaction", ms, json!({"summary":text,"firstKeptEntryId":"x","tokensBefore":1})); }
                    _ => { s.msg("toolResult", ms, json!([{"type":"text","text":text}])); }
                }
                all_texts.push(text.clone());
            }
            s.write(tmp.path(), &format!("{si}.jsonl"));
        }
        let query = if use_random || all_texts.iter().all(String::is_empty) {
            random_query
        } else {
            let t = pick.get(&all_texts);
            let chars: Vec<char> = t.chars().collect();
            let a = from.min(chars.len().saturating_sub(1));
            let b = (a + len).min(chars.len());
            random_case(&chars[a..b].iter().collect::<String>(), &flips)
        };
        prop_assume!(!query.trim().is_empty());
        let o = SessionSearchOptions { max_sessions: 100, max_matches: 1000, ..opts() };
        let fast = search_with(tmp.path(), None, &query, &o, true).unwrap();
        let slow = search_with(tmp.path(), None, &query, &o, false).unwrap();
        prop_assert_eq!(&fast, &slow);
        prop_assert_eq!(matched_entries(&fast), oracle(tmp.path(), &query));
    }

    /// Core soundness: whenever a text matches, its JSON spelling contains a prefilter hit.
    #[test]
    fn prefilter_never_misses_a_match(
        text in text_strategy(),
        from in 0usize..24,
        len in 1usize..8,
        flips in prop::collection::vec(any::<bool>(), 1..8),
        random_query in text_strategy(),
        use_random in any::<bool>(),
    ) {
        let chars: Vec<char> = text.chars().collect();
        let query = if use_random || chars.is_empty() {
            random_query
        } else {
            let a = from.min(chars.len() - 1);
            let b = (a + len).min(chars.len());
            random_case(&chars[a..b].iter().collect::<String>(), &flips)
        };
        prop_assume!(!query.is_empty());
        let m = matcher::Matcher::new(&query, true);
        let raw = serde_json::to_string(&json!({"type":"message","message":{"content":text}})).unwrap();
        if matcher::fold(&text).contains(&matcher::fold(&query))
            && let Some(pf) = m.prefilter()
        {
            prop_assert!(pf.find(raw.as_bytes()).is_some(), "query {:?} text {:?}", query, text);
        }
    }

    /// Segments always contain the (folded) query and respect the character limit.
    #[test]
    fn segments_contain_the_query(text in text_strategy(), max in 1usize..10, q in "[a-dA-D]{1,3}") {
        let m = matcher::Matcher::new(&q, true);
        let folded = matcher::fold(&q);
        m.for_each_segment(&text, max.max(q.chars().count()), |cut| {
            assert!(cut.text.chars().count() <= max.max(q.chars().count()));
            assert!(matcher::fold(&cut.text).contains(&folded), "{cut:?}");
            true
        });
    }
}
