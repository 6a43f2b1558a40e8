//! The bench target in the page: harness's page loads the target's WASM in place of its own and
//! calls [`harness_bench_run`], which measures the plan's cases and POSTs each as it is done,
//! exactly as the catalogue's page does.

use crate::runner::run_case;
use crate::Benches;
use kernels::api::{Api, PageSink, ServerClock};
use kernels::case_loop::{open_gpu, run_cases};
use kernels::{CaseSpec, Platform, RunPlan};
use wasm_bindgen::prelude::*;

unsafe extern "Rust" {
    /// Defined by [`crate::main!`] in the bench target.
    safe fn __harness_bench_registered() -> Benches;
}

/// Runs the plan of the run `token` with the bench target's benches. `progress` is called with
/// each [`kernels::wire::Progress`] event as JSON. A panicking bench aborts the WASM instance; its message is
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
    let mut sink = PageSink { api: &api, progress: &progress };
    let mut gpu = match plan.platform {
        Platform::Webgpu => open_gpu(&mut sink, plan.sampling.nudge, |_| {}).await?,
        _ => None,
    };
    let (benches, plan, api) = (&benches, &plan, &api);
    run_cases(&plan.cases, &mut sink, async |case: &CaseSpec, on_sample: &dyn Fn(u32)| Ok(run_case(benches, gpu.as_mut(), plan, case, &mut ServerClock(api), on_sample).await?)).await
}
