//! Runs the plan's cases one after another, on WebGPU or on the CPU in WASM.

use crate::api::Api;
use kernels::gpu::Gpu;
use kernels::sampling::{now_ms, sample, Timed};
use kernels::wire::{CaseMeasurement, PageError, Progress, Sample};
use kernels::{CaseSpec, Fault, Platform, RunPlan};
use wasm_bindgen::prelude::*;
use std::collections::HashMap;
use wasm_bindgen_futures::JsFuture;

/// Runs the plan of the run `token`. `progress` is called with each [`Progress`] event as JSON.
/// Resolves when every case was measured and POSTed; rejects on a failure that stops the page.
#[wasm_bindgen]
pub async fn run(token: String, progress: js_sys::Function) -> Result<(), JsValue> {
    let api = Api::new(token);
    let plan: RunPlan = api.get("plan").await?;
    let gpu = match plan.platform {
        Platform::Webgpu => Some(Gpu::new().await.map_err(|e| JsValue::from(js_sys::Error::new(&e.to_string())))?),
        _ => None,
    };
    let emit = |event: Progress| {
        if let Ok(json) = serde_json::to_string(&event) {
            let _ = progress.call1(&JsValue::NULL, &JsValue::from_str(&json));
        }
    };
    let mut weights = Weights::default();
    for case in &plan.cases {
        emit(Progress::CaseStarted { case_id: case.id.clone() });
        match run_case(gpu.as_ref(), &plan, case, &api, &mut weights, &emit).await {
            Ok(measurement) => api.post("result", &measurement).await?,
            // A case the GPU rejects is reported and the run goes on.
            Err(CaseError::Gpu(message)) => {
                let error = PageError { message, stack: None, case_id: Some(case.id.clone()), fatal: false };
                api.post("error", &error).await?
            }
            Err(CaseError::Js(e)) => return Err(e),
        }
    }
    Ok(())
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

    async fn run(&mut self, _slot: Option<u32>) -> Result<f64, Self::Error> {
        let t0 = now_ms();
        self.output = self.kernel.cpu(self.shape, &self.inputs);
        Ok(now_ms() - t0)
    }
}

enum CaseError {
    Gpu(String),
    Js(JsValue),
}

/// Model weights fetched from the harness, by key, kept for the cases after the first.
#[derive(Default)]
struct Weights(HashMap<String, kernels::model::weights::Weights>);

impl Weights {
    /// The weights `case` needs, fetched on first use.
    async fn of(&mut self, case: &CaseSpec, api: &Api) -> Result<Option<&kernels::model::weights::Weights>, CaseError> {
        let Some(key) = case.workload.as_ref().and_then(|w| w.weights_key()) else { return Ok(None) };
        if !self.0.contains_key(key) {
            let bytes = api.get_bytes(&format!("weights?name={key}")).await.map_err(|e| CaseError::Gpu(format!("fetching the weights `{key}`: {e:?}")))?;
            let parsed = kernels::model::weights::Weights::parse(bytes).map_err(|e| CaseError::Gpu(e.to_string()))?;
            self.0.insert(key.to_string(), parsed);
        }
        Ok(self.0.get(key))
    }
}

async fn run_case(
    gpu: Option<&Gpu>,
    plan: &RunPlan,
    case: &CaseSpec,
    api: &Api,
    weights: &mut Weights,
    emit: &impl Fn(Progress),
) -> Result<CaseMeasurement, CaseError> {
    let on_sample = |done| emit(Progress::SampleDone { case_id: case.id.clone(), done });
    if let (Some(gpu), Some(_)) = (gpu, &case.workload) {
        let weights = weights.of(case, api).await?;
        return gpu.run_case(plan, case, weights, on_sample).await.map_err(|e| CaseError::Gpu(e.to_string()));
    }
    let kernel = case.kernel().ok_or_else(|| match case.workload {
        Some(_) => CaseError::Gpu(format!("{}: models and user kernels run on webgpu and native only", case.kernel)),
        None => CaseError::Gpu(format!("unknown kernel `{}` (page and harness differ in version)", case.kernel)),
    })?;
    match kernel.fault() {
        Some(Fault::Hang) => {
            JsFuture::from(js_sys::Promise::new(&mut |_, _| {})).await.map_err(CaseError::Js)?;
        }
        Some(Fault::Throw) => {
            return Err(CaseError::Js(js_sys::Error::new(&format!("{}: deliberate exception from the page", case.kernel)).into()));
        }
        None => {}
    }
    let Some(gpu) = gpu else {
        let mut cpu = CpuKernel { kernel, shape: &case.shape, inputs: kernel.inputs(&case.shape, case.seed), output: Vec::new() };
        let walls = sample(&plan.sampling, &mut cpu, on_sample).await.map_err(|e| match e {})?;
        return Ok(CaseMeasurement {
            case_id: case.id.clone(),
            pipeline_ms: 0.0,
            first_dispatch_ms: walls.first_ms,
            warmup: walls.warmup,
            warmup_stop: walls.warmup_stop,
            samples: walls.samples.into_iter().map(|wall_ms| Sample { wall_ms, gpu_ms: None }).collect(),
            output: CaseMeasurement::encode_output(&cpu.output),
            stopped_by: walls.stopped_by,
        });
    };
    gpu.run_case(plan, case, None, on_sample).await.map_err(|e| CaseError::Gpu(e.to_string()))
}
