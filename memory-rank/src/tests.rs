//! Unit tests of the tokenizer, stemmer and ranking.

use crate::tokenize::*;
use crate::words::*;
use crate::*;

fn doc<'a>(file: &'a str, name: &'a str, body: &'a str) -> LexicalDoc<'a> {
    LexicalDoc {
        file,
        name,
        description: "",
        body,
        modified: "2026-01-01T00:00:00.000Z",
    }
}

#[test]
fn word_lists_are_sorted_short_and_disjoint() {
    assert!(STOPWORDS.windows(2).all(|w| w[0] < w[1]));
    assert!(STOPWORDS.iter().all(|w| w.len() <= 7 && w.is_ascii()));
    assert!(GENERIC.windows(2).all(|w| w[0] < w[1]));
    assert!(!GENERIC.iter().any(|w| is_stopword(w)));
}

#[test]
fn code_identifiers_split_and_keep_the_whole() {
    assert_eq!(
        tokenize("getUserById"),
        ["get", "user", "id", "getuserbyid"]
    );
    assert_eq!(tokenize("user_ids"), ["user", "id", "user_ids"]);
    assert_eq!(tokenize("HTTPServer"), ["http", "server", "httpserver"]);
    assert_eq!(tokenize("Cargo.toml"), ["cargo", "toml", "cargo.toml"]);
    assert_eq!(tokenize("utf8"), ["utf", "8", "utf8"]);
    assert_eq!(
        tokenize("pre-commit hook"),
        ["pre", "commit", "pre-commit", "hook"]
    );
}

#[test]
fn trailing_punctuation_is_not_part_of_a_word() {
    assert_eq!(tokenize("Run tests."), ["run", "test"]);
    assert_eq!(tokenize("ab--cd ..xy"), ["ab", "cd", "xy"]);
}

#[test]
fn stemming_conflates_inflections() {
    for group in [
        &["cache", "caches", "caching", "cached"][..],
        &["test", "tests", "testing", "tested"],
        &["fail", "fails", "failing", "failed"],
        &["run", "runs", "running"],
        &["query", "queries"],
        &["fix", "fixes", "fixed"],
        &["use", "uses", "using", "used"],
    ] {
        let stems: Vec<Vec<String>> = group.iter().map(|w| tokenize(w)).collect();
        assert!(
            stems.windows(2).all(|w| w[0] == w[1]),
            "{group:?}: {stems:?}"
        );
    }
    assert_eq!(tokenize("installed"), ["install"]);
    assert_eq!(tokenize("status"), ["status"]);
    assert_eq!(tokenize("string"), ["string"]);
    assert_eq!(tokenize("need"), ["need"]);
}

#[test]
fn chinese_becomes_bigrams_and_unigrams() {
    assert_eq!(
        tokenize("数据库超时"),
        ["数", "数据", "据", "据库", "库", "库超", "超", "超时", "时"]
    );
    // Mixed scripts split at the script change; stop characters and particle-spanning
    // bigrams dropped (`my` is an English stopword).
    assert_eq!(
        tokenize("MySQL的超时"),
        ["sql", "mysql", "超", "超时", "时"]
    );
}

#[test]
fn format_characters_are_ignored_and_case_is_folded() {
    assert_eq!(tokenize("Pass\u{200B}word"), ["password"]);
    assert_eq!(tokenize("ÉCOLE Straße"), ["école", "straße"]);
}

#[test]
fn stopword_only_queries_select_nothing() {
    let index = LexicalIndex::build([doc("a.md", "What is this", "it is what it is")]);
    assert!(tokenize("what is it? is it this?").is_empty());
    assert!(
        index
            .rank_with("what is it", 3, Cutoff::ANY, &|_| false)
            .is_empty()
    );
    assert!(index.rank("", 3, &|_| false).is_empty());
}

#[test]
fn name_outweighs_description_outweighs_body() {
    let index = LexicalIndex::build([
        LexicalDoc {
            file: "body.md",
            name: "alpha",
            description: "beta",
            body: "postgres",
            modified: "2026-01-01",
        },
        LexicalDoc {
            file: "desc.md",
            name: "alpha",
            description: "postgres",
            body: "beta",
            modified: "2026-01-01",
        },
        LexicalDoc {
            file: "name.md",
            name: "postgres",
            description: "alpha",
            body: "beta",
            modified: "2026-01-01",
        },
    ]);
    let files: Vec<String> = index
        .rank_with("postgres", 3, Cutoff::ANY, &|_| false)
        .into_iter()
        .map(|h| h.file)
        .collect();
    assert_eq!(files, ["name.md", "desc.md", "body.md"]);
}

#[test]
fn ties_break_by_modified_desc_then_file_asc() {
    let mut docs = vec![
        doc("b.md", "deploy", "x"),
        doc("a.md", "deploy", "x"),
        doc("c.md", "deploy", "x"),
    ];
    docs[2].modified = "2027-01-01T00:00:00.000Z";
    let index = LexicalIndex::build(docs);
    let files: Vec<String> = index
        .rank_with("deploy", 3, Cutoff::ANY, &|_| false)
        .into_iter()
        .map(|h| h.file)
        .collect();
    assert_eq!(files, ["c.md", "a.md", "b.md"]);
}

#[test]
fn the_minimum_score_separates_related_from_unrelated_even_with_one_entry() {
    let index = LexicalIndex::build([LexicalDoc {
        file: "SSH-port-on-staging.md",
        name: "SSH port on staging",
        description: "staging SSH listens on 2222, not 22.",
        body: "staging SSH listens on 2222, not 22. Use `ssh -p 2222 deploy@staging`.",
        modified: "2026-01-01T00:00:00.000Z",
    }]);
    let hits = index.rank("how do I ssh into the staging box?", 3, &|_| false);
    assert_eq!(hits.len(), 1, "{hits:?}");
    assert!(hits[0].score >= MIN_SCORE);
    assert!(
        index
            .rank("write a haiku about autumn leaves", 3, &|_| false)
            .is_empty()
    );
    // Sharing one ordinary body word is not enough.
    assert!(
        index
            .rank("deploy the frontend to production", 3, &|_| false)
            .is_empty()
    );
}

#[test]
fn remove_and_reinsert_restore_the_same_ranking() {
    let docs = [
        doc("a.md", "Postgres pool size", "max 20 connections per pod"),
        doc("b.md", "Redis cache TTL", "keys expire after 300 seconds"),
        doc(
            "c.md",
            "Deploy with helm",
            "helm upgrade --install api ./chart",
        ),
    ];
    let fresh = LexicalIndex::build(docs);
    let mut edited = LexicalIndex::build(docs);
    assert!(edited.remove("b.md"));
    assert!(!edited.remove("b.md"));
    assert!(!edited.contains("b.md"));
    edited.insert(doc("z.md", "temp", "cache pool helm"));
    edited.insert(docs[1]);
    assert!(edited.remove("z.md"));
    assert_eq!(edited.len(), 3);
    for q in ["redis cache", "pool connections", "helm deploy", "cache"] {
        assert_eq!(
            fresh.rank_with(q, 3, Cutoff::ANY, &|_| false),
            edited.rank_with(q, 3, Cutoff::ANY, &|_| false),
            "{q}"
        );
    }
}

#[test]
fn excluded_files_are_never_returned() {
    let index = LexicalIndex::build([
        doc("a.md", "redis", "redis"),
        doc("b.md", "redis cache", "redis"),
    ]);
    let hits = index.rank_with("redis", 3, Cutoff::ANY, &|f| f == "b.md");
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].file, "a.md");
}

fn files(hits: Vec<LexicalHit>) -> Vec<String> {
    hits.into_iter().map(|h| h.file).collect()
}

#[test]
fn typos_are_corrected_to_the_closest_indexed_word() {
    let index = LexicalIndex::build([
        doc("int.md", "Integration tests", "run against a real postgres"),
        doc("roll.md", "Rollback", "kubectl argo rollouts undo"),
    ]);
    assert_eq!(
        files(index.rank("how to run the intergration tests", 3, &|_| false)),
        ["int.md"]
    );
    assert_eq!(
        files(index.rank_with("rollbak the pricing service", 3, Cutoff::ANY, &|_| false)),
        ["roll.md"]
    );
    let off = Options {
        typos: false,
        ..Options::default()
    };
    let strict = LexicalIndex::build_with(off, [doc("roll.md", "Rollback", "undo")]);
    assert!(
        strict
            .rank_with("rollbak", 3, Cutoff::ANY, &|_| false)
            .is_empty()
    );
    // Short words are never "corrected": `cat` is not a typo of `cap`.
    let caps = LexicalIndex::build([doc("cap.md", "Rate cap", "cap at 3x")]);
    assert!(
        caps.rank_with("my cat", 3, Cutoff::ANY, &|_| false)
            .is_empty()
    );
}

#[test]
fn edit_distance_counts_transpositions_once() {
    use crate::expand::distance_within;
    assert_eq!(distance_within("pyhton", "python", 1), Some(1));
    assert_eq!(distance_within("rollbak", "rollback", 1), Some(1));
    assert_eq!(distance_within("stagging", "staging", 2), Some(1));
    assert_eq!(distance_within("kitten", "sitting", 2), None);
    assert_eq!(distance_within("abc", "abc", 0), Some(0));
}

#[test]
fn synonyms_and_translations_count_once_per_query_word() {
    let index = LexicalIndex::build([
        doc("k8s.md", "Kubernetes contexts", "always pass --context"),
        doc("db.md", "数据库连接超时排查", "先查 docker 容器"),
        doc("deploy.md", "Deploying with Helm", "helm upgrade"),
    ]);
    assert_eq!(
        files(index.rank("which k8s context is staging?", 3, &|_| false)),
        ["k8s.md"]
    );
    // English prompt, Chinese memory; Chinese prompt, English memory.
    assert_eq!(
        files(index.rank("database timeout locally", 3, &|_| false)),
        ["db.md"]
    );
    assert_eq!(
        files(index.rank("用 helm 怎么部署", 3, &|_| false)),
        ["deploy.md"]
    );
    // A document matching a word and its synonym scores like one matching the word.
    let both = LexicalIndex::build([doc("a.md", "database", "db"), doc("b.md", "database", "x")]);
    let hits = both.rank_with("database", 2, Cutoff::ANY, &|_| false);
    assert_eq!(hits[0].terms, 1);
    assert_eq!(hits[1].terms, 1);
}

#[test]
fn the_gate_decides_once_and_later_documents_need_a_share_of_the_best_score() {
    let index = LexicalIndex::build([
        doc("ssh.md", "Staging SSH port", "staging listens on 2222"),
        doc(
            "k8s.md",
            "Kubernetes namespaces",
            "ledger-staging namespace",
        ),
        doc("noise.md", "Release process", "tag and push"),
    ]);
    let hits = index.rank("ssh into staging", 3, &|_| false);
    assert_eq!(files(hits.clone()), ["ssh.md", "k8s.md"]);
    assert!(hits[1].score >= MIN_SHARE * hits[0].score);
    // Excluding the best document leaves the gate open for the others.
    assert_eq!(
        files(index.rank("ssh into staging", 3, &|f| f == "ssh.md")),
        ["k8s.md"]
    );
    assert!(index.rank("a poem about autumn", 3, &|_| false).is_empty());
}

#[test]
fn coverage_is_the_share_of_known_query_words() {
    let index = LexicalIndex::build([doc("a.md", "Redis cache keys", "versioned keys")]);
    assert_eq!(index.query_coverage("redis keys"), 1.0);
    assert_eq!(index.query_coverage("redis haiku"), 0.5);
    assert_eq!(index.query_coverage("the"), 0.0);
}

#[test]
fn encoding_round_trips_and_damage_is_refused() {
    let mut index = LexicalIndex::build([
        doc("a.md", "Postgres pool size", "max 20 connections per pod"),
        doc("b.md", "Redis cache TTL", "keys expire after 300 seconds"),
        doc("c.md", "数据库连接超时", "先查 docker"),
    ]);
    index.remove("b.md");
    let bytes = index.encode();
    let back = LexicalIndex::decode(&bytes, Options::default()).unwrap();
    assert_eq!(back.encode(), bytes);
    for q in ["postgres pool", "数据库 超时", "redis"] {
        assert_eq!(
            back.rank_with(q, 3, Cutoff::ANY, &|_| false),
            index.rank_with(q, 3, Cutoff::ANY, &|_| false),
            "{q}"
        );
    }
    // The freed slot is reused like in the original.
    let mut a = index.clone();
    let mut b = back;
    a.insert(doc("d.md", "Deploy", "helm"));
    b.insert(doc("d.md", "Deploy", "helm"));
    assert_eq!(a.encode(), b.encode());
    // Another tokenizer, another format, truncation, any flipped byte: refused, no panic.
    let none = Options::default().with_stemmer(Stemmer::None);
    assert_eq!(
        LexicalIndex::decode(&bytes, none).unwrap_err(),
        DecodeError::Tokenizer
    );
    assert_eq!(
        LexicalIndex::decode(b"not an index at all", Options::default()).unwrap_err(),
        DecodeError::Format
    );
    for cut in 16..bytes.len() {
        assert!(LexicalIndex::decode(&bytes[..cut], Options::default()).is_err());
    }
    for i in 16..bytes.len() {
        let mut bad = bytes.clone();
        bad[i] ^= 0x55;
        let _ = LexicalIndex::decode(&bad, Options::default());
    }
}

mod properties {
    use proptest::prelude::*;

    use super::super::*;

    const WORDS: &[&str] = &[
        "redis",
        "cache",
        "caching",
        "postgres",
        "pool",
        "deploy",
        "helm",
        "test",
        "tests",
        "getUserById",
        "user_id",
        "Cargo.toml",
        "数据库",
        "超时",
        "端口",
        "staging",
        "ssh",
        "the",
        "of",
        "ÉCOLE",
        "2222",
        "v2",
    ];

    fn text() -> impl Strategy<Value = String> {
        prop::collection::vec(
            prop_oneof![
                4 => prop::sample::select(WORDS).prop_map(str::to_owned),
                1 => "\\PC{0,8}",
            ],
            0..8,
        )
        .prop_map(|w| w.join(" "))
    }

    fn docs() -> impl Strategy<Value = Vec<(String, String, String, String, String)>> {
        prop::collection::vec(
            (
                text(),
                text(),
                text(),
                prop::sample::select(&["2026-01", "2026-02", "2026-03"][..]),
            ),
            0..12,
        )
        .prop_map(|rows| {
            rows.into_iter()
                .enumerate()
                .map(|(i, (n, d, b, m))| (format!("f{i:02}.md"), n, d, b, m.to_owned()))
                .collect()
        })
    }

    fn build(rows: &[(String, String, String, String, String)]) -> LexicalIndex {
        LexicalIndex::build(
            rows.iter()
                .map(|(file, name, description, body, modified)| LexicalDoc {
                    file,
                    name,
                    description,
                    body,
                    modified,
                }),
        )
    }

    proptest! {
        /// Ranking depends on the set of documents only: building in reverse order, or
        /// inserting everything, removing some and re-inserting them, or encoding and
        /// decoding, ranks identically;
        /// and it never returns an excluded file or a file twice.
        #[test]
        fn ranking_is_deterministic_and_respects_exclusion(
            rows in docs(),
            query in text(),
            k in 0usize..6,
            excluded in prop::collection::vec(0usize..12, 0..4),
        ) {
            let excluded: Vec<String> = excluded.iter().map(|i| format!("f{i:02}.md")).collect();
            let exclude = |f: &str| excluded.iter().any(|e| e == f);
            let a = build(&rows);
            let mut reversed = rows.clone();
            reversed.reverse();
            let b = build(&reversed);
            let mut c = build(&rows);
            for (file, ..) in rows.iter().step_by(2) {
                prop_assert!(c.remove(file));
            }
            for (file, name, description, body, modified) in rows.iter().step_by(2) {
                c.insert(LexicalDoc { file, name, description, body, modified });
            }
            let d = LexicalIndex::decode(&c.encode(), c.options()).unwrap();
            for cutoff in [Cutoff::ANY, Cutoff::SELECT] {
                let ra = a.rank_with(&query, k, cutoff, &exclude);
                prop_assert_eq!(&ra, &b.rank_with(&query, k, cutoff, &exclude));
                prop_assert_eq!(&ra, &c.rank_with(&query, k, cutoff, &exclude));
                prop_assert_eq!(&ra, &d.rank_with(&query, k, cutoff, &exclude));
                prop_assert!(ra.len() <= k);
                for (i, hit) in ra.iter().enumerate() {
                    prop_assert!(!exclude(&hit.file));
                    prop_assert!(hit.score > 0.0);
                    prop_assert!(i == 0 || hit.score <= ra[i - 1].score);
                    prop_assert!(!ra[..i].iter().any(|h| h.file == hit.file));
                }
            }
        }

        /// The tokenizer never panics and never yields an empty token.
        #[test]
        fn tokens_are_non_empty(s in "\\PC{0,64}") {
            for t in tokenize(&s) {
                prop_assert!(!t.is_empty());
            }
        }
    }
}
