//! Fuzzes `MEMORY.md` handling: parsing, surgical edits, the injection window and the
//! sanitiser never panic; a remove of an absent file changes nothing; an upsert keeps every
//! unrecognized line; the window stays within its budget; sanitising is idempotent and
//! leaves no angle brackets.

use memory_index::{
    IndexLine, index_capacity, injection_window, parse_index, remove_index_line,
    sanitize_for_injection, upsert_index_line,
};

/// The fuzz target's checks; also run over the kept corpus by the workspace tests.
pub fn check(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let parsed = parse_index(text);
    // Every non-empty line is an entry or unrecognized (emptiness by JavaScript's trim, as
    // in the capacity count: U+0085 is not whitespace there, U+00A0 is).
    assert_eq!(
        parsed.entries.len() + parsed.unrecognized,
        index_capacity(text).lines
    );
    let normalized = text.replace("\r\n", "\n").replace('\r', "\n");
    let unrecognized: Vec<&str> = normalized
        .split('\n')
        .filter(|l| !l.is_empty() && memory_index::parse_index_line(l).is_none())
        .collect();
    assert!(remove_index_line(text, "\u{0}never-a-file.md").is_none());
    let line = IndexLine {
        name: "Fuzz".into(),
        file: "fuzz-target.md".into(),
        description: "d".into(),
    };
    let upserted = upsert_index_line(text, &line);
    for l in &unrecognized {
        assert!(upserted.lines().any(|u| u == *l), "lost line {l:?}");
    }
    for (max_lines, max_bytes) in [(50, 16384), (3, 120), (1, 1), (0, 10)] {
        let w = injection_window(text, max_lines, max_bytes);
        assert!(w.lines <= max_lines);
        assert!(w.bytes <= max_bytes + 1, "{} > {max_bytes}", w.bytes);
        let once = sanitize_for_injection(&w.text);
        assert!(!once.contains('<') && !once.contains('>'));
        assert_eq!(sanitize_for_injection(&once), once);
    }
}
