//! The message catalog: every text a person reads, in English and Simplified Chinese
//! (PA-03).
//!
//! One table, [`Text`], with one key per text; [`Text::template`] gives a key's template in a
//! [`Language`] and [`t`] fills its `{name}` placeholders. The table is written with one macro
//! invocation in which every key must give both `en` and `zh` (a key without one of them
//! does not compile), and [`Text::ALL`] lists every key, so the tests below enumerate the
//! whole table: each template non-empty, the same placeholders in both languages, the
//! Chinese one actually Chinese.
//!
//! Decision: a typed key enum and templates rather than one function per text per
//! language: a missing translation is a compile error, a placeholder mismatch a test
//! failure, and the functions that compose texts ([`crate::messages`], the doctor, the
//! status block) keep their logic in one place for both languages.
//!
//! What is **not** in the catalog, on purpose: texts the model reads (tool results, the
//! `memory_index` section, surfacing, extraction and dream prompts keep pi-memory's exact
//! English, byte for byte), error strings pinned by the spec (`Memory is off`,
//! `Memory conflict: stale version`), check ids, states and error classes (English in every
//! language, PA-03).
//!
//! A placeholder is `{` + ASCII lowercase letters, digits or `_` + `}`; any other brace is
//! literal text (`{"version": 1}` stays as written).
//!
//! # Adding texts
//! Add a key to the `catalog!` table below with its `en` and `zh` templates, then compose it
//! where it is shown with [`t`] and the reader's language (`ui_language(&config)`). A module
//! that keeps `match language { En => format!(..), ZhCn => format!(..) }` functions is folded
//! in the same way: each arm pair becomes one key, each function body one call of [`t`].
//!
//! The run log's panel texts are the `Px*` keys: `memory-runlog`'s `texts::Catalog` is a
//! typed view of them built at compile time ([`Text::template`] is a `const fn`).
//!
//! # Limitations
//! The pi extension's command descriptions are registered by pi before any configuration is
//! read and stay English.

use std::fmt::Display;

use crate::config::Language;

macro_rules! catalog {
    ($( $(#[$doc:meta])* $key:ident => { en: $en:expr, zh: $zh:expr $(,)? } )*) => {
        /// One text of the catalog.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum Text {
            $( $(#[$doc])* $key, )*
        }

        impl Text {
            /// Every key, in table order.
            pub const ALL: &'static [Text] = &[ $( Text::$key, )* ];

            /// The key's template in `language`.
            pub const fn template(self, language: Language) -> &'static str {
                match (self, language) {
                    $(
                        (Text::$key, Language::En) => $en,
                        (Text::$key, Language::ZhCn) => $zh,
                    )*
                }
            }

            /// The key's name (`SwitchedOn`), for test messages.
            pub fn name(self) -> &'static str {
                match self {
                    $( Text::$key => stringify!($key), )*
                }
            }
        }
    };
}

/// The key's text in `language` with its placeholders filled from `args` (`("path", &p)`).
/// A placeholder without an argument stays as written (a test checks none is left).
pub fn t(language: Language, key: Text, args: &[(&str, &dyn Display)]) -> String {
    fill(key.template(language), args)
}

/// Fills `{name}` placeholders of `template`.
pub fn fill(template: &str, args: &[(&str, &dyn Display)]) -> String {
    let mut out = String::with_capacity(template.len() + 32);
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        let close = after.find('}');
        let name = close.map(|c| &after[..c]);
        match name.filter(|n| is_placeholder(n)) {
            Some(n) => {
                match args.iter().find(|(k, _)| *k == n) {
                    Some((_, v)) => out.push_str(&v.to_string()),
                    None => {
                        out.push('{');
                        out.push_str(n);
                        out.push('}');
                    }
                }
                rest = &after[n.len() + 1..];
            }
            None => {
                out.push('{');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// Whether `name` is a placeholder's name.
fn is_placeholder(name: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
}

/// The placeholders of a template, sorted and deduplicated.
pub fn placeholders(template: &str) -> Vec<&str> {
    let mut found = Vec::new();
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        let after = &rest[open + 1..];
        match after.find('}').map(|c| &after[..c]) {
            Some(n) if is_placeholder(n) => {
                found.push(n);
                rest = &after[n.len() + 1..];
            }
            _ => rest = after,
        }
    }
    found.sort_unstable();
    found.dedup();
    found
}

catalog! {
    // ---- The switch (PA-10..PA-16) ----
    /// How to turn memory back on.
    TurnOnHint => {
        en: "Run /memory on (or `pimem on`) to use it again.",
        zh: "运行 /memory on（或 `pimem on`）即可重新启用。",
    }
    /// `/memory off` succeeded: `{how}`, `{hint}`.
    SwitchedOff => {
        en: "Memory is off for every project of this pi agent directory ({how}). No surfacing, extraction or dream, and the memory_index section is left out from the next turn on; the files and history are kept. {hint}",
        zh: "已为此 pi agent 目录下的所有项目关闭记忆（{how}）。从下一轮起不再召回、提取或整理，也不再注入 memory_index 部分；文件和历史记录都会保留。{hint}",
    }
    /// The switch file was written: `{path}`.
    SwitchSavedIn => {
        en: "saved in {path}",
        zh: "已保存到 {path}",
    }
    /// `/memory off` while already off: `{path}`.
    SwitchAlreadyOff => {
        en: "it already was ({path})",
        zh: "原本就已关闭（{path}）",
    }
    /// `/memory on` succeeded: `{how}`.
    SwitchedOn => {
        en: "Memory is on ({how}). The memory_index section is read again at the next turn.",
        zh: "记忆已开启（{how}）。下一轮起重新读取 memory_index 部分。",
    }
    /// `/memory on` while already on.
    SwitchAlreadyOn => {
        en: "it already was",
        zh: "原本就已开启",
    }
    /// The `Switch:` line: on by the file.
    SwitchLineOn => {
        en: "Switch: on",
        zh: "开关：开启",
    }
    /// The `Switch:` line: on without a file.
    SwitchLineOnDefault => {
        en: "Switch: on (default)",
        zh: "开关：开启（默认）",
    }
    /// The `Switch:` line: off; `{hint}`.
    SwitchLineOff => {
        en: "Switch: off — {hint}",
        zh: "开关：关闭——{hint}",
    }
    /// The `Switch:` line: paused; `{problem}`.
    SwitchLinePaused => {
        en: "Switch: paused — {problem}",
        zh: "开关：已暂停——{problem}",
    }
    /// `/memory` while off: `{hint}`.
    StatusOff => {
        en: "Memory: off — {hint}",
        zh: "记忆：已关闭——{hint}",
    }
    /// `/memory` while paused: `{problem}`.
    StatusPaused => {
        en: "Memory: paused — {problem}",
        zh: "记忆：已暂停——{problem}",
    }
    /// An unreadable switch file: `{path}`, `{error}` (the system's text).
    SwitchUnreadable => { en: "{path} cannot be read ({error})", zh: "无法读取 {path}（{error}）" }
    /// A switch file that is not JSON.
    SwitchCorrupt => {
        en: "{path} is not valid JSON ({error})",
        zh: "{path} 不是有效的 JSON（{error}）",
    }
    /// A switch file that is not an object.
    SwitchNotAnObject => { en: "{path} must hold a JSON object", zh: "{path} 必须是一个 JSON 对象" }
    /// An unknown `version`: `{found}`.
    SwitchUnknownVersion => {
        en: "{path} has \"version\": {found}; only 1 is understood",
        zh: "{path} 中的 \"version\" 为 {found}；只支持 1",
    }
    /// A non-boolean `enabled`: `{found}`.
    SwitchNotBoolean => {
        en: "{path} has \"enabled\": {found}; it must be true or false",
        zh: "{path} 中的 \"enabled\" 为 {found}；它必须是 true 或 false",
    }
    /// A switch problem and its fix: `{what}`.
    SwitchProblemFix => {
        en: "{what}. Fix it to read {\"version\": 1, \"enabled\": true} (or false), or delete it (a missing file means on); it is never overwritten automatically",
        zh: "{what}。请把它改为 {\"version\": 1, \"enabled\": true}（或 false），或删除它（文件不存在即为开启）；它永远不会被自动覆盖",
    }
    /// `/dream` refused while off or paused: `{refusal}`, `{hint}`.
    DreamRefused => {
        en: "Dream not started: {refusal}. {hint}",
        zh: "未开始整理：{refusal}。{hint}",
    }

    // ---- pi's notifications and `/memory unlock` (PM-77) ----
    /// The notification after the model saved a memory: `{name}`.
    NotifySaved => { en: "Saved: {name}", zh: "已保存：{name}" }
    /// `/memory unlock` without a lock.
    UnlockNoLock => { en: "No lock present.", zh: "没有锁。" }
    /// `/memory unlock`'s confirmation title.
    UnlockTitle => { en: "Memory lock", zh: "记忆锁" }
    /// The confirmation naming the holder.
    UnlockConfirmHeld => {
        en: "Remove the memory lock file? It is held by {holder}. Only do this if no memory operation is running.",
        zh: "删除记忆锁文件？它由 {holder} 持有。只有在没有记忆操作运行时才这样做。",
    }
    /// The confirmation for an unreadable record.
    UnlockConfirm => {
        en: "Remove the memory lock file? Only do this if no memory operation is running.",
        zh: "删除记忆锁文件？只有在没有记忆操作运行时才这样做。",
    }
    /// The lock was removed.
    UnlockRemoved => { en: "Memory lock removed.", zh: "记忆锁已删除。" }
    /// The lock could not be removed: `{error}`.
    UnlockFailed => { en: "Failed to remove memory lock: {error}", zh: "删除记忆锁失败：{error}" }

    /// A command before the session started (PM-75).
    NotInitialized => { en: "Memory not initialized.", zh: "记忆尚未初始化。" }
    /// `/dream`'s confirmation title (PM-69).
    DreamConfirmTitle => { en: "Dream", zh: "整理记忆" }
    /// `/dream`'s confirmation question (PM-69).
    DreamConfirmBody => {
        en: "Consolidate all memory files? This rewrites them in-place.",
        zh: "整理全部记忆文件？这会原地改写它们。",
    }
    /// The status text while a dream runs (PM-69).
    DreamStatus => { en: "Consolidating memory...", zh: "正在整理记忆……" }
    /// `/dream` in a mode that cannot confirm.
    DreamNeedsUi => {
        en: "Dream not started: it needs a confirmation, which print and json modes cannot give. Run /dream in pi's terminal UI or over --mode rpc.",
        zh: "未开始整理：需要确认，而 print 和 json 模式无法确认。请在 pi 的终端界面中或通过 --mode rpc 运行 /dream。",
    }

    /// `/memory` could not read the store: `{error}`.
    StatusFailed => {
        en: "Failed to read memory status: {error}",
        zh: "读取记忆状态失败：{error}",
    }
    /// `pimem export --out`: `{path}`.
    CliExported => { en: "pimem: exported to {path}", zh: "pimem：已导出到 {path}" }
    /// `pimem surface` found nothing.
    CliNothingRelevant => { en: "Nothing relevant.", zh: "没有相关的记忆。" }

    // ---- The status block (PM-75) ----
    /// The seven lines of `/memory` and `pimem status`.
    StatusBlock => {
        en: "Dir: {dir}\nIndex: {lines}/{max_lines} lines, {bytes}/{max_bytes} bytes, {unrecognized} unrecognized lines\nInject: {inject_lines}/{inject_max_lines} lines, {inject_bytes}/{inject_max_bytes} bytes\nEntries: {entries}\n{modules}\nLast dream: {last_dream}\nLock: {lock}",
        zh: "目录：{dir}\n索引：{lines}/{max_lines} 行，{bytes}/{max_bytes} 字节，{unrecognized} 行无法识别\n注入：{inject_lines}/{inject_max_lines} 行，{inject_bytes}/{inject_max_bytes} 字节\n条目：{entries}\n{modules}\n上次整理：{last_dream}\n锁：{lock}",
    }
    /// The `Modules:` line: `{dream}`, `{extract}`, `{surfacing}` (the keys stay as in
    /// `memory.json`).
    StatusModules => {
        en: "Modules: dream={dream} extractMemories={extract} autoSurfacing={surfacing}",
        zh: "模块：dream={dream} extractMemories={extract} autoSurfacing={surfacing}",
    }
    /// A module on with `{model}`.
    ModuleOn => { en: "on({model})", zh: "开启（{model}）" }
    /// A module on without a model.
    ModuleOnLexical => { en: "on(lexical)", zh: "开启（词法）" }
    /// A module switched off.
    ModuleOff => { en: "off", zh: "关闭" }
    /// A module off for want of a model.
    ModuleNoModel => { en: "off(no model)", zh: "关闭（未配置模型）" }
    /// A module whose `{model}` cannot be resolved.
    ModuleUnresolvable => {
        en: "off(unresolvable model {model})",
        zh: "关闭（无法解析模型 {model}）",
    }
    /// The first two lines of a misconfigured `/memory` (PM-76).
    StatusMisconfigured => {
        en: "Memory: misconfigured\nDir: not initialized",
        zh: "记忆：配置有误\n目录：未初始化",
    }
    /// No dream yet.
    StatusNeverDreamed => { en: "never", zh: "从未" }
    /// The lock is free.
    StatusLockFree => { en: "free", zh: "空闲" }
    /// The lock record cannot be read.
    StatusLockUnreadable => {
        en: "unreadable — run /memory unlock",
        zh: "无法读取——请运行 /memory unlock",
    }
    /// The lock is held by `{holder}`.
    StatusLockHeld => { en: "held by {holder}", zh: "由 {holder} 持有" }

    // ---- The doctor (PA-26, PA-52) ----
    /// Prefix of a fix line.
    DoctorFix => { en: "fix:", zh: "修复：" }
    /// The report's first line.
    DoctorSummary => {
        en: "Memory doctor: {ok} ok, {warning} warning, {failure} failure, {unchecked} unchecked",
        zh: "记忆诊断：{ok} 项正常，{warning} 项警告，{failure} 项失败，{unchecked} 项未检查",
    }
    /// No agent directory.
    DoctorNoAgentDir => {
        en: "pi's agent directory is unknown (neither PI_CODING_AGENT_DIR nor HOME is set)",
        zh: "无法确定 pi 的 agent 目录（PI_CODING_AGENT_DIR 和 HOME 均未设置）",
    }
    /// Fix for it.
    DoctorNoAgentDirFix => {
        en: "set HOME, or pass --agent-dir",
        zh: "设置 HOME，或传入 --agent-dir",
    }
    /// The project layer is not read: `{file}`.
    DoctorConfigUntrusted => {
        en: "{file} not read: the project is not trusted (pi asks; the CLI needs --trust-project)",
        zh: "未读取 {file}：项目未被信任（pi 会询问；CLI 需要 --trust-project）",
    }
    /// An existing file cannot be read: `{problem}`.
    DoctorConfigFatal => {
        en: "{problem} — memory cannot start with it (Failed to load memory config)",
        zh: "{problem}——记忆无法以此配置启动（Failed to load memory config）",
    }
    /// Values fell back to defaults: `{file}`, `{problems}`.
    DoctorConfigProblems => { en: "{file}: {problems}", zh: "{file}：{problems}" }
    /// Fix for configuration problems.
    DoctorConfigFix => {
        en: "edit {file} (the keys and defaults are in the README)",
        zh: "编辑 {file}（各项键与默认值见 README）",
    }
    /// A configuration file read without problems.
    DoctorConfigOk => { en: "{file} read, no problems", zh: "已读取 {file}，没有问题" }
    /// No configuration file.
    DoctorConfigMissing => {
        en: "{file} does not exist: defaults apply",
        zh: "{file} 不存在：使用默认值",
    }
    /// The switch file says on.
    DoctorSwitchOn => { en: "memory is on ({path})", zh: "记忆已开启（{path}）" }
    /// On without a switch file.
    DoctorSwitchOnDefault => {
        en: "memory is on (no {path}: on by default)",
        zh: "记忆已开启（没有 {path}：默认开启）",
    }
    /// The switch says off.
    DoctorSwitchOff => {
        en: "memory is off ({path}): no surfacing, extraction, dream or memory_index section",
        zh: "记忆已关闭（{path}）：不召回、不提取、不整理，也不注入 memory_index 部分",
    }
    /// Fix for a paused switch.
    DoctorSwitchPausedFix => {
        en: "write {\"version\": 1, \"enabled\": true} to {path} or delete it",
        zh: "向 {path} 写入 {\"version\": 1, \"enabled\": true}，或删除该文件",
    }
    /// Directory checks skipped.
    DoctorNoProject => {
        en: "not checked: the project's memory directory is unknown (see project.identity)",
        zh: "未检查：无法确定项目的记忆目录（见 project.identity）",
    }
    /// Identity failure: `{category}`, `{error}`.
    DoctorIdentityFailed => { en: "{category}: {error}", zh: "{category}：{error}" }
    /// Fix for an identity failure.
    DoctorIdentityFix => {
        en: "check memoryDir in memory.json and that HOME is set; the directory must stay inside memoryDir",
        zh: "检查 memory.json 中的 memoryDir 以及 HOME 是否已设置；该目录必须位于 memoryDir 之内",
    }
    /// Fix for an unusable directory.
    DoctorReachableFix => {
        en: "make {dir} a directory you own and can read (chmod 700), without a symlink loop",
        zh: "让 {dir} 成为你拥有且可读的目录（chmod 700），且不含符号链接循环",
    }
    /// The root does not exist yet.
    DoctorRootNotCreated => {
        en: "{root} does not exist yet (it is created, private, on the first write)",
        zh: "{root} 尚不存在（首次写入时会以私有权限创建）",
    }
    /// The root is usable and so is the project directory.
    DoctorRootOk => { en: "{root} is usable", zh: "{root} 可用" }
    /// The root is usable, the project has no directory yet.
    DoctorRootOkNoProject => {
        en: "{root} is usable; this project has no directory yet",
        zh: "{root} 可用；此项目尚无目录",
    }
    /// Every mode is private.
    DoctorPrivateOk => {
        en: "the memory root, the project directory and its files are private (0700/0600)",
        zh: "记忆根目录、项目目录及其文件均为私有（0700/0600）",
    }
    /// Some modes let others in.
    DoctorPrivateLoose => { en: "readable by others: {paths}", zh: "他人可读：{paths}" }
    /// Fix for loose modes.
    DoctorPrivateFix => {
        en: "chmod -R go-rwx {root} (memories are injected into prompts; keep them yours)",
        zh: "chmod -R go-rwx {root}（记忆会被注入提示词，请只让自己可读）",
    }
    /// Identity from git's files.
    DoctorDerivedGitNative => {
        en: "from the repository's first usable remote (origin first), read from git's files",
        zh: "取自仓库第一个可用的 remote（优先 origin），从 git 的文件中读取",
    }
    /// Identity by running git: `{reason}`.
    DoctorDerivedGitRun => {
        en: "from the repository's first usable remote, by running git ({reason})",
        zh: "取自仓库第一个可用的 remote，通过运行 git 得到（{reason}）",
    }
    /// Identity by running git, no reason.
    DoctorDerivedGitRunPlain => {
        en: "from the repository's first usable remote, by running git",
        zh: "取自仓库第一个可用的 remote，通过运行 git 得到",
    }
    /// Local identity at the cwd.
    DoctorDerivedCwd => {
        en: "the working directory (outside a git work tree, or a repository root without a usable remote)",
        zh: "工作目录（不在 git 工作树内，或仓库根目录没有可用的 remote）",
    }
    /// Local identity at the repository root.
    DoctorDerivedRoot => {
        en: "the repository root (no usable remote)",
        zh: "仓库根目录（没有可用的 remote）",
    }
    /// A local identity for which git was run: `{what}`, `{reason}`.
    DoctorDerivedViaGit => { en: "{what}; git was run ({reason})", zh: "{what}；运行了 git（{reason}）" }
    /// The identity line: `{kind}`, `{key}`, `{dir}`, `{how}`.
    DoctorIdentity => {
        en: "{kind} key {key} → {dir}; derived {how}",
        zh: "{kind} 键 {key} → {dir}；来源：{how}",
    }
    /// `MEMORY.md` cannot be read.
    DoctorIndexUnreadable => { en: "{path} cannot be read: {error}", zh: "无法读取 {path}：{error}" }
    /// No `MEMORY.md`.
    DoctorIndexMissing => {
        en: "no MEMORY.md yet (an empty index)",
        zh: "尚无 MEMORY.md（索引为空）",
    }
    /// How `MEMORY.md` parsed.
    DoctorIndexParsed => {
        en: "MEMORY.md: {entries} entry lines, {unrecognized} other lines (titles, groups, comments)",
        zh: "MEMORY.md：{entries} 行条目，{unrecognized} 行其他内容（标题、分组、注释）",
    }
    /// `MEMORY.md` is not UTF-8.
    DoctorIndexNotUtf8 => {
        en: "MEMORY.md is not valid UTF-8 (from byte {byte}); writes refuse to rewrite it",
        zh: "MEMORY.md 不是有效的 UTF-8（从第 {byte} 字节起）；写入时拒绝改写它",
    }
    /// Fix: rebuild the index.
    DoctorIndexRebuildFix => {
        en: "pimem rebuild-index (keeps a hand-written header; the old index goes to .backups/)",
        zh: "pimem rebuild-index（保留手写的开头部分；旧索引存入 .backups/）",
    }
    /// Index and files agree.
    DoctorAgreementOk => {
        en: "MEMORY.md and the {entries} entry files agree",
        zh: "MEMORY.md 与 {entries} 个条目文件一致",
    }
    /// Entries missing from the index.
    DoctorAgreementUnlisted => {
        en: "entries missing from MEMORY.md (never injected): {names}",
        zh: "MEMORY.md 中缺少的条目（永远不会被注入）：{names}",
    }
    /// Lines without a file.
    DoctorAgreementDangling => {
        en: "lines pointing at missing files: {names}",
        zh: "指向不存在文件的行：{names}",
    }
    /// Markdown files that are not entries.
    DoctorAgreementNotEntries => {
        en: "*.md files that are not entries (invisible): {names}",
        zh: "不是条目的 *.md 文件（不可见）：{names}",
    }
    /// Separator between the parts of a list of findings.
    DoctorJoin => { en: "; ", zh: "；" }
    /// Write capacity over the limit.
    DoctorCapacityOver => {
        en: "MEMORY.md is over its limit: {lines}/{max_lines} lines, {bytes}/{max_bytes} bytes (lines past it are dropped on load)",
        zh: "MEMORY.md 超出上限：{lines}/{max_lines} 行，{bytes}/{max_bytes} 字节（超出部分在加载时被丢弃）",
    }
    /// Write capacity at or above 90 %.
    DoctorCapacityNear => {
        en: "MEMORY.md is at 90 % or more of its limit: {lines}/{max_lines} lines, {bytes}/{max_bytes} bytes",
        zh: "MEMORY.md 已达上限的 90% 或以上：{lines}/{max_lines} 行，{bytes}/{max_bytes} 字节",
    }
    /// Write capacity fine.
    DoctorCapacityOk => {
        en: "MEMORY.md: {lines}/{max_lines} lines, {bytes}/{max_bytes} bytes",
        zh: "MEMORY.md：{lines}/{max_lines} 行，{bytes}/{max_bytes} 字节",
    }
    /// Fix for capacity.
    DoctorCapacityFix => {
        en: "run /dream, or merge and drop stale entries (one short line per entry)",
        zh: "运行 /dream，或合并并删除过时的条目（每个条目一行短文字）",
    }
    /// The window is full and cut.
    DoctorWindowFull => {
        en: "the injected window is full ({lines}/{max_lines} lines, {bytes}/{max_bytes} bytes) and older lines are cut",
        zh: "注入窗口已满（{lines}/{max_lines} 行，{bytes}/{max_bytes} 字节），较早的行被截去",
    }
    /// Entries outside the window.
    DoctorWindowOutside => {
        en: "{count} entries fall outside the injected window ({lines}/{max_lines} lines, {bytes}/{max_bytes} bytes) and no longer reach the prompt: {names}",
        zh: "{count} 个条目落在注入窗口之外（{lines}/{max_lines} 行，{bytes}/{max_bytes} 字节），不再进入提示词：{names}",
    }
    /// The window at or above 90 %.
    DoctorWindowNear => {
        en: "the injected window is at 90 % or more: {lines}/{max_lines} lines, {bytes}/{max_bytes} bytes; the next entries push the oldest out",
        zh: "注入窗口已达 90% 或以上：{lines}/{max_lines} 行，{bytes}/{max_bytes} 字节；新条目会把最旧的挤出去",
    }
    /// The window fine.
    DoctorWindowOk => {
        en: "every index line is injected: {lines}/{max_lines} lines, {bytes}/{max_bytes} bytes",
        zh: "所有索引行都已注入：{lines}/{max_lines} 行，{bytes}/{max_bytes} 字节",
    }
    /// Fix for the window.
    DoctorWindowFix => {
        en: "run /dream to consolidate, or raise memIndexInjectMaxLines / memIndexInjectMaxBytes in memory.json",
        zh: "运行 /dream 进行整理，或在 memory.json 中调高 memIndexInjectMaxLines / memIndexInjectMaxBytes",
    }
    /// No lock.
    DoctorLockFree => { en: "free", zh: "空闲" }
    /// A live holder on this host.
    DoctorLockLive => {
        en: "held by {holder}, which is running: a write is in progress",
        zh: "由正在运行的 {holder} 持有：有写入正在进行",
    }
    /// A dead holder on this host.
    DoctorLockDead => {
        en: "left behind by {holder}, which is not running; the next write reclaims it (lock.reclaimDead)",
        zh: "由已不在运行的 {holder} 遗留；下一次写入会回收它（lock.reclaimDead）",
    }
    /// A holder on another host.
    DoctorLockOtherHost => {
        en: "held by {holder} on another host: its liveness cannot be checked from here",
        zh: "由另一台主机上的 {holder} 持有：无法在此检查它是否仍在运行",
    }
    /// An empty lock record.
    DoctorLockEmpty => {
        en: ".lock is empty (0 bytes): being written, or left by a crash",
        zh: ".lock 为空（0 字节）：正在写入，或是崩溃后遗留",
    }
    /// An unreadable lock record.
    DoctorLockUnreadable => {
        en: ".lock holds an unreadable record: every write fails until it is removed",
        zh: ".lock 中的记录无法读取：在删除它之前所有写入都会失败",
    }
    /// Fix for a lock.
    DoctorLockUnlockFix => {
        en: "if no memory operation is running: /memory unlock (or pimem unlock)",
        zh: "如果没有记忆操作在运行：/memory unlock（或 pimem unlock）",
    }
    /// No model configured.
    DoctorModelsNone => {
        en: "no model configured: dream is off, surfacing is lexical",
        zh: "未配置模型：整理已关闭，召回使用词法匹配",
    }
    /// Every model usable.
    DoctorModelsOk => { en: "resolvable by pi: {models}", zh: "pi 可解析：{models}" }
    /// Unusable models.
    DoctorModelsBad => {
        en: "not resolvable by pi (unknown id or missing credentials): {models}",
        zh: "pi 无法解析（未知 id 或缺少凭据）：{models}",
    }
    /// Fix for models.
    DoctorModelsFix => {
        en: "set the model as provider/model-id that pi lists (pi --list-models), with its credentials",
        zh: "按 pi 列出的 provider/model-id 设置模型（pi --list-models），并配置其凭据",
    }
    /// The CLI cannot ask pi.
    DoctorModelsCli => {
        en: "only pi can tell which models are usable: run /memory doctor in pi",
        zh: "只有 pi 能判断哪些模型可用：请在 pi 中运行 /memory doctor",
    }
    /// The CLI has no extension to compare with.
    DoctorProtocolCli => {
        en: "the pi extension is not running here: run /memory doctor in pi",
        zh: "此处没有运行 pi 扩展：请在 pi 中运行 /memory doctor",
    }
    /// Protocols differ.
    DoctorProtocolMismatch => {
        en: "the extension {ext_version} speaks protocol {ext}, the binary {bin_version} speaks {bin}",
        zh: "扩展 {ext_version} 使用协议 {ext}，二进制 {bin_version} 使用协议 {bin}",
    }
    /// Versions differ.
    DoctorVersionMismatch => {
        en: "protocol {protocol} on both sides, but the extension is {ext_version} and the binary {bin_version}",
        zh: "两侧都使用协议 {protocol}，但扩展版本为 {ext_version}，二进制版本为 {bin_version}",
    }
    /// Fix for protocol and versions.
    DoctorProtocolFix => {
        en: "rebuild and reinstall both from one checkout: cargo xtask install",
        zh: "从同一份代码重新构建并安装两者：cargo xtask install",
    }
    /// Protocols agree.
    DoctorProtocolOk => {
        en: "extension and binary {version} speak protocol {protocol}",
        zh: "扩展与二进制 {version} 均使用协议 {protocol}",
    }
    /// A pre-2.5 nested directory.
    DoctorLegacyNested => {
        en: "pre-2.5 nested Windows layout at {path} (no longer read)",
        zh: "{path} 处为 2.5 之前的 Windows 嵌套布局（已不再读取）",
    }
    /// The repository's local/ directory has memories.
    DoctorOrphanLocal => {
        en: "{path} holds memories from before this repository had a usable remote",
        zh: "{path} 中有此仓库拥有可用 remote 之前的记忆",
    }
    /// Another git/ directory of the same repository name.
    DoctorOrphanGit => {
        en: "{path} has the same repository name (a renamed remote or owner?)",
        zh: "{path} 的仓库名称相同（remote 或所有者改名了？）",
    }
    /// Nothing found.
    DoctorLayoutOk => {
        en: "no legacy layout or orphaned directory of this project",
        zh: "此项目没有旧版布局或孤立目录",
    }
    /// Found something.
    DoctorLayoutFound => {
        en: "not in use, never migrated automatically: {found}",
        zh: "未被使用，也不会自动迁移：{found}",
    }
    /// Fix for the layout.
    DoctorLayoutFix => {
        en: "move the entries you still want into {current} (then pimem rebuild-index), or delete the old directory",
        zh: "把仍需要的条目移到 {current}（然后运行 pimem rebuild-index），或删除旧目录",
    }
    /// No name is in two scopes (issue 16).
    DoctorScopesDistinct => {
        en: "no memory is in more than one scope ({scopes})",
        zh: "没有记忆同时存在于多个范围（{scopes}）",
    }
    /// Names in several scopes.
    DoctorScopeDuplicates => {
        en: "in more than one scope (an interrupted promote, or saved twice): {list}",
        zh: "存在于多个范围（提升被中断，或保存了两次）：{list}",
    }
    /// Fix for the duplicates.
    DoctorScopeDuplicatesFix => {
        en: "finish a move with `pimem promote <name> --to <scope>` (identical copies), or remove the copy you do not want with `pimem remove --scope <scope> <name>`",
        zh: "用 `pimem promote <name> --to <scope>` 完成移动（副本相同时），或用 `pimem remove --scope <scope> <name>` 删除不需要的副本",
    }
    /// The scopes could not be read.
    DoctorScopesUnreadable => {
        en: "cannot read every scope: {error}",
        zh: "无法读取所有范围：{error}",
    }
    /// No snapshots.
    DoctorSnapshotsNone => { en: "no snapshots yet", zh: "尚无快照" }
    /// Snapshot count and size.
    DoctorSnapshots => {
        en: "{count} snapshots (lock.snapshotKeep {keep}){migrate}, {kib} KiB",
        zh: "{count} 个快照（lock.snapshotKeep {keep}）{migrate}，{kib} KiB",
    }
    /// The never-pruned migration snapshots.
    DoctorSnapshotsMigrate => {
        en: " and {count} migrate-* (never pruned)",
        zh: "，另有 {count} 个 migrate-*（从不清理）",
    }
    /// Fix for too many snapshots.
    DoctorSnapshotsFix => {
        en: "the next write prunes down to lock.snapshotKeep; remove old ones from .backups/ by hand if needed",
        zh: "下一次写入会清理到 lock.snapshotKeep 个；如有需要可手动从 .backups/ 删除旧快照",
    }

    // ---- The run log's panel and `/experience` (PX-10, PX-11; memory-runlog's `texts::Catalog`) ----
    /// memory-runlog `Catalog::panel_title`.
    PxPanelTitle => {
        en: "Experience — recorded runs and what was learned",
        zh: "经验 — 已记录的运行与学到的内容",
    }
    /// memory-runlog `Catalog::panel_keys`.
    PxPanelKeys => {
        en: "R refresh · L browse runs · S ask the agent to tidy · D diagnostics · Esc close",
        zh: "R 刷新 · L 浏览运行 · S 请智能体整理 · D 诊断 · Esc 关闭",
    }
    /// memory-runlog `Catalog::panel_browse_keys`.
    PxPanelBrowseKeys => {
        en: "↑/↓ choose · Enter show · Esc back",
        zh: "↑/↓ 选择 · Enter 查看 · Esc 返回",
    }
    /// memory-runlog `Catalog::panel_back_keys`.
    PxPanelBackKeys => {
        en: "Esc back",
        zh: "Esc 返回",
    }
    /// memory-runlog `Catalog::panel_counts`.
    PxPanelCounts => {
        en: "{runs} runs · {running} running · {recovery} need recovery · {pending} summaries pending · {experiences} experiences",
        zh: "{runs} 次运行 · {running} 次进行中 · {recovery} 次需要恢复 · {pending} 个摘要待生成 · {experiences} 条经验",
    }
    /// memory-runlog `Catalog::panel_latest`.
    PxPanelLatest => {
        en: "Latest runs",
        zh: "最近的运行",
    }
    /// memory-runlog `Catalog::panel_experiences`.
    PxPanelExperiences => {
        en: "Experiences",
        zh: "经验",
    }
    /// memory-runlog `Catalog::runs_header`.
    PxRunsHeader => {
        en: "Runs, newest first ({shown} of {total}):",
        zh: "运行，最新的在前（{total} 次中的 {shown} 次）：",
    }
    /// memory-runlog `Catalog::no_runs`.
    PxNoRuns => {
        en: "No runs recorded in this project yet. Recording starts with the next prompt.",
        zh: "本项目尚未记录任何运行。从下一条提示开始记录。",
    }
    /// memory-runlog `Catalog::no_experiences`.
    PxNoExperiences => {
        en: "No experiences yet. /experience prepare hands the audited runs to the agent to merge.",
        zh: "还没有经验。/experience prepare 会把审核过的运行交给智能体合并。",
    }
    /// memory-runlog `Catalog::not_confirmed`.
    PxNotConfirmed => {
        en: "not confirmed",
        zh: "未确认",
    }
    /// memory-runlog `Catalog::label_uuid`.
    PxLabelUuid => {
        en: "UUID",
        zh: "UUID",
    }
    /// memory-runlog `Catalog::label_session`.
    PxLabelSession => {
        en: "Session",
        zh: "会话",
    }
    /// memory-runlog `Catalog::in_memory`.
    PxInMemory => {
        en: "in memory (no session file)",
        zh: "仅在内存中（没有会话文件）",
    }
    /// memory-runlog `Catalog::lineage_unresolved`.
    PxLineageUnresolved => {
        en: "forked; lineage unresolved",
        zh: "已分叉；来源未解析",
    }
    /// memory-runlog `Catalog::label_started`.
    PxLabelStarted => {
        en: "Started",
        zh: "开始",
    }
    /// memory-runlog `Catalog::label_ended`.
    PxLabelEnded => {
        en: "Ended",
        zh: "结束",
    }
    /// memory-runlog `Catalog::label_model`.
    PxLabelModel => {
        en: "Model",
        zh: "模型",
    }
    /// memory-runlog `Catalog::label_stop`.
    PxLabelStop => {
        en: "Stop reason",
        zh: "停止原因",
    }
    /// memory-runlog `Catalog::label_error`.
    PxLabelError => {
        en: "Error",
        zh: "错误",
    }
    /// memory-runlog `Catalog::label_events`.
    PxLabelEvents => {
        en: "Events",
        zh: "事件",
    }
    /// memory-runlog `Catalog::label_experience`.
    PxLabelExperience => {
        en: "Experience",
        zh: "经验",
    }
    /// memory-runlog `Catalog::label_summary`.
    PxLabelSummary => {
        en: "Summary",
        zh: "摘要",
    }
    /// memory-runlog `Catalog::none`.
    PxNone => {
        en: "none",
        zh: "无",
    }
    /// memory-runlog `Catalog::summary_pending`.
    PxSummaryPending => {
        en: "pending",
        zh: "待生成",
    }
    /// memory-runlog `Catalog::summary_none`.
    PxSummaryNone => {
        en: "none (the run has not settled)",
        zh: "无（运行尚未结束）",
    }
    /// memory-runlog `Catalog::label_sources`.
    PxLabelSources => {
        en: "Sources",
        zh: "来源",
    }
    /// memory-runlog `Catalog::label_children`.
    PxLabelChildren => {
        en: "Children",
        zh: "子经验",
    }
    /// memory-runlog `Catalog::label_parent`.
    PxLabelParent => {
        en: "Parent",
        zh: "父经验",
    }
    /// memory-runlog `Catalog::label_range`.
    PxLabelRange => {
        en: "Time range",
        zh: "时间范围",
    }
    /// memory-runlog `Catalog::label_merged`.
    PxLabelMerged => {
        en: "Merged from",
        zh: "合并自",
    }
    /// memory-runlog `Catalog::label_remembered`.
    PxLabelRemembered => {
        en: "Memory",
        zh: "记忆",
    }
    /// memory-runlog `Catalog::range_text`.
    PxRangeText => {
        en: "{start} – {end} ({runs} runs)",
        zh: "{start} – {end}（{runs} 次运行）",
    }
    /// memory-runlog `Catalog::range_empty`.
    PxRangeEmpty => {
        en: "no runs yet",
        zh: "还没有运行",
    }
    /// memory-runlog `Catalog::search_usage`.
    PxSearchUsage => {
        en: "Usage: /experience search <words>",
        zh: "用法：/experience search <关键词>",
    }
    /// memory-runlog `Catalog::search_none`.
    PxSearchNone => {
        en: "No runs or experiences match \"{words}\".",
        zh: "没有与“{words}”匹配的运行或经验。",
    }
    /// memory-runlog `Catalog::raw_header`.
    PxRawHeader => {
        en: "{run}: {count} events, as recorded",
        zh: "{run}：{count} 个事件，按记录原样显示",
    }
    /// memory-runlog `Catalog::debug_header`.
    PxDebugHeader => {
        en: "Run log diagnostics",
        zh: "运行日志诊断",
    }
    /// memory-runlog `Catalog::no_log`.
    PxNoLog => {
        en: "No run log in this project yet.",
        zh: "本项目还没有运行日志。",
    }
    /// memory-runlog `Catalog::usage`.
    PxUsage => {
        en: "Usage: /experience [runs | show R01 | show E1 | raw R01 | search <words> | prepare | remember E1 | debug]",
        zh: "用法：/experience [runs | show R01 | show E1 | raw R01 | search <关键词> | prepare | remember E1 | debug]",
    }
    /// memory-runlog `Catalog::prepare_nothing`.
    PxPrepareNothing => {
        en: "Nothing to prepare: no summarized run is waiting to be merged.",
        zh: "没有需要准备的内容：没有等待合并的已摘要运行。",
    }
    /// memory-runlog `Catalog::prepare_header`.
    PxPrepareHeader => {
        en: "{count} summarized runs not yet in an experience:",
        zh: "{count} 次已摘要但尚未归入经验的运行：",
    }
    /// memory-runlog `Catalog::prepare_confirm_title`.
    PxPrepareConfirmTitle => {
        en: "Experience",
        zh: "经验",
    }
    /// memory-runlog `Catalog::prepare_confirm_body`.
    PxPrepareConfirmBody => {
        en: "Hand these {count} audited runs to the agent to merge into experiences?",
        zh: "把这 {count} 次审核过的运行交给智能体合并为经验吗？",
    }
    /// memory-runlog `Catalog::prepare_needs_ui`.
    PxPrepareNeedsUi => {
        en: "Handing runs to the agent needs a confirmation, which print and json modes cannot give. Run /experience prepare in pi's terminal UI or over --mode rpc.",
        zh: "把运行交给智能体需要确认，print 和 json 模式无法确认。请在 pi 的终端界面或 --mode rpc 中运行 /experience prepare。",
    }
    /// memory-runlog `Catalog::prepare_sent`.
    PxPrepareSent => {
        en: "Handed {count} runs to the agent.",
        zh: "已把 {count} 次运行交给智能体。",
    }
    /// memory-runlog `Catalog::disabled`.
    PxDisabled => {
        en: "Run recording is off (\"experience.enabled\": false in memory.json).",
        zh: "运行记录已关闭（memory.json 中 \"experience.enabled\": false）。",
    }
    /// memory-runlog `Catalog::remembered`.
    PxRemembered => {
        en: "{exp} is now a memory: {saved}",
        zh: "{exp} 已保存为记忆：{saved}",
    }

    // ---- `/memory list`, view, edit, delete, reload and the usage summary (PA-19..PA-32) ----
    /// The list's title.
    CurateListTitle => {
        en: "Memory files — {dir}",
        zh: "记忆文件 — {dir}",
    }
    /// An empty memory directory (PA-30).
    CurateListEmpty => {
        en: "No memory files yet.",
        zh: "还没有记忆文件。",
    }
    /// The index's line in the list.
    CurateIndexLabel => {
        en: "MEMORY.md · index · modified {modified} · {size}",
        zh: "MEMORY.md · 索引 · 修改于 {modified} · {size}",
    }
    /// An entry's line in the list.
    CurateEntryLabel => {
        en: "{name} · {entry_type} · modified {modified} · {size} · {file}",
        zh: "{name} · {entry_type} · 修改于 {modified} · {size} · {file}",
    }
    /// The read-only view's title.
    CurateViewTitle => {
        en: "{file} (read-only)",
        zh: "{file}（只读）",
    }
    /// The keys of the view of an entry.
    CurateViewKeys => {
        en: "e edit · d delete · ↑↓ scroll · Esc back to the list",
        zh: "e 编辑 · d 删除 · ↑↓ 滚动 · Esc 返回列表",
    }
    /// The keys of the view of the index.
    CurateViewKeysIndex => {
        en: "e edit · ↑↓ scroll · Esc back to the list",
        zh: "e 编辑 · ↑↓ 滚动 · Esc 返回列表",
    }
    /// The editor's title.
    CurateEditTitle => {
        en: "Edit {file} (saved only if nobody changed it meanwhile)",
        zh: "编辑 {file}（仅当期间无人修改时保存）",
    }
    /// A saved edit.
    CurateSaved => {
        en: "Saved {file}.",
        zh: "已保存 {file}。",
    }
    /// A saved edit or delete that changed the frozen index (PA-19).
    CurateSavedNeedsReload => {
        en: "Saved {file}. The memory index the model sees changes only after /memory reload, at the next turn.",
        zh: "已保存 {file}。模型看到的记忆索引要在执行 /memory reload 之后的下一轮才会更新。",
    }
    /// The editor was closed without a change.
    CurateUnchanged => {
        en: "No changes; nothing saved.",
        zh: "没有改动，未保存。",
    }
    /// An edit refused: `{err}` is the store's reason.
    CurateNotSaved => {
        en: "Not saved: {err}",
        zh: "未保存：{err}",
    }
    /// An edited entry that is no longer an entry file.
    CurateNotAnEntry => {
        en: "the text is not a memory entry: it must start with the --- frontmatter holding name, description, type (user, feedback, project or reference), created and modified",
        zh: "文本不是记忆条目：开头必须是 --- 包围的 frontmatter，包含 name、description、type（user、feedback、project 或 reference）、created 和 modified",
    }
    /// The delete confirmation's title.
    CurateDeleteTitle => {
        en: "Delete memory",
        zh: "删除记忆",
    }
    /// The delete confirmation's question (PA-32).
    CurateDeleteBody => {
        en: "Delete \"{name}\" ({file})? Its MEMORY.md line goes too. A snapshot is kept in .backups/; there is no undo in pi.",
        zh: "删除“{name}”（{file}）？MEMORY.md 中的对应行也会删除。快照保存在 .backups/ 中；pi 中无法撤销。",
    }
    /// A deleted memory.
    CurateDeleted => {
        en: "Deleted \"{name}\".",
        zh: "已删除“{name}”。",
    }
    /// A delete refused.
    CurateNotDeleted => {
        en: "Not deleted: {err}",
        zh: "未删除：{err}",
    }
    /// The index is never deleted (PA-32).
    CurateIndexNotDeletable => {
        en: "MEMORY.md cannot be deleted; edit it instead",
        zh: "MEMORY.md 不能删除，请改为编辑",
    }
    /// A file that is not in the list.
    CurateNoSuchFile => {
        en: "{file} is not a memory file of this project",
        zh: "{file} 不是本项目的记忆文件",
    }
    /// `/memory reload` (PA-20).
    CurateReloadScheduled => {
        en: "The memory index will be read again at the next turn.",
        zh: "记忆索引将在下一轮重新读取。",
    }
    /// `/memory`'s mark before `/memory reload` (PA-21).
    CurateMarkChanged => {
        en: "Index changed: run /memory reload to refresh it at the next turn",
        zh: "索引已更改：执行 /memory reload 以在下一轮刷新",
    }
    /// `/memory`'s mark after `/memory reload` (PA-21).
    CurateMarkRefresh => {
        en: "Index changed, refresh at the next turn",
        zh: "索引已更改，将在下一轮刷新",
    }
    /// The usage summary's first line.
    UsageHeader => {
        en: "Session usage:",
        zh: "本会话的记忆使用：",
    }
    /// The usage summary's first line while off or paused.
    UsageHeaderUnavailable => {
        en: "Session usage (currently unavailable: memory is off or paused):",
        zh: "本会话的记忆使用（当前不可用：记忆已关闭或暂停）：",
    }
    /// A save by the memory tool.
    UsageViaTool => {
        en: "tool",
        zh: "工具",
    }
    /// A save by an edit.
    UsageViaEdit => {
        en: "edit",
        zh: "编辑",
    }
    /// A delete.
    UsageViaDelete => {
        en: "delete",
        zh: "删除",
    }
    /// A save by extraction.
    UsageViaExtraction => {
        en: "extraction",
        zh: "提取",
    }
    /// A save by a dream.
    UsageViaDream => {
        en: "dream",
        zh: "整理",
    }
    /// One save in the summary.
    UsageSaveItem => {
        en: "{name} ({how}, turn {turn})",
        zh: "{name}（{how}，第 {turn} 轮）",
    }
    /// The saves line.
    UsageSaves => {
        en: "  Saves ({n}): {items}",
        zh: "  保存（{n}）：{items}",
    }
    /// No saves yet.
    UsageSavesNone => {
        en: "  Saves: none",
        zh: "  保存：无",
    }
    /// One surfaced memory or read file.
    UsageSeenItem => {
        en: "{name} ×{count} (last turn {last_turn})",
        zh: "{name} ×{count}（最近第 {last_turn} 轮）",
    }
    /// The surfaced line.
    UsageSurfaced => {
        en: "  Surfaced ({n}): {items}",
        zh: "  已召回（{n}）：{items}",
    }
    /// Nothing surfaced yet.
    UsageSurfacedNone => {
        en: "  Surfaced: none",
        zh: "  已召回：无",
    }
    /// The read line.
    UsageReads => {
        en: "  Read by the model ({n}): {items}",
        zh: "  模型读取（{n}）：{items}",
    }
    /// No entry file read yet.
    UsageReadsNone => {
        en: "  Read by the model: none",
        zh: "  模型读取：无",
    }
    /// Older records were dropped (PA-28).
    UsageDropped => {
        en: "  ({n} older records dropped)",
        zh: "  （已丢弃 {n} 条较早的记录）",
    }
    /// The headless listing's header.
    CurateListingHeader => {
        en: "Memory files in {dir} ({n}):",
        zh: "{dir} 中的记忆文件（{n}）：",
    }

    // ---- `pimem import`'s report ----
    /// The directory actually read: `{path}`.
    ImportFrom => { en: "pimem: importing from {path}", zh: "pimem：从 {path} 导入" }
    /// A dry run's add: `{name}` (quoted, with a trailing space, or empty), `{origin}`.
    ImportWouldAdd => { en: "would add  {name}<- {origin}", zh: "将添加    {name}<- {origin}" }
    /// An add with the file written.
    ImportAdded => {
        en: "added      {name}({file}) <- {origin}",
        zh: "已添加    {name}（{file}）<- {origin}",
    }
    /// An add without a file name.
    ImportAddedPlain => { en: "added      {name}<- {origin}", zh: "已添加    {name}<- {origin}" }
    /// Already there, same content.
    ImportUnchanged => { en: "unchanged  {name}<- {origin}", zh: "未变      {name}<- {origin}" }
    /// Already there, other content.
    ImportKept => {
        en: "kept       {name}<- {origin}: a memory with this name exists with other content; not overwritten",
        zh: "保留      {name}<- {origin}：已有同名但内容不同的记忆，未覆盖",
    }
    /// A secret: `{field}` and `{kind}` stay English (field names and error classes).
    ImportRefused => {
        en: "refused    {origin}: the {field} contains what looks like a {kind} at line {line}, column {column}; not imported",
        zh: "拒绝      {origin}：{field} 第 {line} 行第 {column} 列疑似包含 {kind}，未导入",
    }
    /// Not importable: `{reason}`.
    ImportSkipped => { en: "skipped    {origin}: {reason}", zh: "跳过      {origin}：{reason}" }
    /// The write failed: `{reason}`.
    ImportFailed => { en: "failed     {origin}: {reason}", zh: "失败      {origin}：{reason}" }
    /// A mapping note under an item.
    ImportNote => { en: "           note: {note}", zh: "           注：{note}" }
    /// One memory.
    ImportNounOne => { en: "memory", zh: "条记忆" }
    /// Several memories.
    ImportNounMany => { en: "memories", zh: "条记忆" }
    /// The summary of an import.
    ImportSummary => {
        en: "Imported {added} {noun}, {unchanged} unchanged, {kept} kept, {refused} refused, {skipped} skipped, {failed} failed.",
        zh: "已导入 {added} {noun}，{unchanged} 条未变，{kept} 条保留，{refused} 条拒绝，{skipped} 条跳过，{failed} 条失败。",
    }
    /// The summary of a dry run.
    ImportSummaryDry => {
        en: "Would import {added} {noun}, {unchanged} unchanged, {kept} kept, {refused} refused, {skipped} skipped, {failed} failed (dry run: nothing written).",
        zh: "将导入 {added} {noun}，{unchanged} 条未变，{kept} 条保留，{refused} 条拒绝，{skipped} 条跳过，{failed} 条失败（试运行：未写入任何内容）。",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether `text` has a CJK ideograph.
    fn has_chinese(text: &str) -> bool {
        text.chars().any(|c| ('\u{4e00}'..='\u{9fff}').contains(&c))
    }

    /// Keys whose text is the same in both languages on purpose.
    const SAME_IN_BOTH: &[Text] = &[Text::PxLabelUuid];

    #[test]
    fn every_key_has_both_languages_with_the_same_placeholders() {
        let mut problems = Vec::new();
        for &key in Text::ALL {
            let en = key.template(Language::En);
            let zh = key.template(Language::ZhCn);
            if en.trim().is_empty() {
                problems.push(format!("{}: the English text is missing", key.name()));
            }
            if zh.trim().is_empty() {
                problems.push(format!("{}: the Chinese text is missing", key.name()));
            }
            if placeholders(en) != placeholders(zh) {
                problems.push(format!(
                    "{}: placeholders differ: en {:?}, zh {:?}",
                    key.name(),
                    placeholders(en),
                    placeholders(zh)
                ));
            }
            if !SAME_IN_BOTH.contains(&key) && !has_chinese(zh) && en == zh {
                problems.push(format!(
                    "{}: the Chinese text is not translated",
                    key.name()
                ));
            }
        }
        assert!(problems.is_empty(), "{}", problems.join("\n"));
    }

    #[test]
    fn every_filled_text_leaves_no_placeholder() {
        for &key in Text::ALL {
            for lang in [Language::En, Language::ZhCn] {
                let names = placeholders(key.template(lang));
                let args: Vec<(&str, &dyn Display)> =
                    names.iter().map(|n| (*n, &"X" as &dyn Display)).collect();
                let text = t(lang, key, &args);
                assert!(
                    placeholders(&text).is_empty(),
                    "{} ({lang:?}): {text}",
                    key.name()
                );
            }
        }
    }

    #[test]
    fn fill_keeps_literal_braces_and_unknown_placeholders() {
        assert_eq!(
            fill("write {\"version\": 1} to {path}", &[("path", &"/a")]),
            "write {\"version\": 1} to /a"
        );
        assert_eq!(fill("{a}{b}{", &[("a", &1)]), "1{b}{");
        assert_eq!(placeholders("{b} {a} {b} {\"x\"}"), vec!["a", "b"]);
    }

    #[test]
    fn english_templates_are_the_texts_they_replaced() {
        assert_eq!(
            t(
                Language::En,
                Text::DoctorSummary,
                &[
                    ("ok", &1),
                    ("warning", &2),
                    ("failure", &3),
                    ("unchecked", &4)
                ]
            ),
            "Memory doctor: 1 ok, 2 warning, 3 failure, 4 unchecked"
        );
        assert_eq!(
            t(
                Language::ZhCn,
                Text::DoctorSummary,
                &[
                    ("ok", &1),
                    ("warning", &2),
                    ("failure", &3),
                    ("unchecked", &4)
                ]
            ),
            "记忆诊断：1 项正常，2 项警告，3 项失败，4 项未检查"
        );
    }
}
