//! The integration tests of memory-core, in one binary (one link step instead of one per file).
// Tests build their fixtures with plain std::fs writes and read their own environment.
#![allow(clippy::disallowed_methods)]

mod common;
mod concurrency;
mod crash;
mod hostile;
mod mixed_concurrency;
mod store;
mod tool;
