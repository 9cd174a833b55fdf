//! The integration tests of memory-lock, in one binary (one link step instead of one per file).
// Tests build their fixtures with plain std::fs writes and read their own environment.
#![allow(clippy::disallowed_methods)]

mod common;
mod durable;
mod file_lock;
mod logical;
mod props;
mod slots;
mod snapshot;
