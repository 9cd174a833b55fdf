//! The pure formats of a memory directory.
//!
//! Not built yet (issue 3). This crate will hold the entry-file codec, file-name derivation,
//! the `MEMORY.md` parser with surgical edits, the injection window and the sanitiser, all as
//! pure functions without I/O.
#![forbid(unsafe_code)]
