//! A target's measured peaks (memory bandwidth and f32 throughput) and a case's fraction of the one
//! that binds it, as `results.json` holds them; [`roofline`](super::roofline) derives them from the
//! cases.

use super::Timer;
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
