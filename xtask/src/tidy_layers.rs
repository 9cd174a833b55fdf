//! Tidy checks of the architecture's invariants (ARCHITECTURE.md), run as ordinary tests:
//!
//! * [`crates_depend_only_on_the_layers_below`]: each workspace crate's `[dependencies]`
//!   name only the workspace crates its layer may use (the graph in ARCHITECTURE.md);
//! * [`pure_crates_do_no_io`]: memory-js, memory-index and memory-rank never touch the file
//!   system, the environment, processes, the network or the clock (outside their tests);
//! * [`pi_formats_stay_in_the_pi_module`]: in memory-agent, only `src/pi/` knows pi's JSON
//!   shapes (`AgentMessage` roles, session-file entry types);
//! * [`the_extension_is_typed`]: the TypeScript shim has no `any`;
//! * [`async_stays_in_memory_pi`]: no library crate depends on tokio or the MCP SDK (only
//!   the `pimem` crate links them, behind its `mcp` feature).
//!
//! (Durable writes, renames, kernel locks and environment reads outside their owners are
//! refused by clippy's `disallowed-methods`, configured in clippy.toml.)

use std::fs;
use std::path::Path;

use anyhow::{Context, Result};

fn root() -> std::path::PathBuf {
    super::project_root()
}

/// The workspace crates each crate may depend on (normal dependencies).
const LAYERS: &[(&str, &[&str])] = &[
    ("memory-js", &[]),
    ("memory-rank", &[]),
    ("memory-keys", &["memory-js"]),
    ("memory-index", &["memory-js"]),
    ("memory-lock", &["memory-js"]),
    (
        "memory-core",
        &["memory-js", "memory-keys", "memory-index", "memory-lock"],
    ),
    (
        "memory-agent",
        &["memory-js", "memory-index", "memory-rank", "memory-core"],
    ),
    (
        "memory-runlog",
        &["memory-lock", "memory-core", "memory-agent"],
    ),
    (
        "memory-pi",
        &[
            "memory-keys",
            "memory-index",
            "memory-core",
            "memory-agent",
            "memory-runlog",
        ],
    ),
];

/// The workspace crates named in the `[dependencies]` (and target-specific dependencies)
/// tables of a manifest; dev-dependencies are not layers.
fn workspace_dependencies(manifest: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut in_deps = false;
    for line in manifest.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            in_deps = line == "[dependencies]"
                || (line.starts_with("[target.") && line.ends_with(".dependencies]"));
            continue;
        }
        if !in_deps {
            continue;
        }
        let name = line
            .split(['=', '.', ' '])
            .next()
            .unwrap_or("")
            .trim_matches('"');
        if (name.starts_with("memory-") || name == "testkit") && !out.iter().any(|n| n == name) {
            out.push(name.to_owned());
        }
    }
    out
}

#[test]
fn crates_depend_only_on_the_layers_below() -> Result<()> {
    let root = root();
    let mut wrong = Vec::new();
    for (krate, allowed) in LAYERS {
        let path = root.join(krate).join("Cargo.toml");
        let manifest = fs::read_to_string(&path).with_context(|| path.display().to_string())?;
        for dep in workspace_dependencies(&manifest) {
            if !allowed.contains(&dep.as_str()) {
                wrong.push(format!("{krate} depends on {dep}"));
            }
        }
    }
    // Every workspace library crate is in the table.
    for entry in fs::read_dir(&root)? {
        let name = entry?.file_name().to_string_lossy().into_owned();
        if name.starts_with("memory-") && !LAYERS.iter().any(|(k, _)| *k == name) {
            wrong.push(format!(
                "{name} is not in the layer table of tidy_layers.rs"
            ));
        }
    }
    assert!(
        wrong.is_empty(),
        "dependencies against the layers of ARCHITECTURE.md:\n{}",
        wrong.join("\n")
    );
    Ok(())
}

#[test]
fn async_stays_in_memory_pi() -> Result<()> {
    const ASYNC: &[&str] = &[
        "tokio",
        "rmcp",
        "hyper",
        "hyper-util",
        "futures",
        "async-std",
    ];
    let root = root();
    let mut wrong = Vec::new();
    for (krate, _) in LAYERS.iter().filter(|(k, _)| *k != "memory-pi") {
        let path = root.join(krate).join("Cargo.toml");
        let manifest = fs::read_to_string(&path).with_context(|| path.display().to_string())?;
        let mut in_deps = false;
        for line in manifest.lines().map(str::trim) {
            if line.starts_with('[') {
                in_deps = line.ends_with("dependencies]");
                continue;
            }
            let name = line
                .split(['=', '.', ' '])
                .next()
                .unwrap_or("")
                .trim_matches('"');
            if in_deps && ASYNC.contains(&name) {
                wrong.push(format!("{krate} depends on {name}"));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "async runtimes belong to memory-pi's `mcp` feature only:\n{}",
        wrong.join("\n")
    );
    Ok(())
}

/// The text of a Rust file before its `#[cfg(test)]` module, where tests may do I/O.
fn non_test_part(text: &str) -> &str {
    match text.find("#[cfg(test)]") {
        Some(i) => &text[..i],
        None => text,
    }
}

fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) -> Result<()> {
    for entry in fs::read_dir(dir).with_context(|| dir.display().to_string())? {
        let path = entry?.path();
        if path.is_dir() {
            rust_files(&path, out)?;
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
    Ok(())
}

#[test]
fn pure_crates_do_no_io() -> Result<()> {
    const FORBIDDEN: &[&str] = &[
        "std::fs",
        "std::env",
        "std::process",
        "std::net",
        "std::io::stdin",
        "Instant::now",
        "SystemTime",
        "Timestamp::now",
        "rustix::",
    ];
    let root = root();
    let mut found = Vec::new();
    for krate in ["memory-js", "memory-index", "memory-rank"] {
        let mut files = Vec::new();
        rust_files(&root.join(krate).join("src"), &mut files)?;
        for path in files {
            if path.ends_with("tests.rs") {
                continue; // a test module file
            }
            let text = fs::read_to_string(&path)?;
            for (n, line) in non_test_part(&text).lines().enumerate() {
                if line.trim_start().starts_with("//") {
                    continue;
                }
                for f in FORBIDDEN.iter().filter(|f| line.contains(**f)) {
                    found.push(format!("{}:{}: {f}", path.display(), n + 1));
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "I/O in a pure crate:\n{}",
        found.join("\n")
    );
    Ok(())
}

#[test]
fn pi_formats_stay_in_the_pi_module() -> Result<()> {
    // Spellings only pi's JSON has: message roles of `AgentMessage`, session entry types.
    const PI_SHAPES: &[&str] = &[
        "\"toolResult\"",
        "\"toolCall\"",
        "\"bashExecution\"",
        "\"compactionSummary\"",
        "\"session_info\"",
        "\"customType\"",
    ];
    let src = root().join("memory-agent").join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files)?;
    let mut found = Vec::new();
    for path in files {
        if path.starts_with(src.join("pi")) {
            continue;
        }
        let text = fs::read_to_string(&path)?;
        for (n, line) in text.lines().enumerate() {
            for s in PI_SHAPES.iter().filter(|s| line.contains(**s)) {
                found.push(format!("{}:{}: {s}", path.display(), n + 1));
            }
        }
    }
    assert!(
        found.is_empty(),
        "pi's formats outside memory-agent/src/pi:\n{}",
        found.join("\n")
    );
    Ok(())
}

#[test]
fn the_extension_is_typed() -> Result<()> {
    let dir = root().join("memory-pi").join("extension");
    let mut found = Vec::new();
    for entry in fs::read_dir(&dir)? {
        let path = entry?.path();
        if path.extension().is_none_or(|e| e != "ts") {
            continue;
        }
        let text = fs::read_to_string(&path)?;
        for (n, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or("");
            if code.contains(": any") || code.contains("= any") || code.contains("<any>") {
                found.push(format!("{}:{}: {}", path.display(), n + 1, line.trim()));
            }
        }
    }
    assert!(
        found.is_empty(),
        "untyped TypeScript in the extension:\n{}",
        found.join("\n")
    );
    Ok(())
}

#[test]
fn the_dependency_scanner_reads_tables() {
    let manifest = "[package]\nname = \"x\"\n[dependencies]\nmemory-js.workspace = true\nmemory-core = { workspace = true }\nserde.workspace = true\n[dev-dependencies]\ntestkit.workspace = true\n[target.'cfg(unix)'.dependencies]\nmemory-lock.workspace = true\n";
    assert_eq!(
        workspace_dependencies(manifest),
        ["memory-js", "memory-core", "memory-lock"]
    );
}
