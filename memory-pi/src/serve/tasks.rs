//! Work that outlives the request that started it (extraction after a run, a dream) and the
//! request workers themselves: counted, so `session/shutdown` and end of input can wait for
//! them (at most `lock.timeoutMs`, PM-51) and a write is never cut off mid-way.

use std::sync::Arc;
use std::time::{Duration, Instant};

use memory_agent::CancelToken;
use parking_lot::{Condvar, Mutex};

/// A counter of running tasks with a condition variable and a shared cancellation flag.
#[derive(Default)]
pub(super) struct Tasks {
    running: Mutex<usize>,
    idle: Condvar,
    cancel: CancelToken,
}

/// Decrements the counter when dropped (also on panic).
pub(super) struct TaskGuard(Arc<Tasks>);

impl Drop for TaskGuard {
    fn drop(&mut self) {
        let mut n = self.0.running.lock();
        *n = n.saturating_sub(1);
        if *n == 0 {
            self.0.idle.notify_all();
        }
    }
}

impl Tasks {
    /// Registers a task; it counts until the guard is dropped.
    pub(super) fn enter(self: &Arc<Self>) -> TaskGuard {
        *self.running.lock() += 1;
        TaskGuard(self.clone())
    }

    /// Runs `f` on its own thread as a counted task.
    pub(super) fn spawn(self: &Arc<Self>, name: &str, f: impl FnOnce() + Send + 'static) {
        let guard = self.enter();
        let spawned = std::thread::Builder::new()
            .name(name.to_owned())
            .spawn(move || {
                let _guard = guard;
                f();
            });
        if let Err(e) = spawned {
            // The guard moved into the failed closure and was dropped with it.
            eprintln!("pimem serve: cannot start a {name} thread: {e}");
        }
    }

    /// The cancellation flag handed to background work (set by [`Tasks::cancel_all`]).
    pub(super) fn token(&self) -> CancelToken {
        self.cancel.clone()
    }

    /// Asks every task to stop at its next check.
    pub(super) fn cancel_all(&self) {
        self.cancel.cancel();
    }

    /// Number of tasks running now.
    #[cfg(test)]
    pub(super) fn running(&self) -> usize {
        *self.running.lock()
    }

    /// Waits until at most `keep` tasks run (the caller's own task counts), or `timeout`.
    /// Returns whether that point was reached.
    pub(super) fn wait_until_at_most(&self, keep: usize, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        let mut n = self.running.lock();
        while *n > keep {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return false;
            }
            self.idle
                .wait_for(&mut n, left.min(Duration::from_millis(20)));
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waits_for_tasks_and_gives_up_at_the_timeout() {
        let tasks = Arc::new(Tasks::default());
        let (tx, rx) = std::sync::mpsc::channel::<()>();
        tasks.spawn("test", move || {
            let _ = rx.recv();
        });
        assert_eq!(tasks.running(), 1);
        assert!(!tasks.wait_until_at_most(0, Duration::from_millis(30)));
        tx.send(()).unwrap();
        assert!(tasks.wait_until_at_most(0, Duration::from_secs(5)));
        assert_eq!(tasks.running(), 0);
    }

    #[test]
    fn a_panicking_task_still_leaves_the_count() {
        let tasks = Arc::new(Tasks::default());
        tasks.spawn("boom", || panic!("task failure on purpose"));
        assert!(tasks.wait_until_at_most(0, Duration::from_secs(5)));
        let own = tasks.enter();
        assert!(tasks.wait_until_at_most(1, Duration::from_millis(1)));
        drop(own);
        assert_eq!(tasks.running(), 0);
    }

    #[test]
    fn cancellation_reaches_every_token() {
        let tasks = Tasks::default();
        let t = tasks.token();
        assert!(!t.is_cancelled());
        tasks.cancel_all();
        assert!(t.is_cancelled());
    }
}
