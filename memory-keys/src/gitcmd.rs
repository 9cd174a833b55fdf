//! The fallback: ask git itself, the way pi-memory does (`git rev-parse --show-toplevel`,
//! then `git config --get-regexp '^remote\..*\.url$'`, each with a 3 s timeout).

use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use crate::env::GitEnv;
use memory_js::js_trim;

/// The original's timeout for each git command.
pub(crate) const GIT_TIMEOUT: Duration = Duration::from_secs(3);

/// Runs `git args...` in `cwd` and returns its stdout when it exits successfully within
/// `timeout`; `None` on any failure (not found, bad cwd, non-zero exit, timeout).
pub(crate) fn run_git(
    cwd: &Path,
    args: &[&str],
    env: &GitEnv,
    timeout: Duration,
) -> Option<Vec<u8>> {
    run_program("git", cwd, args, env, timeout)
}

fn run_program(
    program: &str,
    cwd: &Path,
    args: &[&str],
    env: &GitEnv,
    timeout: Duration,
) -> Option<Vec<u8>> {
    let mut command = Command::new(program);
    command
        .args(args)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    env.apply(&mut command);
    let mut child = command.spawn().ok()?;
    let mut stdout = child.stdout.take()?;
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut buf = Vec::new();
        let result = stdout.read_to_end(&mut buf).map(|_| buf);
        // The receiver may have given up after the timeout; nothing to do then.
        let _ = tx.send(result);
    });
    match rx.recv_timeout(timeout) {
        Ok(Ok(out)) => {
            let status = child.wait().ok()?;
            status.success().then_some(out)
        }
        Ok(Err(_)) | Err(_) => {
            // Timed out (or the pipe failed): stop git and reap it.
            let _ = child.kill();
            let _ = child.wait();
            None
        }
    }
}

/// `git rev-parse --show-toplevel`, trimmed like JavaScript's `trim()`; `None` when git fails
/// or prints nothing.
pub(crate) fn toplevel(cwd: &Path, env: &GitEnv) -> Option<String> {
    let out = run_git(cwd, &["rev-parse", "--show-toplevel"], env, GIT_TIMEOUT)?;
    let text = String::from_utf8_lossy(&out);
    let trimmed = js_trim(&text);
    (!trimmed.is_empty()).then(|| trimmed.to_owned())
}

/// Every `remote.<name>.url` as `(name, value)` in git's order; empty when there is none or
/// git fails. Read with `-z` so names with spaces and values with newlines stay exact.
pub(crate) fn remote_urls(cwd: &Path, env: &GitEnv) -> Vec<(String, Option<String>)> {
    let Some(out) = run_git(
        cwd,
        &["config", "-z", "--get-regexp", r"^remote\..*\.url$"],
        env,
        GIT_TIMEOUT,
    ) else {
        return Vec::new();
    };
    parse_get_regexp_z(&out)
}

/// Parses `git config -z --get-regexp` output: records `key\nvalue\0`, or `key\0` for a
/// value-less key.
pub(crate) fn parse_get_regexp_z(out: &[u8]) -> Vec<(String, Option<String>)> {
    out.split(|&b| b == 0)
        .filter(|record| !record.is_empty())
        .filter_map(|record| {
            let (key, value) = match record.iter().position(|&b| b == b'\n') {
                Some(i) => (&record[..i], Some(&record[i + 1..])),
                None => (record, None),
            };
            let key = String::from_utf8_lossy(key);
            let name = key
                .strip_prefix("remote.")?
                .strip_suffix(".url")?
                .to_owned();
            Some((name, value.map(|v| String::from_utf8_lossy(v).into_owned())))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hanging_command_is_killed_at_the_timeout() {
        let env = GitEnv::from_process();
        let dir = std::env::temp_dir();
        let started = std::time::Instant::now();
        let out = run_program("sleep", &dir, &["30"], &env, Duration::from_millis(200));
        assert_eq!(out, None);
        // Not a timing assertion on our speed: only that the 30 s child did not run out.
        assert!(started.elapsed() < Duration::from_secs(20));
    }

    #[test]
    fn failures_and_missing_cwd_give_none() {
        let env = GitEnv::from_process();
        let dir = std::env::temp_dir();
        assert_eq!(run_program("false", &dir, &[], &env, GIT_TIMEOUT), None);
        let missing = dir.join("memory-keys-surely-missing-dir/x");
        assert_eq!(run_program("true", &missing, &[], &env, GIT_TIMEOUT), None);
        assert_eq!(
            run_program("echo", &dir, &["hi"], &env, GIT_TIMEOUT),
            Some(b"hi\n".to_vec())
        );
    }

    #[test]
    fn parses_z_records() {
        let out = b"remote.origin.url\nhttps://a/b\0remote.my remote.url\nx\ny\0remote.bare.url\0";
        assert_eq!(
            parse_get_regexp_z(out),
            vec![
                ("origin".to_owned(), Some("https://a/b".to_owned())),
                ("my remote".to_owned(), Some("x\ny".to_owned())),
                ("bare".to_owned(), None),
            ]
        );
    }
}
