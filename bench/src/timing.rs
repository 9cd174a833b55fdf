//! Wall-clock sampling shared by every benchmark group.

use std::time::{Duration, Instant};

/// Summary of repeated timings of one operation.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Stats {
    /// Median duration of one call.
    pub median: Duration,
    /// 10th percentile.
    pub p10: Duration,
    /// 90th percentile.
    pub p90: Duration,
    /// Number of samples taken.
    pub samples: usize,
}

/// Runs `f` once to warm up, then `samples` times, and summarises the durations.
pub(crate) fn measure<T>(samples: usize, mut f: impl FnMut() -> T) -> Stats {
    std::hint::black_box(f());
    let mut times: Vec<Duration> = (0..samples.max(1))
        .map(|_| {
            let t = Instant::now();
            std::hint::black_box(f());
            t.elapsed()
        })
        .collect();
    times.sort();
    let at = |q: f64| times[((times.len() - 1) as f64 * q).round() as usize];
    Stats {
        median: at(0.5),
        p10: at(0.1),
        p90: at(0.9),
        samples: times.len(),
    }
}

/// Summarises durations collected by the caller (e.g. interleaved with a baseline).
pub(crate) fn stats_of(mut times: Vec<Duration>) -> Stats {
    times.sort();
    if times.is_empty() {
        times.push(Duration::ZERO);
    }
    let at = |q: f64| times[((times.len() - 1) as f64 * q).round() as usize];
    Stats {
        median: at(0.5),
        p10: at(0.1),
        p90: at(0.9),
        samples: times.len(),
    }
}

/// Times one call.
pub(crate) fn time<T>(f: impl FnOnce() -> T) -> (T, Duration) {
    let t = Instant::now();
    let out = std::hint::black_box(f());
    (out, t.elapsed())
}

/// Formats a duration with a unit that keeps three significant digits readable.
pub(crate) fn fmt(d: Duration) -> String {
    let ns = d.as_nanos();
    if ns < 10_000 {
        format!("{ns} ns")
    } else if ns < 10_000_000 {
        format!("{:.1} µs", ns as f64 / 1e3)
    } else {
        format!("{:.2} ms", ns as f64 / 1e6)
    }
}

/// One Markdown table row: `| name | median | p10 | p90 | samples |`.
pub(crate) fn row(name: &str, s: &Stats) -> String {
    format!(
        "| {name} | {} | {} | {} | {} |",
        fmt(s.median),
        fmt(s.p10),
        fmt(s.p90),
        s.samples
    )
}

/// The header matching [`row`].
pub(crate) const HEADER: &str =
    "| benchmark | median | p10 | p90 | samples |\n|---|---|---|---|---|";
