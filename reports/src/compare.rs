//! Cross-browser (and cross-platform) comparison of the runs in one report: for every case, each
//! run's median and spread, its ratio to the fastest, and the correctness verdicts side by side.
//! Cases where runs disagree on correctness, or where one run is more than [`SLOW_RATIO`]× slower
//! than the fastest, are flagged. A time taken on a software adapter (SwiftShader, lavapipe, WARP)
//! measures the CPU through an emulator, so it is shown but never ranked: speed is compared only
//! among times that say something of the hardware they name.

use crate::hardware::timed_on;
use crate::model::{labels, CaseReport, CaseStatus, PlatformRun, RunReport, Timer};
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
    /// That timer as tables name it (`gpu`, `gpu span·page`, `wall`): GPU is compared with GPU
    /// wherever every run has it, whichever GPU timer each used.
    pub timer: &'static str,
    /// median / fastest median, among the entries compared for speed (none where fewer than two
    /// are).
    pub ratio: Option<f64>,
    /// Why this time is not compared for speed: the software adapter it ran on, in words.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub software: Option<String>,
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
    /// The runs whose times were left out of the speed comparison, each with the sign of its
    /// software adapter (`chrome/webgpu (SwiftShader, Chrome's CPU Vulkan implementation)`), in report
    /// order.
    pub not_compared: Vec<String>,
}

impl Entry {
    /// Its place in the ranking as the reports print it: `×1.50`, `software` where its time is
    /// not ranked, `None` where there is nothing to rank it against.
    pub fn rank(&self) -> Option<String> {
        match (self.ratio, &self.software) {
            (Some(r), _) => Some(format!("×{r:.2}")),
            (None, Some(_)) => Some("software".into()),
            (None, None) => None,
        }
    }
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

impl CaseComparison {
    /// The timers its runs were compared by, once each: `gpu`, or `gpu / gpu span·page` where
    /// harness's timestamps meet the page GPU timer's.
    pub fn timer_words(&self) -> String {
        let mut seen: Vec<&str> = Vec::new();
        for e in self.entries.iter().filter(|e| e.stats.is_some()) {
            if !seen.contains(&e.timer) {
                seen.push(e.timer);
            }
        }
        if seen.is_empty() {
            return self.timer.short().into();
        }
        seen.join(" / ")
    }
}

impl Comparison {
    /// Cases flagged for a disagreement or a slow run.
    pub fn flagged(&self) -> impl Iterator<Item = &CaseComparison> {
        self.cases.iter().filter(|c| c.correctness_disagrees || !c.slow_runs.is_empty())
    }

    /// What the reports say of the runs left out of the speed comparison; `None` when none was.
    pub fn software_note(&self) -> Option<String> {
        software_note(&self.not_compared)
    }
}

/// What a table says of the runs `not_compared` left out of its speed ranking (each `run (sign)`,
/// as [`not_compared`] writes them); `None` when none was.
pub(crate) fn software_note(not_compared: &[String]) -> Option<String> {
    (!not_compared.is_empty()).then(|| {
        format!(
            "Speed not compared for {}: a software adapter's times measure the CPU, not a GPU (`harness verify` gives the evidence). Their medians are shown and their outputs checked; compare speed on a hardware GPU.",
            not_compared.join(", ")
        )
    })
}

/// Each of `runs` (labels) whose times a table left out of its speed ranking, with the sign of its
/// software adapter (`chrome/webgpu (SwiftShader, …)`): `software(i)` is the first sign run `i`
/// showed in any row.
pub(crate) fn not_compared(runs: &[String], software: impl Fn(usize) -> Option<String>) -> Vec<String> {
    runs.iter().enumerate().filter_map(|(i, run)| software(i).map(|sign| format!("{run} ({sign})"))).collect()
}

/// One run's time of a case by the timer its row is compared on.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RowTime {
    /// Statistics of that timer; `None` where the run did not plan the case or did not measure it.
    pub stats: Option<Summary>,
    /// That timer as tables name it (`gpu`, `gpu span·page`, `wall`); `–` where the run did not
    /// plan the case.
    pub timer: &'static str,
    /// Why its time is not ranked: the software adapter it ran on, in words.
    pub software: Option<String>,
}

/// The timer a row of cases is compared on, and each case's time by it: GPU time where every
/// measured case of the row has one (whichever GPU timer each used), else the wall clock for
/// every case, so that no ratio sets one against the other. `found`: each run with its case of
/// the row, where it planned one.
pub(crate) fn row_times(found: &[(&PlatformRun, Option<&CaseReport>)]) -> (Timer, Vec<RowTime>) {
    let measured = found.iter().filter_map(|(_, c)| *c).filter(|c| c.wall.is_some());
    let all_gpu = measured.clone().count() > 0 && measured.clone().all(|c| c.gpu.is_some());
    let timer = if all_gpu { Timer::GpuTimestamp } else { Timer::WallClock };
    let times = found
        .iter()
        .map(|&(run, c)| RowTime {
            stats: c.and_then(|c| if all_gpu { c.gpu } else { c.wall }),
            timer: match (all_gpu, c) {
                (true, Some(c)) => c.gpu_label(),
                (false, Some(_)) => Timer::WallClock.short(),
                (_, None) => "–",
            },
            software: c.and_then(|c| timed_on(run, c).software()),
        })
        .collect();
    (timer, times)
}

/// Each time of a row over the fastest of those `may_lead` lets lead, among the times ranked
/// (measured, and on no software adapter), with the fastest's place; no ratio at all where fewer
/// than two are ranked or none may lead.
pub(crate) fn ratios(times: &[RowTime], may_lead: impl Fn(usize) -> bool) -> (Option<usize>, Vec<Option<f64>>) {
    let ranked = |t: &RowTime| t.stats.filter(|_| t.software.is_none()).map(|s| s.median);
    let fastest = (0..times.len())
        .filter(|&i| may_lead(i))
        .filter_map(|i| ranked(&times[i]).filter(|m| *m > 0.0).map(|m| (i, m)))
        .min_by(|a, b| a.1.total_cmp(&b.1));
    match fastest.filter(|_| times.iter().filter_map(ranked).count() >= 2) {
        Some((best, ms)) => (Some(best), times.iter().map(|t| ranked(t).map(|m| m / ms)).collect()),
        None => (None, vec![None; times.len()]),
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
            let found: Vec<_> = report.runs.iter().map(|r| (r, r.cases.iter().find(|c| c.id == id))).collect();
            let (timer, times) = row_times(&found);
            let (_, ratios) = ratios(&times, |_| true);
            let entries: Vec<Entry> = found
                .iter()
                .zip(times)
                .zip(ratios)
                .zip(&runs)
                .map(|((((_, c), time), ratio), run)| Entry {
                    run: run.clone(),
                    status: c.map(|c| c.status),
                    stats: time.stats,
                    timer: time.timer,
                    ratio,
                    software: time.software,
                    variant: c.and_then(|c| c.variant.clone()),
                    roofline: c.and_then(|c| c.roofline.clone()),
                })
                .collect();
            let verdicts: Vec<bool> = found
                .iter()
                .filter_map(|(_, c)| *c)
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
        .collect::<Vec<_>>();
    let not_compared = not_compared(&runs, |i| cases.iter().find_map(|c: &CaseComparison| c.entries[i].software.clone()));
    Some(Comparison { runs, cases, not_compared })
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
    fn a_software_adapters_times_are_shown_but_never_ranked_and_cpu_times_still_are() {
        use crate::adapter::tests::swiftshader;
        let lavapipe = kernels::wire::AdapterReport { available: true, vendor: crate::adapter::MESA_VENDOR.into(), ..Default::default() };
        let cases = |ms: f64| vec![case("a", &[ms; 3], true, false), case("b", &[ms; 3], false, false)];
        let mut report = report_with(vec![("chrome", cases(50.0)), ("firefox", cases(1.0)), ("chrome", cases(3.0)), ("firefox", cases(1.0))]);
        report.runs[0].adapter = Some(swiftshader());
        report.runs[1].adapter = Some(lavapipe.clone());
        // The WASM runs' pages see the same software adapters, but their times are the CPU's by design.
        for (run, adapter) in report.runs[2..].iter_mut().zip([swiftshader(), lavapipe]) {
            run.platform = "wasm".into();
            run.adapter = Some(adapter);
        }
        report.runs[1].cases[1].correctness.as_mut().unwrap().passed = true;
        let cmp = compare_runs(&report).unwrap();
        let a = &cmp.cases[0];
        assert_eq!(a.entries.iter().map(|e| e.ratio).collect::<Vec<_>>(), [None, None, Some(3.0), Some(1.0)]);
        assert!(a.entries[0].software.as_deref().unwrap().contains("SwiftShader") && a.entries[1].software.as_deref().unwrap().contains("0x10005"), "{a:?}");
        assert_eq!(a.entries[0].stats.map(|s| s.median), Some(50.0), "the time is still shown");
        // 50× slower than Firefox's lavapipe flags nothing; chrome/wasm 3× slower than firefox/wasm does.
        assert_eq!(a.slow_runs, ["chrome/wasm"]);
        // Correctness is compared on every adapter.
        assert!(cmp.cases[1].correctness_disagrees);
        assert_eq!(cmp.not_compared.len(), 2, "{:?}", cmp.not_compared);
        let note = cmp.software_note().unwrap();
        assert!(note.starts_with("Speed not compared for chrome/webgpu (SwiftShader") && note.contains("firefox/webgpu (Mesa's software vendor id") && !note.contains("wasm"), "{note}");
    }

    #[test]
    fn a_hardware_adapter_is_ranked_against_the_cpu_but_not_against_a_software_one() {
        use crate::adapter::tests::swiftshader;
        let hardware = kernels::wire::AdapterReport { available: true, vendor: "nvidia".into(), is_fallback_adapter: Some(false), ..Default::default() };
        let mut report = report_with(vec![("chrome", vec![case("a", &[9.0], true, false)]), ("firefox", vec![case("a", &[1.0], true, false)]), ("wgpu", vec![case("a", &[4.0], true, false)])]);
        report.runs[0].adapter = Some(swiftshader());
        report.runs[1].adapter = Some(hardware);
        report.runs[2].platform = "wasm".into();
        let a = &compare_runs(&report).unwrap().cases[0];
        assert_eq!(a.entries.iter().map(|e| e.ratio).collect::<Vec<_>>(), [None, Some(1.0), Some(4.0)]);
        assert_eq!(a.slow_runs, ["wgpu/wasm"]);
        // A CPU bench on a software adapter's run (`harness bench --platform native`) is timed on the CPU.
        report.runs[0].cases[0].timer_resolution_ms = Some(1e-6);
        let a = &compare_runs(&report).unwrap().cases[0];
        assert_eq!(a.entries[0].ratio, Some(9.0));
        assert!(compare_runs(&report).unwrap().software_note().is_none());
        // With one time left to compare, there is no ratio at all.
        report.runs[0].cases[0].timer_resolution_ms = None;
        report.runs.truncate(2);
        let a = &compare_runs(&report).unwrap().cases[0];
        assert!(a.entries.iter().all(|e| e.ratio.is_none()) && a.slow_runs.is_empty(), "{a:?}");
    }

    #[test]
    fn one_run_has_nothing_to_compare() {
        assert!(compare_runs(&report_with(vec![("chrome", vec![])])).is_none());
    }
}
