//! `merge_index`, git's merge driver for `MEMORY.md`: random add/replace/remove sequences on
//! two branches, written with the store's own index edits, merge to the union model; fixed
//! cases as insta snapshots.
#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;

use memory_index::*;
use proptest::prelude::*;

/// One write a branch makes, as the store makes it (`upsert_index_line`/`remove_index_line`).
#[derive(Debug, Clone)]
enum Op {
    /// Add a memory: `shared` picks a file name both branches may add, else a branch-own one.
    Add { shared: bool, n: u8, desc: u8 },
    /// Rewrite the description of the `pick`-th current line.
    Replace { pick: u8, desc: u8 },
    /// Remove the `pick`-th current line.
    Remove { pick: u8 },
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (any::<bool>(), 0u8..6, 0u8..3).prop_map(|(shared, n, desc)| Op::Add { shared, n, desc }),
        2 => (any::<u8>(), 0u8..3).prop_map(|(pick, desc)| Op::Replace { pick, desc }),
        2 => any::<u8>().prop_map(|pick| Op::Remove { pick }),
    ]
}

type Model = BTreeMap<String, IndexLine>;

fn model_of(text: &str) -> Model {
    let mut out = Model::new();
    for e in parse_index(text).entries {
        assert!(
            out.insert(e.line.file.clone(), e.line).is_none(),
            "duplicate line in {text:?}"
        );
    }
    out
}

/// Applies `ops` to `text` the way the store writes the index.
fn apply(text: &str, branch: &str, ops: &[Op]) -> String {
    let mut text = text.to_owned();
    for op in ops {
        let files: Vec<String> = parse_index(&text)
            .entries
            .into_iter()
            .map(|e| e.line.file)
            .collect();
        match *op {
            Op::Add { shared, n, desc } => {
                let stem = if shared {
                    format!("shared-{n}")
                } else {
                    format!("{branch}-{n}")
                };
                let line = IndexLine::new(&stem, format!("{stem}.md"), format!("{branch} d{desc}"));
                text = upsert_index_line(&text, &line);
            }
            Op::Replace { pick, desc } if !files.is_empty() => {
                let file = &files[pick as usize % files.len()];
                let name = file.trim_end_matches(".md");
                let line = IndexLine::new(name, file.as_str(), format!("{branch} r{desc}"));
                text = replace_index_line(&text, file, &line);
            }
            Op::Remove { pick } if !files.is_empty() => {
                let file = &files[pick as usize % files.len()];
                text = remove_index_line(&text, file).unwrap();
            }
            _ => {}
        }
    }
    text
}

fn base_index() -> impl Strategy<Value = String> {
    (0usize..6, any::<bool>()).prop_map(|(n, trailer)| {
        let mut text = String::from("# Memory Index\n\nTeam notes.\n");
        for i in 0..n {
            text.push_str(&format_index_line(
                &format!("base-{i}"),
                &format!("base-{i}.md"),
                "base",
            ));
            text.push('\n');
        }
        if trailer {
            text.push_str("\n<!-- kept below the entries -->\n");
        }
        text
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    /// The union model: per file, the side that changed it wins; changed the same way on both
    /// sides is taken once; changed differently is a reported conflict that keeps ours (theirs
    /// when ours removed it). Nothing is duplicated, every unrelated change survives, and ours'
    /// surviving lines keep their order.
    #[test]
    fn two_branches_merge_to_the_union_model(
        base in base_index(),
        ours_ops in proptest::collection::vec(op(), 0..12),
        theirs_ops in proptest::collection::vec(op(), 0..12),
    ) {
        let ours = apply(&base, "ours", &ours_ops);
        let theirs = apply(&base, "theirs", &theirs_ops);
        let (mb, mo, mt) = (model_of(&base), model_of(&ours), model_of(&theirs));

        let merged = merge_index(&base, &ours, &theirs);
        let got = model_of(&merged.text);

        let mut want = Model::new();
        let mut conflicts = Vec::new();
        let files: std::collections::BTreeSet<&String> =
            mb.keys().chain(mo.keys()).chain(mt.keys()).collect();
        for file in files {
            let (b, o, t) = (mb.get(file), mo.get(file), mt.get(file));
            let v = if o == t || t == b {
                o
            } else if o == b {
                t
            } else {
                conflicts.push(file.clone());
                o.or(t)
            };
            if let Some(v) = v {
                want.insert(file.clone(), v.clone());
            }
        }
        prop_assert_eq!(&got, &want);
        let reported: Vec<String> = merged
            .conflicts
            .iter()
            .map(|c| match c {
                IndexConflict::Entry { file, .. } => file.clone(),
                IndexConflict::Frame => "<frame>".into(),
            })
            .collect();
        prop_assert_eq!(reported, conflicts);

        // Ours' lines that survive keep ours' relative order.
        let order: Vec<String> = parse_index(&merged.text).entries.into_iter().map(|e| e.line.file).collect();
        let positions: Vec<usize> = parse_index(&ours)
            .entries
            .iter()
            .filter_map(|e| order.iter().position(|o| *o == e.line.file))
            .collect();
        prop_assert!(positions.windows(2).all(|w| w[0] < w[1]), "order {order:?}");

        // The frame (title, comments) is untouched, and the text is what the store writes.
        prop_assert!(merged.text.starts_with("# Memory Index\n\nTeam notes.\n"));
        prop_assert_eq!(base.contains("<!-- kept"), merged.text.contains("<!-- kept"));
        prop_assert!(merged.text.ends_with('\n'));
    }

    /// Merging a side with itself or with the unchanged base is that side, byte for byte.
    #[test]
    fn trivial_merges_are_identities(
        base in base_index(),
        ops in proptest::collection::vec(op(), 0..12),
    ) {
        let ours = apply(&base, "ours", &ops);
        prop_assert_eq!(merge_index(&base, &ours, &ours).text, ours.clone());
        prop_assert_eq!(merge_index(&base, &ours, &base).text, ours.clone());
        prop_assert_eq!(model_of(&merge_index(&base, &base, &ours).text), model_of(&ours));
        prop_assert!(merge_index(&base, &base, &ours).conflicts.is_empty());
    }
}

const BASE: &str = "# Memory Index\n\nTeam conventions, newest last.\n\n- [Use pnpm](Use-pnpm.md) — pnpm, never npm\n- [Real DB in tests](Real-DB-in-tests.md) — integration tests hit PostgreSQL\n\n<!-- groups below are hand-written -->\n";

fn render(m: &IndexMerge) -> String {
    format!("{}--- conflicts: {:?}\n", m.text, m.conflicts)
}

#[test]
fn both_sides_add_different_memories() {
    let ours = upsert_index_line(
        BASE,
        &IndexLine::new("Deploy on Fridays", "Deploy-on-Fridays.md", "never"),
    );
    let theirs = upsert_index_line(
        BASE,
        &IndexLine::new("Answer in Chinese", "Answer-in-Chinese.md", "用中文回答"),
    );
    let theirs = upsert_index_line(
        &theirs,
        &IndexLine::new(
            "Release checklist",
            "Release-checklist.md",
            "tag, changelog, npm",
        ),
    );
    insta::assert_snapshot!(render(&merge_index(BASE, &ours, &theirs)));
}

#[test]
fn replace_remove_and_same_entry_conflict() {
    let ours = replace_index_line(
        BASE,
        "Use-pnpm.md",
        &IndexLine::new("Use pnpm", "Use-pnpm.md", "pnpm 9, never npm or yarn"),
    );
    let ours = upsert_index_line(
        &ours,
        &IndexLine::new("Both added", "Both-added.md", "same line"),
    );
    let theirs = replace_index_line(
        BASE,
        "Use-pnpm.md",
        &IndexLine::new("Use pnpm", "Use-pnpm.md", "pnpm workspaces"),
    );
    let theirs = remove_index_line(&theirs, "Real-DB-in-tests.md").unwrap();
    let theirs = upsert_index_line(
        &theirs,
        &IndexLine::new("Both added", "Both-added.md", "same line"),
    );
    insta::assert_snapshot!(render(&merge_index(BASE, &ours, &theirs)));
}

#[test]
fn theirs_changed_the_frame() {
    let ours = upsert_index_line(BASE, &IndexLine::new("Ours", "Ours.md", "ours"));
    let theirs = BASE.replace(
        "Team conventions, newest last.",
        "Team conventions (read first).",
    );
    let theirs = remove_index_line(&theirs, "Use-pnpm.md").unwrap();
    insta::assert_snapshot!(render(&merge_index(BASE, &ours, &theirs)));
}

#[test]
fn edited_on_one_side_removed_on_the_other_keeps_the_edit() {
    let ours = remove_index_line(BASE, "Use-pnpm.md").unwrap();
    let theirs = replace_index_line(
        BASE,
        "Use-pnpm.md",
        &IndexLine::new("Use pnpm", "Use-pnpm.md", "edited"),
    );
    let merged = merge_index(BASE, &ours, &theirs);
    assert_eq!(merged.conflicts.len(), 1);
    assert!(
        merged.text.contains("- [Use pnpm](Use-pnpm.md) — edited\n"),
        "{}",
        merged.text
    );
    insta::assert_snapshot!(render(&merged));
}
