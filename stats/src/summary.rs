//! The summary of one timer's samples.

use crate::bootstrap::{self, Interval};
use crate::order::quantile;
use crate::outliers::Outliers;
use serde::{Deserialize, Serialize};

/// Summary of one timer's samples, in milliseconds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Summary {
    /// Number of samples.
    pub n: usize,
    /// Smallest sample.
    pub min: f64,
    /// First quartile.
    #[serde(default)]
    pub q1: f64,
    /// Median (linear interpolation between the two middle samples when n is even).
    pub median: f64,
    /// Third quartile.
    #[serde(default)]
    pub q3: f64,
    /// Arithmetic mean.
    pub mean: f64,
    /// 95th percentile (linear interpolation between closest ranks).
    pub p95: f64,
    /// Largest sample.
    pub max: f64,
    /// Sample standard deviation (n - 1 in the denominator; 0 for one sample).
    pub stddev: f64,
    /// Coefficient of variation: stddev / mean.
    pub cv: f64,
    /// 95% confidence interval of the median: percentile bootstrap, [`bootstrap::RESAMPLES`]
    /// resamples, seed [`bootstrap::SEED`]. `None` for fewer than two samples.
    #[serde(default)]
    pub median_ci: Option<Interval>,
    /// Half the width of `median_ci` as a percentage of the median: the precision reached.
    #[serde(default)]
    pub ci_half_width_pct: Option<f64>,
    /// Samples outside Tukey's fences.
    #[serde(default)]
    pub outliers: Outliers,
}

/// Half the width of the median's bootstrap CI as a percentage of the median, as
/// [`Summary::ci_half_width_pct`] reports it; `None` when there is no interval or the median is 0.
pub fn ci_half_width_pct(samples: &[f64], resamples: usize) -> Option<f64> {
    let ci = bootstrap::median_ci(samples, resamples, bootstrap::SEED)?;
    relative_half_width(ci, bootstrap::median_in_place(&mut samples.to_vec()))
}

fn relative_half_width(ci: Interval, median: f64) -> Option<f64> {
    (median > 0.0).then(|| ci.half_width() / median * 100.0)
}

/// Summarises `samples`; `None` when there are none or any is not finite.
pub fn summarize(samples: &[f64]) -> Option<Summary> {
    if samples.is_empty() || samples.iter().any(|v| !v.is_finite()) {
        return None;
    }
    let mut sorted = samples.to_vec();
    sorted.sort_by(f64::total_cmp);
    let n = sorted.len();
    let mean = sorted.iter().sum::<f64>() / n as f64;
    let stddev = if n > 1 {
        (sorted.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt()
    } else {
        0.0
    };
    let median = quantile(&sorted, 0.5);
    let median_ci = bootstrap::median_ci(samples, bootstrap::RESAMPLES, bootstrap::SEED);
    Some(Summary {
        n,
        min: sorted[0],
        q1: quantile(&sorted, 0.25),
        median,
        q3: quantile(&sorted, 0.75),
        mean,
        p95: quantile(&sorted, 0.95),
        max: sorted[n - 1],
        stddev,
        cv: if mean > 0.0 { stddev / mean } else { 0.0 },
        median_ci,
        ci_half_width_pct: median_ci.and_then(|ci| relative_half_width(ci, median)),
        outliers: Outliers::classify(&sorted),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    #[test]
    fn known_values() {
        let s = summarize(&[4.0, 1.0, 3.0, 2.0, 5.0]).unwrap();
        assert_eq!((s.n, s.min, s.q1, s.median, s.q3, s.max), (5, 1.0, 2.0, 3.0, 4.0, 5.0));
        assert!(close(s.mean, 3.0));
        assert!(close(s.stddev, 2.5f64.sqrt()));
        assert!(close(s.cv, 2.5f64.sqrt() / 3.0));
        assert!(close(s.p95, 4.8));
        assert_eq!(s.outliers.total(), 0);
    }

    #[test]
    fn even_count_median_interpolates() {
        assert!(close(summarize(&[1.0, 2.0, 3.0, 10.0]).unwrap().median, 2.5));
    }

    #[test]
    fn one_sample_has_no_spread_and_no_interval() {
        let s = summarize(&[7.0]).unwrap();
        assert_eq!((s.median, s.p95, s.stddev, s.cv), (7.0, 7.0, 0.0, 0.0));
        assert_eq!((s.median_ci, s.ci_half_width_pct), (None, None));
    }

    #[test]
    fn the_interval_brackets_the_median_and_its_half_width_is_relative() {
        let samples: Vec<f64> = (1..=15).map(|i| 10.0 + i as f64 * 0.5).collect();
        let s = summarize(&samples).unwrap();
        let ci = s.median_ci.unwrap();
        assert!(ci.contains(s.median));
        assert!(close(s.ci_half_width_pct.unwrap(), ci.half_width() / s.median * 100.0));
        assert!(close(ci_half_width_pct(&samples, bootstrap::RESAMPLES).unwrap(), s.ci_half_width_pct.unwrap()));
    }

    #[test]
    fn empty_or_non_finite_gives_none() {
        assert!(summarize(&[]).is_none());
        assert!(summarize(&[1.0, f64::NAN]).is_none());
    }
}
