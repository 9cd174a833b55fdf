//! Baseline tests: real repositories built with the `git` CLI in temp dirs, checking that
//! the native reader agrees with `git rev-parse --show-toplevel` and `git config
//! --get-regexp` on each, that the identity matches the original's algorithm
//! ([`identify_via_git`]) and the VECTORS §A41-A53 expectations. Every git process runs in
//! a hermetic environment (empty global config, no system config, HOME in the sandbox).

#![allow(clippy::unwrap_used)]

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use tempfile::TempDir;

use crate::env::GitEnv;
use crate::identity::absolute;
use crate::native::{self, Repo};
use crate::{
    Platform, ProjectIdentity, ProjectKind, Source, gitcmd, identify_via_git, identify_with,
    normalize_remote_url,
};

struct Sandbox {
    _tmp: TempDir,
    root: PathBuf,
    global: PathBuf,
    env: GitEnv,
}

impl Sandbox {
    fn new() -> Self {
        let tmp = tempfile::tempdir().unwrap();
        let root = fs::canonicalize(tmp.path()).unwrap();
        let home = root.join("home");
        fs::create_dir(&home).unwrap();
        let global = root.join("global.gitconfig");
        fs::write(&global, "").unwrap();
        let env = GitEnv::hermetic(&home, &global);
        Self {
            _tmp: tmp,
            root,
            global,
            env,
        }
    }

    fn git(&self, cwd: &Path, args: &[&str]) -> String {
        let mut command = Command::new("git");
        command
            .args(args)
            .current_dir(cwd)
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@example.com")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@example.com");
        self.env.apply(&mut command);
        let out = command.output().unwrap();
        assert!(
            out.status.success(),
            "git {args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    }

    /// `git init` in `<root>/<rel>` with one empty commit.
    fn repo(&self, rel: &str) -> PathBuf {
        let path = self.root.join(rel);
        fs::create_dir_all(&path).unwrap();
        self.git(&path, &["init", "-q", "-b", "main"]);
        self.git(&path, &["commit", "-q", "--allow-empty", "-m", "init"]);
        path
    }

    fn with_remotes(&self, rel: &str, remotes: &[(&str, &str)]) -> PathBuf {
        let path = self.repo(rel);
        for (name, url) in remotes {
            self.git(
                &path,
                &["config", "--add", &format!("remote.{name}.url"), url],
            );
        }
        path
    }

    /// Identity of `cwd`, checked against git: the identity equals the original algorithm's,
    /// and when read natively, the toplevel and remote list equal git's raw answers.
    fn check(&self, cwd: &Path) -> (ProjectIdentity, Source) {
        let id = identify_with(cwd, &self.env);
        assert_eq!(
            id.identity,
            identify_via_git(cwd, &self.env),
            "native and git identities differ for {}",
            cwd.display()
        );
        if id.source == Source::Native {
            let abs = absolute(cwd);
            let git_top = gitcmd::toplevel(&abs, &self.env);
            match native::discover(&abs, &self.env).unwrap() {
                Repo::WorkTree(tree) => {
                    assert_eq!(
                        Some(tree.toplevel.to_string_lossy().into_owned()),
                        git_top,
                        "toplevel of {}",
                        cwd.display()
                    );
                    assert_eq!(
                        native::remote_urls(&tree, &self.env).unwrap(),
                        gitcmd::remote_urls(&abs, &self.env),
                        "remote list of {}",
                        cwd.display()
                    );
                }
                Repo::Outside | Repo::NoWorkTree => assert_eq!(git_top, None),
            }
        }
        (id.identity, id.source)
    }

    fn native(&self, cwd: &Path) -> ProjectIdentity {
        let (identity, source) = self.check(cwd);
        assert_eq!(
            source,
            Source::Native,
            "expected native reading for {}",
            cwd.display()
        );
        identity
    }

    fn fallback(&self, cwd: &Path) -> ProjectIdentity {
        let (identity, source) = self.check(cwd);
        assert!(
            matches!(source, Source::Git { .. }),
            "expected the git fallback for {}",
            cwd.display()
        );
        identity
    }
}

fn git_id(key: &str) -> ProjectIdentity {
    ProjectIdentity {
        kind: ProjectKind::Git,
        key: key.to_owned(),
    }
}

fn local_id(path: &Path) -> ProjectIdentity {
    ProjectIdentity {
        kind: ProjectKind::Local,
        key: path.to_string_lossy().into_owned(),
    }
}

#[test]
fn remotes_of_every_form() {
    let sb = Sandbox::new();
    let urls = [
        "https://github.com/yandy/pi-packages.git",
        "http://example.com/team/repo.git",
        "git@github.com:yandy/pi-packages.git",
        "github.com:yandy/pi-packages.git",
        "ssh://git@gitlab.com:2222/grp/sub/repo.git",
        "git://github.com:9418/yandy/pi-packages.git",
        "git+ssh://git@github.com/yandy/pi-packages.git",
        "git+https://github.com/yandy/pi-packages.git",
        "https://user:pa@ss@github.com/o/r.git",
        "[2001:db8::1]:o/r.git",
        "https://例子.com/o/r.git",
        "https://GitHub.com/Owner/Repo.GIT",
        "github.com:o/r x.git",
        "file:///srv/repos/foo.git",
        "/srv/repos/bar",
        "../repo",
        "https://github.com/",
        "",
    ];
    for (i, url) in urls.iter().enumerate() {
        let repo = sb.with_remotes(&format!("forms/{i}"), &[("origin", url)]);
        let expected = match normalize_remote_url(url, Platform::Posix) {
            Some(key) => git_id(&key),
            None => local_id(&repo),
        };
        assert_eq!(sb.native(&repo), expected, "remote {url:?}");
    }
}

#[test]
fn a41_origin_wins_over_alphabetical() {
    let sb = Sandbox::new();
    let repo = sb.with_remotes(
        "a41",
        &[
            ("aaa", "https://example.com/aaa/repo.git"),
            ("origin", "https://example.com/origin/repo.git"),
        ],
    );
    assert_eq!(sb.native(&repo), git_id("example.com/origin/repo"));
}

#[test]
fn a42_alphabetical_without_origin() {
    let sb = Sandbox::new();
    let repo = sb.with_remotes(
        "a42",
        &[
            ("zeta", "https://example.com/zeta/repo.git"),
            ("alpha", "https://example.com/alpha/repo.git"),
        ],
    );
    assert_eq!(sb.native(&repo), git_id("example.com/alpha/repo"));
}

#[test]
fn a43_first_usable_remote() {
    let sb = Sandbox::new();
    let repo = sb.with_remotes(
        "a43",
        &[
            ("origin", "/srv/mirror/pi-packages.git"),
            ("upstream", "https://github.com/yandy/pi-packages.git"),
        ],
    );
    assert_eq!(sb.native(&repo), git_id("github.com/yandy/pi-packages"));
}

#[test]
fn a44_global_insteadof_is_ignored() {
    let sb = Sandbox::new();
    fs::write(
        &sb.global,
        "[url \"/srv/mirror/\"]\n\tinsteadOf = https://github.com/\n",
    )
    .unwrap();
    let repo = sb.with_remotes(
        "a44",
        &[("origin", "https://github.com/yandy/pi-packages.git")],
    );
    assert_eq!(sb.native(&repo), git_id("github.com/yandy/pi-packages"));
}

#[test]
fn a45_first_of_several_fetch_urls() {
    let sb = Sandbox::new();
    let repo = sb.repo("a45");
    sb.git(
        &repo,
        &[
            "remote",
            "add",
            "origin",
            "https://github.com/yandy/pi-packages.git",
        ],
    );
    sb.git(
        &repo,
        &[
            "remote",
            "set-url",
            "--add",
            "origin",
            "https://second.example.com/o/r.git",
        ],
    );
    assert_eq!(sb.native(&repo), git_id("github.com/yandy/pi-packages"));
}

#[test]
fn a46_push_url_is_ignored() {
    let sb = Sandbox::new();
    let repo = sb.repo("a46");
    sb.git(
        &repo,
        &[
            "remote",
            "add",
            "origin",
            "https://github.com/yandy/pi-packages.git",
        ],
    );
    sb.git(
        &repo,
        &[
            "remote",
            "set-url",
            "--push",
            "origin",
            "https://push.example.com/o/r.git",
        ],
    );
    assert_eq!(sb.native(&repo), git_id("github.com/yandy/pi-packages"));
}

#[test]
fn a47_a48_no_remote_and_subdirectory() {
    let sb = Sandbox::new();
    let repo = sb.repo("a47");
    assert_eq!(sb.native(&repo), local_id(&repo));
    let inner = repo.join("packages/inner");
    fs::create_dir_all(&inner).unwrap();
    assert_eq!(sb.native(&inner), local_id(&repo));
    let remote = sb.with_remotes("a48", &[("origin", "git@github.com:o/r.git")]);
    let inner = remote.join("packages/inner");
    fs::create_dir_all(&inner).unwrap();
    assert_eq!(sb.native(&inner), sb.native(&remote));
}

#[test]
fn a49_linked_worktree_shares_the_git_directory() {
    let sb = Sandbox::new();
    let main = sb.with_remotes("a49/main", &[("origin", "https://github.com/o/r.git")]);
    let wt = sb.root.join("a49/wt");
    sb.git(&main, &["worktree", "add", "-q", wt.to_str().unwrap()]);
    assert_eq!(sb.native(&wt), git_id("github.com/o/r"));
    fs::create_dir_all(wt.join("sub")).unwrap();
    assert_eq!(sb.native(&wt.join("sub")), git_id("github.com/o/r"));
    // Without a remote a worktree is keyed by its own root, like `--show-toplevel`.
    let plain = sb.repo("a49/plain");
    let wt2 = sb.root.join("a49/wt2");
    sb.git(&plain, &["worktree", "add", "-q", wt2.to_str().unwrap()]);
    assert_eq!(sb.native(&wt2), local_id(&wt2));
}

#[test]
fn a50_two_clones_different_protocols_one_identity() {
    let sb = Sandbox::new();
    let a = sb.with_remotes("a50/https", &[("origin", "https://github.com/o/r.git")]);
    let b = sb.with_remotes("a50/scp", &[("origin", "git@github.com:o/r.git")]);
    assert_eq!(sb.native(&a), sb.native(&b));
}

#[test]
fn a51_bare_repository_is_local() {
    let sb = Sandbox::new();
    let bare = sb.root.join("a51.git");
    fs::create_dir(&bare).unwrap();
    sb.git(&bare, &["init", "-q", "--bare"]);
    sb.git(
        &bare,
        &["remote", "add", "origin", "https://github.com/o/r.git"],
    );
    assert_eq!(sb.native(&bare), local_id(&bare));
    assert_eq!(
        sb.native(&bare.join("objects")),
        local_id(&bare.join("objects"))
    );
}

#[test]
fn a52_cwd_inside_dot_git_is_local() {
    let sb = Sandbox::new();
    let repo = sb.with_remotes("a52", &[("origin", "https://github.com/o/r.git")]);
    let dot_git = repo.join(".git");
    assert_eq!(sb.native(&dot_git), local_id(&dot_git));
    let objects = dot_git.join("objects");
    assert_eq!(sb.native(&objects), local_id(&objects));
}

#[test]
fn a53_non_git_and_deleted_cwd() {
    let sb = Sandbox::new();
    let plain = sb.root.join("plain/dir");
    fs::create_dir_all(&plain).unwrap();
    assert_eq!(sb.native(&plain), local_id(&plain));
    let gone = sb.root.join("gone");
    fs::create_dir(&gone).unwrap();
    fs::remove_dir(&gone).unwrap();
    assert_eq!(sb.native(&gone), local_id(&gone));
    // A relative spelling resolves lexically (Node's resolve), not through symlinks.
    let dotted = sb.root.join("plain/./dir/../dir");
    assert_eq!(sb.native(&dotted), local_id(&plain));
}

#[test]
fn symlinked_cwd_uses_the_physical_toplevel() {
    let sb = Sandbox::new();
    let repo = sb.repo("real/repo");
    let link = sb.root.join("link");
    std::os::unix::fs::symlink(sb.root.join("real"), &link).unwrap();
    // git prints the physical root; the original keys a remote-less repo by it.
    assert_eq!(sb.native(&link.join("repo")), local_id(&repo));
    // Outside a repository the key is the logical cwd.
    let plain = sb.root.join("real/plain");
    fs::create_dir(&plain).unwrap();
    assert_eq!(
        sb.native(&link.join("plain")),
        local_id(&link.join("plain"))
    );
}

#[test]
fn global_remote_urls_come_first() {
    let sb = Sandbox::new();
    fs::write(
        &sb.global,
        "[remote \"origin\"]\n\turl = https://global.example.com/g/r.git\n",
    )
    .unwrap();
    let repo = sb.with_remotes("global", &[("origin", "https://github.com/o/r.git")]);
    assert_eq!(sb.native(&repo), git_id("global.example.com/g/r"));
}

#[test]
fn remote_name_case_and_valueless_url() {
    let sb = Sandbox::new();
    let repo = sb.repo("case");
    fs::write(
        repo.join(".git/config"),
        concat!(
            "[core]\n\trepositoryformatversion = 0\n\tbare = false\n",
            "[Remote \"Origin\"]\n\tURL = https://example.com/upper/r.git\n",
            "[remote \"origin\"]\n\turl\n\turl = https://example.com/second/r.git\n",
            "[remote.beta]\n\turl = \"https://example.com/beta/r.git\" ; comment\n",
        ),
    )
    .unwrap();
    // `origin`'s first URL is value-less (unusable); `Origin` sorts before `beta`.
    assert_eq!(sb.native(&repo), git_id("example.com/upper/r"));
}

#[test]
fn worktree_config_extension_is_read() {
    let sb = Sandbox::new();
    let repo = sb.repo("wtconfig");
    sb.git(&repo, &["config", "extensions.worktreeConfig", "true"]);
    sb.git(
        &repo,
        &[
            "config",
            "--worktree",
            "remote.origin.url",
            "https://example.com/wt/r.git",
        ],
    );
    assert_eq!(sb.native(&repo), git_id("example.com/wt/r"));
}

#[test]
fn include_without_remotes_stays_native() {
    let sb = Sandbox::new();
    let repo = sb.with_remotes("inc-plain", &[("origin", "https://github.com/o/r.git")]);
    fs::write(repo.join(".git/extra.config"), "[user]\n\tname = x\n").unwrap();
    sb.git(&repo, &["config", "include.path", "extra.config"]);
    sb.git(
        &repo,
        &[
            "config",
            "includeIf.gitdir:/nowhere/.path",
            "missing.config",
        ],
    );
    assert_eq!(sb.native(&repo), git_id("github.com/o/r"));
}

#[test]
fn include_with_remotes_falls_back_to_git() {
    let sb = Sandbox::new();
    let repo = sb.repo("inc-remote");
    fs::write(
        repo.join(".git/remotes.config"),
        "[remote \"origin\"]\n\turl = https://example.com/included/r.git\n",
    )
    .unwrap();
    sb.git(&repo, &["config", "include.path", "remotes.config"]);
    assert_eq!(sb.fallback(&repo), git_id("example.com/included/r"));
    // A conditional include whose condition is false: git ignores it.
    let other = sb.with_remotes("inc-cond", &[("upstream", "https://example.com/up/r.git")]);
    fs::write(
        other.join(".git/cond.config"),
        "[remote \"origin\"]\n\turl = https://example.com/cond/r.git\n",
    )
    .unwrap();
    sb.git(
        &other,
        &["config", "includeIf.gitdir:/nowhere/.path", "cond.config"],
    );
    assert_eq!(sb.fallback(&other), git_id("example.com/up/r"));
    // ... and a true condition includes it.
    let cond = format!("includeIf.gitdir:{}/.path", other.display());
    sb.git(&other, &["config", &cond, "cond.config"]);
    assert_eq!(sb.fallback(&other), git_id("example.com/cond/r"));
}

#[test]
fn invalid_config_degrades_like_git() {
    let sb = Sandbox::new();
    let repo = sb.with_remotes("broken", &[("origin", "https://github.com/o/r.git")]);
    let config = repo.join(".git/config");
    let mut text = fs::read_to_string(&config).unwrap();
    text.push_str("[broken\n");
    fs::write(&config, text).unwrap();
    // git refuses to run, so the original falls back to local/resolve(cwd).
    assert_eq!(sb.fallback(&repo), local_id(&repo));
}

#[test]
fn core_worktree_and_git_dir_env_fall_back() {
    let sb = Sandbox::new();
    let repo = sb.with_remotes("cwt", &[("origin", "https://github.com/o/r.git")]);
    sb.git(&repo, &["config", "core.worktree", repo.to_str().unwrap()]);
    assert_eq!(sb.fallback(&repo), git_id("github.com/o/r"));

    let other = sb.with_remotes("envdir", &[("origin", "https://github.com/e/r.git")]);
    let elsewhere = sb.root.join("elsewhere");
    fs::create_dir(&elsewhere).unwrap();
    let env = sb
        .env
        .clone()
        .with("GIT_DIR", Some(other.join(".git").as_os_str()));
    let id = identify_with(&elsewhere, &env);
    assert!(matches!(id.source, Source::Git { .. }));
    assert_eq!(id.identity, identify_via_git(&elsewhere, &env));
}

#[test]
fn invalid_gitfile_falls_back() {
    let sb = Sandbox::new();
    let dir = sb.root.join("badgitfile");
    fs::create_dir(&dir).unwrap();
    fs::write(dir.join(".git"), "not a gitfile\n").unwrap();
    assert_eq!(sb.fallback(&dir), local_id(&dir));
}

mod written_by_git {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(24))]

        /// Whatever remote names and URLs `git config` writes (quotes, backslashes, tabs,
        /// newlines, leading spaces, `#`, non-ASCII), the native reader reads them exactly as
        /// git does, and the identity agrees.
        #[test]
        fn native_reads_what_git_writes(
            remotes in prop::collection::vec(
                ("[a-zA-Z0-9 \"\\\\#;.\u{e9}\u{1F600}-]{1,12}", "[ -~\t\n\u{e9}\u{4f8b}]{0,30}"),
                1..4,
            ),
        ) {
            let sb = Sandbox::new();
            let repo = sb.repo("r");
            for (name, url) in &remotes {
                sb.git(&repo, &["config", "--add", &format!("remote.{name}.url"), url]);
            }
            let (_, source) = sb.check(&repo);
            prop_assert_eq!(source, Source::Native);
        }
    }
}
