//! The bench target in the page: harness's page loads the target's WASM in place of its own and
//! calls [`harness_bench_run`], which measures the plan's cases and POSTs each as it is done,
//! exactly as the catalogue's page does.

use crate::runner::run_case;
use crate::Benches;
use kernels::api::{Api, ServerClock};
use kernels::gpu::Gpu;
use kernels::sampling::now_ms;
use kernels::wire::Progress;
use kernels::{Platform, RunPlan};
use wasm_bindgen::prelude::*;

unsafe extern "Rust" {
    /// Defined by [`crate::main!`] in the bench target.
    safe fn __harness_bench_registered() -> Benches;
}

/// Runs the plan of the run `token` with the bench target's benches. `progress` is called with
/// each [`Progress`] event as JSON. A panicking bench aborts the WASM instance; its message is
/// left in `globalThis.harnessPanic` for the page to report, and harness goes on in a fresh
/// page.
#[wasm_bindgen]
pub async fn harness_bench_run(token: String, progress: js_sys::Function) -> Result<(), JsValue> {
    std::panic::set_hook(Box::new(|info| {
        let _ = js_sys::Reflect::set(&js_sys::global(), &JsValue::from_str("harnessPanic"), &JsValue::from_str(&info.to_string()));
    }));
    let benches = __harness_bench_registered();
    let api = Api::new(token);
    let plan: RunPlan = api.get("plan").await?;
    let js_error = |e: kernels::gpu::GpuError| JsValue::from(js_sys::Error::new(&e.to_string()));
    let mut gpu = match plan.platform {
        Platform::Webgpu => {
            let mut gpu = Gpu::new().await.map_err(js_error)?;
            let latency = gpu.measure_latency(plan.sampling.nudge).await.map_err(js_error)?;
            api.post("latency", &latency).await?;
            Some(gpu)
        }
        _ => None,
    };
    let emit = |event: Progress| {
        if let Ok(json) = serde_json::to_string(&event) {
            let _ = progress.call1(&JsValue::NULL, &JsValue::from_str(&json));
        }
    };
    for case in &plan.cases {
        emit(Progress::CaseStarted { case_id: case.id.clone(), at_ms: now_ms() });
        let on_sample = |done| emit(Progress::SampleDone { case_id: case.id.clone(), done });
        match run_case(&benches, gpu.as_mut(), &plan, case, &mut ServerClock(&api), on_sample).await {
            Ok(mut measurement) => {
                measurement.sent_ms = now_ms();
                api.post("result", &measurement).await?
            }
            Err(error) => api.post("error", &error).await?,
        }
    }
    Ok(())
}
