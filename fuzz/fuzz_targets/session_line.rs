//! Fuzzes the pi session line reader: any bytes parse or fail cleanly, and the text of a
//! parsed entry can always be walked.
#![no_main]

#[path = "../checks/session_line.rs"]
mod check;

libfuzzer_sys::fuzz_target!(|data: &[u8]| check::check(data));
