//! Order statistics of sorted samples: the quantile that summaries, bootstrap intervals and
//! Tukey's fences all read, so they agree on what a quartile is.

/// The `q`-quantile (0..=1) of sorted samples, interpolating linearly between closest ranks.
pub fn quantile(sorted: &[f64], q: f64) -> f64 {
    let pos = q.clamp(0.0, 1.0) * (sorted.len() - 1) as f64;
    let (lo, hi) = (pos.floor() as usize, pos.ceil() as usize);
    sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo as f64)
}
