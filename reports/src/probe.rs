//! What the GPU clock probe adds to `results.json`: which source read the clocks, and the SM and
//! memory clocks, power, temperature and throttle reasons seen while each case ran. A timing is
//! only comparable with another taken at the same clocks, so a case measured while the GPU was
//! throttled or still ramping up must be visible as such in the report.

use serde::{Deserialize, Serialize};

/// A case whose median SM clock is below this fraction of the highest SM clock seen in the run
/// was measured at a lower clock than its neighbours (see [`below_clock`]).
pub const THROTTLE_THRESHOLD: f64 = 0.9;

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
    /// Samples the statistics come from; 1 when the case was shorter than the sampling interval
    /// and the nearest sample stands in for it.
    pub samples: u32,
    /// Lowest SM (graphics) clock, MHz.
    #[serde(default)]
    pub sm_mhz_min: Option<f64>,
    /// Median SM clock, MHz: what [`below_clock`] judges.
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

/// Whether a case ran below the run's clock: its median SM clock is below
/// [`THROTTLE_THRESHOLD`] × `highest_sm_mhz` (nvbench's throttle threshold). Such a case is not
/// comparable with the others. The median, not the minimum, because one sample caught during a
/// clock change says little, while a median below the threshold means most of the case ran slow.
/// False when the case has no SM clock.
pub fn below_clock(stats: &ClockStats, highest_sm_mhz: f64) -> bool {
    stats.sm_mhz_median.is_some_and(|median| median < THROTTLE_THRESHOLD * highest_sm_mhz)
}

/// The highest SM clock any of `cases` reached: the reference [`below_clock`] compares with.
/// `None` when no case has an SM clock.
pub fn highest_sm_mhz<'a>(cases: impl IntoIterator<Item = &'a ClockStats>) -> Option<f64> {
    cases.into_iter().filter_map(|c| c.sm_mhz_max).reduce(f64::max)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stats(median: Option<f64>, max: Option<f64>) -> ClockStats {
        ClockStats {
            samples: 3,
            sm_mhz_min: median,
            sm_mhz_median: median,
            sm_mhz_max: max,
            mem_mhz_median: Some(2619.0),
            power_w_median: Some(310.5),
            power_w_max: Some(402.0),
            temp_c_max: Some(61.0),
            throttle_reasons: vec!["sw_power_cap".into()],
        }
    }

    #[test]
    fn below_clock_judges_the_median_against_ninety_percent_of_the_highest() {
        let highest = 1980.0;
        assert!(!below_clock(&stats(Some(1980.0), Some(1980.0)), highest));
        // 0.9 × 1980 = 1782: exactly at the threshold is not below it.
        assert!(!below_clock(&stats(Some(1782.0), Some(1980.0)), highest));
        assert!(below_clock(&stats(Some(1781.0), Some(1980.0)), highest));
        assert!(below_clock(&stats(Some(345.0), Some(1980.0)), highest));
        // A high maximum does not rescue a low median.
        assert!(below_clock(&stats(Some(1200.0), Some(1980.0)), highest));
        assert!(!below_clock(&stats(None, None), highest));
    }

    #[test]
    fn highest_sm_mhz_is_the_largest_maximum() {
        let cases = [stats(Some(1500.0), Some(1755.0)), stats(None, None), stats(Some(1900.0), Some(1980.0)), stats(Some(345.0), Some(810.0))];
        assert_eq!(highest_sm_mhz(&cases), Some(1980.0));
        assert_eq!(highest_sm_mhz(&cases[1..2]), None);
        assert_eq!(highest_sm_mhz(&[]), None);
    }

    #[test]
    fn probe_types_are_camel_case_and_round_trip() {
        let attached = ProbeStatus::Attached(ProbeInfo {
            source: "NVML".into(),
            device: Some("NVIDIA H100 80GB HBM3".into()),
            stand_in: false,
            interval_ms: 50.0,
        });
        let json = serde_json::to_value(&attached).unwrap();
        assert_eq!(json["status"], "attached");
        assert_eq!(json["device"], "NVIDIA H100 80GB HBM3");
        assert_eq!(json["standIn"], false);
        assert_eq!(json["intervalMs"], 50.0);
        assert_eq!(serde_json::from_value::<ProbeStatus>(json).unwrap(), attached);

        let unavailable = ProbeStatus::Unavailable { reason: "no nvidia-smi on PATH".into() };
        let json = serde_json::to_value(&unavailable).unwrap();
        assert_eq!(json, serde_json::json!({"status": "unavailable", "reason": "no nvidia-smi on PATH"}));
        assert_eq!(serde_json::from_value::<ProbeStatus>(json).unwrap(), unavailable);

        let s = stats(Some(1980.0), Some(1980.0));
        let json = serde_json::to_value(&s).unwrap();
        for key in ["samples", "smMhzMin", "smMhzMedian", "smMhzMax", "memMhzMedian", "powerWMedian", "powerWMax", "tempCMax", "throttleReasons"] {
            assert!(json.get(key).is_some(), "{key} missing from {json}");
        }
        assert_eq!(serde_json::from_value::<ClockStats>(json).unwrap(), s);
    }
}
