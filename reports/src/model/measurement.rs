//! What the timings of a case or a platform say beyond the statistics of its samples: the timer
//! behind the headline, milliseconds as tables show them, a model's rate per item, the platform's
//! completion latency, an engine's own profile, and the phases of cases timed from a fresh page or
//! from text.

use kernels::wire::{ColdMeasurement, CompletionLatency, Phase};
use serde::{Deserialize, Serialize};
use stats::{summarize, Summary};

/// Which clock the headline numbers of a case come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Timer {
    /// GPU timestamp queries around the compute pass.
    GpuTimestamp,
    /// Submit to `onSubmittedWorkDone`, wall clock.
    WallClock,
}

impl Timer {
    /// `gpu` or `wall`, as tables and summaries label it.
    pub fn short(self) -> &'static str {
        match self {
            Timer::GpuTimestamp => "gpu",
            Timer::WallClock => "wall",
        }
    }
}

/// Milliseconds with as many decimals as their size needs (0.0123, 1.234, 123.4).
pub fn format_ms(v: f64) -> String {
    if v >= 100.0 {
        format!("{v:.1}")
    } else if v >= 1.0 {
        format!("{v:.3}")
    } else if v >= 0.01 || v <= 0.0 || !v.is_finite() {
        format!("{v:.4}")
    } else {
        // Three significant digits below 10 µs (a CPU bench's iteration): 0.000512, not 0.0005.
        let decimals = (2 - v.log10().floor() as i32).clamp(4, 12) as usize;
        format!("{v:.decimals$}")
    }
}

/// The median's 95% CI half-width as tables show it (`±1.2%`), or `–` without one.
pub fn format_ci(half_width_pct: Option<f64>) -> String {
    half_width_pct.map(|w| format!("±{w:.1}%")).unwrap_or_else(|| "–".into())
}

/// A model-level rate: tokens/s or sentences/s, and milliseconds per item.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Throughput {
    /// The item, singular: `token`, `sentence`.
    pub item: String,
    /// Items one run processes.
    pub per_run: f64,
    /// Items per second at the headline median.
    pub per_second: Option<f64>,
    /// Milliseconds per item at the headline median.
    pub ms_per_item: Option<f64>,
    /// GPU dispatches one run issues (models): launches per token is what bounds a decode step
    /// whose kernels are microseconds each.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dispatches_per_run: Option<u32>,
}

impl Throughput {
    /// The rate's unit, such as `tokens/s`.
    pub fn unit(&self) -> String {
        format!("{}s/s", self.item)
    }

    /// The rate as tables show it (`412.3 tokens/s`), or `–` before a measurement.
    pub fn format_rate(&self) -> String {
        self.per_second.map(|r| format!("{r:.1} {}", self.unit())).unwrap_or_else(|| "–".into())
    }

    /// Milliseconds per item as tables show it (`2.425 ms/token`), or `–` before a measurement.
    pub fn format_ms_per_item(&self) -> String {
        self.ms_per_item.map(|m| format!("{} ms/{}", format_ms(m), self.item)).unwrap_or_else(|| "–".into())
    }

    /// Dispatches per item as tables show it (`287/token`, `2.24/token`), or `–` where the
    /// workload does not say.
    pub fn format_dispatches(&self) -> String {
        match self.dispatches_per_run {
            Some(d) if self.per_run == 1.0 => format!("{d}/{}", self.item),
            Some(d) => format!("{:.3}/{}", f64::from(d) / self.per_run, self.item).replace(".000/", "/"),
            None => "–".into(),
        }
    }
}

/// A platform's completion latency: the raw rounds and their statistics.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Latency {
    /// Submit of a trivial command buffer → `onSubmittedWorkDone`, ms.
    pub work_done: Option<Summary>,
    /// Submit of a 4-byte copy → `mapAsync` resolved, ms.
    pub map_async: Option<Summary>,
    /// `work_done` again, nudged as steady batches wait in this browser (`kernels::gpu::nudges`);
    /// absent where it is not nudged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nudged_work_done: Option<Summary>,
    /// `map_async` again, nudged; absent where it is not nudged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nudged_map_async: Option<Summary>,
    /// Every round, ms.
    pub samples: CompletionLatency,
}

impl Latency {
    /// Statistics of the measured rounds.
    pub fn new(samples: CompletionLatency) -> Self {
        Latency {
            work_done: summarize(&samples.work_done_ms),
            map_async: summarize(&samples.map_async_ms),
            nudged_work_done: summarize(&samples.nudged_work_done_ms),
            nudged_map_async: summarize(&samples.nudged_map_async_ms),
            samples,
        }
    }

    /// The median `onSubmittedWorkDone` latency, ms.
    pub fn work_done_ms(&self) -> Option<f64> {
        self.work_done.as_ref().map(|s| s.median)
    }

    /// `submit→done 0.052 ms, mapAsync 0.061 ms` (medians), for tables and the terminal.
    pub fn describe(&self) -> String {
        let part = |s: &Option<Summary>| s.as_ref().map(|s| format!("{} ms", format_ms(s.median))).unwrap_or_else(|| "–".into());
        let rounds = self.samples.work_done_ms.len();
        let base = format!("submit→onSubmittedWorkDone {}, mapAsync {} (medians of {rounds} rounds)", part(&self.work_done), part(&self.map_async));
        match self.nudged_work_done.is_some() {
            true => format!(
                "{base}; nudged (an empty submit every few ms while steady batches wait): {}, {}",
                part(&self.nudged_work_done),
                part(&self.nudged_map_async)
            ),
            false => base,
        }
    }
}

/// An engine's own GPU times of one run after sampling, each kernel between timestamps in a
/// compute pass of its own (harness's, the median of a few runs; onnxruntime-web's JSEP's, of
/// one), so the gaps between kernels are not in it, as they are in a whole pass's GPU time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EngineProfile {
    /// The kernels' GPU times summed, ms.
    pub gpu_ms: f64,
    /// Kernels the run dispatched.
    pub kernels: usize,
    /// By op, the slowest first.
    pub by_op: Vec<EngineOp>,
}

/// One op's share of an [`EngineProfile`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EngineOp {
    /// The op (`MatMul`).
    pub op: String,
    /// Its kernels in the run.
    pub count: usize,
    /// Their GPU time, ms.
    pub ms: f64,
}

impl EngineProfile {
    /// The profile of `kernels`, summed by op; `None` for no kernels.
    pub fn of(kernels: &[kernels::wire::EngineKernel]) -> Option<EngineProfile> {
        if kernels.is_empty() {
            return None;
        }
        let mut by_op: Vec<EngineOp> = Vec::new();
        for k in kernels {
            match by_op.iter_mut().find(|o| o.op == k.op) {
                Some(o) => {
                    o.count += 1;
                    o.ms += k.ms;
                }
                None => by_op.push(EngineOp { op: k.op.clone(), count: 1, ms: k.ms }),
            }
        }
        by_op.sort_by(|a, b| b.ms.total_cmp(&a.ms));
        Some(EngineProfile { gpu_ms: kernels.iter().map(|k| k.ms).sum(), kernels: kernels.len(), by_op })
    }
}

/// A case timed end to end from text, as a web app embeds sentences: each sample one call, split
/// into phases (harness pools on the GPU inside its run: its calls have tokenize and run only).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TextReport {
    /// Each timed call's phases, in sample order.
    pub calls: Vec<Vec<Phase>>,
    /// Each phase's median over the calls, ms, in phase order.
    pub median_phases: Vec<Phase>,
}

impl TextReport {
    /// The report of `calls`.
    pub fn of(calls: Vec<Vec<Phase>>) -> Self {
        let median_phases = median_phases(calls.iter().map(Vec::as_slice));
        TextReport { calls, median_phases }
    }
}

/// Each phase's median over `lists` (the phases of each page or call), named and ordered as the
/// first list has them.
fn median_phases<'a>(lists: impl Iterator<Item = &'a [Phase]> + Clone) -> Vec<Phase> {
    let names: Vec<String> = lists.clone().next().map(|p| p.iter().map(|ph| ph.name.clone()).collect()).unwrap_or_default();
    names
        .into_iter()
        .map(|name| {
            let times: Vec<f64> = lists.clone().filter_map(|p| p.iter().find(|ph| ph.name == name)).map(|ph| ph.ms).collect();
            let ms = summarize(&times).map_or(0.0, |s| s.median);
            Phase { name, ms }
        })
        .collect()
}

/// Phases in a line: `device 120 ms · fetch 31.2 ms · …`.
pub fn phases_line(phases: &[Phase]) -> String {
    phases.iter().map(|p| format!("{} {} ms", p.name, format_ms(p.ms))).collect::<Vec<_>>().join(" · ")
}

/// A cold-start case: each sample a new page in a fresh browser profile, from navigation to the
/// first output read back (and checked), in phases.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ColdStartReport {
    /// Whether every pipeline was compiled up front, all at once, with
    /// `createComputePipelineAsync`, before the first dispatch.
    pub precompile: bool,
    /// Each page's phases, in sample order.
    pub pages: Vec<ColdMeasurement>,
    /// Each phase's median over the pages, ms, in phase order.
    pub median_phases: Vec<Phase>,
}

impl ColdStartReport {
    /// The report of `pages`.
    pub fn of(precompile: bool, pages: Vec<ColdMeasurement>) -> Self {
        let median_phases = median_phases(pages.iter().map(|p| p.phases.as_slice()));
        ColdStartReport { precompile, pages, median_phases }
    }

    /// The median phases in a line: `device 120 ms · fetch 31.2 ms · …`.
    pub fn phases_line(&self) -> String {
        phases_line(&self.median_phases)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dispatches_read_per_item() {
        let t = |per_run: f64, d: Option<u32>| Throughput { item: "token".into(), per_run, per_second: None, ms_per_item: None, dispatches_per_run: d };
        assert_eq!(t(1.0, Some(287)).format_dispatches(), "287/token", "a decode step");
        assert_eq!(t(128.0, Some(331)).format_dispatches(), "2.586/token", "a prefill of 128");
        assert_eq!(t(16.0, Some(16)).format_dispatches(), "1/token");
        assert_eq!(t(1.0, None).format_dispatches(), "–");
    }

    #[test]
    fn milliseconds_keep_three_significant_digits_below_ten_microseconds() {
        assert_eq!(format_ms(152.24), "152.2");
        assert_eq!(format_ms(1.23456), "1.235");
        assert_eq!(format_ms(0.0123), "0.0123");
        assert_eq!(format_ms(0.0081), "0.00810");
        assert_eq!(format_ms(0.000512), "0.000512");
        assert_eq!(format_ms(0.0), "0.0000");
    }
}
