//! The few JavaScript string semantics the original relies on, made explicit.
//!
//! pi-memory is TypeScript: its `trim()` and regex `\s` use the ECMAScript whitespace set, its
//! `length`/`slice` count UTF-16 code units, and its byte limits use `Buffer.byteLength` (UTF-8).
//! Every format rule in this crate goes through these helpers so the choice is made once.

/// ECMAScript `WhiteSpace` + `LineTerminator` (what `String.prototype.trim` strips and what the
/// regex class `\s` matches).
///
/// It differs from Rust's [`char::is_whitespace`] in two places: U+FEFF (BOM / ZWNBSP) *is*
/// whitespace here, U+0085 (NEL) is *not*.
pub(crate) fn is_js_space(c: char) -> bool {
    matches!(
        c,
        '\u{9}'..='\u{D}'
            | ' '
            | '\u{A0}'
            | '\u{1680}'
            | '\u{2000}'..='\u{200A}'
            | '\u{2028}'
            | '\u{2029}'
            | '\u{202F}'
            | '\u{205F}'
            | '\u{3000}'
            | '\u{FEFF}'
    )
}

/// `String.prototype.trim`.
pub(crate) fn js_trim(s: &str) -> &str {
    s.trim_matches(is_js_space)
}

/// Length in UTF-16 code units (JavaScript `length`).
pub(crate) fn utf16_len(s: &str) -> usize {
    s.chars().map(char::len_utf16).sum()
}

/// The longest prefix of at most `max_units` UTF-16 code units that does not split a character.
///
/// JavaScript's `slice(0, n)` would keep half of a surrogate pair at the cut; we cut before it.
pub(crate) fn utf16_prefix(s: &str, max_units: usize) -> &str {
    let mut units = 0usize;
    for (i, c) in s.char_indices() {
        units += c.len_utf16();
        if units > max_units {
            return &s[..i];
        }
    }
    s
}

/// The longest prefix of at most `max_bytes` UTF-8 bytes that ends on a character boundary.
pub(crate) fn utf8_prefix(s: &str, max_bytes: usize) -> &str {
    if s.len() <= max_bytes {
        return s;
    }
    let mut end = max_bytes;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn js_whitespace_set_differs_from_rust_on_bom_and_nel() {
        assert!(is_js_space('\u{FEFF}'));
        assert!(!'\u{FEFF}'.is_whitespace());
        assert!(!is_js_space('\u{85}'));
        assert!('\u{85}'.is_whitespace());
        for c in [
            '\t', '\n', '\u{B}', '\u{C}', '\r', ' ', '\u{A0}', '\u{3000}', '\u{2028}',
        ] {
            assert!(is_js_space(c), "{c:?}");
        }
        assert!(!is_js_space('\u{200B}'));
    }

    #[test]
    fn js_trim_strips_bom_but_not_zero_width_space() {
        assert_eq!(js_trim("\u{FEFF} a \u{3000}"), "a");
        assert_eq!(js_trim("\u{200B}a"), "\u{200B}a");
    }

    #[test]
    fn utf16_prefix_counts_astral_chars_as_two_and_never_splits_them() {
        assert_eq!(utf16_len("a😀"), 3);
        assert_eq!(utf16_prefix("a😀b", 1), "a");
        assert_eq!(utf16_prefix("a😀b", 2), "a");
        assert_eq!(utf16_prefix("a😀b", 3), "a😀");
        assert_eq!(utf16_prefix("a😀b", 99), "a😀b");
        assert_eq!(utf16_prefix("汉字", 1), "汉");
    }

    #[test]
    fn utf8_prefix_cuts_on_a_boundary() {
        assert_eq!(utf8_prefix("abcd😀", 6), "abcd");
        assert_eq!(utf8_prefix("abc😀", 7), "abc😀");
        assert_eq!(utf8_prefix("汉", 2), "");
        assert_eq!(utf8_prefix("", 0), "");
    }
}
