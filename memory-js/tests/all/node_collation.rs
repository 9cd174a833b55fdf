//! `locale_compare` against Node itself: a few hundred generated file names (ASCII
//! punctuation, case pairs, digits, accents, CJK, emoji) sorted by Node's
//! `localeCompare` and by ours must come out identical.
//!
//! Needs Node 22 (the e2e suite installs it): ignored in a plain `cargo test`, run by
//! `cargo xtask e2e` (`cargo test -p memory-js -- --ignored`) with that Node first on PATH,
//! or by hand with `PIMEM_NODE=/path/to/node`.

use std::io::Write;
use std::process::{Command, Stdio};

use memory_js::{locale_compare, utf16_cmp};

/// Deterministic names: every combination of a few first parts, middles and extensions.
fn names() -> Vec<String> {
    const FIRST: &[&str] = &[
        "", "_", "-", ".", "~", "!", "(", "#", "a", "A", "b", "B", "z", "Z", "e", "é", "É", "è",
        "ß", "ss", "0", "1", "10", "2", "9", "中", "文", "日本", "한", "😀", "ä", "Ä", "æ", "ø",
    ];
    const MIDDLE: &[&str] = &["", "a", "B", "-2", "_x", " x", "1", "é"];
    const EXT: &[&str] = &[".md", ".MD", ".md.md"];
    let mut out = Vec::new();
    for f in FIRST {
        for m in MIDDLE {
            for e in EXT {
                let name = format!("{f}{m}{e}");
                if !out.contains(&name) {
                    out.push(name);
                }
            }
        }
    }
    out
}

fn node() -> String {
    std::env::var("PIMEM_NODE").unwrap_or_else(|_| "node".to_owned())
}

#[test]
#[ignore = "needs Node 22: run by cargo xtask e2e"]
fn sorts_like_nodes_locale_compare() {
    let mut input = names();
    assert!(input.len() >= 300, "{} names", input.len());
    // What pi-memory sorts: a `readdir().sort()` listing (UTF-16 order), then the stable
    // `localeCompare` sort.
    input.sort_by(|a, b| utf16_cmp(a, b));
    let mut child = Command::new(node())
        .args([
            "-e",
            "const n=JSON.parse(require('fs').readFileSync(0,'utf8'));\
             n.sort((a,b)=>a.localeCompare(b));\
             process.stdout.write(JSON.stringify({v:process.version,n}))",
        ])
        .env("LC_ALL", "en_US.UTF-8")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run {} (Node 22 is needed): {e}", node()));
    child
        .stdin
        .take()
        .unwrap()
        .write_all(serde_json::to_string(&input).unwrap().as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "node failed");
    let answer: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let version = answer["v"].as_str().unwrap_or("?");
    assert!(
        version.starts_with("v22."),
        "Node 22 expected, got {version}"
    );
    let from_node: Vec<String> = serde_json::from_value(answer["n"].clone()).unwrap();
    assert_ne!(
        from_node, input,
        "the collation must differ from code-unit order here"
    );
    let mut ours = input.clone();
    ours.sort_by(|a, b| locale_compare(a, b));
    let first_difference = ours.iter().zip(&from_node).position(|(a, b)| a != b);
    assert_eq!(
        first_difference,
        None,
        "Node {version} and locale_compare disagree at {first_difference:?}:\nnode: {:?}\nours: {:?}",
        first_difference.map(|i| &from_node[i.saturating_sub(2)..(i + 3).min(from_node.len())]),
        first_difference.map(|i| &ours[i.saturating_sub(2)..(i + 3).min(ours.len())]),
    );
}
