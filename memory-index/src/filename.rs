//! Entry file names (PM-14, PM-20..PM-22).

use sha2::{Digest, Sha256};

use memory_js::{is_js_whitespace, utf8_prefix};

/// The index file of a memory directory; never an entry, never overwritten by one.
pub const INDEX_FILE_NAME: &str = "MEMORY.md";

/// Extension of every entry file.
pub const ENTRY_EXT: &str = ".md";

/// Longest derived stem before the reserved-name prefix, in UTF-8 bytes.
pub const STEM_MAX_BYTES: usize = 100;

/// `/ \ : * ? " < > |`, U+0000–U+001F and U+007F.
fn is_unsafe(c: char) -> bool {
    matches!(
        c,
        '/' | '\\' | ':' | '*' | '?' | '"' | '<' | '>' | '|' | '\u{0}'..='\u{1F}' | '\u{7F}'
    )
}

/// True when the part of `stem` before its first `.` is a Windows device name
/// (`con prn aux nul com1-9 lpt1-9 conin$ conout$`, ASCII case-insensitive).
///
/// `CONSOLE`, `nul2`, `COM0` and `com10` are not reserved (VECTORS D17).
pub fn is_reserved_device_name(stem: &str) -> bool {
    let label = stem.split('.').next().unwrap_or(stem).to_ascii_lowercase();
    match label.as_str() {
        "con" | "prn" | "aux" | "nul" | "conin$" | "conout$" => true,
        _ => {
            let b = label.as_bytes();
            b.len() == 4
                && (label.starts_with("com") || label.starts_with("lpt"))
                && (b'1'..=b'9').contains(&b[3])
        }
    }
}

/// Derives the file name for a new entry from its name (PM-20, VECTORS D1–D28).
///
/// Unsafe characters become `_`; leading/trailing whitespace and dots are stripped; whitespace
/// runs become `-`; the stem is cut to 100 UTF-8 bytes on a character boundary; an empty stem
/// becomes `entry-<first 8 hex of sha256(name)>`; a reserved device stem gets a `_` prefix on
/// all platforms; `.md` is appended. Unicode (CJK, emoji) is kept.
///
// Decision (VECTORS D27/D28): peer quirks kept for byte-compatibility: the `_` prefix is added
// after the 100-byte cut (stem up to 101 bytes), and format characters such as U+200B are
// neither whitespace nor unsafe, so they survive.
pub fn entry_file_name(name: &str) -> String {
    let replaced: String = name
        .chars()
        .map(|c| if is_unsafe(c) { '_' } else { c })
        .collect();
    let cleaned = replaced.trim_matches(|c| is_js_whitespace(c) || c == '.');

    let mut collapsed = String::with_capacity(cleaned.len());
    let mut in_space = false;
    for c in cleaned.chars() {
        if is_js_whitespace(c) {
            if !in_space {
                collapsed.push('-');
            }
            in_space = true;
        } else {
            collapsed.push(c);
            in_space = false;
        }
    }
    let stem = utf8_prefix(&collapsed, STEM_MAX_BYTES);

    let mut out = if stem.is_empty() {
        let digest = Sha256::digest(name.as_bytes());
        let hex: String = digest[..4].iter().map(|b| format!("{b:02x}")).collect();
        format!("entry-{hex}")
    } else if is_reserved_device_name(stem) {
        format!("_{stem}")
    } else {
        stem.to_owned()
    };
    out.push_str(ENTRY_EXT);
    out
}

/// Picks a free file name: `derived`, else `stem-2.md`, `stem-3.md`, … (PM-21).
///
/// `is_taken` answers for names present on disk (the caller should also probe the file system,
/// which may be case-insensitive or Unicode-normalising). `MEMORY.md` is always taken, compared
/// ASCII case-insensitively so that a case-insensitive file system can never route an entry
/// onto the index (`memory` → `memory-2.md`; pi-memory compared exactly). The predicate must
/// eventually answer `false`, as any finite set of names does.
pub fn unique_file_name(derived: &str, mut is_taken: impl FnMut(&str) -> bool) -> String {
    let mut taken =
        |candidate: &str| candidate.eq_ignore_ascii_case(INDEX_FILE_NAME) || is_taken(candidate);
    if !taken(derived) {
        return derived.to_owned();
    }
    let (stem, ext) = match derived.strip_suffix(ENTRY_EXT) {
        Some(stem) => (stem, ENTRY_EXT),
        None => (derived, ""),
    };
    let mut n: u64 = 2;
    loop {
        let candidate = format!("{stem}-{n}{ext}");
        if !taken(&candidate) {
            return candidate;
        }
        n += 1;
    }
}

/// Whether a directory entry's file name can be an entry file (PM-14, name rule only): ends in
/// `.md`, is not `MEMORY.md`, is not a dotfile. The caller also requires a regular file and, on
/// Windows, skips device names ([`is_reserved_device_name`]).
pub fn is_entry_candidate(file_name: &str) -> bool {
    file_name.ends_with(ENTRY_EXT) && file_name != INDEX_FILE_NAME && !file_name.starts_with('.')
}
