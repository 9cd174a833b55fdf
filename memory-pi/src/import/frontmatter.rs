//! Markdown files with YAML frontmatter, as other tools write them.
//!
//! Unlike pi-memory's own line-based codec (`memory_index::parse_entry`, PM-15..PM-18), the
//! frontmatter here is real YAML parsed with `yaml_serde`: quoted values (`"a: b"`), block
//! scalars (`>` and `|` multi-line descriptions), numbers and dates all read as their text.
//! Lenient on what it does not know: unknown keys (`metadata`, `tags`, `originSessionId`, ...)
//! are ignored, except `metadata.type`, where some Claude Code versions put the type.

use yaml_serde::Value;

/// The fields an importer uses, as text.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Fields {
    /// `name`.
    pub name: Option<String>,
    /// `description`.
    pub description: Option<String>,
    /// `type`, else `metadata.type`.
    pub entry_type: Option<String>,
    /// `created`.
    pub created: Option<String>,
}

/// A file split into frontmatter fields and body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Document {
    /// The frontmatter's fields (all `None` without frontmatter).
    pub fields: Fields,
    /// Whether the file had a frontmatter block.
    pub has_frontmatter: bool,
    /// Everything after the closing `---` line, exactly as in the file (line endings
    /// included); the whole text (minus a BOM) without frontmatter.
    pub body: String,
}

/// Splits and parses `text`. A leading UTF-8 BOM is dropped (it is encoding, not content);
/// the opening and closing delimiters are lines that are exactly `---` (a trailing `\r` or
/// blanks allowed), and `...` also closes, as in YAML.
///
/// # Errors
/// An unterminated frontmatter block, YAML that does not parse (with its line and column),
/// a frontmatter that is not a mapping, or a known field that is not a scalar.
pub fn parse(text: &str) -> Result<Document, String> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let Some((yaml, body)) = split(text)? else {
        return Ok(Document {
            fields: Fields::default(),
            has_frontmatter: false,
            body: text.to_owned(),
        });
    };
    let value: Value = if yaml.trim().is_empty() {
        Value::Null
    } else {
        yaml_serde::from_str(yaml).map_err(|e| format!("invalid YAML frontmatter: {e}"))?
    };
    let map = match value {
        Value::Mapping(map) => map,
        Value::Null => yaml_serde::Mapping::new(),
        _ => return Err("the frontmatter is not a mapping of keys to values".to_owned()),
    };
    let field = |key: &str| -> Result<Option<String>, String> {
        match map.get(key) {
            None => Ok(None),
            Some(v) => {
                scalar(v).map_err(|kind| format!("frontmatter field {key} is {kind}, not text"))
            }
        }
    };
    let mut entry_type = field("type")?;
    if entry_type.is_none()
        && let Some(Value::Mapping(meta)) = map.get("metadata")
        && let Some(v) = meta.get("type")
    {
        entry_type = scalar(v)
            .map_err(|kind| format!("frontmatter field metadata.type is {kind}, not text"))?;
    }
    Ok(Document {
        fields: Fields {
            name: field("name")?,
            description: field("description")?,
            entry_type,
            created: field("created")?,
        },
        has_frontmatter: true,
        body: body.to_owned(),
    })
}

/// A scalar's text; `Err` names the kind of a non-scalar.
fn scalar(v: &Value) -> Result<Option<String>, &'static str> {
    match v {
        Value::Null => Ok(None),
        Value::String(s) => Ok(Some(s.clone())),
        Value::Number(n) => Ok(Some(n.to_string())),
        Value::Bool(b) => Ok(Some(b.to_string())),
        Value::Tagged(t) => scalar(&t.value),
        Value::Sequence(_) => Err("a list"),
        Value::Mapping(_) => Err("a mapping"),
    }
}

/// The frontmatter text and the body, or `None` when the file has no frontmatter.
fn split(text: &str) -> Result<Option<(&str, &str)>, String> {
    let Some(first_end) = text.find('\n') else {
        return Ok(None);
    };
    if text[..first_end].trim_end() != "---" {
        return Ok(None);
    }
    let yaml_start = first_end + 1;
    let mut pos = yaml_start;
    while pos <= text.len() {
        let line_end = text[pos..].find('\n').map_or(text.len(), |i| pos + i);
        let line = text[pos..line_end].trim_end();
        if line == "---" || line == "..." {
            let body_start = (line_end + 1).min(text.len());
            return Ok(Some((&text[yaml_start..pos], &text[body_start..])));
        }
        if line_end == text.len() {
            break;
        }
        pos = line_end + 1;
    }
    Err("the frontmatter has no closing --- line".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn odd_yaml_reads_as_text() {
        let doc = parse(
            "---\nname: \"Deploy: staging\"\ndescription: >\n  Staging deploys need\n  the VPN up.\ntype: project\ncreated: 2024-05-01\nextra:\n  - ignored\n---\nBody line\n",
        )
        .unwrap();
        assert_eq!(doc.fields.name.as_deref(), Some("Deploy: staging"));
        assert_eq!(
            doc.fields.description.as_deref(),
            Some("Staging deploys need the VPN up.\n")
        );
        assert_eq!(doc.fields.entry_type.as_deref(), Some("project"));
        assert_eq!(doc.fields.created.as_deref(), Some("2024-05-01"));
        assert_eq!(doc.body, "Body line\n");
    }

    #[test]
    fn bom_crlf_and_metadata_type() {
        let doc = parse("\u{feff}---\r\nname: n\r\nmetadata:\r\n  type: user\r\n---\r\nA\r\nB\r\n")
            .unwrap();
        assert_eq!(doc.fields.name.as_deref(), Some("n"));
        assert_eq!(doc.fields.entry_type.as_deref(), Some("user"));
        assert_eq!(doc.body, "A\r\nB\r\n");
    }

    #[test]
    fn no_frontmatter_is_all_body_and_bad_yaml_is_an_error() {
        let doc = parse("# Title\n\ntext\n").unwrap();
        assert!(!doc.has_frontmatter);
        assert_eq!(doc.body, "# Title\n\ntext\n");
        assert!(
            parse("---\nname: [unclosed\n---\nx")
                .unwrap_err()
                .contains("invalid YAML")
        );
        assert!(
            parse("---\nname: a\nno end")
                .unwrap_err()
                .contains("closing")
        );
        assert!(
            parse("---\nname: [a, b]\n---\n")
                .unwrap_err()
                .contains("name is a list")
        );
        assert!(
            parse("---\n- a\n---\n")
                .unwrap_err()
                .contains("not a mapping")
        );
    }
}
