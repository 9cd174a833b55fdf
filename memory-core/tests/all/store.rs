//! Store-level behaviour: VECTORS G (store level), D29-D37, F13, H4/H5, N6-N9, Q, plus the
//! additions of this implementation (versions, secrets, size limit, hostile input).
#![allow(clippy::unwrap_used)]

use crate::common;

use common::{Fixture, entry_text, options};
use memory_core::{AddRequest, EntryType, ReplaceRequest, StoreError, StoreOptions};

fn add(f: &Fixture, name: &str, body: &str) -> memory_core::WriteOutcome {
    f.store
        .add(AddRequest {
            name: name.into(),
            body: body.into(),
            ..AddRequest::default()
        })
        .unwrap()
}

fn add_desc(f: &Fixture, name: &str, desc: &str, body: &str) -> memory_core::WriteOutcome {
    f.store
        .add(AddRequest {
            name: name.into(),
            description: Some(desc.into()),
            body: body.into(),
            ..AddRequest::default()
        })
        .unwrap()
}

#[test]
fn g_store_first_add_writes_only_the_entry_line() {
    let f = Fixture::new();
    let out = add_desc(&f, "A", "desc a", "body");
    assert_eq!(out.saved_text(), "Saved \"A\" (A.md).");
    assert_eq!(f.index(), "- [A](A.md) — desc a\n");
    let text = f.read("A.md");
    assert!(text.starts_with("---\nname: A\ndescription: desc a\ntype: feedback\ncreated: 2026-10-01\nmodified: 2026-10-01T00:00:0"));
    assert!(text.ends_with("\n---\n\nbody\n"));
}

#[test]
fn g_store_add_keeps_handwritten_lines() {
    let f = Fixture::new();
    f.write("MEMORY.md", "# Memory Index\n\n## Project\n<!-- keep -->\n");
    add_desc(&f, "B", "second", "b");
    assert_eq!(
        f.index(),
        "# Memory Index\n\n## Project\n<!-- keep -->\n- [B](B.md) — second\n"
    );
}

#[test]
fn g_store_crlf_index_is_rewritten_with_lf() {
    let f = Fixture::new();
    f.write(
        "a.md",
        &entry_text("A", "d", "user", "2026-10-01T00:00:00.000Z", "x"),
    );
    f.write("MEMORY.md", "# Memory Index\r\n\r\n- [A](a.md) — d\r\n");
    add_desc(&f, "B", "bee", "b");
    assert_eq!(
        f.index(),
        "# Memory Index\n\n- [A](a.md) — d\n- [B](B.md) — bee\n"
    );
}

#[test]
fn pm33_add_same_name_overwrites_in_place() {
    let f = Fixture::new();
    f.write(
        "A.md",
        &entry_text(
            "A",
            "old",
            "project",
            "2026-09-01T00:00:00.000Z",
            "old body",
        )
        .replace("created: 2026-10-01", "created: 2025-01-02"),
    );
    f.write(
        "MEMORY.md",
        "# Memory Index\n- [A](A.md) — old\n- [Z](z.md) — z\n",
    );
    let out = add_desc(&f, "  A  ", "new", "new body");
    assert_eq!(out.file, "A.md");
    assert_eq!(
        f.index(),
        "# Memory Index\n- [A](A.md) — new\n- [Z](z.md) — z\n"
    );
    let text = f.read("A.md");
    assert!(text.contains("\ncreated: 2025-01-02\n"), "{text}");
    assert!(text.contains("\ntype: project\n"), "type kept: {text}");
    assert!(text.ends_with("\n\nnew body\n"));
    let entries = f.store.list().unwrap();
    assert_eq!(entries.len(), 1);
    // `modified` is refreshed to the store clock's now (the stepping clock starts at
    // 2026-10-01T00:00:01Z), never kept from the old file.
    assert!(!text.contains("2026-09-01"), "modified refreshed: {text}");
    assert!(
        entries[0].meta.modified.as_str() > "2026-10-01T00:00:00.000Z",
        "{}",
        entries[0].meta.modified
    );
}

#[test]
fn f_description_is_derived_when_blank() {
    let f = Fixture::new();
    add(&f, "A", "第一句。第二句。");
    assert_eq!(f.index(), "- [A](A.md) — 第一句。\n");
    add(&f, "Empty summary", "- \n实际内容在下一行");
    // F10: the first non-empty line is an empty bullet, so the name is used.
    assert!(
        f.index()
            .contains("- [Empty summary](Empty-summary.md) — Empty summary\n")
    );
}

#[test]
fn d29_to_d34_collisions() {
    let f = Fixture::new();
    f.write("other.md", "not an entry");
    assert_eq!(add(&f, "a", "x").file, "a.md"); // D29
    // D30: a different name deriving the same file gets -2.
    assert_eq!(add(&f, "a ", "x").file, "a.md", "trimmed: same name");
    assert_eq!(add(&f, "a.", "x").file, "a-2.md");
    // D33/D34: never MEMORY.md.
    assert_eq!(add(&f, "MEMORY", "x").file, "MEMORY-2.md");
    assert_eq!(add(&f, ".MEMORY", "x").file, "MEMORY-3.md");
    // An unparseable file on disk is never overwritten.
    assert_eq!(f.read("other.md"), "not an entry");
    assert_eq!(add(&f, "other", "x").file, "other-2.md");
}

#[test]
fn d32_and_d36_d37_rename_rules() {
    let f = Fixture::new();
    add(&f, "A B", "x");
    assert_eq!(add(&f, "A-B", "y").file, "A-B-2.md"); // D32
    assert_eq!(f.index().lines().count(), 2);

    let g = Fixture::new();
    add(&g, "A B", "x");
    let out = g.store.rename("A B", "A-B", None).unwrap(); // D36
    assert_eq!(out.file, "A-B.md");
    assert_eq!(
        out.renamed_text("A B"),
        "Renamed \"A B\" → \"A-B\" (A-B.md)."
    );
    assert_eq!(g.index(), "- [A-B](A-B.md) — x\n");

    let h = Fixture::new();
    add(&h, "旧名字", "旧");
    add(&h, "B", "b");
    h.store.rename("旧名字", "新名字", None).unwrap(); // D37
    assert!(!h.exists("旧名字.md"));
    assert_eq!(h.index(), "- [新名字](新名字.md) — 旧\n- [B](B.md) — b\n");
}

#[test]
fn rename_onto_existing_name_fails_and_changes_nothing() {
    let f = Fixture::new();
    add(&f, "A", "a");
    add(&f, "B", "b");
    let before = f.tree();
    let err = f.store.rename("B", "A", None).unwrap_err();
    assert_eq!(err.to_string(), "Entry \"A\" already exists");
    assert_eq!(f.tree(), before);
}

/// PM-35 with a body whose derived description is empty (`- ` then the text on the next
/// line derives ""): pi-memory's `replaceEntry` falls back to the *current* description,
/// then to the name (`requested || derive(body) || current.description || name`), unlike
/// `addEntry` which goes straight to the name.
#[test]
fn pm35_replace_with_an_empty_derived_description_keeps_the_current_one() {
    let f = Fixture::new();
    add_desc(&f, "A", "the current description", "a");
    let replace = |body: &str| {
        f.store
            .replace(ReplaceRequest {
                reference: "A".into(),
                body: Some(body.into()),
                ..ReplaceRequest::default()
            })
            .unwrap()
    };
    replace("- \nthe real text is on the next line");
    assert_eq!(f.index(), "- [A](A.md) — the current description\n");
    // A file whose description is empty falls through to the name.
    f.write(
        "B.md",
        &entry_text("B", "", "user", "2026-10-01T00:00:00.000Z", "b"),
    );
    f.store
        .replace(ReplaceRequest {
            reference: "B".into(),
            body: Some("- \nnext line".into()),
            ..ReplaceRequest::default()
        })
        .unwrap();
    assert!(
        f.read("B.md").contains("\ndescription: B\n"),
        "{}",
        f.read("B.md")
    );
    // add, by contrast, uses the name at once.
    add(&f, "C", "- \nnext line");
    assert!(f.read("C.md").contains("\ndescription: C\n"));
}

#[test]
fn f13_replace_rederives_description_and_keeps_position() {
    let f = Fixture::new();
    f.write("MEMORY.md", "# Memory Index\n");
    add_desc(&f, "A", "curated", "old");
    add(&f, "B", "b");
    let out = f
        .store
        .replace(ReplaceRequest {
            reference: "A".into(),
            body: Some("新正文".into()),
            ..ReplaceRequest::default()
        })
        .unwrap();
    assert_eq!(out.replaced_text(), "Replaced \"A\" (A.md).");
    assert_eq!(
        f.index(),
        "# Memory Index\n- [A](A.md) — 新正文\n- [B](B.md) — b\n"
    );
}

#[test]
fn q_unknown_references() {
    let f = Fixture::new();
    let r = f.store.remove("nope", None).unwrap_err();
    assert_eq!(r.to_string(), "Entry \"nope\" not found");
    let r = f
        .store
        .replace(ReplaceRequest {
            reference: "nope".into(),
            body: Some("x".into()),
            ..ReplaceRequest::default()
        })
        .unwrap_err();
    assert_eq!(r.to_string(), "Entry \"nope\" not found");
}

#[test]
fn pm36_lookup_by_file_then_name() {
    let f = Fixture::new();
    add(&f, "x.md", "named like a file"); // file x.md.md
    add(&f, "X", "x"); // file X.md
    let by_file = f.store.read("X.md").unwrap().unwrap();
    assert_eq!(by_file.meta.name, "X");
    let by_name = f.store.read("x.md").unwrap().unwrap();
    assert_eq!(by_name.meta.name, "x.md");
}

#[test]
fn remove_deletes_file_and_line_only() {
    let f = Fixture::new();
    f.write("MEMORY.md", "# Memory Index\n\n## Project\n");
    add(&f, "A", "a");
    add(&f, "B", "b");
    let out = f.store.remove("A", None).unwrap();
    assert_eq!(out.text(), "Removed \"A\".");
    assert!(!f.exists("A.md"));
    assert_eq!(f.index(), "# Memory Index\n\n## Project\n- [B](B.md) — b\n");
}

#[test]
fn remove_without_index_line_leaves_index_byte_identical() {
    let f = Fixture::new();
    f.write(
        "A.md",
        &entry_text("A", "d", "user", "2026-10-01T00:00:00.000Z", "x"),
    );
    f.write("MEMORY.md", "# Memory Index\r\n<!-- nothing -->\r\n");
    f.store.remove("A", None).unwrap();
    assert_eq!(f.index(), "# Memory Index\r\n<!-- nothing -->\r\n");
}

#[test]
fn h4_h5_capacity_warning() {
    let f = Fixture::with(StoreOptions {
        index_max_lines: 1,
        ..options()
    });
    let a = add(&f, "A", "正文");
    assert_eq!(a.capacity_warning, None);
    let b = add(&f, "B", "正文");
    assert_eq!(
        b.saved_text(),
        "Saved \"B\" (B.md).\n\nMEMORY.md is over its limit: 2/1 lines, 46/25600 bytes. The write succeeded, but everything past the limit is dropped on the next load. Rewrite it now: keep one line per entry, merge or drop stale entries, and move detail into entry bodies rather than the index."
    );
    assert_eq!(f.index().lines().count(), 2);
}

#[test]
fn rebuild_index_vectors() {
    let f = Fixture::new();
    f.write(
        "b.md",
        &entry_text("B", "B 摘要", "user", "2026-10-02T00:00:00.000Z", "b"),
    );
    f.write(
        "a.md",
        &entry_text("A", "A 摘要", "user", "2026-10-01T00:00:00.000Z", "a"),
    );
    f.write("broken.md", "no frontmatter");
    let out = f.store.rebuild_index().unwrap();
    assert_eq!(out.text(), "Rebuilt index: 2 entries (2 header lines).");
    assert_eq!(
        f.index(),
        "# Memory Index\n\n- [A](a.md) — A 摘要\n- [B](b.md) — B 摘要\n"
    );
    assert_eq!(f.read("broken.md"), "no frontmatter");

    let g = Fixture::new();
    g.write(
        "a.md",
        &entry_text("A", "new", "user", "2026-10-01T00:00:00.000Z", "a"),
    );
    g.write(
        "MEMORY.md",
        "# Memory Index\n\n## Project\n- [Old](old.md) — 陈旧\n",
    );
    g.store.rebuild_index().unwrap();
    assert_eq!(
        g.index(),
        "# Memory Index\n\n## Project\n- [A](a.md) — new\n"
    );
    // The snapshot holds the pre-rebuild bytes.
    let backups: Vec<_> = std::fs::read_dir(g.dir().join(".backups"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(backups.len(), 1);
    assert!(backups[0].to_string_lossy().ends_with("-index"));
    assert_eq!(
        std::fs::read_to_string(backups[0].join("MEMORY.md")).unwrap(),
        "# Memory Index\n\n## Project\n- [Old](old.md) — 陈旧\n"
    );
}

#[test]
fn n8_n9_snapshots_hold_prior_state() {
    let f = Fixture::new();
    f.write("MEMORY.md", "# Memory Index\n");
    add(&f, "A", "the body of A");
    let snaps = |f: &Fixture| {
        let mut v: Vec<_> = std::fs::read_dir(f.dir().join(".backups"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        v.sort();
        v
    };
    let s = snaps(&f);
    assert_eq!(s.len(), 1, "N8: exactly one snapshot");
    assert_eq!(
        std::fs::read_to_string(s[0].join("MEMORY.md")).unwrap(),
        "# Memory Index\n"
    );
    f.store.remove("A", None).unwrap();
    let s = snaps(&f);
    let newest = s.last().unwrap();
    assert!(
        std::fs::read_to_string(newest.join("A.md"))
            .unwrap()
            .contains("the body of A"),
        "N9"
    );
}

#[test]
fn n6_backups_is_a_file_rejects_the_write() {
    let f = Fixture::new();
    f.write("MEMORY.md", "# Memory Index\n");
    f.write(".backups", "i am a file");
    let before = f.tree();
    let err = f
        .store
        .add(AddRequest {
            name: "A".into(),
            body: "x".into(),
            ..AddRequest::default()
        })
        .unwrap_err();
    assert!(matches!(err, StoreError::Snapshot(_)), "{err}");
    assert_eq!(f.tree(), before);
}

#[test]
fn q_list_and_search_texts() {
    let f = Fixture::new();
    assert_eq!(f.store.list().unwrap().len(), 0);
    f.write(
        "A.md",
        &entry_text(
            "A",
            "正文",
            "feedback",
            "2026-10-01T09:12:33.123Z",
            "Alpha body 正文里有 PostgreSQL",
        ),
    );
    f.write(
        "b.md",
        &entry_text("第一个", "第二", "user", "2026-10-02T00:00:00.000Z", "beta"),
    );
    let list = f.store.list().unwrap();
    assert_eq!(
        memory_index::list_line(&list[0].meta, &list[0].file),
        "- A (feedback, modified 2026-10-01T09:12:33.123Z) — 正文 [A.md]"
    );
    let hits = f.store.search("alpha").unwrap();
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].file, "A.md");
    assert_eq!(f.store.search("第二").unwrap()[0].file, "b.md");
    assert_eq!(f.store.search("postgresql").unwrap()[0].file, "A.md");
    assert!(f.store.search("nothing").unwrap().is_empty());
    assert_eq!(
        f.store.search("  ").unwrap_err().to_string(),
        "query is required for search"
    );
}

#[test]
fn versions_guard_replace_and_remove() {
    let f = Fixture::new();
    let a = add(&f, "A", "one");
    assert_eq!(a.version, f.store.read("A").unwrap().unwrap().version);
    // Someone else rewrites A.
    add(&f, "A", "two");
    let before = f.tree();
    let err = f
        .store
        .replace(ReplaceRequest {
            reference: "A".into(),
            body: Some("three".into()),
            expected_version: Some(a.version),
            ..ReplaceRequest::default()
        })
        .unwrap_err();
    assert_eq!(err.to_string(), "Memory conflict: stale version");
    let err = f.store.remove("A", Some(&a.version)).unwrap_err();
    assert_eq!(err.to_string(), "Memory conflict: stale version");
    assert_eq!(f.tree(), before);
    let current = f.store.read("A").unwrap().unwrap().version;
    f.store.remove("A", Some(&current)).unwrap();
}

#[test]
fn secrets_are_refused_without_echo() {
    let f = Fixture::new();
    add(&f, "Existing", "keep me");
    let before = f.tree();
    let token = "ghp_0123456789abcdefghijABCDEFGHIJ012345";
    let err = f
        .store
        .add(AddRequest {
            name: "GitHub".into(),
            body: format!("use token {token} for the API"),
            ..AddRequest::default()
        })
        .unwrap_err();
    let msg = err.to_string();
    assert!(msg.contains("GitHub token"), "{msg}");
    assert!(!msg.contains("ghp_"), "{msg}");
    assert!(!msg.contains("0123456789"), "{msg}");
    assert_eq!(f.tree(), before);
}

#[test]
fn oversized_body_is_refused() {
    let f = Fixture::new();
    let before = f.tree();
    let err = f
        .store
        .add(AddRequest {
            name: "Huge".into(),
            body: "x".repeat(10 * 1024 * 1024),
            ..AddRequest::default()
        })
        .unwrap_err();
    assert!(
        err.to_string()
            .starts_with("content is too large: 10485760 bytes")
    );
    assert_eq!(f.tree(), before);
}

#[test]
fn rejected_inputs_leave_disk_unchanged() {
    let f = Fixture::new();
    f.write("MEMORY.md", "# Memory Index\n\n<!-- mine -->\n");
    add(&f, "A", "a");
    let before = f.tree();
    let bad: Vec<(AddRequest, &str)> = vec![
        (
            AddRequest {
                name: "  ".into(),
                body: "x".into(),
                ..Default::default()
            },
            "name is required",
        ),
        (
            AddRequest {
                name: "A\n---\nfoo: bar".into(),
                body: "x".into(),
                ..Default::default()
            },
            "name must be a single line",
        ),
        (
            AddRequest {
                name: "A\rB".into(),
                body: "x".into(),
                ..Default::default()
            },
            "name must be a single line",
        ),
        (
            AddRequest {
                name: "A](x.md) — fake".into(),
                body: "x".into(),
                ..Default::default()
            },
            "name must not contain ']('",
        ),
        (
            AddRequest {
                name: "A".into(),
                description: Some("第一行\n第二行".into()),
                body: "x".into(),
                ..Default::default()
            },
            "description must be a single line",
        ),
        (
            AddRequest {
                name: "A".into(),
                body: "  \n ".into(),
                ..Default::default()
            },
            "body is required",
        ),
        (
            AddRequest {
                name: "New".into(),
                body: "x".into(),
                created: Some("昨天".into()),
                ..Default::default()
            },
            "created must be YYYY-MM-DD",
        ),
        (
            AddRequest {
                name: "New".into(),
                body: "x".into(),
                created: Some("2025-01-02T03:04:05.000Z".into()),
                ..Default::default()
            },
            "created must be YYYY-MM-DD",
        ),
    ];
    for (req, msg) in bad {
        let err = f.store.add(req).unwrap_err();
        assert_eq!(err.to_string(), msg);
        assert_eq!(f.tree(), before, "{msg}");
    }
}

#[test]
fn hostile_names_stay_inside_the_directory() {
    let f = Fixture::new();
    for name in [
        "../../x",
        "/etc/passwd",
        "..",
        "a/../../b",
        "C:\\Windows\\x",
        "\u{0}nul",
    ] {
        let out = f
            .store
            .add(AddRequest {
                name: name.into(),
                body: "x".into(),
                ..AddRequest::default()
            })
            .unwrap();
        assert!(
            !out.file.contains('/') && !out.file.starts_with('.'),
            "{name} -> {}",
            out.file
        );
        assert!(f.dir().join(&out.file).is_file());
    }
    // Nothing was created outside the memory directory.
    let outside: Vec<_> = std::fs::read_dir(f.sb.root())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(outside, vec!["mem"]);
}

#[test]
fn planted_symlinks_and_fifos_are_never_followed() {
    let f = Fixture::new();
    add(&f, "A", "a");
    let secret = f.sb.path("secret.md");
    std::fs::write(
        &secret,
        entry_text("Stolen", "d", "user", "2026-10-01T00:00:00.000Z", "outside"),
    )
    .unwrap();
    std::os::unix::fs::symlink(&secret, f.dir().join("link.md")).unwrap();
    rustix_mkfifo(f.dir().join("fifo.md").as_std_path());
    let names: Vec<_> = f
        .store
        .list()
        .unwrap()
        .iter()
        .map(|e| e.meta.name.clone())
        .collect();
    assert_eq!(names, vec!["A"]);
    // A name deriving to the symlink's file never writes through it.
    let out = add(&f, "link", "x");
    assert_eq!(out.file, "link-2.md");
    assert!(
        std::fs::read_to_string(&secret)
            .unwrap()
            .contains("outside")
    );
}

fn rustix_mkfifo(path: &std::path::Path) {
    let status = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .unwrap();
    assert!(status.success());
}

#[test]
fn entry_types_and_type_kept_on_replace() {
    let f = Fixture::new();
    f.store
        .add(AddRequest {
            name: "R".into(),
            body: "r".into(),
            entry_type: Some(EntryType::Reference),
            ..AddRequest::default()
        })
        .unwrap();
    f.store
        .replace(ReplaceRequest {
            reference: "R".into(),
            body: Some("r2".into()),
            ..ReplaceRequest::default()
        })
        .unwrap();
    assert_eq!(
        f.store.read("R").unwrap().unwrap().meta.entry_type,
        EntryType::Reference
    );
}

#[test]
fn manifest_cache_sees_external_edits_and_deletions() {
    let f = Fixture::new();
    add(&f, "A", "a");
    assert_eq!(f.store.list().unwrap().len(), 1);
    f.write(
        "B.md",
        &entry_text("B", "d", "user", "2027-01-01T00:00:00.000Z", "b"),
    );
    assert_eq!(f.store.list().unwrap().len(), 2);
    std::fs::remove_file(f.dir().join("A.md")).unwrap();
    let names: Vec<_> = f
        .store
        .list()
        .unwrap()
        .iter()
        .map(|e| e.meta.name.clone())
        .collect();
    assert_eq!(names, vec!["B"]);
    f.write("B.md", "now broken");
    assert!(f.store.list().unwrap().is_empty());
}

#[test]
fn pm43_unchanged_files_are_not_read_again() {
    let f = Fixture::new();
    for name in ["A", "B", "C"] {
        add(&f, name, "body");
    }
    let first = f.store.list().unwrap();
    let parsed = f.store.cache_stats().parsed;
    // Nothing changed: the listing is served from the cache, no file is parsed again,
    // and the very same entries come back.
    let again = f.store.list().unwrap();
    assert_eq!(f.store.cache_stats().parsed, parsed);
    assert!(
        first
            .iter()
            .zip(&again)
            .all(|(a, b)| std::sync::Arc::ptr_eq(a, b))
    );
    // One file changed on disk: exactly that file is parsed again.
    f.write(
        "B.md",
        &entry_text("B", "d", "user", "2027-01-01T00:00:00.000Z", "edited"),
    );
    let after = f.store.list().unwrap();
    assert_eq!(f.store.cache_stats().parsed, parsed + 1);
    assert!(after.iter().any(|e| e.body == "edited"));
}

/// `Store::hold` (pimem sync): while held, a write waits and fails with the busy error after
/// the lock timeout and `.lock` names the holder; after the hold is dropped, writes proceed.
#[test]
fn hold_keeps_writers_out_until_dropped() {
    let sb = testkit::Sandbox::new();
    let dir = sb.dir("mem");
    let store = memory_core::Store::new(
        dir.clone(),
        memory_core::StoreOptions {
            lock_timeout: std::time::Duration::from_millis(100),
            ..memory_core::StoreOptions::default()
        },
    );
    let hold = store.hold("sync").unwrap();
    let state = store.lock_state().unwrap();
    assert!(format!("{state:?}").contains("sync"), "{state:?}");
    let req = || memory_core::AddRequest {
        name: "held".into(),
        body: "written after the hold".into(),
        ..memory_core::AddRequest::default()
    };
    let err = store.add(req()).unwrap_err();
    assert!(matches!(err, memory_core::StoreError::Busy(_)), "{err}");
    assert!(!dir.join("held.md").exists());
    drop(hold);
    store.add(req()).unwrap();
    assert!(dir.join("held.md").exists());
}

/// PA-19, PA-44, PA-48: a person's edit of `MEMORY.md` is written only at the version shown,
/// never with a secret, and the old bytes are snapshotted first.
#[test]
fn replace_index_is_compare_and_swap_secret_checked_and_snapshotted() {
    let f = Fixture::new();
    let (empty, missing) = f.store.read_index_versioned().unwrap();
    assert_eq!(empty, "");
    assert_eq!(missing, memory_core::Version::of(b""));
    add_desc(&f, "A", "desc a", "body");
    let (text, version) = f.store.read_index_versioned().unwrap();
    assert_eq!(version, memory_core::Version::of(text.as_bytes()));
    // the version of the missing file is stale now
    let before = f.tree();
    let err = f
        .store
        .replace_index("# mine\n", Some(&missing))
        .unwrap_err();
    assert!(matches!(err, StoreError::Conflict { .. }), "{err}");
    assert_eq!(err.to_string(), "Memory conflict: stale version");
    let token = "ghp_0123456789abcdefghijABCDEFGHIJ012345";
    let err = f
        .store
        .replace_index(&format!("{text}{token}\n"), Some(&version))
        .unwrap_err();
    assert!(!err.to_string().contains("ghp_"), "{err}");
    assert_eq!(f.tree(), before, "refusals change nothing");
    let edited = format!("# Notes by hand\n{text}");
    let new = f.store.replace_index(&edited, Some(&version)).unwrap();
    assert_eq!(new, memory_core::Version::of(edited.as_bytes()));
    assert_eq!(f.index(), edited);
    let backups = f.dir().join(".backups");
    let snaps: Vec<_> = std::fs::read_dir(&backups).unwrap().collect();
    assert!(
        snaps.into_iter().any(
            |d| std::fs::read_to_string(d.unwrap().path().join("MEMORY.md"))
                .is_ok_and(|t| t == text)
        ),
        "the old index is in a snapshot"
    );
}
