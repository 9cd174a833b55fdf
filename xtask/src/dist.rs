//! `cargo xtask dist`: the release artefacts of pimem, in a fresh directory.
//!
//! * Builds `pimem` with the `dist` profile (fat LTO, one codegen unit, stripped; Cargo.toml)
//!   and every feature of memory-pi, for each requested platform. On Linux every Linux target
//!   is built with `cargo zigbuild` (zig from PyPI's `ziglang`, cargo-zigbuild from crates.io,
//!   both pinned and cached in `~/.cache/pimem-dist`, `PIMEM_DIST_CACHE` moves it), the glibc
//!   targets against glibc 2.17 so the binary runs on every distribution still supported;
//!   elsewhere (the release workflow's macOS and Windows runners) plain `cargo build --target`.
//! * Runs each binary it can here: `pimem --version` and a store round trip (add, list,
//!   search, the file on disk); the x64 builds natively, the arm64 ones under `qemu-aarch64`
//!   (Debian's `qemu-user`, with `libc6-arm64-cross` for the glibc loader).
//! * Lays out one npm package per built platform (`@pimem/<key>`: `bin/pimem`, package.json
//!   with `os`/`cpu`/`libc`, README, licenses) and the pi package `@pimem/pi` (the extension,
//!   `protocol.ts`, `tool.json`, README, licenses, `optionalDependencies` on every platform
//!   package at this exact version), packs each with `npm pack`, and checks that every
//!   tarball holds exactly its whitelist of files with the bytes laid out.
//! * Writes the man page (`man/pimem.1`, clap_mangen through `pimem man`), the completion
//!   scripts, and `manifest.json`: each tarball's SHA-256 and size, each shipped file's
//!   SHA-256, size and mode, each binary's size, and the tools used.
//!
//! Usage: `cargo xtask dist [--out DIR] [--targets KEY,KEY|host|linux] [--check-arm64]
//! [--quick]`. `--out` must not exist (default `target/pimem-dist/pimem-<version>`).
//! `--check-arm64` makes the qemu checks of the arm64 binaries mandatory (installing
//! `qemu-user` and `libc6-arm64-cross` with apt-get when missing); without it they run when
//! qemu is there.
//!
//! `--quick` (what `cargo xtask ci` uses, through `e2e --installed --quick`): this machine's
//! platform only, and the binary is the plain debug `pimem` that `cargo xtask e2e` already
//! built (`cargo build -p memory-pi`, default features) instead of a `dist`-profile build: no
//! zig, no LTO, nothing rebuilt. Everything after the build (the checks, the packages, the
//! whitelists, the manifest) is the same code; the manifest says `"profile": "dev"` and the
//! output is not a release artefact.
//!
//! Decision: CI runs only the quick form. A `dist`-profile build of one target takes about six
//! minutes on two cores and the cross targets need zig and cargo-zigbuild (BENCHMARKS.md,
//! "Release binaries and packages"); what CI has to prove is that the packages install and
//! work, which does not depend on the optimisation level. The release binaries are built and
//! checked by hand (`cargo xtask dist --check-arm64`) and by `.github/workflows/release.yml`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{Context, Result, bail, ensure};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use super::target_dir;

/// One platform pimem ships a binary package for.
#[derive(Debug)]
pub(crate) struct Platform {
    /// npm package `@pimem/<key>`; `<process.platform>-<process.arch>[-<libc>]`.
    pub(crate) key: &'static str,
    /// Rust target triple.
    pub(crate) triple: &'static str,
    /// npm `os`.
    pub(crate) os: &'static str,
    /// npm `cpu`.
    pub(crate) cpu: &'static str,
    /// npm `libc` (Linux only).
    pub(crate) libc: Option<&'static str>,
    /// Who it is for, in the package's description.
    pub(crate) label: &'static str,
}

impl Platform {
    /// The npm package name.
    pub(crate) fn package(&self) -> String {
        format!("@pimem/{}", self.key)
    }

    /// The binary's file name.
    pub(crate) fn exe(&self) -> &'static str {
        if self.os == "win32" {
            "pimem.exe"
        } else {
            "pimem"
        }
    }

    fn is_linux(&self) -> bool {
        self.os == "linux"
    }

    fn is_arm64_linux(&self) -> bool {
        self.is_linux() && self.cpu == "arm64"
    }
}

/// Every platform, in the order of package.json's `optionalDependencies`. No Windows: pimem
/// does not build there (memory-lock is Unix-only; `memory_pi::platform::platform_key`).
pub(crate) const PLATFORMS: &[Platform] = &[
    Platform {
        key: "linux-x64-gnu",
        triple: "x86_64-unknown-linux-gnu",
        os: "linux",
        cpu: "x64",
        libc: Some("glibc"),
        label: "Linux x64, glibc 2.17 or newer",
    },
    Platform {
        key: "linux-x64-musl",
        triple: "x86_64-unknown-linux-musl",
        os: "linux",
        cpu: "x64",
        libc: Some("musl"),
        label: "Linux x64, musl (Alpine), statically linked",
    },
    Platform {
        key: "linux-arm64-gnu",
        triple: "aarch64-unknown-linux-gnu",
        os: "linux",
        cpu: "arm64",
        libc: Some("glibc"),
        label: "Linux arm64, glibc 2.17 or newer",
    },
    Platform {
        key: "linux-arm64-musl",
        triple: "aarch64-unknown-linux-musl",
        os: "linux",
        cpu: "arm64",
        libc: Some("musl"),
        label: "Linux arm64, musl (Alpine), statically linked",
    },
    Platform {
        key: "darwin-x64",
        triple: "x86_64-apple-darwin",
        os: "darwin",
        cpu: "x64",
        libc: None,
        label: "macOS on Intel",
    },
    Platform {
        key: "darwin-arm64",
        triple: "aarch64-apple-darwin",
        os: "darwin",
        cpu: "arm64",
        libc: None,
        label: "macOS on Apple silicon",
    },
];

/// The pi package's name on npm.
pub(crate) const MAIN_PACKAGE: &str = "@pimem/pi";

/// The files of the pi package: its package.json `files`, plus package.json itself.
const MAIN_FILES: &[&str] = &[
    "package.json",
    "index.ts",
    "sessions.ts",
    "protocol.ts",
    "tool.json",
    "session-tools.json",
    "experience-tool.json",
    "README.md",
    "LICENSE-MIT",
    "LICENSE-APACHE",
];

/// The licence files every package carries (from the repository root).
const LICENSES: &[&str] = &["LICENSE-MIT", "LICENSE-APACHE"];

/// zig (PyPI `ziglang`) and cargo-zigbuild (crates.io), pinned.
const ZIG_VERSION: &str = "0.15.2";
const ZIGBUILD_VERSION: &str = "0.24.1";
/// The glibc the gnu builds link against (Rust's own minimum).
const GLIBC: &str = "2.17";

/// The shells `pimem completions` writes a script for, and the script's file name.
const COMPLETIONS: &[(&str, &str)] = &[
    ("bash", "pimem.bash"),
    ("zsh", "_pimem"),
    ("fish", "pimem.fish"),
    ("powershell", "_pimem.ps1"),
];

/// What `cargo xtask dist` was asked for.
#[derive(Debug)]
pub(crate) struct Options {
    /// The output directory (must not exist).
    pub(crate) out: PathBuf,
    /// The platforms to build.
    pub(crate) targets: Vec<&'static Platform>,
    /// Whether the qemu checks of the arm64 binaries are mandatory.
    pub(crate) check_arm64: bool,
    /// The e2e's debug binary for this machine only, no release build (`--quick`).
    pub(crate) quick: bool,
}

/// The platform this xtask runs on, when pimem ships one for it.
pub(crate) fn host_platform() -> Option<&'static Platform> {
    let os = match std::env::consts::OS {
        "linux" => "linux",
        "macos" => "darwin",
        "windows" => "win32",
        _ => return None,
    };
    let cpu = match std::env::consts::ARCH {
        "x86_64" => "x64",
        "aarch64" => "arm64",
        _ => return None,
    };
    let libc = if os != "linux" {
        None
    } else if cfg!(target_env = "musl") {
        Some("musl")
    } else {
        Some("glibc")
    };
    PLATFORMS
        .iter()
        .find(|p| p.os == os && p.cpu == cpu && p.libc == libc)
}

/// Parses `--out`, `--targets`, `--check-arm64`.
pub(crate) fn parse_options(root: &Path, args: &[String]) -> Result<Options> {
    let mut out = None;
    let mut targets = None;
    let mut check_arm64 = false;
    let mut quick = false;
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--out" => out = Some(PathBuf::from(it.next().context("--out needs a directory")?)),
            "--targets" => {
                targets = Some(parse_targets(it.next().context(
                    "--targets needs a comma-separated list of platform keys, `host` or `linux`",
                )?)?)
            }
            "--check-arm64" => check_arm64 = true,
            "--quick" => quick = true,
            other => bail!(
                "cargo xtask dist: unknown option {other:?}; usage: cargo xtask dist [--out DIR] [--targets KEY,...|host|linux] [--check-arm64] [--quick]"
            ),
        }
    }
    let targets = match targets {
        Some(t) => t,
        None if quick => parse_targets("host")?,
        None => default_targets()?,
    };
    let out = match out {
        Some(dir) if dir.is_absolute() => dir,
        Some(dir) => std::env::current_dir()?.join(dir),
        // Not under target/dist/: that is cargo's directory of the `dist` profile.
        None => target_dir(root)
            .join("pimem-dist")
            .join(format!("pimem-{}", env!("CARGO_PKG_VERSION"))),
    };
    Ok(Options {
        out,
        targets,
        check_arm64,
        quick,
    })
}

/// Every Linux platform on an x86_64 Linux machine (zig cross-compiles them), else the host.
fn default_targets() -> Result<Vec<&'static Platform>> {
    let host = host_platform().context("pimem ships no binary for this machine's platform")?;
    if host.is_linux() && host.cpu == "x64" {
        Ok(PLATFORMS.iter().filter(|p| p.is_linux()).collect())
    } else {
        Ok(vec![host])
    }
}

/// `host`, `linux`, or comma-separated keys.
pub(crate) fn parse_targets(list: &str) -> Result<Vec<&'static Platform>> {
    match list {
        "host" => {
            Ok(vec![host_platform().context(
                "pimem ships no binary for this machine's platform",
            )?])
        }
        "linux" => Ok(PLATFORMS.iter().filter(|p| p.is_linux()).collect()),
        _ => {
            let mut out: Vec<&'static Platform> = Vec::new();
            for key in list.split(',').map(str::trim).filter(|k| !k.is_empty()) {
                let p = PLATFORMS.iter().find(|p| p.key == key).with_context(|| {
                    format!(
                        "unknown platform {key:?}; known: {}",
                        PLATFORMS
                            .iter()
                            .map(|p| p.key)
                            .collect::<Vec<_>>()
                            .join(", ")
                    )
                })?;
                if !out.iter().any(|q| q.key == p.key) {
                    out.push(p);
                }
            }
            ensure!(!out.is_empty(), "--targets names no platform");
            Ok(out)
        }
    }
}

/// A binary built and checked.
struct Built {
    platform: &'static Platform,
    path: PathBuf,
    /// How it was checked here: `native`, `qemu-aarch64`, or why not.
    checked: String,
}

/// `cargo xtask dist`. Returns the output directory.
pub(crate) fn dist(root: &Path, opts: &Options) -> Result<PathBuf> {
    let out = &opts.out;
    ensure!(
        !out.exists(),
        "{} exists: dist writes into a fresh directory only (remove it, or pass --out with a new one)",
        out.display()
    );
    if opts.quick {
        let host = host_platform().context("pimem ships no binary for this machine's platform")?;
        ensure!(
            opts.targets.len() == 1 && opts.targets[0].key == host.key,
            "--quick builds this machine's platform ({}) only",
            host.key
        );
    }
    let version = env!("CARGO_PKG_VERSION");
    let main_json = main_package_json(root, version)?;
    let t0 = std::time::Instant::now();

    // 1. Binaries.
    let tools = Tools::prepare(root, &opts.targets, opts.quick)?;
    let mut built = Vec::new();
    for p in &opts.targets {
        let path = tools.build(root, p)?;
        built.push(Built {
            platform: p,
            path,
            checked: String::new(),
        });
    }
    let build_secs = t0.elapsed().as_secs();

    // 2. Run what runs here.
    let qemu = if opts.targets.iter().any(|p| p.is_arm64_linux()) {
        Qemu::find(opts.check_arm64)?
    } else {
        None
    };
    for b in &mut built {
        b.checked = smoke_check(b, qemu.as_ref(), version)?;
    }

    std::fs::create_dir_all(out).with_context(|| format!("cannot create {}", out.display()))?;
    let out = &out.canonicalize()?;

    // 3. Man page and completions, from a binary that runs here.
    let mut artefacts = Vec::new();
    let runner = built
        .iter()
        .find(|b| b.checked == "native")
        .map(|b| &b.path);
    let man = pimem_output(root, runner, &["man"])?;
    artefacts.push(write_artefact(out, "man/pimem.1", &man)?);
    for (shell, file) in COMPLETIONS {
        let script = pimem_output(root, runner, &["completions", shell])?;
        artefacts.push(write_artefact(
            out,
            &format!("completions/{file}"),
            &script,
        )?);
    }

    // 4. Packages: lay out, pack, verify.
    let packages_dir = out.join("packages");
    let npm_dir = out.join("npm");
    std::fs::create_dir_all(&npm_dir)?;
    let mut packages = Vec::new();
    let main_dir = packages_dir.join("pi");
    lay_out_main(root, &main_dir, &main_json)?;
    packages.push(pack_and_verify(&main_dir, &npm_dir, MAIN_FILES)?);
    for b in &built {
        let dir = packages_dir.join(b.platform.key);
        let files = lay_out_platform(root, &dir, b, version)?;
        let files: Vec<&str> = files.iter().map(String::as_str).collect();
        packages.push(pack_and_verify(&dir, &npm_dir, &files)?);
    }

    // 5. The manifest.
    let binaries: Vec<Value> = built
        .iter()
        .map(|b| -> Result<Value> {
            let bytes = std::fs::read(&b.path)?;
            Ok(json!({
                "platform": b.platform.key,
                "triple": b.platform.triple,
                "size": bytes.len(),
                "sha256": sha256_hex(&bytes),
                "stripped": is_stripped(&bytes),
                "checked": b.checked,
            }))
        })
        .collect::<Result<_>>()?;
    let (profile, features) = if opts.quick {
        (
            "dev",
            "default features of memory-pi (--quick: not a release artefact)",
        )
    } else {
        ("dist", "all features of memory-pi")
    };
    let manifest = json!({
        "version": version,
        "protocol": protocol_version(root)?,
        "profile": profile,
        "features": features,
        "buildSeconds": build_secs,
        "tools": tools.describe(),
        "platforms": PLATFORMS.iter().map(|p| json!({
            "key": p.key,
            "package": p.package(),
            "triple": p.triple,
            "os": p.os,
            "cpu": p.cpu,
            "libc": p.libc,
            "built": built.iter().any(|b| b.platform.key == p.key),
        })).collect::<Vec<_>>(),
        "binaries": binaries,
        "packages": packages,
        "artefacts": artefacts,
    });
    let text = serde_json::to_string_pretty(&manifest)? + "\n";
    std::fs::write(out.join("manifest.json"), text)?;

    print_summary(out, &built, &packages);
    Ok(out.clone())
}

/// The repository's extension package.json, checked against the workspace version and the
/// platform list, as it ships: without `"private"` (which only guards the checkout).
fn main_package_json(root: &Path, version: &str) -> Result<Value> {
    let path = root.join("memory-pi/extension/package.json");
    let text = std::fs::read_to_string(&path)
        .with_context(|| format!("cannot read {}", path.display()))?;
    let mut pkg: Value =
        serde_json::from_str(&text).with_context(|| format!("{} is not JSON", path.display()))?;
    check_main_package(&pkg, version).with_context(|| format!("in {}", path.display()))?;
    if let Some(obj) = pkg.as_object_mut() {
        obj.remove("private");
    }
    Ok(pkg)
}

/// The pi package names itself, carries the workspace version, and depends on every platform
/// package at exactly that version.
pub(crate) fn check_main_package(pkg: &Value, version: &str) -> Result<()> {
    ensure!(
        pkg["name"] == MAIN_PACKAGE,
        "\"name\" is {}, expected {MAIN_PACKAGE:?}",
        pkg["name"]
    );
    ensure!(
        pkg["version"] == version,
        "\"version\" is {} but the Cargo workspace is {version:?}: they are released together",
        pkg["version"]
    );
    let deps = pkg["optionalDependencies"]
        .as_object()
        .context("no \"optionalDependencies\"")?;
    let want: Vec<String> = PLATFORMS.iter().map(Platform::package).collect();
    let have: Vec<String> = deps.keys().cloned().collect();
    let mut want_sorted = want.clone();
    want_sorted.sort();
    ensure!(
        have == want_sorted,
        "\"optionalDependencies\" names {have:?}, expected {want:?}"
    );
    for (name, range) in deps {
        ensure!(
            range == version,
            "\"optionalDependencies\".{name:?} is {range}, expected exactly {version:?}"
        );
    }
    let files: Vec<&str> = pkg["files"]
        .as_array()
        .context("no \"files\" whitelist")?
        .iter()
        .filter_map(Value::as_str)
        .collect();
    let mut listed = files.clone();
    listed.push("package.json");
    listed.sort_unstable();
    let mut whitelist = MAIN_FILES.to_vec();
    whitelist.sort_unstable();
    ensure!(
        listed == whitelist,
        "\"files\" is {files:?}; xtask's whitelist is {MAIN_FILES:?}"
    );
    Ok(())
}

/// `PROTOCOL` of memory-pi's serve module (read from the source: xtask does not link it).
fn protocol_version(root: &Path) -> Result<u32> {
    let path = root.join("memory-pi/src/serve/mod.rs");
    let text = std::fs::read_to_string(&path)?;
    text.lines()
        .find_map(|l| {
            l.strip_prefix("pub const PROTOCOL: u32 = ")?
                .strip_suffix(';')
        })
        .and_then(|n| n.parse().ok())
        .with_context(|| format!("no `pub const PROTOCOL: u32` in {}", path.display()))
}

/// The toolchain for the requested platforms.
struct Tools {
    /// `PATH` with cargo-zigbuild and zig first, when any Linux target is built with zig.
    zig_path: Option<std::ffi::OsString>,
    rustc: String,
    /// `--quick`: the debug build of `cargo xtask e2e`.
    quick: bool,
}

impl Tools {
    fn prepare(root: &Path, targets: &[&'static Platform], quick: bool) -> Result<Self> {
        let rustc = output_text(Command::new("rustc").arg("-V"))?
            .trim()
            .to_owned();
        if quick {
            return Ok(Tools {
                zig_path: None,
                rustc,
                quick,
            });
        }
        let host = host_platform();
        let zig = host.is_some_and(|h| h.is_linux()) && targets.iter().any(|p| p.is_linux());
        add_rust_targets(root, targets)?;
        let zig_path = if zig {
            let cache = cache_dir()?;
            let zig_dir = ensure_zig(&cache)?;
            let zigbuild_dir = ensure_zigbuild(root, &cache)?;
            let mut dirs = vec![zigbuild_dir, zig_dir];
            if let Some(path) = std::env::var_os("PATH") {
                dirs.extend(std::env::split_paths(&path));
            }
            Some(std::env::join_paths(dirs)?)
        } else {
            None
        };
        Ok(Tools {
            zig_path,
            rustc,
            quick,
        })
    }

    fn describe(&self) -> Value {
        json!({
            "rustc": self.rustc,
            "zig": self.zig_path.as_ref().map(|_| ZIG_VERSION),
            "cargo-zigbuild": self.zig_path.as_ref().map(|_| ZIGBUILD_VERSION),
            "glibc": self.zig_path.as_ref().map(|_| GLIBC),
        })
    }

    /// Builds `pimem` for `p`; returns the binary's path.
    fn build(&self, root: &Path, p: &Platform) -> Result<PathBuf> {
        if self.quick {
            // Exactly `cargo xtask e2e`'s build, so after it nothing is compiled.
            super::run(root, "cargo", &["build", "--locked", "-p", "memory-pi"])?;
            let path = target_dir(root).join("debug").join(p.exe());
            ensure!(path.is_file(), "cargo built no {}", path.display());
            return Ok(path);
        }
        let mut cmd = Command::new("cargo");
        let target_arg;
        match (&self.zig_path, p.is_linux()) {
            (Some(path), true) => {
                target_arg = if p.libc == Some("glibc") {
                    format!("{}.{GLIBC}", p.triple)
                } else {
                    p.triple.to_owned()
                };
                cmd.arg("zigbuild").env("PATH", path);
            }
            _ => {
                target_arg = p.triple.to_owned();
                cmd.arg("build");
            }
        }
        cmd.args([
            "--locked",
            "--profile",
            "dist",
            "-p",
            "memory-pi",
            "--all-features",
            "--target",
            &target_arg,
        ])
        .current_dir(root);
        eprintln!("$ {cmd:?}");
        let status = cmd.status().context("could not start cargo")?;
        ensure!(
            status.success(),
            "building pimem for {} failed with {status}",
            p.key
        );
        let path = target_dir(root).join(p.triple).join("dist").join(p.exe());
        ensure!(path.is_file(), "cargo built no {}", path.display());
        Ok(path)
    }
}

/// `rustup target add` for the triples not installed yet (none when rustup is absent: the
/// toolchain then has to have them).
fn add_rust_targets(root: &Path, targets: &[&'static Platform]) -> Result<()> {
    let Ok(installed) = output_text(Command::new("rustup").args(["target", "list", "--installed"]))
    else {
        eprintln!("dist: rustup not found; assuming the toolchain has every target");
        return Ok(());
    };
    let missing: Vec<&str> = targets
        .iter()
        .map(|p| p.triple)
        .filter(|t| !installed.lines().any(|l| l.trim() == *t))
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    let mut args = vec!["target", "add"];
    args.extend(&missing);
    super::run(root, "rustup", &args)
}

/// `PIMEM_DIST_CACHE`, else `$XDG_CACHE_HOME/pimem-dist`, else `~/.cache/pimem-dist`.
fn cache_dir() -> Result<PathBuf> {
    if let Some(dir) = std::env::var_os("PIMEM_DIST_CACHE").filter(|d| !d.is_empty()) {
        return Ok(PathBuf::from(dir));
    }
    if let Some(dir) = std::env::var_os("XDG_CACHE_HOME").filter(|d| !d.is_empty()) {
        return Ok(PathBuf::from(dir).join("pimem-dist"));
    }
    let home = std::env::var_os("HOME").context("HOME is unset: set PIMEM_DIST_CACHE")?;
    Ok(PathBuf::from(home).join(".cache").join("pimem-dist"))
}

/// zig from PyPI's `ziglang` (`pip install --target`); returns the directory holding `zig`.
fn ensure_zig(cache: &Path) -> Result<PathBuf> {
    let dir = cache.join(format!("ziglang-{ZIG_VERSION}"));
    let bin_dir = dir.join("ziglang");
    let zig = bin_dir.join(if cfg!(windows) { "zig.exe" } else { "zig" });
    if !zig.is_file() {
        eprintln!(
            "dist: installing zig {ZIG_VERSION} (PyPI ziglang) into {}",
            dir.display()
        );
        let status = Command::new("python3")
            .args([
                "-m",
                "pip",
                "install",
                "--quiet",
                "--disable-pip-version-check",
                "--no-warn-script-location",
                "--target",
            ])
            .arg(&dir)
            .arg(format!("ziglang=={ZIG_VERSION}"))
            .status()
            .context("could not start python3 -m pip (zig comes from PyPI's ziglang)")?;
        ensure!(
            status.success(),
            "pip install ziglang=={ZIG_VERSION} failed with {status}"
        );
    }
    let got = output_text(Command::new(&zig).arg("version"))?;
    ensure!(
        got.trim() == ZIG_VERSION,
        "{} is zig {}, expected {ZIG_VERSION}",
        zig.display(),
        got.trim()
    );
    Ok(bin_dir)
}

/// cargo-zigbuild from crates.io (`cargo install --root`); returns its `bin` directory.
fn ensure_zigbuild(root: &Path, cache: &Path) -> Result<PathBuf> {
    let dir = cache.join(format!("cargo-zigbuild-{ZIGBUILD_VERSION}"));
    let bin = dir.join("bin");
    if !bin
        .join(format!("cargo-zigbuild{}", std::env::consts::EXE_SUFFIX))
        .is_file()
    {
        let dir_text = dir.to_string_lossy().into_owned();
        super::run(
            root,
            "cargo",
            &[
                "install",
                "--locked",
                "--quiet",
                "--root",
                &dir_text,
                "cargo-zigbuild",
                "--version",
                ZIGBUILD_VERSION,
            ],
        )?;
    }
    Ok(bin)
}

/// `qemu-aarch64`, and the aarch64 glibc loader's prefix for the gnu build.
struct Qemu {
    program: PathBuf,
    glibc_prefix: Option<PathBuf>,
}

impl Qemu {
    /// The Debian locations; with `required`, installs the packages when missing.
    fn find(required: bool) -> Result<Option<Self>> {
        let prefix = PathBuf::from("/usr/aarch64-linux-gnu");
        let loader = prefix.join("lib/ld-linux-aarch64.so.1");
        let mut program = super::on_path("qemu-aarch64");
        if required && (program.is_none() || !loader.exists()) {
            ensure!(
                super::on_path("apt-get").is_some(),
                "--check-arm64 needs qemu-aarch64 and the aarch64 glibc loader: install Debian's qemu-user and libc6-arm64-cross (or your system's equivalents)"
            );
            let status = Command::new("apt-get")
                .args(["install", "-y", "-qq", "qemu-user", "libc6-arm64-cross"])
                .env("DEBIAN_FRONTEND", "noninteractive")
                .status()
                .context("could not start apt-get")?;
            ensure!(
                status.success(),
                "apt-get install qemu-user libc6-arm64-cross failed with {status} (run `apt-get update` first?)"
            );
            program = super::on_path("qemu-aarch64");
        }
        match program {
            Some(program) => Ok(Some(Qemu {
                program,
                glibc_prefix: loader.exists().then_some(prefix),
            })),
            None if required => bail!("qemu-aarch64 is still not on PATH"),
            None => {
                eprintln!(
                    "dist: qemu-aarch64 not found: the arm64 binaries are not run (pass --check-arm64 to install it)"
                );
                Ok(None)
            }
        }
    }
}

/// Runs `--version` and a store round trip with the binary, natively or under qemu. Returns
/// how it ran (`native`, `qemu-aarch64`) or why it did not.
fn smoke_check(b: &Built, qemu: Option<&Qemu>, version: &str) -> Result<String> {
    let p = b.platform;
    let host = host_platform();
    let native = host.is_some_and(|h| h.os == p.os && h.cpu == p.cpu);
    let command = |args: &[&str]| -> Option<Command> {
        if native {
            let mut c = Command::new(&b.path);
            c.args(args);
            Some(c)
        } else if p.is_arm64_linux() && host.is_some_and(|h| h.is_linux()) {
            let q = qemu?;
            if p.libc == Some("glibc") && q.glibc_prefix.is_none() {
                return None;
            }
            let mut c = Command::new(&q.program);
            if let Some(prefix) = &q.glibc_prefix {
                c.env("QEMU_LD_PREFIX", prefix);
            }
            c.arg(&b.path).args(args);
            Some(c)
        } else {
            None
        }
    };
    let Some(mut cmd) = command(&["--version"]) else {
        let why = if p.is_arm64_linux() {
            "not run (no qemu-aarch64 or aarch64 glibc loader; pass --check-arm64)"
        } else {
            "not run (another operating system or CPU)"
        };
        eprintln!("dist: {} {why}", p.key);
        return Ok(why.to_owned());
    };
    let how = if native { "native" } else { "qemu-aarch64" };
    let got = output_text(&mut cmd).with_context(|| format!("{} --version", p.key))?;
    let want = format!("pimem {version} (protocol 1, {})", p.key);
    ensure!(
        got.trim_end() == want,
        "{} --version printed {got:?}, expected {want:?}",
        p.key
    );
    // A store round trip in a throwaway HOME: add, list, search, the entry file on disk.
    let tmp = tempfile::tempdir()?;
    let home = tmp.path().join("home");
    let proj = tmp.path().join("proj");
    std::fs::create_dir_all(home.join(".pi/agent"))?;
    std::fs::create_dir_all(&proj)?;
    let mem = tmp.path().join("memory");
    let mem_text = mem.to_string_lossy().into_owned();
    let proj_text = proj.to_string_lossy().into_owned();
    let run = |args: &[&str]| -> Result<String> {
        let mut full = vec!["--memory-dir", &mem_text, "--cwd", &proj_text];
        full.extend(args);
        let mut c = command(&full).context("the binary stopped being runnable")?;
        c.env("HOME", &home)
            .env_remove("PI_CODING_AGENT_DIR")
            .env("GIT_CONFIG_NOSYSTEM", "1");
        output_text(&mut c).with_context(|| format!("{} {}", p.key, args.join(" ")))
    };
    let saved = run(&[
        "add",
        "--name",
        "Dist check",
        "--content",
        "The release binary stores and finds this entry.",
    ])?;
    ensure!(
        saved.trim_end() == r#"Saved "Dist check" (Dist-check.md)."#,
        "{}: add printed {saved:?}",
        p.key
    );
    let listed = run(&["list"])?;
    ensure!(
        listed.contains("Dist check"),
        "{}: list printed {listed:?}",
        p.key
    );
    let found = run(&["search", "release binary"])?;
    ensure!(
        found.contains("Dist check"),
        "{}: search printed {found:?}",
        p.key
    );
    let dir = run(&["dir"])?;
    let entry = PathBuf::from(dir.trim_end()).join("Dist-check.md");
    let text = std::fs::read_to_string(&entry)
        .with_context(|| format!("{}: no entry file {}", p.key, entry.display()))?;
    ensure!(
        text.contains("The release binary stores and finds this entry."),
        "{}: {} holds {text:?}",
        p.key,
        entry.display()
    );
    eprintln!(
        "dist: {} ran here ({how}): --version and a store round trip",
        p.key
    );
    Ok(how.to_owned())
}

/// What `pimem <args>` prints, from `runner` or else from `cargo run`.
fn pimem_output(root: &Path, runner: Option<&PathBuf>, args: &[&str]) -> Result<Vec<u8>> {
    let mut cmd = match runner {
        Some(bin) => Command::new(bin),
        None => {
            let mut c = Command::new("cargo");
            c.args([
                "run",
                "--locked",
                "--quiet",
                "-p",
                "memory-pi",
                "--all-features",
                "--",
            ])
            .current_dir(root);
            c
        }
    };
    cmd.args(args).stderr(Stdio::inherit());
    let out = cmd
        .output()
        .with_context(|| format!("could not run pimem {}", args.join(" ")))?;
    ensure!(
        out.status.success(),
        "pimem {} failed with {}",
        args.join(" "),
        out.status
    );
    Ok(out.stdout)
}

/// Writes an artefact under `out` and describes it for the manifest.
fn write_artefact(out: &Path, rel: &str, bytes: &[u8]) -> Result<Value> {
    let path = out.join(rel);
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    std::fs::write(&path, bytes).with_context(|| format!("cannot write {}", path.display()))?;
    Ok(json!({"path": rel, "size": bytes.len(), "sha256": sha256_hex(bytes)}))
}

/// The pi package's directory: its whitelist, from the repository.
fn lay_out_main(root: &Path, dir: &Path, pkg: &Value) -> Result<()> {
    std::fs::create_dir_all(dir)?;
    std::fs::write(
        dir.join("package.json"),
        serde_json::to_string_pretty(pkg)? + "\n",
    )?;
    // Every whitelisted file: the licences from the repository root, the rest from the
    // extension directory (package.json was written above).
    let extension = root.join("memory-pi/extension");
    for file in MAIN_FILES.iter().filter(|f| **f != "package.json") {
        let from = if LICENSES.contains(file) {
            root.join(file)
        } else {
            extension.join(file)
        };
        copy(&from, &dir.join(file))?;
    }
    Ok(())
}

/// A platform package's directory; returns its whitelist.
fn lay_out_platform(root: &Path, dir: &Path, b: &Built, version: &str) -> Result<Vec<String>> {
    let p = b.platform;
    std::fs::create_dir_all(dir.join("bin"))?;
    let bin = format!("bin/{}", p.exe());
    std::fs::write(
        dir.join("package.json"),
        serde_json::to_string_pretty(&platform_package_json(p, version))? + "\n",
    )?;
    copy(&b.path, &dir.join(&bin))?;
    set_executable(&dir.join(&bin))?;
    let readme = format!(
        "# {name}\n\nThe `pimem` {version} binary for {label} (Rust target `{triple}`).\n\n\
         It is installed by [`{MAIN_PACKAGE}`](https://www.npmjs.com/package/@pimem/pi), the pimem \
         extension for the pi coding agent (`pi install npm:{MAIN_PACKAGE}`), as an optional \
         dependency that npm installs only on matching machines. It is not meant to be installed on \
         its own. Built by `cargo xtask dist` from https://github.com/pimem/pimem.\n\n\
         Licensed under either of MIT or Apache-2.0, at your option.\n",
        name = p.package(),
        label = p.label,
        triple = p.triple,
    );
    std::fs::write(dir.join("README.md"), readme)?;
    for file in LICENSES {
        copy(&root.join(file), &dir.join(file))?;
    }
    let mut files = vec!["package.json".to_owned(), bin, "README.md".to_owned()];
    files.extend(LICENSES.iter().map(|l| (*l).to_owned()));
    Ok(files)
}

/// A platform package's package.json: `os`, `cpu`, `libc` make npm install it only where it
/// runs; `files` is its whitelist.
pub(crate) fn platform_package_json(p: &Platform, version: &str) -> Value {
    let mut pkg = json!({
        "name": p.package(),
        "version": version,
        "description": format!("The pimem binary for {}; installed by {MAIN_PACKAGE}", p.label),
        "license": "MIT OR Apache-2.0",
        "repository": {
            "type": "git",
            "url": "git+https://github.com/pimem/pimem.git",
        },
        "os": [p.os],
        "cpu": [p.cpu],
        "files": [format!("bin/{}", p.exe()), "README.md", "LICENSE-MIT", "LICENSE-APACHE"],
        "preferUnplugged": true,
    });
    if let (Some(libc), Some(obj)) = (p.libc, pkg.as_object_mut()) {
        obj.insert("libc".to_owned(), json!([libc]));
    }
    pkg
}

/// `npm pack` of `dir` into `npm_dir`, then checks the tarball: exactly `whitelist`, each
/// file's bytes as laid out, the binary executable. Returns the manifest entry.
fn pack_and_verify(dir: &Path, npm_dir: &Path, whitelist: &[&str]) -> Result<Value> {
    let npm = if cfg!(windows) { "npm.cmd" } else { "npm" };
    let out = Command::new(npm)
        .args(["pack", "--json", "--silent", "--pack-destination"])
        .arg(npm_dir)
        .current_dir(dir)
        .stderr(Stdio::inherit())
        .output()
        .context("could not start npm (needed for npm pack)")?;
    ensure!(
        out.status.success(),
        "npm pack in {} failed with {}",
        dir.display(),
        out.status
    );
    let packed: Value = serde_json::from_slice(&out.stdout)
        .with_context(|| format!("npm pack --json printed no JSON in {}", dir.display()))?;
    let info = packed
        .get(0)
        .context("npm pack --json printed an empty list")?;
    let filename = info["filename"].as_str().context("npm pack: no filename")?;
    let name = info["name"].as_str().context("npm pack: no name")?;
    let tarball = npm_dir.join(filename.replace('/', "-").trim_start_matches('@'));
    ensure!(tarball.is_file(), "npm pack wrote no {}", tarball.display());
    let listed: Vec<&str> = info["files"]
        .as_array()
        .context("npm pack: no files")?
        .iter()
        .filter_map(|f| f["path"].as_str())
        .collect();
    check_whitelist(name, &listed, whitelist)?;

    // Unpack and compare every file with what was laid out.
    let tmp = tempfile::tempdir()?;
    let status = Command::new("tar")
        .arg("-xzf")
        .arg(&tarball)
        .arg("-C")
        .arg(tmp.path())
        .status()
        .context("could not start tar")?;
    ensure!(
        status.success(),
        "tar -xzf {} failed with {status}",
        tarball.display()
    );
    let unpacked = tmp.path().join("package");
    let mut found = Vec::new();
    walk(&unpacked, &unpacked, &mut found)?;
    let found_refs: Vec<&str> = found.iter().map(String::as_str).collect();
    check_whitelist(name, &found_refs, whitelist)?;
    let mut files = Vec::new();
    for rel in whitelist {
        let shipped = std::fs::read(unpacked.join(rel))?;
        let laid_out = std::fs::read(dir.join(rel))?;
        ensure!(
            shipped == laid_out,
            "{name}: {rel} in the tarball differs from {}",
            dir.join(rel).display()
        );
        let mode = file_mode(&unpacked.join(rel))?;
        if rel.starts_with("bin/") && !cfg!(windows) {
            ensure!(
                mode & 0o111 != 0,
                "{name}: {rel} is not executable in the tarball (mode {mode:o})"
            );
        }
        files.push(json!({
            "path": rel,
            "size": shipped.len(),
            "mode": format!("{mode:o}"),
            "sha256": sha256_hex(&shipped),
        }));
    }
    let bytes = std::fs::read(&tarball)?;
    Ok(json!({
        "name": name,
        "version": info["version"],
        "dir": dir.file_name().map(|d| d.to_string_lossy().into_owned()),
        "tarball": format!("npm/{}", tarball.file_name().map(|f| f.to_string_lossy().into_owned()).unwrap_or_default()),
        "size": bytes.len(),
        "unpackedSize": info["unpackedSize"],
        "sha256": sha256_hex(&bytes),
        "integrity": info["integrity"],
        "files": files,
    }))
}

/// `got` is exactly `whitelist` (as sets), or an error naming the extra and missing files.
pub(crate) fn check_whitelist(package: &str, got: &[&str], whitelist: &[&str]) -> Result<()> {
    let extra: Vec<&&str> = got.iter().filter(|f| !whitelist.contains(f)).collect();
    let missing: Vec<&&str> = whitelist.iter().filter(|f| !got.contains(f)).collect();
    ensure!(
        extra.is_empty() && missing.is_empty(),
        "{package}: the tarball must hold exactly {whitelist:?}; extra {extra:?}, missing {missing:?}"
    );
    Ok(())
}

/// Relative paths (with `/`) of every file under `dir`.
fn walk(base: &Path, dir: &Path, out: &mut Vec<String>) -> Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let path = entry.path();
        if entry.file_type()?.is_dir() {
            walk(base, &path, out)?;
        } else {
            let rel = path.strip_prefix(base)?;
            let parts: Vec<String> = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            out.push(parts.join("/"));
        }
    }
    Ok(())
}

fn copy(from: &Path, to: &Path) -> Result<()> {
    std::fs::copy(from, to)
        .with_context(|| format!("cannot copy {} to {}", from.display(), to.display()))?;
    Ok(())
}

#[cfg(unix)]
fn set_executable(path: &Path) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755))?;
    Ok(())
}

#[cfg(not(unix))]
fn set_executable(_path: &Path) -> Result<()> {
    Ok(())
}

#[cfg(unix)]
fn file_mode(path: &Path) -> Result<u32> {
    use std::os::unix::fs::PermissionsExt;
    Ok(std::fs::metadata(path)?.permissions().mode() & 0o777)
}

#[cfg(not(unix))]
fn file_mode(_path: &Path) -> Result<u32> {
    Ok(0o644)
}

/// Lower-case hex SHA-256.
pub(crate) fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// An ELF file without a symbol table (`.symtab`); other formats are taken as stripped by
/// the profile (`strip = "symbols"`).
pub(crate) fn is_stripped(bytes: &[u8]) -> bool {
    !bytes.starts_with(b"\x7fELF") || !bytes.windows(8).any(|w| w == b".symtab\0")
}

/// A command's stdout; a failure is an error with its stderr.
fn output_text(cmd: &mut Command) -> Result<String> {
    let out = cmd
        .output()
        .with_context(|| format!("could not run {cmd:?}"))?;
    ensure!(
        out.status.success(),
        "{cmd:?} failed with {}: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr).trim()
    );
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

fn print_summary(out: &Path, built: &[Built], packages: &[Value]) {
    eprintln!("\ndist: {}", out.display());
    eprintln!("| package | tarball | size | unpacked |");
    eprintln!("|---|---|---:|---:|");
    for p in packages {
        eprintln!(
            "| {} | {} | {} | {} |",
            p["name"].as_str().unwrap_or("?"),
            p["tarball"].as_str().unwrap_or("?"),
            human(p["size"].as_u64().unwrap_or(0)),
            human(p["unpackedSize"].as_u64().unwrap_or(0)),
        );
    }
    for b in built {
        eprintln!("binary {}: {}", b.platform.key, b.checked);
    }
}

/// `1234567` → `1.18 MiB`.
pub(crate) fn human(bytes: u64) -> String {
    #[allow(clippy::cast_precision_loss)] // sizes of files, far below 2^52
    let b = bytes as f64;
    if b >= 1024.0 * 1024.0 {
        format!("{:.2} MiB", b / 1024.0 / 1024.0)
    } else if b >= 1024.0 {
        format!("{:.1} KiB", b / 1024.0)
    } else {
        format!("{bytes} B")
    }
}

/// The tarball files `dist` wrote, by package name (for the installed e2e's registry).
pub(crate) fn tarballs(out: &Path) -> Result<BTreeMap<String, PathBuf>> {
    let manifest: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("manifest.json"))?)?;
    let mut map = BTreeMap::new();
    for p in manifest["packages"]
        .as_array()
        .context("manifest has no packages")?
    {
        let name = p["name"].as_str().context("package without name")?;
        let rel = p["tarball"].as_str().context("package without tarball")?;
        map.insert(name.to_owned(), out.join(rel));
    }
    Ok(map)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn platform_packages_declare_os_cpu_and_libc_and_only_their_files() {
        let gnu = PLATFORMS.iter().find(|p| p.key == "linux-x64-gnu").unwrap();
        let pkg = platform_package_json(gnu, "1.2.3");
        assert_eq!(pkg["name"], "@pimem/linux-x64-gnu");
        assert_eq!(pkg["version"], "1.2.3");
        assert_eq!(pkg["os"], json!(["linux"]));
        assert_eq!(pkg["cpu"], json!(["x64"]));
        assert_eq!(pkg["libc"], json!(["glibc"]));
        assert_eq!(
            pkg["files"],
            json!(["bin/pimem", "README.md", "LICENSE-MIT", "LICENSE-APACHE"])
        );
        let mac = PLATFORMS.iter().find(|p| p.key == "darwin-arm64").unwrap();
        let pkg = platform_package_json(mac, "1.2.3");
        assert_eq!(pkg["os"], json!(["darwin"]));
        assert!(pkg.get("libc").is_none(), "libc is for Linux only");
    }

    #[test]
    fn the_repository_package_json_is_what_dist_ships() {
        let root = crate::project_root();
        let pkg = main_package_json(&root, env!("CARGO_PKG_VERSION")).unwrap();
        assert!(pkg.get("private").is_none());
        let mut wrong = pkg.clone();
        wrong["optionalDependencies"]["@pimem/darwin-x64"] = json!("^0.1.0");
        let e = check_main_package(&wrong, env!("CARGO_PKG_VERSION")).unwrap_err();
        assert!(e.to_string().contains("expected exactly"), "{e}");
        let e = check_main_package(&pkg, "9.9.9").unwrap_err();
        assert!(e.to_string().contains("released together"), "{e}");
        let mut extra = pkg.clone();
        extra["files"].as_array_mut().unwrap().push(json!("bin"));
        assert!(check_main_package(&extra, env!("CARGO_PKG_VERSION")).is_err());
    }

    /// The platform keys live in four places: this table, package.json (checked above), the
    /// extension's lookup and the binary's `memory_pi::platform`. They must agree.
    #[test]
    fn the_extension_and_the_binary_know_the_same_platforms() {
        let root = crate::project_root();
        let keys: Vec<String> = PLATFORMS.iter().map(|p| format!("{:?}", p.key)).collect();
        let index = std::fs::read_to_string(root.join("memory-pi/extension/index.ts")).unwrap();
        let line = index
            .lines()
            .find(|l| l.starts_with("const PLATFORM_KEYS = ["))
            .expect("index.ts declares PLATFORM_KEYS");
        assert_eq!(
            line,
            format!("const PLATFORM_KEYS = [{}];", keys.join(", "))
        );
        let rust = std::fs::read_to_string(root.join("memory-pi/src/platform.rs")).unwrap();
        let block = rust
            .split("pub const PLATFORM_KEYS: &[&str] = &[")
            .nth(1)
            .and_then(|rest| rest.split("];").next())
            .expect("platform.rs declares PLATFORM_KEYS");
        let listed: Vec<String> = block
            .split(',')
            .map(str::trim)
            .filter(|k| !k.is_empty())
            .map(str::to_owned)
            .collect();
        assert_eq!(listed, keys);
        for p in PLATFORMS {
            assert!(
                rust.contains(&format!("Some({:?})", p.key)),
                "platform.rs has no cfg arm for {}",
                p.key
            );
        }
    }

    /// A file added to the extension directory (a new module, a tool schema) must be shipped
    /// or be declared development-only here: the pi package would otherwise install without it.
    #[test]
    fn every_file_of_the_extension_directory_is_shipped_or_development_only() {
        const DEV_ONLY: &[&str] = &["tsconfig.json", ".gitignore", "bin", "node_modules"];
        let dir = crate::project_root().join("memory-pi/extension");
        for entry in std::fs::read_dir(&dir).unwrap() {
            let name = entry.unwrap().file_name().to_string_lossy().into_owned();
            assert!(
                MAIN_FILES.contains(&name.as_str()) || DEV_ONLY.contains(&name.as_str()),
                "memory-pi/extension/{name} is neither in the pi package's whitelist (MAIN_FILES, package.json \"files\") nor development-only"
            );
        }
    }

    #[test]
    fn a_tarball_with_a_file_too_many_or_too_few_is_refused() {
        let list = ["package.json", "bin/pimem"];
        check_whitelist("p", &["bin/pimem", "package.json"], &list).unwrap();
        let e = check_whitelist("p", &["package.json", "bin/pimem", ".npmrc"], &list).unwrap_err();
        assert!(e.to_string().contains(r#"extra [".npmrc"]"#), "{e}");
        let e = check_whitelist("p", &["package.json"], &list).unwrap_err();
        assert!(e.to_string().contains(r#"missing ["bin/pimem"]"#), "{e}");
    }

    #[test]
    fn targets_parse_by_key_host_and_linux_and_unknown_keys_are_refused() {
        let t = parse_targets("linux-arm64-musl, linux-x64-gnu,linux-x64-gnu").unwrap();
        assert_eq!(
            t.iter().map(|p| p.key).collect::<Vec<_>>(),
            ["linux-arm64-musl", "linux-x64-gnu"]
        );
        assert_eq!(parse_targets("linux").unwrap().len(), 4);
        assert_eq!(
            parse_targets("host").unwrap()[0].key,
            host_platform().unwrap().key
        );
        let e = parse_targets("linux-riscv64").unwrap_err();
        assert!(
            e.to_string().contains("unknown platform \"linux-riscv64\""),
            "{e}"
        );
    }

    #[test]
    fn an_existing_output_directory_is_refused_before_anything_is_built() {
        let tmp = tempfile::tempdir().unwrap();
        let opts = Options {
            out: tmp.path().to_path_buf(),
            targets: vec![&PLATFORMS[0]],
            check_arm64: false,
            quick: false,
        };
        let e = dist(&crate::project_root(), &opts).unwrap_err();
        assert!(e.to_string().contains("fresh directory only"), "{e}");
        assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 0);
    }

    #[test]
    fn elf_symbol_tables_are_detected() {
        assert!(!is_stripped(b"\x7fELF....\0.symtab\0.strtab\0"));
        assert!(is_stripped(b"\x7fELF....\0.shstrtab\0.text\0"));
        assert_eq!(human(5 * 1024 * 1024 + 1024 * 512), "5.50 MiB");
    }
}
