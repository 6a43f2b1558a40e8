//! `--platform ort-webgpu` and `ort-jsep`: runs a model case with onnxruntime-web
//! (`static/ort.js` loads it) on the ONNX file harness writes of the case's graph
//! ([`kernels::model::onnx`]): the same wiring, weights and inputs as harness's own WebGPU run,
//! checked against the same f64 reference. Inputs and outputs stay in GPU buffers while sampling
//! ([`Engine`]'s policy: wall clock, and GPU busy and span by the page's GPU timer where the adapter
//! has `timestamp-query`); then one more run under ORT's own profiler where it has one
//! (JSEP, with `timestamp-query`), and the outputs are read back once at the end.

use crate::engine::{describe, fetch_served, Completion, Engine};
use kernels::model::onnx;
use kernels::model::graph::Graph;
use kernels::model::weights::Weights;
use kernels::sampling::{now_ms, ClockGate};
use kernels::wire::CaseMeasurement;
use kernels::api::Api;
use kernels::own_model::{InputData, OwnModel};
use kernels::{CaseSpec, RunPlan, Workload};
use wasm_bindgen::prelude::*;

#[wasm_bindgen]
extern "C" {
    /// Loads onnxruntime-web's bundle of execution provider `ep` from the harness server.
    #[wasm_bindgen(catch, js_namespace = harnessOrt, js_name = load)]
    async fn load(ep: &str) -> Result<JsValue, JsValue>;
    /// Creates a session for each of `models` (each `[model, names, values, outputs]`), one after
    /// the other or all at once, and uploads their inputs; with `placement`, resolves to the lines
    /// of ORT's log that say where the nodes went.
    #[wasm_bindgen(catch, js_namespace = harnessOrt, js_name = prepare)]
    async fn prepare(models: js_sys::Array, parallel: bool, placement: bool) -> Result<JsValue, JsValue>;
    /// Runs every session once, resolving when ORT has handed the runs to the GPU.
    #[wasm_bindgen(catch, js_namespace = harnessOrt, js_name = runOnce)]
    async fn run_once() -> Result<JsValue, JsValue>;
    /// Runs the session `batch` times, with `timed` in a window of the page's GPU timer; resolves
    /// to `[submittedMs, doneMs, ...the timer's packed times]`, nudging ORT's device meanwhile
    /// with `nudge`.
    #[wasm_bindgen(catch, js_namespace = harnessOrt, js_name = submit)]
    fn submit(batch: u32, timed: bool, nudge: bool) -> Result<js_sys::Promise, JsValue>;
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
    /// How this browser reports completion (measured by the runner).
    completion: Completion,
    /// Its execution provider (`webgpu`, `jsep`, `wasm`, `webnn`).
    ep: String,
}

impl Ort {
    /// Loads onnxruntime-web's bundle of `ep` (`webgpu` or `jsep`).
    pub async fn load(ep: &str, completion: Completion) -> Result<Ort, JsValue> {
        load(ep).await?;
        Ok(Ort { completion, ep: ep.to_string() })
    }

    /// Runs `case` by the plan's sampling policy and reads its output back: one of harness's
    /// models, written as ONNX here, or a user's own ONNX file, fetched from the harness.
    pub async fn run_case(&self, plan: &RunPlan, case: &CaseSpec, weights: Option<&Weights>, api: &Api, clock: &mut impl ClockGate, on_sample: impl FnMut(u32)) -> Result<CaseMeasurement, String> {
        let models = match &case.workload {
            Some(Workload::Onnx(own)) => js_sys::Array::of1(&own_model(own, case.seed, api).await?),
            _ => onnx_models(&[case.workload.as_ref().and_then(|w| w.graph(case.seed)).ok_or_else(|| only_models(case))?], weights)?,
        };
        let engine = Engine { submit: &submit, completion: self.completion };
        let result = async {
            // Where the nodes went, where a provider other than the CPU's was asked for.
            let log: Vec<String> = js_sys::Array::from(&prepare(models, false, self.ep != "wasm").await?).iter().filter_map(|l| l.as_string()).collect();
            let sampled = engine.sample(plan, clock, on_sample).await?;
            let kernels = profile().await?;
            let values = js_sys::Float32Array::new(&output().await?).to_vec();
            Ok::<_, JsValue>((sampled, kernels, values, log))
        }
        .await;
        let released = dispose().await;
        let (sampled, kernels, values, log) = result.map_err(describe)?;
        released.map_err(describe)?;
        // ORT builds its pipelines in the first run: no pipeline time of its own.
        let mut m = CaseMeasurement::of_sampled(case.id.clone(), 0.0, sampled, CaseMeasurement::encode_output(&values));
        m.placement = kernels::placement::from_log(&log);
        if !kernels.is_null() {
            let json: String = js_sys::JSON::stringify(&kernels).map_err(describe)?.into();
            m.engine_profile = Some(serde_json::from_str(&json).map_err(|e| format!("onnxruntime-web's profile: {e}"))?);
        }
        Ok(m)
    }

    /// Runs `case` once as a fresh page would, after its weights were fetched: writes the ONNX
    /// file of each of its parts (a CLIP-shaped pair has two) or, for a user's own file, fetches
    /// it and its external data; creates their sessions (one after the other or at once, as its
    /// cold start says), runs each once and reads the outputs back. The page's clock readings at
    /// the end of each phase go to `marks`.
    pub async fn run_cold(&self, case: &CaseSpec, weights: Option<&Weights>, api: &Api, marks: &mut Vec<(&'static str, f64)>) -> Result<Vec<f32>, String> {
        let models = match &case.workload {
            Some(Workload::Onnx(own)) => {
                let model = own_model(own, case.seed, api).await?;
                marks.push(("fetch", now_ms()));
                js_sys::Array::of1(&model)
            }
            workload => {
                marks.push(("fetch", now_ms()));
                let parts = workload.as_ref().map(|w| w.parts(case.seed)).unwrap_or_default();
                if parts.is_empty() {
                    return Err(only_models(case));
                }
                let models = onnx_models(&parts, weights)?;
                marks.push(("onnx", now_ms()));
                models
            }
        };
        let parallel = case.cold.is_some_and(|c| c.parallel);
        let result = async {
            prepare(models, parallel, false).await?;
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

/// Why `case` does not run on onnxruntime-web.
fn only_models(case: &CaseSpec) -> String {
    format!("{}: onnxruntime-web runs harness's models and your ONNX files only", case.kernel)
}

/// A user's ONNX file as `[model, names, values, outputs, dims, types, external, named]` for
/// `harnessOrt.prepare`: its bytes and external data fetched from the harness, its inputs made
/// from the case's seed as the reference's were.
async fn own_model(own: &OwnModel, seed: u64, api: &Api) -> Result<JsValue, String> {
    let bytes = fetch_served(api, &own.key).await?;
    let external = js_sys::Array::new();
    for e in &own.external {
        external.push(&js_sys::Array::of2(&JsValue::from_str(&e.location), &fetch_served(api, &e.key).await?.into()));
    }
    let names: js_sys::Array = own.inputs.iter().map(|i| JsValue::from_str(&i.name)).collect();
    let values = js_sys::Array::new();
    for (n, i) in own.inputs.iter().enumerate() {
        let given = match i.given() {
            Some((key, _)) => Some(fetch_served(api, key).await?.to_vec()),
            None => None,
        };
        values.push(&typed_array(&i.data(seed, n, given.as_deref())?));
    }
    let outputs: js_sys::Array = own.outputs.iter().map(|o| JsValue::from_str(&o.name)).collect();
    let dims: js_sys::Array = own.inputs.iter().map(|i| JsValue::from(i.shape.iter().map(|&d| JsValue::from_f64(d as f64)).collect::<js_sys::Array>())).collect();
    let types: js_sys::Array = own.inputs.iter().map(|i| JsValue::from_str(i.elem.name())).collect();
    let entry = js_sys::Array::of5(&bytes, &names, &values, &outputs, &dims);
    let named = js_sys::Object::new();
    for (name, value) in &own.dims {
        js_sys::Reflect::set(&named, &JsValue::from_str(name), &JsValue::from_f64(*value as f64)).map_err(describe)?;
    }
    entry.push(&types);
    entry.push(&external);
    entry.push(&named);
    Ok(entry.into())
}

/// The ONNX file of each graph, with its feeds and output names, as `[model, names, values,
/// outputs]` for `harnessOrt.prepare`.
fn onnx_models(graphs: &[Graph], weights: Option<&Weights>) -> Result<js_sys::Array, String> {
    graphs
        .iter()
        .map(|graph| {
            let model = onnx::export(graph, weights).map_err(|e| e.to_string())?;
            let names: js_sys::Array = model.feeds.iter().map(|f| JsValue::from_str(&f.name)).collect();
            let values: js_sys::Array = model.feeds.iter().map(|f| typed_array(&f.data)).collect();
            let outputs: js_sys::Array = model.outputs.iter().map(|o| JsValue::from_str(o)).collect();
            let bytes = js_sys::Uint8Array::from(model.bytes.as_slice());
            Ok(JsValue::from(js_sys::Array::of4(&bytes, &names, &values, &outputs)))
        })
        .collect()
}

/// An input's values as the JavaScript typed array onnxruntime-web takes them in (float16 as its
/// bits, bool as bytes).
fn typed_array(data: &InputData) -> JsValue {
    match data {
        InputData::F32(v) => js_sys::Float32Array::from(v.as_slice()).into(),
        InputData::F16(v) => js_sys::Uint16Array::from(v.as_slice()).into(),
        InputData::I64(v) => js_sys::BigInt64Array::from(v.as_slice()).into(),
        InputData::I32(v) => js_sys::Int32Array::from(v.as_slice()).into(),
        InputData::I8(v) => js_sys::Int8Array::from(v.as_slice()).into(),
        InputData::U8(v) => js_sys::Uint8Array::from(v.as_slice()).into(),
    }
}
