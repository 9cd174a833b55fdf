//! Project automation, run as `cargo xtask <task>`.
//!
//! * `ci`: format check, clippy with warnings denied, every test (the tidy checks included),
//!   `cargo doc` of the library crates with rustdoc warnings denied, the `examples/agent`
//!   program against its scripted model, `cargo package` of the library crates (verified
//!   against each other), then `e2e`, then `e2e --installed --quick` (this machine's platform
//!   package around the debug binary `e2e` built). This is the README's test command and what `.ci/run` executes on a clean
//!   clone.
//!
//! * `e2e`: builds `pimem`, installs the pinned pi host (Node 22 and pi 1.6.0 from the npm
//!   registry, cached in `~/.cache/pimem-e2e`; `PIMEM_E2E_CACHE` moves it) with the pinned
//!   TypeScript compiler and Node types, type-checks the pi extension (`tsc --noEmit`), and
//!   compares memory-js' collation with Node's `localeCompare`, runs the headless pi
//!   suite in `memory-pi/e2e/` against a scripted local model, then `pimem mcp` under the
//!   official MCP TypeScript SDK (`memory-pi/e2e/mcp.mjs`).
//!
//! * `e2e --installed [--dist DIR | --quick]`: the npm packages as a user gets them: packs
//!   them (`dist` for this machine's platform, `dist --quick` with `--quick`, or takes `DIR`), runs `pi install npm:@pimem/pi` against a
//!   local registry in a temporary HOME with no cargo and no `PIMEM_BIN`, checks that only this
//!   platform's binary package landed, and runs the whole pi suite against that copy
//!   (`installed.rs`).
//!
//! * `dist [--out DIR] [--targets KEY,...|host|linux] [--check-arm64] [--quick]`: the release
//!   artefacts in a fresh directory: `pimem` for every Linux platform (cross-compiled with
//!   cargo-zigbuild), checked natively or under qemu, one npm package per platform plus the pi
//!   package, packed and verified against their whitelists, the man page, completion scripts
//!   and `manifest.json` with every tarball's and file's SHA-256 (`dist.rs`).
//!
//! * `install`: builds the release `pimem` (with the `mcp` feature), puts it next to the pi extension
//!   (`memory-pi/extension/bin/pimem`) and in `$CARGO_HOME/bin` (so `pimem` is on
//!   `PATH`), then registers the extension with `pi install <path>` when `pi` is on `PATH`
//!   (otherwise prints the command to run).
//!
//! * `bench [group...]`: builds `memory-bench` in release mode and runs the named groups (all
//!   by default), printing Markdown for BENCHMARKS.md. The `pi` group drives real pi instead
//!   (startup with and without the extension, per-turn round trip; `memory-pi/e2e/bench.mjs`).
//!
//! Tasks are plain Rust so they run the same on every machine with only cargo installed.
#![forbid(unsafe_code)]
// A development tool: plain file writes and environment reads are its job.
#![allow(clippy::disallowed_methods)]

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{Context, Result, bail};

mod dist;
mod installed;
#[cfg(test)]
mod tidy;
#[cfg(test)]
mod tidy_layers;

/// The library crates: documented with warnings denied and packaged by `ci`.
const LIBRARY_CRATES: &[&str] = &[
    "memory-js",
    "memory-keys",
    "memory-index",
    "memory-rank",
    "memory-lock",
    "memory-core",
    "memory-agent",
];

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let root = project_root();
    match args.first().map(String::as_str) {
        Some("ci") => ci(&root),
        Some("bench") => bench(&root, &args[1..]),
        Some("e2e") if args.len() > 1 => installed::e2e_installed(&root, &args[1..]),
        Some("e2e") => e2e(&root),
        Some("install") => install(&root),
        Some("dist") => dist::dist(&root, &dist::parse_options(&root, &args[1..])?).map(|_| ()),
        Some(other) => bail!("unknown task {other:?}; available: ci, bench, e2e, install, dist"),
        None => bail!("usage: cargo xtask <task>; available: ci, bench, e2e, install, dist"),
    }
}

/// The workspace root (the parent of this crate's directory).
fn project_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."))
}

fn ci(root: &Path) -> Result<()> {
    run(root, "cargo", &["fmt", "--all", "--", "--check"])?;
    run(
        root,
        "cargo",
        &[
            "clippy",
            "--workspace",
            "--all-targets",
            "--locked",
            "--",
            "-D",
            "warnings",
        ],
    )?;
    run(root, "cargo", &["test", "--workspace", "--locked"])?;
    // pimem without the `mcp` feature (no tokio) still builds.
    run(
        root,
        "cargo",
        &[
            "check",
            "--locked",
            "-p",
            "memory-pi",
            "--no-default-features",
        ],
    )?;
    docs(root)?;
    // The embedding example runs against its scripted model and checks what memory did.
    run(
        root,
        "cargo",
        &["run", "--locked", "--quiet", "-p", "example-agent"],
    )?;
    package(root)?;
    e2e(root)?;
    // The npm packages as users install them, this machine's platform only, packed around the
    // debug binary `e2e` just built (`--quick`: no release build, no zig). The release
    // binaries are `cargo xtask dist`'s (by hand) and the release workflow's (dist.rs).
    installed::e2e_installed(root, &["--installed".into(), "--quick".into()])?;
    eprintln!("xtask ci: all checks passed");
    Ok(())
}

/// `cargo doc` of every library crate with rustdoc warnings denied (broken links included).
fn docs(root: &Path) -> Result<()> {
    let mut args = vec![
        "doc",
        "--no-deps",
        "--locked",
        "--features",
        "memory-agent/http",
    ];
    for c in LIBRARY_CRATES {
        args.extend(["-p", c]);
    }
    eprintln!("$ RUSTDOCFLAGS=-D warnings cargo {}", args.join(" "));
    let status = Command::new("cargo")
        .args(&args)
        .env("RUSTDOCFLAGS", "-D warnings")
        .current_dir(root)
        .status()
        .context("could not start cargo doc")?;
    if !status.success() {
        bail!("cargo doc failed with {status}");
    }
    Ok(())
}

/// `cargo package` of every library crate, verified against each other (cargo builds each
/// tarball with its siblings from a temporary local registry): what publishing would upload
/// builds on its own.
fn package(root: &Path) -> Result<()> {
    forget_unpacked_local_crates()?;
    let mut args = vec!["package", "--locked", "--allow-dirty"];
    for c in LIBRARY_CRATES {
        args.extend(["-p", c]);
    }
    run(root, "cargo", &args)
}

/// Cargo unpacks the local registry's tarballs under `$CARGO_HOME/registry/src/<registry>/`
/// once and never again for the same version: after a change, verification would build the
/// *previous* package of a sibling. Removes those unpacked copies of our crates (never the
/// crates.io ones: their registry directory is named after the index host).
fn forget_unpacked_local_crates() -> Result<()> {
    let Some(home) = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")))
    else {
        return Ok(());
    };
    let Ok(registries) = std::fs::read_dir(home.join("registry").join("src")) else {
        return Ok(());
    };
    for registry in registries.flatten() {
        if registry.file_name().to_string_lossy().starts_with("index.") {
            continue;
        }
        for krate in LIBRARY_CRATES {
            let version = env!("CARGO_PKG_VERSION");
            let unpacked = registry.path().join(format!("{krate}-{version}"));
            if unpacked.is_dir() {
                std::fs::remove_dir_all(&unpacked)
                    .with_context(|| format!("cannot remove {}", unpacked.display()))?;
            }
        }
    }
    Ok(())
}

fn bench(root: &Path, groups: &[String]) -> Result<()> {
    // `pi` is not a memory-bench group: it drives real pi (see `bench_pi`).
    let with_pi = groups.is_empty() || groups.iter().any(|g| g == "pi");
    let rest: Vec<&str> = groups
        .iter()
        .map(String::as_str)
        .filter(|g| *g != "pi")
        .collect();
    if groups.is_empty() || !rest.is_empty() {
        // The `mcp` group times the release `pimem` binary (stdio MCP against the CLI).
        run(
            root,
            "cargo",
            &[
                "build",
                "--release",
                "--locked",
                "-p",
                "memory-pi",
                "--features",
                "mcp",
            ],
        )?;
        let pimem = target_dir(root).join("release").join(EXE);
        let mut args = vec![
            "run",
            "--release",
            "--locked",
            "--quiet",
            "-p",
            "memory-bench",
            "--",
        ];
        args.extend(rest);
        eprintln!("$ PIMEM_BIN={} cargo {}", pimem.display(), args.join(" "));
        let status = Command::new("cargo")
            .args(&args)
            .env("PIMEM_BIN", &pimem)
            .current_dir(root)
            .status()
            .context("could not start memory-bench")?;
        if !status.success() {
            bail!("memory-bench failed with {status}");
        }
    }
    if with_pi {
        bench_pi(root)?;
    }
    Ok(())
}

/// The `pi` group: pi startup with and without the extension, and the per-turn
/// `agent/before_start` round trip (`memory-pi/e2e/bench.mjs`, release `pimem`).
fn bench_pi(root: &Path) -> Result<()> {
    run(
        root,
        "cargo",
        &[
            "build",
            "--release",
            "--locked",
            "-p",
            "memory-pi",
            "--features",
            "mcp",
        ],
    )?;
    let pimem = target_dir(root).join("release").join(EXE);
    let (node_dir, pi_cli) = pi_host(root)?;
    let script = root.join("memory-pi/e2e/bench.mjs");
    eprintln!("$ node {}", script.display());
    let status = Command::new(node_dir.join("node"))
        .arg(&script)
        .env("PATH", path_with(&node_dir)?)
        .env("PI_CLI", &pi_cli)
        .env("PIMEM_BIN", &pimem)
        .current_dir(root)
        .status()
        .context("could not start the pi benchmark")?;
    if !status.success() {
        bail!("pi benchmark failed with {status}");
    }
    Ok(())
}

/// Cargo's target directory (`CARGO_TARGET_DIR` or `<root>/target`).
fn target_dir(root: &Path) -> PathBuf {
    match std::env::var_os("CARGO_TARGET_DIR") {
        Some(dir) if !dir.is_empty() => root.join(dir),
        _ => root.join("target"),
    }
}

const EXE: &str = if cfg!(windows) { "pimem.exe" } else { "pimem" };

/// The pinned pi host of the e2e suite: (directory holding Node 22, pi's `cli.js`).
fn pi_host(root: &Path) -> Result<(PathBuf, PathBuf)> {
    let host = install_host(root)?;
    Ok((host.var("NODE22_BIN")?, host.var("PI_CLI")?))
}

/// What `memory-pi/e2e/install.sh` printed: `export NAME='value'` lines.
struct HostVars {
    script: PathBuf,
    text: String,
}

impl HostVars {
    fn var(&self, name: &str) -> Result<PathBuf> {
        self.text
            .lines()
            .find_map(|l| {
                l.strip_prefix(&format!("export {name}='"))?
                    .strip_suffix('\'')
            })
            .map(PathBuf::from)
            .with_context(|| format!("{} printed no {name}", self.script.display()))
    }
}

/// Installs (or finds in its cache) the pinned pi host: Node 22, pi, TypeScript.
fn install_host(root: &Path) -> Result<HostVars> {
    let script = root.join("memory-pi/e2e/install.sh");
    eprintln!("$ bash {}", script.display());
    let out = Command::new("bash")
        .arg(&script)
        .stderr(Stdio::inherit())
        .output()
        .with_context(|| format!("could not run {}", script.display()))?;
    if !out.status.success() {
        bail!("{} failed with {}", script.display(), out.status);
    }
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    Ok(HostVars { script, text })
}

/// A JSON string literal.
fn json_string(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if u32::from(c) < 0x20 => out.push_str(&format!("\\u{:04x}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// `tsc --noEmit` over the pi extension with its committed `tsconfig.json`, extended by a
/// generated one (in the target directory) that adds what depends on the machine: pi's type
/// declarations from the cached pi install (`@earendil-works/pi-coding-agent`, which reaches
/// pi-ai's and the rest through its own `node_modules`) and Node's (`@types/node`, installed
/// next to `tsc`). Nothing from `node_modules` is committed.
fn typecheck_extension(root: &Path, node_dir: &Path, pi_cli: &Path, tsc: &Path) -> Result<()> {
    // <pi package>/dist/bundle/cli.js
    let pi_package = pi_cli
        .ancestors()
        .nth(3)
        .context("PI_CLI is not <package>/dist/bundle/cli.js")?;
    // <dir>/node_modules/typescript/bin/tsc
    let type_roots = tsc
        .ancestors()
        .nth(3)
        .context("TSC is not <dir>/node_modules/typescript/bin/tsc")?
        .join("@types");
    let extension = root.join("memory-pi/extension");
    let pi_types = pi_package.join("dist/index.d.ts");
    let config = format!(
        "{{\n\t\"extends\": {},\n\t\"compilerOptions\": {{\n\t\t\"typeRoots\": [{}],\n\t\t\"paths\": {{ \"@earendil-works/pi-coding-agent\": [{}] }}\n\t}}\n}}\n",
        json_string(&extension.join("tsconfig.json").to_string_lossy()),
        json_string(&type_roots.to_string_lossy()),
        json_string(&pi_types.to_string_lossy()),
    );
    let dir = target_dir(root).join("pimem-tsc");
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let config_path = dir.join("tsconfig.json");
    // A build artefact in the target directory, not a memory file.
    #[allow(clippy::disallowed_methods)]
    let written = std::fs::write(&config_path, config);
    written.with_context(|| format!("cannot write {}", config_path.display()))?;
    eprintln!(
        "$ tsc --noEmit -p {} (extends {})",
        config_path.display(),
        extension.join("tsconfig.json").display()
    );
    let status = Command::new(node_dir.join("node"))
        .arg(tsc)
        .args(["--noEmit", "-p"])
        .arg(&config_path)
        .current_dir(root)
        .status()
        .context("could not start tsc")?;
    if !status.success() {
        bail!("the pi extension does not type-check (tsc failed with {status})");
    }
    Ok(())
}

/// `PATH` with `dir` first.
fn path_with(dir: &Path) -> Result<OsString> {
    let mut dirs = vec![dir.to_path_buf()];
    if let Some(path) = std::env::var_os("PATH") {
        dirs.extend(std::env::split_paths(&path));
    }
    Ok(std::env::join_paths(dirs)?)
}

fn e2e(root: &Path) -> Result<()> {
    run(root, "cargo", &["build", "--locked", "-p", "memory-pi"])?;
    let pimem = target_dir(root).join("debug").join(EXE);
    let host = install_host(root)?;
    let (node_dir, pi_cli) = (host.var("NODE22_BIN")?, host.var("PI_CLI")?);
    typecheck_extension(root, &node_dir, &pi_cli, &host.var("TSC")?)?;
    // memory-js' collation against Node's own `localeCompare` (needs this Node 22).
    eprintln!("$ PIMEM_NODE=<node 22> cargo test -p memory-js -- --ignored");
    let status = Command::new("cargo")
        .args([
            "test",
            "--locked",
            "--quiet",
            "-p",
            "memory-js",
            "--test",
            "all",
            "--",
            "--ignored",
        ])
        .env("PIMEM_NODE", node_dir.join("node"))
        .current_dir(root)
        .status()
        .context("could not start the collation test")?;
    if !status.success() {
        bail!("the collation comparison with Node failed with {status}");
    }
    let suite = root.join("memory-pi/e2e/run.mjs");
    eprintln!("$ node {}", suite.display());
    let status = Command::new(node_dir.join("node"))
        .arg(&suite)
        .env("PATH", path_with(&node_dir)?)
        .env("PI_CLI", &pi_cli)
        .env("PIMEM_BIN", &pimem)
        .current_dir(root)
        .status()
        .context("could not start the e2e suite")?;
    if !status.success() {
        bail!("e2e suite failed with {status}");
    }
    // `pimem mcp` driven by the official MCP TypeScript SDK (a real client).
    let mcp_suite = root.join("memory-pi/e2e/mcp.mjs");
    eprintln!("$ node {}", mcp_suite.display());
    let status = Command::new(node_dir.join("node"))
        .arg(&mcp_suite)
        .env("PATH", path_with(&node_dir)?)
        .env("PIMEM_BIN", &pimem)
        .env("MCP_SDK", host.var("MCP_SDK")?)
        .current_dir(root)
        .status()
        .context("could not start the MCP suite")?;
    if !status.success() {
        bail!("MCP suite failed with {status}");
    }
    Ok(())
}

/// Copies `from` to `to` through a temporary file and a rename, so a running copy of the old
/// binary (a live sidecar) is never overwritten in place.
fn install_file(from: &Path, to: &Path) -> Result<()> {
    let dir = to
        .parent()
        .context("install target has no parent directory")?;
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let tmp = dir.join(format!(".{EXE}.{}.tmp", std::process::id()));
    std::fs::copy(from, &tmp).with_context(|| format!("cannot copy to {}", tmp.display()))?;
    std::fs::rename(&tmp, to).with_context(|| format!("cannot replace {}", to.display()))?;
    eprintln!("installed {}", to.display());
    Ok(())
}

/// Finds `program` on `PATH`.
fn on_path(program: &str) -> Option<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|d| d.join(program))
        .find(|p| p.is_file())
}

fn install(root: &Path) -> Result<()> {
    run(
        root,
        "cargo",
        &[
            "build",
            "--release",
            "--locked",
            "-p",
            "memory-pi",
            "--features",
            "mcp",
        ],
    )?;
    let built = target_dir(root).join("release").join(EXE);
    let extension = root.join("memory-pi/extension");
    install_file(&built, &extension.join("bin").join(EXE))?;
    let cargo_home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")));
    match cargo_home {
        Some(home) => install_file(&built, &home.join("bin").join(EXE))?,
        None => eprintln!("CARGO_HOME and HOME are unset: pimem was not put on PATH"),
    }
    let package = extension.to_string_lossy();
    match on_path("pi") {
        Some(pi) => run(root, &pi.to_string_lossy(), &["install", &package])?,
        None => eprintln!(
            "pi is not on PATH. Once it is, register the extension with:\n  pi install {package}"
        ),
    }
    Ok(())
}

/// Runs a command in `dir`, echoing it first; a non-zero exit is an error.
fn run(dir: &Path, program: &str, args: &[&str]) -> Result<()> {
    eprintln!("$ {program} {}", args.join(" "));
    let status = Command::new(program)
        .args(args)
        .current_dir(dir)
        .status()
        .with_context(|| format!("could not start {program}"))?;
    if !status.success() {
        bail!("{program} {} failed with {status}", args.join(" "));
    }
    Ok(())
}
