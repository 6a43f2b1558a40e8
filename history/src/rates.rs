//! The detection rule's error rates ([`crate::detect`]), measured on synthetic series whose
//! run-to-run noise is drawn from a spread measured on real hardware: how soon a 5% step is
//! found, whether a drift of 1% a run is, and how often pure noise raises an alarm. The tests
//! hold the rule to the goals; README quotes what they print.

use crate::detect::{check, Direction, Rule};
use stats::rng::SplitMix64;

/// Run-to-run noise of a series' median, relative to its level.
#[derive(Debug, Clone, PartialEq)]
pub enum Noise {
    /// Normal, with this standard deviation in percent.
    Normal(f64),
    /// Measured series' relative deviations (`median_run / median_series − 1`, one list a
    /// series): each synthetic series takes one measured series at random and draws its noise
    /// from that series' deviations, with replacement, so a quiet case stays quiet and a noisy
    /// one noisy.
    Measured(Vec<Vec<f64>>),
}

impl Noise {
    /// The noise of one synthetic series.
    fn series<'a>(&'a self, rng: &mut SplitMix64) -> SeriesNoise<'a> {
        match self {
            Noise::Normal(pct) => SeriesNoise::Normal(*pct),
            Noise::Measured(all) => SeriesNoise::Drawn(&all[rng.below(all.len())]),
        }
    }
}

/// One synthetic series' noise.
enum SeriesNoise<'a> {
    Normal(f64),
    Drawn(&'a [f64]),
}

impl SeriesNoise<'_> {
    fn draw(&self, rng: &mut SplitMix64) -> f64 {
        match self {
            SeriesNoise::Normal(pct) => {
                // Box–Muller.
                let (u, v) = (1.0 - rng.next_f64(), rng.next_f64());
                (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos() * pct / 100.0
            }
            SeriesNoise::Drawn(d) => d[rng.below(d.len())],
        }
    }
}

/// What the rule does on synthetic series.
#[derive(Debug, Clone, PartialEq)]
pub struct Rates {
    /// Of the step trials, the share whose 5% step was found (as a regression) within 3 runs.
    pub step_found_in_3: f64,
    /// Of those, how many runs after the step it was found, on average.
    pub step_mean_runs: f64,
    /// Of the drift trials, the share whose drift of 1% a run was found within 20 runs.
    pub drift_found: f64,
    /// Of those, how many runs into the drift it was found, on average.
    pub drift_mean_runs: f64,
    /// Alarms per check on series of pure noise (every run of a 1,000-run series checked).
    pub false_alarms: f64,
    /// The worst 1,000-run series' share of alarms.
    pub worst_series_alarms: f64,
}

/// A flat series of `len` points at 1.0 with `noise`, then `change(i)` added in relative terms
/// from point `from` on (`i` counts from 0 at `from`).
fn series(len: usize, from: usize, change: impl Fn(usize) -> f64, noise: &Noise, rng: &mut SplitMix64) -> Vec<f64> {
    let noise = noise.series(rng);
    (0..len).map(|n| (1.0 + if n >= from { change(n - from) } else { 0.0 }) * (1.0 + noise.draw(rng))).collect()
}

/// The first run at or after `from` (counted from 1) at which the rule finds a regression, within `within` runs.
fn found(values: &[f64], from: usize, within: usize, rule: &Rule) -> Option<usize> {
    (from..(from + within).min(values.len())).find(|&end| check(&values[..=end], rule).is_some_and(|f| f.direction == Direction::Regressed)).map(|end| end - from + 1)
}

/// Measures `rule` under `noise`: `trials` step series and drift series (30 runs before the
/// change), and `noise_series` series of 1,000 runs of noise alone, from `seed`.
pub fn measure(rule: &Rule, noise: &Noise, trials: usize, noise_series: usize, seed: u64) -> Rates {
    let mut rng = SplitMix64::new(seed);
    let before = 30;
    let (mut steps, mut step_runs, mut drifts, mut drift_runs) = (0, 0, 0, 0);
    for _ in 0..trials {
        let v = series(before + 3, before, |_| 0.05, noise, &mut rng);
        if let Some(r) = found(&v, before, 3, rule) {
            steps += 1;
            step_runs += r;
        }
        let v = series(before + 20, before, |i| 0.01 * (i + 1) as f64, noise, &mut rng);
        if let Some(r) = found(&v, before, 20, rule) {
            drifts += 1;
            drift_runs += r;
        }
    }
    let (mut alarms, mut checks, mut worst) = (0usize, 0usize, 0.0f64);
    for _ in 0..noise_series {
        let v = series(1000, usize::MAX, |_| 0.0, noise, &mut rng);
        let fired = (0..v.len()).filter(|&end| check(&v[..=end], rule).is_some()).count();
        alarms += fired;
        checks += v.len();
        worst = worst.max(fired as f64 / v.len() as f64);
    }
    let share = |n: usize, of: usize| n as f64 / of.max(1) as f64;
    Rates {
        step_found_in_3: share(steps, trials),
        step_mean_runs: share(step_runs, steps),
        drift_found: share(drifts, trials),
        drift_mean_runs: share(drift_runs, drifts),
        false_alarms: share(alarms, checks),
        worst_series_alarms: worst,
    }
}

/// The run-to-run deviations of every series in `reports` (runs of one suite on one machine, one
/// after another): each point's median relative to its series' median, `median / series − 1`, for
/// series with a point in every run, one list a series. Where the GPU machine's spread comes from
/// (docs/hardware/h200-history: the quick suite 8 times in a row on an H200 in Chrome).
pub fn deviations(reports: &[reports::model::RunReport]) -> Vec<Vec<f64>> {
    use std::collections::BTreeMap;
    let mut series: BTreeMap<crate::record::SeriesKey, Vec<f64>> = BTreeMap::new();
    for report in reports {
        for p in crate::record::RunRecord::of(report, None).points {
            series.entry(p.series).or_default().push(p.median_ms);
        }
    }
    series
        .into_values()
        .filter(|v| v.len() == reports.len())
        .map(|v| {
            let m = crate::detect::median(&v);
            v.into_iter().map(|x| x / m - 1.0).collect()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The H200's run-to-run deviations, from the committed runs.
    fn h200() -> Vec<Vec<f64>> {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/hardware/h200-history");
        let reports: Vec<_> = (1..=8).map(|n| reports::read_results(&dir.join(format!("run-{n:02}-results.json"))).unwrap()).collect();
        deviations(&reports)
    }

    #[test]
    fn on_the_h200s_spread_the_rule_meets_the_goals() {
        let d = h200();
        assert!(d.len() == 60 && d.iter().all(|s| s.len() == 8), "60 series of 8 runs");
        let r = measure(&Rule::default(), &Noise::Measured(d), 1000, 20, 58);
        eprintln!("H200 spread: {r:?}");
        // The steps missed are on the noisiest series (kernels of a few microseconds whose runs
        // spread 2% and more), where 5% is about two spreads.
        assert!(r.step_found_in_3 >= 0.95, "a 5% step within 3 runs: {r:?}");
        assert!(r.drift_found >= 0.99, "a drift of 1% a run: {r:?}");
        assert!(r.false_alarms <= 0.01, "pure noise: {r:?}");
    }

    #[test]
    fn under_more_noise_steps_take_longer_and_alarms_stay_rare() {
        for pct in [0.5, 1.0, 2.0] {
            let r = measure(&Rule::default(), &Noise::Normal(pct), 500, 5, 58);
            eprintln!("normal σ {pct}%: {r:?}");
            assert!(r.false_alarms <= 0.01, "σ {pct}%: {r:?}");
            assert!(r.drift_found >= 0.99, "σ {pct}%: {r:?}");
        }
    }
}
