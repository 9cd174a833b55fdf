//! `cargo xtask e2e --installed [--dist DIR | --quick]`: the npm packages as a user gets them.
//!
//! 1. Packs the packages (`cargo xtask dist --targets host` into a fresh directory under the
//!    target directory; with `--quick`, as `cargo xtask ci` runs it, `dist --quick`: the debug
//!    binary `cargo xtask e2e` built, no release build), or takes a finished `dist` output with
//!    `--dist DIR`.
//! 2. Serves them from a local npm registry on 127.0.0.1 (`memory-pi/e2e/registry.mjs`), which
//!    also lists the platforms not built in this run, with their `os`/`cpu`/`libc`.
//! 3. In a temporary `HOME` and agent directory, with a `PATH` holding only Node 22, npm and the
//!    system directories (no cargo, no rustc, no pimem) and no `PIMEM_BIN`, runs
//!    `pi install npm:@pimem/pi`: pi's own `npm install @pimem/pi --prefix <agentDir>/npm`,
//!    which resolves the optionalDependencies like the public registry would. The install is
//!    timed, with a cold npm cache.
//! 4. Checks that exactly the pi package and this machine's platform package landed (and that
//!    npm fetched no other tarball), and that the installed binary reports this version.
//! 5. Runs the whole pi e2e suite (`memory-pi/e2e/run.mjs`) against the installed copy
//!    (`PIMEM_E2E_INSTALLED`): every pi process loads the installed extension and finds the
//!    binary through the platform package.

use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail, ensure};
use serde_json::Value;

use super::dist::{self, MAIN_PACKAGE};
use super::{install_host, on_path, target_dir};

/// Environment variables the installed run must not inherit: cargo's, rustup's, ours, npm's.
fn inherited(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    !(upper.starts_with("CARGO")
        || upper.starts_with("RUSTUP")
        || upper.starts_with("RUSTC")
        || upper.starts_with("RUST_")
        || upper.starts_with("PIMEM_")
        || upper.starts_with("NPM_CONFIG_")
        || upper == "PATH"
        || upper == "HOME"
        || upper == "PI_CODING_AGENT_DIR")
}

/// Kills the registry when the run ends, however it ends.
struct Registry(Child);

impl Drop for Registry {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `cargo xtask e2e --installed`.
pub(crate) fn e2e_installed(root: &Path, args: &[String]) -> Result<()> {
    let mut dist_dir = None;
    let mut installed = false;
    let mut quick = false;
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--installed" => installed = true,
            "--quick" => quick = true,
            "--dist" => {
                dist_dir = Some(PathBuf::from(
                    it.next().context("--dist needs a directory")?,
                ))
            }
            other => bail!(
                "cargo xtask e2e: unknown option {other:?}; usage: cargo xtask e2e [--installed [--dist DIR | --quick]]"
            ),
        }
    }
    ensure!(
        installed,
        "cargo xtask e2e: --dist and --quick need --installed"
    );
    ensure!(
        !(quick && dist_dir.is_some()),
        "cargo xtask e2e --installed: --quick packs a new dist output; --dist takes a finished one: pass one of them"
    );
    let host = dist::host_platform().context("pimem ships no package for this platform")?;
    let scratch = target_dir(root).join("e2e-installed");
    let (dist_dir, made_here) = match dist_dir {
        Some(dir) => (
            dir.canonicalize()
                .with_context(|| format!("no dist output at {}", dir.display()))?,
            false,
        ),
        None => {
            std::fs::create_dir_all(&scratch)?;
            let stamp = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_secs())
                .unwrap_or_default();
            let opts = dist::Options {
                out: scratch.join(format!("dist-{stamp}-{}", std::process::id())),
                targets: vec![host],
                check_arm64: false,
                quick,
            };
            (dist::dist(root, &opts)?, true)
        }
    };
    let tarballs = dist::tarballs(&dist_dir)?;
    ensure!(
        tarballs.contains_key(MAIN_PACKAGE) && tarballs.contains_key(&host.package()),
        "{} has no {MAIN_PACKAGE} or {} tarball",
        dist_dir.display(),
        host.package()
    );

    let pi_host = install_host(root)?;
    let (node_dir, pi_cli) = (pi_host.var("NODE22_BIN")?, pi_host.var("PI_CLI")?);
    let tmp = tempfile::Builder::new()
        .prefix("pimem-installed-")
        .tempdir()?;
    let work = tmp.path().canonicalize()?;
    let home = work.join("home");
    let agent = work.join("agent");
    std::fs::create_dir_all(&home)?;

    // PATH: Node 22 and npm (links in a directory of their own), then the system directories.
    let shims = work.join("path");
    std::fs::create_dir_all(&shims)?;
    let npm = on_path("npm")
        .context("npm is needed to install the packages (`pi install npm:` runs it)")?;
    link(&node_dir.join("node"), &shims.join("node"))?;
    link(&npm.canonicalize()?, &shims.join("npm"))?;
    let path = std::env::join_paths([shims.clone(), "/usr/bin".into(), "/bin".into()])?;
    for tool in ["cargo", "rustc", "pimem"] {
        let hit = std::env::split_paths(&path)
            .map(|d| d.join(tool))
            .find(|p| p.is_file());
        ensure!(hit.is_none(), "{} is on the installed run's PATH", tool);
    }

    // The registry.
    let port_file = work.join("registry.port");
    let log_file = work.join("registry.log");
    let registry = Registry(
        Command::new(node_dir.join("node"))
            .arg(root.join("memory-pi/e2e/registry.mjs"))
            .arg(&dist_dir)
            .arg(&port_file)
            .arg(&log_file)
            .spawn()
            .context("could not start the local npm registry")?,
    );
    let port = wait_for_port(&port_file)?;
    let registry_url = format!("http://127.0.0.1:{port}/");

    // pi install npm:@pimem/pi, as a user without cargo runs it.
    let clean_env = |cmd: &mut Command| {
        cmd.env_clear();
        for (k, v) in std::env::vars_os() {
            if inherited(&k.to_string_lossy()) {
                cmd.env(k, v);
            }
        }
        cmd.env("HOME", &home)
            .env("PI_CODING_AGENT_DIR", &agent)
            .env("PATH", &path);
    };
    let mut install = Command::new(node_dir.join("node"));
    install
        .arg(&pi_cli)
        .args(["install", &format!("npm:{MAIN_PACKAGE}")]);
    clean_env(&mut install);
    install
        .env("npm_config_registry", &registry_url)
        .env("npm_config_cache", work.join("npm-cache"))
        .env("npm_config_update_notifier", "false")
        .env("PI_SKIP_VERSION_CHECK", "1")
        .env("PI_TELEMETRY", "0")
        .current_dir(&home);
    eprintln!(
        "$ pi install npm:{MAIN_PACKAGE}   (registry {registry_url}, HOME {})",
        home.display()
    );
    let t0 = Instant::now();
    let status = install.status().context("could not start pi install")?;
    let install_time = t0.elapsed();
    ensure!(
        status.success(),
        "pi install npm:{MAIN_PACKAGE} failed with {status}"
    );

    // Exactly the pi package and this platform's landed; npm fetched no other tarball.
    let scope_dir = agent.join("npm/node_modules/@pimem");
    let mut landed: Vec<String> = std::fs::read_dir(&scope_dir)
        .with_context(|| format!("pi install left no {}", scope_dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.file_name().to_string_lossy().into_owned()))
        .collect();
    landed.sort();
    let mut want = vec!["pi".to_owned(), host.key.to_owned()];
    want.sort();
    ensure!(
        landed == want,
        "npm installed @pimem/{landed:?}, expected exactly @pimem/{want:?}"
    );
    let fetched: Vec<String> = std::fs::read_to_string(&log_file)?
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter_map(|v| v["url"].as_str().map(str::to_owned))
        .filter(|u| u.starts_with("/-/"))
        .collect();
    ensure!(
        fetched.len() == 2
            && fetched
                .iter()
                .all(|u| u.contains("pimem-pi-") || u.contains(host.key)),
        "npm fetched the tarballs {fetched:?}; expected only the pi package's and {}'s",
        host.package()
    );
    drop(registry);
    let binary = scope_dir.join(host.key).join("bin").join(host.exe());
    let version = Command::new(&binary)
        .arg("--version")
        .output()
        .with_context(|| format!("cannot run the installed {}", binary.display()))?;
    let want_version = format!(
        "pimem {} (protocol 1, {})",
        env!("CARGO_PKG_VERSION"),
        host.key
    );
    ensure!(
        String::from_utf8_lossy(&version.stdout).trim_end() == want_version,
        "the installed binary says {:?}, expected {want_version:?}",
        String::from_utf8_lossy(&version.stdout)
    );
    eprintln!(
        "e2e --installed: `pi install npm:{MAIN_PACKAGE}` took {:.1} s (cold npm cache, local registry); landed @pimem/{{{}}}",
        install_time.as_secs_f64(),
        landed.join(", ")
    );

    // The whole suite against the installed copy.
    let suite = root.join("memory-pi/e2e/run.mjs");
    eprintln!(
        "$ PIMEM_E2E_INSTALLED={} node {}",
        agent.display(),
        suite.display()
    );
    let mut run = Command::new(node_dir.join("node"));
    run.arg(&suite);
    clean_env(&mut run);
    let status = run
        .env("PI_CLI", &pi_cli)
        .env("PIMEM_E2E_INSTALLED", &agent)
        .env("PIMEM_BIN", &binary)
        .current_dir(root)
        .status()
        .context("could not start the e2e suite")?;
    ensure!(
        status.success(),
        "e2e suite against the installed packages failed with {status}"
    );
    eprintln!(
        "e2e --installed: passed; install {:.1} s; tarballs: {}",
        install_time.as_secs_f64(),
        tarballs
            .iter()
            .map(|(name, path)| format!(
                "{name} {}",
                std::fs::metadata(path)
                    .map(|m| dist::human(m.len()))
                    .unwrap_or_default()
            ))
            .collect::<Vec<_>>()
            .join(", ")
    );
    if made_here {
        std::fs::remove_dir_all(&dist_dir)?;
    }
    Ok(())
}

/// The registry writes its port once it listens.
fn wait_for_port(file: &Path) -> Result<u16> {
    let t0 = Instant::now();
    while t0.elapsed() < Duration::from_secs(20) {
        if let Ok(text) = std::fs::read_to_string(file)
            && let Ok(port) = text.trim().parse()
        {
            return Ok(port);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    bail!("the local npm registry did not start within 20 s")
}

#[cfg(unix)]
fn link(target: &Path, link: &Path) -> Result<()> {
    std::os::unix::fs::symlink(target, link)
        .with_context(|| format!("cannot link {} to {}", link.display(), target.display()))
}

#[cfg(not(unix))]
fn link(target: &Path, link: &Path) -> Result<()> {
    std::fs::copy(target, link)
        .map(|_| ())
        .with_context(|| format!("cannot copy {} to {}", target.display(), link.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_installed_run_inherits_no_cargo_rust_pimem_or_npm_settings() {
        for name in [
            "CARGO_HOME",
            "cargo_target_dir",
            "RUSTUP_TOOLCHAIN",
            "RUSTC_WRAPPER",
            "RUST_LOG",
            "PIMEM_BIN",
            "npm_config_registry",
            "PATH",
            "HOME",
            "PI_CODING_AGENT_DIR",
        ] {
            assert!(!inherited(name), "{name}");
        }
        for name in ["LANG", "TERM", "TMPDIR", "PI_OFFLINE"] {
            assert!(inherited(name), "{name}");
        }
    }
}
