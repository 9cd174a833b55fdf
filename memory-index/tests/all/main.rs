//! The integration tests of memory-index, in one binary (one link step instead of one per file).
// Tests build their fixtures with plain std::fs writes and read their own environment.
#![allow(clippy::disallowed_methods)]
// Test modules share helpers with `pub`; nothing here is reachable from outside anyway.
#![allow(unreachable_pub)]

mod fuzz_regressions;
mod merge;
mod properties;
mod snapshots;
mod vectors;
