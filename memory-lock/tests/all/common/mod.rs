//! Shared helpers of the integration tests.
#![allow(dead_code, clippy::unwrap_used)]

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, ChildStdout, Command, Stdio};
use std::time::Duration;

use memory_lock::{Holder, LockOptions, hostname};

/// The helper process binary (`tests/child/main.rs`).
pub const CHILD: &str = env!("CARGO_BIN_EXE_memory-lock-child");

/// A pid that existed and is now gone: a child that exited and was reaped.
pub fn dead_pid() -> u32 {
    let mut child = Command::new(CHILD).arg("exit").spawn().unwrap();
    let pid = child.id();
    assert!(child.wait().unwrap().success());
    pid
}

/// A live process holding nothing; kill it with [`stop`].
pub fn sleeper() -> Child {
    Command::new(CHILD).arg("sleep").spawn().unwrap()
}

/// SIGKILL and reap.
pub fn stop(mut child: Child) {
    child.kill().unwrap();
    child.wait().unwrap();
}

/// Spawns the helper with stdout piped.
pub fn spawn(args: &[&str]) -> Child {
    Command::new(CHILD)
        .args(args)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Reads one line of the child's stdout.
pub fn read_line(stdout: &mut BufReader<ChildStdout>) -> String {
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    line.trim_end().to_owned()
}

/// A record as pi-memory writes it.
pub fn record(pid: u32, host: &str, op: &str) -> Holder {
    Holder {
        pid,
        hostname: host.to_owned(),
        started_at: "2026-10-02T00:00:00.000Z".to_owned(),
        op: op.to_owned(),
    }
}

/// Plants `<dir>/.lock` with `holder` (no kernel lock: as a crashed or TypeScript holder).
pub fn plant(dir: &Path, holder: &Holder) {
    std::fs::write(dir.join(".lock"), holder.to_json()).unwrap();
}

/// A record of this host.
pub fn local(pid: u32, op: &str) -> Holder {
    record(pid, &hostname(), op)
}

/// Short waits for tests that expect a timeout.
pub fn short(reclaim_dead: bool) -> LockOptions {
    LockOptions {
        timeout: Duration::from_millis(200),
        poll: Duration::from_millis(10),
        reclaim_dead,
    }
}

/// Long waits for tests that must not time out.
pub fn patient() -> LockOptions {
    LockOptions {
        timeout: Duration::from_secs(60),
        poll: Duration::from_millis(5),
        reclaim_dead: true,
    }
}

/// Sorted names in `dir`.
pub fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    names
}

/// Permission bits of `path` (without following a symlink).
pub fn mode(path: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::symlink_metadata(path)
        .unwrap()
        .permissions()
        .mode()
        & 0o777
}
