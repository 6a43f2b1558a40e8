//! Small hand-made reports for unit tests.

use crate::model::*;
use kernels::check::{Tolerance, Verdict};
use kernels::sampling::{Sample, StopReason};
use kernels::wire::CaseMeasurement;
use kernels::model::decoder::{DecoderCase, LlamaConfig, Phase};
use kernels::model::encoder::{BertConfig, EncoderCase};
use kernels::user::{BufferInit, ElemType, UserBuffer, UserKernel};
use kernels::{CaseSpec, Shape, Workload};
use serde_json::Value;
use std::path::Path;

/// A measured `add` case called `id` (shape 4, seed 1) with the given sample times, verdict, and
/// GPU timestamps or not.
pub fn case(id: &str, times: &[f64], passed: bool, gpu: bool) -> CaseReport {
    let mut spec = CaseSpec::new("add", Shape(vec![4]), 1);
    spec.id = id.to_string();
    measure(&spec, times, verdict(passed), gpu)
}

/// A measured TinyLlama-shaped (but tiny) decoder prefill case of 16 tokens called `id`, timed by
/// GPU timestamps and checked by cosine similarity: a model row with a tokens/s throughput.
pub fn model_case(id: &str, times: &[f64]) -> CaseReport {
    let mut spec = decoder_spec(Phase::Prefill);
    spec.id = id.to_string();
    let v = Verdict { min_cosine: Some(0.99987), cosine_threshold: Some(kernels::model::MIN_COSINE), ..verdict(true) };
    measure(&spec, times, v, true)
}

/// [`model_case`] with its weights in f16: 0.91% of a row's RMS from its f32 model.
pub fn f16_model_case(id: &str, times: &[f64]) -> CaseReport {
    let mut c = model_case(id, times);
    let drift = kernels::check::Drift { dtype: kernels::Dtype::F16, min_cosine: 0.999_876_5, worst_row: Some(3), max_abs_err: 0.031, max_rms_err: 0.0091 };
    c.correctness.as_mut().expect("a model case is checked").vs_f32 = Some(drift);
    c
}

/// A one-layer decoder case (hidden 8, 2 heads, 1 KV head, FFN 16) over 16 tokens.
pub fn decoder_spec(phase: Phase) -> CaseSpec {
    let config = LlamaConfig { hidden: 8, heads: 2, kv_heads: 1, ffn: 16, layers: 1 };
    let d = DecoderCase { model: "tinyllama".into(), config, phase, ctx: 16, dtype: Default::default(), weights: None };
    CaseSpec::of_workload("tinyllama.prefill", Shape(vec![1, 16]), 1, Workload::Decoder(d))
}

/// A one-layer encoder case (hidden 8, 2 heads) embedding two sentences padded to 4 tokens.
pub fn encoder_spec() -> CaseSpec {
    let config = BertConfig {
        hidden_size: 8,
        num_attention_heads: 2,
        num_hidden_layers: 1,
        intermediate_size: 16,
        vocab_size: 32,
        max_position_embeddings: 8,
        type_vocab_size: 1,
        layer_norm_eps: 1e-12,
    };
    let e = EncoderCase { model: "minilm".into(), config, weights: "minilm".into(), prefix: String::new(), batch: 2, seq: 4, ids: vec![1, 2, 3, 0, 4, 5, 0, 0], lens: vec![3, 2], dtype: Default::default(), op: None, texts: Vec::new() };
    CaseSpec::of_workload("minilm", Shape(vec![2, 4]), 1, Workload::Encoder(e))
}

/// A user kernel doubling 4 random floats into an output buffer.
pub fn user_spec() -> CaseSpec {
    let buffer = |name: &str, binding, init, output| UserBuffer { name: name.into(), binding, ty: ElemType::F32, len: 4, uniform: false, init, output };
    let u = UserKernel {
        name: "double".into(),
        manifest: "double.toml".into(),
        wgsl: "@compute @workgroup_size(4) fn main() {}".into(),
        entry: "main".into(),
        workgroup_size: [4, 1, 1],
        workgroups: [1, 1, 1],
        buffers: vec![buffer("x", 0, BufferInit::Random { lo: -1.0, hi: 1.0 }, false), buffer("y", 1, BufferInit::Zeros, true)],
        flops: Some(4.0),
        bytes: None,
        tolerance: kernels::user::DEFAULT_TOLERANCE,
        expected: None,
    };
    CaseSpec::of_workload("double", Shape(vec![1, 1, 1]), 1, Workload::User(u))
}

/// A check of 4 elements that passed exactly, or failed by 0.5 on one element.
pub fn verdict(passed: bool) -> Verdict {
    Verdict {
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
        worst_row: None,
        reference: None,
        vs_f32: None,
    }
}

/// `spec` measured with the given sample times (wall, and GPU too when `gpu`) and `verdict`.
fn measure(spec: &CaseSpec, times: &[f64], verdict: Verdict, gpu: bool) -> CaseReport {
    CaseReport::measured(spec, &spec.info().expect("a known case"), measurement(spec, times, gpu), verdict)
}

/// What a page sends of `spec` with the given sample times (wall, and GPU too when `gpu`).
pub fn measurement(spec: &CaseSpec, times: &[f64], gpu: bool) -> CaseMeasurement {
    CaseMeasurement {
        case_id: spec.id.clone(),
        pipeline_ms: 0.1,
        pipelines_reused: 0,
        first_dispatch_ms: 1.0,
        warmup: vec![0.25, 0.25],
        warmup_stop: kernels::WarmupStop::Fixed,
        samples: times.iter().map(|&t| Sample::new(t, gpu.then_some(t))).collect(),
        output: String::new(),
        stopped_by: StopReason::SampleCount,
        sampling: kernels::SamplingMode::Steady,
        batch: 4,
        in_flight: 2,
        nudges: 0,
        timed_span_ms: (0.0, 0.0),
        sent_ms: 0.0,
        timer_resolution_ms: None,
        engine_profile: None,
        placement: Vec::new(),
        cold: None,
        split: None,
        phases: Vec::new(),
        dispatches: None,
        features: Vec::new(),
        gpu_timer: None,
    }
}

/// [`encoder_spec`] from text, `calls` calls each of `phases` (`(name, ms)`), passed.
pub fn text_case(phases: &[(&str, f64)], calls: usize) -> CaseReport {
    let spec = encoder_spec().from_text();
    let total: f64 = phases.iter().map(|p| p.1).sum();
    let call: Vec<kernels::wire::Phase> = phases.iter().map(|&(name, ms)| kernels::wire::Phase { name: name.into(), ms }).collect();
    let m = CaseMeasurement { split: Some(vec![call; calls]), ..measurement(&spec, &vec![total; calls], false) };
    CaseReport::measured(&spec, &spec.info().expect("a known case"), m, verdict(true))
}

/// One fresh page of a cold start of [`encoder_spec`], precompiled or not, whose phases end at
/// the page's clock readings `marks`; its check `passed` or not.
pub fn cold_page(precompile: bool, marks: &[(&str, f64)], passed: bool) -> CaseReport {
    let spec = encoder_spec().cold_start(kernels::ColdStart { samples: 2, precompile, parallel: false });
    let cold = kernels::wire::ColdMeasurement::of_marks(marks, 1.0e12);
    let m = cold.into_measurement(spec.id.clone(), String::new());
    CaseReport::measured(&spec, &spec.info().expect("a known case"), m, verdict(passed))
}

/// A report with one completed webgpu run per `(browser, cases)`.
pub fn report_with(runs: Vec<(&str, Vec<CaseReport>)>) -> RunReport {
    RunReport {
        schema_version: SCHEMA_VERSION,
        harness: HarnessInfo { version: "0".into(), git_revision: None, build_revision: None },
        host: HostInfo { os: "test".into(), arch: "x".into(), cpu: "cpu".into(), cores: 1, gpus: Vec::new() },
        created_at: "2026-01-01T00:00:00Z".into(),
        settings: Settings {
            suite: "quick".into(),
            filters: vec![],
            samples: 3,
            warmup: kernels::WarmupPolicy::Fixed(2),
            sampling: kernels::SamplingMode::Steady,
            target_ci_pct: None,
            nudge: kernels::Nudge::Auto,
            browsers: vec![],
            platforms: vec!["webgpu".into()],
            cases: vec![],
            command: vec![],
            seed: 1,
            max_time_s: 10.0,
            case_timeout_s: 60.0,
            cpu_adapter: None,
            gpu_kernels: false,
            retries: 1,
            webnn_device: None,
            no_tensor_cores: false,
            profile: false,
            gpu_timer: Default::default(),
            gpu_timer_cost: false,
            headless: true,
            weights: None,
            gguf: None,
            browser_args: vec![],
            browser_prefs: vec![],
        },
        runs: runs
            .into_iter()
            .map(|(browser, cases)| PlatformRun {
                browser: browser.into(),
                platform: "webgpu".into(),
                host: HostInfo { os: "test".into(), arch: "x".into(), cpu: "cpu".into(), cores: 1, gpus: Vec::new() },
                browser_info: None,
                driver: None,
                adapter: None,
                status: RunStatus::Completed,
                failure: None,
                errors: vec![],
                phases: Phases::default(),
                completion_latency: None,
                probe: None,
                roofline: None,
                cases,
                diagnostics: vec![],
                memory: vec![],
                unavailable: None,
            })
            .collect(),
        baseline: None,
    }
}

/// The committed H200 evidence of a torch-exported MiniLM (f32 and int8, `harness run --onnx`) on
/// ort-webgpu, ort-jsep and ort-wasm: Chrome's runs, then Firefox's, as `harness report merge`
/// puts them together.
pub fn h200_onnx() -> RunReport {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/hardware/h200-onnx");
    let mut report = crate::read_results(&dir.join("chrome-results.json")).expect("chrome's results read");
    report.runs.extend(crate::read_results(&dir.join("firefox-results.json")).expect("firefox's results read").runs);
    report
}

/// A measured passing case of `kernel` (id `kernel/tag`) with `flops` and `bytes` at a 1 ms GPU
/// median, so its GFLOP/s is flops / 1e6 and its GB/s bytes / 1e6.
pub fn costed(kernel: &str, tag: u32, flops: f64, bytes: f64) -> CaseReport {
    let mut c = case(&format!("{kernel}/{tag}"), &[1.0, 1.0, 1.0], true, true);
    c.kernel = kernel.into();
    c.flops = flops;
    c.bytes = bytes;
    c.gflops = Some(flops / 1e6);
    c.gbps = Some(bytes / 1e6);
    c
}

/// A chrome run whose roofline probes come first: a copy that reached 1000 GB/s at its largest
/// shape (`stream_copy/1`) and 2000 GB/s at a small one that stayed in cache (`stream_copy/2`),
/// and FMA chains at 10 000 GFLOP/s (`fma_chain/1`); then `cases`. The roofline is not applied.
pub fn probed_report(cases: Vec<CaseReport>) -> RunReport {
    let mut cached = costed("stream_copy", 2, 0.0, 1e8);
    cached.gbps = Some(2000.0);
    let mut all = vec![cached, costed("stream_copy", 1, 0.0, 1e9), costed("fma_chain", 1, 1e10, 1e3)];
    all.extend(cases);
    report_with(vec![("chrome", all)])
}

/// The clocks of a case that ran at `median` MHz throughout, idle between dispatches, from just
/// enough probe samples to be judged ([`crate::probe::MIN_FLAG_SAMPLES`]).
pub fn clocked(median: f64) -> ClockStats {
    ClockStats {
        samples: crate::probe::MIN_FLAG_SAMPLES,
        sm_mhz_min: Some(median),
        sm_mhz_median: Some(median),
        sm_mhz_max: Some(median),
        mem_mhz_median: Some(2619.0),
        power_w_median: Some(310.5),
        power_w_max: Some(402.0),
        temp_c_max: Some(61.0),
        throttle_reasons: vec!["gpu_idle".into()],
    }
}

/// Asserts that `json` validates against the results schema and that each of `broken` (a JSON
/// pointer and a value put there) does not: the schema checks those fields, not merely allows them.
pub fn assert_schema_checks(json: &serde_json::Value, broken: &[(&str, serde_json::Value)]) {
    let schema: serde_json::Value = serde_json::from_str(include_str!("../schema/results.schema.json")).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    assert!(validator.is_valid(json), "{:?}", validator.iter_errors(json).map(|e| e.to_string()).collect::<Vec<_>>());
    for (pointer, bad) in broken {
        let mut broken = json.clone();
        *broken.pointer_mut(pointer).unwrap() = bad.clone();
        assert!(!validator.is_valid(&broken), "{pointer} must be checked");
    }
}

/// Violations of `reports/schema/results.schema.json` by `results`.
pub(crate) fn schema_errors(results: &Value) -> Vec<String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("schema/results.schema.json");
    let schema: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let validator = jsonschema::validator_for(&schema).expect("the schema compiles");
    validator.iter_errors(results).map(|e| format!("{e} at {}", e.instance_path())).collect()
}
