//! The two prompts: `memory_index` and `relevant_memories`.

use memory_agent::{Surfacer, SurfacingOptions};
use memory_core::{Config, Selector, Store};

/// The prompt with the frozen index section.
pub const INDEX_PROMPT: &str = "memory_index";
/// The prompt with the memories relevant to a text.
pub const RELEVANT_PROMPT: &str = "relevant_memories";
/// `relevant_memories`' one argument.
pub const TEXT_ARGUMENT: &str = "text";

/// What `relevant_memories` returns when nothing is relevant.
///
/// Decision: a prompt with no message would be useless to a client that inserts it into a
/// conversation, so an empty selection says so in one line.
pub const NOTHING_RELEVANT: &str = "No stored memory is relevant to this text.";

/// The `memory_index` section value: `MEMORY.md`'s injection window, sanitised (PM-56..58).
///
/// # Errors
/// The store's error text when `MEMORY.md` cannot be read.
pub fn index_section(store: &Store, cfg: &Config) -> Result<String, String> {
    store
        .index_section(
            cfg.mem_index_inject_max_lines,
            cfg.mem_index_inject_max_bytes,
        )
        .map(|s| s.value)
        .map_err(|e| e.to_string())
}

/// A surfacer for one MCP session: the project's surfacing options with the lexical
/// selector (no model is reachable from an MCP server).
pub fn surfacer(cfg: &Config) -> Surfacer {
    let mut opts = SurfacingOptions::from(cfg);
    opts.selector = Selector::Lexical;
    // Decision: a prompt is asked for on purpose, so it answers even when automatic
    // surfacing is turned off in memory.json.
    opts.enabled = true;
    Surfacer::new(opts)
}

/// The `<relevant_memories>` block for `text`, or [`NOTHING_RELEVANT`].
///
/// Every call starts afresh (`Surfacer::reset`): unlike pi's per-turn surfacing, a prompt
/// the user asks for again returns the same memories again.
///
/// # Errors
/// The store's error text when the listing fails.
pub fn relevant(surfacer: &mut Surfacer, store: &Store, text: &str) -> Result<String, String> {
    surfacer.reset();
    let out = surfacer.surface(store, text).map_err(|e| e.to_string())?;
    if out.message.is_empty() {
        return Ok(NOTHING_RELEVANT.to_owned());
    }
    Ok(out.message)
}
