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

/// The fewest probe samples inside a case's own timed window from which [`below_clock`] judges
/// its clock: 10. At the probe's default interval of 50 ms (harness's `DEFAULT_INTERVAL`) that
/// takes a timed window of about half a second (450 ms from the first sample to the tenth).
///
/// Why a floor at all: a reading is the clock at one instant, and a GPU that is mostly idle
/// between short bursts of work reads its idle clock at most instants, whatever clock the bursts
/// ran at. On an H100, Chromium's per-op decoder cases read 345 MHz from 3–7 samples in ~150 ms
/// windows while their GPU times equalled native's at 1980 MHz. Why ten: it takes a window about
/// three times as long as those, long enough that a GPU held at a low clock (a power cap, heat, no
/// boost) shows it in most readings, and one stray reading moves a median of ten little. A case
/// with fewer samples reads *unknown*: neither flagged nor vouched for. The stored [`ClockStats`]
/// keep every sample; the rule applies when a report is read.
///
/// The floor is above 1 also because a window shorter than the interval gets the nearest sample
/// outside it as a stand-in (`samples` = 1): only samples inside the window may ever count.
pub const MIN_FLAG_SAMPLES: u32 = 10;

const _: () = assert!(MIN_FLAG_SAMPLES > 1, "a lone stand-in sample from outside the window must never be judged");

/// Whether `stats` hold enough samples from inside the case's timed window
/// ([`MIN_FLAG_SAMPLES`]) to say what clock the case ran at; otherwise its clock reads unknown.
pub fn enough_samples(stats: &ClockStats) -> bool {
    stats.samples >= MIN_FLAG_SAMPLES
}

/// The rule [`enough_samples`] applies, in words for the reports.
pub fn judging_rule() -> String {
    format!("a case is judged only from ≥ {MIN_FLAG_SAMPLES} probe samples inside its own timed window; fewer read unknown")
}

/// Whether a case ran below the run's clock: its median SM clock is below
/// [`THROTTLE_THRESHOLD`] × `highest_sm_mhz` (nvbench's throttle threshold). Such a case is not
/// comparable with the others. The median, not the minimum, because one sample caught during a
/// clock change says little, while a median below the threshold means most of the case ran slow.
/// False when the case has no SM clock, or too few samples to judge ([`enough_samples`]).
pub fn below_clock(stats: &ClockStats, highest_sm_mhz: f64) -> bool {
    enough_samples(stats) && stats.sm_mhz_median.is_some_and(|median| median < THROTTLE_THRESHOLD * highest_sm_mhz)
}

/// The highest SM clock any of `cases` reached: the reference [`below_clock`] compares with.
/// Every case counts here, however few its samples: a reading is a clock the GPU did reach.
/// `None` when no case has an SM clock.
pub fn highest_sm_mhz<'a>(cases: impl IntoIterator<Item = &'a ClockStats>) -> Option<f64> {
    cases.into_iter().filter_map(|c| c.sm_mhz_max).reduce(f64::max)
}

/// The clock statistics of every case of `report` that has them, run by run.
pub fn case_clocks(report: &RunReport) -> impl Iterator<Item = &ClockStats> {
    report.runs.iter().flat_map(|r| &r.cases).filter_map(|c| c.clock.as_ref())
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
/// SM clock seen anywhere in the report: its times are not comparable with the others'. A case
/// with fewer than [`MIN_FLAG_SAMPLES`] samples is never flagged: its clock is unknown.
pub fn clock_flags(report: &RunReport) -> Vec<ClockFlag> {
    let Some(highest) = highest_sm_mhz(case_clocks(report)) else { return Vec::new() };
    let labels = labels(report);
    let mut flags = Vec::new();
    for (run, label) in report.runs.iter().zip(labels) {
        for case in &run.cases {
            let Some(stats) = case.clock.as_ref().filter(|s| below_clock(s, highest)) else { continue };
            let mut why = format!(
                "measured at a median SM clock of {:.0} MHz ({} probe samples), below {:.0}% of the highest seen in this report ({highest:.0} MHz)",
                stats.sm_mhz_median.unwrap_or_default(),
                stats.samples,
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
/// moved (`1755–1980 MHz`); `unknown (3 samples)` when too few samples to judge
/// ([`enough_samples`]), since their median would mislead; `–` without a probe or an SM clock.
pub fn format_sm(stats: Option<&ClockStats>) -> String {
    let Some((s, median)) = stats.and_then(|s| Some((s, s.sm_mhz_median?))) else { return "–".into() };
    if !enough_samples(s) {
        return format!("unknown ({})", count_samples(s.samples));
    }
    match (s.sm_mhz_min, s.sm_mhz_max) {
        (Some(lo), Some(hi)) if hi - lo >= 1.0 => format!("{lo:.0}–{hi:.0} MHz"),
        _ => format!("{median:.0} MHz"),
    }
}

/// `1 sample`, `3 samples`.
fn count_samples(n: u32) -> String {
    format!("{n} sample{}", if n == 1 { "" } else { "s" })
}

/// Everything the probe saw during a case, in a line: for hover text and logs.
pub fn describe(s: &ClockStats) -> String {
    let v = |x: Option<f64>, unit: &str| x.map(|x| format!("{x:.0} {unit}")).unwrap_or_else(|| "–".into());
    let mut line = format!(
        "SM clock {}–{} (median {}), memory {}, power {} (max {}), temperature max {}, {}",
        v(s.sm_mhz_min, "MHz"),
        v(s.sm_mhz_max, "MHz"),
        v(s.sm_mhz_median, "MHz"),
        v(s.mem_mhz_median, "MHz"),
        v(s.power_w_median, "W"),
        v(s.power_w_max, "W"),
        v(s.temp_c_max, "°C"),
        count_samples(s.samples)
    );
    if !enough_samples(s) {
        line += &format!(" (too few to judge the clock: {})", judging_rule());
    }
    if !s.throttle_reasons.is_empty() {
        line += &format!("; throttle reasons: {}", s.throttle_reasons.join(", "));
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Enough samples to be judged.
    fn stats(median: Option<f64>, max: Option<f64>) -> ClockStats {
        ClockStats {
            samples: MIN_FLAG_SAMPLES,
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
    fn a_case_with_too_few_samples_reads_unknown_and_is_never_flagged() {
        let (highest, idle) = (1980.0, Some(345.0));
        let with = |samples| ClockStats { samples, ..stats(idle, idle) };
        // At the boundary: one sample short is unknown, the floor itself is judged.
        assert!(!below_clock(&with(MIN_FLAG_SAMPLES - 1), highest));
        assert!(below_clock(&with(MIN_FLAG_SAMPLES), highest));
        // A short window of 3 samples, and the nearest sample standing in for a window shorter
        // than the interval: neither judged, and the tables say why instead of a median.
        for (samples, text) in [(3, "unknown (3 samples)"), (1, "unknown (1 sample)"), (MIN_FLAG_SAMPLES - 1, "unknown (9 samples)")] {
            let s = with(samples);
            assert!(!enough_samples(&s) && !below_clock(&s, highest), "{samples}");
            assert_eq!(format_sm(Some(&s)), text);
            let line = describe(&s);
            assert!(line.contains("median 345 MHz") && line.contains("too few to judge the clock"), "the raw readings stay on hover: {line}");
        }
        assert_eq!(format_sm(Some(&with(MIN_FLAG_SAMPLES))), "345 MHz");
        assert!(!describe(&with(MIN_FLAG_SAMPLES)).contains("too few"));
        assert_eq!(format_sm(Some(&stats(Some(1755.0), Some(1980.0)))), "1755–1980 MHz");
        // No SM clock, or no probe: nothing to read, known or not.
        assert_eq!(format_sm(Some(&ClockStats { samples: 3, ..stats(None, None) })), "–");
        assert_eq!(format_sm(None), "–");
        assert!(judging_rule().contains(&format!("≥ {MIN_FLAG_SAMPLES} probe samples inside its own timed window")));
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
