//! Real pi 1.6.0 session files, written by the headless harness in `/work/shared/pi-e2e`
//! (steps A–F: a named session with tool calls, blocked tools, a compaction, a fork with a
//! later turn, and a `/new` session), checked against what pi's own
//! `SessionManager.list(cwd)` returned for them (`fixtures/pi-1.6.0/pi-list.json`).
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};

use memory_agent::pi::sessions::{
    Role, SessionEntry, SessionSearchOptions, TextSource, list_sessions, read_session,
    render_session_results, search_sessions, session_dir_for_cwd,
};
use serde_json::Value;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/pi-1.6.0")
}

fn expected() -> Value {
    let text = std::fs::read_to_string(fixtures().join("pi-list.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

fn session_dir() -> PathBuf {
    let cwd = expected()["cwd"].as_str().unwrap().to_owned();
    session_dir_for_cwd(&fixtures(), Path::new(&cwd))
}

#[test]
fn directory_name_matches_pi() {
    let want = expected()["encodedDir"].as_str().unwrap().to_owned();
    assert!(session_dir().ends_with(want));
    assert!(session_dir().is_dir());
}

#[test]
fn listing_equals_pi_session_manager_list() {
    let exp = expected();
    let list = list_sessions(&session_dir(), None).unwrap();
    let want: Vec<(String, Option<String>, String, String)> = exp["list"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["id"].as_str().unwrap().to_owned(),
                s["name"].as_str().map(str::to_owned),
                s["cwd"].as_str().unwrap().to_owned(),
                s["file"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    let got: Vec<(String, Option<String>, String, String)> = list
        .iter()
        .map(|s| {
            (
                s.id.clone(),
                s.name.clone(),
                s.cwd.clone(),
                s.path.file_name().unwrap().to_string_lossy().into_owned(),
            )
        })
        .collect();
    assert_eq!(got, want);
    // The fork records its parent file.
    assert!(
        list[0]
            .parent_session
            .as_deref()
            .unwrap()
            .ends_with(exp["list"][0]["parent"].as_str().unwrap())
    );
    // Same result through the flat-directory filter.
    let cwd = exp["cwd"].as_str().unwrap().to_owned();
    assert_eq!(
        list_sessions(&session_dir(), Some(Path::new(&cwd))).unwrap(),
        list
    );
}

#[test]
fn every_line_parses_and_message_counts_match_pi() {
    let exp = expected();
    for s in exp["list"].as_array().unwrap() {
        let path = session_dir().join(s["file"].as_str().unwrap());
        let f = read_session(&path).unwrap();
        assert_eq!(f.skipped_lines, 0, "{}", path.display());
        assert_eq!(f.header.id, s["id"].as_str().unwrap());
        assert_eq!(f.header.version, Some(3.0));
        let messages = f
            .entries
            .iter()
            .filter(|e| matches!(e, SessionEntry::Message(_)))
            .count();
        assert_eq!(
            messages as u64,
            s["messageCount"].as_u64().unwrap(),
            "{}",
            path.display()
        );
        // pi writes no unknown entry types here: everything is typed or a known "other".
        for e in &f.entries {
            if let SessionEntry::Other { kind, .. } = e {
                assert!(
                    ["custom", "model_change", "thinking_level_change"].contains(&&**kind),
                    "{kind}"
                );
            }
            if let SessionEntry::Message(m) = e {
                assert!(!matches!(m.role, Role::Other(_)), "{:?}", m.role);
            }
        }
    }
}

#[test]
fn search_over_real_sessions() {
    let dir = session_dir();
    let opts = SessionSearchOptions::default();
    // User and assistant text, newest session first.
    let r = search_sessions(&dir, None, "FAVORITE COLOR", &opts).unwrap();
    assert_eq!(r.hits.len(), 2, "the fork copies the main session's turns");
    assert_eq!(r.hits[0].info.id, "01a22963-5776-74a1-bb48-e08f6035c27f");
    let sources: Vec<TextSource> = r.hits[1].segments.iter().map(|s| s.source).collect();
    assert_eq!(
        sources,
        [TextSource::User, TextSource::Custom, TextSource::Assistant]
    );
    // Tool results only on request.
    let with_tools = SessionSearchOptions {
        include_tool_results: true,
        ..opts.clone()
    };
    let r = search_sessions(&dir, None, "RECALL(favorite color) = 42", &with_tools).unwrap();
    assert!(
        r.hits[1]
            .segments
            .iter()
            .any(|s| s.source == TextSource::ToolResult)
    );
    // The compaction summary quotes the conversation.
    let r = search_sessions(&dir, None, "[User]: hello there", &opts).unwrap();
    assert!(
        r.hits
            .iter()
            .flat_map(|h| &h.segments)
            .all(|s| s.source == TextSource::Compaction)
    );
    assert!(!r.hits.is_empty());
    // The frozen snapshot lives only in `custom` entry data, system messages and the
    // compaction's `systemMessage`: prompt state, never searched.
    let r = search_sessions(&dir, None, "E2E-FROZEN-SNAPSHOT", &opts).unwrap();
    assert!(r.hits.is_empty());
    assert_eq!(render_session_results(&r), "No matches in sessions.");
    assert_eq!((r.sessions_total, r.sessions_searched), (3, 3));

    let r = search_sessions(&dir, None, "json turn", &opts).unwrap();
    let text = render_session_results(&r).replace(&dir.display().to_string(), "<dir>");
    insta::assert_snapshot!(text);
}
