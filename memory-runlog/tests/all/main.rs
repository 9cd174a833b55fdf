//! memory-runlog's integration tests: one binary (CONTRIBUTING).
#![allow(clippy::unwrap_used, clippy::disallowed_methods, missing_docs)]

mod common;
mod crash;
mod experiences;
mod recording;
mod summaries;
