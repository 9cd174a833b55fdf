//! The names people use: runs `R01`, `R02`, … and experiences `E1`, `E2`, …, and run
//! intervals `R03-R05` (PX-12, PX-21).
//!
//! Decision (VECTORS §Z 17): runs are numbered per project database from 1 and written with at
//! least two digits (`R01` … `R99`, then `R100`); experiences without padding (`E1`, `E12`).
//! Parsing is case-insensitive and accepts any number of leading zeros (`r1`, `R001`).

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::error::ParseIdError;

/// A run's per-project number (`R01`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct RunNo(pub u32);

/// An experience's number (`E1`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct ExpNo(pub u32);

impl fmt::Display for RunNo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "R{:02}", self.0)
    }
}

impl fmt::Display for ExpNo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "E{}", self.0)
    }
}

fn number(text: &str, prefix: char, what: &'static str) -> Result<u32, ParseIdError> {
    let bad = || ParseIdError {
        text: text.to_owned(),
        what,
    };
    let t = text.trim();
    let mut chars = t.chars();
    let first = chars.next().ok_or_else(bad)?;
    if !first.eq_ignore_ascii_case(&prefix) {
        return Err(bad());
    }
    let digits = chars.as_str();
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad());
    }
    match digits.parse::<u32>() {
        Ok(n) if n > 0 => Ok(n),
        _ => Err(bad()),
    }
}

impl FromStr for RunNo {
    type Err = ParseIdError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        number(s, 'R', "a run (R01)").map(RunNo)
    }
}

impl FromStr for ExpNo {
    type Err = ParseIdError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        number(s, 'E', "an experience (E1)").map(ExpNo)
    }
}

/// An inclusive interval of run numbers, `R03-R05` or a single `R04` (a source of an
/// experience, PX-13).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Interval {
    /// The first run.
    pub lo: RunNo,
    /// The last run (≥ `lo`).
    pub hi: RunNo,
}

impl Interval {
    /// The interval of one run.
    pub fn one(run: RunNo) -> Self {
        Interval { lo: run, hi: run }
    }

    /// Whether the two intervals share a run.
    pub fn overlaps(&self, other: &Interval) -> bool {
        self.lo <= other.hi && other.lo <= self.hi
    }

    /// Whether `run` is inside.
    pub fn contains(&self, run: RunNo) -> bool {
        self.lo <= run && run <= self.hi
    }

    /// The runs inside, in order.
    pub fn runs(&self) -> impl Iterator<Item = RunNo> {
        (self.lo.0..=self.hi.0).map(RunNo)
    }
}

impl fmt::Display for Interval {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.lo == self.hi {
            write!(f, "{}", self.lo)
        } else {
            write!(f, "{}-{}", self.lo, self.hi)
        }
    }
}

impl FromStr for Interval {
    type Err = ParseIdError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = || ParseIdError {
            text: s.to_owned(),
            what: "a run or a run interval (R03, R03-R05)",
        };
        let (lo, hi) = match s.trim().split_once(['-', '–', '.']) {
            Some((a, b)) => (
                a.parse::<RunNo>().map_err(|_| bad())?,
                b.trim_start_matches('.')
                    .parse::<RunNo>()
                    .map_err(|_| bad())?,
            ),
            None => {
                let r = s.parse::<RunNo>().map_err(|_| bad())?;
                (r, r)
            }
        };
        if lo > hi {
            return Err(ParseIdError {
                text: s.to_owned(),
                what: "an interval whose first run comes before its last",
            });
        }
        Ok(Interval { lo, hi })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_bad_ones_say_what_was_expected() {
        assert_eq!(RunNo(1).to_string(), "R01");
        assert_eq!(RunNo(100).to_string(), "R100");
        assert_eq!(ExpNo(3).to_string(), "E3");
        assert_eq!("r1".parse::<RunNo>().unwrap(), RunNo(1));
        assert_eq!("R001".parse::<RunNo>().unwrap(), RunNo(1));
        assert_eq!("e12".parse::<ExpNo>().unwrap(), ExpNo(12));
        for bad in ["", "R", "R0", "E1", "R-1", "R1x", "12"] {
            let e = bad.parse::<RunNo>().unwrap_err();
            assert_eq!(
                e.to_string(),
                format!("\"{bad}\" is not a run (R01)"),
                "{bad}"
            );
        }
        assert_eq!(
            "R03-R05".parse::<Interval>().unwrap(),
            Interval {
                lo: RunNo(3),
                hi: RunNo(5)
            }
        );
        assert_eq!(
            "R03..R05".parse::<Interval>().unwrap().to_string(),
            "R03-R05"
        );
        assert_eq!("R4".parse::<Interval>().unwrap().to_string(), "R04");
        assert_eq!(
            "R05-R03".parse::<Interval>().unwrap_err().to_string(),
            "\"R05-R03\" is not an interval whose first run comes before its last"
        );
    }

    #[test]
    fn overlap_is_sharing_a_run() {
        let i = |a, b| Interval {
            lo: RunNo(a),
            hi: RunNo(b),
        };
        assert!(i(1, 3).overlaps(&i(3, 4)));
        assert!(!i(1, 3).overlaps(&i(4, 4)));
        assert!(i(2, 2).overlaps(&i(1, 9)));
    }
}
