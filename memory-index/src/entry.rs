//! Entry files: the line-based frontmatter codec (PM-15..PM-18).
//!
//! The format is pi-memory's own, *not* YAML: values are written raw (no quoting, no
//! escaping) and read back as "everything after `key:` on that line, trimmed".

use std::borrow::Cow;
use std::fmt;
use std::str::FromStr;

use memory_js::js_trim;

/// The four kinds of memory entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub enum EntryType {
    /// Facts about the user (role, preferences).
    User,
    /// Guidance the user gave about how to work (the default).
    #[default]
    Feedback,
    /// Facts about the project.
    Project,
    /// Pointers to external resources.
    Reference,
}

impl EntryType {
    /// All types, in the order pi-memory lists them.
    pub const ALL: [EntryType; 4] = [
        EntryType::User,
        EntryType::Feedback,
        EntryType::Project,
        EntryType::Reference,
    ];

    /// The exact lowercase spelling used in files and tool parameters.
    pub fn as_str(self) -> &'static str {
        match self {
            EntryType::User => "user",
            EntryType::Feedback => "feedback",
            EntryType::Project => "project",
            EntryType::Reference => "reference",
        }
    }
}

impl fmt::Display for EntryType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A `type` value that is not one of the four exact lowercase names.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("type must be one of: user, feedback, project, reference")]
pub struct ParseEntryTypeError {
    /// The rejected value.
    pub value: String,
}

impl FromStr for EntryType {
    type Err = ParseEntryTypeError;

    /// Exact, case-sensitive match (`Feedback` is rejected, like the original's `includes`).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        EntryType::ALL
            .into_iter()
            .find(|t| t.as_str() == s)
            .ok_or_else(|| ParseEntryTypeError {
                value: s.to_owned(),
            })
    }
}

/// The frontmatter of an entry file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EntryMeta {
    /// The entry's name (single line, trimmed, non-empty).
    pub name: String,
    /// One-line description shown in `MEMORY.md` (may be empty).
    pub description: String,
    /// The entry's type.
    pub entry_type: EntryType,
    /// Creation day, `YYYY-MM-DD` when written by the store (not checked by the parser).
    pub created: String,
    /// Last modification, ISO-8601 with milliseconds and `Z` when written by the store.
    pub modified: String,
}

/// A parsed entry file: frontmatter plus trimmed body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// The frontmatter.
    pub meta: EntryMeta,
    /// The body after the closing `---` line, trimmed.
    pub body: String,
}

/// CRLF and lone CR become LF; borrows when there is no `\r` at all.
pub fn normalize_newlines(text: &str) -> Cow<'_, str> {
    if !text.contains('\r') {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\r' {
            if chars.peek() == Some(&'\n') {
                chars.next();
            }
            out.push('\n');
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// Serialises an entry file (PM-15).
///
/// `---\nname: N\ndescription: D\ntype: T\ncreated: C\nmodified: M\n---\n\nBODY\n`, or
/// `---\n…\n---\n` when the trimmed body is empty. Values are written raw; the body's line
/// endings are normalised to LF first (writes always emit LF), then it is trimmed.
/// Callers validate the fields first ([`crate::validate_name`] and friends): a value holding a
/// line break would not survive [`parse_entry`].
pub fn render_entry(meta: &EntryMeta, body: &str) -> String {
    let body = normalize_newlines(body);
    let body = js_trim(&body);
    let mut out = String::with_capacity(
        64 + meta.name.len()
            + meta.description.len()
            + meta.created.len()
            + meta.modified.len()
            + body.len(),
    );
    for (key, value) in [
        ("name", meta.name.as_str()),
        ("description", meta.description.as_str()),
        ("type", meta.entry_type.as_str()),
        ("created", meta.created.as_str()),
        ("modified", meta.modified.as_str()),
    ] {
        if out.is_empty() {
            out.push_str("---\n");
        }
        out.push_str(key);
        out.push_str(": ");
        out.push_str(value);
        out.push('\n');
    }
    out.push_str("---\n");
    if !body.is_empty() {
        out.push('\n');
        out.push_str(body);
        out.push('\n');
    }
    out
}

/// One frontmatter line `^[A-Za-z_][A-Za-z0-9_]*:[ \t]*(.*)$` → (key, trimmed value).
///
// Decision (VECTORS §E17): U+2028/U+2029 are ordinary characters here. JavaScript's `.` stops
// at them, so pi-memory made such files silently invisible (a defect); we read them. We never
// write them in a name or description (see `validate`), so our files stay readable by 2.5.
fn parse_field(line: &str) -> Option<(&str, &str)> {
    let colon = line.find(':')?;
    let key = &line[..colon];
    let mut bytes = key.bytes();
    let first = bytes.next()?;
    if !(first.is_ascii_alphabetic() || first == b'_') {
        return None;
    }
    if !bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_') {
        return None;
    }
    Some((key, js_trim(&line[colon + 1..])))
}

/// Parses an entry file (PM-16..PM-18); `None` means "not an entry" (silently invisible).
///
/// Line endings are normalised first. The text must start with `---\n`; the frontmatter ends
/// at the first `\n---` after it (any line starting with `---`). Keys are matched exactly
/// (case-sensitive), the last duplicate wins, unknown keys are ignored. `name`, `created` and
/// `modified` must be non-empty, `type` one of the four names, and the `description` key must
/// be present (its value may be empty). The body is everything after the closing delimiter
/// line, trimmed. A leading BOM makes the file invisible, like the original (VECTORS E10).
pub fn parse_entry(text: &str) -> Option<Entry> {
    let raw = normalize_newlines(text);
    let raw: &str = &raw;
    if !raw.starts_with("---\n") {
        return None;
    }
    let end = 4 + raw[4..].find("\n---")?;

    let mut name = None;
    let mut description = None;
    let mut entry_type = None;
    let mut created = None;
    let mut modified = None;
    for line in raw[4..end].split('\n') {
        let Some((key, value)) = parse_field(line) else {
            continue;
        };
        let slot = match key {
            "name" => &mut name,
            "description" => &mut description,
            "type" => &mut entry_type,
            "created" => &mut created,
            "modified" => &mut modified,
            _ => continue,
        };
        *slot = Some(value);
    }

    let name = name.unwrap_or_default();
    let created = created.unwrap_or_default();
    let modified = modified.unwrap_or_default();
    if name.is_empty() || created.is_empty() || modified.is_empty() {
        return None;
    }
    let entry_type = entry_type.unwrap_or_default().parse::<EntryType>().ok()?;
    let description = description?;

    let body = match raw[end + 1..].find('\n') {
        Some(pos) => js_trim(&raw[end + 1 + pos + 1..]),
        None => "",
    };
    Some(Entry {
        meta: EntryMeta {
            name: name.to_owned(),
            description: description.to_owned(),
            entry_type,
            created: created.to_owned(),
            modified: modified.to_owned(),
        },
        body: body.to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalize_newlines_handles_crlf_lone_cr_and_borrows_lf() {
        assert!(matches!(normalize_newlines("a\nb"), Cow::Borrowed(_)));
        assert_eq!(normalize_newlines("a\r\nb\rc\r\r\n"), "a\nb\nc\n\n");
    }

    #[test]
    fn parse_field_follows_the_identifier_rule() {
        assert_eq!(parse_field("name: A"), Some(("name", "A")));
        assert_eq!(parse_field("_x1:\t v "), Some(("_x1", "v")));
        assert_eq!(parse_field("1x: v"), None);
        assert_eq!(parse_field("na me: v"), None);
        assert_eq!(parse_field(": v"), None);
        assert_eq!(parse_field("url: http://x"), Some(("url", "http://x")));
    }

    #[test]
    fn entry_type_round_trips_and_rejects_other_spellings() {
        for t in EntryType::ALL {
            assert_eq!(t.as_str().parse::<EntryType>(), Ok(t));
        }
        assert!("Feedback".parse::<EntryType>().is_err());
        assert_eq!(EntryType::default(), EntryType::Feedback);
    }
}
