//! What the GPU clock probe adds to `results.json`: which source read the clocks, and the SM and
//! memory clocks, power, temperature and throttle reasons seen while each case ran.

use serde::{Deserialize, Serialize};

/// Whether a run had a clock probe, and which. On disk it is tagged by `status`:
/// `{"status": "attached", "source": …}` or `{"status": "unavailable", "reason": …}`. An enum
/// rather than an optional reason beside [`ProbeInfo`]'s fields, so a report cannot claim a
/// source and say there was none at once.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "camelCase")]
pub enum ProbeStatus {
    /// A probe sampled the clocks alongside the run.
    Attached(ProbeInfo),
    /// No probe applied on this machine; the cases carry no clock statistics.
    Unavailable {
        /// What was tried and why each did not apply, in words.
        reason: String,
    },
}

/// The source a clock probe read, so a reader knows how far to trust its numbers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProbeInfo {
    /// What read the clocks: NVML, nvidia-smi, AMD or Intel sysfs, or a stand-in.
    pub source: String,
    /// The GPU it read, as the source names it, when it names one.
    #[serde(default)]
    pub device: Option<String>,
    /// True when the readings were scripted (tests), not read from a GPU: such numbers must never
    /// be taken for a measurement.
    pub stand_in: bool,
    /// The time between samples asked for, in ms.
    pub interval_ms: f64,
}

/// The clocks, power and temperature sampled while one case ran. Each value is `None` when the
/// source does not report it (or there were no samples).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClockStats {
    /// Samples the statistics come from, all taken while the case's timed samples ran (the whole
    /// case where the platform did not say when that was); 1 when that was shorter than the
    /// sampling interval and the nearest sample stands in for it. Reports judge the clock only
    /// from [`MIN_FLAG_SAMPLES`](crate::probe::MIN_FLAG_SAMPLES) or more; every count is kept
    /// here all the same.
    pub samples: u32,
    /// Lowest SM (graphics) clock, MHz.
    #[serde(default)]
    pub sm_mhz_min: Option<f64>,
    /// Median SM clock, MHz: what [`below_clock`](crate::probe::below_clock) judges.
    #[serde(default)]
    pub sm_mhz_median: Option<f64>,
    /// Highest SM clock, MHz.
    #[serde(default)]
    pub sm_mhz_max: Option<f64>,
    /// Median memory clock, MHz.
    #[serde(default)]
    pub mem_mhz_median: Option<f64>,
    /// Median board power, W.
    #[serde(default)]
    pub power_w_median: Option<f64>,
    /// Highest board power, W.
    #[serde(default)]
    pub power_w_max: Option<f64>,
    /// Highest GPU temperature, °C.
    #[serde(default)]
    pub temp_c_max: Option<f64>,
    /// Every throttle reason active in any sample (`sw_power_cap`, `hw_thermal_slowdown`, …,
    /// `gpu_idle` too), sorted and without repeats.
    #[serde(default)]
    pub throttle_reasons: Vec<String>,
}
