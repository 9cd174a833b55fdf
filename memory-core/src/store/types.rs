//! The store's public values: requests, outcomes, versions and notices.

use std::fmt;
use std::str::FromStr;

use memory_index::{EntryMeta, EntryType};
use memory_lock::Holder;
use sha2::{Digest, Sha256};

/// The content version of an entry file: the first 8 bytes of the SHA-256 of its bytes,
/// shown as 16 lowercase hex digits.
///
/// Every read hands out the version of the bytes it parsed; `replace`, `remove` and `rename`
/// accept an expected version and fail with `Memory conflict: stale version` when the file
/// changed since (compare-and-swap). Atomic replacement gives every write new bytes, so two
/// different contents never share a version in practice.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Version([u8; 8]);

impl Version {
    /// The version of file bytes.
    pub fn of(bytes: &[u8]) -> Version {
        let digest = Sha256::digest(bytes);
        let mut out = [0u8; 8];
        out.copy_from_slice(&digest[..8]);
        Version(out)
    }

    /// The eight bytes of the version (for persisting it).
    pub fn to_bytes(self) -> [u8; 8] {
        self.0
    }

    /// The version of [`Version::to_bytes`].
    pub fn from_bytes(bytes: [u8; 8]) -> Version {
        Version(bytes)
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for b in self.0 {
            write!(f, "{b:02x}")?;
        }
        Ok(())
    }
}

impl fmt::Debug for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Version({self})")
    }
}

/// A string that is not 16 hexadecimal digits was given as a version.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid version {value:?}: expected 16 hexadecimal digits, as `list --json` prints them")]
pub struct ParseVersionError {
    /// The rejected text.
    pub value: String,
}

impl FromStr for Version {
    type Err = ParseVersionError;

    /// 16 hex digits, either case.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let err = || ParseVersionError {
            value: s.to_owned(),
        };
        if s.len() != 16 || !s.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(err());
        }
        let mut out = [0u8; 8];
        for (i, slot) in out.iter_mut().enumerate() {
            *slot = u8::from_str_radix(&s[2 * i..2 * i + 2], 16).map_err(|_| err())?;
        }
        Ok(Version(out))
    }
}

impl serde::Serialize for Version {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for Version {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

/// Something a write did besides the write itself, worth telling the user.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Notice {
    /// The `.lock` of a writer proven dead on this host was reclaimed.
    ReclaimedLock {
        /// The dead holder's record.
        holder: Holder,
    },
    /// After a reclaim, `MEMORY.md` lines left inconsistent by the interrupted write were
    /// repaired.
    RepairedIndex {
        /// How many lines changed.
        lines: usize,
    },
}

impl fmt::Display for Notice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Notice::ReclaimedLock { holder } => write!(
                f,
                "Reclaimed the memory lock left by {} — that process is gone.",
                holder.describe()
            ),
            Notice::RepairedIndex { lines } => write!(
                f,
                "Repaired {lines} MEMORY.md line(s) left inconsistent by the interrupted write."
            ),
        }
    }
}

/// One parseable entry file as read from disk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredEntry {
    /// File name inside the memory directory (`Use-real-DB.md`).
    pub file: String,
    /// The five frontmatter fields.
    pub meta: EntryMeta,
    /// The body (trimmed, as parsed).
    pub body: String,
    /// Content version of the file's bytes.
    pub version: Version,
}

/// Input of [`Store::add`](crate::Store::add).
#[derive(Debug, Clone, Default)]
pub struct AddRequest {
    /// Entry name (trimmed; the lookup key).
    pub name: String,
    /// One-line description; derived from the body when absent or blank.
    pub description: Option<String>,
    /// Type; kept from an existing same-named entry, else `feedback`.
    pub entry_type: Option<EntryType>,
    /// The body (required, trimmed).
    pub body: String,
    /// `created` for a new entry (`YYYY-MM-DD`; default today). Ignored on overwrite.
    pub created: Option<String>,
}

/// Input of [`Store::replace`](crate::Store::replace). Absent fields keep their current value.
#[derive(Debug, Clone, Default)]
pub struct ReplaceRequest {
    /// File name or exact name of the entry (PM-36).
    pub reference: String,
    /// New name (renames the file too).
    pub name: Option<String>,
    /// New description; when absent and a new body is given, derived from the body (PM-35).
    pub description: Option<String>,
    /// New type.
    pub entry_type: Option<EntryType>,
    /// New body.
    pub body: Option<String>,
    /// Fail with `Memory conflict: stale version` unless the entry is at this version.
    pub expected_version: Option<Version>,
}

/// Result of add, replace and rename.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WriteOutcome {
    /// The entry's name after the write.
    pub name: String,
    /// The entry's file after the write.
    pub file: String,
    /// The new version.
    pub version: Version,
    /// PM-30 warning when the index is over its write capacity.
    pub capacity_warning: Option<String>,
    /// Things the user should know (a reclaimed lock, an automatic repair).
    pub notices: Vec<Notice>,
}

/// Result of remove.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoveOutcome {
    /// Name of the removed entry.
    pub name: String,
    /// Its file (now deleted).
    pub file: String,
    /// Things the user should know.
    pub notices: Vec<Notice>,
}

/// Result of rebuild_index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RebuildOutcome {
    /// Entry lines written.
    pub entries: usize,
    /// Header lines kept or created.
    pub header_lines: usize,
    /// PM-30 warning.
    pub capacity_warning: Option<String>,
    /// Things the user should know.
    pub notices: Vec<Notice>,
}

impl WriteOutcome {
    /// `Saved "<name>" (<file>).` plus the capacity warning (PM-42).
    pub fn saved_text(&self) -> String {
        memory_index::with_capacity_warning(
            memory_index::saved_text(&self.name, &self.file),
            self.capacity_warning.as_deref(),
        )
    }

    /// `Replaced "<name>" (<file>).` plus the capacity warning.
    pub fn replaced_text(&self) -> String {
        memory_index::with_capacity_warning(
            memory_index::replaced_text(&self.name, &self.file),
            self.capacity_warning.as_deref(),
        )
    }

    /// `Renamed "<old>" → "<new>" (<file>).` plus the capacity warning.
    pub fn renamed_text(&self, old_name: &str) -> String {
        memory_index::with_capacity_warning(
            memory_index::renamed_text(old_name, &self.name, &self.file),
            self.capacity_warning.as_deref(),
        )
    }
}

impl RemoveOutcome {
    /// `Removed "<name>".`
    pub fn text(&self) -> String {
        memory_index::removed_text(&self.name)
    }
}

impl RebuildOutcome {
    /// `Rebuilt index: <n> entries (<h> header lines).` plus the capacity warning.
    pub fn text(&self) -> String {
        memory_index::with_capacity_warning(
            memory_index::rebuilt_text(self.entries, self.header_lines),
            self.capacity_warning.as_deref(),
        )
    }
}

/// `.dream-meta.json` (PM-69).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct DreamMeta {
    /// When the last successful dream finished.
    #[serde(rename = "lastDreamAt")]
    pub last_dream_at: String,
    /// How many sessions the project had then.
    #[serde(rename = "sessionCountAtDream")]
    pub session_count_at_dream: u64,
}

/// The injected index value and its window numbers (PM-56..58, the `Inject:` status line).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct IndexSection {
    /// The exact `memory_index` section value (windowed, then sanitised).
    pub value: String,
    /// Lines of the window (marker not counted).
    pub lines: usize,
    /// Bytes of the window (marker not counted).
    pub bytes: usize,
    /// Whether older lines were dropped.
    pub truncated: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_print_as_16_hex_digits_and_parse_back() {
        let v = Version::of(b"hello");
        let text = v.to_string();
        assert_eq!(text, "2cf24dba5fb0a30e");
        assert_eq!(text.parse::<Version>(), Ok(v));
        assert_eq!(text.to_uppercase().parse::<Version>(), Ok(v));
        for bad in [
            "",
            "../../",
            "2cf24dba5fb0a30",
            "2cf24dba5fb0a30e0",
            "zzf24dba5fb0a30e",
        ] {
            let err = bad.parse::<Version>().unwrap_err();
            assert!(err.to_string().contains("16 hexadecimal digits"), "{err}");
        }
        assert_eq!(
            serde_json::to_string(&v).unwrap(),
            "\"2cf24dba5fb0a30e\"".to_owned()
        );
    }
}
