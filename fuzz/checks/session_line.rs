//! Fuzzes the pi session line reader: any bytes parse or fail cleanly, and the text of a
//! parsed entry can always be walked.

use memory_agent::pi::sessions::SessionEntry;

/// The fuzz target's checks; also run over the kept corpus by the workspace tests.
pub fn check(data: &[u8]) {
    if let Ok(entry) = SessionEntry::parse(data) {
        let _ = entry.meta();
        let mut total = 0usize;
        entry.for_each_text(true, |_, text| total += text.len());
        assert!(total <= data.len() * 6 + 16);
    }
}
