//! Memory orchestration behind a [`Model`] trait: what the agent sees each turn and what gets
//! written — surfacing, extraction, dream and the dream nudge — for any Rust agent.
//!
//! # Embedding
//! A host brings a [`memory_core::Store`] and, when it has one, a [`Model`] (one blocking
//! chat completion with tools; [`CompletionRequest::check`] is the whole contract). Passing a
//! model is what turns model use on: without one surfacing is lexical (BM25F, zero tokens)
//! and extraction and dream cannot run. Each task takes a small options struct with
//! pi-memory 2.5's defaults ([`SurfacingOptions`], [`ExtractOptions`], [`DreamOptions`]);
//! hosts that read `memory.json` convert it with `From<&Config>`. [`MemoryTool`] is the
//! `memory` tool for the host's own agent loop: definition plus execution.
//!
//! ```
//! use memory_agent::{CancelToken, Completion, CompletionRequest, DreamOptions, Model,
//!     ModelError, StopReason, Surfacer, SurfacingOptions, SurfacingRequest, run_dream};
//! use memory_core::{AddRequest, Store, StoreOptions};
//!
//! struct MyLlm; // wraps the host agent's own client
//! impl Model for MyLlm {
//!     fn complete(&self, req: &CompletionRequest) -> Result<Completion, ModelError> {
//!         req.check()?; // honours cancellation and the deadline
//!         Ok(Completion { text: "Nothing to consolidate.".into(), tool_calls: vec![], stop_reason: StopReason::Stop })
//!     }
//! }
//!
//! let sandbox = testkit::Sandbox::new();
//! let store = Store::new(sandbox.path("proj"), StoreOptions::default());
//! store.add(AddRequest { name: "Test command".into(), body: "run `cargo xtask ci`".into(), ..Default::default() })?;
//! let mut surfacer = Surfacer::new(SurfacingOptions::default());
//! let hit = surfacer.surface(&store, "which command runs the tests?")?; // lexical: no model
//! assert_eq!(hit.files, ["Test-command.md"]);
//! let dream = run_dream(&store, &MyLlm, &DreamOptions::default(), &CancelToken::new())?;
//! assert_eq!(dream.summary, "Nothing to consolidate.");
//! # let _ = SurfacingRequest::new("x").with_model(Some(&MyLlm));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Modules
//! - [`surfacing`]: per-turn auto-surfacing (PM-60..64, [`Surfacer`]): the session's
//!   already-injected set plus a BM25F index ([`memory_rank`]) kept in step with the store by
//!   `(file, version)`. Selectors: lexical, model (pi-memory's exact side query) and hybrid
//!   (lexical top 20 → the model chooses). Key decision: a failed, timed-out or unparseable
//!   model call falls back to the lexical choice instead of injecting nothing.
//! - [`agent`]: the headless agent loop ([`run_agent`]) behind extraction and dream: every
//!   tool call runs through [`MemoryTool`], so the texts a model sees are the main agent's;
//!   turn limit with pi-memory's grace turn, one wall-clock deadline for the run;
//!   [`RunObserver`]s see each turn, each tool call and the transcript at the end.
//! - [`extract`]: per-turn extraction ([`run_extract`], PM-65..68): a typed [`Turn`] → the
//!   exact PM-66 rendering (UTF-16 units like JavaScript, never splitting a character) → the
//!   task prompt; never waits for the lock (a dream round means the turn is skipped).
//! - [`dream`]: `/dream` ([`run_dream`], PM-69): whole-round lock, one `-dream` snapshot,
//!   four phases, seven actions. Key decision: the entries listed in its prompt seed the
//!   compare-and-swap versions, so a memory another process changes during the dream is
//!   never overwritten (the model gets `Memory conflict: stale version`).
//! - [`nudge`]: the session-start nudge ([`should_nudge`], PM-70), both thresholds (AND).
//! - [`pi`]: everything that knows pi's formats — session files (reader, search, cached
//!   listing, writer), pi-session's tools and references ([`pi::session_tools`]),
//!   `AgentMessage` JSON, `<project_instructions>` blocks, `sessionPersistence`.
//! - `http` (feature `http`, TLS with `http-tls`): an OpenAI-compatible [`Model`].
//!
//! # Limitations
//! - The dream's prompt is written from pi-memory's README (its 2.x source was not
//!   available); extraction's prompt and rendering follow the 2.x source exactly, except
//!   that tool-call argument keys are rendered in sorted order (see [`extract`]).
//! - Cancellation is cooperative: it is checked between model calls and tool calls, and a
//!   blocking HTTP request is bounded by the deadline, not interrupted.
//! - Session search limitations (activity time, JSON escaping, JSON-key queries) are listed
//!   in [`pi::sessions`].
#![forbid(unsafe_code)]
#![cfg_attr(test, allow(clippy::disallowed_methods))]

pub mod agent;
pub mod dream;
pub mod extract;
#[cfg(feature = "http")]
pub mod http;
pub mod live;
pub mod model;
pub mod nudge;
pub mod options;
pub mod pi;
pub mod surfacing;
mod tool;

pub use agent::{AgentError, AgentRun, AgentSpec, ToolCallRecord, run_agent};
pub use dream::{DreamOutcome, dream_failed_text, run_dream};
pub use extract::{
    ExtractOutcome, SkipReason, TranscriptMessage, Turn, extract_failed_text, extracted_text,
    run_extract,
};
#[cfg(feature = "http")]
pub use http::HttpModel;
pub use live::LiveIndex;
pub use memory_core::{Selector, Task};
pub use model::{
    CancelToken, Completion, CompletionRequest, Message, Model, ModelError, StopReason, ToolCall,
    ToolDef,
};
pub use nudge::{Nudge, should_nudge};
pub use options::{
    ConversationLimits, DreamOptions, ExtractOptions, FinishedRun, NudgeThresholds, RunObserver,
    SurfacingOptions,
};
pub use surfacing::{Fallback, Surfaced, Surfacer, SurfacingRequest};
pub use tool::MemoryTool;

/// The README's "Embed it" example, compiled and run as a doctest so it stays true.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
pub struct ReadmeDoctests;
