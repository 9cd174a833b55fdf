//! The integration tests of memory-keys, in one binary (one link step instead of one per file).

mod fuzz_regressions;
mod properties;
mod vectors;
