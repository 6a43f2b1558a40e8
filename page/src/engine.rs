//! What the JavaScript engines harness drives (TensorFlow.js, onnxruntime-web) share: their work
//! is submitted in batches by a JavaScript function that resolves to `[submittedMs, doneMs,
//! gpuMs or NaN]`, and sampled under the same policy as every platform, with batches kept in
//! flight.

use kernels::gpu::{share_ticks, steady_wall_ms};
use kernels::sampling::{sample, ClockGate, Sample, Sampled, Timed, MAX_IN_FLIGHT};
use kernels::RunPlan;
use std::collections::VecDeque;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;

/// A JavaScript exception as text.
pub fn describe(e: JsValue) -> String {
    e.dyn_ref::<js_sys::Error>().map(|e| String::from(e.message())).or_else(|| e.as_string()).unwrap_or_else(|| format!("{e:?}"))
}

/// Nudges the engines' waits submitted so far in this page (`static/completion.js` counts them).
fn nudged() -> u64 {
    js_sys::Reflect::get(&js_sys::global(), &JsValue::from_str("harnessNudges")).ok().and_then(|n| n.as_f64()).unwrap_or(0.0) as u64
}

/// How this browser reports GPU work done, as the runner measured it on harness's own device.
#[derive(Debug, Clone, Copy)]
pub struct Completion {
    /// Median completion latency, ms, not nudged: it sizes the batches.
    pub latency_ms: f64,
    /// Whether steady batches are nudged while they wait (`kernels::gpu::nudges`): every engine
    /// is, alike, where harness's own are.
    pub nudge: bool,
}

/// How an engine submits work: `submit(batch, timed, nudge)` runs the case `batch` times and
/// resolves once the GPU finished it, nudging its device meanwhile with `nudge`.
pub struct Engine<'a> {
    /// The engine's submit function.
    pub submit: &'a dyn Fn(u32, bool, bool) -> Result<js_sys::Promise, JsValue>,
    /// Whether its third time is a GPU time (timestamps).
    pub timestamps: bool,
    /// How this browser reports completion.
    pub completion: Completion,
}

impl Engine<'_> {
    /// Samples the case by the plan's policy, then lets every batch still in flight finish.
    pub async fn sample(&self, plan: &RunPlan, clock: &mut impl ClockGate, on_sample: impl FnMut(u32)) -> Result<Sampled, JsValue> {
        let nudge = plan.sampling.nudged(self.completion.nudge);
        let mut batches = Batches { engine: self, depth: 1, nudge, nudged_from: nudged(), queued: VecDeque::new(), last_done_ms: f64::NEG_INFINITY, returned: Vec::new() };
        let measured = sample(&plan.sampling, &mut batches, clock, on_sample).await;
        let drained = batches.drain().await;
        let mut sampled = measured?;
        drained?;
        share_ticks(&mut sampled, &batches.returned);
        Ok(sampled)
    }
}

/// Batches of the case, `depth` of them submitted ahead of the one waited for. A sample's wall
/// time runs from the later of its submit and the previous completion to its own.
struct Batches<'a> {
    engine: &'a Engine<'a>,
    depth: u32,
    /// Whether the engine nudges its device while a batch waits.
    nudge: bool,
    /// The page's nudge count when these batches began.
    nudged_from: u64,
    queued: VecDeque<(u32, JsFuture)>,
    last_done_ms: f64,
    /// When each batch that `run` returned was seen complete, in order.
    returned: Vec<f64>,
}

impl Batches<'_> {
    /// Waits for the oldest batch and returns its per-run times and when it was seen complete.
    async fn complete(&mut self) -> Result<(Sample, f64), JsValue> {
        let (batch, done) = self.queued.pop_front().ok_or("no batch in flight")?;
        let times = js_sys::Float64Array::new(&done.await?).to_vec();
        let [submitted_ms, done_ms, gpu_total_ms] = times[..] else { return Err("the engine's submit resolved to something else than 3 times".into()) };
        let n = batch as f64;
        let gpu_ms = (self.engine.timestamps && gpu_total_ms.is_finite() && gpu_total_ms > 0.0).then(|| gpu_total_ms / n);
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
            self.queued.push_back((batch, JsFuture::from((self.engine.submit)(batch, self.engine.timestamps, self.nudge)?)));
        }
        let (sample, done_ms) = self.complete().await?;
        self.returned.push(done_ms);
        Ok(sample)
    }

    fn keep_in_flight(&mut self, batches: u32) {
        self.depth = batches.clamp(1, MAX_IN_FLIGHT);
    }

    fn gpu_timer(&self) -> bool {
        self.engine.timestamps
    }

    fn completion_latency_ms(&self) -> f64 {
        self.engine.completion.latency_ms
    }

    fn nudges(&self) -> u64 {
        nudged() - self.nudged_from
    }
}
