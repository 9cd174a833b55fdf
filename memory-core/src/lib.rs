//! The memory `Store` a Rust agent embeds.
//!
//! One [`Store`] owns one project memory directory (`~/.pi/memory/<git|local>/<name>/`): it
//! combines project identity (`memory-keys`), the pure formats (`memory-index`) and locking,
//! durable writes and snapshots (`memory-lock`) into the operations of pi-memory 2.5's
//! `memory` tool — `add`, `replace`, `remove`, `list`, `search`, plus the maintenance-only
//! `rename` and `rebuild_index` — with the same validation rules, result texts and bytes on
//! disk (FEATURES PM-31..PM-43), so a directory written here reads identically in pi-memory
//! and back.
//!
//! # Key decisions
//! * **Validate first, lock second, snapshot third, write last.** Bad input is rejected before
//!   any lock or file is touched, so a rejected call leaves every byte unchanged.
//! * **Atomic replacement everywhere** (temp file, fsync, rename, directory fsync) instead of
//!   the original's in-place rewrites: a crash leaves each file old or new, never torn.
//! * **Self-healing locks.** A `.lock` whose holder is provably dead on this host is reclaimed
//!   (with a notice) and the index is surgically repaired, so a crashed writer never needs a
//!   human. Live or other-host holders keep pi-memory's hard exclusion and texts.
//! * **Versions.** Every entry carries a content [`Version`] (sha256 prefix of its bytes);
//!   `replace`/`remove`/`rename` accept an expected version and fail with
//!   `Memory conflict: stale version` when the entry changed meanwhile — so a long dream never
//!   overwrites a concurrent write.
//! * **Rounds.** A [`Round`] holds the logical lock for many writes (a dream, an
//!   extraction); writes go to a [`Target`] — the store itself or a round — so the same code
//!   serves both. Things a write did besides writing come back as typed [`Notice`]s.
//! * **UTF-8 paths** ([`camino`]): memory directories are shared with pi, whose paths are
//!   JavaScript strings.
//! * **Secrets are refused** on write without ever echoing the value ([`secrets`]): more
//!   than 25 credential kinds, reported with their position.
//! * **A persistent switch** ([`switch`], pi-auto-memory's `auto-memory.json`): when a host
//!   sets [`StoreOptions::switch`], every write is refused with `Memory is off` while memory
//!   is switched off, and no write that passed an older check lands after `off` returned.
//! * **One message catalog** ([`catalog`], PA-03): what a person reads exists in English and
//!   Simplified Chinese under one typed key; what the model reads is never translated.
//! * **Scopes** ([`scope`]): the project's memory, the user's (`<memory root>/user`) and the
//!   team's (`<repository root>/.pi/memory`) are each an ordinary store; [`Scopes`] lists and
//!   searches across them and moves entries between them (`promote`), taking the scopes'
//!   locks in one fixed order so opposite moves cannot deadlock.
//! * **No model, ever**: this crate is storage. Orchestration lives in `memory-agent`.
//!
//! # Example
//! ```
//! use memory_core::{AddRequest, Store, StoreOptions};
//!
//! let sandbox = testkit::Sandbox::new(); // a temp dir with a UTF-8 path
//! let store = Store::new(sandbox.path("proj"), StoreOptions::default());
//! let saved = store.add(AddRequest {
//!     name: "SSH port on staging".into(),
//!     body: "staging SSH listens on 2222, not 22.".into(),
//!     ..AddRequest::default()
//! })?;
//! assert_eq!(saved.saved_text(), "Saved \"SSH port on staging\" (SSH-port-on-staging.md).");
//! let index = std::fs::read_to_string(store.dir().join("MEMORY.md"))?;
//! assert_eq!(index, "- [SSH port on staging](SSH-port-on-staging.md) — staging SSH listens on 2222, not 22.\n");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Limitations
//! * Cross-process exclusion relies on `O_EXCL` creation of `.lock`; on file systems where
//!   that is not atomic across machines (some sync-client folders) only same-host writers are
//!   excluded, as in the original.
//! * The mtime cache trusts (inode, size, mtime, ctime); an external editor that rewrites a
//!   file in place within one timestamp tick without changing its size is seen at the next
//!   change.
//! * Unix only for now (file modes, `O_NOFOLLOW`); Windows naming rules exist as pure
//!   functions in `memory-keys`/`memory-index`.
#![forbid(unsafe_code)]
#![cfg_attr(test, allow(clippy::disallowed_methods))]

pub mod catalog;
pub mod clock;
pub mod config;
mod error;
pub mod messages;
mod open;
pub mod scope;
pub mod secrets;
mod status;
mod store;
pub mod switch;
pub mod tool;

pub use clock::Clock;
pub use config::{
    Config, ConfigProblem, Language, LoadedConfig, ScopesConfig, Selector, SessionPersistence,
    Task, load_config, ui_language,
};
pub use error::StoreError;
pub use open::{
    OpenError, Project, RootProblem, check_dir_usable, default_agent_dir, expand_dir, home_dir,
    open_project,
};
pub use scope::{Scope, ScopeError, ScopedEntry, Scopes};
pub use status::{ModuleState, Modules, misconfigured_block, misconfigured_block_in, status_block};
pub use store::types::{
    AddRequest, DreamMeta, IndexSection, Notice, ParseVersionError, RebuildOutcome, RemoveOutcome,
    ReplaceRequest, StoredEntry, Version, WriteOutcome,
};
pub use store::{
    CACHE_DIR, CacheStats, CachedFile, DREAM_META_FILE, DirHold, FileStamp, INDEX_FILE,
    MAX_BODY_BYTES, Round, Store, StoreOptions, Target, write_private_file,
};
pub use switch::{SetOutcome, Switch, SwitchError, SwitchProblem, SwitchState};

pub use memory_index::{EntryMeta, EntryType};

/// Reusable lock record files for long-lived processes (a sidecar, a server): each write
/// then creates one inode fewer. Call [`lock_slots::enable`] once at start and
/// [`lock_slots::release`] before exiting; see `memory_lock::enable_lock_slots`.
pub mod lock_slots {
    pub use memory_lock::{enable_lock_slots as enable, release_lock_slots as release};
}
pub use memory_lock::{Holder, LockState};

/// Who holds a `.lock`: this host's name and whether a process is alive (for diagnostics).
pub mod lock_info {
    pub use memory_lock::{hostname, pid_alive};
}
