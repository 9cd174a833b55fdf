//! The crash loop: a writer process killed with SIGKILL at a random moment, over and over.
//!
//! The writer is the test binary itself, re-executed to run one named test (the *child*)
//! with [`DIR_ENV`] pointing at a shared directory and [`SEED_ENV`] at the round number. The
//! child test must return at once when [`child_dir`] is `None` (an ordinary test run); the
//! parent test must return at once when it is `Some` (it is running inside a child).
//!
//! ```no_run
//! #[test]
//! fn writer_child() {
//!     let Some((dir, seed)) = testkit::crash::child_dir() else { return };
//!     // ... write forever into `dir`, logging what was acknowledged ...
//! #   let _ = (dir, seed);
//! }
//!
//! #[test]
//! fn torture() {
//!     if testkit::crash::child_dir().is_some() { return; }
//!     let sb = testkit::Sandbox::new();
//!     testkit::crash::rounds("writer_child", sb.root(), 400, 40, 0x5EED, |round| {
//!         // ... check the directory after the kill ...
//! #       let _ = round;
//!     });
//! }
//! ```

use std::process::{Command, Stdio};
use std::time::Duration;

use camino::{Utf8Path, Utf8PathBuf};

use crate::Rng;

/// Set in the child: the directory it works in.
pub const DIR_ENV: &str = "PIMEM_CRASH_DIR";
/// Set in the child: the round number (its seed).
pub const SEED_ENV: &str = "PIMEM_CRASH_SEED";
/// Overrides the number of kills (long runs: `PIMEM_CRASH_KILLS=2000`).
pub const KILLS_ENV: &str = "PIMEM_CRASH_KILLS";

/// In a child: its directory and seed. `None` in an ordinary test run.
pub fn child_dir() -> Option<(Utf8PathBuf, u64)> {
    let dir = std::env::var(DIR_ENV).ok()?;
    let seed = std::env::var(SEED_ENV)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    Some((Utf8PathBuf::from(dir), seed))
}

/// The number of kills: [`KILLS_ENV`], else `default`.
pub fn kills(default: usize) -> usize {
    std::env::var(KILLS_ENV)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Runs `kills(default_kills)` rounds: start the test `child` of this binary on `dir`, let it
/// run 5 ms plus up to `max_extra_ms`, SIGKILL it, wait, then `check(round)`.
///
/// `child` is the test's path as the harness names it (`crash::crash_child` in a
/// one-binary-per-crate layout).
pub fn rounds(
    child: &str,
    dir: &Utf8Path,
    default_kills: usize,
    max_extra_ms: u64,
    seed: u64,
    mut check: impl FnMut(usize),
) {
    let exe = std::env::current_exe().unwrap();
    let mut rng = Rng::new(seed);
    for round in 0..kills(default_kills) {
        let mut process = Command::new(&exe)
            .args([child, "--exact", "--nocapture", "--test-threads=1"])
            .env(DIR_ENV, dir)
            .env(SEED_ENV, round.to_string())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(5 + rng.below(max_extra_ms)));
        process.kill().unwrap();
        process.wait().unwrap();
        check(round);
    }
}

/// Runs the test `child` of this binary once on `dir` (seed 0) and waits for it to end by
/// itself: for a child that kills itself at a failpoint (`std::process::abort()` between two
/// steps) instead of being killed at a random moment. Returns how it ended.
pub fn run_child(child: &str, dir: &Utf8Path) -> std::process::ExitStatus {
    let exe = std::env::current_exe().unwrap();
    Command::new(&exe)
        .args([child, "--exact", "--nocapture", "--test-threads=1"])
        .env(DIR_ENV, dir)
        .env(SEED_ENV, "0")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap()
}

/// Every `*.md` entry file of `dir` (not `MEMORY.md`, not dot files) parses: atomic
/// replacement left it old or new, never torn.
pub fn assert_no_torn_entries(dir: &Utf8Path, round: usize) {
    for e in std::fs::read_dir(dir).into_iter().flatten() {
        let name = e.unwrap().file_name().into_string().unwrap();
        if name.ends_with(".md") && name != "MEMORY.md" && !name.starts_with('.') {
            let text = std::fs::read_to_string(dir.join(&name)).unwrap();
            assert!(
                memory_index::parse_entry(&text).is_some(),
                "round {round}: torn entry file {name}: {text:?}"
            );
        }
    }
}
