//! The integration tests of memory-pi, in one binary (one link step instead of one per file).

mod cli;
mod cli_tasks;
mod dir;
mod fuzz_regressions;
mod serve;
