//! Warm-up: dispatches before timing, to absorb pipeline compilation, first-use allocation and
//! clock ramp-up. `auto` keeps warming up until the dispatches stop getting faster; the decision
//! and the dispatch times behind it are kept, so a report can say how it was made.

use crate::bootstrap::median_in_place;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// Runs per window of the `auto` rule.
pub const WINDOW: usize = 5;
/// `auto` stops once a window's median is no more than this fraction below the previous one's.
pub const TOLERANCE: f64 = 0.05;
/// `auto` stops after this many runs (dispatches, or batches in steady sampling) even if they are
/// still getting faster.
pub const MAX_DISPATCHES: usize = 100;
/// Share of a case's sampling time budget (`--max-time`) that `auto` warm-up may spend.
pub const BUDGET_SHARE: f64 = 0.25;

/// How many warm-up runs to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "Repr", into = "Repr")]
pub enum WarmupPolicy {
    /// Until two successive windows of [`WINDOW`] dispatches have medians within [`TOLERANCE`]
    /// (the later not faster by more), or [`MAX_DISPATCHES`], or [`BUDGET_SHARE`] of the time
    /// budget.
    Auto,
    /// Exactly this many.
    Fixed(u32),
}

/// On disk: `"auto"` or a number.
#[derive(Serialize, Deserialize)]
#[serde(untagged)]
enum Repr {
    Count(u32),
    Word(String),
}

impl From<WarmupPolicy> for Repr {
    fn from(p: WarmupPolicy) -> Repr {
        match p {
            WarmupPolicy::Auto => Repr::Word("auto".into()),
            WarmupPolicy::Fixed(n) => Repr::Count(n),
        }
    }
}

impl TryFrom<Repr> for WarmupPolicy {
    type Error = String;
    fn try_from(r: Repr) -> Result<Self, String> {
        match r {
            Repr::Count(n) => Ok(WarmupPolicy::Fixed(n)),
            Repr::Word(w) => w.parse(),
        }
    }
}

impl FromStr for WarmupPolicy {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "auto" => Ok(WarmupPolicy::Auto),
            n => n
                .parse()
                .map(WarmupPolicy::Fixed)
                .map_err(|_| format!("`{s}` is neither `auto` nor a number of dispatches")),
        }
    }
}

impl fmt::Display for WarmupPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WarmupPolicy::Auto => f.write_str("auto"),
            WarmupPolicy::Fixed(n) => write!(f, "{n}"),
        }
    }
}

/// What ended warm-up.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum WarmupStop {
    /// The fixed count was run.
    Fixed,
    /// Two successive windows agreed: warm-up effects were gone.
    Stable,
    /// The warm-up share of the time budget was spent first.
    Budget,
    /// [`MAX_DISPATCHES`] were run and the times were still falling.
    Limit,
}

fn window_median(times: &[f64]) -> f64 {
    median_in_place(&mut times.to_vec())
}

impl WarmupPolicy {
    /// After warm-up runs whose per-dispatch times are `times` ms and which took `spent_ms` of
    /// wall time together (a run is one dispatch, or a batch of them in steady sampling), whether
    /// to stop (and why); `budget_ms` is the case's sampling time budget.
    pub fn decide(&self, times: &[f64], spent_ms: f64, budget_ms: f64) -> Option<WarmupStop> {
        let n = times.len();
        match *self {
            WarmupPolicy::Fixed(count) => (n >= count as usize).then_some(WarmupStop::Fixed),
            WarmupPolicy::Auto => {
                if n >= 2 * WINDOW && n % WINDOW == 0 {
                    let last = window_median(&times[n - WINDOW..]);
                    let before = window_median(&times[n - 2 * WINDOW..n - WINDOW]);
                    if last >= (1.0 - TOLERANCE) * before {
                        return Some(WarmupStop::Stable);
                    }
                }
                if n >= MAX_DISPATCHES {
                    Some(WarmupStop::Limit)
                } else if spent_ms >= BUDGET_SHARE * budget_ms {
                    Some(WarmupStop::Budget)
                } else {
                    None
                }
            }
        }
    }
}

impl WarmupStop {
    /// The reason as written on disk: `fixed`, `stable`, `budget`, `limit`.
    pub fn as_str(self) -> &'static str {
        match self {
            WarmupStop::Fixed => "fixed",
            WarmupStop::Stable => "stable",
            WarmupStop::Budget => "budget",
            WarmupStop::Limit => "limit",
        }
    }

    /// How the warm-up of `times` ended, in a sentence.
    pub fn explain(&self, times: &[f64]) -> String {
        let n = times.len();
        let windows = || {
            let last = window_median(&times[n - WINDOW..]);
            let before = window_median(&times[n - 2 * WINDOW..n - WINDOW]);
            (before, last)
        };
        match self {
            WarmupStop::Fixed => format!("{n} warm-up runs, as asked (--warmup {n})"),
            WarmupStop::Stable => {
                let (before, last) = windows();
                format!(
                    "auto: {n} warm-up runs; stopped when the median of the last {WINDOW} ({last:.4} ms) was within {:.0}% of the {WINDOW} before ({before:.4} ms)",
                    TOLERANCE * 100.0
                )
            }
            WarmupStop::Budget => format!(
                "auto: {n} warm-up runs; stopped when {:.0}% of the case's time budget was spent, before the times had settled",
                BUDGET_SHARE * 100.0
            ),
            WarmupStop::Limit => format!("auto: stopped at the limit of {n} warm-up runs; times were still falling"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(policy: WarmupPolicy, series: impl Fn(usize) -> f64, budget_ms: f64) -> (usize, WarmupStop) {
        let mut times = Vec::new();
        loop {
            times.push(series(times.len()));
            if let Some(stop) = policy.decide(&times, times.iter().sum(), budget_ms) {
                return (times.len(), stop);
            }
        }
    }

    #[test]
    fn auto_runs_until_the_times_stop_falling() {
        // Compilation effects for the first 12 dispatches, then a flat 1 ms.
        let (n, stop) = run(WarmupPolicy::Auto, |i| if i < 12 { 10.0 - i as f64 * 0.5 } else { 1.0 }, 1e9);
        assert_eq!((n, stop), (20, WarmupStop::Stable));
        // Flat from the start: two windows are enough.
        assert_eq!(run(WarmupPolicy::Auto, |_| 1.0, 1e9), (10, WarmupStop::Stable));
    }

    #[test]
    fn auto_gives_up_at_the_limit_or_the_budget() {
        assert_eq!(run(WarmupPolicy::Auto, |i| 1000.0 * 0.9f64.powi(i as i32), 1e12), (MAX_DISPATCHES, WarmupStop::Limit));
        assert_eq!(run(WarmupPolicy::Auto, |i| 100.0 * 0.9f64.powi(i as i32), 1000.0).1, WarmupStop::Budget);
    }

    #[test]
    fn fixed_runs_its_count() {
        assert_eq!(run(WarmupPolicy::Fixed(3), |_| 1.0, 1.0), (3, WarmupStop::Fixed));
        assert_eq!(WarmupPolicy::Fixed(0).decide(&[], 0.0, 1.0), Some(WarmupStop::Fixed));
    }

    #[test]
    fn the_explanation_names_the_windows() {
        let times = [1.0; 10];
        assert!(WarmupStop::Stable.explain(&times).contains("within 5% of the 5 before (1.0000 ms)"));
    }

    #[test]
    fn policy_reads_auto_or_a_count_from_text_and_json() {
        assert_eq!("auto".parse(), Ok(WarmupPolicy::Auto));
        assert_eq!("7".parse(), Ok(WarmupPolicy::Fixed(7)));
        assert!("soon".parse::<WarmupPolicy>().unwrap_err().contains("soon"));
        let json = serde_json::to_string(&[WarmupPolicy::Auto, WarmupPolicy::Fixed(5)]).unwrap();
        assert_eq!(json, r#"["auto",5]"#);
        assert_eq!(serde_json::from_str::<Vec<WarmupPolicy>>(&json).unwrap(), [WarmupPolicy::Auto, WarmupPolicy::Fixed(5)]);
    }
}
