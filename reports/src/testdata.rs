//! Small hand-made reports for unit tests.

use crate::model::*;
use kernels::check::{Tolerance, Verdict};
use kernels::wire::{CaseMeasurement, Sample, StopReason};
use kernels::{CaseSpec, Shape};

/// A measured `add` case called `id` (shape 4, seed 1) with the given sample times, verdict, and
/// GPU timestamps or not.
pub fn case(id: &str, times: &[f64], passed: bool, gpu: bool) -> CaseReport {
    let mut spec = CaseSpec::new("add", Shape(vec![4]), 1);
    spec.id = id.to_string();
    let m = CaseMeasurement {
        case_id: id.to_string(),
        pipeline_ms: 0.1,
        first_dispatch_ms: 1.0,
        warmup: vec![0.25, 0.25],
        warmup_stop: kernels::WarmupStop::Fixed,
        samples: times.iter().map(|&t| Sample { wall_ms: t, gpu_ms: gpu.then_some(t) }).collect(),
        output: String::new(),
        stopped_by: StopReason::SampleCount,
    };
    let verdict = Verdict {
        passed,
        max_abs_err: if passed { 0.0 } else { 0.5 },
        max_rel_err: 0.0,
        nan_count: 0,
        inf_count: 0,
        mismatches: usize::from(!passed),
        first_mismatches: Vec::new(),
        len: 4,
        expected_len: 4,
        tolerance: Tolerance { abs: 1e-6, rel: 1e-6 },
        min_cosine: None,
        cosine_threshold: None,
        reference: None,
    };
    CaseReport::measured(&spec, &spec.info().expect("a catalogue kernel"), m, verdict)
}

/// A report with one completed webgpu run per `(browser, cases)`.
pub fn report_with(runs: Vec<(&str, Vec<CaseReport>)>) -> RunReport {
    RunReport {
        schema_version: SCHEMA_VERSION,
        harness: HarnessInfo { version: "0".into(), git_revision: None },
        host: HostInfo { os: "test".into(), arch: "x".into(), cpu: "cpu".into(), cores: 1 },
        created_at: "2026-01-01T00:00:00Z".into(),
        settings: Settings {
            suite: "quick".into(),
            filters: vec![],
            samples: 3,
            warmup: kernels::WarmupPolicy::Fixed(2),
            target_ci_pct: None,
            browsers: vec![],
            platforms: vec!["webgpu".into()],
            cases: vec![],
            command: vec![],
            seed: 1,
            max_time_s: 10.0,
            case_timeout_s: 60.0,
            headless: true,
        },
        runs: runs
            .into_iter()
            .map(|(browser, cases)| PlatformRun {
                browser: browser.into(),
                platform: "webgpu".into(),
                host: HostInfo { os: "test".into(), arch: "x".into(), cpu: "cpu".into(), cores: 1 },
                browser_info: None,
                driver: None,
                adapter: None,
                status: RunStatus::Completed,
                failure: None,
                errors: vec![],
                phases: Phases::default(),
                cases,
                diagnostics: vec![],
            })
            .collect(),
        baseline: None,
    }
}
