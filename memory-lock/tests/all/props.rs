//! Property tests of the pure parts: record codec, timestamps, retry ladder.
#![allow(clippy::unwrap_used)]

use std::io;
use std::time::Duration;

use jiff::Timestamp;
use memory_js::iso_millis;
use memory_lock::{Holder, Platform, RetryPolicy, retry_with, snapshot_stamp};
use proptest::prelude::*;

/// Milliseconds from 1970 to the end of year 9999 (JavaScript's four-digit-year range).
const MAX_MS: i64 = 253_402_300_799_999;

proptest! {
    #[test]
    fn holder_json_round_trips_with_fixed_key_order(
        pid in any::<u32>(),
        hostname in any::<String>(),
        started_at in any::<String>(),
        op in any::<String>(),
    ) {
        let holder = Holder { pid, hostname, started_at, op };
        let json = holder.to_json();
        let js = |s: &str| serde_json::to_string(s).unwrap();
        let expected = format!(
            "{{\"pid\":{pid},\"hostname\":{},\"startedAt\":{},\"op\":{}}}",
            js(&holder.hostname), js(&holder.started_at), js(&holder.op)
        );
        prop_assert_eq!(&json, &expected);
        prop_assert_eq!(Holder::parse(json.as_bytes()), Some(holder));
    }

    #[test]
    fn iso_millis_matches_javascript_shape_and_round_trips(ms in 0..=MAX_MS) {
        let ts = Timestamp::from_millisecond(ms).unwrap();
        let iso = iso_millis(ts);
        prop_assert_eq!(iso.len(), 24);
        prop_assert!(iso.ends_with('Z'));
        let back: Timestamp = iso.parse().unwrap();
        prop_assert_eq!(back.as_millisecond(), ms);
        // Sub-millisecond parts are truncated, as Date keeps milliseconds only.
        let finer = ts.checked_add(jiff::SignedDuration::from_micros(999)).unwrap();
        prop_assert_eq!(iso_millis(finer), iso);
    }

    #[test]
    fn snapshot_names_sort_in_time_order(a in 0..=MAX_MS, b in 0..=MAX_MS) {
        let sa = snapshot_stamp(Timestamp::from_millisecond(a).unwrap());
        let sb = snapshot_stamp(Timestamp::from_millisecond(b).unwrap());
        prop_assert_eq!(a.cmp(&b), sa.cmp(&sb));
        prop_assert!(!sa.contains(':') && !sa.contains('.'));
    }

    #[test]
    fn retry_delay_is_doubling_capped(attempt in 0u32..200) {
        let policy = RetryPolicy::default();
        let expected = if attempt >= 4 { 300 } else { 20u64 << attempt };
        prop_assert_eq!(policy.delay(attempt), Duration::from_millis(expected.min(300)));
    }

    #[test]
    fn transient_failures_within_budget_always_succeed(failures in 0usize..=6) {
        let policy = RetryPolicy { platform: Platform::Posix, ..RetryPolicy::default() };
        let mut calls = 0;
        let mut sleeps = Vec::new();
        let result = retry_with(&policy, |d| sleeps.push(d), || {
            calls += 1;
            if calls <= failures {
                Err(io::Error::from_raw_os_error(rustix::io::Errno::BUSY.raw_os_error()))
            } else {
                Ok(calls)
            }
        });
        prop_assert_eq!(result.unwrap(), failures + 1);
        let expected: Vec<Duration> = (0..failures as u32).map(|i| policy.delay(i)).collect();
        prop_assert_eq!(sleeps, expected);
    }
}
