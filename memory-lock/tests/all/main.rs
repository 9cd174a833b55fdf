//! The integration tests of memory-lock, in one binary (one link step instead of one per file).

mod common;
mod durable;
mod file_lock;
mod logical;
mod props;
mod slots;
mod snapshot;
