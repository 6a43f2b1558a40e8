//! The change of a case's median time between two runs, with its confidence interval, classed as
//! improved, regressed or unchanged. A change counts only when the interval excludes zero (it is
//! not noise) and the estimate exceeds the noise threshold (it is big enough to matter); this is
//! criterion's rule.

use crate::bootstrap::{self, Interval};
use serde::{Deserialize, Serialize};

/// Changes smaller than this many percent are unchanged by default, even when significant.
pub const DEFAULT_NOISE_PCT: f64 = 2.0;

/// What a change amounts to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Class {
    /// Faster, beyond noise.
    Improved,
    /// Slower, beyond noise.
    Regressed,
    /// Within noise: the interval includes zero, or the change is under the threshold.
    Unchanged,
}

impl Class {
    /// The class as written on disk.
    pub fn as_str(self) -> &'static str {
        match self {
            Class::Improved => "improved",
            Class::Regressed => "regressed",
            Class::Unchanged => "unchanged",
        }
    }
}

/// The change of the median from an old set of samples to a new one.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Change {
    /// Old median, ms.
    pub old_median: f64,
    /// New median, ms.
    pub new_median: f64,
    /// (new / old − 1) × 100: positive is slower.
    pub pct: f64,
    /// 95% bootstrap interval of `pct`.
    pub ci_pct: Interval,
    /// The threshold used, percent.
    pub noise_pct: f64,
    /// The verdict.
    pub class: Class,
}

impl Change {
    /// Compares `old` with `new` samples; `None` when either has fewer than two usable samples.
    pub fn between(old: &[f64], new: &[f64], noise_pct: f64) -> Option<Change> {
        let ratio = bootstrap::ratio_of_medians_ci(old, new, bootstrap::RESAMPLES, bootstrap::SEED)?;
        let old_median = bootstrap::median_in_place(&mut old.to_vec());
        let new_median = bootstrap::median_in_place(&mut new.to_vec());
        let pct = (new_median / old_median - 1.0) * 100.0;
        let ci_pct = Interval { low: (ratio.low - 1.0) * 100.0, high: (ratio.high - 1.0) * 100.0 };
        let class = if ci_pct.contains(0.0) || pct.abs() <= noise_pct {
            Class::Unchanged
        } else if pct > 0.0 {
            Class::Regressed
        } else {
            Class::Improved
        };
        Some(Change { old_median, new_median, pct, ci_pct, noise_pct, class })
    }

    /// `+20.1% [+18.3%, +22.0%]`.
    pub fn describe(&self) -> String {
        format!("{:+.1}% [{:+.1}%, {:+.1}%]", self.pct, self.ci_pct.low, self.ci_pct.high)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::SplitMix64;

    /// Timing-like samples: `median` plus noise of about `spread` (relative), right-skewed.
    fn draw(rng: &mut SplitMix64, n: usize, median: f64, spread: f64) -> Vec<f64> {
        (0..n)
            .map(|_| {
                let u = rng.next_f64();
                let v = rng.next_f64();
                median * (1.0 + spread * (u + v - 1.0) + spread * 0.5 * u * u)
            })
            .collect()
    }

    #[test]
    fn a_twenty_percent_slowdown_is_regressed() {
        let mut rng = SplitMix64::new(1);
        let old = draw(&mut rng, 30, 1.0, 0.05);
        let new = draw(&mut rng, 30, 1.2, 0.05);
        let c = Change::between(&old, &new, DEFAULT_NOISE_PCT).unwrap();
        assert_eq!(c.class, Class::Regressed, "{}", c.describe());
        assert!((c.pct - 20.0).abs() < 3.0, "{}", c.describe());
        assert!(c.ci_pct.contains(c.pct) && c.ci_pct.low > 0.0);
    }

    #[test]
    fn the_same_distribution_is_unchanged_and_a_speedup_improved() {
        let mut rng = SplitMix64::new(2);
        let old = draw(&mut rng, 30, 1.0, 0.05);
        let same = draw(&mut rng, 30, 1.0, 0.05);
        let c = Change::between(&old, &same, DEFAULT_NOISE_PCT).unwrap();
        assert_eq!(c.class, Class::Unchanged, "{}", c.describe());
        let faster = draw(&mut rng, 30, 0.7, 0.05);
        assert_eq!(Change::between(&old, &faster, DEFAULT_NOISE_PCT).unwrap().class, Class::Improved);
    }

    #[test]
    fn a_significant_change_under_the_threshold_is_unchanged() {
        let c = Change::between(&[1.0; 10], &[1.01; 10], DEFAULT_NOISE_PCT).unwrap();
        assert!(!c.ci_pct.contains(0.0));
        assert_eq!(c.class, Class::Unchanged);
    }
}
