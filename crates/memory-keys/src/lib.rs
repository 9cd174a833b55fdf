//! Project identity: which memory directory belongs to a working directory.
//!
//! Not built yet (issue 2). This crate will map a working directory to its project key
//! (`git/<normalised remote>` or `local/<repository root or cwd>`) and that key to one safe
//! directory name, byte-compatible with pi-memory 2.5.
#![forbid(unsafe_code)]
