//! The integration tests of memory-agent, in one binary (one link step instead of one per file).

mod agent_tasks;
mod crash_dream;
mod extract_rendering;
mod fuzz_regressions;
mod http_model;
mod nudge;
mod persistence;
mod pi_sessions;
mod retrieval;
mod surfacing;
