//! Test fixtures shared by the workspace's tests (a dev-dependency only, never published).
//!
//! One copy of each thing tests kept writing again: [`Sandbox`] (a temp directory with
//! UTF-8 paths, a home, an agent directory, a project, and a hermetic `git`),
//! [`stepping_clock`] (deterministic, strictly increasing timestamps), [`Rng`] (a seeded
//! xorshift, so failures reproduce), [`crash`] (the kill-a-child-process loop of the crash
//! torture tests) and [`ScriptedModel`] (a [`memory_agent::Model`] that replays a script and
//! records what it was asked) and [`retrieval`] (the labelled retrieval set and its metrics).
//!
//! Compare rust-analyzer's `test-utils`, `gix-testtools` and `cargo-test-support`.
//!
//! ```
//! let sb = testkit::Sandbox::new();
//! sb.write("mem/a.md", "x");
//! assert_eq!(sb.read("mem/a.md"), "x");
//! assert!(sb.tree("mem").contains_key("a.md"));
//! ```
#![forbid(unsafe_code)]
// A development tool: plain file writes and environment reads are its job.
#![allow(clippy::disallowed_methods)]
#![allow(clippy::unwrap_used, clippy::missing_panics_doc)]

pub mod crash;
mod model;
pub mod retrieval;
mod sandbox;

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

use jiff::Timestamp;
use memory_core::Clock;

pub use model::{ScriptedModel, memory_call, memory_calls, text, tool_calls};
pub use sandbox::{Sandbox, tree};

/// A clock that starts at 2026-10-01T00:00:01Z and advances one second per reading, so
/// `modified` values and snapshot names are deterministic and strictly increasing.
pub fn stepping_clock() -> Clock {
    stepping_clock_from("2026-10-01T00:00:01Z")
}

/// [`stepping_clock`] starting at `start` (RFC 3339).
pub fn stepping_clock_from(start: &str) -> Clock {
    let start: Timestamp = start.parse().unwrap();
    let n = Arc::new(AtomicI64::new(0));
    Clock::from_fn(move || {
        let i = n.fetch_add(1, Ordering::SeqCst);
        start
            .checked_add(jiff::SignedDuration::from_secs(i))
            .unwrap()
    })
}

/// A tiny deterministic PRNG (xorshift64): the same seed gives the same sequence, so a
/// failure found with a seed reproduces with it.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator from `seed` (0 is mapped to 1: xorshift has no zero state).
    pub fn new(seed: u64) -> Self {
        Rng(seed.max(1))
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// A number in `0..n` (`n` > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }

    /// One element of `items`.
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len() as u64) as usize]
    }
}

/// An entry file in pi-memory's format (created 2026-10-01).
pub fn entry_text(name: &str, description: &str, ty: &str, modified: &str, body: &str) -> String {
    format!(
        "---\nname: {name}\ndescription: {description}\ntype: {ty}\ncreated: 2026-10-01\nmodified: {modified}\n---\n\n{body}\n"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_clock_steps_and_the_rng_repeats() {
        let c = stepping_clock();
        let (a, b) = (c.now(), c.now());
        assert_eq!(b.as_second() - a.as_second(), 1);
        let mut x = Rng::new(7);
        let mut y = Rng::new(7);
        assert_eq!(
            (0..5).map(|_| x.below(100)).collect::<Vec<_>>(),
            (0..5).map(|_| y.below(100)).collect::<Vec<_>>()
        );
    }
}
