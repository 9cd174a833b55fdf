//! Memory orchestration behind a `Model` trait.
//!
//! Not built yet (issue 4). This crate will decide what the agent sees and what gets written:
//! surfacing, extraction, dream, nudge and session-history search.
#![forbid(unsafe_code)]
