//! Typed, tolerant view of one line of a pi session file.
//!
//! pi 1.6.0 writes one JSON object per line (`JSON.stringify`, no pretty printing): a
//! `{"type":"session",…}` header first, then entries `{type,id,parentId,timestamp,…}`
//! (`docs/pi-host.md` §h). This module turns one such line into a [`SessionEntry`]
//! that borrows its strings from the line whenever JSON escaping allows it.
//!
//! Tolerance rules, so that a newer pi or a hand-edited file never makes a whole session
//! unreadable:
//! - unknown entry `type`s become [`SessionEntry::Other`], unknown roles [`Role::Other`];
//! - unknown fields are ignored;
//! - a known field holding an unexpected JSON type (say `"name": 3`) reads as absent;
//! - content blocks other than `{"type":"text","text":…}` (thinking, tool calls, images) are
//!   skipped;
//! - a line that is not a JSON object at all (a torn last line, garbage) is an
//!   [`EntryError`]; the callers skip such lines, as pi does.

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

use serde::Deserialize;
use serde::de::value::MapAccessDeserializer;
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

/// Visitor methods that accept every other JSON value and map it to the "ignored" value
/// (`Self::Value::default()`), consuming nested arrays and objects.
macro_rules! ignore_non_matching {
    () => {
        ignore_non_matching!(@num);
        ignore_non_matching!(@map);
        ignore_non_matching!(@seq);
        ignore_non_matching!(@rest Default::default());
    };
    (no_int) => {
        ignore_non_matching!(@map);
        ignore_non_matching!(@seq);
        ignore_non_matching!(@rest Default::default());
    };
    (no_map) => {
        ignore_non_matching!(@num);
        ignore_non_matching!(@seq);
        ignore_non_matching!(@rest Default::default());
    };
    (present) => {
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
            Ok(Texts { present: true, texts: Vec::new() })
        }
        ignore_non_matching!(@num_v Texts { present: true, texts: Vec::new() });
        ignore_non_matching!(@rest Texts { present: true, texts: Vec::new() });
    };
    (@num) => {
        ignore_non_matching!(@num_v Default::default());
    };
    (@num_v $v:expr) => {
        fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
            Ok($v)
        }
        fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
            Ok($v)
        }
        fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
            Ok($v)
        }
    };
    (@map) => {
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
            Ok(Default::default())
        }
    };
    (@seq) => {
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
            while seq.next_element::<IgnoredAny>()?.is_some() {}
            Ok(Default::default())
        }
    };
    (@rest $v:expr) => {
        fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
            Ok($v)
        }
        fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok($v)
        }
        fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok($v)
        }
    };
}

/// The first line of a session file: `{"type":"session","version":3,"id":…,"timestamp":…,"cwd":…}`.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionHeader<'a> {
    /// Format version (`3` for pi 1.6.0; v1 files have none).
    pub version: Option<f64>,
    /// The session id (UUIDv7-like, or whatever `--session-id` set).
    pub id: Cow<'a, str>,
    /// Creation time as written (ISO 8601), if present.
    pub timestamp: Option<Cow<'a, str>>,
    /// Working directory the session belongs to, if it is a string.
    pub cwd: Option<Cow<'a, str>>,
    /// Absolute path of the session this one was forked from.
    pub parent_session: Option<Cow<'a, str>>,
}

/// Fields shared by every non-header entry.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct EntryMeta<'a> {
    /// Entry id (8 hex characters in pi 1.6.0).
    pub id: Option<Cow<'a, str>>,
    /// Parent entry id; `None` for a root entry (or when absent).
    pub parent_id: Option<Cow<'a, str>>,
    /// Entry creation time as written (ISO 8601).
    pub timestamp: Option<Cow<'a, str>>,
}

/// Role of a `message` entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Role<'a> {
    /// A user prompt.
    User,
    /// A model reply.
    Assistant,
    /// Output of a tool call.
    ToolResult,
    /// Prompt state (`sections`, `toolsAdded`, …); never searched.
    System,
    /// A user `!command` run.
    BashExecution,
    /// An extension message (`pi.sendMessage`), model context like `custom_message`.
    Custom,
    /// A role this reader does not know, kept verbatim.
    Other(Cow<'a, str>),
}

impl<'a> Role<'a> {
    fn from_wire(role: Option<Cow<'a, str>>) -> Self {
        match role.as_deref() {
            Some("user") => Role::User,
            Some("assistant") => Role::Assistant,
            Some("toolResult") => Role::ToolResult,
            Some("system") => Role::System,
            Some("bashExecution") => Role::BashExecution,
            Some("custom") => Role::Custom,
            _ => Role::Other(role.unwrap_or(Cow::Borrowed(""))),
        }
    }

    fn into_owned(self) -> Role<'static> {
        match self {
            Role::User => Role::User,
            Role::Assistant => Role::Assistant,
            Role::ToolResult => Role::ToolResult,
            Role::System => Role::System,
            Role::BashExecution => Role::BashExecution,
            Role::Custom => Role::Custom,
            Role::Other(r) => Role::Other(Cow::Owned(r.into_owned())),
        }
    }
}

/// A `message` entry.
#[derive(Debug, Clone, PartialEq)]
pub struct MessageEntry<'a> {
    /// Shared entry fields.
    pub meta: EntryMeta<'a>,
    /// Who produced the message.
    pub role: Role<'a>,
    /// The message's text: a string `content` as one item, or every `text` block in order.
    pub texts: Vec<Cow<'a, str>>,
    /// Whether the message object has a `content` key at all (pi's `isMessageWithContent`).
    pub has_content: bool,
    /// The nested `message.timestamp` (epoch milliseconds), if it is a number.
    pub time_ms: Option<f64>,
}

/// A `custom_message` entry: extension content that **is** model context.
#[derive(Debug, Clone, PartialEq)]
pub struct CustomMessageEntry<'a> {
    /// Shared entry fields.
    pub meta: EntryMeta<'a>,
    /// The extension's `customType`.
    pub custom_type: Option<Cow<'a, str>>,
    /// Text of `content` (string, or its `text` blocks).
    pub texts: Vec<Cow<'a, str>>,
}

/// One parsed line of a session file.
#[derive(Debug, Clone, PartialEq)]
pub enum SessionEntry<'a> {
    /// The `session` header (first line).
    Header(SessionHeader<'a>),
    /// A `message` entry (any role).
    Message(MessageEntry<'a>),
    /// A `custom_message` entry.
    CustomMessage(CustomMessageEntry<'a>),
    /// A `session_info` entry; the latest one in the file names the session.
    SessionInfo {
        /// Shared entry fields.
        meta: EntryMeta<'a>,
        /// The name as written (`None` when absent or not a string).
        name: Option<Cow<'a, str>>,
    },
    /// A `compaction` entry.
    Compaction {
        /// Shared entry fields.
        meta: EntryMeta<'a>,
        /// The summary that replaced older context.
        summary: Option<Cow<'a, str>>,
    },
    /// A `branch_summary` entry.
    BranchSummary {
        /// Shared entry fields.
        meta: EntryMeta<'a>,
        /// Summary of the abandoned branch.
        summary: Option<Cow<'a, str>>,
    },
    /// Any other entry type (`custom`, `model_change`, `label`, unknown future types, …).
    Other {
        /// The `type` field (empty when missing).
        kind: Cow<'a, str>,
        /// Shared entry fields.
        meta: EntryMeta<'a>,
    },
}

/// Where a piece of searchable text came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum TextSource {
    /// Text of a user message.
    User,
    /// Text blocks of an assistant message (thinking and tool calls excluded).
    Assistant,
    /// Text of a tool result (searched only when asked for).
    ToolResult,
    /// A `custom_message` entry or a `custom`-role message.
    Custom,
    /// A compaction summary.
    Compaction,
    /// A branch summary.
    BranchSummary,
}

impl TextSource {
    /// Short label used in rendered results (`user`, `assistant`, `toolResult`, `custom`,
    /// `compaction`, `branch_summary`).
    pub fn label(self) -> &'static str {
        match self {
            TextSource::User => "user",
            TextSource::Assistant => "assistant",
            TextSource::ToolResult => "toolResult",
            TextSource::Custom => "custom",
            TextSource::Compaction => "compaction",
            TextSource::BranchSummary => "branch_summary",
        }
    }
}

impl fmt::Display for TextSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.label())
    }
}

/// A line that could not be read as a session entry.
#[derive(Debug, thiserror::Error)]
#[error("not a session entry: {0}")]
pub struct EntryError(#[from] serde_json::Error);

impl<'a> SessionEntry<'a> {
    /// Parses one line (without or with its trailing `\n`/`\r\n`), borrowing from it.
    ///
    /// ```
    /// use memory_agent::pi::sessions::{SessionEntry, Role};
    /// let line = br#"{"type":"message","id":"20771499","parentId":null,"timestamp":"2026-11-29T21:37:25.400Z","message":{"role":"user","content":[{"type":"text","text":"hello there"}],"timestamp":1795988245400}}"#;
    /// let SessionEntry::Message(m) = SessionEntry::parse(line).unwrap() else { panic!() };
    /// assert_eq!(m.role, Role::User);
    /// assert_eq!(m.texts, ["hello there"]);
    /// ```
    pub fn parse(line: &'a [u8]) -> Result<Self, EntryError> {
        Ok(serde_json::from_slice(line)?)
    }

    /// The entry's shared fields (`None` for the header).
    pub fn meta(&self) -> Option<&EntryMeta<'a>> {
        match self {
            SessionEntry::Header(_) => None,
            SessionEntry::Message(m) => Some(&m.meta),
            SessionEntry::CustomMessage(c) => Some(&c.meta),
            SessionEntry::SessionInfo { meta, .. }
            | SessionEntry::Compaction { meta, .. }
            | SessionEntry::BranchSummary { meta, .. }
            | SessionEntry::Other { meta, .. } => Some(meta),
        }
    }

    /// Calls `f` with every piece of text the session search looks at, in entry order.
    ///
    /// Searched: user and assistant text blocks, `custom_message` content and `custom`-role
    /// messages (both are model context), compaction and branch summaries, and tool results
    /// when `include_tool_results` is set. Never searched: system messages (prompt state),
    /// thinking blocks, tool-call arguments, `bashExecution` messages, `custom` entries
    /// (extension state, not model context) and every other entry type.
    pub fn for_each_text(&self, include_tool_results: bool, mut f: impl FnMut(TextSource, &str)) {
        match self {
            SessionEntry::Message(m) => {
                let source = match m.role {
                    Role::User => TextSource::User,
                    Role::Assistant => TextSource::Assistant,
                    Role::Custom => TextSource::Custom,
                    Role::ToolResult if include_tool_results => TextSource::ToolResult,
                    _ => return,
                };
                for t in &m.texts {
                    f(source, t);
                }
            }
            SessionEntry::CustomMessage(c) => {
                for t in &c.texts {
                    f(TextSource::Custom, t);
                }
            }
            SessionEntry::Compaction {
                summary: Some(s), ..
            } => f(TextSource::Compaction, s),
            SessionEntry::BranchSummary {
                summary: Some(s), ..
            } => f(TextSource::BranchSummary, s),
            _ => {}
        }
    }

    /// Copies every borrowed string so the entry outlives the line it was parsed from.
    pub fn into_owned(self) -> SessionEntry<'static> {
        fn o(c: Cow<'_, str>) -> Cow<'static, str> {
            Cow::Owned(c.into_owned())
        }
        fn oo(c: Option<Cow<'_, str>>) -> Option<Cow<'static, str>> {
            c.map(o)
        }
        fn om(m: EntryMeta<'_>) -> EntryMeta<'static> {
            EntryMeta {
                id: oo(m.id),
                parent_id: oo(m.parent_id),
                timestamp: oo(m.timestamp),
            }
        }
        match self {
            SessionEntry::Header(h) => SessionEntry::Header(SessionHeader {
                version: h.version,
                id: o(h.id),
                timestamp: oo(h.timestamp),
                cwd: oo(h.cwd),
                parent_session: oo(h.parent_session),
            }),
            SessionEntry::Message(m) => SessionEntry::Message(MessageEntry {
                meta: om(m.meta),
                role: m.role.into_owned(),
                texts: m.texts.into_iter().map(o).collect(),
                has_content: m.has_content,
                time_ms: m.time_ms,
            }),
            SessionEntry::CustomMessage(c) => SessionEntry::CustomMessage(CustomMessageEntry {
                meta: om(c.meta),
                custom_type: oo(c.custom_type),
                texts: c.texts.into_iter().map(o).collect(),
            }),
            SessionEntry::SessionInfo { meta, name } => SessionEntry::SessionInfo {
                meta: om(meta),
                name: oo(name),
            },
            SessionEntry::Compaction { meta, summary } => SessionEntry::Compaction {
                meta: om(meta),
                summary: oo(summary),
            },
            SessionEntry::BranchSummary { meta, summary } => SessionEntry::BranchSummary {
                meta: om(meta),
                summary: oo(summary),
            },
            SessionEntry::Other { kind, meta } => SessionEntry::Other {
                kind: o(kind),
                meta: om(meta),
            },
        }
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for SessionEntry<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        // Only a JSON object is an entry (a derived struct would also accept an array).
        struct V<'a>(PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for V<'a> {
            type Value = Wire<'a>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
                Wire::deserialize(MapAccessDeserializer::new(map))
            }
        }
        let w = d.deserialize_map(V(PhantomData))?;
        let meta = EntryMeta {
            id: w.id.0.clone(),
            parent_id: w.parent_id.0,
            timestamp: w.timestamp.0.clone(),
        };
        let kind = w.kind.0.unwrap_or(Cow::Borrowed(""));
        Ok(match &*kind {
            "session" => match w.id.0 {
                Some(id) => SessionEntry::Header(SessionHeader {
                    version: w.version.0,
                    id,
                    timestamp: w.timestamp.0,
                    cwd: w.cwd.0,
                    parent_session: w.parent_session.0,
                }),
                // pi rejects a header without a string id; keep the line as "other".
                None => SessionEntry::Other { kind, meta },
            },
            "message" => match w.message.0 {
                Some(m) => SessionEntry::Message(MessageEntry {
                    meta,
                    role: Role::from_wire(m.role.0),
                    texts: m.content.texts,
                    has_content: m.content.present,
                    time_ms: m.timestamp.0,
                }),
                None => SessionEntry::Other { kind, meta },
            },
            "custom_message" => SessionEntry::CustomMessage(CustomMessageEntry {
                meta,
                custom_type: w.custom_type.0,
                texts: w.content.texts,
            }),
            "session_info" => SessionEntry::SessionInfo {
                meta,
                name: w.name.0,
            },
            "compaction" => SessionEntry::Compaction {
                meta,
                summary: w.summary.0,
            },
            "branch_summary" => SessionEntry::BranchSummary {
                meta,
                summary: w.summary.0,
            },
            _ => SessionEntry::Other { kind, meta },
        })
    }
}

/// Everything any entry type may carry; absent or mistyped fields read as `None`.
#[derive(Deserialize)]
struct Wire<'a> {
    #[serde(rename = "type", default, borrow)]
    kind: LStr<'a>,
    #[serde(default, borrow)]
    id: LStr<'a>,
    #[serde(rename = "parentId", default, borrow)]
    parent_id: LStr<'a>,
    #[serde(default, borrow)]
    timestamp: LStr<'a>,
    #[serde(default)]
    version: LNum,
    #[serde(default, borrow)]
    cwd: LStr<'a>,
    #[serde(rename = "parentSession", default, borrow)]
    parent_session: LStr<'a>,
    #[serde(default, borrow)]
    message: LMap<WireMessage<'a>>,
    #[serde(rename = "customType", default, borrow)]
    custom_type: LStr<'a>,
    #[serde(default, borrow)]
    content: Texts<'a>,
    #[serde(default, borrow)]
    name: LStr<'a>,
    #[serde(default, borrow)]
    summary: LStr<'a>,
}

#[derive(Deserialize)]
struct WireMessage<'a> {
    #[serde(default, borrow)]
    role: LStr<'a>,
    #[serde(default, borrow)]
    content: Texts<'a>,
    #[serde(default)]
    timestamp: LNum,
}

#[derive(Deserialize)]
struct WireBlock<'a> {
    #[serde(rename = "type", default, borrow)]
    kind: LStr<'a>,
    #[serde(default, borrow)]
    text: LStr<'a>,
}

/// Minimal view used to find a session's last activity without decoding its texts.
#[derive(Deserialize)]
pub(crate) struct ActivityWire<'a> {
    #[serde(rename = "type", default, borrow)]
    kind: LStr<'a>,
    #[serde(default, borrow)]
    timestamp: LStr<'a>,
    #[serde(default, borrow)]
    message: LMap<ActivityMessage<'a>>,
}

#[derive(Deserialize)]
struct ActivityMessage<'a> {
    #[serde(default, borrow)]
    role: LStr<'a>,
    #[serde(default)]
    content: Presence,
    #[serde(default)]
    timestamp: LNum,
}

/// What pi's `getLastActivityTime` looks at in one entry.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Activity<'a> {
    /// A user/assistant message with content: its numeric timestamp, else the entry's ISO time.
    Message {
        time_ms: Option<f64>,
        entry_time: Option<&'a str>,
    },
    /// Anything else: does not count as activity.
    None,
}

impl ActivityWire<'_> {
    /// Classifies the line the way pi's activity rule does.
    pub(crate) fn activity(&self) -> Activity<'_> {
        if self.kind.0.as_deref() != Some("message") {
            return Activity::None;
        }
        let Some(m) = &self.message.0 else {
            return Activity::None;
        };
        let user_or_assistant = matches!(m.role.0.as_deref(), Some("user" | "assistant"));
        if !user_or_assistant || !m.content.0 {
            return Activity::None;
        }
        Activity::Message {
            time_ms: m.timestamp.0,
            entry_time: self.timestamp.0.as_deref(),
        }
    }
}

/// A string, or `None` for any other JSON value (which is consumed and ignored).
#[derive(Default)]
struct LStr<'a>(Option<Cow<'a, str>>);

impl<'de: 'a, 'a> Deserialize<'de> for LStr<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<'a>(PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for V<'a> {
            type Value = LStr<'a>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(LStr(Some(Cow::Borrowed(v))))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(LStr(Some(Cow::Owned(v.to_owned()))))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
                Ok(LStr(Some(Cow::Owned(v))))
            }
            ignore_non_matching!();
        }
        d.deserialize_any(V(PhantomData))
    }
}

/// A number as `f64`, or `None` for any other JSON value.
#[derive(Default)]
struct LNum(Option<f64>);

impl<'de> Deserialize<'de> for LNum {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = LNum;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
                Ok(LNum(Some(v as f64)))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
                Ok(LNum(Some(v as f64)))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
                Ok(LNum(Some(v)))
            }
            fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> {
                Ok(LNum(None))
            }
            ignore_non_matching!(no_int);
        }
        d.deserialize_any(V)
    }
}

/// `true` when the key is present, whatever its value.
#[derive(Default)]
struct Presence(bool);

impl<'de> Deserialize<'de> for Presence {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        IgnoredAny::deserialize(d).map(|_| Presence(true))
    }
}

/// An object decoded as `T`, or `None` for any other JSON value.
struct LMap<T>(Option<T>);

impl<T> Default for LMap<T> {
    fn default() -> Self {
        LMap(None)
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for LMap<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<T>(PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for V<T> {
            type Value = LMap<T>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
                T::deserialize(MapAccessDeserializer::new(map)).map(|t| LMap(Some(t)))
            }
            fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> {
                Ok(LMap(None))
            }
            ignore_non_matching!(no_map);
        }
        d.deserialize_any(V(PhantomData))
    }
}

/// Message `content`: a string, or an array whose `text` blocks are kept.
#[derive(Default)]
struct Texts<'a> {
    present: bool,
    texts: Vec<Cow<'a, str>>,
}

impl<'de: 'a, 'a> Deserialize<'de> for Texts<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<'a>(PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for V<'a> {
            type Value = Texts<'a>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(one(Cow::Borrowed(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(one(Cow::Owned(v.to_owned())))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
                Ok(one(Cow::Owned(v)))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                let mut texts = Vec::new();
                while let Some(block) = seq.next_element::<LMap<WireBlock<'a>>>()? {
                    if let Some(WireBlock {
                        kind: LStr(Some(kind)),
                        text: LStr(Some(text)),
                    }) = block.0
                        && kind == "text"
                    {
                        texts.push(text);
                    }
                }
                Ok(Texts {
                    present: true,
                    texts,
                })
            }
            ignore_non_matching!(present);
        }
        fn one(t: Cow<'_, str>) -> Texts<'_> {
            Texts {
                present: true,
                texts: vec![t],
            }
        }
        d.deserialize_any(V(PhantomData))
    }
}
