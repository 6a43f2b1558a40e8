//! `--platform ort-webgpu` and `ort-jsep`: runs a model case with onnxruntime-web
//! (`static/ort.js` loads it) on the ONNX file harness writes of the case's graph
//! ([`kernels::model::onnx`]): the same wiring, weights and inputs as harness's own WebGPU run,
//! checked against the same f64 reference. Inputs and outputs stay in GPU buffers while sampling
//! ([`Engine`]'s policy, wall clock); then one more run under ORT's own profiler where it has one
//! (JSEP, with `timestamp-query`), and the outputs are read back once at the end.

use crate::engine::{describe, Engine};
use kernels::model::onnx::{self, FeedData};
use kernels::model::weights::Weights;
use kernels::sampling::{now_ms, ClockGate};
use kernels::wire::CaseMeasurement;
use kernels::{CaseSpec, RunPlan};
use wasm_bindgen::prelude::*;

#[wasm_bindgen]
extern "C" {
    /// Loads onnxruntime-web's bundle of execution provider `ep` from the harness server.
    #[wasm_bindgen(catch, js_namespace = harnessOrt, js_name = load)]
    async fn load(ep: &str) -> Result<JsValue, JsValue>;
    /// Creates the session and uploads the inputs.
    #[wasm_bindgen(catch, js_namespace = harnessOrt, js_name = prepare)]
    async fn prepare(model: js_sys::Uint8Array, names: js_sys::Array, values: js_sys::Array, outputs: js_sys::Array) -> Result<JsValue, JsValue>;
    /// Runs the session once, resolving when ORT has handed the run to the GPU.
    #[wasm_bindgen(catch, js_namespace = harnessOrt, js_name = runOnce)]
    async fn run_once() -> Result<JsValue, JsValue>;
    /// Runs the session `batch` times; resolves to `[submittedMs, doneMs, NaN]`.
    #[wasm_bindgen(catch, js_namespace = harnessOrt, js_name = submit)]
    fn submit(batch: u32) -> Result<js_sys::Promise, JsValue>;
    /// ORT's own per-kernel GPU times of one more run (`[{op, node, ms}]`), or null where its
    /// execution provider has no profile.
    #[wasm_bindgen(catch, js_namespace = harnessOrt, js_name = profile)]
    async fn profile() -> Result<JsValue, JsValue>;
    /// The last run's outputs, concatenated, as a `Float32Array`.
    #[wasm_bindgen(catch, js_namespace = harnessOrt, js_name = output)]
    async fn output() -> Result<JsValue, JsValue>;
    /// Releases the session and the input buffers.
    #[wasm_bindgen(catch, js_namespace = harnessOrt, js_name = dispose)]
    async fn dispose() -> Result<JsValue, JsValue>;
}

/// onnxruntime-web, loaded with one of its WebGPU execution providers.
pub struct Ort {
    /// Median completion latency of this browser, ms (measured by the runner).
    latency_ms: f64,
}

impl Ort {
    /// Loads onnxruntime-web's bundle of `ep` (`webgpu` or `jsep`).
    pub async fn load(ep: &str, latency_ms: f64) -> Result<Ort, JsValue> {
        load(ep).await?;
        Ok(Ort { latency_ms })
    }

    /// Runs `case` by the plan's sampling policy and reads its output back.
    pub async fn run_case(&self, plan: &RunPlan, case: &CaseSpec, weights: Option<&Weights>, clock: &mut impl ClockGate, on_sample: impl FnMut(u32)) -> Result<CaseMeasurement, String> {
        let model = Model::of(case, weights)?;
        let submit = |batch: u32, _timed: bool| submit(batch);
        let engine = Engine { submit: &submit, timestamps: false, latency_ms: self.latency_ms };
        let result = async {
            model.prepare().await?;
            let sampled = engine.sample(plan, clock, on_sample).await?;
            let kernels = profile().await?;
            let values = js_sys::Float32Array::new(&output().await?).to_vec();
            Ok::<_, JsValue>((sampled, kernels, values))
        }
        .await;
        let released = dispose().await;
        let (sampled, kernels, values) = result.map_err(describe)?;
        released.map_err(describe)?;
        // ORT builds its pipelines in the first run: no pipeline time of its own.
        let mut m = CaseMeasurement::of_sampled(case.id.clone(), 0.0, sampled, CaseMeasurement::encode_output(&values));
        if !kernels.is_null() {
            let json: String = js_sys::JSON::stringify(&kernels).map_err(describe)?.into();
            m.engine_profile = Some(serde_json::from_str(&json).map_err(|e| format!("onnxruntime-web's profile: {e}"))?);
        }
        Ok(m)
    }

    /// Runs `case` once as a fresh page would, after its weights were fetched: writes its ONNX
    /// file, creates the session, runs it and reads the output back. The page's clock readings
    /// at the end of each phase go to `marks`.
    pub async fn run_cold(&self, case: &CaseSpec, weights: Option<&Weights>, marks: &mut Vec<(&'static str, f64)>) -> Result<Vec<f32>, String> {
        let model = Model::of(case, weights)?;
        marks.push(("onnx", now_ms()));
        let result = async {
            model.prepare().await?;
            marks.push(("session", now_ms()));
            run_once().await?;
            marks.push(("dispatch", now_ms()));
            let values = js_sys::Float32Array::new(&output().await?).to_vec();
            marks.push(("result", now_ms()));
            Ok::<_, JsValue>(values)
        }
        .await;
        let released = dispose().await;
        let values = result.map_err(describe)?;
        released.map_err(describe)?;
        Ok(values)
    }
}

/// A case's ONNX file and feeds, as onnxruntime-web takes them.
struct Model {
    bytes: js_sys::Uint8Array,
    names: js_sys::Array,
    values: js_sys::Array,
    outputs: js_sys::Array,
}

impl Model {
    /// Writes the ONNX file of `case`'s graph.
    fn of(case: &CaseSpec, weights: Option<&Weights>) -> Result<Model, String> {
        let graph = case.workload.as_ref().and_then(|w| w.graph(case.seed)).ok_or_else(|| format!("{}: onnxruntime-web runs harness's models only", case.kernel))?;
        let model = onnx::export(&graph, weights).map_err(|e| e.to_string())?;
        let names = model.feeds.iter().map(|f| JsValue::from_str(&f.name)).collect();
        let values = model
            .feeds
            .iter()
            .map(|f| match &f.data {
                FeedData::F32(v) => JsValue::from(js_sys::Float32Array::from(v.as_slice())),
                FeedData::I32(v) => JsValue::from(js_sys::Int32Array::from(v.as_slice())),
            })
            .collect();
        let outputs = model.outputs.iter().map(|o| JsValue::from_str(o)).collect();
        Ok(Model { bytes: js_sys::Uint8Array::from(model.bytes.as_slice()), names, values, outputs })
    }

    /// Creates the session and uploads the inputs.
    async fn prepare(self) -> Result<JsValue, JsValue> {
        prepare(self.bytes, self.names, self.values, self.outputs).await
    }
}
