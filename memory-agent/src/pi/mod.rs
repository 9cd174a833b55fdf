//! Everything that knows pi's formats, in one visible place. The rest of the crate is
//! host-neutral; a pi host (the `pimem serve` sidecar, the `pimem` CLI) uses this module to
//! speak pi:
//!
//! * [`sessions`]: pi 1.6.0's session JSONL files — the reader, the project's session
//!   listing and search (the memory tool's `scope: "sessions"`, PM-41) and the writer that
//!   saves headless runs as session files (`sessionPersistence`, PM-80);
//! * [`session_tools`]: pi-session's `search-session` and `ask-session` tools and the
//!   `@s:` / `@as:` session references (PS-01..PS-35), on the same reader;
//! * [`transcript`]: pi's `AgentMessage` JSON → the typed transcript extraction renders;
//! * [`project_instructions`]: the `<project_instructions>` (AGENTS.md) blocks of a pi system
//!   prompt, which extraction quotes (PM-67);
//! * [`SessionFiles`]: the [`RunObserver`] that implements `sessionPersistence`.

mod instructions;
pub mod session_tools;
pub mod sessions;
pub mod transcript;

use std::sync::Arc;

use camino::Utf8PathBuf;
use memory_core::{Config, SessionPersistence, Task};

pub use instructions::project_instructions;

use crate::options::{FinishedRun, RunObserver};

/// `sessionPersistence` (PM-80): every run of a task, successful or failed, saved as a pi
/// session file in `sessionDir` (`~` expands to the home directory; relative to the project
/// memory directory) or `<project memory dir>/sessions/`.
#[derive(Debug, Clone)]
pub struct SessionFiles {
    /// The configured directory, as written; `None` for `<memory dir>/sessions/`.
    pub session_dir: Option<String>,
    /// The `provider/model-id` recorded in the assistant messages.
    pub model: String,
}

impl SessionFiles {
    /// The observers `memory.json` asks for: one [`SessionFiles`] when the task's
    /// `sessionPersistence` is enabled, none otherwise.
    pub fn observers(cfg: &Config, task: Task) -> Vec<Arc<dyn RunObserver>> {
        let SessionPersistence {
            enabled,
            session_dir,
        } = cfg.task_session_persistence(task);
        if !enabled {
            return Vec::new();
        }
        vec![Arc::new(SessionFiles {
            session_dir: session_dir.clone(),
            model: cfg.task_model(task).unwrap_or_default().to_owned(),
        })]
    }

    fn dir(&self, memory_dir: &camino::Utf8Path) -> Result<Utf8PathBuf, String> {
        match self.session_dir.as_deref() {
            Some(d) => memory_core::expand_dir(d, memory_dir.as_std_path())
                .map_err(|e| format!("Cannot save the headless session: {e}")),
            None => Ok(memory_dir.join("sessions")),
        }
    }
}

impl RunObserver for SessionFiles {
    fn finished(&self, run: &FinishedRun<'_>) -> Result<(), String> {
        let dir = self.dir(run.memory_dir)?;
        let meta = sessions::HeadlessSession {
            task: run.task.key(),
            model: &self.model,
            cwd: run.memory_dir.as_str(),
            system: run.system,
            started: run.started,
            error: run.error,
        };
        let (file, text) = sessions::render_headless_session(&meta, run.transcript);
        memory_core::write_private_file(&dir.join(file), text.as_bytes())
            .map_err(|e| format!("Cannot save the headless session: {e}"))
    }
}
