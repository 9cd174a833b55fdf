//! The integration tests of memory-core, in one binary (one link step instead of one per file).
// Tests build their fixtures with plain std::fs writes and read their own environment.
#![allow(clippy::disallowed_methods)]
// Test modules share helpers with `pub`; nothing here is reachable from outside anyway.
#![allow(unreachable_pub)]

mod common;
mod concurrency;
mod crash;
mod hostile;
mod mixed_concurrency;
mod scope;
mod secrets_corpus;
mod store;
mod switch;
mod tool;
mod watch;
