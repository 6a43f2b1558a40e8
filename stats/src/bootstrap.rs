//! Percentile-bootstrap confidence intervals. Seeded, so the same samples always give the same
//! interval: the page's stop decision, the report and a rebuilt report agree.

use crate::rng::SplitMix64;
use crate::order::quantile;
use serde::{Deserialize, Serialize};

/// Resamples per bootstrap: enough that the 2.5% and 97.5% percentiles move by well under a
/// sample's spacing from one seed to another.
pub const RESAMPLES: usize = 2000;
/// Confidence level of every interval harness reports.
pub const CONFIDENCE: f64 = 0.95;
/// The seed every reported interval uses, so reports are reproducible.
pub const SEED: u64 = 0x0048_4152_4E45_5353; // "HARNESS"

/// A confidence interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Interval {
    /// Lower bound.
    pub low: f64,
    /// Upper bound.
    pub high: f64,
}

impl Interval {
    /// Half the width.
    pub fn half_width(&self) -> f64 {
        (self.high - self.low) / 2.0
    }

    /// Whether `v` lies inside, bounds included.
    pub fn contains(&self, v: f64) -> bool {
        self.low <= v && v <= self.high
    }
}

/// The median of `values`, reordering them (O(n), no full sort).
pub fn median_in_place(values: &mut [f64]) -> f64 {
    let n = values.len();
    let mid = n / 2;
    let (lower, m, _) = values.select_nth_unstable_by(mid, f64::total_cmp);
    let m = *m;
    if n % 2 == 1 {
        m
    } else {
        let below = lower.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        (below + m) / 2.0
    }
}

/// Medians of `resamples` resamples (with replacement) of `samples`.
fn resampled_medians(samples: &[f64], resamples: usize, rng: &mut SplitMix64) -> Vec<f64> {
    let n = samples.len();
    let mut scratch = vec![0.0; n];
    (0..resamples)
        .map(|_| {
            for slot in scratch.iter_mut() {
                *slot = samples[rng.below(n)];
            }
            median_in_place(&mut scratch)
        })
        .collect()
}

/// The central [`CONFIDENCE`] interval of bootstrap estimates.
fn percentile_interval(mut estimates: Vec<f64>) -> Interval {
    estimates.sort_by(f64::total_cmp);
    let tail = (1.0 - CONFIDENCE) / 2.0;
    Interval { low: quantile(&estimates, tail), high: quantile(&estimates, 1.0 - tail) }
}

/// The percentile-bootstrap [`CONFIDENCE`] interval of the median of `samples`; `None` for fewer
/// than two samples or a non-finite one.
pub fn median_ci(samples: &[f64], resamples: usize, seed: u64) -> Option<Interval> {
    if samples.len() < 2 || samples.iter().any(|v| !v.is_finite()) {
        return None;
    }
    let mut rng = SplitMix64::new(seed);
    Some(percentile_interval(resampled_medians(samples, resamples, &mut rng)))
}

/// The percentile-bootstrap [`CONFIDENCE`] interval of `median(new) / median(old)`, the two
/// resampled independently; `None` when either side has fewer than two samples, a non-finite
/// one, or a resample median of zero.
pub fn ratio_of_medians_ci(old: &[f64], new: &[f64], resamples: usize, seed: u64) -> Option<Interval> {
    let usable = |s: &[f64]| s.len() >= 2 && s.iter().all(|v| v.is_finite());
    if !usable(old) || !usable(new) {
        return None;
    }
    let mut rng = SplitMix64::new(seed);
    let olds = resampled_medians(old, resamples, &mut rng);
    let news = resampled_medians(new, resamples, &mut rng);
    if olds.iter().any(|&m| m <= 0.0) {
        return None;
    }
    Some(percentile_interval(news.iter().zip(&olds).map(|(n, o)| n / o).collect()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// P(the median of a resample of n is ≤ the k-th smallest of n distinct values): at least
    /// (n+1)/2 of the n draws must be among the k smallest (binomial with p = k/n).
    fn exact_median_cdf(n: u64, k: u64) -> f64 {
        let p = k as f64 / n as f64;
        let choose = |n: u64, r: u64| (0..r).fold(1.0, |acc, i| acc * (n - i) as f64 / (i + 1) as f64);
        (n.div_ceil(2)..=n).map(|j| choose(n, j) * p.powi(j as i32) * (1.0 - p).powi((n - j) as i32)).sum()
    }

    #[test]
    fn seeded_bootstrap_of_the_median_matches_the_exact_bootstrap_distribution() {
        // 11 distinct values: the bootstrap median is always one of them, and its exact
        // distribution is binomial, so the 2.5% and 97.5% points are known without simulation.
        let samples: Vec<f64> = (1..=11).map(|i| 10.0 + i as f64 * 0.5).collect();
        let n = samples.len() as u64;
        let lower_k = (1..=n).find(|&k| exact_median_cdf(n, k) >= 0.025).unwrap();
        let upper_k = (1..=n).find(|&k| exact_median_cdf(n, k) >= 0.975).unwrap();
        // Away from a boundary, so 2000 resamples land on the same order statistic.
        assert!(exact_median_cdf(n, lower_k) > 0.04 && exact_median_cdf(n, lower_k - 1) < 0.015);
        assert!(exact_median_cdf(n, upper_k) > 0.985 && exact_median_cdf(n, upper_k - 1) < 0.96);
        let ci = median_ci(&samples, RESAMPLES, SEED).unwrap();
        assert_eq!((ci.low, ci.high), (samples[lower_k as usize - 1], samples[upper_k as usize - 1]));
        assert_eq!((ci.low, ci.high), (11.5, 14.5));
    }

    #[test]
    fn a_seed_gives_the_same_interval_every_time() {
        let samples = [1.0, 1.2, 0.9, 1.1, 1.05, 0.95, 1.3, 1.0];
        assert_eq!(median_ci(&samples, 500, 7), median_ci(&samples, 500, 7));
    }

    #[test]
    fn identical_samples_have_a_zero_width_interval() {
        let ci = median_ci(&[2.0; 9], RESAMPLES, SEED).unwrap();
        assert_eq!((ci.low, ci.high), (2.0, 2.0));
    }

    #[test]
    fn too_few_or_non_finite_samples_give_none() {
        assert!(median_ci(&[1.0], RESAMPLES, SEED).is_none());
        assert!(median_ci(&[1.0, f64::NAN], RESAMPLES, SEED).is_none());
        assert!(ratio_of_medians_ci(&[1.0, 1.0], &[1.0], RESAMPLES, SEED).is_none());
    }

    #[test]
    fn ratio_of_constant_samples_is_exact() {
        let ci = ratio_of_medians_ci(&[2.0; 5], &[3.0; 7], RESAMPLES, SEED).unwrap();
        assert_eq!((ci.low, ci.high), (1.5, 1.5));
    }

    #[test]
    fn median_in_place_handles_odd_and_even() {
        assert_eq!(median_in_place(&mut [3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median_in_place(&mut [4.0, 1.0, 3.0, 2.0]), 2.5);
    }
}
