//! The integration tests of memory-js, in one binary.
// Tests read their own environment.
#![allow(clippy::disallowed_methods, unreachable_pub)]

mod node_collation;
