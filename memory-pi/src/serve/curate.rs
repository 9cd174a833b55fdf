//! Curating memory from pi (issue 12): `/memory list` (PA-30..PA-32), the read-only view, a
//! person's edit and delete with compare-and-swap (PA-19..PA-21, PA-44..PA-47), `/memory
//! reload`, and the session usage summary `/memory` shows (PA-26..PA-29, kept in `usage`).
//!
//! The extension only drives pi's UI (`ctx.ui.select`, a read-only custom component,
//! `ctx.ui.editor`); every decision is made here and every text comes localised from
//! `curate_texts`.
//!
//! * **List** (`memory/list`, and `/memory list` printed headless): `MEMORY.md` (when it is a
//!   regular file) and every entry the store lists, with name, type, modified and size.
//!   Symlinks are never followed (the store's scan skips them, `MEMORY.md` is `lstat`ed).
//! * **View** (`memory/open`): one file, as the entry renders (for `MEMORY.md`: its bytes),
//!   with its version and a session token. Refused while memory is off (PA-16).
//! * **Edit** (`memory/save`): refused with `Memory operation invalidated by a session change`
//!   when the session changed since the view (a `session/start`, `session/shutdown` or
//!   `session/tree` advanced the generation), with `Memory is off` when the switch is off,
//!   with `Memory conflict: stale version` when the file changed since; otherwise written
//!   through the store like a tool write (validation, secret refusal, lock, snapshot, atomic
//!   replace). An entry's text must still parse as an entry (its frontmatter gives the name,
//!   description and type; `created` is kept and `modified` set by the store).
//! * **Delete** (`memory/delete`): asks `ui/confirm` with the name, then removes exactly the
//!   version shown (the store snapshots the entry and the index first and drops the index
//!   line). `MEMORY.md` is never deleted; there is no wipe-all and no force.
//!
//! Decision (VECTORS §Z 19, "an entry in the frozen section"): pi-memory's frozen section is the
//! window of `MEMORY.md`; entry bodies are not in it (surfacing reads them live). So the
//! section that would be frozen is computed before and after an edit or delete: when this
//! write changed it, the answer says the change reaches the model after `/memory reload` and
//! `/memory` shows the mark until the section is read again (PA-19, PA-21); a body-only edit
//! just says "saved". Changes by the model's tool, other sessions or other processes are never
//! marked (PA-21).
//!
//! Decision (VECTORS §Z 19, PA-46): the session check and the write happen under one lock that
//! every session change also takes, so a change either comes after the write (which then belonged
//! to the old session and completed) or makes the write fail; the old copy is never written after
//! it.
//!
//! # Limitations
//! * A session change that arrives while an edit or delete is being written waits for that
//!   write (at most `lock.timeoutMs`, when a dream or another writer holds the lock).
//! * The list and the view show entries as the store parses them: a file that is not an entry
//!   (no frontmatter) is not listed, and the view shows an entry as it renders, which differs
//!   from the bytes only for files written by hand in another layout.
//! * Only reads through pi's `read` tool are counted; a shell command reading a file is not.

use std::fs;
use std::sync::Arc;

use memory_agent::AgentRun;
use memory_core::{
    INDEX_FILE, Language, Project, ReplaceRequest, StoredEntry, Version, ui_language,
};
use memory_index::{parse_entry, render_entry};
use parking_lot::Mutex;
use serde_json::Value;

use super::Server;
use super::curate_texts as t;
use super::protocol::{
    CommandResult, Level, MemoryDeleteParams, MemoryListItem, MemoryListParams, MemoryListResult,
    MemoryOpenParams, MemoryOpenResult, MemorySaveParams, MemoryWriteResult, SessionTreeParams,
    SessionTreeResult,
};
use super::rpc::RpcError;
use super::session::Session;
use super::usage::Via;

/// The session generation: advanced by every session change. Views carry the value they were
/// opened under; writes compare it while holding this lock.
static GENERATION: Mutex<u64> = parking_lot::const_mutex(0);

/// A session change (start, shutdown, tree navigation): views opened before can no longer
/// write (PA-46). Waits for a write in progress to finish.
pub(super) fn invalidate() {
    *GENERATION.lock() += 1;
}

fn token() -> String {
    format!("g{}", *GENERATION.lock())
}

fn lang(session: &Session) -> Language {
    ui_language(&session.cfg)
}

/// `session/tree`.
pub(super) fn session_tree(
    _: &Server,
    _: SessionTreeParams,
) -> Result<SessionTreeResult, RpcError> {
    invalidate();
    Ok(SessionTreeResult {})
}

/// One line of the list.
struct Listed {
    file: String,
    label: String,
}

/// `MEMORY.md` (if a regular file) and every entry, oldest first: no body is sent anywhere.
// Decision (VECTORS §Z 19): the entries come from the store's cached scan (name and type live
// in the file); the list neither keeps nor sends a body, and nothing here counts as a read.
fn listing(project: &Project, lang: Language) -> Result<Vec<Listed>, String> {
    let dir = project.store.dir();
    let mut out = Vec::new();
    // lstat: a symlinked index is not followed (and not listed).
    if let Ok(meta) = fs::symlink_metadata(dir.join(INDEX_FILE))
        && meta.file_type().is_file()
    {
        let modified = meta
            .modified()
            .ok()
            .and_then(|m| jiff::Timestamp::try_from(m).ok())
            .map(|ts| minute(&ts.to_string()))
            .unwrap_or_default();
        out.push(Listed {
            file: INDEX_FILE.to_owned(),
            label: t::index_label(lang, &modified, &t::size(meta.len())),
        });
    }
    let entries = project.store.list().map_err(|e| e.to_string())?;
    for e in entries {
        let size = fs::symlink_metadata(dir.join(&e.file))
            .map(|m| m.len())
            .unwrap_or(0);
        out.push(Listed {
            label: t::entry_label(
                lang,
                &e.meta.name,
                e.meta.entry_type.as_str(),
                &minute(&e.meta.modified),
                &t::size(size),
                &e.file,
            ),
            file: e.file.clone(),
        });
    }
    Ok(out)
}

/// `2026-11-30T21:05:07.123Z` → `2026-11-30 21:05` (UTC, as the files store it).
fn minute(iso: &str) -> String {
    let cut: String = iso.chars().take(16).collect();
    cut.replacen('T', " ", 1)
}

/// `memory/list`.
pub(super) fn list(server: &Server, _: MemoryListParams) -> Result<MemoryListResult, RpcError> {
    let Some(session) = server.session() else {
        return Ok(MemoryListResult {
            title: String::new(),
            empty: Some("Memory not initialized.".to_owned()),
            items: Vec::new(),
        });
    };
    let lang = lang(&session);
    let project = match session.project() {
        Ok(p) => p,
        Err(errors) => {
            return Ok(MemoryListResult {
                title: String::new(),
                empty: Some(memory_core::misconfigured_block(&errors)),
                items: Vec::new(),
            });
        }
    };
    let title = t::list_title(lang, project.store.dir().as_str());
    Ok(match listing(&project, lang) {
        Ok(items) if items.is_empty() => MemoryListResult {
            title,
            empty: Some(t::list_empty(lang)),
            items: Vec::new(),
        },
        Ok(items) => MemoryListResult {
            title,
            empty: None,
            items: items
                .into_iter()
                .map(|l| MemoryListItem {
                    file: l.file,
                    label: l.label,
                })
                .collect(),
        },
        Err(e) => MemoryListResult {
            title,
            empty: Some(e),
            items: Vec::new(),
        },
    })
}

/// `/memory list` without a TUI: the same listing as text (PA-30).
pub(super) fn list_command(server: &Server) -> CommandResult {
    let Some(session) = server.session() else {
        return CommandResult::show("Memory not initialized.", Level::Info);
    };
    let lang = lang(&session);
    let project = match session.project() {
        Ok(p) => p,
        Err(errors) => {
            return CommandResult::show(memory_core::misconfigured_block(&errors), Level::Error);
        }
    };
    match listing(&project, lang) {
        Ok(items) if items.is_empty() => CommandResult::show(t::list_empty(lang), Level::Info),
        Ok(items) => {
            let mut text = t::listing_header(lang, project.store.dir().as_str(), items.len());
            for l in items {
                text.push_str("\n  ");
                text.push_str(&l.label);
            }
            CommandResult::show(text, Level::Info)
        }
        Err(e) => CommandResult::show(e, Level::Error),
    }
}

/// `/memory reload` (PA-20): the section is read again at the next turn; nothing else.
pub(super) fn reload_command(server: &Server) -> CommandResult {
    let Some(session) = server.session() else {
        return CommandResult::show("Memory not initialized.", Level::Info);
    };
    session.live.lock().refresh = true;
    CommandResult::show(t::reload_scheduled(lang(&session)), Level::Info)
}

/// The entry listed under exactly this file name (never a lookup by name).
fn entry(project: &Project, file: &str) -> Result<Option<Arc<StoredEntry>>, String> {
    Ok(project
        .store
        .list()
        .map_err(|e| e.to_string())?
        .into_iter()
        .find(|e| e.file == file))
}

/// `memory/open`.
pub(super) fn open(server: &Server, p: MemoryOpenParams) -> Result<MemoryOpenResult, RpcError> {
    let token = token();
    let Some(session) = server.session() else {
        return Ok(open_error(&p.file, Language::En, "Memory not initialized."));
    };
    let lang = lang(&session);
    if let Some(refusal) = session.switch.state().refusal() {
        return Ok(open_error(&p.file, lang, &refusal.to_string()));
    }
    let project = match session.project() {
        Ok(p) => p,
        Err(errors) => {
            return Ok(open_error(
                &p.file,
                lang,
                &memory_core::misconfigured_block(&errors),
            ));
        }
    };
    let (text, version) = if p.file == INDEX_FILE {
        match project.store.read_index_versioned() {
            Ok(read) => read,
            Err(e) => return Ok(open_error(&p.file, lang, &e.to_string())),
        }
    } else {
        match entry(&project, &p.file) {
            Ok(Some(e)) => (render_entry(&e.meta, &e.body), e.version),
            Ok(None) => return Ok(open_error(&p.file, lang, &t::no_such_file(lang, &p.file))),
            Err(e) => return Ok(open_error(&p.file, lang, &e)),
        }
    };
    let deletable = p.file != INDEX_FILE;
    Ok(MemoryOpenResult {
        title: t::view_title(lang, &p.file),
        edit_title: t::edit_title(lang, &p.file),
        invalidated: t::not_saved(lang, t::INVALIDATED),
        keys: t::view_keys(lang, deletable),
        file: p.file,
        text,
        version: version.to_string(),
        token,
        deletable,
        error: None,
    })
}

fn open_error(file: &str, lang: Language, error: &str) -> MemoryOpenResult {
    MemoryOpenResult {
        file: file.to_owned(),
        title: t::view_title(lang, file),
        text: String::new(),
        version: String::new(),
        token: String::new(),
        keys: t::view_keys(lang, false),
        deletable: false,
        edit_title: t::edit_title(lang, file),
        invalidated: t::not_saved(lang, t::INVALIDATED),
        error: Some(error.to_owned()),
    }
}

fn refused(text: String) -> MemoryWriteResult {
    MemoryWriteResult {
        done: false,
        text: Some(text),
        level: Level::Error,
    }
}

/// The section that would be frozen now (`None` when the index cannot be read).
fn section_now(session: &Session, project: &Project) -> Option<String> {
    let cfg = &session.cfg;
    project
        .store
        .index_section(
            cfg.mem_index_inject_max_lines,
            cfg.mem_index_inject_max_bytes,
        )
        .ok()
        .map(|s| s.value)
}

/// Whether this write changed the section that would be frozen now; sets the mark (PA-21).
fn mark_if_index_changed(session: &Session, project: &Project, before: Option<String>) -> bool {
    let changed = section_now(session, project) != before;
    if changed {
        session.live.lock().index_changed = true;
    }
    changed
}

/// The checks every write makes first: the token, then the switch, then the project.
fn prepare(
    server: &Server,
    token: &str,
    version: &str,
    not_done: fn(Language, &str) -> String,
) -> Result<(Arc<Session>, Arc<Project>, Version, Language), MemoryWriteResult> {
    let Some(session) = server.session() else {
        return Err(refused(not_done(Language::En, "Memory not initialized.")));
    };
    let lang = lang(&session);
    if token != self::token() {
        return Err(refused(not_done(lang, t::INVALIDATED)));
    }
    if let Some(refusal) = session.switch.state().refusal() {
        return Err(refused(not_done(lang, &refusal.to_string())));
    }
    let project = match session.project() {
        Ok(p) => p,
        Err(errors) => {
            return Err(refused(not_done(lang, &errors.join("; "))));
        }
    };
    let version = match version.parse::<Version>() {
        Ok(v) => v,
        Err(e) => return Err(refused(not_done(lang, &e.to_string()))),
    };
    Ok((session, project, version, lang))
}

/// `memory/save`.
pub(super) fn save(server: &Server, p: MemorySaveParams) -> Result<MemoryWriteResult, RpcError> {
    let (session, project, version, lang) =
        match prepare(server, &p.token, &p.version, t::not_saved) {
            Ok(ready) => ready,
            Err(answer) => return Ok(answer),
        };
    if Version::of(p.text.as_bytes()) == version {
        return Ok(MemoryWriteResult {
            done: false,
            text: Some(t::unchanged(lang)),
            level: Level::Info,
        });
    }
    let request = if p.file == INDEX_FILE {
        None
    } else {
        let Some(parsed) = parse_entry(&p.text) else {
            return Ok(refused(t::not_saved(lang, &t::not_an_entry(lang))));
        };
        Some(ReplaceRequest {
            reference: p.file.clone(),
            name: Some(parsed.meta.name),
            description: Some(parsed.meta.description),
            entry_type: Some(parsed.meta.entry_type),
            body: Some(parsed.body),
            expected_version: Some(version),
        })
    };
    let before = section_now(&session, &project);
    // The session check and the write under the generation lock (PA-46).
    let written = {
        let generation = GENERATION.lock();
        if p.token != format!("g{}", *generation) {
            return Ok(refused(t::not_saved(lang, t::INVALIDATED)));
        }
        match request {
            None => project
                .store
                .replace_index(&p.text, Some(&version))
                .map(|_| (INDEX_FILE.to_owned(), INDEX_FILE.to_owned())),
            Some(req) => project.store.replace(req).map(|o| (o.name, o.file)),
        }
    };
    match written {
        Ok((name, file)) => {
            session.usage.lock().save(&name, Via::Edit);
            let text = if mark_if_index_changed(&session, &project, before) {
                t::saved_needs_reload(lang, &file)
            } else {
                t::saved(lang, &file)
            };
            Ok(MemoryWriteResult {
                done: true,
                text: Some(text),
                level: Level::Info,
            })
        }
        Err(e) => Ok(refused(t::not_saved(lang, &e.to_string()))),
    }
}

/// `memory/delete`.
pub(super) fn delete(
    server: &Server,
    p: MemoryDeleteParams,
) -> Result<MemoryWriteResult, RpcError> {
    let (session, project, version, lang) =
        match prepare(server, &p.token, &p.version, t::not_deleted) {
            Ok(ready) => ready,
            Err(answer) => return Ok(answer),
        };
    if p.file == INDEX_FILE {
        return Ok(refused(t::not_deleted(lang, &t::index_not_deletable(lang))));
    }
    let name = match entry(&project, &p.file) {
        Ok(Some(e)) => e.meta.name.clone(),
        Ok(None) => {
            return Ok(refused(t::not_deleted(
                lang,
                &t::no_such_file(lang, &p.file),
            )));
        }
        Err(e) => return Ok(refused(t::not_deleted(lang, &e))),
    };
    if !server.confirm(
        &session,
        &t::delete_title(lang),
        &t::delete_body(lang, &name, &p.file),
    ) {
        return Ok(MemoryWriteResult {
            done: false,
            text: None,
            level: Level::Info,
        });
    }
    let before = section_now(&session, &project);
    let removed = {
        let generation = GENERATION.lock();
        if p.token != format!("g{}", *generation) {
            return Ok(refused(t::not_deleted(lang, t::INVALIDATED)));
        }
        project.store.remove(&p.file, Some(&version))
    };
    match removed {
        Ok(out) => {
            session.usage.lock().save(&out.name, Via::Delete);
            let mut text = t::deleted(lang, &out.name);
            if mark_if_index_changed(&session, &project, before) {
                text.push('\n');
                text.push_str(&t::mark_changed(lang));
            }
            Ok(MemoryWriteResult {
                done: true,
                text: Some(text),
                level: Level::Info,
            })
        }
        Err(e) => Ok(refused(t::not_deleted(lang, &e.to_string()))),
    }
}

/// What `/memory` adds after pi-memory's status lines: the index mark (PA-21) and the usage
/// summary (PA-26). `None` while there is nothing to say, so a session that has not used
/// memory yet sees pi-memory's exact status (PM-75).
// Decision (VECTORS §Z 19): the 7 lines stay first and unchanged; the rest follows a blank line.
pub(super) fn status_suffix(session: &Session, available: bool) -> Option<String> {
    let lang = lang(session);
    let mark = {
        let live = session.live.lock();
        live.index_changed.then(|| {
            if live.refresh {
                t::mark_refresh(lang)
            } else {
                t::mark_changed(lang)
            }
        })
    };
    let usage = session.usage.lock();
    let summary = (!usage.is_empty()).then(|| usage.render(lang, available));
    match (mark, summary) {
        (None, None) => None,
        (Some(m), None) => Some(m),
        (None, Some(s)) => Some(s),
        (Some(m), Some(s)) => Some(format!("{m}\n{s}")),
    }
}

/// A user turn starts.
pub(super) fn record_turn(session: &Session) {
    session.usage.lock().turn();
}

/// A `memory` tool call that wrote.
pub(super) fn record_tool(session: &Session, args: &Value, wrote: bool, saved: Option<&str>) {
    if !wrote {
        return;
    }
    let name = saved
        .map(str::to_owned)
        .or_else(|| args.get("name").and_then(Value::as_str).map(str::to_owned))
        .or_else(|| args.get("file").and_then(Value::as_str).map(str::to_owned));
    if let Some(name) = name {
        session.usage.lock().save(&name, Via::Tool);
    }
}

/// Memories surfaced this turn (by file): named from the store's cached listing.
pub(super) fn record_surfaced(session: &Session, files: &[String]) {
    let Ok(project) = session.project() else {
        return;
    };
    let names: Vec<String> = files
        .iter()
        .map(|f| match project.store.read(f) {
            Ok(Some(e)) => e.meta.name.clone(),
            _ => f.clone(),
        })
        .collect();
    session
        .usage
        .lock()
        .surfaced(names.iter().map(String::as_str));
}

/// The writes of an extraction or dream run.
pub(super) fn record_run(session: &Session, run: &AgentRun, via: Via) {
    let mut usage = session.usage.lock();
    for c in run.calls.iter().filter(|c| c.output.wrote) {
        let name = c
            .output
            .saved
            .clone()
            .or_else(|| {
                c.call
                    .arguments
                    .get("name")
                    .and_then(Value::as_str)
                    .map(str::to_owned)
            })
            .or_else(|| c.output.file.clone());
        if let Some(name) = name {
            usage.save(&name, via);
        }
    }
}

/// pi's `read` of a path, allowed by the guard: counted when it is an entry file of this
/// project's memory directory (PA-28: only the model's reads count; the views do not).
pub(super) fn record_read(session: &Session, input: &Value, cwd: &std::path::Path) {
    let Some(path) = input.get("path").and_then(Value::as_str) else {
        return;
    };
    let path = path.strip_prefix('@').unwrap_or(path);
    let path = match path.strip_prefix("~/") {
        Some(rest) => match memory_core::home_dir() {
            Some(home) => home.join(rest),
            None => return,
        },
        None => cwd.join(path),
    };
    let Ok(project) = session.project() else {
        return;
    };
    let Some(file) = path.file_name().and_then(|f| f.to_str()) else {
        return;
    };
    let dir: &std::path::Path = project.dir.path.as_ref();
    let in_dir = path.parent().is_some_and(|parent| {
        parent == dir
            || matches!(
                (fs::canonicalize(parent), fs::canonicalize(dir)),
                (Ok(a), Ok(b)) if a == b
            )
    });
    if in_dir
        && file != INDEX_FILE
        && let Ok(Some(e)) = project.store.read(file)
        && e.file == file
    {
        session.usage.lock().read(file, &e.version.to_string());
    }
}
