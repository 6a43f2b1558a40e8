//! Reading the GPU clocks a report holds ([`ClockStats`] per case): a timing is only comparable
//! with another taken at the same clocks, so a case measured while the GPU was throttled or still
//! ramping up must be visible as such in the report.

use crate::model::{labels, RunReport};
use serde::Serialize;

// The stored clock types belong to the results model; the probe's users find them here too.
pub use crate::model::{ClockStats, ProbeInfo, ProbeStatus};

/// A case whose median SM clock is below this fraction of the highest SM clock seen in the run
/// was measured at a lower clock than its neighbours (see [`below_clock`]).
pub const THROTTLE_THRESHOLD: f64 = 0.9;

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

/// A case measured below the clock of the rest of its report.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ClockFlag {
    /// The run's label (`firefox/webgpu`).
    pub run: String,
    /// The case.
    pub id: String,
    /// Why, in words.
    pub why: String,
}

/// Every case of `report` whose median SM clock is below [`THROTTLE_THRESHOLD`] of the highest
/// SM clock seen anywhere in the report: its times are not comparable with the others'.
pub fn clock_flags(report: &RunReport) -> Vec<ClockFlag> {
    let all = report.runs.iter().flat_map(|r| &r.cases).filter_map(|c| c.clock.as_ref());
    let Some(highest) = highest_sm_mhz(all) else { return Vec::new() };
    let labels = labels(report);
    let mut flags = Vec::new();
    for (run, label) in report.runs.iter().zip(labels) {
        for case in &run.cases {
            let Some(stats) = case.clock.as_ref().filter(|s| below_clock(s, highest)) else { continue };
            let mut why = format!(
                "measured at a median SM clock of {:.0} MHz, below {:.0}% of the highest seen in this report ({highest:.0} MHz)",
                stats.sm_mhz_median.unwrap_or_default(),
                THROTTLE_THRESHOLD * 100.0
            );
            if !stats.throttle_reasons.is_empty() {
                why += &format!("; throttle reasons: {}", stats.throttle_reasons.join(", "));
            }
            flags.push(ClockFlag { run: label.clone(), id: case.id.clone(), why });
        }
    }
    flags
}

/// A case's clocks in a few characters, for tables: `1980 MHz` (median), with the range when it
/// moved (`1755–1980 MHz`); `–` without a probe.
pub fn format_sm(stats: Option<&ClockStats>) -> String {
    match stats.map(|s| (s.sm_mhz_min, s.sm_mhz_median, s.sm_mhz_max)) {
        Some((Some(lo), Some(_), Some(hi))) if hi - lo >= 1.0 => format!("{lo:.0}–{hi:.0} MHz"),
        Some((_, Some(median), _)) => format!("{median:.0} MHz"),
        _ => "–".into(),
    }
}

/// Everything the probe saw during a case, in a line: for hover text and logs.
pub fn describe(s: &ClockStats) -> String {
    let v = |x: Option<f64>, unit: &str| x.map(|x| format!("{x:.0} {unit}")).unwrap_or_else(|| "–".into());
    let mut line = format!(
        "SM clock {}–{} (median {}), memory {}, power {} (max {}), temperature max {}, {} samples",
        v(s.sm_mhz_min, "MHz"),
        v(s.sm_mhz_max, "MHz"),
        v(s.sm_mhz_median, "MHz"),
        v(s.mem_mhz_median, "MHz"),
        v(s.power_w_median, "W"),
        v(s.power_w_max, "W"),
        v(s.temp_c_max, "°C"),
        s.samples
    );
    if !s.throttle_reasons.is_empty() {
        line += &format!("; throttle reasons: {}", s.throttle_reasons.join(", "));
    }
    line
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
