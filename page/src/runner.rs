//! Runs the plan's cases one after another, on WebGPU or on the CPU in WASM.

use crate::api::Api;
use kernels::gpu::Gpu;
use kernels::sampling::{now_ms, sample, Timed};
use kernels::wire::{CaseMeasurement, PageError, Progress, Sample};
use kernels::{CaseSpec, Fault, Platform, RunPlan};
use wasm_bindgen::prelude::*;
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
    for case in &plan.cases {
        emit(Progress::CaseStarted { case_id: case.id.clone() });
        match run_case(gpu.as_ref(), &plan, case, &emit).await {
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

async fn run_case(
    gpu: Option<&Gpu>,
    plan: &RunPlan,
    case: &CaseSpec,
    emit: &impl Fn(Progress),
) -> Result<CaseMeasurement, CaseError> {
    let kernel = case
        .kernel()
        .ok_or_else(|| CaseError::Gpu(format!("unknown kernel `{}` (page and harness differ in version)", case.kernel)))?;
    match kernel.fault() {
        Some(Fault::Hang) => {
            JsFuture::from(js_sys::Promise::new(&mut |_, _| {})).await.map_err(CaseError::Js)?;
        }
        Some(Fault::Throw) => {
            return Err(CaseError::Js(js_sys::Error::new(&format!("{}: deliberate exception from the page", case.kernel)).into()));
        }
        None => {}
    }
    let on_sample = |done| emit(Progress::SampleDone { case_id: case.id.clone(), done });
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
    gpu.run_case(plan, case, on_sample).await.map_err(|e| CaseError::Gpu(e.to_string()))
}
