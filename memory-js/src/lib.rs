//! JavaScript semantics, made explicit: the one place this workspace decides how a
//! TypeScript original measured, cut, trimmed, sorted and printed things.
//!
//! pi-memory and its siblings are TypeScript. Their `trim()` and regex `\s` use the
//! ECMAScript whitespace set, `length`/`slice` count UTF-16 code units, the default
//! `Array.prototype.sort` compares UTF-16 code units while `localeCompare` collates, `Date.prototype.toISOString` prints
//! six-digit years outside 0..=9999, and `JSON.stringify` prints numbers with
//! `Number.prototype.toString`. Byte compatibility depends on every one of these, so each
//! is a small pure function here and every other crate calls it instead of keeping its own
//! copy (the workspace once had three copies of the whitespace table, one of them spelled
//! differently).
//!
//! The central decision: **never split a character**. Where JavaScript's `slice(0, n)` would
//! keep half of a surrogate pair, [`utf16_prefix`] and [`utf16_suffix`] leave the astral
//! character out whole; files written by this workspace are therefore always valid UTF-8,
//! and the text differs from JavaScript's only where JavaScript's would hold a lone
//! surrogate.
//!
//! # Example
//! ```
//! use memory_js::{js_trim, utf16_len, utf16_prefix, iso_millis, js_stringify};
//!
//! assert_eq!(js_trim("\u{FEFF} a \u{3000}"), "a"); // BOM is JS whitespace, Rust disagrees
//! assert_eq!(utf16_len("a😀"), 3);
//! assert_eq!(utf16_prefix("a😀b", 2), "a"); // never half an emoji
//! let ts: jiff::Timestamp = "2026-10-01T09:12:33.123456Z".parse()?;
//! assert_eq!(iso_millis(ts), "2026-10-01T09:12:33.123Z");
//! assert_eq!(js_stringify(&serde_json::json!({"n": 1.0, "e": 1e21})), r#"{"e":1e+21,"n":1}"#);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Limitations
//! * [`js_stringify`] writes object keys in `serde_json`'s order (sorted), where JavaScript
//!   keeps insertion order.
//! * [`locale_compare`] is the CLDR root collation, whatever the user's locale (pi-memory's
//!   `localeCompare` follows the locale of its Node process).
#![forbid(unsafe_code)]

mod collate;
mod date;
mod json;
mod string;

pub use collate::locale_compare;
pub use date::iso_millis;
pub use json::{js_number, js_stringify};
pub use string::{
    is_js_whitespace, js_trim, utf8_prefix, utf16_cmp, utf16_len, utf16_prefix, utf16_suffix,
};
