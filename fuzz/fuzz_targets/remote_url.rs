//! Fuzzes remote-URL normalisation: it must never panic, and every key it produces must name
//! one safe directory strictly inside the memory root, on both platforms.
#![no_main]

#[path = "../checks/remote_url.rs"]
mod check;

libfuzzer_sys::fuzz_target!(|data: &[u8]| check::check(data));
