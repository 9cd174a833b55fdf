//! The integration tests of memory-keys, in one binary (one link step instead of one per file).
// Tests build their fixtures with plain std::fs writes and read their own environment.
#![allow(clippy::disallowed_methods)]

mod fuzz_regressions;
mod properties;
mod vectors;
