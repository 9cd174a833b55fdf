//! The injection sanitiser (PM-59). Used only for text entering a prompt, never on disk.

use unicode_properties::{GeneralCategory, UnicodeGeneralCategory};

/// Removes every Unicode `Cf` (format) character and neutralises angle brackets.
///
/// `<` → `&lt;`, `>` → `&gt;`; `&` is deliberately left alone so the function is idempotent
/// (a replayed, already-sanitised value must not drift to `&amp;lt;`). Zero-width characters,
/// the BOM, bidi controls, LRM/RLM, soft hyphen and word joiner are all `Cf`; newlines, tabs
/// and spaces are not, so layout survives. The `Cf` set is the one of the Unicode version
/// shipped by `unicode-properties`, which may differ from a given Node.js build's.
pub fn sanitize_for_injection(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            c if c.general_category() == GeneralCategory::Format => {}
            c => out.push(c),
        }
    }
    out
}
