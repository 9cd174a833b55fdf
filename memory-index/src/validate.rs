//! Write-side validation and description derivation (PM-32, PM-34).
//!
//! Only the write path validates; [`crate::parse_entry`] accepts whatever a hand-edited file
//! holds (e.g. `created: yesterday`, VECTORS E15).

use memory_js::{is_js_whitespace, js_trim, utf16_len, utf16_prefix};

/// A rejected `add`/`replace`/`rename` argument. `Display` is pi-memory's exact error text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ValidationError {
    /// The trimmed name is empty.
    #[error("name is required")]
    NameRequired,
    /// The name holds a line break.
    #[error("name must be a single line")]
    NameMultiline,
    /// The name holds `](`, which would forge the index line's name/file split.
    #[error("name must not contain ']('")]
    NameContainsLinkSyntax,
    /// The description holds a line break.
    #[error("description must be a single line")]
    DescriptionMultiline,
    /// The trimmed body is empty.
    #[error("body is required")]
    BodyRequired,
    /// `created` is not `YYYY-MM-DD`.
    #[error("created must be YYYY-MM-DD")]
    CreatedFormat,
}

/// Longest derived description, in UTF-16 code units (JavaScript `length`).
pub const DESCRIPTION_MAX_UNITS: usize = 200;

/// Characters that break a single-line field.
///
// Decision (VECTORS §E17/§G15): besides CR and LF we also reject U+2028 LINE SEPARATOR and
// U+2029 PARAGRAPH SEPARATOR. pi-memory accepted them, then its own parser (JavaScript `.`)
// stopped at them and the entry became invisible: "Saved" was reported for a memory that was
// lost. Rejecting them keeps every file we write readable by pi-memory 2.5 as well; the parser
// still reads such files (written by pi-memory) instead of hiding them.
fn is_line_break(c: char) -> bool {
    matches!(c, '\n' | '\r' | '\u{2028}' | '\u{2029}')
}

/// Trims a name and checks it: non-empty, single line, no `](` (PM-32). Returns the trimmed name.
pub fn validate_name(raw: &str) -> Result<String, ValidationError> {
    let name = js_trim(raw);
    if name.is_empty() {
        return Err(ValidationError::NameRequired);
    }
    if name.contains(is_line_break) {
        return Err(ValidationError::NameMultiline);
    }
    if name.contains("](") {
        return Err(ValidationError::NameContainsLinkSyntax);
    }
    Ok(name.to_owned())
}

/// Trims an optional description and checks it is a single line.
///
/// `None`, empty and blank all give `Ok(None)`: the caller then derives one with
/// [`derive_description`].
pub fn validate_description(raw: Option<&str>) -> Result<Option<String>, ValidationError> {
    let Some(raw) = raw else {
        return Ok(None);
    };
    let description = js_trim(raw);
    if description.contains(is_line_break) {
        return Err(ValidationError::DescriptionMultiline);
    }
    Ok((!description.is_empty()).then(|| description.to_owned()))
}

/// Trims a body and requires it to be non-empty.
pub fn validate_body(raw: &str) -> Result<String, ValidationError> {
    let body = js_trim(raw);
    if body.is_empty() {
        return Err(ValidationError::BodyRequired);
    }
    Ok(body.to_owned())
}

/// Checks `created` is exactly `YYYY-MM-DD` (ASCII digits; the calendar is not checked).
pub fn validate_created(s: &str) -> Result<(), ValidationError> {
    let b = s.as_bytes();
    let shape_ok = b.len() == 10
        && b.iter().enumerate().all(|(i, c)| match i {
            4 | 7 => *c == b'-',
            _ => c.is_ascii_digit(),
        });
    if shape_ok {
        Ok(())
    } else {
        Err(ValidationError::CreatedFormat)
    }
}

/// Length of a leading markdown marker `^\s*(#{1,6}\s+|[-*+]\s+|\d+[.)]\s+)`, if any.
fn markdown_marker_len(line: &str) -> Option<usize> {
    let rest = line.trim_start_matches(is_js_whitespace);
    let lead = line.len() - rest.len();
    let bytes = rest.as_bytes();
    let marker = match bytes.first()? {
        b'#' => {
            let hashes = bytes.iter().take_while(|b| **b == b'#').count();
            (hashes <= 6).then_some(hashes)?
        }
        b'-' | b'*' | b'+' => 1,
        b'0'..=b'9' => {
            let digits = bytes.iter().take_while(|b| b.is_ascii_digit()).count();
            matches!(bytes.get(digits), Some(b'.' | b')')).then_some(digits + 1)?
        }
        _ => return None,
    };
    let after = &rest[marker..];
    let spaces = after.len() - after.trim_start_matches(is_js_whitespace).len();
    (spaces > 0).then_some(lead + marker + spaces)
}

/// Derives a one-line description from a body (PM-34, VECTORS F).
///
/// First non-blank line, leading markdown marker removed, cut after the first `。！？!?.`,
/// trimmed, at most 200 UTF-16 units (199 + `…`, never splitting a surrogate pair); when that
/// is empty the `name` is returned instead. Like the original, `v1.2` ends at `v1.` (F11).
///
// Decision (VECTORS §Z8): the 200 limit counts UTF-16 code units like JavaScript `length`, so
// cuts match pi-memory; an astral character straddling the cut is dropped whole.
// Decision: lines are split at LF, CR, U+2028 and U+2029 (the original split at LF only), so a
// derived description can never carry a line break into the frontmatter.
pub fn derive_description(body: &str, name: &str) -> String {
    let first_line = body
        .split(is_line_break)
        .find(|line| !js_trim(line).is_empty())
        .unwrap_or("");
    let cleaned = js_trim(&first_line[markdown_marker_len(first_line).unwrap_or(0)..]);
    let sentence = match cleaned.find(['。', '！', '？', '!', '?', '.']) {
        Some(stop) => {
            let end = stop + cleaned[stop..].chars().next().map_or(0, char::len_utf8);
            js_trim(&cleaned[..end])
        }
        None => cleaned,
    };
    if sentence.is_empty() {
        return name.to_owned();
    }
    if utf16_len(sentence) <= DESCRIPTION_MAX_UNITS {
        return sentence.to_owned();
    }
    let mut out = utf16_prefix(sentence, DESCRIPTION_MAX_UNITS - 1).to_owned();
    out.push('…');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markdown_markers() {
        assert_eq!(markdown_marker_len("## x"), Some(3));
        assert_eq!(markdown_marker_len("  - x"), Some(4));
        assert_eq!(markdown_marker_len("12) x"), Some(4));
        assert_eq!(markdown_marker_len("1.x"), None);
        assert_eq!(markdown_marker_len("####### x"), None);
        assert_eq!(markdown_marker_len("###### x"), Some(7));
        assert_eq!(markdown_marker_len("-"), None);
        assert_eq!(markdown_marker_len("x"), None);
        assert_eq!(markdown_marker_len(""), None);
    }
}
