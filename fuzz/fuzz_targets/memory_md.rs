//! Fuzzes `MEMORY.md` handling: parsing, surgical edits, the injection window and the
//! sanitiser never panic; a remove of an absent file changes nothing; an upsert keeps every
//! unrecognized line; the window stays within its budget; sanitising is idempotent and
//! leaves no angle brackets.
#![no_main]

#[path = "../checks/memory_md.rs"]
mod check;

libfuzzer_sys::fuzz_target!(|data: &[u8]| check::check(data));
