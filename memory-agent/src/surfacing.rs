//! Auto-surfacing (PM-60..PM-64): each user turn, pick the few memories relevant to the
//! prompt and render them as the hidden `<relevant_memories>` message.
//!
//! [`Surfacer`] is the per-session state: the files already injected this session (never
//! offered again until [`Surfacer::reset`], which the host calls at session start and after
//! compaction) and a [`LiveIndex`] over the store, kept in step with the directory by
//! comparing `(file, version)` pairs (pointer equality first: an unchanged store hands back
//! the very same `Arc`s), re-indexing only the entries that changed. A host can start from
//! the persisted index ([`LiveIndex::open`], [`Surfacer::with_index`]) and use the same index
//! for the memory tool's duplicate warning ([`Surfacer::index_mut`]).
//!
//! # Selectors ([`SurfacingOptions::selector`], `autoSurfacing.selector`)
//! [`Selector::Auto`] (the default) is **hybrid** when the request carries a model and
//! **lexical** when it does not: passing a model is what turns model use on.
//! - **lexical**: BM25F over name, description and body with synonyms, translations and typo
//!   correction ([`memory_rank`]); the best `maxFiles` passing its cutoff (a relatedness gate
//!   on the best match, [`MIN_SCORE`](memory_rank::MIN_SCORE), then a share of its score).
//!   Deterministic, zero model calls, and an unrelated prompt surfaces nothing.
//! - **model**: pi-memory's side query, unchanged: the PM-61 manifest (newest 200 entries,
//!   then minus the injected ones), the exact side-query prompt, one completion without tools,
//!   the reply parsed by [`parse_selected_files`] (files not in the manifest dropped).
//! - **hybrid**: the lexical ranking without its minimum score picks
//!   the top [`HYBRID_CANDIDATES`] entries sharing a token with the prompt; they become the
//!   manifest (same line format, best first) and the model chooses among them. No shared token
//!   means no candidate and no model call.
//!
//! A model error, a timeout, a reply with an error stop reason, a reply without a
//! `selected_files` object, or a model selector with no model available falls back to the
//! lexical choice ([`Surfaced::fallback`] says why). A valid reply that selects nothing is
//! respected: nothing is injected. Cancellation injects nothing.
//!
//! Decision: pi-memory 2.5 injects nothing on a failed side query (PM-60); issue 4 asks for
//! the lexical fallback instead, so a flaky model degrades to the model-free behaviour.
//!
//! Decision: only the files that made it into the message (the `maxInjectionBytes` budget can
//! stop the list early) are remembered as injected; a selected file cut by the budget can
//! surface on a later turn.
//!
//! # Example
//! ```
//! use memory_agent::{Surfacer, SurfacingOptions};
//! use memory_core::{AddRequest, Store, StoreOptions};
//!
//! let sandbox = testkit::Sandbox::new();
//! let store = Store::new(sandbox.path("proj"), StoreOptions::default());
//! store.add(AddRequest {
//!     name: "SSH port on staging".into(),
//!     body: "staging SSH listens on 2222, not 22.".into(),
//!     ..AddRequest::default()
//! })?;
//! // No model passed: the lexical selector.
//! let mut surfacer = Surfacer::new(SurfacingOptions::default());
//! let out = surfacer.surface(&store, "how do I ssh into staging?")?;
//! assert_eq!(
//!     out.message,
//!     "<relevant_memories>\n## SSH port on staging\nstaging SSH listens on 2222, not 22.\n</relevant_memories>"
//! );
//! assert_eq!(out.notification().as_deref(), Some("Recalled: 1 entries"));
//! // Injected once per session, and nothing for an unrelated prompt.
//! assert!(surfacer.surface(&store, "ssh to staging")?.files.is_empty());
//! surfacer.reset();
//! assert!(surfacer.surface(&store, "write a haiku")?.files.is_empty());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Limitations
//! - The lexical selector only sees shared words (after stemming, identifier splitting and
//!   CJK bigrams): a paraphrase with no word in common is missed, and the hybrid selector
//!   never shows the model an entry without a shared token. The `model` selector has no such
//!   blind spot. Its cutoff was tuned on one labelled set (memory-agent
//!   `tests/all/retrieval/`); BENCHMARKS.md lists the precision/recall trade-off.
//! - Every call lists the store: one `stat` per entry file, or only the files the kernel
//!   reported changed when the host called [`Store::watch`] (the pi sidecar does); the index
//!   is only re-indexed for entries whose version changed.

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::sync::Arc;
use std::time::Instant;

use memory_core::{Selector, Store, StoreError, StoredEntry, Task};
use memory_index::{
    ManifestEntry, QUERY_MAX_CHARS, SurfacedBlock, order_manifest, parse_selected_files,
    recalled_count, relevant_memories, render_manifest, side_query_prompt,
};
use memory_js::utf16_prefix;
use memory_rank::{Cutoff, LexicalHit};

use crate::live::LiveIndex;

use crate::model::{
    CancelToken, Completion, CompletionRequest, Message, Model, ModelError, StopReason,
};
use crate::options::{FinishedRun, SurfacingOptions, notify_finished};

/// How many lexical candidates the hybrid selector shows the model.
pub const HYBRID_CANDIDATES: usize = 20;

/// The system prompt of the side query.
///
/// pi-memory ran the task (the user message, reproduced exactly by
/// [`side_query_prompt`]) in a headless pi session with pi's own system prompt; with no tools
/// and one turn, a short role statement does the same job at a fraction of the tokens.
pub const SIDE_QUERY_SYSTEM: &str = "You select which stored memory files are relevant to a \
user's request. Answer with the JSON object you are asked for and nothing else.";

/// One surfacing call: the prompt, and optionally a model and a cancellation token.
/// `"text".into()` is a request without a model.
#[derive(Clone)]
pub struct SurfacingRequest<'a> {
    /// The user's prompt (cut to 4000 UTF-16 units wherever it is used).
    pub prompt: &'a str,
    /// The model for the `model` and `hybrid` selectors; without one they fall back.
    pub model: Option<&'a dyn Model>,
    /// Cancels the model call; a cancelled call injects nothing.
    pub cancel: CancelToken,
    /// Entries of other memories (scopes, issue 16) ranked together with the store's:
    /// `(label, entry)`. Inside the surfacer such an entry is known as `<label>/<file>`
    /// (entry files are flat, so it never collides with a store file) and is shown to the
    /// model as `<name> (<label>)`. Empty: the store alone, exactly as before.
    pub extra: Vec<(String, Arc<StoredEntry>)>,
}

impl fmt::Debug for SurfacingRequest<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SurfacingRequest")
            .field("prompt", &self.prompt)
            .field("model", &self.model.map(|_| "dyn Model"))
            .field("cancel", &self.cancel)
            .field("extra", &self.extra.len())
            .finish()
    }
}

impl<'a> SurfacingRequest<'a> {
    /// A request without a model.
    pub fn new(prompt: &'a str) -> Self {
        SurfacingRequest {
            prompt,
            model: None,
            cancel: CancelToken::new(),
            extra: Vec::new(),
        }
    }

    /// Adds entries of other memories, each under its label (see [`SurfacingRequest::extra`]).
    pub fn with_extra(mut self, extra: Vec<(String, Arc<StoredEntry>)>) -> Self {
        self.extra = extra;
        self
    }

    /// Sets the model (`None` keeps the request model-free).
    pub fn with_model(mut self, model: Option<&'a dyn Model>) -> Self {
        self.model = model;
        self
    }

    /// Sets the cancellation token.
    pub fn with_cancel(mut self, cancel: CancelToken) -> Self {
        self.cancel = cancel;
        self
    }
}

impl<'a> From<&'a str> for SurfacingRequest<'a> {
    fn from(prompt: &'a str) -> Self {
        SurfacingRequest::new(prompt)
    }
}

/// Why a model-based selector fell back to the lexical choice.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fallback {
    /// The selector needs a model and the request carried none.
    NoModel,
    /// The call failed or timed out.
    Model(ModelError),
    /// The model stopped with an error or abort stop reason.
    Stopped(StopReason),
    /// The reply held no `{…"selected_files": […]…}` object.
    Unparseable,
}

impl fmt::Display for Fallback {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Fallback::NoModel => f.write_str("no model available"),
            Fallback::Model(e) => write!(f, "{e}"),
            Fallback::Stopped(r) => write!(f, "model stopped with {r:?}"),
            Fallback::Unparseable => f.write_str("model reply has no selected_files object"),
        }
    }
}

/// The outcome of one [`Surfacer::surface`] call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Surfaced {
    /// The exact `<relevant_memories>` message, `""` when nothing is surfaced.
    pub message: String,
    /// The entry files in the message, in order.
    pub files: Vec<String>,
    /// `N` of the `Recalled: N entries` notification ([`recalled_count`]; PM-64).
    pub recalled: usize,
    /// The selector that made the choice (lexical after a fallback; never `Auto`).
    pub selector: Selector,
    /// Why the model path fell back, if it did.
    pub fallback: Option<Fallback>,
    /// Observers that could not record the side query.
    pub warnings: Vec<String>,
}

impl Surfaced {
    fn nothing(selector: Selector) -> Self {
        Surfaced {
            message: String::new(),
            files: Vec::new(),
            recalled: 0,
            selector,
            fallback: None,
            warnings: Vec::new(),
        }
    }

    /// The notification text, `None` when nothing was surfaced.
    pub fn notification(&self) -> Option<String> {
        (!self.message.is_empty()).then(|| format!("Recalled: {} entries", self.recalled))
    }
}

/// Per-session surfacing state; see the module docs.
#[derive(Debug)]
pub struct Surfacer {
    opts: SurfacingOptions,
    injected: HashSet<String>,
    live: LiveIndex,
    /// This turn's labelled files (`<label>/<file>` → label).
    labels: HashMap<String, String>,
}

impl Default for Surfacer {
    fn default() -> Self {
        Surfacer::new(SurfacingOptions::default())
    }
}

impl Surfacer {
    /// A fresh surfacer: nothing injected, nothing indexed yet.
    pub fn new(opts: SurfacingOptions) -> Self {
        Surfacer::with_index(opts, LiveIndex::default())
    }

    /// A fresh surfacer over an index already built or loaded ([`LiveIndex::open`]).
    pub fn with_index(opts: SurfacingOptions, live: LiveIndex) -> Self {
        Surfacer {
            opts,
            injected: HashSet::new(),
            live,
            labels: HashMap::new(),
        }
    }

    /// The lexical index (kept in step with the store at every [`surface`](Self::surface)).
    pub fn index(&self) -> &LiveIndex {
        &self.live
    }

    /// The lexical index, to save it or to use it for duplicate checks.
    pub fn index_mut(&mut self) -> &mut LiveIndex {
        &mut self.live
    }

    /// Replaces the index (with one loaded from disk, say) unless this one has been used:
    /// returns whether it was replaced.
    pub fn install_index(&mut self, live: LiveIndex) -> bool {
        if !self.live.listing().is_empty() || !self.live.index().is_empty() {
            return false;
        }
        self.live = live;
        true
    }

    /// The options in effect.
    pub fn options(&self) -> &SurfacingOptions {
        &self.opts
    }

    /// Forgets what was injected (session start, compaction). The index is kept.
    pub fn reset(&mut self) {
        self.injected.clear();
    }

    /// Whether `file` was injected since the last reset.
    pub fn is_injected(&self, file: &str) -> bool {
        self.injected.contains(file)
    }

    /// Picks and renders the memories for one user turn: `surface(&store, "prompt")` with no
    /// model, or a [`SurfacingRequest`] carrying one.
    ///
    /// Nothing is surfaced (and no model is called) when surfacing is disabled, the prompt is
    /// blank, `max_files` is 0 or no candidate is left. Errors only come from listing the
    /// store; every model problem is a [`Fallback`].
    pub fn surface<'r>(
        &mut self,
        store: &Store,
        req: impl Into<SurfacingRequest<'r>>,
    ) -> Result<Surfaced, StoreError> {
        let req = req.into();
        let selector = match (self.opts.selector, req.model) {
            (Selector::Auto, Some(_)) => Selector::Hybrid,
            (Selector::Auto, None) => Selector::Lexical,
            (s, _) => s,
        };
        let max_files = self.opts.max_files;
        if !self.opts.enabled || req.prompt.trim().is_empty() || max_files == 0 {
            return Ok(Surfaced::nothing(selector));
        }
        let mut listing = store.list()?;
        self.labels.clear();
        for (label, e) in &req.extra {
            let file = format!("{label}/{}", e.file);
            self.labels.insert(file.clone(), label.clone());
            listing.push(Arc::new(StoredEntry {
                file,
                ..StoredEntry::clone(e)
            }));
        }
        self.live.sync(listing);
        // The ranker sees the text the side query shows the model (PM-61: 4000 UTF-16 units).
        let prompt = utf16_prefix(req.prompt, QUERY_MAX_CHARS);
        let mut warnings = Vec::new();
        let (files, selector, fallback) = match selector {
            Selector::Model | Selector::Hybrid => {
                let manifest = match selector {
                    Selector::Model => self.model_manifest(),
                    _ => self.hybrid_manifest(prompt),
                };
                if manifest.is_empty() {
                    return Ok(Surfaced::nothing(selector));
                }
                let answer = self.ask_model(store, &req, &manifest, &mut warnings);
                match answer {
                    Answer::Selected(files) => (files, selector, None),
                    Answer::Cancelled => return Ok(Surfaced::nothing(selector)),
                    Answer::Failed(why) => (
                        self.lexical_choice(prompt, max_files),
                        Selector::Lexical,
                        Some(why),
                    ),
                }
            }
            _ => (self.lexical_choice(prompt, max_files), selector, None),
        };
        let mut out = self.render(&files);
        out.selector = selector;
        out.fallback = fallback;
        out.warnings = warnings;
        Ok(out)
    }

    fn lexical_choice(&self, prompt: &str, max_files: usize) -> Vec<String> {
        let injected = &self.injected;
        self.live
            .index()
            .rank(prompt, max_files, &|f| injected.contains(f))
            .into_iter()
            .map(|h| h.file)
            .collect()
    }

    /// PM-61: newest 200 (modified desc, file asc), then minus the injected files.
    fn model_manifest(&self) -> Vec<ManifestEntry> {
        let mut manifest: Vec<ManifestEntry> =
            self.live.listing().iter().map(manifest_entry).collect();
        order_manifest(&mut manifest);
        manifest.retain(|m| !self.injected.contains(&m.file));
        manifest
    }

    /// The lexical top [`HYBRID_CANDIDATES`] with any shared token, best first.
    fn hybrid_manifest(&self, prompt: &str) -> Vec<ManifestEntry> {
        let injected = &self.injected;
        self.live
            .index()
            .rank_with(prompt, HYBRID_CANDIDATES, Cutoff::ANY, &|f| {
                injected.contains(f)
            })
            .into_iter()
            .filter_map(|LexicalHit { file, .. }| self.live.entry(&file).map(manifest_entry))
            .collect()
    }

    fn render(&mut self, files: &[String]) -> Surfaced {
        let entries: Vec<&Arc<StoredEntry>> =
            files.iter().filter_map(|f| self.live.entry(f)).collect();
        let names: Vec<String> = entries
            .iter()
            .map(|e| match self.labels.get(&e.file) {
                Some(label) => format!("{} ({label})", e.meta.name),
                None => e.meta.name.clone(),
            })
            .collect();
        let blocks: Vec<SurfacedBlock<'_>> = entries
            .iter()
            .zip(&names)
            .map(|(e, name)| SurfacedBlock {
                name,
                body: &e.body,
            })
            .collect();
        let (message, kept) = relevant_memories(
            &blocks,
            self.opts.max_entry_bytes,
            self.opts.max_injection_bytes,
        );
        let files: Vec<String> = entries[..kept].iter().map(|e| e.file.clone()).collect();
        self.injected.extend(files.iter().cloned());
        Surfaced {
            recalled: recalled_count(&message),
            message,
            files,
            selector: Selector::Lexical,
            fallback: None,
            warnings: Vec::new(),
        }
    }

    /// One side-query completion (maxTurns 1, no tools) and its parsed selection; the
    /// observers get the exchange.
    fn ask_model(
        &self,
        store: &Store,
        req: &SurfacingRequest<'_>,
        manifest: &[ManifestEntry],
        warnings: &mut Vec<String>,
    ) -> Answer {
        let Some(model) = req.model else {
            return Answer::Failed(Fallback::NoModel);
        };
        if req.cancel.is_cancelled() {
            return Answer::Cancelled;
        }
        let max_files = self.opts.max_files;
        let task = Message::User {
            content: side_query_prompt(&render_manifest(manifest), req.prompt, max_files),
        };
        let started = store.options().clock.now();
        let request = CompletionRequest {
            task: Task::AutoSurfacing,
            system: SIDE_QUERY_SYSTEM.to_owned(),
            messages: vec![task.clone()],
            tools: Vec::new(),
            deadline: Instant::now() + self.opts.timeout,
            cancel: req.cancel.clone(),
        };
        let result = model.complete(&request);
        if !self.opts.observers.is_empty() {
            let mut transcript = vec![task];
            if let Ok(Completion { text, .. }) = &result {
                transcript.push(Message::Assistant {
                    text: text.clone(),
                    tool_calls: Vec::new(),
                });
            }
            let error = result.as_ref().err().map(ToString::to_string);
            let finished = FinishedRun {
                task: Task::AutoSurfacing,
                memory_dir: store.dir(),
                system: SIDE_QUERY_SYSTEM,
                transcript: &transcript,
                started,
                error: error.as_deref(),
            };
            warnings.extend(notify_finished(&self.opts.observers, &finished));
        }
        match result {
            Err(ModelError::Cancelled) => Answer::Cancelled,
            Err(e) => Answer::Failed(Fallback::Model(e)),
            Ok(c) if matches!(c.stop_reason, StopReason::Error | StopReason::Aborted) => {
                Answer::Failed(Fallback::Stopped(c.stop_reason))
            }
            Ok(c) => {
                let files: Vec<&str> = manifest.iter().map(|m| m.file.as_str()).collect();
                match parse_selected_files(&c.text, &files, max_files) {
                    Some(selected) => Answer::Selected(selected),
                    None => Answer::Failed(Fallback::Unparseable),
                }
            }
        }
    }
}

fn manifest_entry(e: &Arc<StoredEntry>) -> ManifestEntry {
    ManifestEntry {
        file: e.file.clone(),
        entry_type: e.meta.entry_type,
        description: e.meta.description.clone(),
        modified: e.meta.modified.clone(),
    }
}

enum Answer {
    Selected(Vec<String>),
    Cancelled,
    Failed(Fallback),
}
