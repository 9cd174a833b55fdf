//! Time as the store sees it: an injectable clock and the two timestamp formats of the files.

use std::sync::Arc;

use jiff::Timestamp;

/// A source of "now". Tests inject a fixed or stepping clock; production uses the system.
#[derive(Clone)]
pub struct Clock(Arc<dyn Fn() -> Timestamp + Send + Sync>);

impl Clock {
    /// The system clock.
    pub fn system() -> Self {
        Clock(Arc::new(Timestamp::now))
    }

    /// A clock backed by any function (tests: fixed or stepping time).
    pub fn from_fn(f: impl Fn() -> Timestamp + Send + Sync + 'static) -> Self {
        Clock(Arc::new(f))
    }

    /// The current time.
    pub fn now(&self) -> Timestamp {
        (self.0)()
    }
}

impl Default for Clock {
    fn default() -> Self {
        Clock::system()
    }
}

impl std::fmt::Debug for Clock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Clock")
    }
}

/// `2026-10-01T09:12:33.123Z`: JavaScript's `Date.toISOString()`, the `modified` format
/// (the same function the lock records and snapshot names use).
pub use memory_js::iso_millis;

/// `2026-10-01`: the UTC date, the `created` format.
pub fn iso_date(ts: Timestamp) -> String {
    let mut s = iso_millis(ts);
    s.truncate(10);
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_match_javascript() {
        let ts: Timestamp = "2026-10-01T09:12:33.123456Z".parse().unwrap();
        assert_eq!(iso_millis(ts), "2026-10-01T09:12:33.123Z");
        assert_eq!(iso_date(ts), "2026-10-01");
        let ts: Timestamp = "2026-01-02T00:00:00Z".parse().unwrap();
        assert_eq!(iso_millis(ts), "2026-01-02T00:00:00.000Z");
    }
}
