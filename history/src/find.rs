//! `harness history find CASE`: where in a series a step happened, narrowed to the first run that
//! shows it. Every split of the series into an earlier and a later part is scored like the step
//! test of [`crate::detect`] (the two parts' medians apart, in spreads pooled from both parts'
//! MADs), and the best split that passes the rule's bar is the step: its last run before and
//! first run after name the commits it lies between. The commits between those two that have no
//! run are what to run next (the binary asks git for them); a series with no such split has no
//! step to narrow.

use crate::detect::{median, spread, Direction, Rule};

/// A step in a series.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Step {
    /// Index of the last point before it.
    pub last_before: usize,
    /// Index of the first point after it.
    pub first_after: usize,
    /// The median before, ms.
    pub before_ms: f64,
    /// The median after, ms.
    pub after_ms: f64,
    /// The change, percent of `before_ms`.
    pub pct: f64,
    /// Spreads apart.
    pub z: f64,
    /// Slower or faster.
    pub direction: Direction,
}

/// Fewest points each side of a split.
const SIDE: usize = 2;

/// The step in `values` (a series' medians, oldest first), if the rule's bar finds one.
pub fn step(values: &[f64], rule: &Rule) -> Option<Step> {
    let mut best: Option<Step> = None;
    for k in SIDE..=values.len().saturating_sub(SIDE) {
        let (before, after) = values.split_at(k);
        let (b, a) = (median(before), median(after));
        let sigma = ((spread(before, b).powi(2) * before.len() as f64 + spread(after, a).powi(2) * after.len() as f64) / values.len() as f64).sqrt();
        let z = (a - b) / (sigma * (std::f64::consts::PI / 2.0 * (1.0 / before.len() as f64 + 1.0 / after.len() as f64)).sqrt());
        let pct = (a / b - 1.0) * 100.0;
        if z.abs() < rule.step_z || pct.abs() < rule.min_pct || best.is_some_and(|s| s.z.abs() >= z.abs()) {
            continue;
        }
        let direction = if z > 0.0 { Direction::Regressed } else { Direction::Improved };
        best = Some(Step { last_before: k - 1, first_after: k, before_ms: b, after_ms: a, pct, z, direction });
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_step_is_narrowed_to_its_first_run_and_noise_has_none() {
        let noise = [0.4, -0.3, 0.1, -0.5, 0.2, 0.0, -0.2, 0.3];
        let mut v: Vec<f64> = noise.iter().map(|n| 100.0 + n).collect();
        assert_eq!(step(&v, &Rule::default()), None);
        v.extend(noise.iter().take(5).map(|n| 106.0 + n));
        let s = step(&v, &Rule::default()).unwrap();
        assert_eq!((s.last_before, s.first_after, s.direction), (7, 8, Direction::Regressed));
        assert!((s.pct - 6.0).abs() < 0.5, "{s:?}");
    }
}
