//! Strings: ECMAScript whitespace, UTF-16 lengths, cuts and order, UTF-8 byte cuts.

use std::cmp::Ordering;

/// ECMAScript `WhiteSpace` + `LineTerminator`: what `String.prototype.trim` strips and what
/// the regex class `\s` matches.
///
/// It differs from Rust's [`char::is_whitespace`] in two places: U+FEFF (BOM / ZWNBSP) *is*
/// whitespace here, U+0085 (NEL) is *not*.
pub fn is_js_whitespace(c: char) -> bool {
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
pub fn js_trim(s: &str) -> &str {
    s.trim_matches(is_js_whitespace)
}

/// Length in UTF-16 code units (JavaScript `length`).
pub fn utf16_len(s: &str) -> usize {
    s.chars().map(char::len_utf16).sum()
}

/// The longest prefix of whole characters with at most `max_units` UTF-16 code units
/// (JavaScript `slice(0, n)`, except that a surrogate pair at the cut is left out whole).
pub fn utf16_prefix(s: &str, max_units: usize) -> &str {
    let mut units = 0usize;
    for (i, c) in s.char_indices() {
        units += c.len_utf16();
        if units > max_units {
            return &s[..i];
        }
    }
    s
}

/// The longest suffix of whole characters with at most `max_units` UTF-16 code units
/// (JavaScript `slice(-n)`, never starting inside a surrogate pair).
pub fn utf16_suffix(s: &str, max_units: usize) -> &str {
    let mut units = 0usize;
    for (i, c) in s.char_indices().rev() {
        units += c.len_utf16();
        if units > max_units {
            return &s[i + c.len_utf8()..];
        }
    }
    s
}

/// The order of JavaScript's default `Array.prototype.sort` on strings: UTF-16 code units.
/// It differs from Rust's byte order only between astral characters and U+E000..U+FFFF.
pub fn utf16_cmp(a: &str, b: &str) -> Ordering {
    a.encode_utf16().cmp(b.encode_utf16())
}

/// The longest prefix of at most `max_bytes` UTF-8 bytes that ends on a character boundary
/// (`Buffer.byteLength`-based limits).
pub fn utf8_prefix(s: &str, max_bytes: usize) -> &str {
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
        assert!(is_js_whitespace('\u{FEFF}'));
        assert!(!'\u{FEFF}'.is_whitespace());
        assert!(!is_js_whitespace('\u{85}'));
        assert!('\u{85}'.is_whitespace());
        for c in [
            '\t', '\n', '\u{B}', '\u{C}', '\r', ' ', '\u{A0}', '\u{1680}', '\u{2000}', '\u{200A}',
            '\u{2028}', '\u{2029}', '\u{202F}', '\u{205F}', '\u{3000}',
        ] {
            assert!(is_js_whitespace(c), "{c:?}");
        }
        assert!(!is_js_whitespace('\u{200B}'));
        assert!(!is_js_whitespace('\u{180E}'));
    }

    #[test]
    fn js_trim_strips_bom_but_not_zero_width_space_or_nel() {
        assert_eq!(js_trim("\u{FEFF} a \u{3000}\n"), "a");
        assert_eq!(js_trim("\u{200B}a"), "\u{200B}a");
        assert_eq!(js_trim("\u{0085}a"), "\u{0085}a");
    }

    #[test]
    fn utf16_cuts_count_astral_chars_as_two_and_never_split_them() {
        assert_eq!(utf16_len("a😀"), 3);
        assert_eq!(utf16_prefix("a😀b", 1), "a");
        assert_eq!(utf16_prefix("a😀b", 2), "a");
        assert_eq!(utf16_prefix("a😀b", 3), "a😀");
        assert_eq!(utf16_prefix("a😀b", 99), "a😀b");
        assert_eq!(utf16_prefix("汉字", 1), "汉");
        assert_eq!(utf16_suffix("a😀b", 1), "b");
        assert_eq!(utf16_suffix("a😀b", 2), "b");
        assert_eq!(utf16_suffix("a😀b", 3), "😀b");
        assert_eq!(utf16_suffix("a😀b", 0), "");
    }

    #[test]
    fn utf16_order_puts_astral_before_private_use() {
        // U+1F600 is encoded as D83D DE00, which sorts before U+E000.
        assert_eq!(utf16_cmp("\u{1F600}", "\u{E000}"), Ordering::Less);
        assert_eq!("\u{1F600}".cmp("\u{E000}"), Ordering::Greater);
        assert_eq!(utf16_cmp("alpha", "zeta"), Ordering::Less);
    }

    #[test]
    fn utf8_prefix_cuts_on_a_boundary() {
        assert_eq!(utf8_prefix("abcd😀", 6), "abcd");
        assert_eq!(utf8_prefix("abc😀", 7), "abc😀");
        assert_eq!(utf8_prefix("汉", 2), "");
        assert_eq!(utf8_prefix("", 0), "");
    }

    proptest::proptest! {
        /// A prefix and the matching suffix never split a character and never exceed the
        /// budget; together they cover the string when the budget allows.
        #[test]
        fn cuts_stay_within_budget(s in "\\PC{0,40}", n in 0usize..60) {
            let p = utf16_prefix(&s, n);
            let q = utf16_suffix(&s, n);
            proptest::prop_assert!(s.starts_with(p) && s.ends_with(q));
            proptest::prop_assert!(utf16_len(p) <= n && utf16_len(q) <= n);
            proptest::prop_assert!(utf16_len(p) + 1 >= n.min(utf16_len(&s)));
            if utf16_len(&s) <= n {
                proptest::prop_assert_eq!(p, s.as_str());
                proptest::prop_assert_eq!(q, s.as_str());
            }
        }
    }
}
