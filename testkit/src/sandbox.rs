//! [`Sandbox`]: a temporary directory with UTF-8 paths and a hermetic environment.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use camino::{Utf8Path, Utf8PathBuf};

/// A temporary directory (canonicalised, UTF-8), removed on drop, with conventional places
/// in it: `home/` (`$HOME` of commands), `agent/` (pi's agent directory), `project/` (a
/// working directory), and an empty global git config, so nothing a test runs ever reads
/// the real `~/.pi` or `~/.gitconfig`.
#[derive(Debug)]
pub struct Sandbox {
    _tmp: tempfile::TempDir,
    root: Utf8PathBuf,
}

impl Default for Sandbox {
    fn default() -> Self {
        Sandbox::new()
    }
}

impl Sandbox {
    /// A fresh sandbox.
    pub fn new() -> Self {
        let tmp = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(tmp.path()).unwrap();
        let root = Utf8PathBuf::from_path_buf(root).expect("temp dirs have UTF-8 paths");
        Sandbox { _tmp: tmp, root }
    }

    /// The sandbox directory.
    pub fn root(&self) -> &Utf8Path {
        &self.root
    }

    /// `root/rel` (not created).
    pub fn path(&self, rel: &str) -> Utf8PathBuf {
        self.root.join(rel)
    }

    /// `root/rel`, created with its parents.
    pub fn dir(&self, rel: &str) -> Utf8PathBuf {
        let p = self.path(rel);
        std::fs::create_dir_all(&p).unwrap();
        p
    }

    /// `home/` (created).
    pub fn home(&self) -> Utf8PathBuf {
        self.dir("home")
    }

    /// `agent/`, pi's agent directory (created).
    pub fn agent_dir(&self) -> Utf8PathBuf {
        self.dir("agent")
    }

    /// `project/`, a working directory (created).
    pub fn project(&self) -> Utf8PathBuf {
        self.dir("project")
    }

    /// An empty `global.gitconfig` (created), what `GIT_CONFIG_GLOBAL` points at.
    pub fn git_global(&self) -> Utf8PathBuf {
        let p = self.path("global.gitconfig");
        if !p.exists() {
            std::fs::write(&p, "").unwrap();
        }
        p
    }

    /// `program` with a hermetic environment: `HOME` in the sandbox, an empty global git
    /// config, no system git config, none of the variables that would redirect pi or git, and
    /// no locale (`LC_ALL`, `LANG`), so the texts a person reads are English.
    pub fn command(&self, program: impl AsRef<std::ffi::OsStr>) -> Command {
        let mut c = Command::new(program);
        c.env("HOME", self.home())
            .env("GIT_CONFIG_GLOBAL", self.git_global())
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@example.com")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@example.com")
            .env_remove("XDG_CONFIG_HOME")
            .env_remove("PI_CODING_AGENT_DIR")
            .env_remove("PIMEM_MODEL_URL")
            .env_remove("PIMEM_API_KEY_ENV")
            .env_remove("GIT_DIR")
            .env_remove("GIT_WORK_TREE")
            .env_remove("LC_ALL")
            .env_remove("LANG");
        c
    }

    /// Runs `git args` in `cwd` hermetically; panics with git's stderr when it fails.
    /// Returns stdout.
    pub fn git(&self, cwd: impl AsRef<Path>, args: &[&str]) -> String {
        let out = self
            .command("git")
            .args(args)
            .current_dir(cwd)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "git {args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    }

    /// Writes `root/rel`, creating parents.
    pub fn write(&self, rel: &str, text: impl AsRef<[u8]>) {
        let p = self.path(rel);
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent).unwrap();
        }
        std::fs::write(p, text).unwrap();
    }

    /// Reads `root/rel` as text.
    pub fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.path(rel)).unwrap()
    }

    /// Every file under `root/rel` with its bytes (see [`tree`]).
    pub fn tree(&self, rel: &str) -> BTreeMap<String, Vec<u8>> {
        tree(self.path(rel).as_std_path())
    }
}

/// Every file under `root` (recursively) with its bytes, keyed by relative path;
/// directories as `dir/` and anything else (symlinks, FIFOs) as `name@`, both with no
/// bytes. Comparing two trees proves a call left the disk unchanged. A file that vanishes
/// between the listing and the read (a `.lock` or temp file of a writer that is being
/// refused at that moment) is left out, as if listed a moment later.
pub fn tree(root: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, Vec<u8>>) {
        let Ok(rd) = std::fs::read_dir(dir) else {
            return;
        };
        for e in rd {
            let e = e.unwrap();
            let path = e.path();
            let rel = path
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            let ft = e.file_type().unwrap();
            if ft.is_dir() {
                out.insert(format!("{rel}/"), Vec::new());
                walk(root, &path, out);
            } else if ft.is_file() {
                match std::fs::read(&path) {
                    Ok(bytes) => {
                        out.insert(rel, bytes);
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                    Err(e) => panic!("cannot read {}: {e}", path.display()),
                }
            } else {
                out.insert(format!("{rel}@"), Vec::new());
            }
        }
    }
    walk(root, root, &mut out);
    out
}
