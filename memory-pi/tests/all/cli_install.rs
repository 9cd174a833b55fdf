//! What installers and packagers rely on (issue 14): `pimem --version` names the protocol and
//! the platform package, `pimem completions <shell>`, the man page `cargo xtask dist` ships,
//! and the handshake refusing an extension of another version.
#![allow(clippy::unwrap_used)]

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Output, Stdio};

use memory_pi::platform;
use serde_json::{Value, json};

fn pimem(args: &[&str]) -> Output {
    let tmp = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_pimem"))
        .args(args)
        .current_dir(tmp.path())
        .env("HOME", tmp.path())
        .output()
        .unwrap();
    assert_eq!(
        std::fs::read_dir(tmp.path()).unwrap().count(),
        0,
        "pimem {args:?} wrote files"
    );
    out
}

#[test]
fn version_names_the_protocol_and_the_platform() {
    let key = platform::platform_key().unwrap();
    let want = format!("pimem {} (protocol 1, {key})\n", env!("CARGO_PKG_VERSION"));
    for flag in ["--version", "-V"] {
        let out = pimem(&[flag]);
        assert!(out.status.success());
        assert_eq!(String::from_utf8(out.stdout).unwrap(), want);
    }
}

#[test]
fn completions_for_every_shell_cover_the_subcommands() {
    for shell in ["bash", "zsh", "fish", "powershell", "elvish"] {
        let out = pimem(&["completions", shell]);
        assert!(out.status.success(), "{shell}");
        let script = String::from_utf8(out.stdout).unwrap();
        for word in [
            "pimem",
            "search",
            "rebuild-index",
            "completions",
            // fish spells a long option `-l memory-dir`, the others `--memory-dir`.
            "memory-dir",
        ] {
            assert!(script.contains(word), "{shell} script lacks {word}");
        }
    }
    let out = pimem(&["completions", "tcsh"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("invalid value 'tcsh'") && err.contains("bash, elvish, fish, powershell, zsh"),
        "{err}"
    );
}

/// `pimem completions bash | head -1`: the reader leaving early is not a crash.
#[test]
fn completions_into_a_closed_pipe_exit_quietly() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_pimem"))
        .args(["completions", "zsh"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    assert_eq!(String::from_utf8(out.stderr).unwrap(), "");
}

#[test]
fn the_man_page_documents_the_visible_commands_and_options() {
    let out = pimem(&["man"]);
    assert!(out.status.success());
    let page = String::from_utf8(out.stdout).unwrap();
    assert!(page.contains(".TH pimem 1"), "{page}");
    assert!(page.contains(&format!("pimem {} (protocol 1,", env!("CARGO_PKG_VERSION"))));
    for word in [
        "status",
        "search",
        "completions",
        "memory\\-dir",
        "trust\\-project",
    ] {
        assert!(page.contains(word), "the man page lacks {word}");
    }
    assert!(
        !page.contains("tool\\-schema"),
        "hidden commands stay hidden"
    );
}

/// Sends one `initialize` to `pimem serve` and returns the response.
fn initialize(params: Value) -> Value {
    let mut child = Command::new(env!("CARGO_BIN_EXE_pimem"))
        .arg("serve")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let line = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params});
    writeln!(stdin, "{line}").unwrap();
    let mut answer = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut answer)
        .unwrap();
    drop(stdin);
    assert!(child.wait().unwrap().success());
    serde_json::from_str(&answer).unwrap()
}

#[test]
fn the_handshake_refuses_the_pi_extension_of_another_version() {
    let version = env!("CARGO_PKG_VERSION");
    let key = platform::platform_key().unwrap();
    let r = initialize(json!({"protocol": 1, "client": "pimem-pi", "clientVersion": "0.0.1"}));
    assert_eq!(r["error"]["code"], -32003);
    assert_eq!(
        r["error"]["message"],
        format!(
            "pimem {version} does not match the pi extension 0.0.1: install one version of both (`pi install npm:@pimem/pi@0.0.1` installs the extension with @pimem/{key}@0.0.1; from a checkout, `cargo xtask install` builds and installs both)"
        )
    );
    // Enough for the extension to keep an inert tool that answers with the message.
    assert_eq!(r["error"]["data"]["tool"]["name"], "memory");
    assert_eq!(r["error"]["data"]["version"], version);

    // The same version, another client's version, or none: accepted.
    for params in [
        json!({"protocol": 1, "client": "pimem-pi", "clientVersion": version}),
        json!({"protocol": 1, "client": "some-other-host", "clientVersion": "7.0.0"}),
        json!({"protocol": 1, "client": "pimem-pi"}),
    ] {
        let r = initialize(params.clone());
        assert_eq!(r["result"]["version"], version, "{params}");
    }
}
