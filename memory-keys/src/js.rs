//! The two JavaScript string semantics the original relies on, reproduced exactly.

use std::cmp::Ordering;

/// Whether `c` is removed by JavaScript's `String.prototype.trim` (WhiteSpace plus
/// LineTerminator). Differs from [`char::is_whitespace`]: U+FEFF is trimmed, U+0085 is not.
pub(crate) fn is_js_whitespace(c: char) -> bool {
    matches!(
        c,
        '\u{0009}'
            | '\u{000A}'
            | '\u{000B}'
            | '\u{000C}'
            | '\u{000D}'
            | '\u{0020}'
            | '\u{00A0}'
            | '\u{1680}'
            | '\u{2000}'
            ..='\u{200A}'
                | '\u{2028}'
                | '\u{2029}'
                | '\u{202F}'
                | '\u{205F}'
                | '\u{3000}'
                | '\u{FEFF}'
    )
}

/// `s.trim()` as JavaScript computes it.
pub(crate) fn js_trim(s: &str) -> &str {
    s.trim_matches(is_js_whitespace)
}

/// The order of JavaScript's default `Array.prototype.sort` on strings: UTF-16 code units.
/// It differs from Rust's byte order only between astral characters and U+E000..U+FFFF.
pub(crate) fn utf16_cmp(a: &str, b: &str) -> Ordering {
    a.encode_utf16().cmp(b.encode_utf16())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trim_matches_javascript_not_rust() {
        assert_eq!(js_trim("\u{FEFF} a \u{3000}\n"), "a");
        assert_eq!(js_trim("\u{0085}a"), "\u{0085}a");
    }

    #[test]
    fn utf16_order_puts_astral_before_private_use() {
        // U+1F600 is encoded as D83D DE00, which sorts before U+E000.
        assert_eq!(utf16_cmp("\u{1F600}", "\u{E000}"), Ordering::Less);
        assert_eq!("\u{1F600}".cmp("\u{E000}"), Ordering::Greater);
        assert_eq!(utf16_cmp("alpha", "zeta"), Ordering::Less);
    }
}
