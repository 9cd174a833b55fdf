//! Fuzzes the entry-file codec: parsing never panics, and every entry it accepts renders
//! back to a file that parses to the very same entry.

use memory_index::{parse_entry, render_entry};

/// The fuzz target's checks; also run over the kept corpus by the workspace tests.
pub fn check(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Some(entry) = parse_entry(text) else {
        return;
    };
    let rendered = render_entry(&entry.meta, &entry.body);
    let again = parse_entry(&rendered).expect("a rendered entry must parse");
    assert_eq!(again.meta, entry.meta);
    assert_eq!(again.body, entry.body);
}
