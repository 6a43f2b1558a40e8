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
pub fn clock_flags(report: &crate::RunReport) -> Vec<ClockFlag> {
    let all = report.runs.iter().flat_map(|r| &r.cases).filter_map(|c| c.clock.as_ref());
    let Some(highest) = highest_sm_mhz(all) else { return Vec::new() };
    let labels = crate::compare::labels(report);
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

    fn clocked(median: f64) -> ClockStats {
        ClockStats { sm_mhz_min: Some(median), sm_mhz_median: Some(median), sm_mhz_max: Some(median), throttle_reasons: vec!["gpu_idle".into()], ..stats(None, None) }
    }

    #[test]
    fn a_case_below_the_reports_clock_is_flagged_in_every_report() {
        use crate::testdata::*;
        let mut report = report_with(vec![("firefox", vec![case("a", &[1.0, 1.1], true, true), case("b", &[1.0, 1.2], true, true)])]);
        report.runs[0].cases[0].clock = Some(clocked(1980.0));
        report.runs[0].cases[1].clock = Some(clocked(345.0));
        report.runs[0].probe = Some(ProbeStatus::Attached(ProbeInfo { source: "stand-in".into(), device: None, stand_in: true, interval_ms: 50.0 }));
        let flags = clock_flags(&report);
        assert_eq!(flags.len(), 1, "{flags:?}");
        assert!(flags[0].id.starts_with("b") && flags[0].why.contains("345 MHz") && flags[0].why.contains("1980 MHz"), "{flags:?}");
        let html = crate::html::render(&report).unwrap();
        assert!(html.contains("Measured below the clock") && html.contains("345 MHz"), "the HTML report flags it");
        assert!(html.contains("a stand-in: scripted clocks"), "a stand-in probe is named as one");
        let md = crate::markdown::render(&report);
        assert!(md.contains("## Flagged") && md.contains("below 90%"), "{md}");
        // At 1800 MHz the second case is within 90% of the first: nothing to flag.
        report.runs[0].cases[1].clock = Some(clocked(1800.0));
        assert!(clock_flags(&report).is_empty());
        // The clocks validate against the schema and round-trip.
        let json = serde_json::to_value(&report).unwrap();
        let schema: serde_json::Value = serde_json::from_str(include_str!("../schema/results.schema.json")).unwrap();
        let validator = jsonschema::validator_for(&schema).unwrap();
        assert!(validator.is_valid(&json), "{:?}", validator.iter_errors(&json).map(|e| e.to_string()).collect::<Vec<_>>());
        let mut broken = json.clone();
        broken["runs"][0]["cases"][1]["clock"]["smMhzMedian"] = "fast".into();
        assert!(!validator.is_valid(&broken), "the clock is checked, not merely allowed");
    }
}
