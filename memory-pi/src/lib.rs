//! The pi binding of the memory layer, as a library: the `pimem serve` sidecar, the MCP
//! server, import and export.
//!
//! The `pimem` binary (`main.rs`) adds the command-line interface; the sidecar lives here so
//! that tests and fuzz targets can drive it in-process through [`serve::serve`], which reads
//! newline-delimited JSON-RPC from any `BufRead` and answers on any `Write`. The protocol is
//! documented in [`serve`]. [`mcp`] (cargo feature `mcp`, on by default) serves the same
//! memory to any MCP client; [`import`] and [`export`] move memories in from other tools and
//! out as one document; [`gitmem`] puts memory in git (the `MEMORY.md` merge driver,
//! `pimem git setup`, `pimem sync`). [`platform`] names this build for installers: its version text and
//! the npm package that ships it.
#![forbid(unsafe_code)]

pub mod doctor;
pub mod experience;
pub mod export;
pub mod gitmem;
pub mod import;
#[cfg(feature = "mcp")]
pub mod mcp;
pub mod platform;
pub mod serve;
