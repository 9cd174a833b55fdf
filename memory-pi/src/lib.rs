//! The pi binding of the memory layer, as a library: the `pimem serve` sidecar.
//!
//! The `pimem` binary (`main.rs`) adds the command-line interface; the sidecar lives here so
//! that tests and fuzz targets can drive it in-process through [`serve::serve`], which reads
//! newline-delimited JSON-RPC from any `BufRead` and answers on any `Write`. The protocol is
//! documented in [`serve`].
#![forbid(unsafe_code)]

pub mod serve;
