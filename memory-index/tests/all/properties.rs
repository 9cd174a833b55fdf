//! Property tests of the format rules.
#![allow(clippy::unwrap_used)]

use memory_index::*;
use proptest::prelude::*;
use unicode_properties::{GeneralCategory, UnicodeGeneralCategory};

/// Characters that exercise the interesting classes: ASCII, markup, whitespace of both
/// flavours, line breaks, format characters, CJK and astral characters.
fn any_char() -> impl Strategy<Value = char> {
    prop_oneof![
        4 => proptest::char::range(' ', '~'),
        1 => proptest::sample::select(vec![
            '\n', '\r', '\t', '\u{0}', '\u{7F}', '\u{85}', '\u{A0}', '\u{AD}', '\u{200B}',
            '\u{2028}', '\u{2029}', '\u{202E}', '\u{3000}', '\u{FEFF}', '—', '–', '。', '…',
            '<', '>', '&', '[', ']', '(', ')', '.', '/', '\\', ':', '#', '-',
        ]),
        1 => proptest::char::range('一', '龥'),
        1 => proptest::char::range('😀', '🙏'),
        1 => any::<char>(),
    ]
}

fn any_text(max: usize) -> impl Strategy<Value = String> {
    proptest::collection::vec(any_char(), 0..max).prop_map(|v| v.into_iter().collect())
}

/// A valid single-line frontmatter value (what the store would write).
fn field() -> impl Strategy<Value = String> {
    any_text(24).prop_filter_map("valid single-line value", |s| validate_name(&s).ok())
}

fn entry_type() -> impl Strategy<Value = EntryType> {
    proptest::sample::select(EntryType::ALL.to_vec())
}

fn valid_meta() -> impl Strategy<Value = EntryMeta> {
    (field(), any_text(24), entry_type(), field(), field()).prop_map(
        |(name, description, entry_type, created, modified)| EntryMeta {
            name,
            description: validate_description(Some(&description))
                .ok()
                .flatten()
                .unwrap_or_default(),
            entry_type,
            created,
            modified,
        },
    )
}

/// A body as the store holds it: LF only and trimmed, possibly empty.
fn valid_body() -> impl Strategy<Value = String> {
    any_text(80).prop_map(|b| validate_body(&normalize_newlines(&b)).unwrap_or_default())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn render_then_parse_is_the_identity(meta in valid_meta(), body in valid_body()) {
        let text = render_entry(&meta, &body);
        let parsed = parse_entry(&text).unwrap();
        prop_assert_eq!(&parsed.meta, &meta);
        prop_assert_eq!(&parsed.body, &body);
        prop_assert!(!text.contains('\r'));
        prop_assert_eq!(render_entry(&parsed.meta, &parsed.body), text);
    }

    #[test]
    fn render_normalises_and_trims_any_body(meta in valid_meta(), body in any_text(80)) {
        let text = render_entry(&meta, &body);
        let parsed = parse_entry(&text).unwrap();
        prop_assert!(!text.contains('\r'));
        // Rendering the parsed body again is stable.
        prop_assert_eq!(render_entry(&meta, &parsed.body), text);
    }

    #[test]
    fn parse_entry_never_panics(text in any_text(200)) {
        let _ = parse_entry(&text);
        let _ = parse_entry(&format!("---\n{text}"));
    }

    #[test]
    fn entry_file_name_is_one_safe_component(name in any_text(160)) {
        let file = entry_file_name(&name);
        let stem = file.strip_suffix(".md").unwrap();
        prop_assert!(!stem.is_empty());
        prop_assert!(stem.len() <= 101, "{} bytes", stem.len());
        prop_assert!(!file.contains(['/', '\\', '\0', ':', '*', '?', '"', '<', '>', '|']));
        prop_assert!(!file.chars().any(|c| c.is_ascii_control()));
        prop_assert!(!stem.starts_with(['.', ' ']) && !stem.ends_with(' '));
        prop_assert!(!is_reserved_device_name(stem));
        prop_assert!(file != "." && file != "..");
        prop_assert_eq!(entry_file_name(&name), file);
    }

    #[test]
    fn unique_file_name_avoids_taken_names_and_the_index(name in any_text(12), taken in proptest::collection::hash_set("[a-c]{1,2}(-[2-4])?\\.md", 0..8)) {
        let derived = entry_file_name(&name);
        let chosen = unique_file_name(&derived, |f| taken.contains(f));
        prop_assert!(!taken.contains(&chosen));
        prop_assert!(!chosen.eq_ignore_ascii_case(INDEX_FILE_NAME));
        prop_assert!(chosen.ends_with(".md"));
    }

    #[test]
    fn derived_description_is_one_short_line(body in any_text(400), name in field()) {
        let d = derive_description(&body, &name);
        let breaks = ['\n', '\r', '\u{2028}', '\u{2029}'];
        prop_assert!(!d.contains(breaks), "line break in {:?}", d);
        prop_assert!(d.encode_utf16().count() <= 200 || d == name);
        prop_assert!(!d.is_empty());
        prop_assert!(validate_description(Some(&d)).is_ok());
    }

    #[test]
    fn index_line_round_trips(name in field(), file_name in field(), description in any_text(30)) {
        prop_assume!(!name.contains("]("));
        let file = entry_file_name(&file_name);
        prop_assume!(!file.contains(')'));
        let description = validate_description(Some(&description)).ok().flatten().unwrap_or_default();
        let text = format_index_line(&name, &file, &description);
        prop_assert_eq!(parse_index_line(&text), Some(IndexLine::new(name, file, description)));
    }

    #[test]
    fn sanitize_is_idempotent_and_removes_markup(s in any_text(120)) {
        let once = sanitize_for_injection(&s);
        prop_assert_eq!(sanitize_for_injection(&once), once.clone());
        prop_assert!(!once.contains(['<', '>']));
        prop_assert!(once.chars().all(|c| c.general_category() != GeneralCategory::Format));
    }
}

// ---------------------------------------------------------------- surgical index edits

#[derive(Debug, Clone)]
enum Row {
    Entry(&'static str, &'static str, String),
    Other(String),
    Blank(&'static str),
}

fn row() -> impl Strategy<Value = Row> {
    let names = proptest::sample::select(vec!["A", "B", "集成", "x] y"]);
    let files = proptest::sample::select(vec!["a.md", "b.md", "c.md", "d-(1).md"]);
    let others = prop_oneof![
        proptest::sample::select(vec![
            "# Memory Index".to_owned(),
            "## Project".to_owned(),
            "<!-- keep me -->".to_owned(),
            "* [A](a.md) — star".to_owned(),
            "- [A](a.md) - hyphen".to_owned(),
            "  - [A](a.md) — indented".to_owned(),
            "\u{FEFF}- [A](a.md) — bom".to_owned(),
        ]),
        any_text(30).prop_filter("an unrecognised, non-blank line", |s| {
            !s.contains(['\n', '\r'])
                && !s
                    .trim_matches(|c: char| c.is_whitespace() || c == '\u{FEFF}')
                    .is_empty()
                && parse_index_line(s).is_none()
        }),
    ];
    prop_oneof![
        3 => (names, files, any_text(12)).prop_map(|(n, f, d)| {
            let d = validate_description(Some(&d)).ok().flatten().unwrap_or_default();
            Row::Entry(n, f, d)
        }),
        2 => others.prop_map(Row::Other),
        1 => proptest::sample::select(vec!["", "  ", "\t"]).prop_map(Row::Blank),
    ]
}

fn render_rows(rows: &[Row], trailing_newline: bool) -> String {
    let lines: Vec<String> = rows
        .iter()
        .map(|r| match r {
            Row::Entry(n, f, d) => format_index_line(n, f, d),
            Row::Other(s) => s.clone(),
            Row::Blank(s) => (*s).to_owned(),
        })
        .collect();
    let mut text = lines.join("\n");
    if trailing_newline && !lines.is_empty() {
        text.push('\n');
    }
    text
}

fn non_entry_lines(lines: &[String]) -> Vec<&String> {
    lines
        .iter()
        .filter(|l| parse_index_line(l).is_none())
        .collect()
}

fn first_line_for(lines: &[String], file: &str) -> Option<usize> {
    lines
        .iter()
        .position(|l| parse_index_line(l).is_some_and(|p| p.file == file))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn upsert_is_surgical(
        rows in proptest::collection::vec(row(), 0..12),
        trailing in any::<bool>(),
        crlf in any::<bool>(),
        file in proptest::sample::select(vec!["a.md", "b.md", "c.md", "d-(1).md", "new.md"]),
    ) {
        let lf = render_rows(&rows, trailing);
        let text = if crlf { lf.replace('\n', "\r\n") } else { lf };
        let before = split_lines(&text);
        let new = IndexLine::new("N", file, "desc");
        let out = upsert_index_line(&text, &new);
        let after = split_lines(&out);
        prop_assert!(out.ends_with('\n') && !out.contains('\r'));

        let formatted = format_index_line("N", file, "desc");
        let mut expected = before.clone();
        match first_line_for(&before, file) {
            Some(k) => expected[k] = formatted,
            None => {
                let at = before.iter().rposition(|l| parse_index_line(l).is_some()).map_or(before.len(), |k| k + 1);
                expected.insert(at, formatted);
            }
        }
        prop_assert_eq!(&after, &expected);
        prop_assert_eq!(non_entry_lines(&after), non_entry_lines(&before));
    }

    #[test]
    fn remove_is_surgical(
        rows in proptest::collection::vec(row(), 0..12),
        trailing in any::<bool>(),
        crlf in any::<bool>(),
        file in proptest::sample::select(vec!["a.md", "b.md", "c.md", "d-(1).md", "new.md"]),
    ) {
        let lf = render_rows(&rows, trailing);
        let text = if crlf { lf.replace('\n', "\r\n") } else { lf };
        let before = split_lines(&text);
        match (first_line_for(&before, file), remove_index_line(&text, file)) {
            (None, None) => {}
            (Some(k), Some(out)) => {
                let mut expected = before.clone();
                expected.remove(k);
                prop_assert_eq!(split_lines(&out), expected);
                prop_assert!(out.is_empty() || out.ends_with('\n'));
                prop_assert!(!out.contains('\r'));
            }
            (k, out) => prop_assert!(false, "line {:?} but result {:?}", k, out),
        }
    }

    #[test]
    fn rebuild_keeps_the_header_and_lists_every_entry_once(
        rows in proptest::collection::vec(row(), 0..12),
        n in 0usize..5,
    ) {
        let text = render_rows(&rows, true);
        let entries: Vec<RebuildEntry> = (0..n)
            .map(|i| RebuildEntry {
                name: format!("E{i}"),
                file: format!("e{i}.md"),
                description: "d".into(),
                modified: format!("2026-10-0{}", 5 - i),
            })
            .collect();
        let r = rebuild_index(&text, &entries);
        let parsed = parse_index(&r.text);
        prop_assert_eq!(parsed.entries.len(), n);
        prop_assert_eq!(r.entries, n);
        let lines = split_lines(&r.text);
        prop_assert_eq!(lines.len(), r.header_lines + n);
        // Sorted by modified ascending: e{n-1} first.
        let files: Vec<String> = parsed.entries.iter().map(|e| e.line.file.clone()).collect();
        let want: Vec<String> = (0..n).rev().map(|i| format!("e{i}.md")).collect();
        prop_assert_eq!(files, want);
        // The header is a prefix of the old lines (or the default header).
        let old = split_lines(&text);
        let header = &lines[..r.header_lines];
        prop_assert!(old.starts_with(header) || header == [DEFAULT_INDEX_HEADER, ""]);
    }

    #[test]
    fn injection_window_respects_budgets_and_is_a_suffix(
        rows in proptest::collection::vec(row(), 0..40),
        trailing in any::<bool>(),
        crlf in any::<bool>(),
        max_lines in 0usize..45,
        max_bytes in 0usize..1500,
    ) {
        let lf = render_rows(&rows, trailing);
        let raw = if crlf { lf.replace('\n', "\r\n") } else { lf.clone() };
        let w = injection_window(&raw, max_lines, max_bytes);
        prop_assert!(!w.text.contains('\r'));
        if max_lines == 0 || max_bytes == 0 {
            prop_assert_eq!(w.text.as_str(), "");
            prop_assert_eq!((w.lines, w.bytes), (0, 0));
            return Ok(());
        }
        prop_assert!(w.lines <= max_lines);
        prop_assert!(w.bytes <= max_bytes + 1);

        let mut content = split_lines(&lf);
        while content.last().is_some_and(|l| l.trim_matches(|c: char| c.is_whitespace() || c == '\u{FEFF}').is_empty()) {
            content.pop();
        }
        if w.truncated {
            let rest = w.text.strip_prefix(INDEX_TRUNCATION_MARKER).unwrap().strip_prefix('\n').unwrap();
            let window: Vec<String> = split_lines(rest);
            prop_assert_eq!(window.len(), w.lines);
            let body_bytes = rest.len().saturating_sub(1);
            prop_assert!(body_bytes <= max_bytes);
            let k = window.len();
            let suffix = &content[content.len() - k..];
            if window.as_slice() != suffix {
                // Degenerate case: the newest line alone was over budget and got cut.
                prop_assert_eq!(k, 1);
                prop_assert!(content.last().unwrap().starts_with(window[0].as_str()));
            }
        } else {
            prop_assert_eq!(w.lines, content.len());
            // Byte-identical unless there was a CR to normalise (a whitespace-only index
            // without any line break is returned as is, like the original).
            if raw.contains('\r') {
                prop_assert_eq!(split_lines(&w.text), content);
            } else {
                prop_assert_eq!(&w.text, &raw);
            }
        }
    }
}
