//! Tidy checks, run as ordinary tests (`cargo test -p xtask tidy`), like rust-analyzer's.
//!
//! The code cites the compatibility rules by id: behaviour lines `PM-36`, `PS-20`, `PA-48`,
//! `PX-02` (docs/compat/features.md) and vectors `VECTORS K`, `VECTORS §M`, `VECTORS D36`,
//! `VECTORS §A41-A53`, `§Z 8` (docs/compat/vectors.md); the table tests in a crate's
//! `vectors.rs` carry the row id as the first tuple field, `("A14", …)`. These checks keep
//! every such citation resolvable inside the repository:
//!
//! * [`citations_resolve_in_docs_compat`]: every id cited in a `*.rs`, `*.ts`, `*.mjs` or `*.md`
//!   file (outside `target/`, `node_modules/`, the fuzz corpora and `docs/compat/` itself) is
//!   defined in docs/compat, reported as `file:line: ID`;
//! * [`docs_compat_defines_each_id_once_and_without_gaps`]: ids are defined once, numbered
//!   from 1 without gaps per family, and every row's section exists;
//! * [`nothing_outside_docs_points_at_the_shared_spec`]: the shared spec documents the rules
//!   were first written in are not part of the repository, so nothing outside `docs/` may
//!   send a reader there.
//!
//! The scanner is hand-written (xtask depends on `anyhow` only). It is deliberately narrow so
//! that ordinary text is never taken for a citation: a bare `A14` counts only after
//! `VECTORS ` or `§`, or as `("A14",` in a `vectors.rs` test table; `§` must be followed by an
//! upper-case section letter (`docs/pi-host.md §h` is not a vector citation).
//!
//! This file is skipped by the citation scan: its own tests spell out citations that must not
//! resolve.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

/// The documents that define ids, relative to the repository root.
const FEATURES: &str = "docs/compat/features.md";
const VECTORS: &str = "docs/compat/vectors.md";

/// Directories never walked, by name anywhere in the tree.
const SKIP_DIR_NAMES: &[&str] = &["target", "node_modules"];
/// Directories never walked, by path from the repository root.
const SKIP_DIRS: &[&str] = &[
    "fuzz/corpus",
    "fuzz/regressions",
    "fuzz/artifacts",
    "docs/compat",
];
/// Files never scanned for citations (this one spells out unresolvable ones in its tests).
const SKIP_FILES: &[&str] = &["xtask/src/tidy.rs"];
/// Extensions of the files scanned for citations.
const CITING_EXTENSIONS: &[&str] = &["rs", "ts", "mjs", "md"];

/// One compatibility id.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Id {
    /// A behaviour line of features.md: `PM-36` is `Line { prefix: "PM", n: 36 }`.
    Line { prefix: String, n: u32 },
    /// A section of vectors.md: `VECTORS §A`, `VECTORS K`, `§PS`.
    Section(String),
    /// A row of vectors.md: `A14` is `Row { section: "A", n: 14 }`, `PS-V9` is
    /// `Row { section: "PS", n: 9 }`, the ambiguity `§Z 8` is `Row { section: "Z", n: 8 }`.
    Row { section: String, n: u32 },
}

impl Id {
    /// The family whose numbers must run from 1 without gaps.
    fn family(&self) -> Option<String> {
        match self {
            Id::Line { prefix, .. } => Some(format!("{prefix}-")),
            Id::Row { section, .. } => Some(section.clone()),
            Id::Section(_) => None,
        }
    }

    fn number(&self) -> Option<u32> {
        match self {
            Id::Line { n, .. } | Id::Row { n, .. } => Some(*n),
            Id::Section(_) => None,
        }
    }
}

impl fmt::Display for Id {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Id::Line { prefix, n } => write!(f, "{prefix}-{n:02}"),
            Id::Section(s) => write!(f, "VECTORS §{s}"),
            Id::Row { section, n } if section.len() == 2 => write!(f, "{section}-V{n}"),
            Id::Row { section, n } => write!(f, "{section}{n}"),
        }
    }
}

// ------------------------------------------------------------------------------- scanner

fn is_word(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

fn at(b: &[u8], i: usize) -> u8 {
    b.get(i).copied().unwrap_or(0)
}

fn starts(b: &[u8], i: usize, s: &str) -> bool {
    b.get(i..)
        .is_some_and(|rest| rest.starts_with(s.as_bytes()))
}

fn skip_spaces(b: &[u8], mut i: usize) -> usize {
    while at(b, i) == b' ' || at(b, i) == b'\t' {
        i += 1;
    }
    i
}

/// Up to three ASCII digits at `i` that are not followed by a word character.
fn number(b: &[u8], i: usize) -> Option<(u32, usize)> {
    let mut j = i;
    while at(b, j).is_ascii_digit() {
        j += 1;
    }
    if j == i || j - i > 3 || is_word(at(b, j)) {
        return None;
    }
    let digits = std::str::from_utf8(&b[i..j]).ok()?;
    Some((digits.parse().ok()?, j))
}

/// Length of a range separator at `i`: `..`, `-` or `–` (U+2013).
fn range_separator(b: &[u8], i: usize) -> Option<usize> {
    if starts(b, i, "..") {
        Some(2)
    } else if starts(b, i, "-") {
        Some(1)
    } else if starts(b, i, "–") {
        Some("–".len())
    } else {
        None
    }
}

/// The two-letter sibling prefix at `i` (`PS`, `PA`, `PX`), if any.
fn sibling_prefix(b: &[u8], i: usize) -> Option<&'static str> {
    ["PS", "PA", "PX"].into_iter().find(|p| starts(b, i, p))
}

/// A behaviour id `PM-36` or a sibling vector row `PS-V9` at `i` (the caller checks the word
/// boundary before it). Returns the id and where it ends.
fn parse_line_id(b: &[u8], i: usize) -> Option<(Id, usize)> {
    let prefix = ["PM", "PS", "PA", "PX"]
        .into_iter()
        .find(|p| starts(b, i, p))?;
    if at(b, i + 2) != b'-' {
        return None;
    }
    if prefix != "PM" && at(b, i + 3) == b'V' {
        let (n, end) = number(b, i + 4)?;
        return Some((row(prefix, n), end));
    }
    let (n, end) = number(b, i + 3)?;
    let id = Id::Line {
        prefix: prefix.to_owned(),
        n,
    };
    Some((id, end))
}

fn row(section: &str, n: u32) -> Id {
    Id::Row {
        section: section.to_owned(),
        n,
    }
}

/// One vector item at `i`: `§A`, `K`, `A14`, `§Z 8`, `§Z3`, `PS-V9`, `§PS`. A space between
/// the letter and the number is accepted only after `§`.
fn parse_item(b: &[u8], i: usize) -> Option<(Id, usize)> {
    let section_sign = starts(b, i, "§");
    let p = if section_sign { i + "§".len() } else { i };
    if let Some(prefix) = sibling_prefix(b, p) {
        if at(b, p + 2) == b'-' && at(b, p + 3) == b'V' {
            let (n, end) = number(b, p + 4)?;
            return Some((row(prefix, n), end));
        }
        if !is_word(at(b, p + 2)) {
            return Some((Id::Section(prefix.to_owned()), p + 2));
        }
    }
    let letter = at(b, p);
    if !letter.is_ascii_uppercase() {
        return None;
    }
    let section = char::from(letter).to_string();
    let next = at(b, p + 1);
    if next.is_ascii_digit() {
        let (n, end) = number(b, p + 1)?;
        return Some((row(&section, n), end));
    }
    if section_sign && next == b' ' && at(b, p + 2).is_ascii_digit() {
        let (n, end) = number(b, p + 2)?;
        return Some((row(&section, n), end));
    }
    if is_word(next) {
        return None;
    }
    Some((Id::Section(section), p + 1))
}

/// The ids from `a` to `b` when they form a range (`D1–D28`, `PM-45..PM-47`, `D–L`), else both.
fn expand(a: Id, b: Id) -> Vec<Id> {
    match (&a, &b) {
        (Id::Row { section: s, n: x }, Id::Row { section: t, n: y })
            if s == t && x < y && y - x <= 200 =>
        {
            (*x..=*y).map(|n| row(s, n)).collect()
        }
        (Id::Line { prefix: p, n: x }, Id::Line { prefix: q, n: y })
            if p == q && x < y && y - x <= 200 =>
        {
            (*x..=*y)
                .map(|n| Id::Line {
                    prefix: p.clone(),
                    n,
                })
                .collect()
        }
        (Id::Section(s), Id::Section(t)) if s.len() == 1 && t.len() == 1 && s < t => {
            let (from, to) = (s.as_bytes()[0], t.as_bytes()[0]);
            (from..=to)
                .map(|c| Id::Section(char::from(c).to_string()))
                .collect()
        }
        _ => vec![a, b],
    }
}

/// A behaviour id and its continuations: `PM-45..PM-47`, `PM-65..68`, `PM-35/37`.
fn scan_lines_at(b: &[u8], i: usize, out: &mut Vec<(usize, Id)>) {
    let Some((first, mut end)) = parse_line_id(b, i) else {
        return;
    };
    let mut last = first.clone();
    out.push((i, first));
    loop {
        let (is_range, sep) = match range_separator(b, end) {
            Some(len) => (true, len),
            None if at(b, end) == b'/' => (false, 1),
            None => break,
        };
        let start = end + sep;
        let next = match parse_line_id(b, start) {
            Some(found) => Some(found),
            None => number(b, start).and_then(|(n, e)| match &last {
                Id::Line { prefix, .. } => Some((
                    Id::Line {
                        prefix: prefix.clone(),
                        n,
                    },
                    e,
                )),
                Id::Row { section, .. } => Some((row(section, n), e)),
                Id::Section(_) => None,
            }),
        };
        let Some((id, e)) = next else { break };
        let ids = if is_range {
            expand(last.clone(), id.clone())
        } else {
            vec![id.clone()]
        };
        out.extend(ids.into_iter().map(|x| (start, x)));
        last = id;
        end = e;
    }
}

/// A list of vector items starting at `i`: `§A/§B/§C`, `D1–D28`, `I and J`, `M13/M14`,
/// `G (store level), D29-D37, F13, Q`. Stops at the first thing that is not an item.
fn scan_items_at(b: &[u8], mut i: usize, out: &mut Vec<(usize, Id)>) {
    while let Some((item, end)) = parse_item(b, i) {
        out.push((i, item.clone()));
        let mut pos = end;
        if let Some(len) = range_separator(b, pos)
            && let Some((last, e)) = parse_item(b, pos + len)
        {
            out.extend(expand(item, last).into_iter().map(|x| (pos + len, x)));
            pos = e;
        }
        // A short parenthetical remark on the same line: `G (store level), …`.
        let p = skip_spaces(b, pos);
        if at(b, p) == b'(' {
            let close = b[p..]
                .iter()
                .take(200)
                .position(|&c| c == b')' || c == b'\n');
            if let Some(k) = close
                && b[p + k] == b')'
            {
                pos = p + k + 1;
            }
        }
        let p = skip_spaces(b, pos);
        let after_separator = if at(b, p) == b',' || at(b, p) == b'/' {
            p + 1
        } else if starts(b, p, "and ") {
            p + 3
        } else {
            return;
        };
        let mut q = skip_spaces(b, after_separator);
        if starts(b, q, "and ") {
            q = skip_spaces(b, q + 3);
        }
        i = q;
    }
}

/// Every citation in `text` as (1-based line, id), sorted and without duplicates.
/// `vector_table`: the text is a `tests/…/vectors.rs`, where `("A14",` cites row A14.
fn scan(text: &str, vector_table: bool) -> Vec<(usize, Id)> {
    let b = text.as_bytes();
    let mut found = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let boundary = i == 0 || !is_word(b[i - 1]);
        if starts(b, i, "§") {
            scan_items_at(b, i, &mut found);
        } else if boundary && starts(b, i, "VECTORS") && !is_word(at(b, i + 7)) {
            let mut p = i + "VECTORS".len();
            if starts(b, p, ".md") {
                p += 3;
            }
            let q = skip_spaces(b, p);
            if q > p {
                let mut r = q;
                for word in ["sections ", "section ", "rows ", "row "] {
                    if starts(b, r, word) {
                        r = skip_spaces(b, r + word.len());
                        break;
                    }
                }
                if starts(b, r, "of ") {
                    r = skip_spaces(b, r + 3);
                }
                scan_items_at(b, r, &mut found);
            }
        } else if boundary && at(b, i) == b'P' {
            scan_lines_at(b, i, &mut found);
        } else if vector_table && b[i] == b'(' && (i == 0 || !is_word(b[i - 1])) {
            let mut p = i + 1;
            while at(b, p).is_ascii_whitespace() {
                p += 1;
            }
            if at(b, p) == b'"'
                && let Some((id @ Id::Row { .. }, end)) = parse_item(b, p + 1)
                && at(b, end) == b'"'
            {
                let mut q = end + 1;
                while at(b, q).is_ascii_whitespace() {
                    q += 1;
                }
                if at(b, q) == b',' {
                    found.push((p + 1, id));
                }
            }
        }
        i += 1;
    }
    let newlines: Vec<usize> = b
        .iter()
        .enumerate()
        .filter(|(_, c)| **c == b'\n')
        .map(|(k, _)| k)
        .collect();
    let line_of = |offset: usize| newlines.partition_point(|&k| k < offset) + 1;
    let unique: BTreeSet<(usize, Id)> = found
        .into_iter()
        .map(|(offset, id)| (line_of(offset), id))
        .collect();
    unique.into_iter().collect()
}

// --------------------------------------------------------------------------- definitions

/// A whole token that is an id: `PM-36`, `A14`, `PS-V9`, `Z1`, and sections only as `§A`.
fn parse_id_token(token: &str) -> Option<Id> {
    let b = token.as_bytes();
    let (id, end) = parse_line_id(b, 0).or_else(|| parse_item(b, 0))?;
    if end != b.len() || (matches!(id, Id::Section(_)) && !token.starts_with('§')) {
        return None;
    }
    Some(id)
}

/// Ids a compat document defines, with their 1-based line: a heading whose first word is
/// the id (`## §A — …`, `### Z1 — …`), a list item `- **PM-36** …`, or a table row whose
/// first cell is the id (`| A14 | … |`).
fn definitions(text: &str) -> Vec<(usize, Id)> {
    let mut out = Vec::new();
    for (k, line) in text.lines().enumerate() {
        let token = if line.starts_with('#') {
            line.trim_start_matches('#')
                .split_whitespace()
                .next()
                .map(|t| t.trim_end_matches(['.', ':']))
        } else if let Some(rest) = line.strip_prefix("- **") {
            rest.split("**").next()
        } else if let Some(rest) = line.strip_prefix('|') {
            rest.split('|')
                .next()
                .map(|cell| cell.trim().trim_matches('*').trim_matches('`'))
        } else {
            None
        };
        if let Some(id) = token.and_then(parse_id_token) {
            out.push((k + 1, id));
        }
    }
    out
}

// -------------------------------------------------------------------------------- files

fn root() -> PathBuf {
    super::project_root()
}

fn relative(root: &Path, path: &Path) -> String {
    let rel = path.strip_prefix(root).unwrap_or(path);
    rel.components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}

/// Every regular file under `dir`, sorted, minus the skipped directories; symlinks are not
/// followed.
fn walk(root: &Path, dir: &Path, out: &mut Vec<PathBuf>) -> Result<()> {
    let mut entries = fs::read_dir(dir)
        .with_context(|| format!("reading {}", dir.display()))?
        .collect::<std::io::Result<Vec<_>>>()
        .with_context(|| format!("reading {}", dir.display()))?;
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let path = entry.path();
        let kind = entry
            .file_type()
            .with_context(|| format!("stat {}", path.display()))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if kind.is_dir() {
            let rel = relative(root, &path);
            if name.starts_with('.')
                || SKIP_DIR_NAMES.contains(&name.as_str())
                || SKIP_DIRS.contains(&rel.as_str())
            {
                continue;
            }
            walk(root, &path, out)?;
        } else if kind.is_file() {
            out.push(path);
        }
    }
    Ok(())
}

fn files() -> Result<(PathBuf, Vec<PathBuf>)> {
    let root = root();
    let mut out = Vec::new();
    walk(&root, &root, &mut out)?;
    Ok((root, out))
}

/// Every id defined in docs/compat, with where it is defined (`file:line`).
fn defined_ids(root: &Path) -> Result<Vec<(String, Id)>> {
    let mut out = Vec::new();
    for doc in [FEATURES, VECTORS] {
        let text = fs::read_to_string(root.join(doc)).with_context(|| format!("reading {doc}"))?;
        out.extend(
            definitions(&text)
                .into_iter()
                .map(|(line, id)| (format!("{doc}:{line}"), id)),
        );
    }
    Ok(out)
}

// -------------------------------------------------------------------------------- checks

#[test]
fn citations_resolve_in_docs_compat() -> Result<()> {
    let (root, files) = files()?;
    let defined: BTreeSet<Id> = defined_ids(&root)?.into_iter().map(|(_, id)| id).collect();
    if defined.is_empty() {
        bail!("{FEATURES} and {VECTORS} define no ids");
    }
    let mut unresolved = Vec::new();
    let mut citations = 0;
    for path in &files {
        let rel = relative(&root, path);
        let cites = path
            .extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| CITING_EXTENSIONS.contains(&e));
        if !cites || SKIP_FILES.contains(&rel.as_str()) {
            continue;
        }
        let Ok(text) = fs::read_to_string(path) else {
            continue;
        };
        let vector_table = rel.ends_with("/vectors.rs") && rel.split('/').any(|c| c == "tests");
        for (line, id) in scan(&text, vector_table) {
            citations += 1;
            if !defined.contains(&id) {
                unresolved.push(format!("{rel}:{line}: {id}"));
            }
        }
    }
    if !unresolved.is_empty() {
        bail!(
            "{} of {citations} citations are not defined in docs/compat (add them to {FEATURES} \
             or {VECTORS}, see docs/compat/README.md):\n{}",
            unresolved.len(),
            unresolved.join("\n")
        );
    }
    Ok(())
}

#[test]
fn docs_compat_defines_each_id_once_and_without_gaps() -> Result<()> {
    let defined = defined_ids(&root())?;
    let mut problems = Vec::new();
    let mut first: BTreeMap<&Id, &str> = BTreeMap::new();
    for (place, id) in &defined {
        if let Some(earlier) = first.insert(id, place) {
            problems.push(format!("{place}: {id} is already defined at {earlier}"));
        }
    }
    let mut families: BTreeMap<String, BTreeSet<u32>> = BTreeMap::new();
    for (_, id) in &defined {
        if let (Some(family), Some(n)) = (id.family(), id.number()) {
            families.entry(family).or_default().insert(n);
        }
    }
    for (family, numbers) in &families {
        let max = numbers.iter().max().copied().unwrap_or(0);
        let missing: Vec<String> = (1..=max)
            .filter(|n| !numbers.contains(n))
            .map(|n| n.to_string())
            .collect();
        if !missing.is_empty() {
            problems.push(format!(
                "{family}: numbers {} are missing",
                missing.join(", ")
            ));
        }
    }
    for (place, id) in &defined {
        if let Id::Row { section, .. } = id
            && !first.contains_key(&Id::Section(section.clone()))
        {
            problems.push(format!(
                "{place}: {id} belongs to an undefined section §{section}"
            ));
        }
    }
    if !problems.is_empty() {
        bail!("docs/compat ids:\n{}", problems.join("\n"));
    }
    Ok(())
}

#[test]
fn nothing_outside_docs_points_at_the_shared_spec() -> Result<()> {
    // Built from two halves so that this file does not match itself.
    let needle = concat!("shared", "/spec");
    let (root, files) = files()?;
    let mut hits = Vec::new();
    for path in &files {
        let rel = relative(&root, path);
        if rel.starts_with("docs/") {
            continue;
        }
        let Ok(text) = fs::read_to_string(path) else {
            continue;
        };
        for (k, line) in text.lines().enumerate() {
            if line.contains(needle) {
                hits.push(format!("{rel}:{}: {}", k + 1, line.trim()));
            }
        }
    }
    if !hits.is_empty() {
        bail!(
            "the shared spec directory is outside the repository; cite docs/compat instead:\n{}",
            hits.join("\n")
        );
    }
    Ok(())
}

// ------------------------------------------------------------------- the scanner itself

fn ids(found: &[(usize, Id)]) -> Vec<String> {
    found
        .iter()
        .map(|(line, id)| format!("{line}:{id}"))
        .collect()
}

#[test]
fn scanner_reads_every_citation_form() {
    let text = "\
/// Tool texts (PM-31, PM-39..PM-40, VECTORS Q). Pure.
// Decision (VECTORS §Z 9): see PM-65..66 and PM-35/37.
//! VECTORS §A41-A43, §E17/§G15, VECTORS I and J, §Z3
// VECTORS G (store level), D29-D30, H4/H5, Q, plus the rest
//! Table tests for VECTORS.md sections D–F and PS-V9.
";
    assert_eq!(
        ids(&scan(text, false)),
        [
            "1:PM-31",
            "1:PM-39",
            "1:PM-40",
            "1:VECTORS §Q",
            "2:PM-35",
            "2:PM-37",
            "2:PM-65",
            "2:PM-66",
            "2:Z9",
            "3:VECTORS §I",
            "3:VECTORS §J",
            "3:A41",
            "3:A42",
            "3:A43",
            "3:E17",
            "3:G15",
            "3:Z3",
            "4:VECTORS §G",
            "4:VECTORS §Q",
            "4:D29",
            "4:D30",
            "4:H4",
            "4:H5",
            "5:VECTORS §D",
            "5:VECTORS §E",
            "5:VECTORS §F",
            "5:PS-V9",
        ]
    );
}

#[test]
fn scanner_ignores_look_alikes() {
    let text = "\
see pi-host.md §h and §e; NPM-12, APM-3, PM-1234, PM-x
check(\"E2: the search text\"); A14 alone; VECTORS.md (input tables)
let l = line(\"A2\", \"a2.md\", \"A\"); VECTORS Items; PS-Vx
";
    assert_eq!(ids(&scan(text, false)), Vec::<String>::new());
    assert_eq!(ids(&scan(text, true)), Vec::<String>::new());
}

#[test]
fn scanner_reads_vector_table_rows_only_in_tables() {
    let text = "const T: &[(&str, &str)] = &[\n    (\n        \"A14\",\n        \"x\",\n    ),\n    (\"B7\", \"y\"),\n];\nassert_eq!(a, b, \"E1\");\n";
    assert_eq!(ids(&scan(text, true)), ["3:A14", "6:B7"]);
    assert_eq!(ids(&scan(text, false)), Vec::<String>::new());
}

#[test]
fn definitions_are_headings_bold_items_and_first_cells() {
    let text = "\
# Title
### A. Directory identity
- **PM-01** [S] The memory root.
- PM-02 is only mentioned here.
## §A — Remotes
| Row | What | Where |
|---|---|---|
| A1 | https | `REMOTES` |
| `A2` | http | x |
### Z1 — Truncation
text mentioning A3 and §B
";
    assert_eq!(
        ids(&definitions(text)),
        ["3:PM-01", "5:VECTORS §A", "8:A1", "9:A2", "10:Z1"]
    );
}
