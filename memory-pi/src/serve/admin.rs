//! pi-auto-memory's behaviours in the sidecar: the persistent switch as every turn, tool call
//! and command sees it (PA-11..PA-16, PA-45), `/memory on|off|doctor` (PA-26, PA-52), the
//! `files/guard` answer for pi's built-in file tools (PA-33..PA-37) and the fail-closed
//! memory directory (PA-49). The texts live in `memory_core::messages`.

use std::path::PathBuf;

use memory_core::messages as msg;
use memory_core::{SwitchState, check_dir_usable, expand_dir, home_dir};

use super::guard::{self, Verdict};
use super::protocol::{CommandResult, FilesGuardParams, FilesGuardResult, Level, SectionRecord};
use super::rpc::RpcError;
use super::section;
use super::session::Session;
use super::{PROTOCOL, Server};
use crate::doctor;

/// The section change for the turn about to start (PA-16, PA-17): `""` while memory is off
/// or paused; the index read again (and recorded) on the first turn after it is back on, or
/// after `/memory reload` (PA-17, PA-20).
/// `(None, None)`: keep the frozen value.
pub(super) fn section_for_turn(
    session: &Session,
    state: &SwitchState,
) -> (Option<String>, Option<SectionRecord>) {
    let mut live = session.live.lock();
    if !state.is_on() {
        live.suspended = true;
        return (Some(String::new()), None);
    }
    if !live.suspended && !live.refresh {
        return (None, None);
    }
    let cfg = &session.cfg;
    let fresh = session.project().ok().and_then(|p| {
        p.store
            .index_section(
                cfg.mem_index_inject_max_lines,
                cfg.mem_index_inject_max_bytes,
            )
            .ok()
    });
    match fresh {
        Some(s) => {
            live.suspended = false;
            live.refresh = false;
            live.index_changed = false;
            live.section = s;
            (
                Some(live.section.value.clone()),
                Some(section::record(&live.section)),
            )
        }
        // The index cannot be read: inject nothing, try again next turn (PA-24).
        None => (Some(String::new()), None),
    }
}

/// Why a memory tool call cannot run now: memory off or paused, or the memory directory
/// unusable (checked at every call, never cached: PA-49).
pub(super) fn tool_refusal(session: &Session, project: &memory_core::Project) -> Option<String> {
    if let Some(refusal) = session.switch.state().refusal() {
        return Some(refusal.to_string());
    }
    for dir in [project.memory_root.as_path(), project.dir.path.as_path()] {
        if let Err(problem) = check_dir_usable(dir) {
            return Some(msg::memory_unavailable(&problem));
        }
    }
    None
}

/// `/memory on` and `/memory off`.
pub(super) fn switch_command(server: &Server, enabled: bool) -> CommandResult {
    let Some(session) = server.session() else {
        return CommandResult::show("Memory not initialized.", Level::Info);
    };
    let switch = &session.switch;
    match switch.set(enabled) {
        Ok(out) if enabled => {
            CommandResult::show(msg::switched_on(&switch.path(), out.written), Level::Info)
        }
        Ok(out) => CommandResult::show(msg::switched_off(&switch.path(), out.written), Level::Info),
        Err(e) => CommandResult::show(e.to_string(), Level::Error),
    }
}

/// `/memory doctor`.
pub(super) fn doctor_command(server: &Server) -> CommandResult {
    let Some(session) = server.session() else {
        return CommandResult::show("Memory not initialized.", Level::Info);
    };
    let info = &session.info;
    let models = super::session::resolve_models(&server.peer, &session.cfg)
        .into_iter()
        .collect();
    let protocol = match server.client.lock().clone() {
        Some((protocol, version)) => doctor::Protocol::Extension { protocol, version },
        None => doctor::Protocol::Unchecked(msg::doctor::protocol_cli()),
    };
    let report = doctor::run(&doctor::Input {
        cwd: info.cwd.clone(),
        agent_dir: Some(info.agent_dir.clone()),
        trusted: info.trusted,
        memory_dir: None,
        models: doctor::Models::Resolved(models),
        protocol,
        binary: (PROTOCOL, env!("CARGO_PKG_VERSION").to_owned()),
        platform: memory_keys::Platform::current(),
    });
    let level = if report.failed() {
        Level::Error
    } else if report
        .checks
        .iter()
        .any(|c| c.state == doctor::State::Warning)
    {
        Level::Warning
    } else {
        Level::Info
    };
    CommandResult::show(report.text(), level)
}

/// The memory root of the session: the opened project's, else `memoryDir` expanded.
fn memory_root(session: &Session) -> Option<PathBuf> {
    match session.project() {
        Ok(p) => Some(p.memory_root.clone()),
        Err(_) => expand_dir(&session.cfg.memory_dir, &session.info.cwd)
            .ok()
            .map(|p| p.into_std_path_buf()),
    }
}

/// `files/guard`: pi's built-in file tools against the memory tree.
pub(super) fn files_guard(
    server: &Server,
    p: FilesGuardParams,
) -> Result<FilesGuardResult, RpcError> {
    let allow = FilesGuardResult { block: None };
    let Some(session) = server.session() else {
        return Ok(allow);
    };
    let Some(root) = memory_root(&session) else {
        return Ok(allow);
    };
    let cwd = if p.cwd.is_empty() {
        session.info.cwd.clone()
    } else {
        PathBuf::from(&p.cwd)
    };
    let on = session.switch.state().is_on();
    let home = home_dir();
    Ok(
        match guard::judge(&p.tool_name, &p.input, &cwd, home.as_deref(), &root, on) {
            Verdict::Allow => {
                if p.tool_name == "read" && on {
                    super::curate::record_read(&session, &p.input, &cwd);
                }
                allow
            }
            Verdict::Block(reason) => FilesGuardResult {
                block: Some(reason),
            },
            Verdict::Narrow => match guard::ensure_ignore(&root, on) {
                Ok(()) => allow,
                Err(e) => FilesGuardResult {
                    block: Some(msg::guard_narrow_failed(&p.tool_name, &e)),
                },
            },
        },
    )
}
