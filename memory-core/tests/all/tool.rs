//! The `memory` tool as a model calls it: JSON arguments in, pi-memory's texts out
//! (PM-31..PM-42), and compare-and-swap through the `VersionBook`.
#![allow(clippy::unwrap_used)]

use crate::common;

use common::Fixture;
use memory_core::tool::{
    DREAM_ACTIONS, MAIN_ACTIONS, SessionSearch, ToolOutput, VersionBook, execute, parameters_schema,
};
use memory_core::{AddRequest, Store, Target};
use serde_json::{Value, json};

fn call(store: &Store, book: &mut VersionBook, args: Value) -> ToolOutput {
    execute(Target::Store(store), MAIN_ACTIONS, &args, None, book)
}

struct Sessions;
impl SessionSearch for Sessions {
    fn search_sessions(&self, query: &str) -> Result<String, String> {
        Ok(format!("sessions matching {query}"))
    }
}

#[test]
fn the_five_actions_return_pi_memorys_texts() {
    let f = Fixture::new();
    let mut book = VersionBook::default();
    let s = &f.store;
    assert_eq!(
        call(s, &mut book, json!({"action": "list"})).text,
        "No memories yet."
    );
    let added = call(
        s,
        &mut book,
        json!({"action": "add", "name": "lock-probe", "content": "0-byte lock probe"}),
    );
    assert_eq!(added.text, "Saved \"lock-probe\" (lock-probe.md).");
    assert!(added.wrote && !added.is_error);
    assert_eq!(added.saved.as_deref(), Some("lock-probe"));
    let add_con = call(
        s,
        &mut book,
        json!({"action": "add", "name": "CON", "content": "x"}),
    );
    assert_eq!(add_con.text, "Saved \"CON\" (_CON.md).");
    assert_eq!(
        call(
            s,
            &mut book,
            json!({"action": "replace", "name": "CON", "content": "y"})
        )
        .text,
        "Replaced \"CON\" (_CON.md)."
    );
    let found = call(s, &mut book, json!({"action": "search", "query": "PROBE"}));
    assert!(
        found
            .text
            .starts_with("## lock-probe\nfile: lock-probe.md\ntype: feedback\n\n0-byte lock probe")
    );
    // pi-memory's search result details carry the number of hits.
    assert_eq!(found.count, Some(1));
    let none = call(
        s,
        &mut book,
        json!({"action": "search", "query": "nothing"}),
    );
    assert_eq!(none.text, "No matches in memory.");
    assert_eq!(none.count, Some(0));
    assert_eq!(
        call(s, &mut book, json!({"action": "remove", "name": "CON"})).text,
        "Removed \"CON\"."
    );
    let list = call(s, &mut book, json!({"action": "list"})).text;
    assert!(
        list.starts_with("- lock-probe (feedback, modified "),
        "{list}"
    );
    assert!(
        list.ends_with(") — 0-byte lock probe [lock-probe.md]"),
        "{list}"
    );
}

#[test]
fn bad_calls_are_errors_and_change_nothing() {
    let f = Fixture::new();
    let mut book = VersionBook::default();
    call(
        &f.store,
        &mut book,
        json!({"action": "add", "name": "A", "content": "a"}),
    );
    let before = f.tree();
    let cases = [
        (json!({}), "action is required"),
        (json!("not an object"), "arguments must be a JSON object"),
        (json!({"action": "explode"}), "Unknown action: explode"),
        (
            json!({"action": "rename", "name": "A", "new_name": "B"}),
            "Unknown action: rename",
        ),
        (
            json!({"action": "rebuild_index"}),
            "Unknown action: rebuild_index",
        ),
        (
            json!({"action": "add", "name": "B"}),
            "content is required for add",
        ),
        // PM-32: the tool checks presence like JavaScript's `!params.content` (absent or
        // ""); whitespace passes it and the store refuses the empty trimmed body.
        (
            json!({"action": "add", "name": "B", "content": "  "}),
            "body is required",
        ),
        (
            json!({"action": "add", "name": "B", "content": ""}),
            "content is required for add",
        ),
        // pi-memory 2.5's text for a missing name, like replace/remove/rename; a blank name
        // passes the presence check and fails the store's validation.
        (
            json!({"action": "add", "content": "x"}),
            "name is required for add",
        ),
        (
            json!({"action": "add", "name": "", "content": "x"}),
            "name is required for add",
        ),
        (
            json!({"action": "add", "name": "  ", "content": "x"}),
            "name is required",
        ),
        (
            json!({"action": "replace", "name": "  ", "content": "x"}),
            "Entry \"  \" not found",
        ),
        (
            json!({"action": "add", "name": "B", "content": "x", "type": "bogus"}),
            "type must be one of: user, feedback, project, reference",
        ),
        (
            json!({"action": "add", "name": ["B"], "content": "x"}),
            "name must be a string",
        ),
        (
            json!({"action": "replace", "content": "x"}),
            "name is required for replace",
        ),
        (
            json!({"action": "replace", "name": "A"}),
            "content is required for replace",
        ),
        (
            json!({"action": "replace", "name": "nope", "content": "x"}),
            "Entry \"nope\" not found",
        ),
        (json!({"action": "remove"}), "name is required for remove"),
        (
            json!({"action": "remove", "name": "nope"}),
            "Entry \"nope\" not found",
        ),
        (json!({"action": "search"}), "query is required for search"),
        (
            json!({"action": "search", "query": "a", "scope": "web"}),
            "scope must be \"memory\" or \"sessions\"",
        ),
        (
            json!({"action": "search", "query": "a", "scope": "sessions"}),
            "Session search is not available",
        ),
    ];
    for (args, message) in cases {
        let out = call(&f.store, &mut book, args.clone());
        assert!(out.is_error, "{args}");
        assert!(!out.wrote, "{args}");
        assert!(out.text.starts_with(message), "{args}: {}", out.text);
        assert_eq!(f.tree(), before, "{args} changed the disk");
    }
}

#[test]
fn dream_actions_and_sessions_scope() {
    let f = Fixture::new();
    let mut book = VersionBook::default();
    let dream = |book: &mut VersionBook, args: Value| {
        execute(
            Target::Store(&f.store),
            DREAM_ACTIONS,
            &args,
            Some(&Sessions),
            book,
        )
    };
    dream(
        &mut book,
        json!({"action": "add", "name": "A", "content": "a"}),
    );
    assert_eq!(
        dream(
            &mut book,
            json!({"action": "rename", "name": "A", "new_name": "B"})
        )
        .text,
        "Renamed \"A\" → \"B\" (B.md)."
    );
    assert_eq!(
        dream(&mut book, json!({"action": "rebuild_index"})).text,
        "Rebuilt index: 1 entries (2 header lines)."
    );
    assert_eq!(
        dream(
            &mut book,
            json!({"action": "search", "query": "x", "scope": "sessions"})
        )
        .text,
        "sessions matching x"
    );
    let schema = parameters_schema(DREAM_ACTIONS);
    assert!(schema["properties"]["new_name"].is_object());
    assert!(parameters_schema(MAIN_ACTIONS)["properties"]["new_name"].is_null());
}

#[test]
fn what_the_model_was_shown_is_what_it_may_overwrite() {
    let f = Fixture::new();
    let mut book = VersionBook::default();
    call(
        &f.store,
        &mut book,
        json!({"action": "add", "name": "A", "content": "first"}),
    );
    // The model lists (and so sees) A; then another process rewrites it.
    call(&f.store, &mut book, json!({"action": "list"}));
    let other = Store::new(f.dir(), common::options());
    other
        .add(AddRequest {
            name: "A".into(),
            body: "changed elsewhere".into(),
            ..AddRequest::default()
        })
        .unwrap();
    let stale = call(
        &f.store,
        &mut book,
        json!({"action": "replace", "name": "A", "content": "mine"}),
    );
    assert!(stale.is_error);
    assert_eq!(stale.text, "Memory conflict: stale version");
    assert!(f.read("A.md").contains("changed elsewhere"));
    let stale = call(
        &f.store,
        &mut book,
        json!({"action": "remove", "name": "A"}),
    );
    assert_eq!(stale.text, "Memory conflict: stale version");
    // After reading it again, the write goes through.
    call(
        &f.store,
        &mut book,
        json!({"action": "search", "query": "changed"}),
    );
    let ok = call(
        &f.store,
        &mut book,
        json!({"action": "replace", "name": "A", "content": "mine"}),
    );
    assert_eq!(ok.text, "Replaced \"A\" (A.md).");
    // Its own writes never conflict with itself.
    let again = call(
        &f.store,
        &mut book,
        json!({"action": "replace", "name": "A", "content": "mine 2"}),
    );
    assert!(!again.is_error, "{}", again.text);
}

/// A host whose client passes versions itself (the MCP server): writes report the file and
/// version they produced, and `VersionBook::expect` makes the next replace conditional.
#[test]
fn writes_report_their_version_and_expect_makes_replace_conditional() {
    let f = Fixture::new();
    let mut book = VersionBook::default();
    let s = &f.store;
    let added = call(
        s,
        &mut book,
        json!({"action": "add", "name": "Port", "content": "api on 8080"}),
    );
    let v1 = added.version.unwrap();
    assert_eq!(added.file.as_deref(), Some("Port.md"));
    assert_eq!(s.read("Port").unwrap().unwrap().version, v1);
    // A client that expects a version the entry is not at gets the conflict, nothing changes.
    let other: memory_core::Version = "0123456789abcdef".parse().unwrap();
    let mut fresh = VersionBook::default();
    fresh.expect("Port", other);
    let stale = call(
        s,
        &mut fresh,
        json!({"action": "replace", "name": "Port", "content": "api on 9090"}),
    );
    assert!(stale.is_error);
    assert_eq!(stale.text, "Memory conflict: stale version");
    assert_eq!(stale.version, None);
    assert_eq!(s.read("Port").unwrap().unwrap().body, "api on 8080");
    fresh.expect("Port", v1);
    let ok = call(
        s,
        &mut fresh,
        json!({"action": "replace", "name": "Port", "content": "api on 9090"}),
    );
    assert_eq!(ok.text, "Replaced \"Port\" (Port.md).");
    assert_eq!(ok.version, Some(s.read("Port").unwrap().unwrap().version));
    assert_ne!(ok.version, Some(v1));
}
