//! `--platform tfjs`: runs a case with TensorFlow.js's WebGPU backend (`static/tfjs.js` loads it
//! and runs its ops) under the same sampling policy as every platform ([`Engine`]): calibrated
//! batches of ops with batches kept in flight, GPU busy and span times from the page's GPU timer
//! (`static/gpu-timer.js`) where the adapter has `timestamp-query`, the wall clock always.

use crate::engine::{describe, Completion, Engine};
use kernels::sampling::ClockGate;
use kernels::wire::CaseMeasurement;
use kernels::{CaseSpec, RunPlan};
use wasm_bindgen::prelude::*;

#[wasm_bindgen]
extern "C" {
    /// Loads TensorFlow.js from the harness server and selects its WebGPU backend.
    #[wasm_bindgen(catch, js_namespace = harnessTfjs, js_name = load)]
    async fn load() -> Result<JsValue, JsValue>;
    /// Makes the case's input tensors (freeing the last case's) and the op that runs it.
    #[wasm_bindgen(catch, js_namespace = harnessTfjs, js_name = prepare)]
    fn prepare(op: &str, shapes: &str, inputs: js_sys::Array) -> Result<(), JsValue>;
    /// Runs the op `batch` times and submits the work, with `timed` in a window of the page's GPU
    /// timer; resolves to `[submittedMs, doneMs, ...the timer's packed times]` once the GPU
    /// finished it, nudging the device meanwhile with `nudge`.
    #[wasm_bindgen(catch, js_namespace = harnessTfjs, js_name = submit)]
    fn submit(batch: u32, timed: bool, nudge: bool) -> Result<js_sys::Promise, JsValue>;
    /// The last op's output as a `Float32Array`.
    #[wasm_bindgen(catch, js_namespace = harnessTfjs, js_name = output)]
    async fn output() -> Result<JsValue, JsValue>;
    /// Frees the case's tensors.
    #[wasm_bindgen(js_namespace = harnessTfjs, js_name = dispose)]
    fn dispose();
}

/// TensorFlow.js, loaded and on its WebGPU backend.
pub struct Tfjs {
    /// How this browser reports completion (measured by the runner): it sizes the batches and
    /// says whether they are nudged, like on every platform.
    completion: Completion,
}

impl Tfjs {
    /// Loads TensorFlow.js.
    pub async fn load(completion: Completion) -> Result<Tfjs, JsValue> {
        load().await?;
        Ok(Tfjs { completion })
    }

    /// Runs `case` by the plan's sampling policy and reads its output back.
    pub async fn run_case(&self, plan: &RunPlan, case: &CaseSpec, clock: &mut impl ClockGate, on_sample: impl FnMut(u32)) -> Result<CaseMeasurement, String> {
        let kernel = case.kernel().ok_or_else(|| format!("unknown kernel `{}`", case.kernel))?;
        let call = kernels::tfjs::call(&case.kernel, &case.shape).ok_or_else(|| format!("TensorFlow.js has no op for `{}`", case.kernel))?;
        let inputs: js_sys::Array = kernel.inputs(&case.shape, case.seed).iter().map(|v| JsValue::from(js_sys::Float32Array::from(v.as_slice()))).collect();
        let shapes = serde_json::to_string(&call.shapes).map_err(|e| e.to_string())?;
        prepare(&call.op, &shapes, inputs).map_err(describe)?;
        let engine = Engine { submit: &submit, completion: self.completion };
        let result = async {
            let sampled = engine.sample(plan, clock, on_sample).await?;
            let values = js_sys::Float32Array::new(&output().await?).to_vec();
            Ok::<_, JsValue>((sampled, values))
        }
        .await;
        dispose();
        let (sampled, values) = result.map_err(describe)?;
        // TensorFlow.js compiles its pipelines in the first run: no pipeline time of its own.
        Ok(CaseMeasurement::of_sampled(case.id.clone(), 0.0, sampled, CaseMeasurement::encode_output(&values)))
    }
}
