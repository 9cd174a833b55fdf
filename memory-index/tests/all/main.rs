//! The integration tests of memory-index, in one binary (one link step instead of one per file).

mod fuzz_regressions;
mod properties;
mod snapshots;
mod vectors;
