//! Fuzzes the pi session line reader: any bytes parse or fail cleanly, and the text of a
//! parsed entry can always be walked.
#![no_main]

use libfuzzer_sys::fuzz_target;
use memory_agent::sessions::SessionEntry;

fuzz_target!(|data: &[u8]| {
    if let Ok(entry) = SessionEntry::parse(data) {
        let _ = entry.meta();
        let mut total = 0usize;
        entry.for_each_text(true, |_, text| total += text.len());
        assert!(total <= data.len() * 6 + 16);
    }
});
