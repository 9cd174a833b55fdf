//! The labelled retrieval set and its metrics, shared by memory-agent's retrieval test (the
//! in-repo floors) and `cargo xtask bench retrieval` (the tables in BENCHMARKS.md).
//!
//! The set lives in `memory-agent/tests/all/retrieval/`: one JSON file per synthetic
//! project (`ledger.json`, `atlas.json`, `orbit.json`: ≥ 150 memories each, written the way a
//! coding agent writes them, and prompts labelled with their 1–3 relevant memories and a
//! [`Category`]) plus `unrelated.json` (prompts no memory of any project is about). Every
//! prompt belongs to one [`Half`], decided by a hash of its text: ranking changes are tuned
//! on [`Half::Tuning`] only and judged on [`Half::HeldOut`].
//!
//! Metrics, per half and category: recall@1 and recall@3 (relevant memories among the first
//! k surfaced, over min(k, relevant)), MRR (1 / rank of the first relevant memory surfaced,
//! 0 when none), and for unrelated prompts the false-surfacing rate (prompt × project pairs
//! that surface anything).

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

use camino::Utf8Path;
use memory_core::{AddRequest, Clock, EntryType, Store, StoreOptions, StoredEntry};
use serde_json::Value;

/// What kind of prompt a labelled query is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Category {
    /// Says what the user wants in their own words (most prompts).
    Paraphrase,
    /// Contains a misspelling of the word that matters.
    Typo,
    /// Quotes code: identifiers, paths, commands, error strings.
    Identifier,
    /// Chinese, or Chinese mixed with English.
    Chinese,
    /// No memory is about it: it should surface nothing.
    Unrelated,
}

impl Category {
    /// Every category, in report order.
    pub const ALL: [Category; 5] = [
        Category::Paraphrase,
        Category::Typo,
        Category::Identifier,
        Category::Chinese,
        Category::Unrelated,
    ];

    /// The name used in the data files and reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Category::Paraphrase => "paraphrase",
            Category::Typo => "typo",
            Category::Identifier => "identifier",
            Category::Chinese => "chinese",
            Category::Unrelated => "unrelated",
        }
    }

    fn parse(s: &str) -> Category {
        Category::ALL
            .into_iter()
            .find(|c| c.as_str() == s)
            .unwrap_or_else(|| panic!("unknown category {s:?}"))
    }
}

/// Which half of the set a prompt is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Half {
    /// Changes may be tuned on these prompts.
    Tuning,
    /// Never looked at while tuning; the figures that count.
    HeldOut,
}

impl Half {
    /// Both halves, tuning first.
    pub const BOTH: [Half; 2] = [Half::Tuning, Half::HeldOut];

    /// The name used in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Half::Tuning => "tuning",
            Half::HeldOut => "held-out",
        }
    }
}

/// The half of a prompt: the parity of the FNV-1a hash of its text (stable across runs and
/// unrelated to the order or topic of the files).
pub fn half_of(prompt: &str) -> Half {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in prompt.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    if (h >> 17) & 1 == 0 {
        Half::Tuning
    } else {
        Half::HeldOut
    }
}

/// One memory as the data file holds it.
#[derive(Debug, Clone)]
pub struct Memory {
    /// Entry name (unique within its project).
    pub name: String,
    /// Entry type.
    pub entry_type: EntryType,
    /// One-line description.
    pub description: String,
    /// Body.
    pub body: String,
}

/// One labelled prompt.
#[derive(Debug, Clone)]
pub struct Query {
    /// The prompt.
    pub query: String,
    /// Names of the relevant memories (1–3).
    pub relevant: Vec<String>,
    /// Its kind.
    pub category: Category,
}

/// One synthetic project: its memories and labelled prompts.
#[derive(Debug, Clone)]
pub struct Project {
    /// Short name (`ledger`, `atlas`, `orbit`).
    pub name: String,
    /// Memories.
    pub memories: Vec<Memory>,
    /// Labelled prompts.
    pub queries: Vec<Query>,
}

/// The whole set.
#[derive(Debug, Clone)]
pub struct Dataset {
    /// The projects.
    pub projects: Vec<Project>,
    /// Prompts no memory of any project is about.
    pub unrelated: Vec<String>,
}

/// Where the data files are.
pub fn data_dir() -> &'static Utf8Path {
    Utf8Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../memory-agent/tests/all/retrieval"
    ))
}

fn read_json(name: &str) -> Value {
    let path = data_dir().join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn str_of<'v>(v: &'v Value, key: &str) -> &'v str {
    v[key]
        .as_str()
        .unwrap_or_else(|| panic!("{key:?} must be a string in {v}"))
}

impl Dataset {
    /// The project files and the unrelated prompts.
    pub fn load() -> Dataset {
        let projects = ["ledger", "atlas", "orbit"]
            .into_iter()
            .map(|name| {
                let v = read_json(&format!("{name}.json"));
                let memories = v["memories"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|m| Memory {
                        name: str_of(m, "name").to_owned(),
                        entry_type: str_of(m, "type").parse().unwrap(),
                        description: str_of(m, "description").to_owned(),
                        body: str_of(m, "body").to_owned(),
                    })
                    .collect();
                let queries = v["queries"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|q| Query {
                        query: str_of(q, "query").to_owned(),
                        relevant: q["relevant"]
                            .as_array()
                            .unwrap()
                            .iter()
                            .map(|r| r.as_str().unwrap().to_owned())
                            .collect(),
                        category: Category::parse(str_of(q, "category")),
                    })
                    .collect();
                Project {
                    name: name.to_owned(),
                    memories,
                    queries,
                }
            })
            .collect();
        let unrelated = read_json("unrelated.json")["prompts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p.as_str().unwrap().to_owned())
            .collect();
        Dataset {
            projects,
            unrelated,
        }
    }
}

/// A project saved through a real [`Store`], and the map from entry files to names.
pub struct Corpus {
    /// The project.
    pub project: Project,
    /// The store holding its memories.
    pub store: Store,
    /// The store's listing after saving every memory.
    pub entries: Vec<Arc<StoredEntry>>,
    /// Entry file → memory name.
    pub name_of: HashMap<String, String>,
}

impl Corpus {
    /// Saves every memory of `project` into a store at `dir`, in a fixed shuffled order one
    /// minute apart (so `modified` is unrelated to topic).
    pub fn build(project: &Project, dir: &Utf8Path) -> Corpus {
        let minute = Arc::new(AtomicI64::new(0));
        let tick = Arc::clone(&minute);
        let clock = Clock::from_fn(move || {
            let m = tick.load(Ordering::SeqCst);
            jiff::Timestamp::from_second(1_790_000_000 + m * 60).unwrap()
        });
        let store = Store::new(
            dir,
            StoreOptions {
                clock,
                ..StoreOptions::default()
            },
        );
        let n = project.memories.len();
        let step = coprime_step(n);
        for i in 0..n {
            let m = &project.memories[(i * step) % n];
            minute.store(i as i64, Ordering::SeqCst);
            store
                .add(AddRequest {
                    name: m.name.clone(),
                    description: Some(m.description.clone()),
                    entry_type: Some(m.entry_type),
                    body: m.body.clone(),
                    created: None,
                })
                .unwrap();
        }
        let entries = store.list().unwrap();
        assert_eq!(entries.len(), n, "{}: every memory listed", project.name);
        let name_of = entries
            .iter()
            .map(|e| (e.file.clone(), e.meta.name.clone()))
            .collect();
        Corpus {
            project: project.clone(),
            store,
            entries,
            name_of,
        }
    }

    /// The names of the `n` newest memories, newest first: the "newest N" baseline that
    /// needs no ranking.
    pub fn newest(&self, n: usize) -> Vec<String> {
        self.entries
            .iter()
            .rev()
            .take(n)
            .map(|e| e.meta.name.clone())
            .collect()
    }

    /// The memory names of `files`, in order.
    pub fn names(&self, files: &[String]) -> Vec<String> {
        files
            .iter()
            .map(|f| self.name_of[f.as_str()].clone())
            .collect()
    }
}

/// A step coprime with `n` near `n / 2.3`: `i * step % n` is a permutation unrelated to the
/// order of the file.
fn coprime_step(n: usize) -> usize {
    let gcd = |mut a: usize, mut b: usize| {
        while b != 0 {
            (a, b) = (b, a % b);
        }
        a
    };
    (n * 10 / 23..n.max(2))
        .find(|&s| s > 0 && gcd(s, n) == 1)
        .unwrap_or(1)
}

/// Sums of the per-prompt metrics of one cell (half × category).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Score {
    /// Prompts (for unrelated: prompt × project pairs).
    pub n: usize,
    /// Sum of recall@1.
    pub recall1: f64,
    /// Sum of recall@3.
    pub recall3: f64,
    /// Sum of reciprocal ranks.
    pub rr: f64,
    /// Prompts that surfaced anything.
    pub surfaced: usize,
    /// Prompts with at least one relevant memory anywhere in what they surfaced.
    pub hits: usize,
}

impl Score {
    fn mean(&self, sum: f64) -> f64 {
        if self.n == 0 {
            0.0
        } else {
            sum / self.n as f64
        }
    }
    /// Mean recall@1.
    pub fn recall_at_1(&self) -> f64 {
        self.mean(self.recall1)
    }
    /// Mean recall@3.
    pub fn recall_at_3(&self) -> f64 {
        self.mean(self.recall3)
    }
    /// Mean reciprocal rank.
    pub fn mrr(&self) -> f64 {
        self.mean(self.rr)
    }
    /// Share of prompts that surfaced anything (for unrelated prompts: false surfacing).
    pub fn surfaced_rate(&self) -> f64 {
        self.mean(self.surfaced as f64)
    }
    /// Share of prompts with a relevant memory anywhere in what they surfaced.
    pub fn hit_rate(&self) -> f64 {
        self.mean(self.hits as f64)
    }

    fn add(&mut self, other: &Score) {
        self.n += other.n;
        self.recall1 += other.recall1;
        self.recall3 += other.recall3;
        self.rr += other.rr;
        self.surfaced += other.surfaced;
        self.hits += other.hits;
    }
}

/// The metrics of one prompt given the names surfaced, best first.
pub fn score_one(picked: &[String], relevant: &[String]) -> Score {
    let within = |k: usize| {
        let hits = relevant
            .iter()
            .filter(|r| picked.iter().take(k).any(|p| p == *r))
            .count();
        hits as f64 / relevant.len().min(k) as f64
    };
    let rank = picked.iter().position(|p| relevant.contains(p));
    Score {
        n: 1,
        recall1: within(1),
        recall3: within(3),
        rr: rank.map_or(0.0, |r| 1.0 / (r + 1) as f64),
        surfaced: usize::from(!picked.is_empty()),
        hits: usize::from(rank.is_some()),
    }
}

/// A labelled prompt that missed a relevant memory in the top 3:
/// `(project, prompt, wanted, surfaced)`.
pub type Miss = (String, String, Vec<String>, Vec<String>);

/// Metrics per half and category.
#[derive(Debug, Clone, Default)]
pub struct Report {
    cells: BTreeMap<(Half, Category), Score>,
    /// Labelled prompts that missed a relevant memory in the top 3, per half.
    pub misses: BTreeMap<Half, Vec<Miss>>,
    /// Unrelated prompts that surfaced something: `(half, project, prompt, surfaced)`.
    pub noise: Vec<(Half, String, String, Vec<String>)>,
}

impl Report {
    /// One cell.
    pub fn cell(&self, half: Half, category: Category) -> Score {
        self.cells
            .get(&(half, category))
            .copied()
            .unwrap_or_default()
    }

    /// Every labelled prompt of a half (all categories but unrelated).
    pub fn labelled(&self, half: Half) -> Score {
        let mut s = Score::default();
        for c in Category::ALL {
            if c != Category::Unrelated {
                s.add(&self.cell(half, c));
            }
        }
        s
    }

    /// Share of unrelated prompt × project pairs that surfaced anything, in a half.
    pub fn false_surfacing(&self, half: Half) -> f64 {
        self.cell(half, Category::Unrelated).surfaced_rate()
    }

    /// The per-category table, both halves side by side, as Markdown.
    pub fn markdown(&self) -> String {
        let mut out = String::from(
            "| prompts | tuning n | recall@1 | recall@3 | MRR | held-out n | recall@1 | recall@3 | MRR |\n|---|---|---|---|---|---|---|---|---|\n",
        );
        let mut line = |label: &str, cells: [Score; 2]| {
            let _ = write!(out, "| {label} ");
            for s in cells {
                let _ = write!(
                    out,
                    "| {} | {:.3} | {:.3} | {:.3} ",
                    s.n,
                    s.recall_at_1(),
                    s.recall_at_3(),
                    s.mrr()
                );
            }
            out.push_str("|\n");
        };
        for c in Category::ALL {
            if c != Category::Unrelated {
                line(c.as_str(), Half::BOTH.map(|h| self.cell(h, c)));
            }
        }
        line("**all labelled**", Half::BOTH.map(|h| self.labelled(h)));
        let u = Half::BOTH.map(|h| self.cell(h, Category::Unrelated));
        let _ = writeln!(
            out,
            "| unrelated: false surfacing | {} | **{:.1} %** | | | {} | **{:.1} %** | | |",
            u[0].n,
            100.0 * u[0].surfaced_rate(),
            u[1].n,
            100.0 * u[1].surfaced_rate()
        );
        out
    }
}

/// Runs every labelled prompt of each corpus and every unrelated prompt against each corpus
/// through `surface(corpus index, corpus, prompt)`, which returns the surfaced memory names,
/// best first.
pub fn evaluate(
    dataset: &Dataset,
    corpora: &[Corpus],
    mut surface: impl FnMut(usize, &Corpus, &str) -> Vec<String>,
) -> Report {
    let mut report = Report::default();
    for (i, corpus) in corpora.iter().enumerate() {
        for q in &corpus.project.queries {
            let picked = surface(i, corpus, &q.query);
            let s = score_one(&picked, &q.relevant);
            let half = half_of(&q.query);
            report.cells.entry((half, q.category)).or_default().add(&s);
            if s.recall3 < 1.0 {
                report.misses.entry(half).or_default().push((
                    corpus.project.name.clone(),
                    q.query.clone(),
                    q.relevant.clone(),
                    picked,
                ));
            }
        }
        for prompt in &dataset.unrelated {
            let picked = surface(i, corpus, prompt);
            let half = half_of(prompt);
            let s = Score {
                n: 1,
                surfaced: usize::from(!picked.is_empty()),
                ..Score::default()
            };
            report
                .cells
                .entry((half, Category::Unrelated))
                .or_default()
                .add(&s);
            if !picked.is_empty() {
                report
                    .noise
                    .push((half, corpus.project.name.clone(), prompt.clone(), picked));
            }
        }
    }
    report
}

/// One near-duplicate memory of `duplicates.json`: the same fact as `duplicate_of`, saved
/// again in other words.
#[derive(Debug, Clone)]
pub struct Duplicate {
    /// The project it belongs to.
    pub project: String,
    /// The existing memory it repeats.
    pub duplicate_of: String,
    /// The new memory.
    pub memory: Memory,
}

/// The near-duplicates of `duplicates.json`.
pub fn duplicates() -> Vec<Duplicate> {
    read_json("duplicates.json")["duplicates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| Duplicate {
            project: str_of(d, "project").to_owned(),
            duplicate_of: str_of(d, "duplicate_of").to_owned(),
            memory: Memory {
                name: str_of(d, "name").to_owned(),
                entry_type: EntryType::Feedback,
                description: str_of(d, "description").to_owned(),
                body: str_of(d, "body").to_owned(),
            },
        })
        .collect()
}

fn lexical_index(project: &Project) -> memory_rank::LexicalIndex {
    memory_rank::LexicalIndex::build(project.memories.iter().map(|m| memory_rank::LexicalDoc {
        file: &m.name,
        name: &m.name,
        description: &m.description,
        body: &m.body,
        modified: "",
    }))
}

/// The similarity scores behind the duplicate threshold: for each near-duplicate, the
/// similarity of its most similar memory and whether that is the one it repeats; for each
/// memory of the set, the similarity of the most similar *other* memory (distinct
/// memories, related ones included: the warning must spare them).
pub fn duplicate_similarities(data: &Dataset) -> (Vec<(f64, bool)>, Vec<f64>) {
    let mut dups = Vec::new();
    let mut distinct = Vec::new();
    for project in &data.projects {
        let index = lexical_index(project);
        for d in duplicates().iter().filter(|d| d.project == project.name) {
            let doc = memory_rank::LexicalDoc {
                file: "new memory",
                name: &d.memory.name,
                description: &d.memory.description,
                body: &d.memory.body,
                modified: "",
            };
            let top = index.similar(doc, 1).into_iter().next();
            dups.push(top.map_or((0.0, false), |(f, s)| (s, f == d.duplicate_of)));
        }
        for m in &project.memories {
            let doc = memory_rank::LexicalDoc {
                file: &m.name,
                name: &m.name,
                description: &m.description,
                body: &m.body,
                modified: "",
            };
            distinct.push(index.similar(doc, 1).first().map_or(0.0, |(_, s)| *s));
        }
    }
    (dups, distinct)
}

/// At `threshold`: (near-duplicates flagged with the right memory, near-duplicates,
/// distinct memories flagged, distinct memories).
pub fn duplicate_scores(data: &Dataset, threshold: f64) -> (usize, usize, usize, usize) {
    let (dups, distinct) = duplicate_similarities(data);
    let caught = dups
        .iter()
        .filter(|(s, right)| *right && *s >= threshold)
        .count();
    let flagged = distinct.iter().filter(|s| **s >= threshold).count();
    (caught, dups.len(), flagged, distinct.len())
}
