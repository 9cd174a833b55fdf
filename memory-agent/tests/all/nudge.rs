//! The dream nudge: VECTORS S1–S4 as a table, §Z 2 (AND), and session counting.
#![allow(clippy::unwrap_used)]

use std::path::Path;

use jiff::{SignedDuration, Timestamp};
use memory_agent::nudge::{NUDGE_TITLE, nudge_message};
use memory_agent::pi::sessions::{ProjectSessions, SessionSearchOptions, session_dir_for_cwd};
use memory_agent::{NudgeThresholds, should_nudge};
use memory_core::clock::iso_millis;
use memory_core::{Config, DreamMeta};
use proptest::prelude::*;

fn now() -> Timestamp {
    "2026-11-30T12:00:00Z".parse().unwrap()
}

fn meta(hours_ago: i64, count: u64) -> DreamMeta {
    DreamMeta {
        last_dream_at: iso_millis(now() - SignedDuration::from_hours(hours_ago)),
        session_count_at_dream: count,
    }
}

#[test]
fn s1_to_s4() {
    let cfg = NudgeThresholds::from(&Config::default().dream); // 5 sessions / 24 h
    assert_eq!(cfg, NudgeThresholds::default());
    assert_eq!((cfg.after_sessions, cfg.after_hours), (5, 24.0));
    // (id, sessions, meta, expected message)
    let rows: [(&str, u64, Option<DreamMeta>, Option<&str>); 7] = [
        (
            "S1",
            8,
            Some(meta(48, 2)),
            Some("💡 8 sessions, 6 new entries since last dream. /dream"),
        ),
        ("S2", 8, Some(meta(0, 2)), None),
        ("S2", 500, Some(meta(0, 0)), None),
        (
            "S3",
            5,
            None,
            Some("💡 5 sessions, 5 new entries since last dream. /dream"),
        ),
        ("S3 below", 4, None, None),
        ("S4 (AND)", 20, Some(meta(2, 0)), None),
        ("S4 other half", 6, Some(meta(48, 2)), None),
    ];
    for (id, sessions, m, want) in rows {
        let got = should_nudge(m.as_ref(), sessions, now(), &cfg);
        assert_eq!(got.as_ref().map(|n| n.message.as_str()), want, "{id}");
    }
}

#[test]
fn s1_nudge_fields_and_confirm_texts() {
    let n = should_nudge(Some(&meta(48, 2)), 8, now(), &NudgeThresholds::default()).unwrap();
    assert_eq!((n.sessions, n.new_entries), (8, 6));
    assert_eq!(n.title(), "Memory Consolidation");
    assert_eq!(NUDGE_TITLE, "Memory Consolidation");
    assert_eq!(
        n.body(),
        "💡 8 sessions, 6 new entries since last dream. /dream\n\nConsolidate memory files now?"
    );
}

#[test]
fn thresholds_are_inclusive_and_configurable() {
    let mut dream = Config::default().dream;
    dream.nudge_after_sessions = 2;
    dream.nudge_after_hours = 1.5;
    let cfg = NudgeThresholds::from(&dream);
    let exactly = DreamMeta {
        last_dream_at: iso_millis(now() - SignedDuration::from_mins(90)),
        session_count_at_dream: 1,
    };
    assert!(should_nudge(Some(&exactly), 3, now(), &cfg).is_some());
    let just_before = DreamMeta {
        last_dream_at: iso_millis(now() - SignedDuration::from_mins(89)),
        session_count_at_dream: 1,
    };
    assert!(should_nudge(Some(&just_before), 3, now(), &cfg).is_none());
    assert!(should_nudge(Some(&exactly), 2, now(), &cfg).is_none());
}

#[test]
fn fewer_sessions_than_recorded_count_zero_new() {
    let cfg = NudgeThresholds::default();
    // Sessions deleted since the dream: never negative, never a nudge.
    assert!(should_nudge(Some(&meta(100, 10)), 3, now(), &cfg).is_none());
    let zero = NudgeThresholds {
        after_sessions: 0,
        ..cfg
    };
    let n = should_nudge(Some(&meta(100, 10)), 3, now(), &zero).unwrap();
    assert_eq!(n.new_entries, 0);
}

#[test]
fn unparseable_or_future_last_dream_never_nudges() {
    let cfg = NudgeThresholds::default();
    let bad = DreamMeta {
        last_dream_at: "yesterday".into(),
        session_count_at_dream: 0,
    };
    assert!(should_nudge(Some(&bad), 100, now(), &cfg).is_none());
    assert!(should_nudge(Some(&meta(-48, 0)), 100, now(), &cfg).is_none());
}

#[test]
fn message_format() {
    assert_eq!(
        nudge_message(1, 0),
        "💡 1 sessions, 0 new entries since last dream. /dream"
    );
}

fn write_session(dir: &Path, file: &str, id: &str, cwd: &str) {
    std::fs::create_dir_all(dir).unwrap();
    let text = format!(
        concat!(
            r#"{{"type":"session","version":3,"id":"{id}","timestamp":"2026-11-29T21:37:25.309Z","cwd":"{cwd}"}}"#,
            "\n",
            r#"{{"type":"message","id":"a1","parentId":null,"timestamp":"2026-11-29T21:37:26.000Z","message":{{"role":"user","content":[{{"type":"text","text":"hi"}}],"timestamp":1795988246000}}}}"#,
            "\n"
        ),
        id = id,
        cwd = cwd
    );
    std::fs::write(dir.join(file), text).unwrap();
}

#[test]
fn counts_sessions_like_pi_lists_them() {
    let sb = testkit::Sandbox::new();
    let agent_dir = sb.agent_dir();
    let cwd = Path::new("/home/u/app");
    let project = ProjectSessions::for_agent_dir(
        agent_dir.as_std_path(),
        cwd,
        SessionSearchOptions::default(),
    );
    assert_eq!(project.count().unwrap(), 0, "missing directory");
    let dir = project.dir.clone();
    assert_eq!(
        dir,
        session_dir_for_cwd(agent_dir.join("sessions").as_std_path(), cwd)
    );
    write_session(&dir, "2026-11-29T21-37-25-309Z_a.jsonl", "a", "/home/u/app");
    write_session(&dir, "2026-11-29T22-00-00-000Z_b.jsonl", "b", "/home/u/app");
    std::fs::write(dir.join("notes.jsonl"), "not a session\n").unwrap();
    std::fs::write(dir.join("c.txt"), "ignored").unwrap();
    assert_eq!(project.count().unwrap(), 2);

    // A flat session directory filtered on the header cwd.
    let flat = sb.path("flat").into_std_path_buf();
    write_session(&flat, "1_a.jsonl", "a", "/home/u/app");
    write_session(&flat, "2_b.jsonl", "b", "/home/u/other");
    let project =
        ProjectSessions::flat(flat, "/home/u/app".into(), SessionSearchOptions::default());
    assert_eq!(project.count().unwrap(), 1);
}

proptest! {
    /// §Z 2: with a meta, a nudge happens exactly when both thresholds are met, and its
    /// counts are the session count and the non-negative difference.
    #[test]
    fn nudge_iff_both_thresholds(
        sessions in 0u64..40,
        at_dream in 0u64..40,
        minutes_ago in -600i64..6000,
        after_sessions in 0u64..10,
        after_hours in 0u32..80,
    ) {
        let cfg = NudgeThresholds {
            after_sessions,
            after_hours: f64::from(after_hours),
        };
        let m = DreamMeta {
            last_dream_at: iso_millis(now() - SignedDuration::from_mins(minutes_ago)),
            session_count_at_dream: at_dream,
        };
        let new = sessions.saturating_sub(at_dream);
        let due = minutes_ago >= i64::from(after_hours) * 60 && new >= after_sessions;
        let got = should_nudge(Some(&m), sessions, now(), &cfg);
        prop_assert_eq!(got.is_some(), due);
        if let Some(n) = got {
            prop_assert_eq!((n.sessions, n.new_entries), (sessions, new));
            prop_assert_eq!(n.message, nudge_message(sessions, new));
        }
        // Without a meta only the session count matters.
        prop_assert_eq!(
            should_nudge(None, sessions, now(), &cfg).is_some(),
            sessions >= after_sessions
        );
    }
}
