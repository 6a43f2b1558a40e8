//! Regressions over a window: is a series' newest run different from the runs before it?
//!
//! Not a fixed percentage against one baseline: a run-to-run spread is estimated from the window
//! itself, so a noisy series needs a bigger change than a quiet one, and a slow drift that no
//! single pair of runs shows is found by a trend test. The rule, for the newest point of a series
//! and the `window` points before it:
//!
//! - **Step.** For the newest `m` points (`m` = 1, 2, 3) against the `window` points before them:
//!   the centre `c` is the window's median, the spread `σ` the largest of its MAD × 1.4826, its
//!   interquartile range ÷ 1.349 and its 5%–95% range ÷ 3.29 ([`spread`]: a window whose runs sit
//!   at two levels is not a quiet one), and at least 0.1% of `c`. The newest `m` points' mean is
//!   `z = (mean − c) / (σ √(1/m + π/(2n)))` spreads from the centre (`n` the window's size; the
//!   second term is the uncertainty of its median). A step is found when every one of the `m`
//!   points lies on the same side of `c`, `|z|` is at least [`Rule::step_z`] (one run alone: at
//!   least [`Rule::single_z`], so a lone outlier is no step), and the change is at least
//!   [`Rule::min_pct`] percent of `c`. The `m` with the largest `|z|` names where it began.
//! - **Drift.** Over the newest `window + 1` points: the Mann–Kendall statistic `S` (the sum of
//!   the signs of every later-minus-earlier pair) against its variance under no trend, `Z`;
//!   a drift is found when `|Z|` is at least [`Rule::drift_z`] and the line of the Theil–Sen
//!   slope (the median of the pairwise slopes) through the window's median moves at least
//!   [`Rule::min_pct`] percent from the window's start to its end.
//!
//! A step is reported before a drift (a step is also a trend). Fewer than [`Rule::min_window`]
//! points before the newest: nothing is said. The error rates, measured on synthetic series with
//! the spread measured on the GPU machine, are in README ("History and trends").

use std::cmp::Ordering;

/// The rule's settings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rule {
    /// Points before the newest ones that the newest are compared with.
    pub window: usize,
    /// Fewest points before the newest for any verdict.
    pub min_window: usize,
    /// Spreads two or three newest runs' mean must be off the centre.
    pub step_z: f64,
    /// Spreads one newest run alone must be off the centre.
    pub single_z: f64,
    /// Mann–Kendall `|Z|` of a drift.
    pub drift_z: f64,
    /// Smallest change, percent of the centre, that counts.
    pub min_pct: f64,
}

impl Default for Rule {
    fn default() -> Self {
        Rule { window: 20, min_window: 5, step_z: 3.5, single_z: 6.0, drift_z: 3.5, min_pct: 2.0 }
    }
}

impl Rule {
    /// The default rule over a window of `window` runs (`--window`).
    pub fn with_window(window: u32) -> Rule {
        Rule { window: window as usize, ..Rule::default() }
    }
}

/// Slower or faster.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// Slower: the time went up.
    Regressed,
    /// Faster.
    Improved,
}

impl Direction {
    /// As reports write it.
    pub fn as_str(self) -> &'static str {
        match self {
            Direction::Regressed => "regressed",
            Direction::Improved => "improved",
        }
    }
}

/// What kind of change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A step, `runs` runs ago (the newest `runs` points are past it).
    Step {
        /// Points past the step.
        runs: usize,
    },
    /// A steady drift over the window.
    Drift,
}

impl Kind {
    /// In words, as `history check` and the trend site say it.
    pub fn words(self) -> String {
        match self {
            Kind::Step { runs } => format!("a step {runs} run(s) ago"),
            Kind::Drift => "a drift over the window".into(),
        }
    }
}

/// A change found at a series' newest point.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Finding {
    /// Slower or faster.
    pub direction: Direction,
    /// Step or drift.
    pub kind: Kind,
    /// The change, percent of the window's centre (a step's mean past it; a drift's slope over
    /// the window).
    pub pct: f64,
    /// Its strength: the step's `z` or the drift's Mann–Kendall `Z`.
    pub z: f64,
    /// Index of the last point before the change.
    pub last_before: usize,
    /// Index of the first point of the change.
    pub first_after: usize,
}

/// The change at the newest of `values` (a series' medians, oldest first), if the rule finds one.
pub fn check(values: &[f64], rule: &Rule) -> Option<Finding> {
    step(values, rule).or_else(|| drift(values, rule))
}

/// The step test.
fn step(values: &[f64], rule: &Rule) -> Option<Finding> {
    let len = values.len();
    let mut best: Option<Finding> = None;
    for m in 1..=3usize {
        let Some(end) = len.checked_sub(m) else { continue };
        let before = &values[end.saturating_sub(rule.window)..end];
        if before.len() < rule.min_window {
            continue;
        }
        let recent = &values[end..];
        let c = median(before);
        let sigma = spread(before, c);
        if !(sigma > 0.0) {
            continue;
        }
        let side = |v: f64| (v - c).partial_cmp(&0.0).unwrap_or(Ordering::Equal);
        if recent.iter().any(|&v| side(v) != side(recent[0])) || side(recent[0]) == Ordering::Equal {
            continue;
        }
        let mean = recent.iter().sum::<f64>() / m as f64;
        let z = (mean - c) / (sigma * (1.0 / m as f64 + std::f64::consts::PI / (2.0 * before.len() as f64)).sqrt());
        let pct = (mean / c - 1.0) * 100.0;
        let needed = if m == 1 { rule.single_z } else { rule.step_z };
        if z.abs() < needed || pct.abs() < rule.min_pct {
            continue;
        }
        if best.is_none_or(|b| z.abs() > b.z.abs()) {
            let direction = if z > 0.0 { Direction::Regressed } else { Direction::Improved };
            best = Some(Finding { direction, kind: Kind::Step { runs: m }, pct, z, last_before: end - 1, first_after: end });
        }
    }
    best
}

/// The drift test.
fn drift(values: &[f64], rule: &Rule) -> Option<Finding> {
    let len = values.len();
    let n = (rule.window + 1).min(len);
    if n < rule.min_window + 1 {
        return None;
    }
    let w = &values[len - n..];
    let mut s = 0i64;
    let mut slopes = Vec::with_capacity(n * (n - 1) / 2);
    for i in 0..n {
        for j in i + 1..n {
            s += match w[j].partial_cmp(&w[i]) {
                Some(Ordering::Greater) => 1,
                Some(Ordering::Less) => -1,
                _ => 0,
            };
            slopes.push((w[j] - w[i]) / (j - i) as f64);
        }
    }
    let nf = n as f64;
    let var = nf * (nf - 1.0) * (2.0 * nf + 5.0) / 18.0;
    let z = (s - s.signum()) as f64 / var.sqrt();
    let slope = median(&slopes);
    // The fitted line's change over the window, from its start to its end.
    let c = median(w);
    let (start, end) = (c - slope * (nf - 1.0) / 2.0, c + slope * (nf - 1.0) / 2.0);
    let pct = (end / start - 1.0) * 100.0;
    if z.abs() < rule.drift_z || pct.abs() < rule.min_pct || (slope > 0.0) != (z > 0.0) {
        return None;
    }
    let direction = if z > 0.0 { Direction::Regressed } else { Direction::Improved };
    Some(Finding { direction, kind: Kind::Drift, pct, z, last_before: len - n, first_after: len - n + 1 })
}

/// The run-to-run spread of `window` (centre `c`), as a normal standard deviation would be: the
/// largest of three estimates, so that neither a few wild runs nor two clock states (a series
/// whose runs sit at two levels, which GPU kernels of microseconds do) read as a quiet window:
/// the MAD × 1.4826, the interquartile range ÷ 1.349 and the 5%–95% range ÷ 3.29; at least 0.1%
/// of `c`, so that a flat window does not make every wiggle a change.
pub fn spread(window: &[f64], c: f64) -> f64 {
    let mut sorted = window.to_vec();
    sorted.sort_by(|a, b| a.total_cmp(b));
    let q = |p: f64| stats::quantile(&sorted, p);
    let mad = 1.4826 * median(&window.iter().map(|v| (v - c).abs()).collect::<Vec<_>>());
    mad.max((q(0.75) - q(0.25)) / 1.349).max((q(0.95) - q(0.05)) / 3.29).max(c.abs() * 1e-3)
}

/// The median of `values` (the mean of the middle two for an even count).
pub fn median(values: &[f64]) -> f64 {
    let mut v = values.to_vec();
    v.sort_by(|a, b| a.total_cmp(b));
    match v.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_clear_step_is_found_at_its_run_and_flat_noise_is_not() {
        let mut v: Vec<f64> = (0..20).map(|i| 100.0 + if i % 2 == 0 { 0.5 } else { -0.5 }).collect();
        assert_eq!(check(&v, &Rule::default()), None);
        v.extend([110.0, 110.5]);
        let f = check(&v, &Rule::default()).unwrap();
        assert_eq!((f.direction, f.kind, f.last_before, f.first_after), (Direction::Regressed, Kind::Step { runs: 2 }, 19, 20));
        assert!((f.pct - 10.25).abs() < 0.5, "{f:?}");
        // Faster is an improvement.
        let faster: Vec<f64> = v[..20].iter().copied().chain([90.0, 90.2, 89.9]).collect();
        assert_eq!(check(&faster, &Rule::default()).unwrap().direction, Direction::Improved);
    }

    #[test]
    fn a_lone_outlier_is_no_step_and_too_short_a_history_says_nothing() {
        let mut v: Vec<f64> = (0..20).map(|i| 100.0 + (i % 5) as f64 * 0.3).collect();
        v.push(103.0);
        assert_eq!(check(&v, &Rule::default()), None, "one run 2.4% off, 5.2 spreads: below the single-run bar");
        assert_eq!(check(&[1.0, 1.0, 1.0, 2.0], &Rule::default()), None);
    }

    #[test]
    fn a_steady_drift_is_found_as_a_drift() {
        let v: Vec<f64> = (0..21).map(|i| 100.0 * (1.0 + 0.01 * i as f64) + if i % 2 == 0 { 0.3 } else { -0.3 }).collect();
        let f = check(&v, &Rule::default()).unwrap();
        assert_eq!((f.direction, f.kind), (Direction::Regressed, Kind::Drift), "{f:?}");
        assert!(f.pct > 15.0, "{f:?}");
    }
}
