//! The pi-session methods (`sessions/*`, PS-01..PS-35): `search-session`, the `@s:` /
//! `@as:` candidates and expansion, and `ask-session` (run by [`super::ask`]). The logic is
//! memory-agent's `pi::session_tools`; this module turns the wire types into its calls.
//!
//! These methods carry their caller in every request ([`SessionCaller`]) instead of relying
//! on `session/start`: the session tools work even when memory itself is misconfigured.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use memory_agent::pi::session_tools::{
    self, Caller, Expansion, RefScope, ToolOutcome, parse_ask_args, resolve_target,
};
use memory_agent::pi::sessions::{SessionCatalog, SessionStorage};
use memory_core::home_dir;
use serde_json::Value;

use super::Server;
use super::ask::{Answer, AskRunner};
use super::protocol::Request as _;
#[cfg(test)]
use super::protocol::ToolRegistration;
use super::protocol::{
    RefPrefix, SessionCaller, SessionCandidate, SessionsAskParams, SessionsCandidatesParams,
    SessionsCandidatesResult, SessionsExpandParams, SessionsExpandResult, SessionsSearchParams,
    SessionsToolResult,
};
use super::rpc::{RpcError, code};

/// How long the children of closed asks may take to exit.
const CLOSE_GRACE: Duration = Duration::from_secs(2);

/// The pi-session state of one connection: the cached session listing and the running asks.
#[derive(Default)]
pub(super) struct PiSession {
    catalog: SessionCatalog,
    asks: Arc<AskRunner>,
}

impl PiSession {
    /// Closes every ask (caller shutdown or end of input): no late reports (PS-30).
    pub(super) fn close(&self) {
        self.asks.close(CLOSE_GRACE);
    }
}

/// Routes one `sessions/*` request.
pub(super) fn route(server: &Server, method: &str, params: Value) -> Result<Value, RpcError> {
    match method {
        SessionsSearchParams::METHOD => super::answer(params, |p| search(server, p)),
        SessionsAskParams::METHOD => super::answer(params, |p| ask(server, p)),
        SessionsCandidatesParams::METHOD => super::answer(params, |p| candidates(server, p)),
        SessionsExpandParams::METHOD => super::answer(params, |p| expand(server, p)),
        other => Err(RpcError::new(
            code::METHOD_NOT_FOUND,
            format!("Method not found: {other}"),
        )),
    }
}

/// The two tools as pi registers them: rendered into `extension/session-tools.json` (which
/// the extension registers from) by the test that keeps the two equal.
#[cfg(test)]
fn tool_definitions() -> Vec<ToolRegistration> {
    let search = session_tools::search_session_def();
    let ask = session_tools::ask_session_def();
    vec![
        ToolRegistration {
            name: search.name,
            label: "Search sessions".to_owned(),
            description: search.description,
            prompt_snippet:
                "Search past pi sessions' conversations (this or an authorized project)".to_owned(),
            parameters: search.parameters,
        },
        ToolRegistration {
            name: ask.name,
            label: "Ask session".to_owned(),
            description: ask.description,
            prompt_snippet:
                "Ask an earlier pi session a question in the background; its report arrives later"
                    .to_owned(),
            parameters: ask.parameters,
        },
    ]
}

fn caller(c: &SessionCaller) -> Caller {
    let cwd = PathBuf::from(&c.cwd);
    let agent_dir = PathBuf::from(&c.agent_dir);
    let session_dir = c.session_dir.as_deref().map(PathBuf::from);
    Caller {
        storage: SessionStorage::detect(&agent_dir, &cwd, session_dir.as_deref()),
        cwd,
        home: home_dir(),
        session_id: c.session_id.clone().filter(|s| !s.is_empty()),
        session_file: c.session_file.as_deref().map(PathBuf::from),
    }
}

fn tool_result(outcome: ToolOutcome, guidance: Option<String>) -> SessionsToolResult {
    SessionsToolResult {
        text: outcome.status.to_string(),
        guidance,
        details: outcome.status,
        is_error: outcome.is_error,
    }
}

/// `sessions/search`: one `search-session` call.
pub(super) fn search(
    _server: &Server,
    p: SessionsSearchParams,
) -> Result<SessionsToolResult, RpcError> {
    let caller = caller(&p.caller);
    Ok(tool_result(
        session_tools::search_session(&p.args, &caller),
        None,
    ))
}

/// `sessions/candidates`: completion candidates for an `@s:` / `@as:` token.
pub(super) fn candidates(
    server: &Server,
    p: SessionsCandidatesParams,
) -> Result<SessionsCandidatesResult, RpcError> {
    let caller = caller(&p.caller);
    let scope = match p.prefix {
        RefPrefix::S => RefScope::Cwd,
        RefPrefix::As => RefScope::All,
    };
    Ok(
        match session_tools::candidates(&server.pisession.catalog, &caller, scope, &p.query) {
            Ok(items) => SessionsCandidatesResult {
                items: items
                    .into_iter()
                    .map(|c| SessionCandidate {
                        id: c.id,
                        name: c.name,
                        cwd: c.cwd,
                        path: c.path,
                        activity: c.activity,
                    })
                    .collect(),
                error: None,
            },
            Err(e) => SessionsCandidatesResult {
                items: Vec::new(),
                error: Some(format!("cannot list sessions: {e}")),
            },
        },
    )
}

/// `sessions/expand`: the references of an input about to be submitted.
pub(super) fn expand(
    server: &Server,
    p: SessionsExpandParams,
) -> Result<SessionsExpandResult, RpcError> {
    let caller = caller(&p.caller);
    Ok(
        match session_tools::expand_references(&p.text, &server.pisession.catalog, &caller) {
            Expansion::Unchanged => SessionsExpandResult {
                text: None,
                warning: None,
            },
            Expansion::Expanded(text) => SessionsExpandResult {
                text: Some(text),
                warning: None,
            },
            Expansion::Failed(warning) => SessionsExpandResult {
                text: None,
                warning: Some(warning),
            },
        },
    )
}

/// `sessions/ask`: one `ask-session` call.
pub(super) fn ask(server: &Server, p: SessionsAskParams) -> Result<SessionsToolResult, RpcError> {
    let caller = caller(&p.caller);
    let args = match parse_ask_args(&p.args) {
        Ok(a) => a,
        Err(e) => return Ok(tool_result(ToolOutcome::error(e), None)),
    };
    let target = match resolve_target(
        &server.pisession.catalog,
        &caller,
        &args.id,
        p.args.get("cwd"),
    ) {
        Ok(t) => t,
        Err(e) => return Ok(tool_result(ToolOutcome::error(e), None)),
    };
    let answer = server.pisession.asks.ask(
        &server.peer,
        target.clone(),
        &args.prompt,
        args.steer,
        &p.pi_command,
    );
    Ok(match answer {
        Answer::Error(e) => tool_result(ToolOutcome::error(e), None),
        Answer::Status(status, pid) => {
            let mut value = status.status(&target);
            if let Some(pid) = pid {
                value["pid"] = Value::from(pid);
            }
            let guidance = status.guidance(&target.session.id);
            tool_result(
                ToolOutcome {
                    status: value,
                    is_error: false,
                },
                Some(guidance),
            )
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const TOOLS_JSON: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/extension/session-tools.json");

    fn rendered() -> String {
        let value = serde_json::to_value(tool_definitions()).unwrap_or_default();
        let mut text = serde_json::to_string_pretty(&value).unwrap_or_default();
        text.push('\n');
        text
    }

    #[test]
    // The test's own switch and its output file (not a memory file).
    #[allow(clippy::disallowed_methods)]
    fn session_tools_json_is_generated_from_the_definitions() {
        let want = rendered();
        if std::env::var_os("PIMEM_UPDATE_PROTOCOL_TS").is_some_and(|v| v == "1") {
            std::fs::write(TOOLS_JSON, &want).unwrap();
            return;
        }
        let have = std::fs::read_to_string(TOOLS_JSON).unwrap_or_default();
        assert!(
            have == want,
            "memory-pi/extension/session-tools.json is stale: regenerate it with\n  \
             PIMEM_UPDATE_PROTOCOL_TS=1 cargo test -p memory-pi --lib session_tools_json"
        );
    }

    #[test]
    fn a_flat_session_dir_is_told_apart_from_the_default_layout() {
        let c = caller(&SessionCaller {
            cwd: "/home/u/app".into(),
            agent_dir: "/home/u/.pi/agent".into(),
            session_dir: Some("/home/u/.pi/agent/sessions/--home-u-app--".into()),
            session_id: Some(String::new()),
            session_file: None,
        });
        assert!(matches!(c.storage, SessionStorage::PerCwd { .. }));
        assert_eq!(c.session_id, None);
        // `--no-session`: pi reports "" as the session directory.
        let c = caller(&SessionCaller {
            cwd: "/home/u/app".into(),
            agent_dir: "/home/u/.pi/agent".into(),
            session_dir: Some(String::new()),
            session_id: None,
            session_file: None,
        });
        assert!(matches!(c.storage, SessionStorage::PerCwd { .. }));
        let c = caller(&SessionCaller {
            cwd: "/home/u/app".into(),
            agent_dir: "/home/u/.pi/agent".into(),
            session_dir: Some("/srv/flat".into()),
            session_id: Some("s1".into()),
            session_file: None,
        });
        assert_eq!(
            c.storage,
            SessionStorage::Flat {
                dir: "/srv/flat".into()
            }
        );
    }
}
