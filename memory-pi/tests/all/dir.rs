//! `pimem dir` end to end, in a hermetic git environment.
#![allow(clippy::unwrap_used)]

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

struct Sandbox {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    home: PathBuf,
    global: PathBuf,
}

impl Sandbox {
    fn new() -> Self {
        let tmp = tempfile::tempdir().unwrap();
        let root = fs::canonicalize(tmp.path()).unwrap();
        let home = root.join("home");
        fs::create_dir(&home).unwrap();
        let global = root.join("global.gitconfig");
        fs::write(&global, "").unwrap();
        Self {
            _tmp: tmp,
            root,
            home,
            global,
        }
    }

    fn command(&self, program: &str) -> Command {
        let mut c = Command::new(program);
        c.env("HOME", &self.home)
            .env("GIT_CONFIG_GLOBAL", &self.global)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env_remove("XDG_CONFIG_HOME")
            .env_remove("PI_CODING_AGENT_DIR")
            .env_remove("GIT_DIR")
            .env_remove("GIT_WORK_TREE");
        c
    }

    fn git(&self, cwd: &Path, args: &[&str]) {
        let out = self
            .command("git")
            .args(args)
            .current_dir(cwd)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    fn pimem(&self, cwd: &Path, args: &[&str]) -> Output {
        self.command(env!("CARGO_BIN_EXE_pimem"))
            .args(args)
            .current_dir(cwd)
            .output()
            .unwrap()
    }

    fn dir(&self, cwd: &Path, args: &[&str]) -> String {
        let out = self.pimem(cwd, args);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    }
}

#[test]
fn git_repo_with_remote_from_a_subdirectory() {
    let sb = Sandbox::new();
    let repo = sb.root.join("repo");
    fs::create_dir_all(repo.join("src/deep")).unwrap();
    sb.git(&repo, &["init", "-q"]);
    sb.git(
        &repo,
        &[
            "remote",
            "add",
            "origin",
            "git@github.com:yandy/pi-packages.git",
        ],
    );
    let out = sb.dir(&repo.join("src/deep"), &["dir"]);
    let expected = sb
        .home
        .join(".pi/memory/git/github.com__yandy__pi-packages");
    assert_eq!(out, format!("{}\n", expected.display()));
}

#[test]
fn local_dir_with_cwd_and_memory_dir_options() {
    let sb = Sandbox::new();
    let project = sb.root.join("plain/proj:x");
    fs::create_dir_all(&project).unwrap();
    let name = format!("{}", project.display())
        .trim_start_matches('/')
        .replace('/', "__")
        .replace(':', "_3a");
    // Global options work before or after the subcommand.
    let cwd = project.to_str().unwrap();
    let out = sb.dir(
        &sb.root,
        &["--cwd", cwd, "dir", "--memory-dir", "/mem/root/"],
    );
    assert_eq!(out, format!("/mem/root/local/{name}\n"));
    // A relative memory dir is resolved against --cwd; `~/` expands to HOME.
    let out = sb.dir(&sb.root, &["dir", "--cwd", cwd, "--memory-dir", "../m"]);
    assert_eq!(out, format!("{}/plain/m/local/{name}\n", sb.root.display()));
    let out = sb.dir(&project, &["dir", "--memory-dir", "~/notes"]);
    assert_eq!(out, format!("{}/notes/local/{name}\n", sb.home.display()));
}

#[test]
fn relative_cwd_option_is_resolved_against_the_process_cwd() {
    let sb = Sandbox::new();
    fs::create_dir_all(sb.root.join("a/b")).unwrap();
    let out = sb.dir(&sb.root, &["dir", "--cwd", "a/./b", "--memory-dir", "/m"]);
    let name = format!("{}/a/b", sb.root.display())
        .trim_start_matches('/')
        .replace('/', "__");
    assert_eq!(out, format!("/m/local/{name}\n"));
}

#[test]
fn usage_errors_exit_non_zero_on_stderr() {
    let sb = Sandbox::new();
    let out = sb.pimem(&sb.root, &[]);
    assert!(!out.status.success());
    assert!(out.stdout.is_empty());
    assert!(String::from_utf8_lossy(&out.stderr).contains("Usage"));
    let out = sb.pimem(&sb.root, &["dir", "--bogus"]);
    assert!(!out.status.success());
}
