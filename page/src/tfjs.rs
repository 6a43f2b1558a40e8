//! `--platform tfjs`: runs a case with TensorFlow.js's WebGPU backend (`static/tfjs.js` loads it
//! and runs its ops) under the same sampling policy as every platform: calibrated batches of ops
//! with batches kept in flight, GPU time from `tf.time()`'s `kernelMs` where the backend has
//! `timestamp-query`, the wall clock always.

use kernels::gpu::{share_ticks, steady_wall_ms};
use kernels::sampling::{sample, ClockGate, Sample, Timed, MAX_IN_FLIGHT};
use kernels::wire::CaseMeasurement;
use kernels::{CaseSpec, RunPlan};
use std::collections::VecDeque;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;

#[wasm_bindgen]
extern "C" {
    /// Loads TensorFlow.js from the harness server and selects its WebGPU backend; resolves to
    /// whether that backend has GPU timestamps.
    #[wasm_bindgen(catch, js_namespace = harnessTfjs, js_name = load)]
    async fn load() -> Result<JsValue, JsValue>;
    /// Makes the case's input tensors (freeing the last case's) and the op that runs it.
    #[wasm_bindgen(catch, js_namespace = harnessTfjs, js_name = prepare)]
    fn prepare(op: &str, shapes: &str, inputs: js_sys::Array) -> Result<(), JsValue>;
    /// Runs the op `batch` times and submits the work; resolves to `[submittedMs, doneMs,
    /// kernelMs or NaN]` once the GPU finished it.
    #[wasm_bindgen(catch, js_namespace = harnessTfjs, js_name = submit)]
    fn submit(batch: u32, timed: bool) -> Result<js_sys::Promise, JsValue>;
    /// The last op's output as a `Float32Array`.
    #[wasm_bindgen(catch, js_namespace = harnessTfjs, js_name = output)]
    async fn output() -> Result<JsValue, JsValue>;
    /// Frees the case's tensors.
    #[wasm_bindgen(js_namespace = harnessTfjs, js_name = dispose)]
    fn dispose();
}

/// TensorFlow.js, loaded and on its WebGPU backend.
pub struct Tfjs {
    /// Whether `tf.time()` reports GPU timestamps (`kernelMs`).
    timestamps: bool,
    /// Median completion latency of this browser, ms (measured by the runner).
    latency_ms: f64,
}

impl Tfjs {
    /// Loads TensorFlow.js; `latency_ms` is the browser's completion latency, which sizes the
    /// batches like on every platform.
    pub async fn load(latency_ms: f64) -> Result<Tfjs, JsValue> {
        let timestamps = load().await?.as_bool().unwrap_or(false);
        Ok(Tfjs { timestamps, latency_ms })
    }

    /// Runs `case` by the plan's sampling policy and reads its output back.
    pub async fn run_case(&self, plan: &RunPlan, case: &CaseSpec, clock: &mut impl ClockGate, on_sample: impl FnMut(u32)) -> Result<CaseMeasurement, String> {
        let kernel = case.kernel().ok_or_else(|| format!("unknown kernel `{}`", case.kernel))?;
        let call = kernels::tfjs::call(&case.kernel, &case.shape).ok_or_else(|| format!("TensorFlow.js has no op for `{}`", case.kernel))?;
        let inputs: js_sys::Array = kernel.inputs(&case.shape, case.seed).iter().map(|v| JsValue::from(js_sys::Float32Array::from(v.as_slice()))).collect();
        let shapes = serde_json::to_string(&call.shapes).map_err(|e| e.to_string())?;
        prepare(&call.op, &shapes, inputs).map_err(describe)?;
        let mut batches = Batches { tfjs: self, depth: 1, queued: VecDeque::new(), last_done_ms: f64::NEG_INFINITY, returned: Vec::new() };
        let measured = sample(&plan.sampling, &mut batches, clock, on_sample).await;
        let drained = batches.drain().await;
        let result = async {
            let mut sampled = measured?;
            drained?;
            share_ticks(&mut sampled, &batches.returned);
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

/// A JavaScript exception as text.
pub fn describe(e: JsValue) -> String {
    e.dyn_ref::<js_sys::Error>().map(|e| String::from(e.message())).or_else(|| e.as_string()).unwrap_or_else(|| format!("{e:?}"))
}

/// Batches of the case's op, `depth` of them submitted ahead of the one waited for. A sample's
/// wall time runs from the later of its submit and the previous completion to its own.
struct Batches<'a> {
    tfjs: &'a Tfjs,
    depth: u32,
    queued: VecDeque<(u32, JsFuture)>,
    last_done_ms: f64,
    /// When each batch that `run` returned was seen complete, in order.
    returned: Vec<f64>,
}

impl Batches<'_> {
    /// Waits for the oldest batch and returns its per-op times and when it was seen complete.
    async fn complete(&mut self) -> Result<(Sample, f64), JsValue> {
        let (batch, done) = self.queued.pop_front().ok_or("no batch in flight")?;
        let times = js_sys::Float64Array::new(&done.await?).to_vec();
        let [submitted_ms, done_ms, kernel_ms] = times[..] else { return Err("harnessTfjs.submit resolved to something else than 3 times".into()) };
        let n = batch as f64;
        let gpu_ms = (self.tfjs.timestamps && kernel_ms.is_finite() && kernel_ms > 0.0).then(|| kernel_ms / n);
        let wall_ms = steady_wall_ms(submitted_ms, self.last_done_ms, done_ms, n, gpu_ms);
        self.last_done_ms = done_ms;
        Ok((Sample { wall_ms, gpu_ms }, done_ms))
    }

    /// Waits for every batch still queued, discarding their times.
    async fn drain(&mut self) -> Result<(), JsValue> {
        while !self.queued.is_empty() {
            self.complete().await?;
        }
        self.last_done_ms = f64::NEG_INFINITY;
        Ok(())
    }
}

impl Timed for Batches<'_> {
    type Error = JsValue;

    async fn run(&mut self, batch: u32) -> Result<Sample, JsValue> {
        // Batches queued at another size belong to calibration: let them finish unrecorded.
        if self.queued.front().is_some_and(|(b, _)| *b != batch) {
            self.drain().await?;
        }
        while self.queued.len() < self.depth.max(1) as usize {
            self.queued.push_back((batch, JsFuture::from(submit(batch, self.tfjs.timestamps)?)));
        }
        let (sample, done_ms) = self.complete().await?;
        self.returned.push(done_ms);
        Ok(sample)
    }

    fn keep_in_flight(&mut self, batches: u32) {
        self.depth = batches.clamp(1, MAX_IN_FLIGHT);
    }

    fn gpu_timer(&self) -> bool {
        self.tfjs.timestamps
    }

    fn completion_latency_ms(&self) -> f64 {
        self.tfjs.latency_ms
    }
}
