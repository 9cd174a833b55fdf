//! The integration tests of memory-js, in one binary.

mod node_collation;
