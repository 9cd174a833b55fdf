//! The integration tests of memory-pi, in one binary (one link step instead of one per file).
// Tests build their fixtures with plain std::fs writes and read their own environment.
#![allow(clippy::disallowed_methods)]
// Test modules share helpers with `pub`; nothing here is reachable from outside anyway.
#![allow(unreachable_pub)]

mod cli;
<<<<<<< HEAD
mod cli_sessions;
=======
mod cli_install;
>>>>>>> 2c0a929 (Packaging: a foreign platform binary (spawn error or early exit) is reported once by package; P5a/P5b; protocol.ts regenerated; docs (README Install, extension README, pi-host §i, e2e README, ARCHITECTURE, CONTRIBUTING); release workflow; ci runs e2e --installed; CLI install tests)
mod cli_tasks;
mod dir;
mod fuzz_regressions;
mod import;
mod mcp;
mod serve;
mod serve_sessions;
