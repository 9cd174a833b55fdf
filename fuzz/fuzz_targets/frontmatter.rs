//! Fuzzes the entry-file codec: parsing never panics, and every entry it accepts renders
//! back to a file that parses to the very same entry.
#![no_main]

#[path = "../checks/frontmatter.rs"]
mod check;

libfuzzer_sys::fuzz_target!(|data: &[u8]| check::check(data));
