//! Cross-browser (and cross-platform) comparison of the runs in one report: for every case, each
//! run's median and spread, its ratio to the fastest, and the correctness verdicts side by side.
//! Cases where runs disagree on correctness, or where one run is more than [`SLOW_RATIO`]× slower
//! than the fastest, are flagged.

use crate::model::{labels, CaseStatus, RunReport, Timer};
use stats::Summary;
use serde::Serialize;

/// A run this many times slower than the fastest on a case is flagged.
pub const SLOW_RATIO: f64 = 2.0;

/// One run's numbers for one case.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Entry {
    /// `browser/platform` of the run.
    pub run: String,
    /// The case's status in that run (`None`: the run did not plan it).
    pub status: Option<CaseStatus>,
    /// Statistics of the compared timer.
    pub stats: Option<Summary>,
    /// median / fastest median.
    pub ratio: Option<f64>,
    /// The kernel variant that run used, where not the default (runs may have tuned apart).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub variant: Option<String>,
    /// The case's fraction of that run's binding peak, where it has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub roofline: Option<crate::model::CaseRoofline>,
}

/// One case across all runs.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CaseComparison {
    /// Case id.
    pub id: String,
    /// The timer compared: GPU timestamps only when every measured run has them, else wall clock,
    /// so that no ratio mixes the two.
    pub timer: Timer,
    /// Per run, in report order.
    pub entries: Vec<Entry>,
    /// Some runs passed the check and others failed it.
    pub correctness_disagrees: bool,
    /// Runs more than [`SLOW_RATIO`]× slower than the fastest.
    pub slow_runs: Vec<String>,
}

/// The comparison of every case of a report.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Comparison {
    /// The runs compared, as `browser/platform`.
    pub runs: Vec<String>,
    /// Every case that any run planned, in first-seen order.
    pub cases: Vec<CaseComparison>,
}

impl CaseComparison {
    /// Why this case is flagged, one phrase per reason; empty when it is not.
    pub fn reasons(&self) -> Vec<String> {
        let mut why = Vec::new();
        if self.correctness_disagrees {
            let verdicts: Vec<String> = self
                .entries
                .iter()
                .filter_map(|e| e.status.map(|st| format!("{} {}", e.run, st.as_str())))
                .collect();
            why.push(format!("correctness disagrees ({})", verdicts.join(", ")));
        }
        for run in &self.slow_runs {
            let ratio = self.entries.iter().find(|e| &e.run == run).and_then(|e| e.ratio).unwrap_or(0.0);
            why.push(format!("{run} {ratio:.1}× slower than the fastest"));
        }
        why
    }
}

impl Comparison {
    /// Cases flagged for a disagreement or a slow run.
    pub fn flagged(&self) -> impl Iterator<Item = &CaseComparison> {
        self.cases.iter().filter(|c| c.correctness_disagrees || !c.slow_runs.is_empty())
    }
}

/// Compares the runs of `report`; `None` with fewer than two runs.
pub fn compare_runs(report: &RunReport) -> Option<Comparison> {
    if report.runs.len() < 2 {
        return None;
    }
    let runs = labels(report);
    let mut ids: Vec<&str> = Vec::new();
    for run in &report.runs {
        for c in &run.cases {
            if !ids.contains(&c.id.as_str()) {
                ids.push(&c.id);
            }
        }
    }
    let cases = ids
        .into_iter()
        .map(|id| {
            let found: Vec<_> = report.runs.iter().map(|r| r.cases.iter().find(|c| c.id == id)).collect();
            let measured = found.iter().flatten().filter(|c| c.wall.is_some());
            let all_gpu = measured.clone().count() > 0 && measured.clone().all(|c| c.gpu.is_some());
            let timer = if all_gpu { Timer::GpuTimestamp } else { Timer::WallClock };
            let stats: Vec<Option<Summary>> = found
                .iter()
                .map(|c| c.and_then(|c| if all_gpu { c.gpu } else { c.wall }))
                .collect();
            let fastest = stats.iter().flatten().map(|s| s.median).filter(|m| *m > 0.0).fold(f64::INFINITY, f64::min);
            let entries: Vec<Entry> = found
                .iter()
                .zip(&stats)
                .zip(&runs)
                .map(|((c, s), run)| Entry {
                    run: run.clone(),
                    status: c.map(|c| c.status),
                    stats: *s,
                    ratio: s.filter(|_| fastest.is_finite()).map(|s| s.median / fastest),
                    variant: c.and_then(|c| c.variant.clone()),
                    roofline: c.and_then(|c| c.roofline.clone()),
                })
                .collect();
            let verdicts: Vec<bool> = found
                .iter()
                .flatten()
                .filter_map(|c| c.correctness.as_ref().map(|v| v.passed))
                .collect();
            let correctness_disagrees = verdicts.contains(&true) && verdicts.contains(&false);
            let slow_runs = entries
                .iter()
                .filter(|e| e.ratio.is_some_and(|r| r > SLOW_RATIO))
                .map(|e| e.run.clone())
                .collect();
            CaseComparison { id: id.to_string(), timer, entries, correctness_disagrees, slow_runs }
        })
        .collect();
    Some(Comparison { runs, cases })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testdata::{case, report_with};

    #[test]
    fn ratios_are_to_the_fastest_and_slow_runs_are_flagged() {
        let report = report_with(vec![
            ("chrome", vec![case("a", &[1.0, 1.0, 1.0], true, true)]),
            ("firefox", vec![case("a", &[2.5, 2.5, 2.5], true, true)]),
        ]);
        let cmp = compare_runs(&report).unwrap();
        let a = &cmp.cases[0];
        assert_eq!(a.entries[0].ratio, Some(1.0));
        assert_eq!(a.entries[1].ratio, Some(2.5));
        assert_eq!(a.slow_runs, vec!["firefox/webgpu"]);
        assert!(!a.correctness_disagrees);
        assert_eq!(cmp.flagged().count(), 1);
    }

    #[test]
    fn disagreeing_verdicts_are_flagged() {
        let report = report_with(vec![
            ("chrome", vec![case("a", &[1.0], true, true)]),
            ("firefox", vec![case("a", &[1.1], false, true)]),
        ]);
        let cmp = compare_runs(&report).unwrap();
        assert!(cmp.cases[0].correctness_disagrees);
        assert!(cmp.cases[0].slow_runs.is_empty());
    }

    #[test]
    fn gpu_and_wall_times_are_never_mixed() {
        let report = report_with(vec![
            ("chrome", vec![case("a", &[1.0], true, true)]),
            ("firefox", vec![case("a", &[1.0], true, false)]),
        ]);
        assert_eq!(compare_runs(&report).unwrap().cases[0].timer, Timer::WallClock);
    }

    #[test]
    fn cases_missing_from_a_run_are_listed_not_dropped() {
        let report = report_with(vec![
            ("chrome", vec![case("a", &[1.0], true, true), case("b", &[1.0], true, true)]),
            ("firefox", vec![case("a", &[1.0], true, true)]),
        ]);
        let cmp = compare_runs(&report).unwrap();
        assert_eq!(cmp.cases.len(), 2);
        assert_eq!(cmp.cases[1].entries[1].status, None);
    }

    #[test]
    fn one_run_has_nothing_to_compare() {
        assert!(compare_runs(&report_with(vec![("chrome", vec![])])).is_none());
    }
}
