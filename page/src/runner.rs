//! Runs the plan's cases one after another, on WebGPU, on the CPU in WASM, with TensorFlow.js,
//! with onnxruntime-web, or with WebNN.

use kernels::api::{Api, PageSink, ServerClock};
use kernels::case_loop::{open_gpu, run_cases, Failure};
use crate::engine::Completion;
use crate::ort::Ort;
use crate::tfjs::Tfjs;
use kernels::gpu::Gpu;
use kernels::sampling::{now_ms, sample, CaseClock, Sample, Timed};
use kernels::wire::{CaseMeasurement, ColdMeasurement, PageError};
use kernels::{CaseSpec, Fault, Platform, RunPlan};
use wasm_bindgen::prelude::*;
use std::collections::HashMap;
use wasm_bindgen_futures::JsFuture;

/// Runs the plan of the run `token`. `progress` is called with each [`kernels::wire::Progress`]
/// event as JSON.
/// Resolves when every case was measured and POSTed; rejects on a failure that stops the page.
#[wasm_bindgen]
pub async fn run(token: String, progress: js_sys::Function) -> Result<(), JsValue> {
    let api = Api::new(token);
    let mut plan: RunPlan = api.get("plan").await?;
    let mut sink = PageSink { api: &api, progress: &progress };
    // A cold start's page runs its one case the way an app would, nothing measured before it.
    if plan.cases.iter().any(|c| c.cold.is_some()) {
        return run_cases(&plan.cases, &mut sink, async |case: &CaseSpec, _: &dyn Fn(u32)| run_cold(&plan, case, &api).await).await;
    }
    let gpu = match plan.platform {
        // Measured before the cases: the latency is a fact about the browser, and it sizes the batches.
        Platform::Webgpu | Platform::Tfjs | Platform::OrtWebgpu | Platform::OrtJsep | Platform::Transformers => {
            open_gpu(&mut sink, plan.sampling.nudge, |gpu| adapt_to_page(gpu, &mut plan)).await?
        }
        _ => None,
    };
    // TensorFlow.js, onnxruntime-web and transformers.js have devices of their own: harness's
    // is only kept for the latency it measured.
    let completion = gpu.as_ref().map(|gpu: &Gpu| Completion { latency_ms: gpu.latency_ms, nudge: gpu.nudge, timestamps: gpu.timestamps });
    let (mut gpu, tfjs, ort) = match (plan.platform, plan.platform.ort_ep(), gpu, completion) {
        (Platform::Tfjs, _, Some(_), Some(c)) => (None, Some(Tfjs::load(c).await?), None),
        // onnxruntime-web's CPU and WebNN providers: no WebGPU device to wait for, their runs end when
        // their promises do.
        (Platform::OrtWasm | Platform::OrtWebnn, Some(ep), ..) => (None, None, Some(Ort::load(ep, Completion::UNMEASURED).await?)),
        (_, Some(ep), Some(_), Some(c)) => (None, None, Some(Ort::load(ep, c).await?)),
        (Platform::Transformers, ..) => (None, None, None),
        (_, _, gpu, _) => (gpu, None, None),
    };
    let mut weights = Weights::default();
    let (plan, api) = (&plan, &api);
    run_cases(&plan.cases, &mut sink, async |case: &CaseSpec, on_sample: &dyn Fn(u32)| {
        let failed = |message| Failure::Case(PageError::case(&case.id, message));
        if let Some(tfjs) = &tfjs {
            tfjs.run_case(plan, case, &mut ServerClock(api), on_sample).await.map_err(failed)
        } else if let Some(ort) = &ort {
            let w = weights.of(case, api, &mut CaseClock::start()).await?;
            ort.run_case(plan, case, w, api, &mut ServerClock(api), on_sample).await.map_err(failed)
        } else if plan.platform == Platform::Transformers {
            let w = weights.of(case, api, &mut CaseClock::start()).await?;
            crate::text::run_transformers(plan, case, w, api, completion, &mut ServerClock(api), on_sample).await.map_err(failed)
        } else if plan.platform == Platform::Webnn {
            crate::webnn::run_case(plan, case, &mut ServerClock(api), on_sample).await.map_err(failed)
        } else {
            run_case(gpu.as_mut(), plan, case, api, &mut weights, on_sample).await
        }
    })
    .await
}

/// Fits `gpu` and `plan` to each other ([`Gpu::adapt`]) by what the page reported of the adapter
/// (`main.js` keeps it in `harnessAdapter`).
fn adapt_to_page(gpu: &mut Gpu, plan: &mut RunPlan) {
    let reported = js_sys::Reflect::get(&js_sys::global(), &"harnessAdapter".into()).ok().and_then(|v| js_sys::JSON::stringify(&v).ok()).and_then(|s| s.as_string());
    let adapter = reported.and_then(|json| serde_json::from_str(&json).ok()).unwrap_or_else(|| gpu.report());
    gpu.adapt(plan, &adapter);
}

/// A cold start of `case`: from the page's navigation to its first output read back, in phases,
/// on harness's own WebGPU or onnxruntime-web's.
async fn run_cold(plan: &RunPlan, case: &CaseSpec, api: &Api) -> Result<CaseMeasurement, Failed> {
    let mut marks = Vec::new();
    let mut weights = Weights::default();
    let values = match plan.platform.ort_ep() {
        Some(ep) => {
            // As an app starts: no latency measured first, nothing nudged.
            let ort = Ort::load(ep, Completion::UNMEASURED).await.map_err(Failure::Stop)?;
            marks.push(("engine", now_ms()));
            // Phase `fetch` ends in run_cold: a user's own file is fetched there.
            let w = weights.of(case, api, &mut CaseClock::start()).await?;
            let values = ort.run_cold(case, w, api, &mut marks).await.map_err(|e| Failure::Case(PageError::case(&case.id, e)))?;
            kernels::wire::f32s_to_le_bytes(&values)
        }
        None => {
            let gpu_error = |e: kernels::gpu::GpuError| Failure::Case(e.for_case(&case.id));
            let mut gpu = Gpu::new().await.map_err(gpu_error)?;
            adapt_to_page(&mut gpu, &mut plan.clone());
            marks.push(("device", now_ms()));
            let w = weights.of(case, api, &mut CaseClock::start()).await?;
            marks.push(("fetch", now_ms()));
            gpu.run_cold(case, w, &mut marks).await.map_err(gpu_error)?
        }
    };
    let time_origin = js_sys::Reflect::get(&js_sys::global(), &"performance".into())
        .and_then(|p| js_sys::Reflect::get(&p, &"timeOrigin".into()))
        .ok()
        .and_then(|t| t.as_f64())
        .unwrap_or_default();
    let cold = ColdMeasurement::of_marks(&marks, time_origin);
    Ok(cold.into_measurement(case.id.clone(), CaseMeasurement::encode_bytes(&values)))
}

/// The CPU baseline: the kernel's f32 Rust code, timed with `performance.now()`.
struct CpuKernel<'a> {
    kernel: &'a dyn kernels::Kernel,
    shape: &'a kernels::Shape,
    inputs: Vec<Vec<f32>>,
    output: Vec<f32>,
}

impl Timed for CpuKernel<'_> {
    type Error = std::convert::Infallible;

    async fn run(&mut self, batch: u32) -> Result<Sample, Self::Error> {
        let t0 = now_ms();
        for _ in 0..batch {
            self.output = self.kernel.cpu(self.shape, &self.inputs);
        }
        Ok(Sample::new((now_ms() - t0) / batch as f64, None))
    }
}

/// Why a case ended unmeasured: its error (what the GPU said, or unsupported where a feature is
/// missing), or an exception that stops the page.
type Failed = Failure<JsValue>;

/// Model weights fetched from the harness, by key, kept for the cases after the first.
#[derive(Default)]
struct Weights(HashMap<String, kernels::model::weights::Weights>);

impl Weights {
    /// The weights `case` needs, fetched on first use: then the `weights` phase of `phases`.
    async fn of(&mut self, case: &CaseSpec, api: &Api, phases: &mut CaseClock) -> Result<Option<&kernels::model::weights::Weights>, Failed> {
        let Some(key) = case.workload.as_ref().and_then(|w| w.weights_key()) else { return Ok(None) };
        if !self.0.contains_key(key) {
            let failed = |message| Failure::Case(PageError::case(&case.id, message));
            let bytes = api.get_bytes(&format!("weights?name={key}")).await.map_err(|e| failed(format!("fetching the weights `{key}`: {e:?}")))?;
            let parsed = kernels::model::weights::Weights::parse(bytes).map_err(|e| failed(e.to_string()))?;
            self.0.insert(key.to_string(), parsed);
            phases.mark("weights");
        }
        Ok(self.0.get(key))
    }
}

async fn run_case(mut gpu: Option<&mut Gpu>, plan: &RunPlan, case: &CaseSpec, api: &Api, weights: &mut Weights, on_sample: &dyn Fn(u32)) -> Result<CaseMeasurement, Failed> {
    let gpu_error = |e: kernels::gpu::GpuError| Failure::Case(e.for_case(&case.id));
    let mut phases = CaseClock::start();
    if let (Some(gpu), Some(_)) = (gpu.as_deref_mut(), &case.workload) {
        let weights = weights.of(case, api, &mut phases).await?;
        if case.from_text {
            return crate::text::run_harness(gpu, plan, case, weights, api, &mut ServerClock(api), on_sample).await.map_err(gpu_error);
        }
        return gpu.run_case(plan, case, weights, &mut ServerClock(api), &mut phases, on_sample).await.map_err(gpu_error);
    }
    let kernel = case.kernel().ok_or_else(|| {
        let message = match case.workload {
            Some(_) => format!("{}: models and user kernels run on webgpu and native only", case.kernel),
            None => format!("unknown kernel `{}` (page and harness differ in version)", case.kernel),
        };
        Failure::Case(PageError::case(&case.id, message))
    })?;
    match kernel.fault() {
        Some(Fault::Hang) => {
            JsFuture::from(js_sys::Promise::new(&mut |_, _| {})).await.map_err(Failure::Stop)?;
        }
        Some(Fault::Throw) => {
            return Err(Failure::Stop(js_sys::Error::new(&format!("{}: deliberate exception from the page", case.kernel)).into()));
        }
        // The GPU destroys its own device in `run_case`, as a real loss would come mid-case.
        Some(Fault::LoseDevice) | None => {}
    }
    let Some(gpu) = gpu else {
        let mut cpu = CpuKernel { kernel: &*kernel, shape: &case.shape, inputs: kernel.inputs(&case.shape, case.seed), output: Vec::new() };
        let Ok(sampled) = sample(&plan.sampling, &mut cpu, &mut kernels::sampling::NoClock, on_sample).await;
        return Ok(CaseMeasurement::of_sampled(case.id.clone(), 0.0, sampled, CaseMeasurement::encode_output(&cpu.output)));
    };
    gpu.run_case(plan, case, None, &mut ServerClock(api), &mut phases, on_sample).await.map_err(gpu_error)
}
