//! Everything a person reads: the message catalog and the renderings of `/experience` and
//! `pimem experience` (PX-10, PX-11; the texts are this implementation's, VECTORS §Z 17).
//!
//! Every text is a key of pimem's one message catalog, [`memory_core::catalog`] (the `Px*`
//! keys, PA-03): there each key has its English and Simplified Chinese template (pi-experience
//! showed its panel in Chinese), a missing translation does not compile and a test checks
//! placeholder parity. [`EN`] and [`ZH`] are this crate's typed views of that table, built at
//! compile time, and [`catalog`] picks one for a [`Language`]. Templates use `{name}`
//! placeholders, filled by [`fill`]. What goes to the model ([`PREPARE_PROMPT`], the
//! `experience` tool's results) is English in both and not in the catalog.

use jiff::Timestamp;
use memory_core::Language;
use memory_core::catalog::Text;

use crate::experience::ExperienceRow;
use crate::log::{Diagnostics, EventRow, RunRow, SummaryState};
use crate::search::{Hit, HitRef};

/// One language's texts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Catalog {
    /// The panel's title line.
    pub panel_title: &'static str,
    /// The panel's key line.
    pub panel_keys: &'static str,
    /// The key line while browsing runs.
    pub panel_browse_keys: &'static str,
    /// The key line under a run's details.
    pub panel_back_keys: &'static str,
    /// `{runs} runs · {running} running · {recovery} need recovery · {pending} summaries pending · {experiences} experiences`.
    pub panel_counts: &'static str,
    /// Heading of the latest runs.
    pub panel_latest: &'static str,
    /// Heading of the experiences.
    pub panel_experiences: &'static str,
    /// `{shown}`/`{total}` runs header.
    pub runs_header: &'static str,
    /// No runs at all.
    pub no_runs: &'static str,
    /// No experiences yet.
    pub no_experiences: &'static str,
    /// An end time nobody confirmed.
    pub not_confirmed: &'static str,
    /// Field labels of `show R01`.
    pub label_uuid: &'static str,
    /// Session label.
    pub label_session: &'static str,
    /// "in memory (no session file)".
    pub in_memory: &'static str,
    /// Fork lineage note.
    pub lineage_unresolved: &'static str,
    /// Started label.
    pub label_started: &'static str,
    /// Ended label.
    pub label_ended: &'static str,
    /// Model label.
    pub label_model: &'static str,
    /// Stop reason label.
    pub label_stop: &'static str,
    /// Error label.
    pub label_error: &'static str,
    /// Events label.
    pub label_events: &'static str,
    /// Experience label.
    pub label_experience: &'static str,
    /// Summary label.
    pub label_summary: &'static str,
    /// "none".
    pub none: &'static str,
    /// Summary waiting.
    pub summary_pending: &'static str,
    /// The run has not settled.
    pub summary_none: &'static str,
    /// Sources label.
    pub label_sources: &'static str,
    /// Children label.
    pub label_children: &'static str,
    /// Parent label.
    pub label_parent: &'static str,
    /// Time range label.
    pub label_range: &'static str,
    /// Merged label.
    pub label_merged: &'static str,
    /// Remembered label.
    pub label_remembered: &'static str,
    /// `{start} – {end} ({runs} runs)`.
    pub range_text: &'static str,
    /// No sources.
    pub range_empty: &'static str,
    /// Search without words.
    pub search_usage: &'static str,
    /// `No runs or experiences match "{words}".`
    pub search_none: &'static str,
    /// `raw` header: `{run}: {count} events`.
    pub raw_header: &'static str,
    /// Diagnostics header.
    pub debug_header: &'static str,
    /// No run log yet.
    pub no_log: &'static str,
    /// The sub-commands.
    pub usage: &'static str,
    /// `prepare` with nothing to hand over.
    pub prepare_nothing: &'static str,
    /// `prepare` header: `{count}` runs.
    pub prepare_header: &'static str,
    /// The question before handing runs to the agent.
    pub prepare_confirm_title: &'static str,
    /// Its body: `{count}`.
    pub prepare_confirm_body: &'static str,
    /// Headless `prepare`.
    pub prepare_needs_ui: &'static str,
    /// Handed over: `{count}`.
    pub prepare_sent: &'static str,
    /// The message the agent gets: `{runs}` is the audited list.
    pub prepare_prompt: &'static str,
    /// Recording is off.
    pub disabled: &'static str,
    /// `remember` done: `{exp}`, `{saved}`.
    pub remembered: &'static str,
}

/// What the agent receives from `/experience prepare` (`{runs}` is the audited list):
/// English in every language, since the model reads it.
pub const PREPARE_PROMPT: &str = "The user audited these summaries of recorded runs. Merge them into experiences with the `experience` tool: group runs that belong together, create experiences with a short title and what was learned, put related experiences under a common parent, and merge root experiences that describe the same thing across sessions. Do not invent runs.\n\n{runs}";

/// English.
pub const EN: Catalog = Catalog {
    panel_title: Text::PxPanelTitle.template(Language::En),
    panel_keys: Text::PxPanelKeys.template(Language::En),
    panel_browse_keys: Text::PxPanelBrowseKeys.template(Language::En),
    panel_back_keys: Text::PxPanelBackKeys.template(Language::En),
    panel_counts: Text::PxPanelCounts.template(Language::En),
    panel_latest: Text::PxPanelLatest.template(Language::En),
    panel_experiences: Text::PxPanelExperiences.template(Language::En),
    runs_header: Text::PxRunsHeader.template(Language::En),
    no_runs: Text::PxNoRuns.template(Language::En),
    no_experiences: Text::PxNoExperiences.template(Language::En),
    not_confirmed: Text::PxNotConfirmed.template(Language::En),
    label_uuid: Text::PxLabelUuid.template(Language::En),
    label_session: Text::PxLabelSession.template(Language::En),
    in_memory: Text::PxInMemory.template(Language::En),
    lineage_unresolved: Text::PxLineageUnresolved.template(Language::En),
    label_started: Text::PxLabelStarted.template(Language::En),
    label_ended: Text::PxLabelEnded.template(Language::En),
    label_model: Text::PxLabelModel.template(Language::En),
    label_stop: Text::PxLabelStop.template(Language::En),
    label_error: Text::PxLabelError.template(Language::En),
    label_events: Text::PxLabelEvents.template(Language::En),
    label_experience: Text::PxLabelExperience.template(Language::En),
    label_summary: Text::PxLabelSummary.template(Language::En),
    none: Text::PxNone.template(Language::En),
    summary_pending: Text::PxSummaryPending.template(Language::En),
    summary_none: Text::PxSummaryNone.template(Language::En),
    label_sources: Text::PxLabelSources.template(Language::En),
    label_children: Text::PxLabelChildren.template(Language::En),
    label_parent: Text::PxLabelParent.template(Language::En),
    label_range: Text::PxLabelRange.template(Language::En),
    label_merged: Text::PxLabelMerged.template(Language::En),
    label_remembered: Text::PxLabelRemembered.template(Language::En),
    range_text: Text::PxRangeText.template(Language::En),
    range_empty: Text::PxRangeEmpty.template(Language::En),
    search_usage: Text::PxSearchUsage.template(Language::En),
    search_none: Text::PxSearchNone.template(Language::En),
    raw_header: Text::PxRawHeader.template(Language::En),
    debug_header: Text::PxDebugHeader.template(Language::En),
    no_log: Text::PxNoLog.template(Language::En),
    usage: Text::PxUsage.template(Language::En),
    prepare_nothing: Text::PxPrepareNothing.template(Language::En),
    prepare_header: Text::PxPrepareHeader.template(Language::En),
    prepare_confirm_title: Text::PxPrepareConfirmTitle.template(Language::En),
    prepare_confirm_body: Text::PxPrepareConfirmBody.template(Language::En),
    prepare_needs_ui: Text::PxPrepareNeedsUi.template(Language::En),
    prepare_sent: Text::PxPrepareSent.template(Language::En),
    prepare_prompt: PREPARE_PROMPT,
    disabled: Text::PxDisabled.template(Language::En),
    remembered: Text::PxRemembered.template(Language::En),
};

/// Simplified Chinese (pi-experience showed its panel in Chinese, PX-10). Command names,
/// run and experience names, status words and diagnostics keys stay English (PA-03's rule).
pub const ZH: Catalog = Catalog {
    panel_title: Text::PxPanelTitle.template(Language::ZhCn),
    panel_keys: Text::PxPanelKeys.template(Language::ZhCn),
    panel_browse_keys: Text::PxPanelBrowseKeys.template(Language::ZhCn),
    panel_back_keys: Text::PxPanelBackKeys.template(Language::ZhCn),
    panel_counts: Text::PxPanelCounts.template(Language::ZhCn),
    panel_latest: Text::PxPanelLatest.template(Language::ZhCn),
    panel_experiences: Text::PxPanelExperiences.template(Language::ZhCn),
    runs_header: Text::PxRunsHeader.template(Language::ZhCn),
    no_runs: Text::PxNoRuns.template(Language::ZhCn),
    no_experiences: Text::PxNoExperiences.template(Language::ZhCn),
    not_confirmed: Text::PxNotConfirmed.template(Language::ZhCn),
    label_uuid: Text::PxLabelUuid.template(Language::ZhCn),
    label_session: Text::PxLabelSession.template(Language::ZhCn),
    in_memory: Text::PxInMemory.template(Language::ZhCn),
    lineage_unresolved: Text::PxLineageUnresolved.template(Language::ZhCn),
    label_started: Text::PxLabelStarted.template(Language::ZhCn),
    label_ended: Text::PxLabelEnded.template(Language::ZhCn),
    label_model: Text::PxLabelModel.template(Language::ZhCn),
    label_stop: Text::PxLabelStop.template(Language::ZhCn),
    label_error: Text::PxLabelError.template(Language::ZhCn),
    label_events: Text::PxLabelEvents.template(Language::ZhCn),
    label_experience: Text::PxLabelExperience.template(Language::ZhCn),
    label_summary: Text::PxLabelSummary.template(Language::ZhCn),
    none: Text::PxNone.template(Language::ZhCn),
    summary_pending: Text::PxSummaryPending.template(Language::ZhCn),
    summary_none: Text::PxSummaryNone.template(Language::ZhCn),
    label_sources: Text::PxLabelSources.template(Language::ZhCn),
    label_children: Text::PxLabelChildren.template(Language::ZhCn),
    label_parent: Text::PxLabelParent.template(Language::ZhCn),
    label_range: Text::PxLabelRange.template(Language::ZhCn),
    label_merged: Text::PxLabelMerged.template(Language::ZhCn),
    label_remembered: Text::PxLabelRemembered.template(Language::ZhCn),
    range_text: Text::PxRangeText.template(Language::ZhCn),
    range_empty: Text::PxRangeEmpty.template(Language::ZhCn),
    search_usage: Text::PxSearchUsage.template(Language::ZhCn),
    search_none: Text::PxSearchNone.template(Language::ZhCn),
    raw_header: Text::PxRawHeader.template(Language::ZhCn),
    debug_header: Text::PxDebugHeader.template(Language::ZhCn),
    no_log: Text::PxNoLog.template(Language::ZhCn),
    usage: Text::PxUsage.template(Language::ZhCn),
    prepare_nothing: Text::PxPrepareNothing.template(Language::ZhCn),
    prepare_header: Text::PxPrepareHeader.template(Language::ZhCn),
    prepare_confirm_title: Text::PxPrepareConfirmTitle.template(Language::ZhCn),
    prepare_confirm_body: Text::PxPrepareConfirmBody.template(Language::ZhCn),
    prepare_needs_ui: Text::PxPrepareNeedsUi.template(Language::ZhCn),
    prepare_sent: Text::PxPrepareSent.template(Language::ZhCn),
    prepare_prompt: PREPARE_PROMPT,
    disabled: Text::PxDisabled.template(Language::ZhCn),
    remembered: Text::PxRemembered.template(Language::ZhCn),
};

/// The catalog of a language.
pub fn catalog(language: Language) -> &'static Catalog {
    match language {
        Language::En => &EN,
        Language::ZhCn => &ZH,
    }
}

/// Fills `{name}` placeholders.
pub fn fill(template: &str, args: &[(&str, &dyn std::fmt::Display)]) -> String {
    let mut out = template.to_owned();
    for (k, v) in args {
        out = out.replace(&format!("{{{k}}}"), &v.to_string());
    }
    out
}

/// Unix ms → `2026-11-29 22:18:21Z` (UTC, seconds).
pub fn time(ms: i64) -> String {
    match Timestamp::from_millisecond(ms) {
        Ok(t) => t.strftime("%Y-%m-%d %H:%M:%SZ").to_string(),
        Err(_) => ms.to_string(),
    }
}

fn summary_word(c: &Catalog, s: SummaryState) -> &'static str {
    match s {
        SummaryState::None => c.none,
        SummaryState::Pending => c.summary_pending,
        SummaryState::Done => "done",
        SummaryState::Failed => "failed",
        SummaryState::Unavailable => "unavailable",
    }
}

/// One line per run: `R03  completed          2026-11-29 22:18:21Z  summary done  hello`.
pub fn run_line(c: &Catalog, r: &RunRow) -> String {
    format!(
        "{:<5} {:<18} {}  {} {:<11} {}",
        r.number.to_string(),
        r.status.as_str(),
        time(r.started_at),
        c.label_summary.to_lowercase(),
        summary_word(c, r.summary_state),
        r.title
    )
    .trim_end()
    .to_owned()
}

/// `/experience runs`.
pub fn runs(c: &Catalog, rows: &[RunRow], total: i64) -> String {
    if rows.is_empty() {
        return c.no_runs.to_owned();
    }
    let mut out = fill(c.runs_header, &[("shown", &rows.len()), ("total", &total)]);
    for r in rows {
        out.push('\n');
        out.push_str(&run_line(c, r));
    }
    out
}

/// `/experience show R01`.
pub fn show_run(c: &Catalog, r: &RunRow) -> String {
    let mut lines = vec![format!("{} · {}", r.number, r.status.as_str())];
    lines.push(format!("{}: {}", c.label_uuid, r.uuid));
    let mut session = format!(
        "{}: {} ({})",
        c.label_session,
        r.session,
        r.session_file.as_deref().unwrap_or(c.in_memory)
    );
    if r.lineage.as_deref() == Some("unresolved") {
        session.push_str(&format!("; {}", c.lineage_unresolved));
    }
    lines.push(session);
    lines.push(format!("{}: {}", c.label_started, time(r.started_at)));
    lines.push(format!(
        "{}: {}",
        c.label_ended,
        r.ended_at
            .map(time)
            .unwrap_or_else(|| c.not_confirmed.to_owned())
    ));
    if !r.title.is_empty() {
        lines.push(format!("> {}", r.title));
    }
    if let Some(m) = &r.model {
        lines.push(format!("{}: {m}", c.label_model));
    }
    if let Some(s) = &r.stop_reason {
        lines.push(format!("{}: {s}", c.label_stop));
    }
    if let Some(e) = &r.error {
        lines.push(format!("{}: {e}", c.label_error));
    }
    lines.push(format!("{}: {}", c.label_events, r.events));
    lines.push(format!(
        "{}: {}",
        c.label_experience,
        r.experience
            .map(|e| e.to_string())
            .unwrap_or_else(|| c.none.to_owned())
    ));
    lines.push(match (r.summary_state, &r.summary, &r.summary_note) {
        (SummaryState::Done, Some(s), _) => format!("{}: {s}", c.label_summary),
        (SummaryState::None, _, _) => format!("{}: {}", c.label_summary, c.summary_none),
        (state, _, Some(note)) => {
            format!("{} ({}): {note}", c.label_summary, summary_word(c, state))
        }
        (state, _, None) => format!("{}: {}", c.label_summary, summary_word(c, state)),
    });
    lines.join("\n")
}

/// `/experience raw R01`: every stored event, as stored.
pub fn raw(c: &Catalog, r: &RunRow, events: &[EventRow]) -> String {
    let mut out = fill(
        c.raw_header,
        &[("run", &r.number), ("count", &events.len())],
    );
    for e in events {
        out.push_str(&format!("\n#{} {} {} {}", e.id, time(e.at), e.kind, e.body));
    }
    out
}

/// `/experience search <words>`.
pub fn search(c: &Catalog, words: &str, hits: &[Hit]) -> String {
    if words.trim().is_empty() {
        return c.search_usage.to_owned();
    }
    if hits.is_empty() {
        return fill(c.search_none, &[("words", &words.trim())]);
    }
    hits.iter()
        .map(|h| {
            let id = match h.target {
                HitRef::Run(r) => r.to_string(),
                HitRef::Experience(e) => e.to_string(),
            };
            format!("{id:<5} {} — {}", h.title, h.snippet.replace('\n', " "))
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The range line of an experience.
pub fn range(c: &Catalog, e: &ExperienceRow) -> String {
    match e.range.start {
        None => c.range_empty.to_owned(),
        Some(start) => fill(
            c.range_text,
            &[
                ("start", &time(start)),
                (
                    "end",
                    &e.range
                        .end
                        .map(time)
                        .unwrap_or_else(|| c.not_confirmed.to_owned()),
                ),
                ("runs", &e.range.runs),
            ],
        ),
    }
}

/// One line per experience, indented by depth.
pub fn experience_line(e: &ExperienceRow, depth: usize) -> String {
    let sources: Vec<String> = e.sources.iter().map(ToString::to_string).collect();
    let mut line = format!("{}{} {}", "  ".repeat(depth), e.number, e.title);
    if !sources.is_empty() {
        line.push_str(&format!(" [{}]", sources.join(", ")));
    }
    line
}

/// The experiences as a tree (input in [`crate::RunLog::experiences`] order).
pub fn experience_tree(c: &Catalog, rows: &[ExperienceRow]) -> String {
    if rows.is_empty() {
        return c.no_experiences.to_owned();
    }
    let mut depth: std::collections::BTreeMap<crate::ids::ExpNo, usize> = Default::default();
    rows.iter()
        .map(|e| {
            let d = e.parent.and_then(|p| depth.get(&p)).map_or(0, |d| d + 1);
            depth.insert(e.number, d);
            experience_line(e, d)
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// `/experience show E1`.
pub fn show_experience(c: &Catalog, e: &ExperienceRow) -> String {
    let list = |v: Vec<String>| {
        if v.is_empty() {
            c.none.to_owned()
        } else {
            v.join(", ")
        }
    };
    let mut lines = vec![format!("{} · {}", e.number, e.title)];
    lines.push(format!(
        "{}: {}",
        c.label_parent,
        e.parent
            .map(|p| p.to_string())
            .unwrap_or_else(|| c.none.to_owned())
    ));
    lines.push(format!(
        "{}: {}",
        c.label_children,
        list(e.children.iter().map(ToString::to_string).collect())
    ));
    lines.push(format!(
        "{}: {}",
        c.label_sources,
        list(e.sources.iter().map(ToString::to_string).collect())
    ));
    lines.push(format!("{}: {}", c.label_range, range(c, e)));
    if !e.merged.is_empty() {
        lines.push(format!(
            "{}: {}",
            c.label_merged,
            list(e.merged.iter().map(ToString::to_string).collect())
        ));
    }
    if let Some(f) = &e.remembered {
        lines.push(format!("{}: {f}", c.label_remembered));
    }
    if !e.summary.is_empty() {
        lines.push(String::new());
        lines.push(e.summary.clone());
    }
    lines.join("\n")
}

/// `/experience debug`.
pub fn debug(c: &Catalog, d: &Diagnostics, extra: &[String]) -> String {
    let pairs = |v: &[(String, i64)]| {
        if v.is_empty() {
            "0".to_owned()
        } else {
            v.iter()
                .map(|(k, n)| format!("{k}={n}"))
                .collect::<Vec<_>>()
                .join(" ")
        }
    };
    let mut lines = vec![
        c.debug_header.to_owned(),
        format!("Database: {}", d.path),
        format!(
            "Schema: {} · journal_mode={} · synchronous={} · integrity {}",
            d.schema, d.journal_mode, d.synchronous, d.integrity
        ),
        format!("Size: {} bytes (database + WAL)", d.bytes),
        format!("Runs: {}", pairs(&d.runs)),
        format!("Summaries: {}", pairs(&d.summaries)),
        format!(
            "Events: {} · sessions: {} · writers: {} ({} live) · experiences: {}",
            d.events, d.sessions, d.writers, d.live_writers, d.experiences
        ),
    ];
    lines.extend(extra.iter().cloned());
    lines.join("\n")
}

/// The prepared list the user audits and the agent receives.
pub fn prepare_list(rows: &[RunRow]) -> String {
    rows.iter()
        .map(|r| {
            format!(
                "{} ({}, {} – {}) {}\n  {}",
                r.number,
                r.status.as_str(),
                time(r.started_at),
                r.ended_at.map(time).unwrap_or_else(|| "?".to_owned()),
                r.title,
                r.summary.as_deref().unwrap_or("")
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    fn texts(c: &Catalog) -> serde_json::Map<String, serde_json::Value> {
        match serde_json::to_value(c) {
            Ok(serde_json::Value::Object(m)) => m,
            other => panic!("a catalog serializes to an object: {other:?}"),
        }
    }

    fn placeholders(text: &str) -> BTreeSet<String> {
        let mut out = BTreeSet::new();
        let mut rest = text;
        while let Some(open) = rest.find('{') {
            let Some(close) = rest[open..].find('}') else {
                break;
            };
            out.insert(rest[open + 1..open + close].to_owned());
            rest = &rest[open + close + 1..];
        }
        out
    }

    #[test]
    fn every_catalog_has_every_text_with_the_same_placeholders() {
        let en = texts(&EN);
        let zh = texts(&ZH);
        assert_eq!(en.keys().collect::<Vec<_>>(), zh.keys().collect::<Vec<_>>());
        for (key, e) in &en {
            let (e, z) = (e.as_str().unwrap_or(""), zh[key].as_str().unwrap_or(""));
            assert!(
                !e.trim().is_empty() && !z.trim().is_empty(),
                "{key} is empty"
            );
            assert_eq!(
                placeholders(e),
                placeholders(z),
                "{key}: placeholders differ"
            );
        }
    }

    #[test]
    fn chinese_catalog_is_chinese_where_a_person_reads_and_english_for_the_model() {
        let zh = texts(&ZH);
        // Names, IDs and the prompt for the model are the same in both catalogs.
        let same = ["label_uuid", "prepare_prompt"];
        for (key, z) in &zh {
            let z = z.as_str().unwrap_or("");
            let chinese = z.chars().any(|c| ('\u{4e00}'..='\u{9fff}').contains(&c));
            assert_eq!(!chinese, same.contains(&key.as_str()), "{key}: {z}");
        }
        assert_eq!(ZH.prepare_prompt, EN.prepare_prompt);
        assert_eq!(*catalog(Language::ZhCn), ZH);
        assert_eq!(*catalog(Language::En), EN);
    }
}
