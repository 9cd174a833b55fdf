//! `--from claude-code`: Claude Code's auto memory.
//!
//! Claude Code keeps one directory per project, `~/.claude/projects/<sanitized path>/memory/`:
//! a `MEMORY.md` index (link lines `- [Title](file.md) — hook`, and often notes written into
//! it directly) plus topic files with YAML frontmatter (`name`, `description`, and `type` —
//! user, feedback, project, reference, the same four as pi-memory — either top-level or under
//! `metadata:`, depending on the Claude Code version). The path may be that `memory/`
//! directory or the project directory above it. Everything else is the `dir` source's
//! mapping ([`super::dir`]).

use std::path::Path;

use super::{ImportError, Scan, Source};

/// The `claude-code` source.
#[derive(Debug, Clone, Copy, Default)]
pub struct ClaudeCode;

impl Source for ClaudeCode {
    fn scan(&self, path: &Path) -> Result<Scan, ImportError> {
        if !path.is_dir() {
            return Err(ImportError::bad(path, "not a directory"));
        }
        let memory = path.join("memory");
        let root = if !path.join(memory_core::INDEX_FILE).exists() && memory.is_dir() {
            memory
        } else {
            path.to_path_buf()
        };
        super::dir::scan_markdown_dir(&root)
    }
}
