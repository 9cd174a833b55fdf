//! The integration tests of memory-core, in one binary (one link step instead of one per file).

mod common;
mod concurrency;
mod crash;
mod hostile;
mod mixed_concurrency;
mod store;
mod tool;
