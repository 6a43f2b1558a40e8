//! `--platform webnn`: runs a case as a WebNN graph (`static/webnn.js` builds and dispatches it
//! with the browser's `navigator.ml`) under the same sampling policy as every platform: batches of
//! dispatches, each read back, on the wall clock (WebNN has no GPU timer).

use kernels::sampling::{sample, ClockGate, Sample, Timed};
use kernels::wire::CaseMeasurement;
use kernels::{CaseSpec, RunPlan};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;

#[wasm_bindgen]
extern "C" {
    /// Builds the graph (JSON) over the case's inputs and uploads them; resolves to the build
    /// time, ms.
    #[wasm_bindgen(catch, js_namespace = harnessWebnn, js_name = prepare)]
    fn prepare(graph: &str, inputs: js_sys::Array) -> Result<js_sys::Promise, JsValue>;
    /// Dispatches the graph `batch` times and reads the output back; resolves to
    /// `[submittedMs, doneMs]`.
    #[wasm_bindgen(catch, js_namespace = harnessWebnn, js_name = submit)]
    fn submit(batch: u32) -> Result<js_sys::Promise, JsValue>;
    /// The last output as a `Float32Array`.
    #[wasm_bindgen(catch, js_namespace = harnessWebnn, js_name = output)]
    fn output() -> Result<JsValue, JsValue>;
    /// Frees the case's tensors and graph.
    #[wasm_bindgen(js_namespace = harnessWebnn, js_name = dispose)]
    fn dispose();
}

/// Runs `case` on the page's WebNN context (created when the page described it) by the plan's
/// sampling policy and reads its output back; the graph's build time stands where a WebGPU
/// case's pipeline time does.
pub async fn run_case(plan: &RunPlan, case: &CaseSpec, clock: &mut impl ClockGate, on_sample: impl FnMut(u32)) -> Result<CaseMeasurement, String> {
    let kernel = case.kernel().ok_or_else(|| format!("unknown kernel `{}`", case.kernel))?;
    let graph = kernels::webnn::graph(&case.kernel, &case.shape).ok_or_else(|| kernels::webnn::unsupported_reason(&case.kernel))?;
    let inputs: js_sys::Array = kernel.inputs(&case.shape, case.seed).iter().map(|v| JsValue::from(js_sys::Float32Array::from(v.as_slice()))).collect();
    let graph = serde_json::to_string(&graph).map_err(|e| e.to_string())?;
    let result = async {
        let build_ms = JsFuture::from(prepare(&graph, inputs)?).await?.as_f64().unwrap_or(0.0);
        let sampled = sample(&plan.sampling, &mut Dispatches, clock, on_sample).await?;
        let values = js_sys::Float32Array::new(&output()?).to_vec();
        Ok::<_, JsValue>((build_ms, sampled, values))
    }
    .await;
    dispose();
    let (build_ms, sampled, values) = result.map_err(crate::engine::describe)?;
    Ok(CaseMeasurement::of_sampled(case.id.clone(), build_ms, sampled, CaseMeasurement::encode_output(&values)))
}

/// The prepared graph's dispatches, timed from the first dispatch to the read-back.
struct Dispatches;

impl Timed for Dispatches {
    type Error = JsValue;

    async fn run(&mut self, batch: u32) -> Result<Sample, JsValue> {
        let times = js_sys::Float64Array::new(&JsFuture::from(submit(batch)?).await?).to_vec();
        let [submitted_ms, done_ms] = times[..] else { return Err("harnessWebnn.submit resolved to something else than 2 times".into()) };
        Ok(Sample::new((done_ms - submitted_ms) / batch as f64, None))
    }
}
