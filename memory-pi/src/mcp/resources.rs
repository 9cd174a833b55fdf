//! The `pimem:` URI scheme: the index and one resource per entry.
//!
//! * `pimem://index`: the project's `MEMORY.md`, raw.
//! * `pimem://entry/<file>`: one entry file, raw; `<file>` is the entry's file name
//!   (`Use-real-DB.md`) percent-encoded: every byte except ASCII letters, digits and
//!   `-._~` (RFC 3986's unreserved set) becomes `%XX`, so names with spaces, `#`, `?`, `%` or
//!   any non-ASCII letter round-trip.
//!
//! Decision: entries are addressed by file name, not by memory name: the file is what the
//! resource's bytes are, it is unique in the directory and kept forever by the store (PM-22),
//! while a name can change case or be re-derived. The memory's name is the resource's
//! `name`/`title`, its description the resource's `description`, and its version the
//! `_meta.version` of both the listing and the read.

use memory_core::{INDEX_FILE, Store, Version};
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, percent_decode_str, utf8_percent_encode};

/// The URI of the index resource.
pub const INDEX_URI: &str = "pimem://index";

/// The prefix of entry resources.
pub const ENTRY_PREFIX: &str = "pimem://entry/";

/// Everything but RFC 3986's unreserved characters is encoded.
const SEGMENT: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// The URI of the entry stored in `file`.
pub fn entry_uri(file: &str) -> String {
    format!("{ENTRY_PREFIX}{}", utf8_percent_encode(file, SEGMENT))
}

/// What a `pimem:` URI names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// `MEMORY.md`.
    Index,
    /// The entry file of that name.
    Entry(String),
}

/// Parses a resource URI.
///
/// # Errors
/// A message naming what is wrong: another scheme or form, bad percent-encoding, or a
/// decoded name that is not a plain entry file name (a path, a dotfile, `MEMORY.md`, not
/// `.md`).
pub fn parse_uri(uri: &str) -> Result<Target, String> {
    if uri == INDEX_URI {
        return Ok(Target::Index);
    }
    let Some(encoded) = uri.strip_prefix(ENTRY_PREFIX) else {
        return Err(format!(
            "uri must be {INDEX_URI} or {ENTRY_PREFIX}<percent-encoded file name> (got \"{uri}\")"
        ));
    };
    let file = percent_decode_str(encoded)
        .decode_utf8()
        .map_err(|_| format!("uri: the file name of \"{uri}\" is not percent-encoded UTF-8"))?;
    let plain = !file.is_empty()
        && !file.starts_with('.')
        && !file.contains(['/', '\\', '\0'])
        && file.ends_with(".md")
        && file != INDEX_FILE;
    if !plain {
        return Err(format!(
            "uri: \"{file}\" is not an entry file name (a .md file directly in the memory directory)"
        ));
    }
    Ok(Target::Entry(file.into_owned()))
}

/// A resource's bytes as read.
#[derive(Debug, Clone)]
pub struct Read {
    /// The file's text, exactly.
    pub text: String,
    /// The version of those bytes (entries only).
    pub version: Option<Version>,
}

/// Why a read failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReadError {
    /// No such entry (or the index does not exist yet).
    NotFound(String),
    /// The file could not be read or is not UTF-8.
    Io(String),
}

/// Reads what `target` names from `store`: the exact bytes of the file.
pub fn read(store: &Store, target: &Target) -> Result<Read, ReadError> {
    match target {
        Target::Index => match store.read_index() {
            Ok(text) => Ok(Read {
                text,
                version: None,
            }),
            Err(e) => Err(ReadError::Io(e.to_string())),
        },
        Target::Entry(file) => {
            // Only files the store sees as entries are resources (PM-14/PM-17).
            let known = store
                .read(file)
                .map_err(|e| ReadError::Io(e.to_string()))?
                .is_some_and(|e| e.file == *file);
            if !known {
                return Err(ReadError::NotFound(format!(
                    "no memory is stored in \"{file}\""
                )));
            }
            let path = store.dir().join(file);
            let bytes = std::fs::read(&path).map_err(|e| match e.kind() {
                std::io::ErrorKind::NotFound => {
                    ReadError::NotFound(format!("no memory is stored in \"{file}\""))
                }
                _ => ReadError::Io(format!("reading {path}: {e}")),
            })?;
            let version = Version::of(&bytes);
            let text = String::from_utf8(bytes)
                .map_err(|_| ReadError::Io(format!("{path} is not valid UTF-8")))?;
            Ok(Read {
                text,
                version: Some(version),
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entry_uris_round_trip_through_percent_encoding() {
        for file in [
            "Use-real-DB.md",
            "a b#c?d%e.md",
            "数据库-连接.md",
            "emoji-🦀.md",
            "x~y_z.md",
        ] {
            let uri = entry_uri(file);
            assert!(uri.is_ascii(), "{uri}");
            assert!(!uri[ENTRY_PREFIX.len()..].contains(['/', ' ', '#', '?']));
            assert_eq!(parse_uri(&uri), Ok(Target::Entry(file.to_owned())));
        }
        assert_eq!(entry_uri("a b.md"), "pimem://entry/a%20b.md");
    }

    #[test]
    fn only_plain_entry_file_names_parse() {
        assert_eq!(parse_uri(INDEX_URI), Ok(Target::Index));
        for bad in [
            "pimem://entry/..%2Fsecret.md",
            "pimem://entry/a%2Fb.md",
            "pimem://entry/MEMORY.md",
            "pimem://entry/.lock",
            "pimem://entry/notes.txt",
            "pimem://entry/",
            "pimem://entry/%FF.md",
            "file:///etc/passwd",
            "pimem://index/x",
        ] {
            let err = parse_uri(bad).unwrap_err();
            assert!(err.starts_with("uri"), "{bad}: {err}");
        }
    }
}
