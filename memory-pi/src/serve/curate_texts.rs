//! Every text a person reads in `/memory list` (the list, the read-only view, edit and delete),
//! `/memory reload` and the session usage summary of `/memory` (PA-03): one function per
//! text, English and Simplified Chinese, with the same placeholders in both.
//!
//! The error classes the contract fixes in English (`Memory conflict: stale version`,
//! `Memory is off`, `Memory operation invalidated by a session change`) are passed in as
//! `{err}` and never translated; only the wrapping around them is.

use memory_core::Language;

use super::usage::Via;

/// The error class of an edit or delete whose session changed while it waited (PA-46).
pub(super) const INVALIDATED: &str = "Memory operation invalidated by a session change";

/// A file size as a person reads it: bytes below 1 KiB, else KiB with one decimal.
pub(super) fn size(bytes: u64) -> String {
    if bytes < 1024 {
        format!("{bytes} B")
    } else {
        format!("{:.1} KiB", bytes as f64 / 1024.0)
    }
}

/// The list's title.
pub(super) fn list_title(lang: Language, dir: &str) -> String {
    match lang {
        Language::En => format!("Memory files — {dir}"),
        Language::ZhCn => format!("记忆文件 — {dir}"),
    }
}

/// An empty memory directory (PA-30).
pub(super) fn list_empty(lang: Language) -> String {
    match lang {
        Language::En => "No memory files yet.".to_owned(),
        Language::ZhCn => "还没有记忆文件。".to_owned(),
    }
}

/// The index's line in the list.
pub(super) fn index_label(lang: Language, modified: &str, size: &str) -> String {
    match lang {
        Language::En => format!("MEMORY.md · index · modified {modified} · {size}"),
        Language::ZhCn => format!("MEMORY.md · 索引 · 修改于 {modified} · {size}"),
    }
}

/// An entry's line in the list.
pub(super) fn entry_label(
    lang: Language,
    name: &str,
    entry_type: &str,
    modified: &str,
    size: &str,
    file: &str,
) -> String {
    match lang {
        Language::En => {
            format!("{name} · {entry_type} · modified {modified} · {size} · {file}")
        }
        Language::ZhCn => format!("{name} · {entry_type} · 修改于 {modified} · {size} · {file}"),
    }
}

/// The read-only view's title.
pub(super) fn view_title(lang: Language, file: &str) -> String {
    match lang {
        Language::En => format!("{file} (read-only)"),
        Language::ZhCn => format!("{file}（只读）"),
    }
}

/// The keys of the read-only view.
pub(super) fn view_keys(lang: Language, deletable: bool) -> String {
    match (lang, deletable) {
        (Language::En, true) => "e edit · d delete · ↑↓ scroll · Esc back to the list".to_owned(),
        (Language::En, false) => "e edit · ↑↓ scroll · Esc back to the list".to_owned(),
        (Language::ZhCn, true) => "e 编辑 · d 删除 · ↑↓ 滚动 · Esc 返回列表".to_owned(),
        (Language::ZhCn, false) => "e 编辑 · ↑↓ 滚动 · Esc 返回列表".to_owned(),
    }
}

/// The editor's title.
pub(super) fn edit_title(lang: Language, file: &str) -> String {
    match lang {
        Language::En => format!("Edit {file} (saved only if nobody changed it meanwhile)"),
        Language::ZhCn => format!("编辑 {file}（仅当期间无人修改时保存）"),
    }
}

/// A saved edit that the model sees at once (surfacing reads entries live).
pub(super) fn saved(lang: Language, file: &str) -> String {
    match lang {
        Language::En => format!("Saved {file}."),
        Language::ZhCn => format!("已保存 {file}。"),
    }
}

/// A saved edit or delete that changed the index the session froze (PA-19).
pub(super) fn saved_needs_reload(lang: Language, file: &str) -> String {
    match lang {
        Language::En => format!(
            "Saved {file}. The memory index the model sees changes only after /memory reload, at the next turn."
        ),
        Language::ZhCn => format!(
            "已保存 {file}。模型看到的记忆索引要在执行 /memory reload 之后的下一轮才会更新。"
        ),
    }
}

/// The editor was closed without a change.
pub(super) fn unchanged(lang: Language) -> String {
    match lang {
        Language::En => "No changes; nothing saved.".to_owned(),
        Language::ZhCn => "没有改动，未保存。".to_owned(),
    }
}

/// An edit or save refused; `err` is the store's reason (English error classes stay).
pub(super) fn not_saved(lang: Language, err: &str) -> String {
    match lang {
        Language::En => format!("Not saved: {err}"),
        Language::ZhCn => format!("未保存：{err}"),
    }
}

/// An edited entry that is no longer an entry file.
pub(super) fn not_an_entry(lang: Language) -> String {
    match lang {
        Language::En => "the text is not a memory entry: it must start with the --- frontmatter holding name, description, type (user, feedback, project or reference), created and modified".to_owned(),
        Language::ZhCn => "文本不是记忆条目：开头必须是 --- 包围的 frontmatter，包含 name、description、type（user、feedback、project 或 reference）、created 和 modified".to_owned(),
    }
}

/// The delete confirmation's title.
pub(super) fn delete_title(lang: Language) -> String {
    match lang {
        Language::En => "Delete memory".to_owned(),
        Language::ZhCn => "删除记忆".to_owned(),
    }
}

/// The delete confirmation's question, naming the memory (PA-32).
pub(super) fn delete_body(lang: Language, name: &str, file: &str) -> String {
    match lang {
        Language::En => format!(
            "Delete \"{name}\" ({file})? Its MEMORY.md line goes too. A snapshot is kept in .backups/; there is no undo in pi."
        ),
        Language::ZhCn => format!(
            "删除“{name}”（{file}）？MEMORY.md 中的对应行也会删除。快照保存在 .backups/ 中；pi 中无法撤销。"
        ),
    }
}

/// A deleted memory.
pub(super) fn deleted(lang: Language, name: &str) -> String {
    match lang {
        Language::En => format!("Deleted \"{name}\"."),
        Language::ZhCn => format!("已删除“{name}”。"),
    }
}

/// A delete refused; `err` is the store's reason.
pub(super) fn not_deleted(lang: Language, err: &str) -> String {
    match lang {
        Language::En => format!("Not deleted: {err}"),
        Language::ZhCn => format!("未删除：{err}"),
    }
}

/// The index itself is never deleted from the list (no wipe-all, PA-32).
pub(super) fn index_not_deletable(lang: Language) -> String {
    match lang {
        Language::En => "MEMORY.md cannot be deleted; edit it instead".to_owned(),
        Language::ZhCn => "MEMORY.md 不能删除，请改为编辑".to_owned(),
    }
}

/// A file that is not in the list (gone, a symlink, not an entry).
pub(super) fn no_such_file(lang: Language, file: &str) -> String {
    match lang {
        Language::En => format!("{file} is not a memory file of this project"),
        Language::ZhCn => format!("{file} 不是本项目的记忆文件"),
    }
}

/// `/memory reload` (PA-20).
pub(super) fn reload_scheduled(lang: Language) -> String {
    match lang {
        Language::En => "The memory index will be read again at the next turn.".to_owned(),
        Language::ZhCn => "记忆索引将在下一轮重新读取。".to_owned(),
    }
}

/// `/memory`'s mark after this session changed the index (PA-21), before `/memory reload`.
pub(super) fn mark_changed(lang: Language) -> String {
    match lang {
        Language::En => {
            "Index changed: run /memory reload to refresh it at the next turn".to_owned()
        }
        Language::ZhCn => "索引已更改：执行 /memory reload 以在下一轮刷新".to_owned(),
    }
}

/// `/memory`'s mark after `/memory reload` (PA-21).
pub(super) fn mark_refresh(lang: Language) -> String {
    match lang {
        Language::En => "Index changed, refresh at the next turn".to_owned(),
        Language::ZhCn => "索引已更改，将在下一轮刷新".to_owned(),
    }
}

/// The usage summary's first line.
pub(super) fn usage_header(lang: Language, available: bool) -> String {
    match (lang, available) {
        (Language::En, true) => "Session usage:".to_owned(),
        (Language::En, false) => {
            "Session usage (currently unavailable: memory is off or paused):".to_owned()
        }
        (Language::ZhCn, true) => "本会话的记忆使用：".to_owned(),
        (Language::ZhCn, false) => "本会话的记忆使用（当前不可用：记忆已关闭或暂停）：".to_owned(),
    }
}

fn via(lang: Language, v: Via) -> &'static str {
    match (lang, v) {
        (Language::En, Via::Tool) => "tool",
        (Language::En, Via::Edit) => "edit",
        (Language::En, Via::Delete) => "delete",
        (Language::En, Via::Extraction) => "extraction",
        (Language::En, Via::Dream) => "dream",
        (Language::ZhCn, Via::Tool) => "工具",
        (Language::ZhCn, Via::Edit) => "编辑",
        (Language::ZhCn, Via::Delete) => "删除",
        (Language::ZhCn, Via::Extraction) => "提取",
        (Language::ZhCn, Via::Dream) => "整理",
    }
}

/// One save in the summary.
pub(super) fn usage_save_item(lang: Language, name: &str, v: Via, turn: u64) -> String {
    let how = via(lang, v);
    match lang {
        Language::En => format!("{name} ({how}, turn {turn})"),
        Language::ZhCn => format!("{name}（{how}，第 {turn} 轮）"),
    }
}

/// The saves line.
pub(super) fn usage_saves(lang: Language, n: usize, items: &str) -> String {
    match lang {
        Language::En => format!("  Saves ({n}): {items}"),
        Language::ZhCn => format!("  保存（{n}）：{items}"),
    }
}

/// No saves yet.
pub(super) fn usage_saves_none(lang: Language) -> String {
    match lang {
        Language::En => "  Saves: none".to_owned(),
        Language::ZhCn => "  保存：无".to_owned(),
    }
}

/// One surfaced memory or read file in the summary.
pub(super) fn usage_seen_item(lang: Language, name: &str, count: u64, last_turn: u64) -> String {
    match lang {
        Language::En => format!("{name} ×{count} (last turn {last_turn})"),
        Language::ZhCn => format!("{name} ×{count}（最近第 {last_turn} 轮）"),
    }
}

/// The surfaced line.
pub(super) fn usage_surfaced(lang: Language, n: usize, items: &str) -> String {
    match lang {
        Language::En => format!("  Surfaced ({n}): {items}"),
        Language::ZhCn => format!("  已召回（{n}）：{items}"),
    }
}

/// Nothing surfaced yet.
pub(super) fn usage_surfaced_none(lang: Language) -> String {
    match lang {
        Language::En => "  Surfaced: none".to_owned(),
        Language::ZhCn => "  已召回：无".to_owned(),
    }
}

/// The read line.
pub(super) fn usage_reads(lang: Language, n: usize, items: &str) -> String {
    match lang {
        Language::En => format!("  Read by the model ({n}): {items}"),
        Language::ZhCn => format!("  模型读取（{n}）：{items}"),
    }
}

/// No entry file read yet.
pub(super) fn usage_reads_none(lang: Language) -> String {
    match lang {
        Language::En => "  Read by the model: none".to_owned(),
        Language::ZhCn => "  模型读取：无".to_owned(),
    }
}

/// Older records were dropped (PA-28).
pub(super) fn usage_dropped(lang: Language, n: u64) -> String {
    match lang {
        Language::En => format!("  ({n} older records dropped)"),
        Language::ZhCn => format!("  （已丢弃 {n} 条较早的记录）"),
    }
}

/// The headless listing's header (print, json and rpc modes).
pub(super) fn listing_header(lang: Language, dir: &str, n: usize) -> String {
    match lang {
        Language::En => format!("Memory files in {dir} ({n}):"),
        Language::ZhCn => format!("{dir} 中的记忆文件（{n}）："),
    }
}
