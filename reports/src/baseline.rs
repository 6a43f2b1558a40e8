//! A run compared with a saved baseline (`--baseline NAME`, `harness compare OLD NEW`): per case
//! the change of the median with its 95% bootstrap interval, classed improved, regressed or
//! unchanged by [`stats::change`]. Cases are matched by run (`browser/platform`) and case id;
//! cases present on one side only are listed, never dropped. A case timed on other hardware than
//! the baseline's ([`crate::hardware`]) is not compared: the run is named as changed instead.

use crate::hardware::timed_on;
use crate::model::{labels, CaseReport, CaseStatus, RunReport, Timer};
use stats::Change;

// The stored comparison belongs to the results model; its users find it here too.
pub use crate::model::{BaselineComparison, CaseChange, ChangeCounts, HardwareChange, Presence, OTHER_HARDWARE};

/// A case of run `label` with no change to show, and `note` saying why.
fn uncompared(label: &str, id: &str, presence: Presence, note: String) -> CaseChange {
    CaseChange { run: label.to_string(), id: id.to_string(), presence, timer: None, change: None, note: Some(note) }
}

fn measured_times(case: &CaseReport, timer: Timer) -> Option<Vec<f64>> {
    (case.status == CaseStatus::Passed || case.status == CaseStatus::Failed)
        .then(|| case.times(timer))
        .filter(|t| t.len() >= 2)
}

impl BaselineComparison {
    /// Compares `new` with `baseline`, named `name`.
    pub fn new(name: &str, baseline: &RunReport, new: &RunReport, noise_pct: f64, fail_on_regression_pct: Option<f64>) -> Self {
        let (old_labels, new_labels) = (labels(baseline), labels(new));
        let mut cases = Vec::new();
        let mut hardware_changes: Vec<HardwareChange> = Vec::new();
        for (run, label) in new.runs.iter().zip(&new_labels) {
            let old_run = old_labels.iter().position(|l| l == label).map(|i| &baseline.runs[i]);
            for case in &run.cases {
                let old = old_run.and_then(|r| r.cases.iter().find(|c| c.id == case.id).map(|c| (r, c)));
                let changed = old.and_then(|(r, c)| timed_on(r, c).changed_to(&timed_on(run, case)));
                if let Some((was, now)) = &changed {
                    if !hardware_changes.iter().any(|h| &h.run == label && &h.baseline == was && &h.new == now) {
                        hardware_changes.push(HardwareChange { run: label.clone(), baseline: was.clone(), new: now.clone() });
                    }
                }
                cases.push(match old {
                    None => uncompared(label, &case.id, Presence::OnlyNew, "not in the baseline".into()),
                    Some(_) if changed.is_some() => uncompared(label, &case.id, Presence::Both, format!("{OTHER_HARDWARE} than the baseline's: not compared")),
                    Some((_, old)) => Self::pair(label, old, case, noise_pct),
                });
            }
        }
        for (run, label) in baseline.runs.iter().zip(&old_labels) {
            let new_run = new_labels.iter().position(|l| l == label).map(|i| &new.runs[i]);
            for case in &run.cases {
                if !new_run.is_some_and(|r| r.cases.iter().any(|c| c.id == case.id)) {
                    cases.push(uncompared(label, &case.id, Presence::OnlyBaseline, "not in the new run".into()));
                }
            }
        }
        BaselineComparison {
            name: name.to_string(),
            baseline_created_at: baseline.created_at.clone(),
            baseline_revision: baseline.harness.git_revision.clone(),
            noise_pct,
            fail_on_regression_pct,
            cases,
            hardware_changes,
        }
    }

    fn pair(label: &str, old: &CaseReport, new: &CaseReport, noise_pct: f64) -> CaseChange {
        // A steady batch's time per dispatch and an isolated dispatch's (idle clocks and
        // completion latency included) are different quantities, not a change.
        match (old.sampling, new.sampling) {
            (Some(was), Some(now)) if was != now => {
                uncompared(label, &new.id, Presence::Both, format!("sampled {} in the baseline, {} now: not the same measurement", was.as_str(), now.as_str()))
            }
            _ => Self::timed(label, old, new, noise_pct),
        }
    }

    /// The change between two cases measured alike.
    fn timed(label: &str, old: &CaseReport, new: &CaseReport, noise_pct: f64) -> CaseChange {
        let timer = if old.gpu.is_some() && new.gpu.is_some() { Timer::GpuTimestamp } else { Timer::WallClock };
        let (a, b) = (measured_times(old, timer), measured_times(new, timer));
        let change = a.as_deref().zip(b.as_deref()).and_then(|(a, b)| Change::between(a, b, noise_pct));
        let note = match (&a, &b) {
            _ if change.is_some() => None,
            (None, _) => Some(format!("baseline {}", old.status.as_str())),
            (_, None) => Some(format!("new run {}", new.status.as_str())),
            _ => Some("median of 0 ms: below the timer's resolution".into()),
        };
        CaseChange { run: label.to_string(), id: new.id.clone(), presence: Presence::Both, timer: Some(timer), change, note }
    }

}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testdata::{case, report_with};
    use stats::rng::SplitMix64;
    use stats::Class;

    fn draw(seed: u64, n: usize, median: f64) -> Vec<f64> {
        let mut rng = SplitMix64::new(seed);
        (0..n).map(|_| median * (0.97 + 0.06 * rng.next_f64())).collect()
    }

    #[test]
    fn a_twenty_percent_slowdown_fails_a_five_percent_gate_and_the_same_distribution_does_not() {
        let old = report_with(vec![("chrome", vec![case("a", &draw(1, 30, 1.0), true, true), case("b", &draw(2, 30, 2.0), true, true)])]);
        let new = report_with(vec![("chrome", vec![case("a", &draw(3, 30, 1.2), true, true), case("b", &draw(4, 30, 2.0), true, true)])]);
        let cmp = BaselineComparison::new("base", &old, &new, stats::change::DEFAULT_NOISE_PCT, Some(5.0));
        assert_eq!(cmp.cases[0].class(), Some(Class::Regressed));
        assert_eq!(cmp.cases[1].class(), Some(Class::Unchanged));
        assert!(cmp.gate_fails());
        assert_eq!(cmp.failing().map(|(c, _)| c.id.as_str()).collect::<Vec<_>>(), ["a"]);
        let lenient = BaselineComparison { fail_on_regression_pct: Some(50.0), ..cmp.clone() };
        assert!(!lenient.gate_fails());
        let no_gate = BaselineComparison { fail_on_regression_pct: None, ..cmp };
        assert!(!no_gate.gate_fails());
    }

    #[test]
    fn a_run_on_other_hardware_is_not_compared_and_fails_the_gate_while_a_driver_update_is_compared() {
        use kernels::wire::AdapterReport;
        let gpu = |description: &str| AdapterReport { available: true, vendor: "nvidia".into(), architecture: "hopper".into(), description: description.into(), is_fallback_adapter: Some(false), ..Default::default() };
        let cases = |seed: u64| vec![case("a", &draw(seed, 30, 1.0), true, true)];
        let (mut old, mut new) = (report_with(vec![("chrome", cases(1)), ("chrome", cases(2))]), report_with(vec![("chrome", cases(3)), ("chrome", cases(4))]));
        for report in [&mut old, &mut new] {
            report.runs[1].platform = "wasm".into();
            for run in &mut report.runs {
                run.host.cpu = "Xeon".into();
            }
        }
        old.runs[0].adapter = Some(gpu("NVIDIA H100 (driver 580)"));
        new.runs[0].adapter = Some(crate::adapter::tests::swiftshader());
        // The WASM run's page saw the same change of adapter; its times are the CPU's, which did not change.
        old.runs[1].adapter = old.runs[0].adapter.clone();
        new.runs[1].adapter = new.runs[0].adapter.clone();
        let cmp = BaselineComparison::new("h100", &old, &new, 2.0, Some(5.0));
        let webgpu = &cmp.cases[0];
        assert_eq!((webgpu.change, webgpu.timer), (None, None), "{webgpu:?}");
        assert_eq!(webgpu.note.as_deref(), Some("other hardware than the baseline's: not compared"));
        assert_eq!(cmp.cases[1].class(), Some(Class::Unchanged), "the CPU's times still compare");
        assert_eq!(cmp.hardware_changes.len(), 1);
        let h = &cmp.hardware_changes[0];
        assert_eq!((h.run.as_str(), h.baseline.as_str()), ("chrome/webgpu", "NVIDIA H100 (driver 580)"));
        assert!(h.new.starts_with("google swiftshader, software: SwiftShader"), "{h:?}");
        assert!(cmp.gate_fails() && cmp.failing().next().is_none(), "no regression, yet the gate cannot vouch for chrome/webgpu");
        let failures = cmp.gate_failures();
        assert!(failures.len() == 1 && failures[0].contains("save a baseline on this hardware"), "{failures:?}");
        assert!(!BaselineComparison::new("h100", &old, &new, 2.0, None).gate_fails(), "no gate, nothing fails");
        // Another CPU is other hardware for the CPU's times.
        new.runs[1].host.cpu = "EPYC".into();
        let cmp = BaselineComparison::new("h100", &old, &new, 2.0, Some(5.0));
        assert_eq!(cmp.hardware_changes.iter().map(|h| (h.run.as_str(), h.baseline.as_str(), h.new.as_str())).collect::<Vec<_>>()[1], ("chrome/wasm", "Xeon", "EPYC"));
        // A driver update changes the description only: the same GPU, compared.
        new.runs[1].host.cpu = "Xeon".into();
        new.runs[0].adapter = Some(gpu("NVIDIA H100 (driver 590)"));
        let cmp = BaselineComparison::new("h100", &old, &new, 2.0, Some(5.0));
        assert!(cmp.hardware_changes.is_empty() && cmp.cases[0].change.is_some(), "{cmp:?}");
        // Firefox hides its adapter's name: nothing to tell apart, compared.
        old.runs[0].adapter = Some(AdapterReport { available: true, is_fallback_adapter: Some(false), ..Default::default() });
        new.runs[0].adapter = old.runs[0].adapter.clone();
        assert!(BaselineComparison::new("h100", &old, &new, 2.0, Some(5.0)).hardware_changes.is_empty());
    }

    #[test]
    fn steady_and_isolated_times_are_not_compared() {
        let old = report_with(vec![("chrome", vec![case("a", &draw(1, 30, 1.0), true, true)])]);
        let mut new = report_with(vec![("chrome", vec![case("a", &draw(2, 30, 3.0), true, true)])]);
        assert_eq!(old.runs[0].cases[0].sampling, Some(kernels::SamplingMode::Steady));
        new.runs[0].cases[0].sampling = Some(kernels::SamplingMode::Isolated);
        let cmp = BaselineComparison::new("base", &old, &new, 2.0, Some(5.0));
        assert_eq!(cmp.cases[0].change, None);
        assert_eq!(cmp.cases[0].note.as_deref(), Some("sampled steady in the baseline, isolated now: not the same measurement"));
        assert_eq!(cmp.counts().not_compared, 1);
    }

    #[test]
    fn cases_on_one_side_only_are_listed() {
        let old = report_with(vec![("chrome", vec![case("a", &[1.0, 1.0], true, true), case("gone", &[1.0, 1.0], true, true)])]);
        let new = report_with(vec![("chrome", vec![case("a", &[1.0, 1.0], true, true), case("fresh", &[1.0, 1.0], true, true)])]);
        let cmp = BaselineComparison::new("base", &old, &new, 2.0, None);
        let c = cmp.counts();
        assert_eq!((c.unchanged, c.only_new, c.only_baseline), (1, 1, 1));
        let gone = cmp.cases.iter().find(|c| c.id == "gone").unwrap();
        assert_eq!(gone.presence, Presence::OnlyBaseline);
    }

    #[test]
    fn gpu_time_is_compared_only_when_both_sides_have_it() {
        let old = report_with(vec![("chrome", vec![case("a", &[1.0, 1.0], true, true)])]);
        let new = report_with(vec![("chrome", vec![case("a", &[1.0, 1.0], true, false)])]);
        let cmp = BaselineComparison::new("base", &old, &new, 2.0, None);
        assert_eq!(cmp.cases[0].timer, Some(Timer::WallClock));
    }
}
