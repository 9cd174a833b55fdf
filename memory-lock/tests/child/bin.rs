//! Test helper process for `memory-lock`'s integration tests (not a user-facing tool).
//!
//! Commands:
//! - `exit`: exit at once (its pid becomes a dead pid once reaped).
//! - `sleep`: sleep until killed (a live pid that holds nothing).
//! - `hold <dir> <op>`: take `<dir>/.lock`, print `locked <pid>`, then sleep until killed.
//! - `count <dir> <n>`: `n` times: lock, read `<dir>/counter`, write it back plus one.
//! - `crit <dir> <n>`: `n` times: lock, enter a critical section marked by `<dir>/inside`
//!   (an overlap is recorded as `<dir>/overlap.<pid>.<i>`), leave, unlock; prints
//!   `reclaimed` for each acquisition that reclaimed a dead holder.
//! - `write <path> <size>`: forever: atomically write `size` bytes of `a`, then of `b`, …;
//!   prints `wrote` after the first completed write.
//!
//! With `MEMORY_LOCK_SLOTS=1` in the environment the process reuses its lock record file
//! (`memory_lock::enable_lock_slots`).
// A development tool: plain file writes and environment reads are its job.
#![allow(clippy::disallowed_methods)]

use std::fs::{self, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use memory_lock::{LockOptions, acquire, atomic_write};

fn patient() -> LockOptions {
    LockOptions {
        timeout: Duration::from_secs(120),
        poll: Duration::from_millis(2),
        reclaim_dead: true,
    }
}

fn sleep_forever() -> ! {
    loop {
        std::thread::sleep(Duration::from_secs(3600));
    }
}

fn say(line: &str) -> io::Result<()> {
    let mut out = io::stdout().lock();
    writeln!(out, "{line}")?;
    out.flush()
}

fn count(dir: &Path, n: usize) -> Result<(), Box<dyn std::error::Error>> {
    let counter = dir.join("counter");
    for _ in 0..n {
        let guard = acquire(dir, "add", &patient())?;
        let value: u64 = match fs::read_to_string(&counter) {
            Ok(text) => text.trim().parse()?,
            Err(err) if err.kind() == io::ErrorKind::NotFound => 0,
            Err(err) => return Err(err.into()),
        };
        atomic_write(&counter, format!("{}\n", value + 1).as_bytes())?;
        guard.release()?;
    }
    Ok(())
}

fn crit(dir: &Path, n: usize) -> Result<(), Box<dyn std::error::Error>> {
    let inside = dir.join("inside");
    for i in 0..n {
        let guard = acquire(dir, "crit", &patient())?;
        if guard.reclaimed().is_some() {
            say("reclaimed")?;
        }
        match OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&inside)
        {
            Ok(_) => {}
            Err(err) if err.kind() == io::ErrorKind::AlreadyExists => {
                fs::write(dir.join(format!("overlap.{}.{i}", std::process::id())), b"")?;
            }
            Err(err) => return Err(err.into()),
        }
        std::thread::sleep(Duration::from_millis(2));
        match fs::remove_file(&inside) {
            Ok(()) => {}
            Err(err) if err.kind() == io::ErrorKind::NotFound => {}
            Err(err) => return Err(err.into()),
        }
        guard.release()?;
    }
    Ok(())
}

fn write_forever(path: &Path, size: usize) -> Result<(), Box<dyn std::error::Error>> {
    for round in 0u64.. {
        let byte = if round % 2 == 0 { b'a' } else { b'b' };
        atomic_write(path, &vec![byte; size])?;
        if round == 0 {
            say("wrote")?;
        }
    }
    Ok(())
}

fn run(args: &[String]) -> Result<(), Box<dyn std::error::Error>> {
    let arg = |i: usize| -> Result<&str, Box<dyn std::error::Error>> {
        args.get(i)
            .map(String::as_str)
            .ok_or_else(|| format!("missing argument {i}").into())
    };
    match arg(1)? {
        "exit" => Ok(()),
        "sleep" => sleep_forever(),
        "hold" => {
            let guard = acquire(Path::new(arg(2)?), arg(3)?, &patient())?;
            say(&format!("locked {}", guard.holder().pid))?;
            sleep_forever()
        }
        "count" => count(Path::new(arg(2)?), arg(3)?.parse()?),
        "crit" => crit(Path::new(arg(2)?), arg(3)?.parse()?),
        "write" => write_forever(&PathBuf::from(arg(2)?), arg(3)?.parse()?),
        other => Err(format!("unknown command {other}").into()),
    }
}

fn main() -> ExitCode {
    if std::env::var_os("MEMORY_LOCK_SLOTS").is_some() {
        memory_lock::enable_lock_slots();
    }
    let args: Vec<String> = std::env::args().collect();
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("memory-lock-child: {err}");
            ExitCode::FAILURE
        }
    }
}
