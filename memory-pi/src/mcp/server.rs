//! The MCP session handler ([`PimemMcp`]): projects, per-session state, change notices.

use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use anyhow::{Context as _, Result};
use camino::Utf8PathBuf;
use memory_agent::Surfacer;
use memory_agent::pi::sessions::{ProjectSessions, SessionSearchOptions};
use memory_core::tool::VersionBook;
use memory_core::{Config, LoadedConfig, Store, home_dir, load_config, open_project};
use parking_lot::Mutex;
use percent_encoding::percent_decode_str;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ErrorData,
    GetPromptRequestParams, GetPromptResponse, GetPromptResult, Implementation, ListPromptsResult,
    ListResourcesResult, ListToolsResult, MetaObject, PaginatedRequestParams, Prompt,
    PromptArgument, PromptMessage, ReadResourceRequestParams, ReadResourceResponse,
    ReadResourceResult, Resource, ResourceContents, Role, ServerCapabilities, ServerConfig, Tool,
    ToolAnnotations,
};
use rmcp::service::{NotificationContext, RequestContext};
use rmcp::{Peer, RoleServer, ServerHandler, ServiceExt};
use serde_json::{Value, json};
use tokio::sync::broadcast;

use super::McpOptions;
use super::prompts::{self, INDEX_PROMPT, RELEVANT_PROMPT, TEXT_ARGUMENT};
use super::resources::{self, INDEX_URI, ReadError};
use super::tools::{self, ArgError, ToolName};

/// How long the server waits for the client's answer to `roots/list`.
const ROOTS_TIMEOUT: Duration = Duration::from_secs(5);

/// One project as a session sees it.
pub(crate) struct ProjectCtx {
    /// The project's configuration (memory.json layered, PM-71).
    config: Config,
    /// The project's store.
    store: Store,
    /// Its past pi sessions, when pi's agent directory is known.
    sessions: Option<ProjectSessions>,
}

/// What every session of one server process shares.
pub(crate) struct Shared {
    opts: McpOptions,
    /// Projects by working directory (memory.json is read once per directory).
    projects: Mutex<HashMap<PathBuf, Arc<ProjectCtx>>>,
    /// Memory directories written by a session of this process.
    changes: broadcast::Sender<Utf8PathBuf>,
}

impl Shared {
    /// The state of a new server process.
    pub(crate) fn new(opts: McpOptions) -> Arc<Shared> {
        let (changes, _) = broadcast::channel(64);
        Arc::new(Shared {
            opts,
            projects: Mutex::new(HashMap::new()),
            changes,
        })
    }

    /// Opens (once) the project of `cwd` exactly as `pimem` and the pi sidecar do.
    fn open(&self, cwd: &Path) -> Result<Arc<ProjectCtx>, String> {
        if let Some(p) = self.projects.lock().get(cwd) {
            return Ok(p.clone());
        }
        let opts = &self.opts;
        let LoadedConfig {
            config, problems, ..
        } = match &opts.agent_dir {
            Some(dir) => load_config(dir, cwd, opts.trust_project),
            None => LoadedConfig {
                config: Config::default(),
                problems: Vec::new(),
                sources: Vec::new(),
            },
        };
        if let Some(fatal) = problems.iter().find(|p| p.fatal) {
            return Err(format!("Failed to load memory config: {fatal}"));
        }
        for p in &problems {
            eprintln!("pimem mcp: warning: {p}");
        }
        let project = open_project(
            &config,
            cwd,
            opts.memory_dir.as_deref(),
            home_dir().as_deref(),
        )
        .map_err(|e| {
            format!(
                "cannot determine the memory directory of {}: {e}",
                cwd.display()
            )
        })?;
        // Writes check pi-auto-memory's switch of the agent directory, as in pi and the CLI
        // (PA-15): `Memory is off` while it is off.
        let project = match &opts.agent_dir {
            Some(dir) => project.with_switch(memory_core::Switch::new(
                dir,
                std::time::Duration::from_millis(config.lock.timeout_ms),
            )),
            None => project,
        };
        let sessions = opts.agent_dir.as_ref().map(|agent_dir| {
            ProjectSessions::for_agent_dir(
                agent_dir,
                cwd,
                SessionSearchOptions {
                    max_sessions: config.session_search.max_sessions,
                    max_matches: config.session_search.max_matches,
                    ..SessionSearchOptions::default()
                },
            )
        });
        let ctx = Arc::new(ProjectCtx {
            config,
            store: project.store,
            sessions,
        });
        self.projects.lock().insert(cwd.to_path_buf(), ctx.clone());
        Ok(ctx)
    }
}

/// Per-session state.
#[derive(Default)]
struct Session {
    /// The project, resolved at the first request that needs it (roots, else `--cwd`).
    project: tokio::sync::Mutex<Option<Arc<ProjectCtx>>>,
    /// Versions of the entries this session was shown (compare-and-swap).
    versions: Mutex<VersionBook>,
    /// The lexical selector of `relevant_memories`.
    surfacer: Mutex<Option<Surfacer>>,
    /// The frozen `memory_index` section, with the directory it belongs to.
    section: Mutex<Option<(Utf8PathBuf, String)>>,
    /// A digest of the listing last announced (for `list_changed`).
    listing: Mutex<Option<(Utf8PathBuf, u64)>>,
    /// Whether the watcher task runs.
    watching: AtomicBool,
}

/// One MCP session (a stdio connection, or one HTTP session).
#[derive(Clone)]
pub struct PimemMcp {
    shared: Arc<Shared>,
    session: Arc<Session>,
}

/// Serves one client on stdin/stdout until it closes the connection.
pub(crate) async fn serve_stdio(shared: Arc<Shared>) -> Result<()> {
    let running = PimemMcp::new(shared)
        .serve(rmcp::transport::stdio())
        .await
        .context("MCP initialization failed")?;
    running.waiting().await.context("the MCP session failed")?;
    Ok(())
}

fn invalid(field: &str, message: impl Into<String>) -> ErrorData {
    ErrorData::invalid_params(message.into(), Some(json!({ "field": field })))
}

fn arg_error(tool: ToolName, e: ArgError) -> ErrorData {
    ErrorData::invalid_params(
        e.message,
        Some(json!({ "tool": tool.as_str(), "field": e.field })),
    )
}

fn internal(message: impl Into<String>) -> ErrorData {
    ErrorData::internal_error(message.into(), None)
}

fn meta(value: Value) -> MetaObject {
    match value {
        Value::Object(map) => MetaObject(map),
        _ => MetaObject(serde_json::Map::new()),
    }
}

/// The path of a `file://` root URI.
fn root_path(uri: &str) -> Option<PathBuf> {
    let rest = uri.strip_prefix("file://")?;
    // `file:///path` or `file://localhost/path`
    let path = rest.strip_prefix("localhost").unwrap_or(rest);
    if !path.starts_with('/') {
        return None;
    }
    let decoded = percent_decode_str(path).decode_utf8().ok()?;
    Some(PathBuf::from(decoded.into_owned()))
}

fn listing_digest(store: &Store) -> Option<u64> {
    let entries = store.list().ok()?;
    let mut h = DefaultHasher::new();
    for e in &entries {
        e.file.hash(&mut h);
        e.version.to_string().hash(&mut h);
    }
    Some(h.finish())
}

impl PimemMcp {
    /// A new session of the server.
    pub(crate) fn new(shared: Arc<Shared>) -> Self {
        PimemMcp {
            shared,
            session: Arc::new(Session::default()),
        }
    }

    /// The session's project: the client's first `file://` root, else `--cwd`.
    async fn project(&self, peer: &Peer<RoleServer>) -> Result<Arc<ProjectCtx>, String> {
        let mut slot = self.session.project.lock().await;
        if let Some(p) = slot.as_ref() {
            return Ok(p.clone());
        }
        let cwd = match client_root(peer).await {
            Some(root) => root,
            None => self.shared.opts.cwd.clone(),
        };
        let shared = self.shared.clone();
        let ctx = tokio::task::spawn_blocking(move || shared.open(&cwd))
            .await
            .map_err(|e| format!("opening the project failed: {e}"))??;
        *slot = Some(ctx.clone());
        Ok(ctx)
    }

    /// Runs `f` on the blocking pool with the session's project.
    async fn blocking<T: Send + 'static>(
        &self,
        peer: &Peer<RoleServer>,
        f: impl FnOnce(&ProjectCtx, &Session) -> T + Send + 'static,
    ) -> Result<T, ErrorData> {
        let project = self
            .project(peer)
            .await
            .map_err(|e| internal(format!("Memory not initialized — {e}")))?;
        let session = self.session.clone();
        tokio::task::spawn_blocking(move || f(&project, &session))
            .await
            .map_err(|e| internal(format!("the request failed: {e}")))
    }

    /// Tells this session's client, then every other session of this process, that the
    /// listing of `store`'s directory changed.
    async fn announce(&self, project: &ProjectCtx, peer: &Peer<RoleServer>) {
        let dir = project.store.dir().to_owned();
        if let Some(digest) = listing_digest(&project.store) {
            *self.session.listing.lock() = Some((dir.clone(), digest));
        }
        if let Err(e) = peer.notify_resource_list_changed().await {
            eprintln!("pimem mcp: could not send resources/list_changed: {e}");
        }
        // No receiver is not an error: this may be the only session.
        let _ = self.shared.changes.send(dir);
    }

    /// Watches the session's project for changes made by others and announces them.
    fn start_watcher(&self, peer: Peer<RoleServer>) {
        if self.session.watching.swap(true, Ordering::SeqCst) {
            return;
        }
        let this = self.clone();
        let mut changes = self.shared.changes.subscribe();
        let interval = self.shared.opts.watch_interval;
        tokio::spawn(async move {
            // Resolve the project now (asking for roots) so the first request is fast.
            if let Err(e) = this.project(&peer).await {
                eprintln!("pimem mcp: {e}");
            }
            let mut ticker = interval.map(tokio::time::interval);
            loop {
                let tick = async {
                    match ticker.as_mut() {
                        Some(t) => {
                            t.tick().await;
                        }
                        None => std::future::pending::<()>().await,
                    }
                };
                tokio::select! {
                    _ = tick => {}
                    changed = changes.recv() => {
                        if matches!(changed, Err(broadcast::error::RecvError::Closed)) {
                            return;
                        }
                    }
                }
                if peer.is_transport_closed() {
                    return;
                }
                let Some(project) = this.session.project.lock().await.clone() else {
                    continue;
                };
                let session = this.session.clone();
                let changed = tokio::task::spawn_blocking(move || {
                    let dir = project.store.dir().to_owned();
                    let digest = listing_digest(&project.store)?;
                    let mut last = session.listing.lock();
                    let changed = last
                        .as_ref()
                        .is_some_and(|(d, old)| *d == dir && *old != digest);
                    *last = Some((dir, digest));
                    Some(changed)
                })
                .await;
                if let Ok(Some(true)) = changed
                    && peer.notify_resource_list_changed().await.is_err()
                {
                    return;
                }
            }
        });
    }
}

/// The first `file://` root of a client that supports roots.
// Roots are deprecated by SEP-2577 for a future protocol revision; today's clients
// (protocol 2025-11-25 and earlier) send them.
#[allow(deprecated)]
async fn client_root(peer: &Peer<RoleServer>) -> Option<PathBuf> {
    let info = peer.peer_info()?;
    info.capabilities.roots.as_ref()?;
    let answer = tokio::time::timeout(ROOTS_TIMEOUT, peer.list_roots()).await;
    match answer {
        Ok(Ok(result)) => result.roots.iter().find_map(|r| root_path(&r.uri)),
        Ok(Err(e)) => {
            eprintln!("pimem mcp: roots/list failed ({e}); using --cwd");
            None
        }
        Err(_) => {
            eprintln!("pimem mcp: no answer to roots/list; using --cwd");
            None
        }
    }
}

impl ServerHandler for PimemMcp {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_resources()
                .enable_resources_list_changed()
                .enable_prompts()
                .build(),
        )
        .with_server_info(
            Implementation::new("pimem", env!("CARGO_PKG_VERSION")).with_title("pimem memory"),
        )
        .with_instructions(
            "Persistent memory of this project, shared across sessions and agents. Check \
             memory_list or memory_search before re-discovering a fact; save durable facts, \
             preferences and fixes with memory_add (one self-contained description line).",
        )
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        self.start_watcher(context.peer);
    }

    async fn on_roots_list_changed(&self, _context: NotificationContext<RoleServer>) {
        // The next request resolves the project again; versions seen in another project
        // mean nothing there.
        *self.session.project.lock().await = None;
        *self.session.versions.lock() = VersionBook::default();
        *self.session.surfacer.lock() = None;
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let tools = ToolName::ALL
            .into_iter()
            .map(|t| {
                // Hints for clients that ask before running tools: reads are safe to
                // auto-approve; every write may overwrite (add replaces a same-named memory).
                let hints = ToolAnnotations::new()
                    .read_only(!t.writes())
                    .destructive(t.writes())
                    .idempotent(!t.writes())
                    .open_world(false);
                Tool::new(t.as_str(), t.description(), Arc::new(t.input_schema()))
                    .with_annotations(hints)
            })
            .collect();
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let name = request.name.as_ref();
        let Some(tool) = ToolName::parse(name) else {
            let known: Vec<&str> = ToolName::ALL.iter().map(|t| t.as_str()).collect();
            return Err(invalid(
                "name",
                format!("unknown tool \"{name}\": expected {}", known.join(", ")),
            ));
        };
        let args = request.arguments.unwrap_or_default();
        let call = tools::check(tool, &args).map_err(|e| arg_error(tool, e))?;
        let project = match self.project(&context.peer).await {
            Ok(p) => p,
            Err(e) => {
                return Ok(CallToolResult::error(vec![ContentBlock::text(format!(
                    "Memory not initialized — {e}"
                ))])
                .into());
            }
        };
        // Decision: while memory is off (or paused) every memory tool answers as pi's `memory`
        // tool does (PA-15, PA-16): `Memory is off`, nothing read or written. Writes are also
        // refused by the store itself, so a switch flipped during the call still wins.
        if let Some(refusal) = project
            .store
            .options()
            .switch
            .as_ref()
            .and_then(|s| s.state().refusal())
        {
            return Ok(CallToolResult::error(vec![ContentBlock::text(refusal.to_string())]).into());
        }
        let session = self.session.clone();
        let run_project = project.clone();
        let out = tokio::task::spawn_blocking(move || {
            let mut versions = session.versions.lock();
            tools::run(
                &run_project.store,
                run_project.sessions.as_ref(),
                &mut versions,
                &call,
            )
        })
        .await
        .map_err(|e| internal(format!("the tool call failed: {e}")))?;
        for n in &out.notices {
            eprintln!("pimem mcp: note: {n}");
        }
        if out.wrote {
            self.announce(&project, &context.peer).await;
        }
        let content = vec![ContentBlock::text(out.text)];
        let mut result = if out.is_error {
            CallToolResult::error(content)
        } else {
            CallToolResult::success(content)
        };
        result.structured_content = out.structured;
        Ok(result.into())
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let entries = self
            .blocking(&context.peer, |p, _| p.store.list())
            .await?
            .map_err(|e| internal(e.to_string()))?;
        let mut list = vec![
            Resource::new(INDEX_URI, "MEMORY.md")
                .with_title("Memory index")
                .with_description("The project's MEMORY.md: one line per memory")
                .with_mime_type("text/markdown"),
        ];
        list.extend(entries.iter().map(|e| {
            Resource::new(resources::entry_uri(&e.file), e.meta.name.clone())
                .with_title(e.meta.name.clone())
                .with_description(e.meta.description.clone())
                .with_mime_type("text/markdown")
                .with_meta(meta(json!({
                    "file": e.file,
                    "type": e.meta.entry_type.as_str(),
                    "modified": e.meta.modified,
                    "version": e.version,
                })))
        }));
        Ok(ListResourcesResult::with_all_items(list))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let uri = request.uri;
        let target = resources::parse_uri(&uri).map_err(|e| invalid("uri", e))?;
        let read = self
            .blocking(&context.peer, move |p, _| {
                resources::read(&p.store, &target)
            })
            .await?;
        let read = match read {
            Ok(r) => r,
            Err(ReadError::NotFound(m)) => {
                return Err(ErrorData::resource_not_found(
                    m,
                    Some(json!({ "field": "uri", "uri": uri })),
                ));
            }
            Err(ReadError::Io(m)) => return Err(internal(m)),
        };
        let mut contents = ResourceContents::text(read.text, uri).with_mime_type("text/markdown");
        if let Some(v) = read.version {
            contents = contents.with_meta(meta(json!({ "version": v })));
        }
        Ok(ReadResourceResult::new(vec![contents]).into())
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        Ok(ListPromptsResult::with_all_items(vec![
            Prompt::new(
                INDEX_PROMPT,
                Some(
                    "The project's memory index as pi puts it in the system prompt (the newest \
                     lines of MEMORY.md, sanitised), frozen for this session",
                ),
                None,
            ),
            Prompt::new(
                RELEVANT_PROMPT,
                Some("The stored memories relevant to a text (lexical BM25 selection)"),
                Some(vec![
                    PromptArgument::new(TEXT_ARGUMENT)
                        .with_description("The text (a task, a question) to find memories for")
                        .with_required(true),
                ]),
            ),
        ]))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        let args = request.arguments.unwrap_or_default();
        let text = match request.name.as_str() {
            INDEX_PROMPT => {
                if let Some(key) = args.keys().next() {
                    return Err(invalid(
                        key,
                        format!("unknown argument \"{key}\" for {INDEX_PROMPT}: it takes none"),
                    ));
                }
                self.blocking(&context.peer, |p, s| {
                    let dir = p.store.dir().to_owned();
                    let mut frozen = s.section.lock();
                    if let Some((d, value)) = frozen.as_ref()
                        && *d == dir
                    {
                        return Ok(value.clone());
                    }
                    let value = prompts::index_section(&p.store, &p.config)?;
                    *frozen = Some((dir, value.clone()));
                    Ok(value)
                })
                .await?
            }
            RELEVANT_PROMPT => {
                if let Some(key) = args.keys().find(|k| k.as_str() != TEXT_ARGUMENT) {
                    return Err(invalid(
                        key,
                        format!(
                            "unknown argument \"{key}\" for {RELEVANT_PROMPT}: expected {TEXT_ARGUMENT}"
                        ),
                    ));
                }
                let text = match args.get(TEXT_ARGUMENT) {
                    Some(Value::String(s)) if !s.trim().is_empty() => s.clone(),
                    Some(Value::String(_)) | None | Some(Value::Null) => {
                        return Err(invalid(
                            TEXT_ARGUMENT,
                            format!("{TEXT_ARGUMENT} is required for {RELEVANT_PROMPT}"),
                        ));
                    }
                    Some(_) => {
                        return Err(invalid(
                            TEXT_ARGUMENT,
                            format!("{TEXT_ARGUMENT} must be a string"),
                        ));
                    }
                };
                self.blocking(&context.peer, move |p, s| {
                    let mut slot = s.surfacer.lock();
                    let surfacer = slot.get_or_insert_with(|| prompts::surfacer(&p.config));
                    prompts::relevant(surfacer, &p.store, &text)
                })
                .await?
            }
            other => {
                return Err(invalid(
                    "name",
                    format!(
                        "unknown prompt \"{other}\": expected {INDEX_PROMPT}, {RELEVANT_PROMPT}"
                    ),
                ));
            }
        };
        let text = text.map_err(internal)?;
        Ok(GetPromptResult::new(vec![PromptMessage::new_text(Role::User, text)]).into())
    }
}
