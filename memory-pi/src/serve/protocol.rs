//! The protocol's messages as types, in both directions (protocol 1; the method table is in
//! [`super`]). Every request has a params type implementing [`Request`], which names its
//! method and its result type; every notification has a params type implementing [`Notify`].
//!
//! **Wire format.** Field names are camelCase. Messages are written through
//! [`serde_json::Value`], whose objects keep their keys sorted, so the bytes do not depend on
//! the order of the fields here. An `Option` field is written as `null` when empty (never
//! left out). `serde_json::Value` fields carry any JSON (`unknown` in TypeScript).
//!
//! **Reading is lenient**, as the hand-written accessors it replaces were: params that are not
//! an object read as `{}`, unknown fields are ignored, and `null` counts as absent for every
//! optional field (optional strings, booleans and arrays then read as `""`, `false`, `[]`).
//! Fields pi sends only for information (the sidecar does not use them) accept any value. A
//! missing or `null` required field is `-32602` `invalid params: "cwd" is required`; a
//! mistyped one `invalid params: "cwd": <serde's message>` ([`parse`]).
//!
//! **TypeScript.** `memory-pi/extension/protocol.ts` is generated from these types with
//! `ts-rs` (a dev-dependency: the derives exist in test builds only) and kept equal by the
//! test `protocol_ts_is_generated_from_these_types`; `PIMEM_UPDATE_PROTOCOL_TS=1 cargo test
//! -p memory-pi --lib protocol_ts` rewrites it. The TypeScript types state what each side
//! sends (the extension's calls are type-checked against them); where the sidecar reads more
//! leniently than that, a `ts(...)` attribute narrows the TypeScript type. It also declares
//! one map per direction (`PiRequests`, `SidecarRequests`, `SidecarNotifications`) from
//! method name to params and result type, so the extension's calls are typed by method.

use memory_agent::{Completion, Message, StopReason, ToolCall, ToolDef};
use serde::de::{DeserializeOwned, Deserializer};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::rpc::RpcError;

#[cfg(test)]
use ts_rs::TS;

/// A request: the method it is sent as and the type of its result. Implemented by the params
/// type.
pub trait Request {
    /// The JSON-RPC method name.
    const METHOD: &'static str;
    /// The `result` of a successful response.
    type Result;
}

/// A notification (no response): the method it is sent as. Implemented by the params type.
pub trait Notify {
    /// The JSON-RPC method name.
    const METHOD: &'static str;
}

/// Implements [`Request`] for each params type of one direction and, for the TypeScript
/// rendering, lists them as a method → `{params, result}` map named `$map`.
macro_rules! requests {
    ($map:ident { $($params:ident: $method:literal -> $result:ident,)* }) => {
        $(impl Request for $params {
            const METHOD: &'static str = $method;
            type Result = $result;
        })*
        #[cfg(test)]
        #[allow(non_snake_case)]
        fn $map(r: &mut tests::Render) {
            r.begin_map(stringify!($map));
            $(r.request::<$params>();)*
            r.end_map();
        }
    };
}

/// [`requests!`] for notifications: method → params.
macro_rules! notifications {
    ($map:ident { $($params:ident: $method:literal,)* }) => {
        $(impl Notify for $params {
            const METHOD: &'static str = $method;
        })*
        #[cfg(test)]
        #[allow(non_snake_case)]
        fn $map(r: &mut tests::Render) {
            r.begin_map(stringify!($map));
            $(r.notification::<$params>();)*
            r.end_map();
        }
    };
}

requests!(PiRequests {
    InitializeParams: "initialize" -> InitializeResult,
    SessionStartParams: "session/start" -> SessionStartResult,
    BeforeStartParams: "agent/before_start" -> BeforeStartResult,
    SettledParams: "agent/settled" -> SettledResult,
    CompactParams: "session/compact" -> CompactResult,
    ToolExecuteParams: "tool/execute" -> ToolExecuteResult,
    CommandParams: "command/run" -> CommandResult,
    ShutdownParams: "session/shutdown" -> ShutdownResult,
    SessionsSearchParams: "sessions/search" -> SessionsToolResult,
    SessionsAskParams: "sessions/ask" -> SessionsToolResult,
    SessionsCandidatesParams: "sessions/candidates" -> SessionsCandidatesResult,
    SessionsExpandParams: "sessions/expand" -> SessionsExpandResult,
    ExperienceRunParams: "experience/run" -> ExperienceRunResult,
    PanelParams: "experience/panel" -> PanelResult,
    ExperienceToolParams: "experience/tool" -> ExperienceToolResult,
    FilesGuardParams: "files/guard" -> FilesGuardResult,
    MemoryListParams: "memory/list" -> MemoryListResult,
    MemoryOpenParams: "memory/open" -> MemoryOpenResult,
    MemorySaveParams: "memory/save" -> MemoryWriteResult,
    MemoryDeleteParams: "memory/delete" -> MemoryWriteResult,
    SessionTreeParams: "session/tree" -> SessionTreeResult,
});

notifications!(PiNotifications {
    RunEventParams: "run/event",
});

requests!(SidecarRequests {
    ModelCompleteParams: "model/complete" -> ModelCompletion,
    ModelsResolveParams: "models/resolve" -> ModelsResolveResult,
    ConfirmParams: "ui/confirm" -> ConfirmResult,
});

notifications!(SidecarNotifications {
    Notification: "ui/notify",
    StatusParams: "ui/status",
    SessionReport: "sessions/report",
});

/// Reads a request's `params` as `P`: anything but an object reads as `{}`; failures are
/// `-32602` naming the field (see the module docs).
pub fn parse<P: DeserializeOwned>(params: Value) -> Result<P, RpcError> {
    let params = match params {
        Value::Object(_) => params,
        _ => Value::Object(serde_json::Map::new()),
    };
    serde_path_to_error::deserialize(params)
        .map_err(|e| RpcError::invalid_params(invalid_params_message(&e)))
}

/// `invalid params: "<field>" is required` (missing or `null`) or `invalid params:
/// "<field>": <serde's message>`.
fn invalid_params_message(e: &serde_path_to_error::Error<serde_json::Error>) -> String {
    let path = e.path().to_string();
    let inner = e.inner().to_string();
    if let Some(field) = inner
        .strip_prefix("missing field `")
        .and_then(|rest| rest.strip_suffix('`'))
    {
        let field = if path == "." {
            field.to_owned()
        } else {
            format!("{path}.{field}")
        };
        return format!("invalid params: \"{field}\" is required");
    }
    if inner.starts_with("invalid type: null,") {
        return format!("invalid params: \"{path}\" is required");
    }
    format!("invalid params: \"{path}\": {inner}")
}

/// Deserializes `null` as the default (with `#[serde(default)]`: absent too).
fn nullable<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de> + Default,
{
    Ok(Option::<T>::deserialize(d)?.unwrap_or_default())
}

/// A field read leniently (names and versions of the client): any JSON is accepted, a wrongly
/// typed value reads as the default.
fn informational<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: DeserializeOwned + Default,
{
    Ok(serde_json::from_value(Value::deserialize(d)?).unwrap_or_default())
}

// ------------------------------------------------------------------ shared shapes

/// How a message to the user is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(TS))]
#[serde(rename_all = "lowercase")]
pub enum Level {
    /// Information.
    Info,
    /// Something the user may want to fix.
    Warning,
    /// A failure.
    Error,
}

/// A message for the user (`ui/notify`, and the notifications of `session/start`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(TS))]
pub struct Notification {
    /// The text.
    pub message: String,
    /// How it is shown.
    pub level: Level,
}

impl Notification {
    /// A notification of `message` at `level`.
    pub fn new(message: impl Into<String>, level: Level) -> Self {
        Notification {
            message: message.into(),
            level,
        }
    }
}

/// The `memory` tool as pi registers it (`pimem tool-schema` prints it;
/// `extension/tool.json` is a copy).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(test, derive(TS))]
#[serde(rename_all = "camelCase")]
pub struct ToolRegistration {
    /// Tool name.
    pub name: String,
    /// Label in pi's UI.
    pub label: String,
    /// Description for the model.
    pub description: String,
    /// The one line under `<tools>` in pi's system prompt.
    pub prompt_snippet: String,
    /// JSON schema of the arguments.
    #[cfg_attr(test, ts(type = "unknown"))]
    pub parameters: Value,
}

/// The frozen `memory_index` section as the extension records it (`pi.appendEntry(recordType,
/// record)`): the value plus its window numbers, so `/memory`'s `Inject:` line stays exact.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(test, derive(TS))]
pub struct SectionRecord {
    /// The section's value.
    pub value: String,
    /// Index lines in the window.
    pub lines: usize,
    /// Bytes in the window.
    pub bytes: usize,
    /// Whether the index was cut to fit.
    pub truncated: bool,
}

// ------------------------------------------------------------------ pi → sidecar

/// `initialize`: the version handshake.
#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(test, derive(TS))]
#[serde(rename_all = "camelCase")]
pub struct InitializeParams {
    /// The protocol the extension speaks (any JSON is read: a non-number is a mismatch).
    #[cfg_attr(test, ts(type = "number"))]
    pub protocol: Value,
    /// The client's name (`pimem-pi`).
    #[serde(default, deserialize_with = "informational")]
    pub client: String,
    /// The extension's version. The `pimem-pi` extension's must equal this binary's version
    /// (`-32003` otherwise); other clients' is informational.
    #[serde(default, deserialize_with = "informational")]
    pub client_version: String,
}

/// The answer to `initialize`.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(test, derive(TS))]
#[serde(rename_all = "camelCase")]
pub struct InitializeResult {
    /// The protocol this binary speaks.
    pub protocol: u32,
    /// pimem's version.
    pub version: String,
    /// The `memory` tool.
    pub tool: ToolRegistration,
    /// The section name in `systemPromptOptions.sections`.
    pub section: String,
    /// The `customType` of the extension's section record.
    pub record_type: String,
}

/// The `data` of the `-32002` error answering an `initialize` with another protocol: enough
/// for the extension to register an inert tool that returns the error's message.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(test, derive(TS))]
pub struct ProtocolMismatch {
    /// The protocol this binary speaks.
    pub protocol: u32,
    /// pimem's version.
    pub version: String,
    /// The `memory` tool.
    pub tool: ToolRegistration,
}

/// `session/start`: what pi knows about the session, and the section's sources.
#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(test, derive(TS))]
#[serde(rename_all = "camelCase")]
pub struct SessionStartParams {
    /// pi's `session_start` reason (`startup`, `reload`, `new`, `resume`, `fork`); `startup`
    /// when absent.
    #[serde(default)]
    #[cfg_attr(test, ts(type = "string"))]
    pub reason: Option<String>,
    /// The session's working directory.
    pub cwd: String,
    /// pi's agent directory.
    pub agent_dir: String,
    /// Whether `<cwd>/.pi/` may be read.
    #[serde(default, deserialize_with = "nullable")]
    pub trusted: bool,
    /// Whether pi has a UI (tui, rpc): notifications and dialogs only then.
    #[serde(default, deserialize_with = "nullable", rename = "hasUI")]
    pub has_ui: bool,
    /// pi's mode (`tui`, `rpc`, `json`, `print`).
    #[serde(default, deserialize_with = "informational")]
    pub mode: String,
    /// pi's session id.
    #[serde(default, deserialize_with = "informational")]
    pub session_id: String,
    /// pi's session file (`null` for an in-memory session).
    #[serde(default, deserialize_with = "informational")]
    pub session_file: Option<String>,
    /// pi's session directory, when known.
    #[serde(default)]
    pub session_dir: Option<String>,
    /// A headless child session (subagent): no surfacing, extraction or nudge.
    #[serde(default, deserialize_with = "nullable")]
    pub child: bool,
    /// The `data` of the last custom entry of type `recordType` on the branch (ours: a
    /// `SectionRecord`), or `null`.
    #[serde(default)]
    #[cfg_attr(test, ts(type = "unknown"))]
    pub recorded: Option<Value>,
    /// The `sections` objects of the branch's system messages and compaction checkpoints, in
    /// branch order.
    #[serde(default, deserialize_with = "nullable")]
    #[cfg_attr(test, ts(type = "Array<unknown>"))]
    pub section_patches: Vec<Value>,
}

/// The answer to `session/start`.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(test, derive(TS))]
#[serde(rename_all = "camelCase")]
pub struct SessionStartResult {
    /// The frozen `memory_index` value.
    pub section: String,
    /// Non-null when the section was computed fresh: the extension records it.
    pub record: Option<SectionRecord>,
    /// `lock.timeoutMs`: how long `session/shutdown` may wait.
    pub lock_timeout_ms: u64,
    /// Messages for the user (shown when pi has a UI).
    pub notifications: Vec<Notification>,
    /// The dream nudge (UI sessions only): ask it with `ui.confirm`; on yes, call
    /// `command/run {name: "dream", confirmed: true}`.
    pub nudge: Option<ConfirmParams>,
}

/// `agent/before_start`: one user turn is about to run.
#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(test, derive(TS))]
#[serde(rename_all = "camelCase")]
pub struct BeforeStartParams {
    /// The user's prompt (`null` unless `messageType` is `user`).
    #[serde(default)]
    pub prompt: Option<String>,
    /// What started the run (`user`, or `custom`); `user` when absent.
    #[serde(default)]
    #[cfg_attr(test, ts(type = "string"))]
    pub message_type: Option<String>,
    /// The turn's system prompt.
    #[serde(default, deserialize_with = "nullable")]
    pub system_prompt: String,
}

/// The answer to `agent/before_start`.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(test, derive(TS))]
pub struct BeforeStartResult {
    /// The message the extension returns from `before_agent_start`, if memories were surfaced.
    pub message: Option<SurfacedMessage>,
    /// `Recalled: N entries`, when there is something to say.
    pub notify: Option<String>,
    /// Non-null when the frozen `memory_index` value changes from this turn on: `""` while
    /// memory is switched off, the index read again when it was switched back on (PA-16,
    /// PA-17). The extension sets the section to it for this and later turns.
    pub section: Option<String>,
    /// Non-null when `section` was computed fresh: the extension records it.
    pub record: Option<SectionRecord>,
}

/// The surfaced memories as a pi custom message.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(test, derive(TS))]
#[serde(rename_all = "camelCase")]
pub struct SurfacedMessage {
    /// Always `memory-auto-surfacing`.
    #[cfg_attr(test, ts(type = "\"memory-auto-surfacing\""))]
    pub custom_type: &'static str,
    /// The `<relevant_memories>` block.
    pub content: String,
    /// Whether pi shows it (it does not).
    pub display: bool,
    /// What was surfaced.
    pub details: SurfacedDetails,
}

/// The `details` of a [`SurfacedMessage`].
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(test, derive(TS))]
pub struct SurfacedDetails {
    /// The surfaced entry files, in order.
    pub files: Vec<String>,
}

/// `agent/settled`: a run ended; the sidecar may extract memories from it.
#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(test, derive(TS))]
pub struct SettledParams {
    /// The run's pi `AgentMessage`s (without `system` ones; image data dropped).
    #[serde(default, deserialize_with = "nullable")]
    #[cfg_attr(test, ts(type = "Array<unknown>"))]
    pub messages: Vec<Value>,
    /// Whether the run was aborted (nothing is extracted then).
    #[serde(default, deserialize_with = "nullable")]
    pub aborted: bool,
}

/// The answer to `agent/settled` (at once; extraction runs in the background).
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(test, derive(TS))]
pub struct SettledResult {}

/// `session/compact`: pi compacted the session.
#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(test, derive(TS))]
pub struct CompactParams {}

/// The answer to `session/compact`: the refreshed section.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(test, derive(TS))]
pub struct CompactResult {
    /// The new frozen `memory_index` value.
    pub section: String,
    /// Non-null when the section was computed fresh: the extension records it.
    pub record: Option<SectionRecord>,
}

/// `tool/execute`: one call of the `memory` tool.
#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(test, derive(TS))]
#[serde(rename_all = "camelCase")]
pub struct ToolExecuteParams {
    /// pi's id of the call.
    #[serde(default, deserialize_with = "informational")]
    pub tool_call_id: String,
    /// The arguments the model gave (any JSON; the tool validates them).
    #[cfg_attr(test, ts(type = "unknown"))]
    pub args: Value,
}

/// The answer to `tool/execute`.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(test, derive(TS))]
#[serde(rename_all = "camelCase")]
pub struct ToolExecuteResult {
    /// The text returned to the model.
    pub text: String,
    /// Whether the call failed.
    pub is_error: bool,
    /// The result's `details` in pi.
    pub details: ToolDetails,
}

/// The `details` of a tool result.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(test, derive(TS))]
#[serde(untagged)]
pub enum ToolDetails {
    /// The tool ran.
    Ran {
        /// The `action` argument as given (`null` when absent).
        #[cfg_attr(test, ts(type = "unknown"))]
        action: Value,
        /// Whether the memory directory changed.
        wrote: bool,
        /// The name saved by `add`.
        saved: Option<String>,
        /// Notices for the user (reclaimed lock, repair).
        notices: Vec<String>,
        /// How many memories a `search` found (pi-memory's `details.count`); absent for the
        /// other actions.
        #[serde(skip_serializing_if = "Option::is_none")]
        #[cfg_attr(test, ts(optional))]
        count: Option<usize>,
    },
    /// Memory is not initialised: `{}`.
    NotRun {},
}

/// `command/run`: `/memory [status|unlock]` or `/dream`.
#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(test, derive(TS))]
pub struct CommandParams {
    /// `memory` or `dream`.
    #[cfg_attr(test, ts(type = "\"memory\" | \"dream\""))]
    pub name: String,
    /// The command's argument text.
    #[serde(default, deserialize_with = "nullable")]
    pub args: String,
    /// The user confirmed already (the dream nudge): no `ui/confirm`.
    #[serde(default)]
    #[cfg_attr(test, ts(optional))]
    pub confirmed: Option<bool>,
}

/// The answer to `command/run`.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(test, derive(TS))]
pub struct CommandResult {
    /// What to show; `null` shows nothing (a cancelled confirmation).
    pub text: Option<String>,
    /// How to show it.
    pub level: Level,
}

impl CommandResult {
    /// Shows `text` at `level`.
    pub fn show(text: impl Into<String>, level: Level) -> Self {
        CommandResult {
            text: Some(text.into()),
            level,
        }
    }

    /// Shows nothing.
    pub fn silent() -> Self {
        CommandResult {
            text: None,
            level: Level::Info,
        }
    }
}

/// `files/guard`: pi is about to run one of its built-in file tools (`tool_call`); the
/// sidecar says whether it touches the memory tree (protected memory files, PA-33..PA-37).
#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(test, derive(TS))]
#[serde(rename_all = "camelCase")]
pub struct FilesGuardParams {
    /// `read`, `write`, `edit`, `grep`, `find` or `ls`.
    pub tool_name: String,
    /// The tool's arguments as the model gave them.
    #[serde(default)]
    #[cfg_attr(test, ts(type = "unknown"))]
    pub input: Value,
    /// The session's working directory (relative paths are resolved against it).
    #[serde(default, deserialize_with = "nullable")]
    pub cwd: String,
}

/// The answer to `files/guard`.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(test, derive(TS))]
pub struct FilesGuardResult {
    /// Non-null: block the call, with this reason for the model.
    pub block: Option<String>,
}

/// `session/shutdown`: the session ends.
#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(test, derive(TS))]
pub struct ShutdownParams {}

/// The answer to `session/shutdown`, after in-flight work ended or `lock.timeoutMs` passed.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(test, derive(TS))]
pub struct ShutdownResult {
    /// Whether all work finished in time (otherwise it was cancelled).
    pub finished: bool,
}

// ------------------------------------------------------------------ pi-session (PS-01..35)

/// The session that calls a pi-session method, as the extension knows it (sent with every
/// `sessions/*` request, so these methods do not depend on `session/start`).
#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(test, derive(TS))]
#[serde(rename_all = "camelCase")]
pub struct SessionCaller {
    /// `ctx.cwd`.
    pub cwd: String,
    /// pi's agent directory.
    pub agent_dir: String,
    /// `ctx.sessionManager.getSessionDir()`, when known (tells a flat `sessionDir` apart).
    #[serde(default)]
    pub session_dir: Option<String>,
    /// `ctx.sessionManager.getSessionId()`.
    #[serde(default)]
    pub session_id: Option<String>,
    /// `ctx.sessionManager.getSessionFile()` (`null` for an in-memory session).
    #[serde(default)]
    pub session_file: Option<String>,
}

/// `sessions/search`: one call of the `search-session` tool.
#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(test, derive(TS))]
pub struct SessionsSearchParams {
    /// The calling session.
    pub caller: SessionCaller,
    /// The arguments the model gave (any JSON; checked by the sidecar).
    #[cfg_attr(test, ts(type = "unknown"))]
    pub args: Value,
}

// ------------------------------------------------------------------ pi → sidecar: the run log

/// `run/event` (notification, never answered, so forwarding never waits): one of pi's events
/// for the run log (PX-05, PX-18). The sidecar queues it and writes batches in the background.
#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(test, derive(TS))]
pub struct RunEventParams {
    /// When pi saw it (Unix ms).
    #[cfg_attr(test, ts(type = "number"))]
    pub at: i64,
    /// What happened.
    pub event: RunEvent,
}

/// The events the extension forwards, by pi event: `agent_start` → `runStart`,
/// `message_end` → `prompt` (user) or `assistant`, `tool_execution_start` → `toolCall`,
/// `tool_execution_end` → `toolResult`, `model_select` → `modelChange`, `session_compact` →
/// `compaction`, `user_bash` → `userBash`, `agent_settled` → `settled`.
#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(test, derive(TS))]
#[serde(
    tag = "kind",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum RunEvent {
    /// `agent_start`.
    RunStart,
    /// The user's prompt (text blocks joined).
    Prompt {
        /// Its text.
        text: String,
    },
    /// A finished assistant message.
    Assistant {
        /// Its text blocks, joined.
        text: String,
        /// pi's stop reason.
        #[serde(default)]
        #[cfg_attr(test, ts(type = "string | null"))]
        stop_reason: Option<String>,
        /// pi's `errorMessage`.
        #[serde(default)]
        #[cfg_attr(test, ts(type = "string | null"))]
        error: Option<String>,
        /// `provider/model-id`.
        #[serde(default)]
        #[cfg_attr(test, ts(type = "string | null"))]
        model: Option<String>,
    },
    /// `tool_execution_start`.
    ToolCall {
        /// The call's id.
        id: String,
        /// The tool.
        name: String,
        /// Its arguments.
        #[serde(default)]
        #[cfg_attr(test, ts(type = "unknown"))]
        args: Value,
    },
    /// `tool_execution_end`.
    ToolResult {
        /// The call's id.
        id: String,
        /// The tool.
        name: String,
        /// The result's text blocks, joined (the extension caps them at 8192 characters; the
        /// run log keeps 2000).
        text: String,
        /// Whether it failed.
        #[serde(default)]
        is_error: bool,
    },
    /// `model_select`.
    ModelChange {
        /// `provider/model-id`.
        model: String,
    },
    /// `session_compact`.
    Compaction {
        /// Why it compacted.
        reason: String,
        /// Context tokens before, when pi says.
        #[serde(default)]
        #[cfg_attr(test, ts(type = "number | null"))]
        tokens_before: Option<u64>,
    },
    /// `user_bash`: only the initiation of `!cmd` / `!!cmd` (PX-18).
    UserBash {
        /// The command.
        command: String,
        /// `!!`.
        #[serde(default)]
        exclude_from_context: bool,
    },
    /// `agent_settled`.
    Settled {
        /// Whether the run was aborted.
        #[serde(default)]
        aborted: bool,
    },
}

impl From<RunEvent> for memory_runlog::Event {
    fn from(e: RunEvent) -> Self {
        use memory_runlog::Event as E;
        match e {
            RunEvent::RunStart => E::RunStart,
            RunEvent::Prompt { text } => E::Prompt { text },
            RunEvent::Assistant {
                text,
                stop_reason,
                error,
                model,
            } => E::Assistant {
                text,
                stop_reason,
                error,
                model,
            },
            RunEvent::ToolCall { id, name, args } => E::ToolCall { id, name, args },
            RunEvent::ToolResult {
                id,
                name,
                text,
                is_error,
            } => E::ToolResult {
                id,
                name,
                text,
                is_error,
            },
            RunEvent::ModelChange { model } => E::ModelChange { model },
            RunEvent::Compaction {
                reason,
                tokens_before,
            } => E::Compaction {
                reason,
                tokens_before,
            },
            RunEvent::UserBash {
                command,
                exclude_from_context,
            } => E::UserBash {
                command,
                exclude_from_context,
            },
            RunEvent::Settled { aborted } => E::Settled { aborted },
        }
    }
}

/// How long pi's event handlers spent forwarding run events (measured by the extension,
/// shown by `/experience debug`).
#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(test, derive(TS))]
#[serde(rename_all = "camelCase")]
pub struct ForwardingStats {
    /// Events forwarded by this pi process.
    pub events: u64,
    /// Median handler time, microseconds.
    pub p50_us: f64,
    /// 99th percentile, microseconds.
    pub p99_us: f64,
    /// Longest, microseconds.
    pub max_us: f64,
}

/// `experience/run`: `/experience <args>` (PX-11).
#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(test, derive(TS))]
pub struct ExperienceRunParams {
    /// The text after `/experience`.
    #[serde(default, deserialize_with = "nullable")]
    pub args: String,
    /// The user confirmed already (the panel's `S`): no `ui/confirm`.
    #[serde(default)]
    #[cfg_attr(test, ts(optional))]
    pub confirmed: Option<bool>,
    /// The extension's forwarding times (sent with `debug`).
    #[serde(default)]
    #[cfg_attr(test, ts(optional))]
    pub forwarding: Option<ForwardingStats>,
}

/// The answer to `experience/run`.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(test, derive(TS))]
pub struct ExperienceRunResult {
    /// What to show; `null` shows nothing.
    pub text: Option<String>,
    /// How to show it.
    pub level: Level,
    /// A message for the main agent (`prepare`): the extension sends it as a user message.
    pub prompt: Option<String>,
}

/// `memory/list`: the files of `/memory list` in the TUI (PA-30): `MEMORY.md` and every
/// entry, no body read or sent.
#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(test, derive(TS))]
pub struct MemoryListParams {}

/// The list: one line per file, already localised.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(test, derive(TS))]
pub struct MemoryListResult {
    /// The list's title.
    pub title: String,
    /// The text to show instead of a list when there is nothing to list or memory cannot be
    /// listed now (`items` is then empty).
    pub empty: Option<String>,
    /// The files, `MEMORY.md` first, then the entries oldest first.
    pub items: Vec<MemoryListItem>,
}

/// One file of the list.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(test, derive(TS))]
pub struct MemoryListItem {
    /// The file name inside the memory directory (what `memory/open` takes).
    pub file: String,
    /// The line shown: name, type, modified, size and file.
    pub label: String,
}

/// `memory/open`: the read-only view of one file of the list (PA-31).
#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(test, derive(TS))]
pub struct MemoryOpenParams {
    /// A file name from `memory/list`.
    pub file: String,
}

/// The view: the file's text and what an edit or delete must hand back.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(test, derive(TS))]
#[serde(rename_all = "camelCase")]
pub struct MemoryOpenResult {
    /// The file (as asked).
    pub file: String,
    /// The view's title.
    pub title: String,
    /// The whole file, as read (the editor's starting text).
    pub text: String,
    /// The version of those bytes: edit and delete succeed only while the file still has it.
    pub version: String,
    /// The session the view belongs to: a session change since makes edit and delete fail.
    pub token: String,
    /// The key line of the view.
    pub keys: String,
    /// Whether `d` deletes (entries yes, `MEMORY.md` no).
    pub deletable: bool,
    /// The editor's title.
    pub edit_title: String,
    /// What to show when the session changed while the editor was open and this view's
    /// sidecar is gone (nothing is saved, PA-46).
    pub invalidated: String,
    /// The text to show when the file cannot be opened (then `text` is empty).
    pub error: Option<String>,
}

/// `memory/save`: a person's edit of a file opened with `memory/open` (PA-19, PA-44..PA-46).
#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(test, derive(TS))]
#[serde(rename_all = "camelCase")]
pub struct MemorySaveParams {
    /// The file.
    pub file: String,
    /// `version` of the view.
    pub version: String,
    /// `token` of the view.
    pub token: String,
    /// The edited text.
    pub text: String,
}

/// `memory/delete`: delete the entry of a view, after the sidecar asked `ui/confirm` with its
/// name (PA-32).
#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(test, derive(TS))]
pub struct MemoryDeleteParams {
    /// The entry file.
    pub file: String,
    /// `version` of the view.
    pub version: String,
    /// `token` of the view.
    pub token: String,
}

/// What a save or delete did, already localised.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(test, derive(TS))]
pub struct MemoryWriteResult {
    /// Whether the file on disk changed.
    pub done: bool,
    /// What to show; `null` shows nothing (a declined confirmation).
    pub text: Option<String>,
    /// How to show it.
    pub level: Level,
}

/// `session/tree`: pi moved to another point of the session tree (`session_tree`); views
/// opened before can no longer be saved or deleted from (PA-46).
#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(test, derive(TS))]
pub struct SessionTreeParams {}

/// The answer to `session/tree`.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(test, derive(TS))]
pub struct SessionTreeResult {}

/// `experience/panel`: the lines of one view of the `/experience` panel (PX-10).
#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(test, derive(TS))]
pub struct PanelParams {
    /// `overview`, `runs`, `run` or `debug`.
    #[cfg_attr(test, ts(type = "\"overview\" | \"runs\" | \"run\" | \"debug\""))]
    pub view: String,
    /// The run of the `run` view (`R01`).
    #[serde(default)]
    #[cfg_attr(test, ts(optional))]
    pub run: Option<String>,
}

/// One view of the panel.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(test, derive(TS))]
pub struct PanelResult {
    /// The title line.
    pub title: String,
    /// The body lines.
    pub lines: Vec<String>,
    /// The key line.
    pub keys: String,
    /// The `runs` view: the run numbers of `lines`, in order (what ↑/↓ choose).
    pub runs: Vec<String>,
}

/// `experience/tool`: one call of the `experience` tool.
#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(test, derive(TS))]
#[serde(rename_all = "camelCase")]
pub struct ExperienceToolParams {
    /// pi's id of the call.
    #[serde(default, deserialize_with = "informational")]
    pub tool_call_id: String,
    /// The arguments the model gave.
    #[cfg_attr(test, ts(type = "unknown"))]
    pub args: Value,
}

/// `sessions/ask`: one call of the `ask-session` tool.
#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(test, derive(TS))]
#[serde(rename_all = "camelCase")]
pub struct SessionsAskParams {
    /// The calling session.
    pub caller: SessionCaller,
    /// The arguments the model gave (any JSON; checked by the sidecar).
    #[cfg_attr(test, ts(type = "unknown"))]
    pub args: Value,
    /// How to start pi (`[node, ...execArgv, cli.js]`); the sidecar appends
    /// `--mode rpc --session <file>`.
    pub pi_command: Vec<String>,
}

/// The answer to `sessions/search` and `sessions/ask`: the tool result.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(test, derive(TS))]
#[serde(rename_all = "camelCase")]
pub struct SessionsToolResult {
    /// The first text block: the status object as JSON.
    pub text: String,
    /// A second text block, when there is guidance for the model (`ask-session`).
    pub guidance: Option<String>,
    /// The result's `details`: the same status object.
    #[cfg_attr(test, ts(type = "unknown"))]
    pub details: Value,
    /// Whether the call failed.
    pub is_error: bool,
}

/// Which reference prefix is being completed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(TS))]
#[serde(rename_all = "lowercase")]
pub enum RefPrefix {
    /// `@s:`: named sessions of the caller's cwd.
    S,
    /// `@as:`: named sessions of every project.
    As,
}

/// `sessions/candidates`: the completion list of an `@s:` / `@as:` token.
#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(test, derive(TS))]
pub struct SessionsCandidatesParams {
    /// The calling session.
    pub caller: SessionCaller,
    /// The token's prefix.
    pub prefix: RefPrefix,
    /// What follows the prefix (a case-insensitive part of the name).
    #[serde(default, deserialize_with = "nullable")]
    pub query: String,
}

/// One completion candidate.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(test, derive(TS))]
pub struct SessionCandidate {
    /// Full session ID.
    pub id: String,
    /// Session name.
    pub name: String,
    /// Its working directory.
    pub cwd: String,
    /// Its file.
    pub path: String,
    /// Last activity (ISO 8601).
    pub activity: String,
}

/// The answer to `sessions/candidates`.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(test, derive(TS))]
pub struct SessionsCandidatesResult {
    /// At most 20, most recently active first.
    pub items: Vec<SessionCandidate>,
    /// Why the sessions could not be listed (no items then).
    pub error: Option<String>,
}

/// `sessions/expand`: an input about to be submitted (sources `interactive` and `rpc`).
#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(test, derive(TS))]
pub struct SessionsExpandParams {
    /// The calling session.
    pub caller: SessionCaller,
    /// The input text.
    pub text: String,
}

/// The answer to `sessions/expand`.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(test, derive(TS))]
pub struct SessionsExpandResult {
    /// The expanded text; `null` leaves the input unchanged.
    pub text: Option<String>,
    /// A warning for the user (the sessions could not be enumerated; the input is unchanged).
    pub warning: Option<String>,
}

/// `sessions/report` (notification): an accepted ask ended; the extension delivers it with
/// `pi.sendMessage({customType, content, display: true, details}, {deliverAs: "steer",
/// triggerTurn: true})`.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(test, derive(TS))]
#[serde(rename_all = "camelCase")]
pub struct SessionReport {
    /// `session-report`.
    pub custom_type: String,
    /// The report text (full target ID and path included).
    pub content: String,
    /// `{status, id, name, cwd, path, answer?, error?}`.
    #[cfg_attr(test, ts(type = "unknown"))]
    pub details: Value,
}

/// The answer to `experience/tool`.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(test, derive(TS))]
#[serde(rename_all = "camelCase")]
pub struct ExperienceToolResult {
    /// The text returned to the model.
    pub text: String,
    /// Whether the call failed (nothing changed then).
    pub is_error: bool,
}

// ------------------------------------------------------------------ sidecar → pi

/// `model/complete`: one chat completion through pi's model registry. pi answers the
/// [`ModelCompletion`], or errors `-32010` (model unresolvable) and `-32011` (provider
/// failure).
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(test, derive(TS))]
#[serde(rename_all = "camelCase")]
pub struct ModelCompleteParams {
    /// `provider/model-id`.
    pub model: String,
    /// pi's thinking level (`off`, `low`, `high`, ...).
    pub think_level: String,
    /// The system prompt.
    pub system: String,
    /// The conversation so far.
    pub messages: Vec<ModelMessage>,
    /// The tools the model may call (empty: none).
    pub tools: Vec<ModelTool>,
    /// pi aborts the call after this long.
    pub timeout_ms: u64,
}

/// One message of a model conversation.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(test, derive(TS))]
#[serde(
    tag = "role",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum ModelMessage {
    /// A user turn.
    User {
        /// Its text.
        content: String,
    },
    /// An earlier model turn.
    Assistant {
        /// Its text.
        text: String,
        /// Its tool calls.
        tool_calls: Vec<ModelToolCall>,
    },
    /// The result of a tool call.
    ToolResult {
        /// The call this answers.
        tool_call_id: String,
        /// The tool's name.
        tool_name: String,
        /// The result text.
        content: String,
        /// Whether the tool failed.
        is_error: bool,
    },
}

/// A tool call the model made.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(TS))]
pub struct ModelToolCall {
    /// The provider's id of the call.
    pub id: String,
    /// The tool's name.
    pub name: String,
    /// The arguments (an object from well-behaved models; any JSON from others).
    #[cfg_attr(test, ts(type = "unknown"))]
    pub arguments: Value,
}

/// A tool the model may call.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(test, derive(TS))]
pub struct ModelTool {
    /// The tool's name.
    pub name: String,
    /// What it does, for the model.
    pub description: String,
    /// JSON schema of its arguments.
    #[cfg_attr(test, ts(type = "unknown"))]
    pub parameters: Value,
}

/// The answer to `model/complete`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[cfg_attr(test, derive(TS))]
#[serde(rename_all = "camelCase")]
pub struct ModelCompletion {
    /// The text output.
    #[serde(default)]
    pub text: String,
    /// The tool calls, in order.
    #[serde(default)]
    pub tool_calls: Vec<ModelToolCall>,
    /// Why the model stopped.
    pub stop_reason: ModelStopReason,
}

/// Why the model stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[cfg_attr(test, derive(TS))]
#[serde(rename_all = "camelCase")]
pub enum ModelStopReason {
    /// It finished.
    Stop,
    /// It wants tool results.
    ToolUse,
    /// It hit its output limit.
    Length,
    /// It failed.
    Error,
    /// It was cancelled.
    Aborted,
}

/// `models/resolve`: which of these models pi can use (known id and credentials).
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(test, derive(TS))]
pub struct ModelsResolveParams {
    /// `provider/model-id` specs.
    pub specs: Vec<String>,
}

/// The answer to `models/resolve`.
#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(test, derive(TS))]
pub struct ModelsResolveResult {
    /// One flag per spec, in order.
    pub resolvable: Vec<bool>,
}

/// `ui/confirm`: a yes/no question for the user (also the shape of the dream nudge).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(test, derive(TS))]
pub struct ConfirmParams {
    /// The dialog's title.
    pub title: String,
    /// The question.
    pub body: String,
}

/// The answer to `ui/confirm`.
#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(test, derive(TS))]
pub struct ConfirmResult {
    /// Whether the user said yes (`false` without a UI).
    #[serde(default)]
    pub confirmed: bool,
}

/// `ui/status` (notification): sets or clears one entry of pi's status bar.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(test, derive(TS))]
pub struct StatusParams {
    /// The entry's key.
    pub key: String,
    /// Its text; `null` clears it.
    pub text: Option<String>,
}

// ------------------------------------------------------------------ conversions

impl From<&Message> for ModelMessage {
    fn from(m: &Message) -> Self {
        match m {
            Message::User { content } => ModelMessage::User {
                content: content.clone(),
            },
            Message::Assistant { text, tool_calls } => ModelMessage::Assistant {
                text: text.clone(),
                tool_calls: tool_calls.iter().map(ModelToolCall::from).collect(),
            },
            Message::ToolResult {
                call_id,
                name,
                content,
                is_error,
            } => ModelMessage::ToolResult {
                tool_call_id: call_id.clone(),
                tool_name: name.clone(),
                content: content.clone(),
                is_error: *is_error,
            },
        }
    }
}

impl From<&ToolCall> for ModelToolCall {
    fn from(c: &ToolCall) -> Self {
        ModelToolCall {
            id: c.id.clone(),
            name: c.name.clone(),
            arguments: c.arguments.clone(),
        }
    }
}

impl From<ModelToolCall> for ToolCall {
    fn from(c: ModelToolCall) -> Self {
        ToolCall {
            id: c.id,
            name: c.name,
            arguments: c.arguments,
        }
    }
}

impl From<&ToolDef> for ModelTool {
    fn from(t: &ToolDef) -> Self {
        ModelTool {
            name: t.name.clone(),
            description: t.description.clone(),
            parameters: t.parameters.clone(),
        }
    }
}

impl From<ModelStopReason> for StopReason {
    fn from(r: ModelStopReason) -> Self {
        match r {
            ModelStopReason::Stop => StopReason::Stop,
            ModelStopReason::ToolUse => StopReason::ToolUse,
            ModelStopReason::Length => StopReason::Length,
            ModelStopReason::Error => StopReason::Error,
            ModelStopReason::Aborted => StopReason::Aborted,
        }
    }
}

impl From<ModelCompletion> for Completion {
    fn from(c: ModelCompletion) -> Self {
        Completion {
            text: c.text,
            tool_calls: c.tool_calls.into_iter().map(ToolCall::from).collect(),
            stop_reason: c.stop_reason.into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::any::TypeId;
    use std::collections::HashSet;
    use std::fmt::Write as _;

    use serde_json::json;
    use ts_rs::{Config, TypeVisitor};

    use super::*;

    /// Where the generated TypeScript lives, and the variable that rewrites it.
    const PROTOCOL_TS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/extension/protocol.ts");
    const UPDATE_VAR: &str = "PIMEM_UPDATE_PROTOCOL_TS";

    /// Renders `protocol.ts`: every type reachable from the method maps (each declared once,
    /// in first-use order), then the maps.
    pub(super) struct Render {
        cfg: Config,
        seen: HashSet<TypeId>,
        decls: String,
        maps: String,
    }

    impl Render {
        fn new() -> Self {
            Render {
                // every integer on this connection fits a JavaScript number
                cfg: Config::new().with_large_int("number"),
                seen: HashSet::new(),
                decls: String::new(),
                maps: String::new(),
            }
        }

        /// Declares `T` and, recursively, the named types it uses.
        fn declare<T: TS + 'static + ?Sized>(&mut self) {
            if T::output_path().is_none() || !self.seen.insert(TypeId::of::<T>()) {
                return; // a primitive or built-in, or declared already
            }
            let decl = format!(
                "{}export {}",
                T::docs().unwrap_or_default(),
                T::decl(&self.cfg)
            );
            let _ = writeln!(self.decls, "{}\n", pretty(&decl));
            // ts-rs visits dependencies in no fixed order: declare them sorted by name
            type Declare = fn(&mut Render);
            struct Visit<'a>(&'a Config, Vec<(String, Declare)>);
            impl TypeVisitor for Visit<'_> {
                fn visit<U: TS + 'static + ?Sized>(&mut self) {
                    self.1.push((U::name(self.0), Render::declare::<U>));
                }
            }
            let mut deps = Visit(&self.cfg, Vec::new());
            T::visit_dependencies(&mut deps);
            let mut deps = deps.1;
            deps.sort_by(|a, b| a.0.cmp(&b.0));
            for (_, declare) in deps {
                declare(self);
            }
        }

        pub(super) fn begin_map(&mut self, name: &str) {
            let doc = match name {
                "PiRequests" => "Requests pi sends the sidecar: method → params and result.",
                "SidecarRequests" => "Requests the sidecar sends pi: method → params and result.",
                "PiNotifications" => "Notifications pi sends the sidecar: method → params.",
                _ => "Notifications the sidecar sends pi: method → params.",
            };
            let _ = writeln!(self.maps, "/** {doc} */\nexport type {name} = {{");
        }

        pub(super) fn request<P>(&mut self)
        where
            P: Request + TS + 'static,
            P::Result: TS + 'static,
        {
            self.declare::<P>();
            self.declare::<P::Result>();
            let _ = writeln!(
                self.maps,
                "\t\"{}\": {{ params: {}, result: {} }},",
                P::METHOD,
                P::name(&self.cfg),
                <P::Result as TS>::name(&self.cfg)
            );
        }

        pub(super) fn notification<P: Notify + TS + 'static>(&mut self) {
            self.declare::<P>();
            let _ = writeln!(
                self.maps,
                "\t\"{}\": {{ params: {} }},",
                P::METHOD,
                P::name(&self.cfg)
            );
        }

        pub(super) fn end_map(&mut self) {
            self.maps.push_str("};\n\n");
        }
    }

    /// Lays out one ts-rs declaration: one-line doc comments, one field per line.
    fn pretty(decl: &str) -> String {
        // `/**\n * a\n * b\n */` → `/** a b */`
        let mut flat = String::new();
        let mut rest = decl;
        while let Some(i) = rest.find("/**") {
            flat.push_str(&rest[..i]);
            let body = &rest[i + 3..];
            let end = body.find("*/").unwrap_or(body.len());
            let text: Vec<&str> = body[..end]
                .lines()
                .map(|l| l.trim().trim_start_matches('*').trim())
                .filter(|l| !l.is_empty())
                .collect();
            let _ = write!(flat, "/** {} */", text.join(" "));
            rest = body.get(end + 2..).unwrap_or("");
        }
        flat.push_str(rest);
        // break object types after `{`, after each member's `,`, and before `}`
        let mut out = String::new();
        let (mut depth, mut angle) = (0usize, 0usize);
        let indent = |out: &mut String, depth: usize| {
            out.push('\n');
            out.extend(std::iter::repeat_n('\t', depth));
        };
        let mut chars = flat.chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                '/' if chars.peek() == Some(&'*') => {
                    out.push(c); // a doc comment: copied as it is
                    while let Some(d) = chars.next() {
                        out.push(d);
                        if d == '*' && chars.peek() == Some(&'/') {
                            out.extend(chars.next());
                            break;
                        }
                    }
                }
                '"' => {
                    out.push(c);
                    for d in chars.by_ref() {
                        out.push(d);
                        if d == '"' {
                            break;
                        }
                    }
                }
                '<' | '>' => {
                    angle = if c == '<' {
                        angle + 1
                    } else {
                        angle.saturating_sub(1)
                    };
                    out.push(c);
                }
                '{' => {
                    depth += 1;
                    out.push(c);
                    chars.next_if_eq(&' ');
                    indent(&mut out, depth);
                }
                '}' if depth > 0 => {
                    depth -= 1;
                    out.truncate(out.trim_end().len());
                    indent(&mut out, depth);
                    out.push(c);
                }
                ',' if depth > 0 && angle == 0 => {
                    out.push(c);
                    chars.next_if_eq(&' ');
                    indent(&mut out, depth);
                }
                '\n' if depth > 0 => {
                    let line = out.rsplit('\n').next().unwrap_or_default();
                    if !line.trim().is_empty() {
                        indent(&mut out, depth);
                    }
                }
                _ => out.push(c),
            }
        }
        out
    }

    /// The whole of `extension/protocol.ts`.
    fn protocol_ts() -> String {
        let mut r = Render::new();
        PiRequests(&mut r);
        PiNotifications(&mut r);
        SidecarRequests(&mut r);
        SidecarNotifications(&mut r);
        r.declare::<ProtocolMismatch>();
        let mut out = String::from(
            "// GENERATED by `ts-rs` from memory-pi/src/serve/protocol.rs (the test\n\
             // `protocol_ts_is_generated_from_these_types`): do not edit. Regenerate with\n\
             //   PIMEM_UPDATE_PROTOCOL_TS=1 cargo test -p memory-pi --lib protocol_ts\n\
             // The JSON-RPC protocol between the pi extension and `pimem serve`, version 1.\n\n",
        );
        out.push_str(&r.maps);
        out.push_str(&r.decls);
        out.truncate(out.trim_end().len());
        out.push('\n');
        out
    }

    #[test]
    // The test's own switch and its output file (not a memory file).
    #[allow(clippy::disallowed_methods)]
    fn protocol_ts_is_generated_from_these_types() {
        let want = protocol_ts();
        if std::env::var_os(UPDATE_VAR).is_some_and(|v| v == "1") {
            std::fs::write(PROTOCOL_TS, &want).unwrap();
            return;
        }
        let have = std::fs::read_to_string(PROTOCOL_TS).unwrap_or_default();
        assert!(
            have == want,
            "memory-pi/extension/protocol.ts is stale: regenerate it with\n  \
             {UPDATE_VAR}=1 cargo test -p memory-pi --lib protocol_ts"
        );
    }

    fn message(params: Value) -> String {
        parse::<SessionStartParams>(params).unwrap_err().message
    }

    #[test]
    fn invalid_params_name_the_field() {
        assert_eq!(message(json!({})), "invalid params: \"cwd\" is required");
        assert_eq!(
            message(json!({ "cwd": null, "agentDir": "/a" })),
            "invalid params: \"cwd\" is required"
        );
        assert_eq!(
            message(json!({ "cwd": 5, "agentDir": "/a" })),
            "invalid params: \"cwd\": invalid type: integer `5`, expected a string"
        );
        assert_eq!(
            message(json!({ "cwd": "/c", "agentDir": "/a", "trusted": "yes" })),
            "invalid params: \"trusted\": invalid type: string \"yes\", expected a boolean"
        );
        assert_eq!(
            message(json!({ "cwd": "/c", "agentDir": "/a", "sectionPatches": {} })),
            "invalid params: \"sectionPatches\": invalid type: map, expected a sequence"
        );
        let e = parse::<InitializeParams>(json!([1])).unwrap_err();
        assert_eq!(
            (e.code, e.message.as_str()),
            (-32602, "invalid params: \"protocol\" is required")
        );
    }

    #[test]
    fn null_is_absent_and_informational_fields_accept_anything() {
        let p: SessionStartParams = parse(json!({
            "cwd": "/c", "agentDir": "/a", "reason": null, "trusted": null, "hasUI": true,
            "child": null, "recorded": null, "sectionPatches": null, "sessionDir": null,
            "mode": 3, "sessionId": null, "sessionFile": ["x"], "unknown": {},
        }))
        .unwrap();
        assert_eq!(p.reason, None);
        assert!(!p.trusted && p.has_ui && !p.child);
        assert_eq!((p.recorded, p.section_patches.len()), (None, 0));
        assert_eq!((p.mode.as_str(), p.session_file), ("", None));
        let p: CommandParams = parse(json!({ "name": "memory", "args": null })).unwrap();
        assert_eq!((p.args.as_str(), p.confirmed), ("", None));
        // `null` is a value for the fields that take any JSON
        let p: InitializeParams = parse(json!({ "protocol": null })).unwrap();
        assert_eq!(p.protocol, Value::Null);
        let p: ToolExecuteParams = parse(json!({ "args": null, "toolCallId": 1 })).unwrap();
        assert_eq!((p.args, p.tool_call_id.as_str()), (Value::Null, ""));
    }

    #[test]
    fn model_messages_keep_memory_agents_json() {
        let messages = vec![
            Message::User {
                content: "u".into(),
            },
            Message::Assistant {
                text: "a".into(),
                tool_calls: vec![ToolCall {
                    id: "c".into(),
                    name: "memory".into(),
                    arguments: json!({ "action": "list" }),
                }],
            },
            Message::ToolResult {
                call_id: "c".into(),
                name: "memory".into(),
                content: "r".into(),
                is_error: true,
            },
        ];
        let wire: Vec<ModelMessage> = messages.iter().map(ModelMessage::from).collect();
        assert_eq!(
            serde_json::to_value(&wire).unwrap(),
            serde_json::to_value(&messages).unwrap()
        );
        let tool = ToolDef {
            name: "memory".into(),
            description: "d".into(),
            parameters: json!({ "type": "object" }),
        };
        assert_eq!(
            serde_json::to_value(ModelTool::from(&tool)).unwrap(),
            serde_json::to_value(&tool).unwrap()
        );
        for v in [
            json!({ "text": "t", "toolCalls": [{ "id": "i", "name": "n", "arguments": {} }], "stopReason": "toolUse" }),
            json!({ "stopReason": "stop" }),
            json!({ "stopReason": "aborted", "text": "" }),
        ] {
            let wire: ModelCompletion = serde_json::from_value(v.clone()).unwrap();
            let agent: Completion = serde_json::from_value(v).unwrap();
            assert_eq!(Completion::from(wire), agent);
        }
    }
}
