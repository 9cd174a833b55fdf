//! The frozen `memory_index` section: what the extension records, and how a recorded or
//! transcript-replayed value is recovered (PM-57).

use memory_core::IndexSection;
use memory_index::INDEX_TRUNCATION_MARKER;
use serde_json::Value;

use super::protocol::SectionRecord;

/// The section name in `systemPromptOptions.sections`.
pub(super) const SECTION_NAME: &str = "memory_index";

/// The `customType` of the extension's `pi.appendEntry` record.
pub(super) const RECORD_TYPE: &str = "pimem-memory-index";

/// The record the extension appends (`data` of the custom entry): the value plus the window
/// numbers, so `/memory`'s `Inject:` line is exact after a replay too.
pub(super) fn record(s: &IndexSection) -> SectionRecord {
    SectionRecord {
        value: s.value.clone(),
        lines: s.lines,
        bytes: s.bytes,
        truncated: s.truncated,
    }
}

/// The empty section (no index, or no store).
pub(super) fn empty() -> IndexSection {
    IndexSection {
        value: String::new(),
        lines: 0,
        bytes: 0,
        truncated: false,
    }
}

/// Recovers a section from a recorded entry's `data` (ours: an object with `value`; a bare
/// string is accepted too). `None` when it holds no string value.
pub(super) fn from_record(data: &Value) -> Option<IndexSection> {
    let value = match data {
        Value::String(s) => s.clone(),
        Value::Object(o) => o.get("value")?.as_str()?.to_owned(),
        _ => return None,
    };
    let mut s = derived(value);
    if let Some(o) = data.as_object() {
        let num = |k: &str| o.get(k).and_then(Value::as_u64).map(|n| n as usize);
        if let (Some(lines), Some(bytes)) = (num("lines"), num("bytes")) {
            s.lines = lines;
            s.bytes = bytes;
        }
        if let Some(t) = o.get("truncated").and_then(Value::as_bool) {
            s.truncated = t;
        }
    }
    Some(s)
}

/// Replays pi's recorded system-prompt patches in branch order (PM-57): a `null` deletes the
/// section, a string sets it (one `<memory_index>\n…\n</memory_index>` wrapper stripped).
/// `None` when no patch ever touched the section or the last one deleted it.
pub(super) fn from_patches(patches: &[Value]) -> Option<IndexSection> {
    let mut current: Option<String> = None;
    let mut touched = false;
    for p in patches {
        match p.get(SECTION_NAME) {
            None => {}
            Some(Value::Null) => {
                touched = true;
                current = None;
            }
            Some(Value::String(s)) => {
                touched = true;
                current = Some(unwrap_tags(s).to_owned());
            }
            Some(_) => {}
        }
    }
    if !touched {
        return None;
    }
    current.map(derived)
}

/// Strips exactly one `<memory_index>\n…\n</memory_index>` wrapper, if present.
pub(super) fn unwrap_tags(s: &str) -> &str {
    let open = "<memory_index>\n";
    let close = "\n</memory_index>";
    match s.strip_prefix(open).and_then(|r| r.strip_suffix(close)) {
        Some(inner) => inner,
        None => match s.strip_prefix("<memory_index>\n</memory_index>") {
            Some("") => "",
            _ => s,
        },
    }
}

/// Window numbers derived from a value alone (a record without numbers, or a transcript
/// patch): the marker line is not counted. Sanitising may have lengthened `<`/`>`, so bytes
/// can exceed the window's true size for such values (documented limitation).
fn derived(value: String) -> IndexSection {
    let (truncated, body) = match value.strip_prefix(INDEX_TRUNCATION_MARKER) {
        Some(rest) => (true, rest.strip_prefix('\n').unwrap_or(rest)),
        None => (false, value.as_str()),
    };
    let lines = if body.is_empty() {
        0
    } else {
        body.split('\n').count()
    };
    let bytes = body.len();
    IndexSection {
        lines,
        bytes,
        truncated,
        value,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn record_json(s: &IndexSection) -> Value {
        serde_json::to_value(record(s)).unwrap()
    }

    #[test]
    fn patches_replay_with_null_deletes_and_string_sets() {
        let p = |v: Value| json!({ "memory_index": v, "other": "x" });
        assert_eq!(from_patches(&[]), None);
        assert_eq!(from_patches(&[json!({"tools": "t"})]), None);
        let s = from_patches(&[p(json!("<memory_index>\nA\n</memory_index>"))]).unwrap();
        assert_eq!(s.value, "A");
        assert_eq!((s.lines, s.bytes, s.truncated), (1, 1, false));
        let s = from_patches(&[
            p(json!("<memory_index>\nA\n</memory_index>")),
            p(Value::Null),
            p(json!(
                "<memory_index>\n- [B](b.md) — b\n- [C](c.md) — c\n</memory_index>"
            )),
        ])
        .unwrap();
        assert_eq!(s.value, "- [B](b.md) — b\n- [C](c.md) — c");
        assert_eq!(s.lines, 2);
        assert_eq!(
            from_patches(&[
                p(json!("<memory_index>\nA\n</memory_index>")),
                p(Value::Null)
            ]),
            None
        );
    }

    #[test]
    fn only_one_wrapper_is_stripped() {
        assert_eq!(unwrap_tags("<memory_index>\nA\n</memory_index>"), "A");
        assert_eq!(
            unwrap_tags("<memory_index>\n<memory_index>\nA\n</memory_index>\n</memory_index>"),
            "<memory_index>\nA\n</memory_index>"
        );
        assert_eq!(unwrap_tags("plain"), "plain");
        assert_eq!(unwrap_tags("<memory_index>\n</memory_index>"), "");
    }

    #[test]
    fn records_round_trip_and_foreign_values_get_derived_numbers() {
        let s = IndexSection {
            value: format!("{INDEX_TRUNCATION_MARKER}\n- [A](a.md) — &lt;x&gt;"),
            lines: 1,
            bytes: 19,
            truncated: true,
        };
        assert_eq!(from_record(&record_json(&s)), Some(s.clone()));
        let bare = from_record(&json!(s.value)).unwrap();
        assert_eq!((bare.lines, bare.truncated), (1, true));
        assert_eq!(bare.bytes, "- [A](a.md) — &lt;x&gt;".len());
        assert_eq!(from_record(&json!({ "value": 3 })), None);
        assert_eq!(from_record(&Value::Null), None);
        let empty = from_record(&json!({ "value": "" })).unwrap();
        assert_eq!((empty.lines, empty.bytes), (0, 0));
    }

    proptest::proptest! {
        /// pi renders a section as `<memory_index>\n{value}\n</memory_index>`; replaying
        /// that patch gives the value back, and so does our own record.
        #[test]
        fn replay_inverts_pis_rendering(value in ".{0,200}") {
            let rendered = format!("<memory_index>\n{value}\n</memory_index>");
            let s = from_patches(&[json!({ "memory_index": rendered })]).unwrap();
            proptest::prop_assert_eq!(&s.value, &value);
            let rec = from_record(&record_json(&s)).unwrap();
            proptest::prop_assert_eq!(rec, s);
        }
    }
}
