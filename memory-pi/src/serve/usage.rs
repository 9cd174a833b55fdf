//! The session usage summary (PA-26..PA-29): what this session did with memory, for
//! `/memory`. It lives in this sidecar's memory only, so it starts empty with every session
//! (a new, resumed, switched or reloaded session is a new sidecar, docs/pi-host.md §0).
//!
//! Three bounded lists, each keeping the most recent [`LIMIT`] records and counting what it
//! dropped: the saves (by the `memory` tool, a person's edit or delete in `/memory list`,
//! extraction, the dream), the memories surfaced (name, how often, last turn) and the entry
//! files the model read with pi's `read` tool (file, how often, last turn). Only names and
//! file names are kept: never a body, a secret candidate or anything the model inferred.
//! Recording reads nothing from disk and calls nothing.

use std::collections::VecDeque;

use memory_core::Language;

use super::curate_texts as t;

/// How many records each list keeps (PA-28: the 20 most recent).
pub(super) const LIMIT: usize = 20;

/// Who saved a memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Via {
    /// The model's `memory` tool.
    Tool,
    /// A person's edit in `/memory list`.
    Edit,
    /// A person's delete in `/memory list`.
    Delete,
    /// Extraction after a turn.
    Extraction,
    /// A `/dream` round.
    Dream,
}

/// One save.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Save {
    /// The memory's name (or `MEMORY.md`).
    pub(super) name: String,
    /// Who saved it.
    pub(super) via: Via,
    /// The user turn it happened in (0 before the first).
    pub(super) turn: u64,
}

/// A memory surfaced, or an entry file read, with how often and when last.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Seen {
    /// The memory's name (surfaced) or the entry file (read).
    pub(super) name: String,
    /// How many times.
    pub(super) count: u64,
    /// The user turn of the last time.
    pub(super) last_turn: u64,
}

/// The summary of one session.
#[derive(Debug, Default)]
pub(super) struct Usage {
    turn: u64,
    saves: VecDeque<Save>,
    saves_dropped: u64,
    surfaced: Vec<Seen>,
    surfaced_dropped: u64,
    reads: Vec<Seen>,
    /// The version each read file had at its last read (parallel to `reads`).
    read_versions: Vec<String>,
    reads_dropped: u64,
}

/// Counts one more use of `name` in a list ordered by last use, keeping the [`LIMIT`] most
/// recent; returns whether an older record was dropped.
fn bump(list: &mut Vec<Seen>, name: &str, turn: u64) -> bool {
    let mut seen = match list.iter().position(|s| s.name == name) {
        Some(i) => list.remove(i),
        None => Seen {
            name: name.to_owned(),
            count: 0,
            last_turn: turn,
        },
    };
    seen.count += 1;
    seen.last_turn = turn;
    list.push(seen);
    if list.len() > LIMIT {
        list.remove(0);
        return true;
    }
    false
}

impl Usage {
    /// A user turn starts (numbers the records that follow).
    pub(super) fn turn(&mut self) {
        self.turn += 1;
    }

    /// A memory was saved (or deleted) by `via`.
    pub(super) fn save(&mut self, name: &str, via: Via) {
        self.saves.push_back(Save {
            name: name.to_owned(),
            via,
            turn: self.turn,
        });
        if self.saves.len() > LIMIT {
            self.saves.pop_front();
            self.saves_dropped += 1;
        }
    }

    /// Memories were surfaced this turn (by name).
    pub(super) fn surfaced<'a>(&mut self, names: impl IntoIterator<Item = &'a str>) {
        for name in names {
            if bump(&mut self.surfaced, name, self.turn) {
                self.surfaced_dropped += 1;
            }
        }
    }

    /// The model read an entry file with `read`, at `version`: reads of one version add up,
    /// a new version starts the count over (PA-28).
    pub(super) fn read(&mut self, file: &str, version: &str) {
        if let Some(i) = self.reads.iter().position(|s| s.name == file) {
            let old = self.read_versions.remove(i);
            if old != version {
                self.reads[i].count = 0;
            }
        }
        let dropped = bump(&mut self.reads, file, self.turn);
        self.read_versions.push(version.to_owned());
        if dropped {
            self.read_versions.remove(0);
            self.reads_dropped += 1;
        }
    }

    /// The saves kept, oldest first.
    #[cfg(test)]
    pub(super) fn saves(&self) -> impl Iterator<Item = &Save> {
        self.saves.iter()
    }

    /// The memories surfaced, least recently first.
    #[cfg(test)]
    pub(super) fn surfaced_list(&self) -> &[Seen] {
        &self.surfaced
    }

    /// The entry files read, least recently first.
    #[cfg(test)]
    pub(super) fn reads(&self) -> &[Seen] {
        &self.reads
    }

    /// Nothing recorded yet.
    pub(super) fn is_empty(&self) -> bool {
        self.saves.is_empty() && self.surfaced.is_empty() && self.reads.is_empty()
    }

    /// The summary's lines for `/memory`; `available: false` marks them "currently
    /// unavailable" (memory off or paused: the records are still shown, PA-29).
    pub(super) fn render(&self, lang: Language, available: bool) -> String {
        let mut out = vec![t::usage_header(lang, available)];
        if self.saves.is_empty() {
            out.push(t::usage_saves_none(lang));
        } else {
            let items: Vec<String> = self
                .saves
                .iter()
                .rev()
                .map(|s| t::usage_save_item(lang, &s.name, s.via, s.turn))
                .collect();
            out.push(t::usage_saves(lang, self.saves.len(), &items.join(", ")));
        }
        let seen = |list: &[Seen]| -> String {
            list.iter()
                .rev()
                .map(|s| t::usage_seen_item(lang, &s.name, s.count, s.last_turn))
                .collect::<Vec<_>>()
                .join(", ")
        };
        out.push(if self.surfaced.is_empty() {
            t::usage_surfaced_none(lang)
        } else {
            t::usage_surfaced(lang, self.surfaced.len(), &seen(&self.surfaced))
        });
        out.push(if self.reads.is_empty() {
            t::usage_reads_none(lang)
        } else {
            t::usage_reads(lang, self.reads.len(), &seen(&self.reads))
        });
        let dropped = self.saves_dropped + self.surfaced_dropped + self.reads_dropped;
        if dropped > 0 {
            out.push(t::usage_dropped(lang, dropped));
        }
        out.join("\n")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_list_keeps_the_twenty_most_recent_and_counts_what_it_dropped() {
        let mut u = Usage::default();
        for i in 0..25 {
            u.turn();
            u.save(&format!("m{i}"), Via::Tool);
            u.read(&format!("f{i}.md"), "v1");
            u.surfaced([format!("s{i}").as_str()]);
        }
        assert_eq!(u.saves().count(), LIMIT);
        assert_eq!(u.saves().next().map(|s| s.name.as_str()), Some("m5"));
        assert_eq!(u.reads().len(), LIMIT);
        assert_eq!(u.reads()[0].name, "f5.md");
        assert_eq!(u.surfaced_list().len(), LIMIT);
        let text = u.render(Language::En, true);
        assert!(text.contains("15 older records dropped"), "{text}");
        assert!(!text.contains("m4 "), "{text}");
    }

    #[test]
    fn a_repeated_use_moves_to_the_end_with_its_count_and_last_turn() {
        let mut u = Usage::default();
        u.turn();
        u.surfaced(["a", "b"]);
        u.turn();
        u.turn();
        u.surfaced(["a"]);
        assert_eq!(
            u.surfaced_list(),
            &[
                Seen {
                    name: "b".into(),
                    count: 1,
                    last_turn: 1
                },
                Seen {
                    name: "a".into(),
                    count: 2,
                    last_turn: 3
                }
            ]
        );
        // 20 distinct names after "a": "a" is the one dropped, never a more recent one
        for i in 0..LIMIT {
            u.surfaced([format!("n{i}").as_str()]);
        }
        assert!(
            u.surfaced_list()
                .iter()
                .all(|s| s.name != "a" && s.name != "b")
        );
    }

    #[test]
    fn pa28_reads_of_one_version_add_up_and_a_new_version_starts_over() {
        let mut u = Usage::default();
        u.turn();
        u.read("a.md", "v1");
        u.read("b.md", "v1");
        u.read("a.md", "v1");
        assert_eq!(
            (u.reads()[1].name.as_str(), u.reads()[1].count),
            ("a.md", 2)
        );
        u.turn();
        u.read("a.md", "v2");
        assert_eq!(u.reads()[1].count, 1, "a new version starts over");
        assert_eq!(u.reads()[1].last_turn, 2);
        u.read("b.md", "v1");
        assert_eq!(
            (u.reads()[1].name.as_str(), u.reads()[1].count),
            ("b.md", 2)
        );
    }

    #[test]
    fn the_summary_names_saves_surfacing_and_reads_and_is_marked_while_off() {
        let mut u = Usage::default();
        assert!(u.is_empty());
        u.turn();
        u.save("Deploy", Via::Tool);
        u.save("Style", Via::Edit);
        u.surfaced(["Deploy"]);
        u.read("Deploy.md", "v1");
        let on = u.render(Language::En, true);
        assert_eq!(
            on,
            "Session usage:\n  Saves (2): Style (edit, turn 1), Deploy (tool, turn 1)\n  Surfaced (1): Deploy ×1 (last turn 1)\n  Read by the model (1): Deploy.md ×1 (last turn 1)"
        );
        let off = u.render(Language::En, false);
        assert!(
            off.starts_with(
                "Session usage (currently unavailable: memory is off or paused):\n  Saves (2)"
            ),
            "{off}"
        );
        let zh = u.render(Language::ZhCn, true);
        assert!(zh.starts_with("本会话的记忆使用：\n"), "{zh}");
    }
}
