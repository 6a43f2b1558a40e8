//! The sampling policy every platform follows: one untimed first run (kept apart: it absorbs
//! lazy compilation and first use), warm-up runs until the [`WarmupPolicy`] is satisfied, then
//! timed samples until the count is reached, the median's confidence interval is as narrow as
//! asked (`--target-ci`), or the time budget is spent (after at least [`MIN_SAMPLES`]).

use crate::wire::StopReason;
use serde::{Deserialize, Serialize};
pub use stats::{WarmupPolicy, WarmupStop};

/// Samples always taken (or all of them, when fewer are asked for), whatever the time budget.
pub const MIN_SAMPLES: u32 = 5;
/// Most timed samples a case takes while aiming for a target CI: the most that get GPU
/// timestamps (a query set holds 4096 queries, two per sample).
pub const MAX_ADAPTIVE_SAMPLES: u32 = 2048;
/// Fewest samples whose bootstrap CI is checked against the target: below this the percentile
/// bootstrap of a median is too coarse to trust.
pub const MIN_CI_SAMPLES: u32 = 10;

/// How a case is sampled.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Sampling {
    /// Warm-up dispatches before timing.
    pub warmup: WarmupPolicy,
    /// Timed samples per case; with `target_ci_pct`, the fewest taken before the target is
    /// checked.
    pub samples: u32,
    /// Time budget of a case's timed samples, ms: sampling stops once their wall times add up to
    /// it, after at least [`MIN_SAMPLES`].
    pub max_time_ms: f64,
    /// Keep sampling until the median's 95% CI half-width is at most this percentage of the
    /// median (or the time budget is spent).
    pub target_ci_pct: Option<f64>,
}

impl Sampling {
    /// The most timed samples a case can take.
    pub fn max_samples(&self) -> u32 {
        match self.target_ci_pct {
            Some(_) => MAX_ADAPTIVE_SAMPLES.max(self.samples),
            None => self.samples,
        }
    }
}

/// Milliseconds on a monotonic clock: `performance.now()` in the browser, `Instant` natively.
pub fn now_ms() -> f64 {
    #[cfg(target_arch = "wasm32")]
    {
        web_sys::window()
            .and_then(|w| w.performance())
            .map(|p| p.now())
            .unwrap_or(0.0)
    }
    #[cfg(not(target_arch = "wasm32"))]
    {
        use std::sync::OnceLock;
        use std::time::Instant;
        static START: OnceLock<Instant> = OnceLock::new();
        START.get_or_init(Instant::now).elapsed().as_secs_f64() * 1e3
    }
}

/// Something that can be run and timed: a GPU dispatch, or a CPU kernel.
#[allow(async_fn_in_trait)]
pub trait Timed {
    /// What a failed run reports.
    type Error;
    /// Runs once and returns its wall time in ms; `slot` is `Some(i)` for timed sample `i`,
    /// `None` for the first run and warm-ups.
    async fn run(&mut self, slot: Option<u32>) -> Result<f64, Self::Error>;
    /// The times of the headline timer for the timed samples so far, whose wall times are
    /// `walls`: the samples the target CI is judged on.
    async fn headline(&mut self, walls: &[f64]) -> Result<Vec<f64>, Self::Error> {
        Ok(walls.to_vec())
    }
}

/// Wall times of one case's runs.
#[derive(Debug, Clone, PartialEq)]
pub struct Walls {
    /// The first run, ms.
    pub first_ms: f64,
    /// Each warm-up run, ms.
    pub warmup: Vec<f64>,
    /// What ended warm-up.
    pub warmup_stop: WarmupStop,
    /// Each timed sample, ms.
    pub samples: Vec<f64>,
    /// What ended sampling.
    pub stopped_by: StopReason,
}

/// Runs `timed` by the policy `s`, calling `on_sample` with the count of timed samples taken.
pub async fn sample<T: Timed>(s: &Sampling, timed: &mut T, mut on_sample: impl FnMut(u32)) -> Result<Walls, T::Error> {
    let first_ms = timed.run(None).await?;
    let mut warmup = Vec::new();
    let warmup_stop = loop {
        if let Some(stop) = s.warmup.decide(&warmup, s.max_time_ms) {
            break stop;
        }
        warmup.push(timed.run(None).await?);
    };
    let max_samples = s.max_samples();
    let mut walls = Vec::with_capacity(max_samples.min(4096) as usize);
    let mut stopped_by = StopReason::SampleCount;
    let mut next_check = s.samples.max(MIN_CI_SAMPLES);
    for i in 0..max_samples {
        walls.push(timed.run(Some(i)).await?);
        let n = i + 1;
        on_sample(n);
        if n == max_samples {
            break;
        }
        if let Some(target) = s.target_ci_pct.filter(|_| n >= next_check) {
            let series = timed.headline(&walls).await?;
            if stats::summary::ci_half_width_pct(&series, stats::bootstrap::RESAMPLES).is_some_and(|w| w <= target) {
                stopped_by = StopReason::TargetCi;
                break;
            }
            // Checking at geometrically spaced counts keeps the bootstrap's cost a small share.
            next_check = (n + 5).max((n as f64 * 1.1).ceil() as u32);
        }
        if n >= MIN_SAMPLES && walls.iter().sum::<f64>() >= s.max_time_ms {
            stopped_by = StopReason::MaxTime;
            break;
        }
    }
    Ok(Walls { first_ms, warmup, warmup_stop, samples: walls, stopped_by })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A clock-free stand-in: run `i` takes `times(i)` ms.
    struct Scripted<F: Fn(usize) -> f64> {
        times: F,
        runs: usize,
    }

    impl<F: Fn(usize) -> f64> Timed for Scripted<F> {
        type Error = ();
        async fn run(&mut self, _slot: Option<u32>) -> Result<f64, ()> {
            self.runs += 1;
            Ok((self.times)(self.runs - 1))
        }
    }

    fn sampling(samples: u32, max_time_ms: f64, target_ci_pct: Option<f64>) -> Sampling {
        Sampling { warmup: WarmupPolicy::Fixed(2), samples, max_time_ms, target_ci_pct }
    }

    fn go(s: Sampling, times: impl Fn(usize) -> f64) -> Walls {
        pollster::block_on(sample(&s, &mut Scripted { times, runs: 0 }, |_| {})).unwrap()
    }

    #[test]
    fn the_count_ends_sampling() {
        let w = go(sampling(8, 1e9, None), |_| 1.0);
        assert_eq!((w.samples.len(), w.stopped_by, w.warmup.len(), w.warmup_stop), (8, StopReason::SampleCount, 2, WarmupStop::Fixed));
    }

    #[test]
    fn the_time_budget_ends_sampling_after_the_minimum() {
        let w = go(sampling(100, 3.0, None), |_| 1.0);
        assert_eq!((w.samples.len(), w.stopped_by), (MIN_SAMPLES as usize, StopReason::MaxTime));
    }

    #[test]
    fn a_target_ci_keeps_sampling_until_it_is_met() {
        // Alternating 1.0 / 1.1: the median's interval is wide at first and narrows with n.
        let noisy = |i: usize| if i % 3 == 0 { 1.1 } else { 1.0 + (i % 7) as f64 * 0.01 };
        let w = go(sampling(10, 1e9, Some(1.0)), noisy);
        assert_eq!(w.stopped_by, StopReason::TargetCi);
        assert!(stats::summary::ci_half_width_pct(&w.samples, stats::bootstrap::RESAMPLES).unwrap() <= 1.0);
        // A target that cannot be met runs into the time budget instead.
        let w = go(sampling(10, 200.0, Some(0.0001)), noisy);
        assert_eq!(w.stopped_by, StopReason::MaxTime);
    }

    #[test]
    fn auto_warmup_is_recorded() {
        let s = Sampling { warmup: WarmupPolicy::Auto, ..sampling(5, 1e9, None) };
        let w = go(s, |i| if i < 8 { 5.0 } else { 1.0 });
        assert_eq!(w.warmup_stop, WarmupStop::Stable);
        assert_eq!(w.warmup.len(), 15);
    }
}
