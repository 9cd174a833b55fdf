//! Project key -> one directory name (PM-08, PM-09, PM-10).

use sha2::{Digest, Sha256};
use unicode_segmentation::UnicodeSegmentation;

use crate::Platform;

/// Names longer than this many UTF-8 bytes are shortened (PM-09).
pub const MAX_NAME_BYTES: usize = 120;
/// Bytes of the original name kept when shortening, before `__` + 8 hex digits.
pub const KEPT_BYTES: usize = 100;

/// Derives the directory name of a project key.
///
/// 1. split on `/` (Windows: `/` and `\`), dropping empty, `.` and `..` segments;
/// 2. escape `<>:"|?*` and U+0000..U+001F in each segment as `_xx` (lowercase hex);
/// 3. join with `__`; no segment left gives `root`;
/// 4. over 120 UTF-8 bytes: keep at most 100 bytes of whole grapheme clusters, then `__` and
///    the first 8 hex digits of sha256(key);
/// 5. Windows only: a trailing `.`/space becomes `_2e`/`_20`, then a `_` prefix is added when
///    the part before the first `.` is a reserved device name.
///
/// `_` is not escaped, so the mapping is not injective (`/home/a__b` and `/home/a/b` share a
/// name), exactly as in pi-memory. On POSIX the result has at most 120 bytes; on Windows step 5
/// can add up to 3 more (123).
///
/// ```
/// use memory_keys::{dir_name, Platform};
/// assert_eq!(dir_name("/home/yandy/proj/with:colon", Platform::Posix), "home__yandy__proj__with_3acolon");
/// assert_eq!(dir_name(r"C:\Users\yandy\proj.", Platform::Windows), "C_3a__Users__yandy__proj_2e");
/// ```
pub fn dir_name(key: &str, platform: Platform) -> String {
    let is_separator = |c: char| c == '/' || (platform == Platform::Windows && c == '\\');
    let mut joined = String::with_capacity(key.len() + 8);
    for segment in key
        .split(is_separator)
        .filter(|s| !s.is_empty() && *s != "." && *s != "..")
    {
        if !joined.is_empty() {
            joined.push_str("__");
        }
        escape_segment(segment, &mut joined);
    }
    if joined.is_empty() {
        joined.push_str("root");
    }
    if joined.len() > MAX_NAME_BYTES {
        joined = shorten(&joined, key);
    }
    match platform {
        Platform::Posix => joined,
        Platform::Windows => windows_safe_name(&joined),
    }
}

/// Appends `segment` with the characters Windows and most tools reject hex-escaped.
fn escape_segment(segment: &str, out: &mut String) {
    for c in segment.chars() {
        if matches!(c, '<' | '>' | ':' | '"' | '|' | '?' | '*') || c <= '\u{1f}' {
            out.push_str(&format!("_{:02x}", u32::from(c)));
        } else {
            out.push(c);
        }
    }
}

/// Decision (VECTORS §Z1): the cut is on a grapheme-cluster boundary, as the original's
/// spec and tests require (C4/C5: ZWJ families and flag pairs are never split), rather than
/// the code-point boundary its README mentions.
fn shorten(name: &str, key: &str) -> String {
    let mut kept = 0;
    for grapheme in name.graphemes(true) {
        if kept + grapheme.len() > KEPT_BYTES {
            break;
        }
        kept += grapheme.len();
    }
    format!("{}__{}", &name[..kept], &sha256_hex(key)[..8])
}

/// Lowercase hex sha256 of the UTF-8 bytes of `text`.
pub(crate) fn sha256_hex(text: &str) -> String {
    Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Whether Windows treats `name` as a device: the part before the first `.` is one of
/// `con prn aux nul com1-9 lpt1-9 conin$ conout$`, ASCII case-insensitively (`NUL.tar.gz`
/// is `NUL`).
pub fn is_reserved_windows_name(name: &str) -> bool {
    let base = name
        .split('.')
        .next()
        .unwrap_or_default()
        .to_ascii_lowercase();
    match base.as_str() {
        "con" | "prn" | "aux" | "nul" | "conin$" | "conout$" => true,
        _ => {
            let b = base.as_bytes();
            b.len() == 4
                && (base.starts_with("com") || base.starts_with("lpt"))
                && (b'1'..=b'9').contains(&b[3])
        }
    }
}

/// Finishes a name for Windows: a trailing `.` or space becomes `_2e` / `_20` (Windows strips
/// them silently), then a reserved device name gets a `_` prefix. The order is fixed so the
/// reserved check sees the final form (`aux.` -> `aux_2e`, not reserved any more).
pub fn windows_safe_name(name: &str) -> String {
    let escaped = if let Some(stem) = name.strip_suffix('.') {
        format!("{stem}_2e")
    } else if let Some(stem) = name.strip_suffix(' ') {
        format!("{stem}_20")
    } else {
        name.to_owned()
    };
    if is_reserved_windows_name(&escaped) {
        format!("_{escaped}")
    } else {
        escaped
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sha256_matches_the_legacy_reference_vector() {
        // VECTORS §C footnote: the 1.x directory of /home/yandy/workspace/scratch.
        assert_eq!(
            &sha256_hex("/home/yandy/workspace/scratch")[..12],
            "8ccae7f662b5"
        );
    }

    #[test]
    fn reserved_names() {
        for name in [
            "con",
            "NUL",
            "com1",
            "LPT9",
            "nul.tar.gz",
            "aux.md",
            "conin$",
            "CONOUT$.x",
        ] {
            assert!(is_reserved_windows_name(name), "{name}");
        }
        for name in [
            "CONSOLE", "nul2", "com0", "com10", "lpt", "_con", "", "x.con",
        ] {
            assert!(!is_reserved_windows_name(name), "{name}");
        }
    }

    #[test]
    fn windows_safe_name_escapes_one_trailing_char_then_prefixes() {
        assert_eq!(windows_safe_name("proj.."), "proj._2e");
        assert_eq!(windows_safe_name("con "), "con_20");
        assert_eq!(windows_safe_name("con.x"), "_con.x");
        assert_eq!(windows_safe_name("plain"), "plain");
    }
}
