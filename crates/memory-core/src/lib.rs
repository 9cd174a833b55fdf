//! The memory `Store`.
//!
//! Not built yet (issue 3). This crate will combine project identity, formats and locks into
//! the store an agent embeds: add, replace, remove, list, search, rename, rebuild_index.
#![forbid(unsafe_code)]
