//! A reader for git's configuration file syntax, following git's own `config.c` parser
//! (`git_parse_source`, `get_base_var`, `get_value`, `parse_value`) so that every file git
//! accepts yields the same keys and values, and every file git rejects is rejected here.

use std::fmt;

/// One `key = value` line. `key` is canonical like git prints it: section and variable
/// lowercased, subsection as written. `value` is `None` for a bare `key` line (boolean true).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Entry {
    pub key: String,
    pub value: Option<String>,
}

impl Entry {
    /// The remote name when this is `remote.<name>.url` (git's `^remote\..*\.url$`).
    pub(crate) fn remote_url_name(&self) -> Option<&str> {
        self.key.strip_prefix("remote.")?.strip_suffix(".url")
    }
}

/// The file is not valid git configuration (git would refuse to run).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SyntaxError {
    /// 1-based line of the error.
    pub line: usize,
}

impl fmt::Display for SyntaxError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "bad config line {}", self.line)
    }
}

struct Source<'a> {
    data: &'a [u8],
    pos: usize,
    eof: bool,
    line: usize,
}

impl Source<'_> {
    /// git's `get_next_char`: CRLF reads as LF, end of input reads as a final LF.
    fn next(&mut self) -> u8 {
        let Some(&c) = self.data.get(self.pos) else {
            self.eof = true;
            return b'\n';
        };
        self.pos += 1;
        if c == b'\r' && self.data.get(self.pos) == Some(&b'\n') {
            self.pos += 1;
            self.line += 1;
            return b'\n';
        }
        if c == b'\n' {
            self.line += 1;
        }
        c
    }
}

/// git's `isspace` (sane_ctype): only these four.
fn is_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | b'\r')
}

fn is_key_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'-'
}

/// Parses a whole configuration file.
pub(crate) fn parse(data: &[u8]) -> Result<Vec<Entry>, SyntaxError> {
    if data.contains(&0) {
        // git reads keys and values as C strings; a NUL cannot round-trip. Treat as invalid so
        // the caller asks git itself.
        return Err(SyntaxError { line: 1 });
    }
    let data = data.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(data);
    let mut src = Source {
        data,
        pos: 0,
        eof: false,
        line: 1,
    };
    let mut entries = Vec::new();
    let mut section: Vec<u8> = Vec::new();
    let mut comment = false;
    loop {
        let c = src.next();
        if c == b'\n' {
            if src.eof {
                return Ok(entries);
            }
            comment = false;
            continue;
        }
        if comment || is_space(c) {
            continue;
        }
        if c == b'#' || c == b';' {
            comment = true;
            continue;
        }
        let error = SyntaxError { line: src.line };
        if c == b'[' {
            section.clear();
            if !base_var(&mut src, &mut section) || section.is_empty() {
                return Err(error);
            }
            continue;
        }
        if !c.is_ascii_alphabetic() {
            return Err(error);
        }
        let mut key = section.clone();
        if !key.is_empty() {
            key.push(b'.');
        }
        key.push(c.to_ascii_lowercase());
        let value = key_value(&mut src, &mut key).ok_or(error)?;
        entries.push(Entry {
            key: String::from_utf8_lossy(&key).into_owned(),
            value: value.map(|v| String::from_utf8_lossy(&v).into_owned()),
        });
    }
}

/// `[section]`, `[section "subsection"]` or the deprecated `[section.subsection]`.
fn base_var(src: &mut Source<'_>, name: &mut Vec<u8>) -> bool {
    loop {
        let c = src.next();
        if src.eof {
            return false;
        }
        if c == b']' {
            return true;
        }
        if is_space(c) {
            return extended_base_var(src, name, c);
        }
        if !is_key_char(c) && c != b'.' {
            return false;
        }
        name.push(c.to_ascii_lowercase());
    }
}

fn extended_base_var(src: &mut Source<'_>, name: &mut Vec<u8>, mut c: u8) -> bool {
    loop {
        if c == b'\n' {
            return false;
        }
        c = src.next();
        if !is_space(c) {
            break;
        }
    }
    if c != b'"' {
        return false;
    }
    name.push(b'.');
    loop {
        let mut c = src.next();
        if c == b'\n' {
            return false;
        }
        if c == b'"' {
            break;
        }
        if c == b'\\' {
            c = src.next();
            if c == b'\n' {
                return false;
            }
        }
        name.push(c);
    }
    src.next() == b']'
}

/// The rest of a variable line: more name characters, then `= value` or nothing.
/// `None` on a syntax error; `Some(None)` for a value-less (boolean) key.
fn key_value(src: &mut Source<'_>, key: &mut Vec<u8>) -> Option<Option<Vec<u8>>> {
    let mut c;
    loop {
        c = src.next();
        if src.eof || !is_key_char(c) {
            break;
        }
        key.push(c.to_ascii_lowercase());
    }
    while c == b' ' || c == b'\t' {
        c = src.next();
    }
    if c == b'\n' {
        return Some(None);
    }
    if c != b'=' {
        return None;
    }
    parse_value(src).map(Some)
}

/// git's `parse_value`: quotes, the escapes `\\ \" \n \t \b`, line continuations, comments,
/// and trimming of unquoted leading/trailing whitespace.
fn parse_value(src: &mut Source<'_>) -> Option<Vec<u8>> {
    let mut value = Vec::new();
    let mut quote = false;
    let mut comment = false;
    let mut trim_len = 0;
    loop {
        let mut c = src.next();
        if c == b'\n' {
            if quote {
                return None;
            }
            if trim_len > 0 {
                value.truncate(trim_len);
            }
            return Some(value);
        }
        if comment {
            continue;
        }
        if is_space(c) && !quote {
            if trim_len == 0 {
                trim_len = value.len();
            }
            if !value.is_empty() {
                value.push(c);
            }
            continue;
        }
        if !quote && (c == b';' || c == b'#') {
            comment = true;
            continue;
        }
        trim_len = 0;
        if c == b'\\' {
            c = src.next();
            c = match c {
                b'\n' => continue,
                b't' => b'\t',
                b'b' => 0x08,
                b'n' => b'\n',
                b'\\' | b'"' => c,
                _ => return None,
            };
            value.push(c);
            continue;
        }
        if c == b'"' {
            quote = !quote;
            continue;
        }
        value.push(c);
    }
}

/// git's boolean syntax (`git_parse_maybe_bool` + integers); `None` when not a boolean.
pub(crate) fn parse_bool(value: Option<&str>) -> Option<bool> {
    let Some(v) = value else {
        return Some(true);
    };
    match v.to_ascii_lowercase().as_str() {
        "true" | "yes" | "on" => Some(true),
        "false" | "no" | "off" | "" => Some(false),
        other => other.parse::<i64>().ok().map(|n| n != 0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn quote(text: &str) -> String {
        let mut out = String::from("\"");
        for c in text.chars() {
            match c {
                '\\' => out.push_str("\\\\"),
                '"' => out.push_str("\\\""),
                '\n' => out.push_str("\\n"),
                '\t' => out.push_str("\\t"),
                '\u{8}' => out.push_str("\\b"),
                c => out.push(c),
            }
        }
        out.push('"');
        out
    }

    proptest! {
        /// Any remote name (no newline) and any URL value (no NUL) written with git's quoting
        /// reads back exactly.
        #[test]
        fn quoted_sections_and_values_round_trip(
            name in "[^\n\u{0}]{0,20}",
            value in "[^\u{0}]{0,40}",
        ) {
            let subsection: String = name
                .chars()
                .flat_map(|c| match c {
                    '"' | '\\' => vec!['\\', c],
                    c => vec![c],
                })
                .collect();
            let text = format!("[remote \"{subsection}\"]\n\turl = {}\n", quote(&value));
            let entries = parse(text.as_bytes()).unwrap();
            prop_assert_eq!(entries.len(), 1);
            prop_assert_eq!(entries[0].remote_url_name(), Some(name.as_str()));
            prop_assert_eq!(entries[0].value.as_deref(), Some(value.as_str()));
        }
    }

    fn kv(data: &str) -> Vec<(String, Option<String>)> {
        parse(data.as_bytes())
            .unwrap()
            .into_iter()
            .map(|e| (e.key, e.value))
            .collect()
    }

    #[test]
    fn sections_subsections_and_case() {
        let got = kv("[Remote \"Origin\"]\n\tURL = https://x/o/r.git\n[remote.Up]\nurl=a\n");
        assert_eq!(
            got,
            vec![
                ("remote.Origin.url".into(), Some("https://x/o/r.git".into())),
                ("remote.up.url".into(), Some("a".into())),
            ]
        );
    }

    #[test]
    fn values_quotes_escapes_comments_and_continuations() {
        let got = kv(concat!(
            "[a]\n",
            "k1 = \"  quoted # not comment \" ; comment\n",
            "k2 = x\\\n  y\n",
            "k3 = tab\\there\n",
            "k4\n",
            "k5 =   trailing   \n",
            "k6 = in  side\r\n",
            "[b \"sub \\\"q\\\" \\x\"] k = same line\n",
        ));
        assert_eq!(
            got,
            vec![
                ("a.k1".into(), Some("  quoted # not comment ".into())),
                ("a.k2".into(), Some("x  y".into())),
                ("a.k3".into(), Some("tab\there".into())),
                ("a.k4".into(), None),
                ("a.k5".into(), Some("trailing".into())),
                ("a.k6".into(), Some("in  side".into())),
                ("b.sub \"q\" x.k".into(), Some("same line".into())),
            ]
        );
    }

    #[test]
    fn errors_where_git_errors() {
        for bad in [
            "[a]\nk = \"unterminated\n",
            "[a]\nk = bad\\escape\n",
            "[]\n",
            "[a \"x\"\n",
            "[a]\n1k = v\n",
            "[a]\nk v\n",
            "[a b]\n",
        ] {
            assert!(parse(bad.as_bytes()).is_err(), "{bad:?} should be rejected");
        }
    }

    #[test]
    fn bom_and_missing_final_newline() {
        assert_eq!(
            kv("\u{FEFF}[core]\nbare = false"),
            vec![("core.bare".into(), Some("false".into()))]
        );
    }

    #[test]
    fn remote_url_names() {
        let e = |k: &str| Entry {
            key: k.into(),
            value: None,
        };
        assert_eq!(e("remote.origin.url").remote_url_name(), Some("origin"));
        assert_eq!(e("remote.a.b.url").remote_url_name(), Some("a.b"));
        assert_eq!(e("remote..url").remote_url_name(), Some(""));
        assert_eq!(e("remote.url").remote_url_name(), None);
        assert_eq!(e("remote.origin.pushurl").remote_url_name(), None);
    }

    #[test]
    fn booleans() {
        assert_eq!(parse_bool(None), Some(true));
        assert_eq!(parse_bool(Some("Yes")), Some(true));
        assert_eq!(parse_bool(Some("0")), Some(false));
        assert_eq!(parse_bool(Some("2")), Some(true));
        assert_eq!(parse_bool(Some("maybe")), None);
    }
}
