//! A case's lifecycle: the run starts with nothing settled, each case is settled once, checked
//! against its reference as its measurement arrives (or with no measurement, as it failed), and
//! when the run ends every case's fate is recorded, in plan order, in the [`CaseBook`].

use crate::measure::events::{Reporter, RunEvent};
use crate::plan::reference::References;
use anyhow::Result;
use kernels::check::check;
use kernels::wire::{CaseMeasurement, Phase};
use kernels::{CaseSpec, Platform};
use reports::{Attempt, CaseReport, CaseStatus, Phases, PlatformRun, RunStatus};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

/// A run of `browser` on `platform` with nothing settled yet.
pub fn new_run(browser: &str, platform: Platform) -> PlatformRun {
    PlatformRun {
        browser: browser.to_string(),
        platform: platform.as_str().to_string(),
        host: crate::measure::host::host_info(),
        browser_info: None,
        driver: None,
        adapter: None,
        status: RunStatus::Completed,
        failure: None,
        errors: Vec::new(),
        phases: Phases::default(),
        completion_latency: None,
        probe: None,
        roofline: None,
        cases: Vec::new(),
        diagnostics: Vec::new(),
        memory: Vec::new(),
        unavailable: None,
    }
}

/// Records how the run ended and every case's fate, and tells the reporter.
pub fn finish_run(mut run: PlatformRun, book: CaseBook, outcome: Result<()>, reporter: &mut dyn Reporter) -> PlatformRun {
    if let Err(e) = outcome {
        run.status = RunStatus::Failed;
        run.failure = Some(format!("{e:#}"));
    }
    run.cases = book.finish();
    reporter.event(RunEvent::RunFinished(&run));
    run
}

/// Checks a measurement against the case's reference, off the async threads (references can be
/// heavy). `run` names where it ran, for a user kernel compared with the first platform. The
/// report carries the platform's phases of the case ([`CaseReport::case_time`]); harness's own
/// (`reference`, computed or waited for, and `check`) come beside it.
pub(super) async fn analyze(spec: CaseSpec, m: CaseMeasurement, references: Arc<References>, run: String) -> Result<(CaseReport, Vec<Phase>)> {
    Ok(tokio::task::spawn_blocking(move || {
        let mut phases = Vec::new();
        let mut lap = Lap::new();
        let case = analyze_blocking(&spec, m, &references, &run, &mut |name| phases.push(lap.phase(name)));
        (case, phases)
    })
    .await?)
}

/// Successive wall-time laps, each a [`Phase`] from the end of the one before.
struct Lap(Instant);

impl Lap {
    fn new() -> Self {
        Lap(Instant::now())
    }

    fn phase(&mut self, name: &str) -> Phase {
        let now = Instant::now();
        let ms = (now - std::mem::replace(&mut self.0, now)).as_secs_f64() * 1e3;
        Phase { name: name.to_string(), ms }
    }
}

/// [`analyze`]'s work: `mark` is told as the reference and the check end.
fn analyze_blocking(spec: &CaseSpec, m: CaseMeasurement, references: &References, run: &str, mark: &mut dyn FnMut(&str)) -> CaseReport {
        let info = spec.info().expect("plans only hold known cases");
        let unmeasured = |message: String| CaseReport::unmeasured(spec, &info, CaseStatus::Error, Some(message));
        let Some(bytes) = m.output_bytes() else {
            return unmeasured("the platform sent an output that is not base64 of 4-byte values".into());
        };
        let reference = match (references.get(spec, &m, run), &spec.workload) {
            (Ok(r), _) => r,
            // A user's ONNX file that the reference engine cannot run is measured all the same.
            (Err(e), Some(kernels::Workload::Onnx(_))) => {
                let mut case = CaseReport::measured(spec, &info, m, check(&[], &[], kernels::CheckRule::Elementwise(kernels::Tolerance { abs: 0.0, rel: 0.0 })));
                case.status = CaseStatus::Unchecked;
                case.correctness = None;
                case.message = Some(format!("unchecked: nothing independent checks it: {e}"));
                return case;
            }
            (Err(e), _) => return unmeasured(format!("no reference to check against: {e}")),
        };
        let rule = spec.check_rule().expect("plans only hold known cases");
        let got = spec.decode_output(&bytes);
        let twin = references.vs_f32(spec, &got, &m, run);
        mark("reference");
        let mut verdict = check(&got, &reference.values, rule);
        verdict.reference = reference.source.clone();
        verdict.vs_f32 = twin;
        mark("check");
        let Some(by) = &reference.measured_by else {
            let named = match &spec.workload {
                Some(kernels::Workload::Onnx(o)) => verdict.first_mismatches.first().and_then(|x| o.output_at(x.index)).map(str::to_string),
                _ => None,
            };
            let mut case = CaseReport::measured(spec, &info, m, verdict);
            if let (Some(output), Some(message)) = (named, &mut case.message) {
                *message = format!("output `{output}`: {message}");
            }
            return case;
        };
        // Another platform's output: agreement at best, never a pass.
        let source = reference.source.clone().unwrap_or_default();
        let agreed = verdict.passed;
        let mut case = CaseReport::measured(spec, &info, m, verdict);
        let no_expected = match &spec.workload {
            Some(kernels::Workload::Bench(_)) => {
                "the bench gives no `.reference(...)`, so nothing independent checks it (add `.reference(|| expected, tolerance)` with plain Rust that computes the output, as harness-bench's docs show)"
            }
            _ => "its manifest names no `expected` output file, so nothing independent checks it",
        };
        case.message = Some(if *by == run {
            format!("unchecked: {no_expected}, and the output compared with on other platforms is this one's")
        } else if agreed {
            format!("unchecked: agrees with {source} within tolerance, which is agreement, not correctness: {no_expected}")
        } else {
            format!("disagrees with {source}: {}", case.message.take().unwrap_or_default())
        });
        if *by == run || agreed {
            case.status = CaseStatus::Unchecked;
        }
        case
}

/// The plan's cases and what became of each, with the attempts that did not settle a case.
pub struct CaseBook {
    specs: Vec<CaseSpec>,
    /// The cases settled so far, by id.
    pub(super) settled: HashMap<String, CaseReport>,
    /// The attempts at a case that crashed or timed out and left it to run again, by id.
    pub(super) earlier: HashMap<String, Vec<Attempt>>,
    /// The case the last crash hit, for the run's error list.
    pub(super) last_crashed: Option<String>,
    /// Where the cases run: another engine's dispatches are its own, so its cases carry no count.
    platform: Platform,
}

impl CaseBook {
    /// A book of `specs` run on `platform`, none settled.
    pub fn new(specs: &[CaseSpec], platform: Platform) -> Self {
        CaseBook { specs: specs.to_vec(), settled: HashMap::new(), earlier: HashMap::new(), last_crashed: None, platform }
    }

    /// The spec of a case of this plan not settled yet.
    pub(super) fn open_spec(&self, id: &str) -> Option<CaseSpec> {
        if self.settled.contains_key(id) {
            return None;
        }
        self.specs.iter().find(|s| s.id == id).cloned()
    }

    fn unmeasured(&self, spec: &CaseSpec, status: CaseStatus, message: String) -> CaseReport {
        let info = spec.info().expect("plans only hold known cases");
        CaseReport::unmeasured(spec, &info, status, Some(message))
    }

    /// Settles `spec` with no measurement, as `status` for the reason `message`.
    pub(super) fn settle_unmeasured(&mut self, spec: &CaseSpec, status: CaseStatus, message: String, reporter: &mut dyn Reporter) {
        let case = self.unmeasured(spec, status, message);
        self.settle(case, reporter);
    }

    /// Records `case` as settled, with its earlier attempts, and tells the reporter.
    pub(super) fn settle(&mut self, mut case: CaseReport, reporter: &mut dyn Reporter) {
        case.earlier_attempts = self.earlier.remove(&case.id).unwrap_or_default();
        // The dispatch count a case's info carries is harness's program's.
        if self.platform.other_engine() {
            if let Some(t) = &mut case.throughput {
                t.dispatches_per_run = None;
            }
        }
        reporter.event(RunEvent::CaseFinished(&case));
        self.settled.insert(case.id.clone(), case);
    }

    /// The cases not settled yet, in plan order.
    pub(super) fn remaining(&self) -> Vec<CaseSpec> {
        self.specs.iter().filter(|s| !self.settled.contains_key(&s.id)).cloned().collect()
    }

    /// Every case in plan order. One the run ended before is `notRun`, or, if an attempt at it
    /// crashed or timed out, what its last attempt was.
    pub(super) fn finish(mut self) -> Vec<CaseReport> {
        let specs = std::mem::take(&mut self.specs);
        specs
            .iter()
            .map(|s| {
                self.settled.remove(&s.id).unwrap_or_else(|| {
                    let mut earlier = self.earlier.remove(&s.id).unwrap_or_default();
                    let mut case = match earlier.pop() {
                        Some(last) => self.unmeasured(s, last.status, last.message),
                        None => self.unmeasured(s, CaseStatus::NotRun, "the run ended before this case".into()),
                    };
                    case.earlier_attempts = earlier;
                    case
                })
            })
            .collect()
    }
}
