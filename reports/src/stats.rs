//! Summary statistics of timing samples.

use serde::{Deserialize, Serialize};

/// Summary of one timer's samples, in milliseconds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Summary {
    /// Number of samples.
    pub n: usize,
    /// Smallest sample.
    pub min: f64,
    /// Median (linear interpolation between the two middle samples when n is even).
    pub median: f64,
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
}

/// The `q`-quantile (0..=1) of sorted samples, interpolating linearly between closest ranks.
pub fn quantile(sorted: &[f64], q: f64) -> f64 {
    let pos = q.clamp(0.0, 1.0) * (sorted.len() - 1) as f64;
    let (lo, hi) = (pos.floor() as usize, pos.ceil() as usize);
    sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo as f64)
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
    Some(Summary {
        n,
        min: sorted[0],
        median: quantile(&sorted, 0.5),
        mean,
        p95: quantile(&sorted, 0.95),
        max: sorted[n - 1],
        stddev,
        cv: if mean > 0.0 { stddev / mean } else { 0.0 },
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
        assert_eq!((s.n, s.min, s.median, s.max), (5, 1.0, 3.0, 5.0));
        assert!(close(s.mean, 3.0));
        assert!(close(s.stddev, 2.5f64.sqrt()));
        assert!(close(s.cv, 2.5f64.sqrt() / 3.0));
        assert!(close(s.p95, 4.8));
    }

    #[test]
    fn even_count_median_interpolates() {
        assert!(close(summarize(&[1.0, 2.0, 3.0, 10.0]).unwrap().median, 2.5));
    }

    #[test]
    fn one_sample_has_no_spread() {
        let s = summarize(&[7.0]).unwrap();
        assert_eq!((s.median, s.p95, s.stddev, s.cv), (7.0, 7.0, 0.0, 0.0));
    }

    #[test]
    fn empty_or_non_finite_gives_none() {
        assert!(summarize(&[]).is_none());
        assert!(summarize(&[1.0, f64::NAN]).is_none());
    }
}
