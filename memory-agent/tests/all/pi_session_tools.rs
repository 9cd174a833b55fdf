//! pi-session's tools and references (`memory_agent::pi::session_tools`) and the cached
//! session listing behind them (`SessionCatalog`), over session files shaped like pi 1.6.0's
//! (`docs/pi-host.md` §h). The PS-V rows of docs/compat/vectors.md §PS live here.
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};

use memory_agent::pi::session_tools::{
    AskEnd, AskStatus, Caller, Expansion, RefScope, candidates, expand_references, parse_ask_args,
    ref_tokens, report, resolve_target, search_session, token_at_end,
};
use memory_agent::pi::sessions::{
    Scope, SessionCatalog, SessionStorage, list_sessions, session_dir_for_cwd,
};
use serde_json::{Value, json};
use testkit::{Rng, Sandbox};

const T0: i64 = 1_795_988_245_400; // 2026-11-29T21:37:25.400Z

fn iso(ms: i64) -> String {
    memory_core::clock::iso_millis(jiff::Timestamp::from_millisecond(ms).unwrap())
}

/// A session file written line by line, like pi writes it.
struct File {
    path: PathBuf,
    n: usize,
}

impl File {
    fn create(dir: &Path, id: &str, cwd: &str, ms: i64) -> File {
        std::fs::create_dir_all(dir).unwrap();
        let path = dir.join(format!("{}_{id}.jsonl", iso(ms).replace([':', '.'], "-")));
        let header = json!({"type":"session","version":3,"id":id,"timestamp":iso(ms),"cwd":cwd});
        std::fs::write(&path, format!("{header}\n")).unwrap();
        File { path, n: 0 }
    }

    fn append(&mut self, kind: &str, ms: i64, mut v: Value) -> &mut Self {
        self.n += 1;
        let o = v.as_object_mut().unwrap();
        o.insert("type".into(), json!(kind));
        o.insert("id".into(), json!(format!("{:08x}", self.n)));
        o.insert("parentId".into(), Value::Null);
        o.insert("timestamp".into(), json!(iso(ms)));
        self.raw(&format!("{v}\n"))
    }

    fn raw(&mut self, text: &str) -> &mut Self {
        use std::io::Write;
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&self.path)
            .unwrap();
        f.write_all(text.as_bytes()).unwrap();
        self
    }

    fn name(&mut self, ms: i64, name: &str) -> &mut Self {
        self.append("session_info", ms, json!({ "name": name }))
    }

    fn msg(&mut self, role: &str, ms: i64, content: Value) -> &mut Self {
        self.append(
            "message",
            ms,
            json!({"message": {"role": role, "content": content, "timestamp": ms}}),
        )
    }

    fn user(&mut self, ms: i64, text: &str) -> &mut Self {
        self.msg("user", ms, json!([{"type": "text", "text": text}]))
    }

    fn assistant(&mut self, ms: i64, text: &str) -> &mut Self {
        self.msg(
            "assistant",
            ms,
            json!([{"type": "thinking", "thinking": "private thoughts"}, {"type": "text", "text": text}]),
        )
    }
}

struct Fx {
    sb: Sandbox,
    root: PathBuf,
    app: PathBuf,
    other: PathBuf,
}

impl Fx {
    fn new() -> Fx {
        let sb = Sandbox::new();
        let root = sb.agent_dir().as_std_path().join("sessions");
        let app = sb.dir("work/app").as_std_path().canonicalize().unwrap();
        let other = sb.dir("work/other").as_std_path().canonicalize().unwrap();
        Fx {
            sb,
            root,
            app,
            other,
        }
    }

    fn storage(&self) -> SessionStorage {
        SessionStorage::PerCwd {
            root: self.root.clone(),
        }
    }

    fn dir(&self, cwd: &Path) -> PathBuf {
        session_dir_for_cwd(&self.root, cwd)
    }

    fn file(&self, cwd: &Path, id: &str, ms: i64) -> File {
        File::create(&self.dir(cwd), id, cwd.to_str().unwrap(), ms)
    }

    fn caller(&self) -> Caller {
        Caller {
            cwd: self.app.clone(),
            storage: self.storage(),
            home: Some(self.sb.home().into_std_path_buf()),
            session_id: Some("caller-id".into()),
            session_file: None,
        }
    }

    fn allow(&self, dirs: &[&Path]) {
        let f = self.app.join(".pi/pi-session");
        std::fs::create_dir_all(&f).unwrap();
        std::fs::write(
            f.join("setting.json"),
            json!({ "externalDirectories": dirs }).to_string(),
        )
        .unwrap();
    }
}

// ------------------------------------------------------------------ the catalog

/// The catalog's listing equals a fresh `list_sessions` of every directory, merged.
fn assert_catalog_is_fresh(catalog: &SessionCatalog, fx: &Fx, step: &str) {
    let mut want = Vec::new();
    for cwd in [&fx.app, &fx.other] {
        want.extend(list_sessions(&fx.dir(cwd), None).unwrap());
    }
    want.sort_by(|a, b| {
        b.modified
            .cmp(&a.modified)
            .then_with(|| a.path.cmp(&b.path))
    });
    let got = catalog.list(&fx.storage(), &Scope::All).unwrap();
    assert_eq!(got, want, "after {step}");
    let own = catalog
        .list(&fx.storage(), &Scope::Project(fx.app.clone()))
        .unwrap();
    assert_eq!(
        own,
        list_sessions(&fx.dir(&fx.app), None).unwrap(),
        "after {step}"
    );
}

#[test]
fn the_cached_listing_equals_a_fresh_one_after_appends_renames_and_rewrites() {
    let fx = Fx::new();
    let catalog = SessionCatalog::new();
    let mut rng = Rng::new(7);
    let mut files: Vec<File> = Vec::new();
    for i in 0..12 {
        let cwd = if i % 3 == 0 { &fx.other } else { &fx.app };
        let mut f = fx.file(cwd, &format!("s{i:02}"), T0 + i * 1000);
        if i % 2 == 0 {
            f.name(T0 + i * 1000, &format!("Session {i}"));
        }
        f.user(T0 + i * 1000 + 1, "hello");
        files.push(f);
    }
    assert_catalog_is_fresh(&catalog, &fx, "creation");
    for step in 0..200 {
        let k = rng.below(files.len() as u64) as usize;
        let ms = T0 + 100_000 + step * 1000;
        let what = rng.below(7);
        let f = &mut files[k];
        match what {
            0 => {
                f.user(ms, "more");
            }
            1 => {
                f.assistant(ms, "reply");
            }
            2 => {
                f.name(ms, &format!("Renamed {step}"));
            }
            3 => {
                f.name(ms, "   "); // clears the name
            }
            4 => {
                // pi mid-append: a partial line, completed at the next step.
                f.raw(&format!(
                    "{{\"type\":\"session_info\",\"id\":\"p{step}\",\"parentId\":null,"
                ));
                assert_catalog_is_fresh(&catalog, &fx, &format!("step {step} (partial)"));
                f.raw(&format!(
                    "\"timestamp\":\"{}\",\"name\":\"Completed {step}\"}}\n",
                    iso(ms)
                ));
            }
            5 => {
                // A whole-file rewrite (pi's migration): different header, same path.
                let text = std::fs::read_to_string(&f.path).unwrap();
                let rewritten = text.replacen("\"version\":3", "\"version\":3,\"x\":1", 1);
                std::fs::write(&f.path, rewritten).unwrap();
            }
            _ => {
                // A new session, or one removed.
                if rng.below(2) == 0 {
                    let path = files.swap_remove(k).path;
                    std::fs::remove_file(path).unwrap();
                } else {
                    let mut n = fx.file(&fx.app, &format!("n{step}"), ms);
                    n.name(ms, &format!("New {step}"));
                    files.push(n);
                }
            }
        }
        assert_catalog_is_fresh(&catalog, &fx, &format!("step {step} ({what})"));
    }
}

#[test]
fn ps_v5_named_lists_matching_named_sessions_newest_first_at_most_twenty() {
    let fx = Fx::new();
    for i in 0..25 {
        let mut f = fx.file(&fx.app, &format!("a{i:02}"), T0 + i * 1000);
        f.name(T0, &format!("Refactor AUTH part {i}"))
            .user(T0 + i * 1000, "x");
    }
    fx.file(&fx.app, "unnamed", T0 + 99_000)
        .user(T0 + 99_000, "auth without a name");
    fx.file(&fx.app, "other-name", T0 + 98_000)
        .name(T0, "Payments")
        .user(T0 + 98_000, "x");
    fx.file(&fx.other, "elsewhere", T0 + 97_000)
        .name(T0, "auth elsewhere")
        .user(T0 + 97_000, "x");
    let catalog = SessionCatalog::new();
    let got = candidates(&catalog, &fx.caller(), RefScope::Cwd, "auth").unwrap();
    assert_eq!(got.len(), 20);
    assert_eq!(got[0].id, "a24");
    assert_eq!(got[19].id, "a05");
    assert!(got.iter().all(|c| c.name.contains("AUTH")));
    assert_eq!(got[0].activity, iso(T0 + 24_000));
    // @as: every project; the newest match elsewhere comes first.
    let all = candidates(&catalog, &fx.caller(), RefScope::All, "AUTH").unwrap();
    assert_eq!(all[0].id, "elsewhere");
    // An empty query lists every named session; new and renamed sessions show up next time.
    assert_eq!(
        candidates(&catalog, &fx.caller(), RefScope::Cwd, "")
            .unwrap()
            .len(),
        20
    );
    fx.file(&fx.app, "late", T0 + 200_000)
        .name(T0, "Zebra")
        .user(T0 + 200_000, "x");
    assert_eq!(
        candidates(&catalog, &fx.caller(), RefScope::Cwd, "zeb").unwrap()[0].id,
        "late"
    );
}

// ------------------------------------------------------------------ search-session

fn search(fx: &Fx, args: Value) -> Value {
    let out = search_session(&args, &fx.caller());
    assert!(!out.is_error, "{}", out.status);
    out.status
}

#[test]
fn search_session_limits_order_and_truncation_flags() {
    let fx = Fx::new();
    // 25 sessions match; the newest 20 are returned, newest activity first.
    for i in 0..25 {
        fx.file(&fx.app, &format!("m{i:02}"), T0 + i * 1000)
            .user(T0 + i * 1000, &format!("the zebra number {i}"));
    }
    let r = search(&fx, json!({"query": "ZEBRA"}));
    let sessions = r["sessions"].as_array().unwrap();
    assert_eq!(sessions.len(), 20);
    assert_eq!(r["truncated"], true);
    let ids: Vec<&str> = sessions.iter().map(|s| s["id"].as_str().unwrap()).collect();
    assert_eq!(ids[0], "m24");
    assert_eq!(ids[19], "m05");
    assert_eq!(sessions[0]["activity"], iso(T0 + 24_000));
    assert_eq!(sessions[0]["name"], Value::Null);
    assert_eq!(
        sessions[0]["path"],
        json!(fx.dir(&fx.app).join(format!(
            "{}_m24.jsonl",
            iso(T0 + 24_000).replace([':', '.'], "-")
        )))
    );
    assert_eq!(
        r["limits"],
        json!({"sessions": 20, "segmentsPerSession": 5, "charsPerSegment": 2000})
    );

    // Exactly 20 matching sessions: not truncated.
    let fx = Fx::new();
    for i in 0..20 {
        fx.file(&fx.app, &format!("e{i:02}"), T0 + i * 1000)
            .user(T0 + i * 1000, "zebra");
    }
    let r = search(&fx, json!({"query": "zebra"}));
    assert_eq!(
        (r["sessions"].as_array().unwrap().len(), &r["truncated"]),
        (20, &json!(false))
    );
}

#[test]
fn search_session_segments_ps_v9_and_what_is_never_matched() {
    let fx = Fx::new();
    let long = format!("{}needle{}", "a".repeat(3000), "b".repeat(1994));
    let mut f = fx.file(&fx.app, "s1", T0);
    f.name(T0, "Needles")
        .user(T0 + 1, &long)
        .user(T0 + 2, "needle 2\nno\nneedle 3\nNEEDLE 4")
        .assistant(T0 + 3, "needle 5\nneedle 6");
    // Never matched: thinking, tool output, tool-call arguments, custom messages,
    // compaction summaries.
    f.msg(
        "assistant",
        T0 + 4,
        json!([{"type": "thinking", "thinking": "secret-haystack"}, {"type": "toolCall", "id": "c", "name": "bash", "arguments": {"command": "echo secret-haystack"}}]),
    )
    .msg("toolResult", T0 + 5, json!([{"type": "text", "text": "secret-haystack"}]))
    .append("custom_message", T0 + 6, json!({"customType": "x", "content": "secret-haystack", "display": false}))
    .append("compaction", T0 + 7, json!({"summary": "secret-haystack", "firstKeptEntryId": "1", "tokensBefore": 1}));
    let r = search(&fx, json!({"query": "needle"}));
    let s = &r["sessions"][0];
    assert_eq!(s["name"], "Needles");
    let segs = s["segments"].as_array().unwrap();
    assert_eq!(segs.len(), 5);
    assert_eq!(s["truncated"], true, "a sixth matching line exists");
    // PS-V9: 5 000 characters cut to 2 000 around the match.
    assert_eq!(segs[0]["text"].as_str().unwrap().chars().count(), 2000);
    assert!(segs[0]["text"].as_str().unwrap().contains("needle"));
    assert_eq!(segs[0]["truncated"], true);
    assert_eq!(
        segs[1],
        json!({"role": "user", "text": "needle 2", "truncated": false})
    );
    assert_eq!(segs[4]["role"], "assistant");
    assert_eq!(r["truncated"], false);
    let r = search(&fx, json!({"query": "secret-haystack"}));
    assert_eq!(r["sessions"], json!([]));
    let r = search(&fx, json!({"query": "private thoughts"}));
    assert_eq!(r["sessions"], json!([]), "thinking is never searched");
}

#[test]
fn search_session_arguments_and_authorization() {
    let fx = Fx::new();
    fx.file(&fx.other, "o1", T0).user(T0, "other project zebra");
    fx.file(&fx.app, "a1", T0).user(T0, "own zebra");
    for (args, want) in [
        (json!({}), "query is required and must not be blank"),
        (
            json!({"query": "  "}),
            "query is required and must not be blank",
        ),
        (json!({"query": 5}), "query must be a string, not 5"),
        (
            json!({"query": "zebra", "cwd": "work/other"}),
            "cwd \"work/other\" must be an absolute path",
        ),
    ] {
        let out = search_session(&args, &fx.caller());
        assert!(out.is_error);
        assert_eq!(out.status, json!({"status": "error", "error": want}));
    }
    let other = json!({"query": "zebra", "cwd": fx.other});
    let out = search_session(&other, &fx.caller());
    let msg = out.status["error"].as_str().unwrap();
    assert!(
        out.is_error
            && msg.contains(".pi/pi-session/setting.json")
            && msg.contains("does not exist"),
        "{msg}"
    );
    fx.allow(&[&fx.other]);
    let r = search(&fx, other.clone());
    assert_eq!(r["sessions"][0]["id"], "o1");
    assert_eq!(r["cwd"], json!(fx.other));
    // Own sessions by default, and with the own cwd given explicitly.
    assert_eq!(
        search(&fx, json!({"query": "zebra"}))["sessions"][0]["id"],
        "a1"
    );
    assert_eq!(
        search(&fx, json!({"query": "zebra", "cwd": fx.app}))["sessions"][0]["id"],
        "a1"
    );
    // Malformed whitelist: refused, the file named.
    std::fs::write(fx.app.join(".pi/pi-session/setting.json"), "{oops").unwrap();
    let out = search_session(&other, &fx.caller());
    assert!(
        out.is_error
            && out.status["error"]
                .as_str()
                .unwrap()
                .contains("setting.json is malformed")
    );
}

// ------------------------------------------------------------------ references

#[test]
fn ps_v3_and_ps_v6_tokens() {
    // PS-V3: not at a line start and not after whitespace.
    assert!(ref_tokens("x@s:id").is_empty());
    assert!(ref_tokens("mail@as:id").is_empty());
    // PS-V6: whitespace ends the token.
    let t = ref_tokens("@s:my session");
    assert_eq!((t.len(), t[0].query), (1, "my"));
    // Line starts, tabs, several tokens, other `@` words.
    let t = ref_tokens("a\n@s:one\t@as:two @src/x @s:");
    let got: Vec<(RefScope, &str)> = t.iter().map(|t| (t.scope, t.query)).collect();
    assert_eq!(
        got,
        [
            (RefScope::Cwd, "one"),
            (RefScope::All, "two"),
            (RefScope::Cwd, "")
        ]
    );
    assert_eq!(token_at_end("see @as:re").map(|t| t.query), Some("re"));
    assert!(token_at_end("see @s:re x").is_none());
}

#[test]
fn ps_v1_ps_v2_expansion() {
    let fx = Fx::new();
    let id = "0191a2b3-c4d5-7e6f-8a9b-0c1d2e3f4a5b";
    let f = fx.file(&fx.app, id, T0);
    let mut f = f;
    f.name(T0, "Refactor auth").user(T0, "x");
    let path = f.path.clone();
    let mut g = fx.file(&fx.other, "elsewhere-1", T0);
    g.name(T0, "Other project").user(T0, "y");
    let mut u = fx.file(&fx.app, "unnamed-1", T0);
    u.user(T0, "z");
    let catalog = SessionCatalog::new();
    let caller = fx.caller();
    let sentence = format!(
        "Read or search Refactor auth {} if more context is needed.",
        path.display()
    );
    // PS-V1: the token is replaced, the surrounding whitespace kept (VECTORS §Z 16).
    assert_eq!(
        expand_references(&format!("see @s:{id} please"), &catalog, &caller),
        Expansion::Expanded(format!("see {sentence} please"))
    );
    assert_eq!(
        expand_references(&format!("@s:{id}\n@as:elsewhere-1"), &catalog, &caller),
        Expansion::Expanded(format!(
            "{sentence}\nRead or search Other project {} if more context is needed.",
            g.path.display()
        ))
    );
    // PS-V2: unknown IDs stay; `@s:` only looks in this cwd; partial IDs are unknown.
    for text in [
        "@s:unknown-id".to_owned(),
        "@s:elsewhere-1".to_owned(),
        format!("@s:{}", &id[..8]),
        format!("x@s:{id}"),
        "nothing here".to_owned(),
    ] {
        assert_eq!(
            expand_references(&text, &catalog, &caller),
            Expansion::Unchanged,
            "{text}"
        );
    }
    // Unknown and known mixed: only the known one changes.
    assert_eq!(
        expand_references(&format!("@s:nope @s:{id}"), &catalog, &caller),
        Expansion::Expanded(format!("@s:nope {sentence}"))
    );
    // An unnamed session is named by its ID (VECTORS §Z 18).
    assert_eq!(
        expand_references("@s:unnamed-1", &catalog, &caller),
        Expansion::Expanded(format!(
            "Read or search unnamed-1 {} if more context is needed.",
            u.path.display()
        ))
    );
}

#[test]
fn an_enumeration_error_leaves_the_input_unchanged_with_a_warning() {
    let fx = Fx::new();
    // The project's session directory is a file: it cannot be listed.
    std::fs::create_dir_all(&fx.root).unwrap();
    std::fs::write(fx.dir(&fx.app), "not a directory").unwrap();
    let out = expand_references("@s:some-id", &SessionCatalog::new(), &fx.caller());
    let Expansion::Failed(w) = out else {
        panic!("{out:?}")
    };
    assert!(w.starts_with("Session references were not expanded"), "{w}");
}

// ------------------------------------------------------------------ ask-session

#[test]
fn ask_arguments() {
    assert_eq!(
        parse_ask_args(&json!({"id": " s1 ", "prompt": "why?"})).unwrap(),
        memory_agent::pi::session_tools::AskArgs {
            id: "s1".into(),
            prompt: "why?".into(),
            steer: false
        }
    );
    assert!(
        parse_ask_args(&json!({"id": "s1", "prompt": "x", "steer": true}))
            .unwrap()
            .steer
    );
    for (args, want) in [
        (
            json!({"prompt": "x"}),
            "id is required and must not be blank",
        ),
        (
            json!({"id": "s1", "prompt": " "}),
            "prompt is required and must not be blank",
        ),
        (
            json!({"id": "s1", "prompt": "x", "steer": "yes"}),
            "steer must be true or false, not \"yes\"",
        ),
        (
            json!({"id": 3, "prompt": "x"}),
            "id must be a string, not 3",
        ),
    ] {
        assert_eq!(parse_ask_args(&args).unwrap_err(), want);
    }
}

#[test]
fn ps_v10_ask_targets_only_full_ids_of_other_sessions() {
    let fx = Fx::new();
    let id = "0191a2b3-c4d5-7e6f-8a9b-0c1d2e3f4a5b";
    let mut f = fx.file(&fx.app, id, T0);
    f.name(T0, "Refactor auth").user(T0, "x");
    let mut me = fx.file(&fx.app, "caller-id", T0);
    me.user(T0, "me");
    fx.file(&fx.other, "far-1", T0).user(T0, "far");
    let catalog = SessionCatalog::new();
    let caller = fx.caller();
    let t = resolve_target(&catalog, &caller, id, None).unwrap();
    assert_eq!((t.session.id.as_str(), t.path()), (id, f.path.clone()));
    assert_eq!(t.run_dir(), fx.app);
    let err = |x: &str, cwd: Option<&Value>| resolve_target(&catalog, &caller, x, cwd).unwrap_err();
    assert!(err("caller-id", None).contains("cannot ask the calling session itself"));
    let by_file = Caller {
        session_id: Some("different".into()),
        session_file: Some(me.path.clone()),
        ..fx.caller()
    };
    assert!(
        resolve_target(&catalog, &by_file, "caller-id", None)
            .unwrap_err()
            .contains("itself")
    );
    assert!(err("refactor AUTH", None).contains(&format!(
        "is a session name, not an ID; the session named \"Refactor auth\" has the full ID {id}"
    )));
    assert!(err(&id[..8], None).contains(&format!(
        "is a partial ID; ask-session needs the full ID ({id}"
    )));
    assert!(err(f.path.to_str().unwrap(), None).contains("is a path"));
    assert!(err("nope", None).starts_with("no session with the ID \"nope\""));
    // Another project: only when admitted, and the ID is looked up only there.
    let other = json!(fx.other);
    assert!(err("far-1", Some(&other)).contains("not authorized"));
    assert!(err("far-1", None).starts_with("no session with the ID"));
    fx.allow(&[&fx.other]);
    let t = resolve_target(&catalog, &caller, "far-1", Some(&other)).unwrap();
    assert_eq!(t.run_dir(), fx.other);
}

#[test]
fn statuses_guidance_and_the_report_carry_the_full_id_and_path() {
    let fx = Fx::new();
    let mut f = fx.file(&fx.app, "target-1", T0);
    f.name(T0, "Target").user(T0, "x");
    let t = resolve_target(&SessionCatalog::new(), &fx.caller(), "target-1", None).unwrap();
    let status = AskStatus::Accepted.status(&t);
    assert_eq!(status["status"], "accepted");
    assert_eq!(status["path"], json!(f.path));
    assert!(
        AskStatus::Accepted
            .guidance("target-1")
            .contains("Do not poll, redo or re-delegate")
    );
    assert!(AskStatus::Busy.guidance("target-1").contains("steer: true"));
    let (text, details) = report(
        &t,
        &AskEnd::Completed {
            answer: "42".into(),
        },
    );
    assert!(text.starts_with(
        "[session-report] ask-session report: session target-1 (\"Target\") completed the ask."
    ));
    assert!(text.contains(&format!(
        "ID: target-1\nPath: {}\nAnswer:\n42",
        f.path.display()
    )));
    assert_eq!(details["status"], "completed");
    assert_eq!(details["answer"], "42");
    let (text, details) = report(
        &t,
        &AskEnd::Failed {
            error: "boom".into(),
        },
    );
    assert!(text.contains("failed the ask: boom") && text.contains("ID: target-1"));
    assert_eq!(
        (details["status"].as_str(), details["error"].as_str()),
        (Some("failed"), Some("boom"))
    );
    let (_, details) = report(&t, &AskEnd::Handled);
    assert_eq!(details["status"], "handled");
}
