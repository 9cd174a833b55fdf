//! PM-13: the fixed names inside a project memory directory. Entries are flat `*.md` files
//! next to these; no subdirectory is scanned for entries.

/// The index file.
pub const INDEX_FILE: &str = "MEMORY.md";
/// The cross-process lock file.
pub const LOCK_FILE: &str = ".lock";
/// The snapshot directory.
pub const BACKUPS_DIR: &str = ".backups";
/// The dream bookkeeping file.
pub const DREAM_META_FILE: &str = ".dream-meta.json";
/// The optional session-persistence directory.
pub const SESSIONS_DIR: &str = "sessions";
/// The extension of entry files.
pub const ENTRY_EXTENSION: &str = "md";
