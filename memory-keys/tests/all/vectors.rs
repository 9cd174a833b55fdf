//! Table tests for every VECTORS.md row of §A (URL -> key -> name), §B (local keys), §C (long
//! names) and the containment check, plus PM-01 (`memoryDir` expansion).
#![allow(clippy::unwrap_used)]

use std::path::Path;

use memory_keys::{
    KeysError, Platform, ProjectIdentity, ProjectKind, dir_name, expand_memory_dir,
    is_reserved_windows_name, is_strictly_inside, normalize_remote_url, project_dir,
};

const P: Platform = Platform::Posix;
const W: Platform = Platform::Windows;

/// §A1-A40 (A36/A37 are platform-specific and listed separately): id, remote URL, key, name.
const REMOTES: &[(&str, &str, Option<&str>, &str)] = &[
    (
        "A1",
        "https://github.com/yandy/pi-packages.git",
        Some("github.com/yandy/pi-packages"),
        "github.com__yandy__pi-packages",
    ),
    (
        "A2",
        "http://example.com/team/repo.git",
        Some("example.com/team/repo"),
        "example.com__team__repo",
    ),
    (
        "A3",
        "git@github.com:yandy/pi-packages.git",
        Some("github.com/yandy/pi-packages"),
        "github.com__yandy__pi-packages",
    ),
    (
        "A4",
        "github.com:yandy/pi-packages.git",
        Some("github.com/yandy/pi-packages"),
        "github.com__yandy__pi-packages",
    ),
    (
        "A5",
        "git+ssh://git@github.com/yandy/pi-packages.git",
        Some("github.com/yandy/pi-packages"),
        "github.com__yandy__pi-packages",
    ),
    (
        "A6",
        "git+https://github.com/yandy/pi-packages.git",
        Some("github.com/yandy/pi-packages"),
        "github.com__yandy__pi-packages",
    ),
    (
        "A7",
        "git://github.com/yandy/pi-packages.git",
        Some("github.com/yandy/pi-packages"),
        "github.com__yandy__pi-packages",
    ),
    (
        "A8",
        "git://github.com:9418/yandy/pi-packages.git",
        Some("github.com/yandy/pi-packages"),
        "github.com__yandy__pi-packages",
    ),
    (
        "A9",
        "ssh://git@gitlab.com:2222/grp/sub/repo.git",
        Some("gitlab.com/grp/sub/repo"),
        "gitlab.com__grp__sub__repo",
    ),
    (
        "A10",
        "https://user:pass@github.com/o/r.git",
        Some("github.com/o/r"),
        "github.com__o__r",
    ),
    (
        "A11",
        "https://user:pa@ss@github.com/o/r.git",
        Some("github.com/o/r"),
        "github.com__o__r",
    ),
    (
        "A12",
        "https://github.com/yandy/pi-packages.git/",
        Some("github.com/yandy/pi-packages"),
        "github.com__yandy__pi-packages",
    ),
    (
        "A13",
        "https://GitHub.com/Owner/Repo.GIT",
        Some("github.com/Owner/Repo"),
        "github.com__Owner__Repo",
    ),
    (
        "A14",
        "[2001:db8::1]:o/r.git",
        Some("[2001:db8::1]/o/r"),
        "[2001_3adb8_3a_3a1]__o__r",
    ),
    (
        "A15",
        "ssh://git@[2001:db8::1]/o/r.git",
        Some("[2001:db8::1]/o/r"),
        "[2001_3adb8_3a_3a1]__o__r",
    ),
    (
        "A16",
        "https://例子.com/o/r.git",
        Some("xn--fsqu00a.com/o/r"),
        "xn--fsqu00a.com__o__r",
    ),
    (
        "A17",
        "ssh://例子.com/o/r.git",
        Some("xn--fsqu00a.com/o/r"),
        "xn--fsqu00a.com__o__r",
    ),
    (
        "A18",
        "例子.com:o/r.git",
        Some("xn--fsqu00a.com/o/r"),
        "xn--fsqu00a.com__o__r",
    ),
    ("A19", "git+file:///srv/repos/foo.git", None, ""),
    ("A20", "file:///srv/repos/foo.git", None, ""),
    ("A21", "/srv/repos/bar", None, ""),
    ("A22", "../repo", None, ""),
    ("A23", "", None, ""),
    ("A24", "https://github.com/", None, ""),
    ("A24", "https://github.com", None, ""),
    ("A24", "github.com:", None, ""),
    (
        "A25",
        "https://github.com/o/r.git.git",
        Some("github.com/o/r.git"),
        "github.com__o__r.git",
    ),
    (
        "A26",
        "https://github.com/o/r.git?x=1#frag",
        Some("github.com/o/r"),
        "github.com__o__r",
    ),
    (
        "A27",
        "https://github.com/o/./x/../r.git",
        Some("github.com/o/r"),
        "github.com__o__r",
    ),
    (
        "A28",
        "https://github.com/o/r%20x.git",
        Some("github.com/o/r%20x"),
        "github.com__o__r%20x",
    ),
    (
        "A29",
        "github.com:o/r x.git",
        Some("github.com/o/r x"),
        "github.com__o__r x",
    ),
    (
        "A30",
        "git@GitHub.COM:Owner/Repo.git",
        Some("github.com/Owner/Repo"),
        "github.com__Owner__Repo",
    ),
    (
        "A31",
        "https://github.com:443/o/r",
        Some("github.com/o/r"),
        "github.com__o__r",
    ),
    (
        "A32",
        "git@github.com:/o/r.git",
        Some("github.com/o/r"),
        "github.com__o__r",
    ),
    ("A33", "foo:bar", Some("foo/bar"), "foo__bar"),
    ("A34", "./foo:bar", None, ""),
    (
        "A35",
        "http://[::1]:8080/o/r.git",
        Some("[::1]/o/r"),
        "[_3a_3a1]__o__r",
    ),
    ("A38", r"\\server\share\repo.git", None, ""),
    (
        "A39",
        "https://github.com//o//r.git",
        Some("github.com/o//r"),
        "github.com__o__r",
    ),
    (
        "A40",
        "https://aux.example.com/o/r",
        Some("aux.example.com/o/r"),
        "aux.example.com__o__r",
    ),
];

#[test]
fn a_remote_urls_to_keys_and_names_on_posix() {
    for (id, url, key, name) in REMOTES {
        let got = normalize_remote_url(url, P);
        assert_eq!(got.as_deref(), *key, "{id}: key of {url:?}");
        if let Some(key) = key {
            assert_eq!(dir_name(key, P), *name, "{id}: name of {key:?}");
        }
    }
}

#[test]
fn a_keys_are_platform_independent_except_drive_letters() {
    for (id, url, key, _) in REMOTES {
        assert_eq!(
            normalize_remote_url(url, W).as_deref(),
            *key,
            "{id} on Windows"
        );
    }
}

#[test]
fn a_ordinary_git_names_are_identical_on_windows() {
    // README: names are identical across platforms for an ordinary remote's key; A40 (a
    // reserved first label) is the documented exception.
    for (id, _, key, name) in REMOTES {
        let Some(key) = key else { continue };
        let expected = if *id == "A40" {
            "_aux.example.com__o__r"
        } else {
            name
        };
        assert_eq!(dir_name(key, W), expected, "{id} on Windows");
    }
}

#[test]
fn a36_a37_drive_letter_remote_depends_on_platform() {
    let url = r"Z:\repos\foo.git";
    // A36: a local path on Windows.
    assert_eq!(normalize_remote_url(url, W), None);
    // A37 (VECTORS §Z13): scp syntax with host `z` on POSIX.
    let key = normalize_remote_url(url, P).unwrap();
    assert_eq!(key, r"z/\repos\foo");
    assert_eq!(dir_name(&key, P), r"z__\repos\foo");
}

#[test]
fn a_other_unusable_forms() {
    for url in [
        "ftp://example.com/o/r.git",
        "git+http://example.com/o/r.git",
        "ssh:///o/r.git",
        ":o/r.git",
        "https://github.com/.git",
        "   ",
    ] {
        assert_eq!(normalize_remote_url(url, P), None, "{url:?}");
    }
    // A drive letter with a forward slash: local on Windows; on POSIX a `/` before the first
    // `:` does not exist, so it is scp with host `c`.
    assert_eq!(normalize_remote_url("C:/x/y.git", W), None);
    assert_eq!(
        normalize_remote_url("C:/x/y.git", P).as_deref(),
        Some("c/x/y")
    );
    // Surrounding whitespace is trimmed (JavaScript trim).
    assert_eq!(
        normalize_remote_url("  git@github.com:o/r.git\n", P).as_deref(),
        Some("github.com/o/r")
    );
}

/// §B: id, platform, key, name.
const LOCAL: &[(&str, Platform, &str, &str)] = &[
    (
        "B1",
        P,
        "/home/yandy/workspace/scratch",
        "home__yandy__workspace__scratch",
    ),
    (
        "B2",
        P,
        "/home/yandy/proj/with:colon",
        "home__yandy__proj__with_3acolon",
    ),
    ("B3", P, r"/home/a\b", r"home__a\b"),
    ("B4", P, "/home/../home/./proj", "home__home__proj"),
    ("B5", P, "/", "root"),
    ("B5", W, "/", "root"),
    ("B6", P, "..", "root"),
    ("B6", W, "..", "root"),
    ("B7", P, r"C:\Users\yandy", r"C_3a\Users\yandy"),
    ("B8", P, "/home/yandy/proj.", "home__yandy__proj."),
    ("B9", P, "/home/a__b", "home__a__b"),
    ("B9", P, "/home/a/b", "home__a__b"),
    ("B10", P, "/tmp/mem-v2-test", "tmp__mem-v2-test"),
    ("B11", P, "/home/x/with|pipe?", "home__x__with_7cpipe_3f"),
    ("B12", P, "/home/x/tab\there", "home__x__tab_09here"),
    ("B13", P, "/srv/repos/foo", "srv__repos__foo"),
    (
        "B14",
        W,
        r"C:\Users\yandy\workspace\proj",
        "C_3a__Users__yandy__workspace__proj",
    ),
    ("B15", W, r"\\server\share\proj", "server__share__proj"),
    ("B16", W, r"C:/Users\yandy/proj", "C_3a__Users__yandy__proj"),
    ("B17", W, r"host/a\..\..\..\etc", "host__a__etc"),
    (
        "B18",
        W,
        r"C:\Users\yandy\proj.",
        "C_3a__Users__yandy__proj_2e",
    ),
    (
        "B19",
        W,
        r"C:\Users\yandy\proj ",
        "C_3a__Users__yandy__proj_20",
    ),
    ("B20", W, "con.md/repo", "_con.md__repo"),
    ("B21", W, "nul", "_nul"),
    ("B22", W, r"C:\con\proj", "C_3a__con__proj"),
    ("B23", W, "aux.", "aux_2e"),
    ("B24", W, "nul.", "nul_2e"),
    ("B25", W, r"C:\", "C_3a"),
    ("B26", W, r"..\..\..\", "root"),
    ("B27", W, r"host\\double\sep", "host__double__sep"),
    (
        "B28",
        W,
        r"C:/mixed\separators/final",
        "C_3a__mixed__separators__final",
    ),
    ("B29", W, r"C:\pi-accept\proj", "C_3a__pi-accept__proj"),
];

#[test]
fn b_local_keys_to_names() {
    for (id, platform, key, name) in LOCAL {
        assert_eq!(
            dir_name(key, *platform),
            *name,
            "{id}: {key:?} on {platform:?}"
        );
    }
}

#[test]
fn b30_windows_invariants_for_hostile_keys() {
    let long = format!(r"C:\{}", "x".repeat(200));
    let keys = LOCAL
        .iter()
        .filter(|(_, p, _, _)| *p == W)
        .map(|(_, _, k, _)| *k)
        .chain([long.as_str()]);
    for key in keys {
        let name = dir_name(key, W);
        assert!(
            !name.contains(['/', '\\']),
            "{key:?} -> {name:?} has a separator"
        );
        assert!(
            !name.ends_with(['.', ' ']),
            "{key:?} -> {name:?} ends in dot/space"
        );
        assert!(
            !is_reserved_windows_name(&name),
            "{key:?} -> {name:?} is reserved"
        );
        let identity = ProjectIdentity {
            kind: ProjectKind::Local,
            key: key.to_owned(),
        };
        let dir = project_dir(Path::new(r"C:\mem"), &identity, W).unwrap();
        assert_eq!(dir.name, name);
        assert_eq!(dir.path, Path::new(&format!(r"C:\mem\local\{name}")));
        assert!(is_strictly_inside(Path::new(r"C:\mem"), &dir.path, W));
    }
}

#[test]
fn b_posix_output_unchanged_by_windows_rules() {
    // PM-10: backslash is an ordinary character and no Windows escaping happens on POSIX.
    assert_eq!(dir_name(r"C:\con\proj.", P), r"C_3a\con\proj.");
    assert_eq!(dir_name("nul", P), "nul");
}

/// §C: id, key, expected name. The hash suffixes are the ones VECTORS.md lists.
#[test]
fn c_long_names() {
    let cases: Vec<(&str, String, String)> = vec![
        (
            "C1",
            format!("github.com/{}/{}", "a".repeat(40), "b".repeat(120)),
            format!(
                "github.com__{}__{}__1c172587",
                "a".repeat(40),
                "b".repeat(46)
            ),
        ),
        (
            "C2",
            format!("/home/yandy/{}", "工".repeat(115)),
            format!("home__yandy__{}__87289721", "工".repeat(29)),
        ),
        (
            "C3",
            format!("/home/yandy/{}", "😀".repeat(60)),
            format!("home__yandy__{}__184f3961", "😀".repeat(21)),
        ),
        (
            "C4",
            format!("/home/yandy/{}", "👨‍👩‍👧".repeat(40)),
            format!("home__yandy__{}__6d88a266", "👨‍👩‍👧".repeat(4)),
        ),
        (
            "C5",
            format!("/home/yandy/{}", "🇯🇵".repeat(60)),
            format!("home__yandy__{}__3e10c59d", "🇯🇵".repeat(10)),
        ),
        ("C6", "x".repeat(120), "x".repeat(120)),
        (
            "C7",
            "x".repeat(121),
            format!("{}__79072a47", "x".repeat(100)),
        ),
    ];
    for (id, key, expected) in &cases {
        for platform in [P, W] {
            let name = dir_name(key, platform);
            assert_eq!(&name, expected, "{id} on {platform:?}");
            assert!(name.len() <= 120, "{id}");
        }
    }
    // C1 is exactly 110 bytes; C2 is 100 + 10; C3 keeps 97 bytes before the suffix.
    assert_eq!(cases[0].2.len(), 110);
    assert_eq!(cases[1].2.len(), 110);
    assert_eq!(cases[2].2.len(), 97 + 10);
    // C4: no dangling ZWJ before the suffix (the code-point reading would leave one).
    assert!(!cases[3].2.contains("\u{200d}__"));
}

#[test]
fn c8_similar_long_keys_get_different_deterministic_names() {
    let a = format!("github.com/x/{}", "a".repeat(120));
    let b = format!("github.com/x/{}b", "a".repeat(119));
    assert_ne!(dir_name(&a, P), dir_name(&b, P));
    assert_eq!(dir_name(&a, P), dir_name(&a, P));
}

#[test]
fn containment_check_list() {
    let inside = |root: &str, dir: &str, p| is_strictly_inside(Path::new(root), Path::new(dir), p);
    assert!(inside("/mem", "/mem/git/github.com__o__r", P));
    assert!(!inside("/mem", "/etc", P));
    assert!(!inside("/mem", "/mem/../etc", P));
    assert!(!inside("/mem", "/mem", P));
    assert!(!inside("/mem", "/mem/", P));
    assert!(inside(r"C:\mem", r"C:\MEM\local\x", W));
    assert!(!inside("/mem", "/MEM/local/x", P));
    assert!(!inside(r"C:\mem", r"D:\mem\local\x", W));
    assert!(!inside(r"C:\mem", r"C:\memory\x", W));
    assert!(!inside("/mem", "/memory/x", P));
    assert!(inside("/", "/git/x", P));
    let err = KeysError::Escapes {
        memory_dir: "/mem".into(),
        kind: ProjectKind::Local,
        name: "x".into(),
    };
    let message = err.to_string();
    assert!(message.contains("escapes"), "{message}");
    assert!(message.contains("/mem") && message.contains("local") && message.contains("\"x\""));
}

#[test]
fn project_dir_joins_root_kind_and_name() {
    let git = ProjectIdentity {
        kind: ProjectKind::Git,
        key: "github.com/o/r".into(),
    };
    let dir = project_dir(Path::new("/mem/"), &git, P).unwrap();
    assert_eq!(dir.path, Path::new("/mem/git/github.com__o__r"));
    assert_eq!(
        (dir.kind, dir.name.as_str()),
        (ProjectKind::Git, "github.com__o__r")
    );
    let local = ProjectIdentity {
        kind: ProjectKind::Local,
        key: "/home/yandy/workspace/scratch".into(),
    };
    let dir = project_dir(Path::new("/a/../mem"), &local, P).unwrap();
    assert_eq!(
        dir.path,
        Path::new("/mem/local/home__yandy__workspace__scratch")
    );
    assert_eq!(dir.key, "/home/yandy/workspace/scratch");
}

#[test]
fn pm01_memory_dir_expansion() {
    let home = Path::new("/home/u");
    let cwd = Path::new("/work/p");
    let e = |v: &str, p| expand_memory_dir(v, home, cwd, p);
    assert_eq!(e("~", P), Path::new("/home/u"));
    assert_eq!(e("~/", P), Path::new("/home/u"));
    assert_eq!(e("~/.pi/memory", P), Path::new("/home/u/.pi/memory"));
    assert_eq!(e(r"~\m", P), Path::new(r"/work/p/~\m"));
    assert_eq!(e("~user/m", P), Path::new("/work/p/~user/m"));
    assert_eq!(e("rel/./x/..", P), Path::new("/work/p/rel"));
    assert_eq!(e("/abs//m/", P), Path::new("/abs/m"));
    let whome = Path::new(r"C:\Users\u");
    let wcwd = Path::new(r"C:\work\p");
    let w = |v: &str| expand_memory_dir(v, whome, wcwd, W);
    assert_eq!(w("~"), Path::new(r"C:\Users\u"));
    assert_eq!(w(r"~\m"), Path::new(r"C:\Users\u\m"));
    assert_eq!(w("~/.pi/memory"), Path::new(r"C:\Users\u\.pi\memory"));
    assert_eq!(w("mem"), Path::new(r"C:\work\p\mem"));
    assert_eq!(w(r"\\srv\share\mem"), Path::new(r"\\srv\share\mem"));
    assert_eq!(w("D:/m"), Path::new(r"D:\m"));
}
