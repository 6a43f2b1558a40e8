//! The measured roofline: each target's peaks, from its probe cases (`stream_copy` for memory
//! bandwidth, `fma_chain` for f32 throughput), and each case's fraction of the peak that binds it.
//! Derived from the cases alone, so a report rebuilt from results.json derives it again.

use super::{CaseReport, CaseStatus, PlatformRun, RunReport, Timer};
use kernels::catalog::ROOFLINE_PROBES;
use serde::{Deserialize, Serialize};

/// One peak of a target, and the probe case that measured it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Peak {
    /// GB/s for the memory peak, GFLOP/s for the compute peak.
    pub value: f64,
    /// The id of the probe case: the largest shape of its kernel that passed its check.
    pub case: String,
    /// The timer the probe's median comes from.
    pub timer: Timer,
}

/// A target's (browser and platform's) measured peaks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Peaks {
    /// Memory bandwidth, GB/s: `stream_copy`'s.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<Peak>,
    /// f32 throughput, GFLOP/s: `fma_chain`'s.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compute: Option<Peak>,
}

/// The limit a case would hit first on its target's roofline.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Bound {
    /// Its bytes take longer at peak bandwidth than its FLOPs at peak throughput.
    Memory,
    /// Its FLOPs take longer at peak throughput than its bytes at peak bandwidth.
    Compute,
}

/// How far a case is from its target's peaks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CaseRoofline {
    /// The target's memory peak, GB/s.
    pub peak_gbps: f64,
    /// The target's compute peak, GFLOP/s.
    pub peak_gflops: f64,
    /// Which peak binds: whichever of bytes / peak GB/s and flops / peak GFLOP/s takes longer.
    pub bound: Bound,
    /// The case's GB/s (memory) or GFLOP/s (compute) over that peak; above 1 when the case beat
    /// the probe (a probe too small for the target, or data that stayed in cache).
    pub fraction: f64,
}

impl CaseRoofline {
    /// The fraction and its bound in a few characters, for tables: `62% mem`, `41% FMA`.
    pub fn label(&self) -> String {
        let pct = 100.0 * self.fraction;
        let pct = if pct < 10.0 { format!("{pct:.1}%") } else { format!("{pct:.0}%") };
        match self.bound {
            Bound::Memory => format!("{pct} mem"),
            Bound::Compute => format!("{pct} FMA"),
        }
    }

    /// The fraction in a sentence, for a hover: which peak binds and why.
    pub fn explain(&self) -> String {
        let (peak, why) = match self.bound {
            Bound::Memory => (scaled(self.peak_gbps, "B/s"), "memory-bound: its bytes take longer at the copy's bandwidth than its FLOPs at the FMA rate"),
            Bound::Compute => (scaled(self.peak_gflops, "FLOP/s"), "compute-bound: its FLOPs take longer at the FMA rate than its bytes at the copy's bandwidth"),
        };
        format!("{:.1}% of {peak}; {why}", 100.0 * self.fraction)
    }
}

/// The roofline fraction of `case`, as tables show it ([`CaseRoofline::label`]), or `–`.
pub fn format_roofline(case: &CaseReport) -> String {
    case.roofline.as_ref().map(CaseRoofline::label).unwrap_or_else(|| "–".into())
}

/// True when some run has a case with a roofline: tables add their column only then.
pub fn any_roofline(report: &RunReport) -> bool {
    report.runs.iter().flat_map(|r| &r.cases).any(|c| c.roofline.is_some())
}

impl Peaks {
    /// `2.9 TB/s copy, 51.2 TFLOP/s FMA (GPU timestamps)`: what the target's probes reached.
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        if let Some(m) = &self.memory {
            parts.push(format!("{} copy", scaled(m.value, "B/s")));
        }
        if let Some(c) = &self.compute {
            parts.push(format!("{} FMA", scaled(c.value, "FLOP/s")));
        }
        let timers: Vec<Timer> = self.memory.iter().chain(&self.compute).map(|p| p.timer).collect();
        let timer = match timers.as_slice() {
            [t] => timer_words(*t).to_string(),
            [a, b] if a == b => timer_words(*a).to_string(),
            [a, b] => format!("copy on {}, FMA on {}", timer_words(*a), timer_words(*b)),
            _ => String::new(),
        };
        format!("{} ({timer})", parts.join(", "))
    }
}

fn timer_words(t: Timer) -> &'static str {
    match t {
        Timer::GpuTimestamp => "GPU timestamps",
        Timer::WallClock => "wall clock",
    }
}

/// A rate given in giga-units as G or T with three significant figures: `2.90 TB/s`, `812 GB/s`.
fn scaled(giga: f64, unit: &str) -> String {
    let (v, prefix) = if giga >= 1000.0 { (giga / 1000.0, "T") } else { (giga, "G") };
    let decimals = if v >= 100.0 { 0 } else if v >= 10.0 { 1 } else { 2 };
    format!("{v:.decimals$} {prefix}{unit}")
}

/// Sets every run's peaks and every case's roofline from the cases measured, replacing what was
/// there: the same report always gets the same roofline.
pub fn apply(report: &mut RunReport) {
    for run in &mut report.runs {
        let peaks = peaks(run);
        for case in &mut run.cases {
            case.roofline = peaks.as_ref().and_then(|p| case_roofline(case, p));
        }
        run.roofline = peaks;
    }
}

/// A run's peaks: for each probe, its largest shape (most bytes for the copy, most FLOPs for the
/// FMA chains) among the cases that passed their check; `None` when neither probe passed.
pub fn peaks(run: &PlatformRun) -> Option<Peaks> {
    let [copy, fma] = ROOFLINE_PROBES;
    let best = |kernel: &str, size: fn(&CaseReport) -> f64, rate: fn(&CaseReport) -> Option<f64>| {
        run.cases
            .iter()
            .filter(|c| c.kernel == kernel && c.variant.is_none() && c.status == CaseStatus::Passed)
            .filter_map(|c| Some((c, rate(c)?, c.timer?)))
            .max_by(|(a, ra, _), (b, rb, _)| size(a).total_cmp(&size(b)).then(ra.total_cmp(rb)))
            .map(|(c, value, timer)| Peak { value, case: c.id.clone(), timer })
    };
    let memory = best(copy.name(), |c| c.bytes, |c| c.gbps);
    let compute = best(fma.name(), |c| c.flops, |c| c.gflops);
    (memory.is_some() || compute.is_some()).then_some(Peaks { memory, compute })
}

/// The roofline rule for one case: the bound is whichever peak its bytes or FLOPs would take
/// longer at, and the fraction is its achieved rate over that peak. `None` without both peaks,
/// without a measured rate, or where the case's timer is not the peaks' (times from different
/// clocks are not divided).
pub fn case_roofline(case: &CaseReport, peaks: &Peaks) -> Option<CaseRoofline> {
    let (memory, compute) = (peaks.memory.as_ref()?, peaks.compute.as_ref()?);
    let timer = case.timer?;
    if memory.timer != timer || compute.timer != timer || memory.value <= 0.0 || compute.value <= 0.0 {
        return None;
    }
    let (gbps, gflops) = (case.gbps?, case.gflops?);
    if case.bytes <= 0.0 && case.flops <= 0.0 {
        return None;
    }
    let bound = match case.flops / compute.value > case.bytes / memory.value {
        true => Bound::Compute,
        false => Bound::Memory,
    };
    let fraction = match bound {
        Bound::Memory => gbps / memory.value,
        Bound::Compute => gflops / compute.value,
    };
    Some(CaseRoofline { peak_gbps: memory.value, peak_gflops: compute.value, bound, fraction })
}
