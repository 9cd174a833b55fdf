//! Dates: `Date.prototype.toISOString`.

use jiff::Timestamp;

/// JavaScript's `Date.prototype.toISOString()` for `ts`: UTC, milliseconds truncated,
/// e.g. `2026-10-02T00:00:00.000Z`; years outside 0..=9999 as `+YYYYYY`/`-YYYYYY`.
/// The `modified` field of entries, lock records and snapshot names all use it.
pub fn iso_millis(ts: Timestamp) -> String {
    let ms = ts.as_millisecond();
    let whole = Timestamp::from_millisecond(ms).unwrap_or(ts);
    let dt = whole.to_zoned(jiff::tz::TimeZone::UTC).datetime();
    let year = i32::from(dt.year());
    let year = if (0..=9999).contains(&year) {
        format!("{year:04}")
    } else if year < 0 {
        format!("-{:06}", -year)
    } else {
        format!("+{year:06}")
    };
    format!(
        "{year}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z",
        dt.month(),
        dt.day(),
        dt.hour(),
        dt.minute(),
        dt.second(),
        ms.rem_euclid(1000)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_like_javascript() {
        let ts: Timestamp = "2026-10-01T09:12:33.123456Z".parse().unwrap();
        assert_eq!(iso_millis(ts), "2026-10-01T09:12:33.123Z");
        let ts: Timestamp = "2026-01-02T00:00:00Z".parse().unwrap();
        assert_eq!(iso_millis(ts), "2026-01-02T00:00:00.000Z");
        let ts = Timestamp::from_millisecond(-1).unwrap();
        assert_eq!(iso_millis(ts), "1969-12-31T23:59:59.999Z");
        let ts: Timestamp = "-000001-06-01T00:00:00Z".parse().unwrap();
        assert_eq!(iso_millis(ts), "-000001-06-01T00:00:00.000Z");
    }
}
