//! `retrieval`: quality of lexical surfacing on the labelled set (`testkit::retrieval`, data
//! in `memory-agent/tests/all/retrieval/`): recall@1/@3, MRR and false surfacing per
//! category, for the tuning half and the held-out half.
//!
//! Rows: the default `Surfacer` (what a session's turn does), the ranking without its cutoff
//! (what the hybrid selector shows a model), the no-model baseline "the 3 newest memories".
//! `RETRIEVAL_MISSES=1` prints the tuning half's misses and noise to stderr (never the
//! held-out half's: it is not looked at while tuning).

use anyhow::Result;
use memory_agent::Surfacer;
use memory_agent::surfacing::HYBRID_CANDIDATES;
use memory_rank::{Cutoff, LexicalDoc, LexicalIndex, Options, Stemmer};
use testkit::retrieval::{Corpus, Dataset, Half, Report, evaluate};

fn index_of(corpus: &Corpus, opts: Options) -> LexicalIndex {
    LexicalIndex::build_with(
        opts,
        corpus.entries.iter().map(|e| LexicalDoc {
            file: &e.file,
            name: &e.meta.name,
            description: &e.meta.description,
            body: &e.body,
            modified: &e.meta.modified,
        }),
    )
}

fn summary(label: &str, r: &Report) -> String {
    let t = r.labelled(Half::Tuning);
    let h = r.labelled(Half::HeldOut);
    format!(
        "| {label} | {:.3} | {:.3} | {:.3} | {:.1} % | {:.3} | {:.3} | {:.3} | {:.1} % |",
        t.recall_at_1(),
        t.recall_at_3(),
        t.mrr(),
        100.0 * r.false_surfacing(Half::Tuning),
        h.recall_at_1(),
        h.recall_at_3(),
        h.mrr(),
        100.0 * r.false_surfacing(Half::HeldOut),
    )
}

const SUMMARY_HEADER: &str = "| ranking | tuning recall@1 | recall@3 | MRR | false surfacing | held-out recall@1 | recall@3 | MRR | false surfacing |\n|---|---|---|---|---|---|---|---|---|";

/// Entry point of the group.
pub(crate) fn run() -> Result<()> {
    let data = Dataset::load();
    let tmp = tempfile::tempdir_in(std::env::temp_dir())?;
    let corpora: Vec<Corpus> = data
        .projects
        .iter()
        .map(|p| Ok(Corpus::build(p, &crate::utf8(&tmp.path().join(&p.name))?)))
        .collect::<Result<_>>()?;
    let labelled: usize = data.projects.iter().map(|p| p.queries.len()).sum();
    let memories: usize = data.projects.iter().map(|p| p.memories.len()).sum();
    println!(
        "{} projects, {memories} memories, {labelled} labelled prompts, {} unrelated prompts (each run against every project).\n",
        corpora.len(),
        data.unrelated.len()
    );

    // The default configuration, through the real surfacer (a fresh session per prompt).
    let mut surfacers: Vec<Surfacer> = corpora.iter().map(|_| Surfacer::default()).collect();
    let default = evaluate(&data, &corpora, |i, c, prompt| {
        let s = &mut surfacers[i];
        s.reset();
        let out = s
            .surface(&c.store, prompt)
            .map(|o| o.files)
            .unwrap_or_default();
        c.names(&out)
    });
    println!("Default surfacing (lexical, `maxFiles` 3), per category:\n");
    println!("{}", default.markdown());

    let ranked = |opts: Options, k: usize, cutoff: Cutoff| {
        let indexes: Vec<LexicalIndex> = corpora.iter().map(|c| index_of(c, opts)).collect();
        evaluate(&data, &corpora, |i, c, prompt| {
            let hits = indexes[i].rank_with(prompt, k, cutoff, &|_| false);
            c.names(&hits.into_iter().map(|h| h.file).collect::<Vec<_>>())
        })
    };
    let defaults = Options::default();
    let no_cutoff = ranked(defaults, 3, Cutoff::ANY);
    let pool = ranked(defaults, HYBRID_CANDIDATES, Cutoff::ANY);
    let previous = ranked(
        Options::baseline(),
        3,
        Cutoff {
            min_score: 0.4,
            min_score_single_term: 0.8,
            min_share: 0.0,
        },
    );
    let newest = evaluate(&data, &corpora, |_, c, _| c.newest(3));
    println!("{SUMMARY_HEADER}");
    println!("{}", summary("**default (lexical selector)**", &default));
    println!("{}", summary("ranking without cutoff, top 3", &no_cutoff));
    println!(
        "{}",
        summary("newest 3 memories (no-model baseline)", &newest)
    );
    println!(
        "{}",
        summary(
            "before issue 17 (light stemmer, no expansion, per-document cutoff 0.4 / 0.8)",
            &previous
        )
    );
    println!("\nAblations: the default with one part switched (same cutoff):\n");
    println!("{SUMMARY_HEADER}");
    let with = |change: fn(&mut Options)| {
        let mut o = defaults;
        change(&mut o);
        o
    };
    let ablations: [(&str, Options); 5] = [
        ("default", defaults),
        (
            "without synonyms and translations",
            with(|o| o.synonyms = false),
        ),
        ("without typo correction", with(|o| o.typos = false)),
        (
            "with feedback expansion (off by default)",
            with(|o| o.feedback = true),
        ),
        ("no stemming", defaults.with_stemmer(Stemmer::None)),
    ];
    for (label, opts) in ablations {
        println!("{}", summary(label, &ranked(opts, 3, Cutoff::SELECT)));
    }
    println!(
        "\nThe gate's trade-off (default ranking; `min_share` {}):\n",
        Cutoff::SELECT.min_share
    );
    println!("{SUMMARY_HEADER}");
    for (min_score, single) in [
        (0.3, 0.7),
        (0.3, 0.8),
        (0.3, 0.9),
        (0.3, 1.0),
        (0.4, 0.9),
        (0.5, 1.0),
    ] {
        let cutoff = Cutoff {
            min_score,
            min_score_single_term: single,
            ..Cutoff::SELECT
        };
        println!(
            "{}",
            summary(
                &format!("min_score {min_score}, single word {single}"),
                &ranked(defaults, 3, cutoff)
            )
        );
    }
    println!(
        "\nHybrid candidates (ranking without cutoff, top {HYBRID_CANDIDATES}): a relevant memory among them for {:.3} (tuning) / {:.3} (held-out) of labelled prompts.",
        pool.labelled(Half::Tuning).hit_rate(),
        pool.labelled(Half::HeldOut).hit_rate()
    );

    duplicate_table(&data);

    if std::env::var_os("RETRIEVAL_MISSES").is_some() {
        for (project, prompt, wanted, got) in
            default.misses.get(&Half::Tuning).into_iter().flatten()
        {
            eprintln!("MISS [{project}] {prompt:?}\n   want {wanted:?}\n   got  {got:?}");
        }
        for (half, project, prompt, got) in &default.noise {
            if *half == Half::Tuning {
                eprintln!("NOISE [{project}] {prompt:?} -> {got:?}");
            }
        }
    }
    Ok(())
}

/// The duplicate warning's threshold: near-duplicates caught vs distinct memories flagged.
fn duplicate_table(data: &Dataset) {
    let (dups, distinct) = testkit::retrieval::duplicate_similarities(data);
    println!(
        "\nDuplicate warning ({} near-duplicates of `duplicates.json`, {} distinct memories compared with the most similar other memory of their project):\n",
        dups.len(),
        distinct.len()
    );
    println!(
        "| threshold | near-duplicates caught (right memory) | distinct memories flagged |\n|---|---|---|"
    );
    for t in [0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6] {
        let (caught, n, flagged, m) = testkit::retrieval::duplicate_scores(data, t);
        let mark = if (t - memory_agent::live::DUPLICATE_THRESHOLD).abs() < 1e-9 {
            " (default)"
        } else {
            ""
        };
        println!("| {t}{mark} | {caught}/{n} | {flagged}/{m} |");
    }
    let mut sims: Vec<f64> = distinct;
    sims.sort_by(|a, b| b.partial_cmp(a).unwrap_or(std::cmp::Ordering::Equal));
    let caught_min = dups
        .iter()
        .filter(|(_, right)| *right)
        .map(|(s, _)| *s)
        .fold(f64::INFINITY, f64::min);
    println!(
        "\nHighest similarity between two distinct memories: {:.3}; lowest of a near-duplicate to the memory it repeats: {:.3}.",
        sims.first().copied().unwrap_or(0.0),
        caught_min
    );
}
