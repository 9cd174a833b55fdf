//! The integration tests of memory-agent, in one binary (one link step instead of one per file).
// Tests build their fixtures with plain std::fs writes and read their own environment.
#![allow(clippy::disallowed_methods)]
// Test modules share helpers with `pub`; nothing here is reachable from outside anyway.
#![allow(unreachable_pub)]

mod agent_tasks;
mod crash_dream;
mod extract_rendering;
mod fuzz_regressions;
mod http_model;
mod live_index;
mod nudge;
mod persistence;
mod pi_session_tools;
mod pi_sessions;
mod retrieval;
mod surfacing;
