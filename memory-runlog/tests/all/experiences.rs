//! The experience rules (PX-12..PX-15, VECTORS PX-V6..PX-V8): table tests, the tool, and a
//! property test of random combine sequences against a brute-force model.

use std::collections::{BTreeMap, BTreeSet};

use memory_runlog::texts::EN;
use memory_runlog::{
    Event, ExpNo, ExperienceError, Interval, NewExperience, RunLog, RunNo, Writer,
};
use proptest::prelude::*;
use serde_json::json;

use crate::common::{assistant, at, dir, prompt, writer};

fn iv(lo: u32, hi: u32) -> Interval {
    Interval {
        lo: RunNo(lo),
        hi: RunNo(hi),
    }
}

/// Records `ended.len()` runs; run i settles (confirmed end) when `ended[i]`, else its session
/// ends under it (recovery_required, no end time).
fn runs(w: &mut Writer, ended: &[bool]) {
    for (i, e) in ended.iter().enumerate() {
        let t = 1000 * (i as i64 + 1);
        let mut b = vec![
            at(t, Event::RunStart),
            at(t + 1, prompt(&format!("run {i}"))),
        ];
        if *e {
            b.push(at(t + 2, assistant("ok", "stop")));
            b.push(at(t + 500, Event::Settled { aborted: false }));
        }
        w.record(&b).unwrap();
        if !*e {
            w.start_session(&crate::common::session(&format!("after {i}")), t + 600)
                .unwrap();
        }
    }
}

fn new(
    title: &str,
    sources: Vec<Interval>,
    children: Vec<u32>,
    parent: Option<u32>,
) -> NewExperience {
    NewExperience {
        title: title.into(),
        summary: format!("{title} learned"),
        sources,
        children: children.into_iter().map(ExpNo).collect(),
        parent: parent.map(ExpNo),
    }
}

#[test]
fn px_v6_to_v8_cycles_duplicate_parents_and_unknown_ends() {
    let (_sb, d) = dir();
    let mut w = writer(&d, "s");
    runs(&mut w, &[true, false, true, true]);
    let log = w.log_mut();
    let e1 = log
        .create_experience(&new("one", vec![iv(1, 1)], vec![], None), 1)
        .unwrap();
    let e2 = log
        .create_experience(&new("two", vec![], vec![], Some(1)), 2)
        .unwrap();
    assert_eq!((e1, e2), (ExpNo(1), ExpNo(2)));
    // PX-V6: E1 under E2 while E2 is under E1
    let e = log.attach(ExpNo(1), ExpNo(2), 3).unwrap_err();
    assert_eq!(
        e.to_string(),
        "E1 cannot go under E2: E2 is inside E1 already (a cycle)"
    );
    // PX-V6 at creation: a new experience whose parent is one of its children (or inside one)
    let before = log.experiences().unwrap();
    for parent in [1, 2] {
        let e = log
            .create_experience(&new("loop", vec![], vec![1], Some(parent)), 3)
            .unwrap_err();
        assert!(matches!(e, ExperienceError::Cycle { .. }), "{e}");
    }
    assert_eq!(
        log.experiences().unwrap(),
        before,
        "a refused create changes nothing"
    );
    // PX-V7: the same relation twice
    let e3 = log
        .create_experience(&new("three", vec![], vec![], None), 4)
        .unwrap();
    log.attach(e3, ExpNo(1), 5).unwrap();
    let e = log.attach(e3, ExpNo(1), 6).unwrap_err();
    assert_eq!(
        e.to_string(),
        "E3 is already under E1 (duplicate parent relation)"
    );
    let e = log.attach(e3, ExpNo(2), 6).unwrap_err();
    assert!(matches!(e, ExperienceError::SecondParent { .. }), "{e}");
    // PX-V8: a source without a confirmed end leaves the range's end unknown
    let e4 = log
        .create_experience(&new("four", vec![iv(2, 2)], vec![], None), 7)
        .unwrap();
    let row = log.experience(e4).unwrap();
    assert_eq!(
        (row.range.start, row.range.end, row.range.runs),
        (Some(2000), None, 1)
    );
    log.add_sources(e4, &[iv(3, 4)], 8).unwrap();
    assert_eq!(log.experience(e4).unwrap().range.end, None);
    let one = log.experience(ExpNo(1)).unwrap();
    assert_eq!((one.range.start, one.range.end), (Some(1000), Some(1500)));
    // overlapping intervals
    let e = log.add_sources(ExpNo(1), &[iv(3, 3)], 9).unwrap_err();
    assert_eq!(e.to_string(), "R03 overlaps R03-R04, a source of E4");
    let e = log.add_sources(ExpNo(2), &[iv(7, 8)], 9).unwrap_err();
    assert_eq!(e.to_string(), "no run R07 in this project's run log");
    // merging roots carries sources and children along
    log.merge(ExpNo(1), &[e4], 10).unwrap();
    let one = log.experience(ExpNo(1)).unwrap();
    assert_eq!(one.sources, [iv(1, 1), iv(2, 2), iv(3, 4)]);
    assert_eq!(one.merged, [ExpNo(4)]);
    assert_eq!((one.range.runs, one.range.end), (4, None));
    let e = log.experience(ExpNo(4)).unwrap_err();
    assert_eq!(e.to_string(), "E4 was merged into E1; use E1");
    let e = log.merge(ExpNo(2), &[ExpNo(3)], 11).unwrap_err();
    assert_eq!(
        e.to_string(),
        "E2 is not a root experience (its parent is E1); only roots merge"
    );
    let tree = memory_runlog::texts::experience_tree(&EN, &log.experiences().unwrap());
    assert_eq!(tree, "E1 one [R01, R02, R03-R04]\n  E2 two\n  E3 three");
}

#[test]
fn the_tool_runs_each_action_and_refusals_change_nothing() {
    let (_sb, d) = dir();
    let mut w = writer(&d, "s");
    runs(&mut w, &[true, true, true]);
    let log = w.log_mut();
    let mut call = |args: serde_json::Value| memory_runlog::tool::execute(log, &args, 50, &EN);
    let out = call(
        json!({"action": "create", "title": "Deploys", "summary": "make ship", "runs": ["R01-R02"]}),
    );
    assert_eq!(
        (out.text.as_str(), out.is_error),
        ("Created E1 (sources R01-R02).", false)
    );
    let out =
        call(json!({"action": "create", "title": "Infra", "children": ["E1"], "runs": "R03"}));
    assert_eq!(out.text, "Created E2 (sources R03; children E1).");
    let out = call(json!({"action": "create", "title": "Again", "runs": ["R02"]}));
    assert_eq!(
        (out.text.as_str(), out.is_error),
        ("R02 overlaps R01-R02, a source of E1", true)
    );
    let out = call(json!({"action": "attach", "id": "E2", "parent": "E1"}));
    assert!(out.is_error && out.text.contains("a cycle"), "{}", out.text);
    let out = call(json!({"action": "detach", "id": "E1"}));
    assert_eq!(out.text, "E1 is a root experience again.");
    let out = call(json!({"action": "merge", "into": "E2", "from": ["E1"]}));
    assert_eq!(out.text, "Merged E1 into E2.");
    let out = call(json!({"action": "update", "id": "E2", "summary": "Deploy with make ship."}));
    assert_eq!(out.text, "Updated E2.");
    let out = call(json!({"action": "show", "id": "E2"}));
    assert!(
        out.text.starts_with(
            "E2 · Infra\nParent: none\nChildren: none\nSources: R01-R02, R03\nTime range: "
        ),
        "{}",
        out.text
    );
    let out = call(json!({"action": "create", "title": ""}));
    assert_eq!(
        (out.text.as_str(), out.is_error),
        ("title is required", true)
    );
    let out = call(json!({"action": "fly"}));
    assert!(out.is_error && out.text.starts_with("unknown action \"fly\""));
    let out = call(json!({"action": "add_runs", "id": "E9", "runs": ["R01"]}));
    assert_eq!(out.text, "no experience E9 in this project's run log");
    let out = call(json!({"action": "show", "id": "R02"}));
    assert!(out.text.contains("Experience: E2"), "{}", out.text);
}

// ------------------------------------------------------------------ property test

#[derive(Debug, Clone)]
enum Op {
    Create {
        sources: Vec<(u32, u32)>,
        children: Vec<u32>,
        parent: Option<u32>,
    },
    Attach {
        child: u32,
        parent: u32,
    },
    Detach {
        child: u32,
    },
    AddRuns {
        exp: u32,
        sources: Vec<(u32, u32)>,
    },
    Merge {
        into: u32,
        from: Vec<u32>,
    },
}

const RUNS: u32 = 8;

fn interval() -> impl Strategy<Value = (u32, u32)> {
    (1..=RUNS + 1, 0..3u32).prop_map(|(lo, len)| (lo, lo + len))
}

fn op() -> impl Strategy<Value = Op> {
    let e = 1..7u32;
    prop_oneof![
        (
            prop::collection::vec(interval(), 0..3),
            prop::collection::vec(e.clone(), 0..3),
            prop::option::of(e.clone())
        )
            .prop_map(|(sources, children, parent)| Op::Create {
                sources,
                children,
                parent
            }),
        (e.clone(), e.clone()).prop_map(|(child, parent)| Op::Attach { child, parent }),
        e.clone().prop_map(|child| Op::Detach { child }),
        (e.clone(), prop::collection::vec(interval(), 1..3))
            .prop_map(|(exp, sources)| Op::AddRuns { exp, sources }),
        (e.clone(), prop::collection::vec(e, 1..3))
            .prop_map(|(into, from)| Op::Merge { into, from }),
    ]
}

/// One experience of the model: parent, merged into, runs.
type ModelExp = (Option<u32>, Option<u32>, BTreeSet<u32>);

/// The brute-force model: sets of run numbers, parent pointers, merge marks.
#[derive(Debug, Default, Clone)]
struct Model {
    exps: BTreeMap<u32, ModelExp>,
}

impl Model {
    fn live(&self, n: u32) -> Result<(), &'static str> {
        match self.exps.get(&n) {
            None => Err("missing"),
            Some((_, Some(_), _)) => Err("merged"),
            _ => Ok(()),
        }
    }
    fn taken(&self) -> BTreeSet<u32> {
        self.exps
            .values()
            .filter(|e| e.1.is_none())
            .flat_map(|e| e.2.iter().copied())
            .collect()
    }
    fn check_sources(&self, sources: &[(u32, u32)]) -> Result<BTreeSet<u32>, &'static str> {
        let mut mine = BTreeSet::new();
        for (lo, hi) in sources {
            for r in *lo..=*hi {
                if r > RUNS {
                    return Err("norun");
                }
            }
        }
        let taken = self.taken();
        for (lo, hi) in sources {
            if (*lo..=*hi).any(|r| mine.contains(&r)) {
                return Err("invalid");
            }
            if (*lo..=*hi).any(|r| taken.contains(&r)) {
                return Err("overlap");
            }
            mine.extend(*lo..=*hi);
        }
        Ok(mine)
    }
    /// `a` is `n` or above it.
    fn above(&self, a: u32, n: u32) -> bool {
        let mut cur = Some(n);
        while let Some(c) = cur {
            if c == a {
                return true;
            }
            cur = self.exps.get(&c).and_then(|e| e.0);
        }
        false
    }
    fn apply(&mut self, op: &Op) -> Result<(), &'static str> {
        match op {
            Op::Create {
                sources,
                children,
                parent,
            } => {
                let runs = self.check_sources(sources)?;
                let mut seen = BTreeSet::new();
                for c in children {
                    self.live(*c)?;
                    if !seen.insert(*c) {
                        return Err("invalid");
                    }
                    if self.exps[c].0.is_some() {
                        return Err("second");
                    }
                }
                if let Some(p) = parent {
                    self.live(*p)?;
                    if children.iter().any(|c| self.above(*c, *p)) {
                        return Err("cycle");
                    }
                }
                let n = self.exps.keys().max().map_or(1, |m| m + 1);
                self.exps.insert(n, (*parent, None, runs));
                for c in children {
                    self.exps.get_mut(c).unwrap().0 = Some(n);
                }
                Ok(())
            }
            Op::Attach { child, parent } => {
                self.live(*child)?;
                self.live(*parent)?;
                if child == parent {
                    return Err("self");
                }
                match self.exps[child].0 {
                    Some(p) if p == *parent => return Err("duplicate"),
                    Some(_) => return Err("second"),
                    None => {}
                }
                if self.above(*child, *parent) {
                    return Err("cycle");
                }
                self.exps.get_mut(child).unwrap().0 = Some(*parent);
                Ok(())
            }
            Op::Detach { child } => {
                self.live(*child)?;
                if self.exps[child].0.is_none() {
                    return Err("invalid");
                }
                self.exps.get_mut(child).unwrap().0 = None;
                Ok(())
            }
            Op::AddRuns { exp, sources } => {
                self.live(*exp)?;
                let runs = self.check_sources(sources)?;
                self.exps.get_mut(exp).unwrap().2.extend(runs);
                Ok(())
            }
            Op::Merge { into, from } => {
                self.live(*into)?;
                if self.exps[into].0.is_some() {
                    return Err("notroot");
                }
                let mut seen = BTreeSet::new();
                for f in from {
                    self.live(*f)?;
                    if f == into {
                        return Err("self");
                    }
                    if !seen.insert(*f) {
                        return Err("invalid");
                    }
                    if self.exps[f].0.is_some() {
                        return Err("notroot");
                    }
                }
                for f in from {
                    let runs = std::mem::take(&mut self.exps.get_mut(f).unwrap().2);
                    self.exps.get_mut(into).unwrap().2.extend(runs);
                    for e in self.exps.values_mut() {
                        if e.0 == Some(*f) {
                            e.0 = Some(*into);
                        }
                    }
                    self.exps.get_mut(f).unwrap().1 = Some(*into);
                }
                Ok(())
            }
        }
    }
    fn subtree_runs(&self, n: u32) -> BTreeSet<u32> {
        self.exps
            .iter()
            .filter(|(m, e)| e.1.is_none() && self.above(n, **m))
            .flat_map(|(_, e)| e.2.iter().copied())
            .collect()
    }
}

fn kind(e: &ExperienceError) -> &'static str {
    match e {
        ExperienceError::Cycle { .. } => "cycle",
        ExperienceError::DuplicateParent { .. } => "duplicate",
        ExperienceError::SecondParent { .. } => "second",
        ExperienceError::Overlap { .. } => "overlap",
        ExperienceError::NoRun(_) => "norun",
        ExperienceError::NoExperience(_) => "missing",
        ExperienceError::Merged(..) => "merged",
        ExperienceError::NotRoot { .. } => "notroot",
        ExperienceError::SelfCombine(_) => "self",
        ExperienceError::Invalid(_) => "invalid",
        _ => "other",
    }
}

fn apply(log: &mut RunLog, op: &Op) -> Result<(), &'static str> {
    let ivs = |s: &[(u32, u32)]| s.iter().map(|(a, b)| iv(*a, *b)).collect::<Vec<_>>();
    let r = match op {
        Op::Create {
            sources,
            children,
            parent,
        } => log
            .create_experience(
                &NewExperience {
                    title: "t".into(),
                    summary: String::new(),
                    sources: ivs(sources),
                    children: children.iter().map(|c| ExpNo(*c)).collect(),
                    parent: parent.map(ExpNo),
                },
                1,
            )
            .map(|_| ()),
        Op::Attach { child, parent } => log.attach(ExpNo(*child), ExpNo(*parent), 1),
        Op::Detach { child } => log.detach(ExpNo(*child), 1),
        Op::AddRuns { exp, sources } => log.add_sources(ExpNo(*exp), &ivs(sources), 1),
        Op::Merge { into, from } => log.merge(
            ExpNo(*into),
            &from.iter().map(|f| ExpNo(*f)).collect::<Vec<_>>(),
            1,
        ),
    };
    r.map_err(|e| kind(&e))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, .. ProptestConfig::default() })]

    #[test]
    fn random_combine_sequences_keep_the_rules_and_match_the_model(
        ended in prop::collection::vec(any::<bool>(), RUNS as usize),
        ops in prop::collection::vec(op(), 1..14),
    ) {
        let (_sb, d) = dir();
        let mut w = writer(&d, "s");
        runs(&mut w, &ended);
        let log = w.log_mut();
        let mut model = Model::default();
        let times: BTreeMap<u32, (i64, Option<i64>)> = (1..=RUNS)
            .map(|r| {
                let t = 1000 * r as i64;
                (r, (t, ended[r as usize - 1].then_some(t + 500)))
            })
            .collect();
        for op in &ops {
            let want = model.apply(op);
            let got = apply(log, op);
            prop_assert_eq!(got, want, "op {:?}", op);
            let rows = log.experiences().unwrap();
            // at most one parent is structural; no cycles: every chain reaches a root
            for r in &rows {
                let mut cur = r.parent;
                let mut steps = 0;
                while let Some(p) = cur {
                    steps += 1;
                    prop_assert!(steps <= rows.len(), "cycle through {}", r.number);
                    cur = rows.iter().find(|x| x.number == p).and_then(|x| x.parent);
                }
            }
            // no overlapping intervals across live experiences
            let mut seen = BTreeSet::new();
            for r in &rows {
                for s in &r.sources {
                    for run in s.runs() {
                        prop_assert!(seen.insert(run), "{} twice", run);
                    }
                }
            }
            // same graph and inherited ranges as the brute-force model
            let live: Vec<u32> = model.exps.iter().filter(|e| e.1.1.is_none()).map(|e| *e.0).collect();
            prop_assert_eq!(rows.iter().map(|r| r.number.0).collect::<BTreeSet<_>>(), live.iter().copied().collect());
            for r in &rows {
                let m = &model.exps[&r.number.0];
                prop_assert_eq!(r.parent.map(|p| p.0), m.0);
                let own: BTreeSet<u32> = r.sources.iter().flat_map(|s| s.runs()).map(|x| x.0).collect();
                prop_assert_eq!(&own, &m.2);
                let sub = model.subtree_runs(r.number.0);
                let start = sub.iter().map(|x| times[x].0).min();
                let end = if sub.iter().any(|x| times[x].1.is_none()) {
                    None
                } else {
                    sub.iter().filter_map(|x| times[x].1).max()
                };
                prop_assert_eq!((r.range.runs, r.range.start, r.range.end), (sub.len(), start, end), "{}", r.number);
            }
        }
    }
}
