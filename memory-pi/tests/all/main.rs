//! The integration tests of memory-pi, in one binary (one link step instead of one per file).
// Tests build their fixtures with plain std::fs writes and read their own environment.
#![allow(clippy::disallowed_methods)]
// Test modules share helpers with `pub`; nothing here is reachable from outside anyway.
#![allow(unreachable_pub)]

mod cli;
mod cli_install;
mod cli_scope;
mod cli_sessions;
mod cli_tasks;
mod cli_zh;
mod dir;
mod doctor;
mod fuzz_regressions;
mod git;
mod import;
mod import_pa;
mod mcp;
mod serve;
mod serve_sessions;
