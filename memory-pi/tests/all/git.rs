//! Memory in git with real git in temp dirs (`memory_pi::gitmem`): team memories added on two
//! branches of two clones merge through `pimem merge-index` without conflict; a same-entry
//! edit conflicts only in that entry file and the doctor reports it; `pimem sync` keeps two
//! memory roots in step through a bare repository, with concurrent edits on both sides.
#![allow(clippy::unwrap_used)]

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Output;

use camino::Utf8PathBuf;
use memory_core::{AddRequest, ReplaceRequest, Store, StoreOptions};
use memory_index::parse_index;
use memory_pi::gitmem;
use testkit::Sandbox;

fn pimem(sb: &Sandbox, cwd: &Path, args: &[&str]) -> Output {
    sb.command(env!("CARGO_BIN_EXE_pimem"))
        .args(args)
        .current_dir(cwd)
        .output()
        .unwrap()
}

fn pimem_ok(sb: &Sandbox, cwd: &Path, args: &[&str]) -> String {
    let out = pimem(sb, cwd, args);
    assert!(
        out.status.success(),
        "pimem {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn store(dir: &Path) -> Store {
    Store::new(
        Utf8PathBuf::from_path_buf(dir.to_path_buf()).unwrap(),
        StoreOptions::default(),
    )
}

fn add(dir: &Path, name: &str, body: &str) {
    store(dir)
        .add(AddRequest {
            name: name.into(),
            body: body.into(),
            ..AddRequest::default()
        })
        .unwrap();
}

fn replace(dir: &Path, name: &str, body: &str, description: &str) {
    store(dir)
        .replace(ReplaceRequest {
            reference: name.into(),
            body: Some(body.into()),
            description: Some(description.into()),
            ..ReplaceRequest::default()
        })
        .unwrap();
}

/// Entry files of `dir` and the files its index lists (each once), asserting they agree.
fn consistent_entries(dir: &Path) -> BTreeSet<String> {
    let index = std::fs::read_to_string(dir.join("MEMORY.md")).unwrap();
    assert!(!gitmem::has_conflict_markers(&index), "{index}");
    let listed: Vec<String> = parse_index(&index)
        .entries
        .into_iter()
        .map(|e| e.line.file)
        .collect();
    let set: BTreeSet<String> = listed.iter().cloned().collect();
    assert_eq!(set.len(), listed.len(), "duplicate index lines: {index}");
    let files: BTreeSet<String> = store(dir)
        .list()
        .unwrap()
        .iter()
        .map(|e| e.file.clone())
        .collect();
    assert_eq!(
        set,
        files,
        "index and entry files disagree in {}",
        dir.display()
    );
    let scan = gitmem::scan_dir(dir);
    assert!(scan.is_clean(), "{scan:?}");
    files
}

fn names(list: &[&str]) -> BTreeSet<String> {
    list.iter().map(|s| (*s).to_owned()).collect()
}

/// An origin repository with team memory (`.pi/memory/`, one entry), `pimem git setup` done
/// and committed, and two clones of it, each with the driver registered.
struct Team {
    sb: Sandbox,
    origin: PathBuf,
    one: PathBuf,
    two: PathBuf,
}

impl Team {
    fn new() -> Team {
        let sb = Sandbox::new();
        let origin = sb.dir("origin").into_std_path_buf();
        sb.git(&origin, &["init", "--quiet", "--initial-branch=main"]);
        sb.write("origin/src/lib.rs", "fn main() {}\n");
        add(&origin.join(".pi/memory"), "Use pnpm", "pnpm, never npm.");
        let out = pimem_ok(&sb, &origin, &["git", "setup"]);
        assert!(
            out.contains("added `.pi/memory/**/MEMORY.md merge=pimem-index`"),
            "{out}"
        );
        sb.git(&origin, &["add", "--all"]);
        sb.git(&origin, &["commit", "--quiet", "-m", "team memory"]);
        let committed = sb.git(&origin, &["ls-files"]);
        assert_eq!(
            committed,
            ".gitattributes\n.pi/memory/.gitignore\n.pi/memory/MEMORY.md\n.pi/memory/Use-pnpm.md\nsrc/lib.rs\n",
            "no lock, snapshot or cache is committed"
        );
        let mut clones = Vec::new();
        for name in ["one", "two"] {
            let path = sb.path(name).into_std_path_buf();
            sb.git(
                sb.root(),
                &["clone", "--quiet", origin.to_str().unwrap(), name],
            );
            let out = pimem_ok(&sb, &path, &["git", "setup"]);
            assert!(out.contains("already routes"), "{out}");
            clones.push(path);
        }
        let two = clones.pop().unwrap();
        let one = clones.pop().unwrap();
        Team {
            sb,
            origin,
            one,
            two,
        }
    }

    fn commit_on(&self, clone: &Path, branch: &str) {
        self.sb.git(clone, &["checkout", "--quiet", "-b", branch]);
        self.sb.git(clone, &["add", "--all"]);
        self.sb.git(clone, &["commit", "--quiet", "-m", branch]);
        self.sb.git(clone, &["push", "--quiet", "origin", branch]);
    }
}

#[test]
fn setup_is_idempotent() {
    let t = Team::new();
    let config = std::fs::read_to_string(t.one.join(".git/config")).unwrap();
    let attributes = std::fs::read_to_string(t.one.join(".gitattributes")).unwrap();
    let out = pimem_ok(&t.sb, &t.one, &["git", "setup"]);
    assert!(out.contains("already registered"), "{out}");
    assert_eq!(
        std::fs::read_to_string(t.one.join(".git/config")).unwrap(),
        config
    );
    assert_eq!(
        std::fs::read_to_string(t.one.join(".gitattributes")).unwrap(),
        attributes
    );
    let driver = t.sb.git(&t.one, &["config", "merge.pimem-index.driver"]);
    assert!(driver.ends_with(" merge-index %O %A %B\n"), "{driver}");
    assert!(
        driver.starts_with('/'),
        "absolute path of the running pimem: {driver}"
    );
    // Outside a repository: a clear error, nothing written.
    let outside = t.sb.dir("plain").into_std_path_buf();
    let out = pimem(&t.sb, &outside, &["git", "setup"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("not inside a git work tree"));
    assert!(std::fs::read_dir(&outside).unwrap().next().is_none());
}

#[test]
fn team_memories_on_two_branches_merge_without_conflict() {
    let t = Team::new();
    let (one, two) = (t.one.join(".pi/memory"), t.two.join(".pi/memory"));
    add(&one, "Deploy on Fridays", "Never deploy on Fridays.");
    add(&one, "Release checklist", "Tag, changelog, npm publish.");
    t.commit_on(&t.one, "feature-a");
    add(&two, "Answer in Chinese", "用中文回答。");
    add(
        &two,
        "Real DB in tests",
        "Integration tests hit PostgreSQL.",
    );
    replace(
        &two,
        "Use pnpm",
        "pnpm 9 workspaces, never npm or yarn.",
        "pnpm 9 workspaces",
    );
    t.commit_on(&t.two, "feature-b");

    // Without the driver, git's line merge conflicts on the index (both appended lines).
    let plain = t.sb.path("plain").into_std_path_buf();
    t.sb.git(
        t.sb.root(),
        &["clone", "--quiet", t.origin.to_str().unwrap(), "plain"],
    );
    t.sb.git(&plain, &["checkout", "--quiet", "feature-a"]);
    let out =
        t.sb.command("git")
            .args(["merge", "--quiet", "--no-edit", "origin/feature-b"])
            .current_dir(&plain)
            .output()
            .unwrap();
    assert!(
        !out.status.success(),
        "the plain line merge should conflict"
    );

    // With it: a clean merge, every entry present, index and files agree.
    t.sb.git(&t.one, &["fetch", "--quiet", "origin"]);
    t.sb.git(
        &t.one,
        &["merge", "--quiet", "--no-edit", "origin/feature-b"],
    );
    let files = consistent_entries(&one);
    assert_eq!(
        files,
        names(&[
            "Answer-in-Chinese.md",
            "Deploy-on-Fridays.md",
            "Real-DB-in-tests.md",
            "Release-checklist.md",
            "Use-pnpm.md",
        ])
    );
    let index = std::fs::read_to_string(one.join("MEMORY.md")).unwrap();
    assert!(
        index.contains("- [Use pnpm](Use-pnpm.md) — pnpm 9 workspaces\n"),
        "{index}"
    );
    // Ours' new lines first, then theirs' in the order they were added.
    let order: Vec<String> = parse_index(&index)
        .entries
        .into_iter()
        .map(|e| e.line.file)
        .collect();
    assert_eq!(
        order,
        [
            "Use-pnpm.md",
            "Deploy-on-Fridays.md",
            "Release-checklist.md",
            "Answer-in-Chinese.md",
            "Real-DB-in-tests.md"
        ]
    );
}

#[test]
fn same_entry_edit_conflicts_only_in_that_file_and_doctor_reports_it() {
    let t = Team::new();
    let (one, two) = (t.one.join(".pi/memory"), t.two.join(".pi/memory"));
    replace(&one, "Use pnpm", "pnpm 9, always.", "pnpm 9");
    add(&one, "Deploy on Fridays", "Never deploy on Fridays.");
    t.commit_on(&t.one, "feature-a");
    replace(&two, "Use pnpm", "pnpm with workspaces.", "pnpm workspaces");
    add(&two, "Answer in Chinese", "用中文回答。");
    t.commit_on(&t.two, "feature-b");

    t.sb.git(&t.one, &["fetch", "--quiet", "origin"]);
    let out =
        t.sb.command("git")
            .args(["merge", "--no-edit", "origin/feature-b"])
            .current_dir(&t.one)
            .output()
            .unwrap();
    assert!(!out.status.success());
    let conflicted =
        t.sb.git(&t.one, &["diff", "--name-only", "--diff-filter=U"]);
    assert_eq!(
        conflicted, ".pi/memory/Use-pnpm.md\n",
        "only the entry file conflicts"
    );
    let index = std::fs::read_to_string(one.join("MEMORY.md")).unwrap();
    assert!(!gitmem::has_conflict_markers(&index));
    let listed: BTreeSet<String> = parse_index(&index)
        .entries
        .into_iter()
        .map(|e| e.line.file)
        .collect();
    assert_eq!(
        listed,
        names(&[
            "Answer-in-Chinese.md",
            "Deploy-on-Fridays.md",
            "Use-pnpm.md"
        ])
    );

    let check = doctor(&t.sb, &t.one);
    assert_eq!(check.state, memory_pi::doctor::State::Failure, "{check:?}");
    assert!(
        check
            .reason
            .contains("team: conflict markers in Use-pnpm.md"),
        "{check:?}"
    );

    // Resolved with theirs' version: the index line (ours') now disagrees, a warning.
    t.sb.git(&t.one, &["checkout", "--theirs", ".pi/memory/Use-pnpm.md"]);
    t.sb.git(&t.one, &["add", "--all"]);
    t.sb.git(&t.one, &["commit", "--quiet", "--no-edit"]);
    let check = doctor(&t.sb, &t.one);
    assert_eq!(check.state, memory_pi::doctor::State::Warning, "{check:?}");
    assert!(
        check
            .reason
            .contains("team: index lines differ from the entry files Use-pnpm.md"),
        "{check:?}"
    );
}

fn doctor(sb: &Sandbox, cwd: &Path) -> memory_pi::doctor::Check {
    let report = memory_pi::doctor::run(&memory_pi::doctor::Input {
        cwd: cwd.to_path_buf(),
        agent_dir: Some(sb.agent_dir().into_std_path_buf()),
        trusted: false,
        memory_dir: Some(sb.path("mem").to_string()),
        models: memory_pi::doctor::Models::Unchecked("cli".into()),
        protocol: memory_pi::doctor::Protocol::Unchecked("cli".into()),
        binary: (1, "0.1.0".into()),
        platform: memory_keys::Platform::Posix,
    });
    report.get("git.merge").unwrap().clone()
}

/// Two machines' memory roots and the bare repository between them.
struct Machines {
    sb: Sandbox,
    remote: String,
}

impl Machines {
    fn new() -> Machines {
        let sb = Sandbox::new();
        let remote = sb.dir("remote.git");
        sb.git(
            &remote,
            &["init", "--quiet", "--bare", "--initial-branch=main"],
        );
        Machines {
            remote: remote.to_string(),
            sb,
        }
    }
    fn root(&self, machine: &str) -> PathBuf {
        self.sb.path(machine).into_std_path_buf()
    }
    fn project(&self, machine: &str) -> PathBuf {
        self.root(machine).join("local/proj")
    }
    fn user(&self, machine: &str) -> PathBuf {
        self.root(machine).join("user")
    }
    fn sync(&self, machine: &str, extra: &[&str]) -> Output {
        let root = self.root(machine);
        let mut args = vec!["--memory-dir", root.to_str().unwrap(), "sync"];
        args.extend(extra);
        pimem(&self.sb, self.sb.project().as_std_path(), &args)
    }
    fn sync_ok(&self, machine: &str, extra: &[&str]) -> String {
        let out = self.sync(machine, extra);
        assert!(
            out.status.success(),
            "sync {machine} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stderr).into_owned() + &String::from_utf8_lossy(&out.stdout)
    }
    fn remote_files(&self) -> String {
        self.sb
            .git(&self.remote, &["ls-tree", "-r", "--name-only", "main"])
    }
}

#[test]
fn sync_between_two_roots_with_concurrent_edits() {
    let m = Machines::new();
    // First machine: memories, a snapshot (replace) and a lock-free store; first sync.
    add(&m.project("a"), "Use pnpm", "pnpm, never npm.");
    replace(&m.project("a"), "Use pnpm", "pnpm 9, never npm.", "pnpm 9");
    add(&m.user("a"), "Answer in Chinese", "用中文回答。");
    let out = m.sync_ok("a", &["--remote", &m.remote]);
    assert!(out.contains("pimem sync: init: git repository in"), "{out}");
    assert!(out.contains("committed"), "{out}");
    assert!(out.contains("pushed to origin/main"), "{out}");
    assert_eq!(
        m.remote_files(),
        ".gitattributes\n.gitignore\nlocal/proj/MEMORY.md\nlocal/proj/Use-pnpm.md\nuser/Answer-in-Chinese.md\nuser/MEMORY.md\n",
        "no lock, snapshot, cache or run log leaves the machine"
    );

    // Second machine, empty: the first sync pulls everything.
    m.sync_ok("b", &["--remote", &m.remote]);
    assert_eq!(consistent_entries(&m.project("b")), names(&["Use-pnpm.md"]));
    assert_eq!(
        consistent_entries(&m.user("b")),
        names(&["Answer-in-Chinese.md"])
    );
    // Pulled memory is as private as written memory (git checks out with the umask).
    use std::os::unix::fs::PermissionsExt;
    let mode = |p: PathBuf| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(m.root("b")), 0o700);
    assert_eq!(mode(m.root("b").join("local")), 0o700);
    assert_eq!(mode(m.project("b")), 0o700);
    assert_eq!(mode(m.project("b").join("Use-pnpm.md")), 0o600);
    assert_eq!(mode(m.user("b").join("MEMORY.md")), 0o600);

    // Concurrent edits on both machines, in the same directories.
    add(
        &m.project("a"),
        "Deploy on Fridays",
        "Never deploy on Fridays.",
    );
    add(&m.user("a"), "Short answers", "Keep answers short.");
    add(
        &m.project("b"),
        "Real DB in tests",
        "Integration tests hit PostgreSQL.",
    );
    replace(
        &m.project("b"),
        "Use pnpm",
        "pnpm 9 workspaces.",
        "pnpm workspaces",
    );
    add(&m.user("b"), "Tabs not spaces", "Indent with tabs.");
    m.sync_ok("a", &[]);
    let out = m.sync_ok("b", &[]);
    assert!(out.contains("pull: rebasing onto origin/main"), "{out}");
    m.sync_ok("a", &[]);

    for machine in ["a", "b"] {
        assert_eq!(
            consistent_entries(&m.project(machine)),
            names(&["Deploy-on-Fridays.md", "Real-DB-in-tests.md", "Use-pnpm.md"]),
            "{machine}"
        );
        assert_eq!(
            consistent_entries(&m.user(machine)),
            names(&[
                "Answer-in-Chinese.md",
                "Short-answers.md",
                "Tabs-not-spaces.md"
            ]),
            "{machine}"
        );
    }
    for rel in [
        "local/proj/MEMORY.md",
        "local/proj/Use-pnpm.md",
        "user/MEMORY.md",
    ] {
        assert_eq!(
            std::fs::read(m.root("a").join(rel)).unwrap(),
            std::fs::read(m.root("b").join(rel)).unwrap(),
            "{rel}"
        );
    }
    let out = m.sync_ok("b", &[]);
    assert!(
        out.contains("nothing to commit") && out.contains("up to date"),
        "{out}"
    );
}

#[test]
fn sync_conflict_is_left_named_and_blocks_the_next_sync() {
    let m = Machines::new();
    add(&m.project("a"), "Use pnpm", "pnpm, never npm.");
    m.sync_ok("a", &["--remote", &m.remote]);
    m.sync_ok("b", &["--remote", &m.remote]);
    replace(&m.project("a"), "Use pnpm", "pnpm 9.", "pnpm 9");
    replace(
        &m.project("b"),
        "Use pnpm",
        "pnpm workspaces.",
        "workspaces",
    );
    m.sync_ok("a", &[]);
    let out = m.sync("b", &[]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("sync stopped on a conflict in local/proj/Use-pnpm.md")
            && err.contains("rebase --continue"),
        "{err}"
    );
    let out = m.sync("b", &[]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("a previous sync stopped on a conflict"),
        "{err}"
    );
    let check = gitmem::doctor_check(&[("project", m.project("b"))], &m.root("b"));
    assert_eq!(check.state, memory_pi::doctor::State::Failure, "{check:?}");
    assert!(
        check
            .reason
            .contains("project: conflict markers in Use-pnpm.md"),
        "{check:?}"
    );
}

#[test]
fn sync_errors_are_clear_and_commit_nothing() {
    let m = Machines::new();
    // No remote.
    add(&m.project("a"), "Use pnpm", "pnpm, never npm.");
    let out = m.sync("a", &[]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("no remote configured") && err.contains("--remote"),
        "{err}"
    );

    // Unreachable remote: the local commit is made, the error names the remote.
    let gone = m.sb.path("gone.git").to_string();
    let out = m.sync("a", &["--remote", &gone]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        err.contains("cannot reach the remote") && err.contains("gone.git"),
        "{err}"
    );

    // A hand-written file holding a credential is not committed.
    let token = ["ghp_", "0123456789abcdefghijABCDEFGHIJ012345"].concat();
    std::fs::write(
        m.project("a").join("leak.md"),
        format!("---\nname: leak\n---\n\ntoken {token} here\n"),
    )
    .unwrap();
    let out = m.sync("a", &["--remote", &m.remote]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        err.contains("local/proj/leak.md looks like it holds a secret"),
        "{err}"
    );
    assert!(!err.contains(&token), "the secret is never printed");
    let staged = m.sb.git(m.root("a"), &["diff", "--cached", "--name-only"]);
    assert_eq!(staged, "", "nothing left staged");
    assert!(m.remote_files_or_empty().is_empty());
}

impl Machines {
    fn remote_files_or_empty(&self) -> String {
        let out = self
            .sb
            .command("git")
            .args(["ls-tree", "-r", "--name-only", "main"])
            .current_dir(&self.remote)
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    }
}

#[test]
fn sync_waits_for_a_writer_and_commits_nothing_half_done() {
    let m = Machines::new();
    add(&m.project("a"), "Use pnpm", "pnpm, never npm.");
    // Another process (this test) holds the directory's locks, as a write does: sync waits
    // for it (the lock timeout), then stops before staging anything.
    let hold = store(&m.project("a")).hold("add").unwrap();
    let out = m.sync("a", &["--remote", &m.remote]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("cannot lock") && err.contains("local/proj"),
        "{err}"
    );
    assert_eq!(
        m.sb.git(
            m.root("a"),
            &["status", "--porcelain", "--untracked-files=no"]
        ),
        ""
    );
    drop(hold);
    m.sync_ok("a", &[]);
    assert!(m.remote_files().contains("local/proj/Use-pnpm.md"));
}

#[test]
fn second_machine_with_its_own_memories_joins_without_conflict() {
    let m = Machines::new();
    add(&m.project("a"), "Use pnpm", "pnpm, never npm.");
    add(&m.project("b"), "Answer in Chinese", "用中文回答。");
    add(&m.user("b"), "Short answers", "Keep answers short.");
    m.sync_ok("a", &["--remote", &m.remote]);
    // Unrelated histories, the same index file added on both: merged through the driver.
    m.sync_ok("b", &["--remote", &m.remote]);
    m.sync_ok("a", &[]);
    for machine in ["a", "b"] {
        assert_eq!(
            consistent_entries(&m.project(machine)),
            names(&["Answer-in-Chinese.md", "Use-pnpm.md"]),
            "{machine}"
        );
        assert_eq!(
            consistent_entries(&m.user(machine)),
            names(&["Short-answers.md"])
        );
    }
}
