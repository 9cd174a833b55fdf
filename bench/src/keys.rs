//! `keys`: resolving a project's identity from a repository with a plain `.git/config`,
//! natively (memory-keys) against spawning `git rev-parse --show-toplevel` + `git config
//! --get-regexp` the way pi-memory does, in the same run. Target: native >= 10x faster.

use std::path::Path;
use std::process::Command;

use anyhow::{Context, Result, bail, ensure};
use memory_keys::{GitEnv, Source, identify_via_git, identify_with, project_dir};

use crate::timing::{HEADER, measure, row};

pub(crate) fn run() -> Result<()> {
    let tmp = tempfile::tempdir()?;
    let root = std::fs::canonicalize(tmp.path())?;
    let home = root.join("home");
    std::fs::create_dir(&home)?;
    let global = root.join("global.gitconfig");
    std::fs::write(&global, "")?;
    // Hermetic like the tests: only the repository's own config is read by either side.
    let env = GitEnv::hermetic(&home, &global);

    let repo = root.join("repo");
    std::fs::create_dir(&repo)?;
    git(&repo, &env, &["init", "-q"])?;
    git(
        &repo,
        &env,
        &[
            "remote",
            "add",
            "origin",
            "git@github.com:yandy/pi-packages.git",
        ],
    )?;
    git(
        &repo,
        &env,
        &["remote", "add", "upstream", "https://example.com/u/r.git"],
    )?;
    let deep = repo.join("src/a/b/c");
    std::fs::create_dir_all(&deep)?;
    let memory = root.join("memory");

    for cwd in [&repo, &deep] {
        let native = identify_with(cwd, &env);
        ensure!(
            native.source == Source::Native,
            "expected native reading: {native:?}"
        );
        ensure!(
            native.identity == identify_via_git(cwd, &env),
            "native and git identities differ"
        );
    }

    let cases: [(&str, &Path); 2] = [("repo root", &repo), ("4 levels below the root", &deep)];
    println!("{HEADER}");
    let mut ratios = Vec::new();
    for (label, cwd) in cases {
        let native = measure(2000, || identify_with(cwd, &env));
        let spawn = measure(100, || identify_via_git(cwd, &env));
        println!("{}", row(&format!("native identify, {label}"), &native));
        println!(
            "{}",
            row(&format!("git rev-parse + git config, {label}"), &spawn)
        );
        ratios.push((
            label,
            spawn.median.as_secs_f64() / native.median.as_secs_f64(),
        ));
    }
    let full = measure(2000, || {
        let id = identify_with(&deep, &env).identity;
        project_dir(&memory, &id, memory_keys::Platform::current())
    });
    println!(
        "{}",
        row("native identify + project_dir, 4 levels below", &full)
    );
    println!();
    for (label, ratio) in &ratios {
        println!("Ratio (git / native median), {label}: **{ratio:.0}x** (target >= 10x)");
    }
    if ratios.iter().any(|(_, r)| *r < 10.0) {
        bail!("native identity is less than 10x faster than spawning git");
    }
    Ok(())
}

fn git(cwd: &Path, env: &GitEnv, args: &[&str]) -> Result<()> {
    let mut command = Command::new("git");
    command.args(args).current_dir(cwd);
    for name in ["HOME", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_NOSYSTEM"] {
        match env.get(name) {
            Some(v) => command.env(name, v),
            None => command.env_remove(name),
        };
    }
    let status = command.status().context("cannot run git")?;
    ensure!(status.success(), "git {args:?} failed");
    Ok(())
}
