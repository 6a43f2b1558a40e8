//! What the JavaScript engines harness drives (TensorFlow.js, onnxruntime-web) share: their work
//! is submitted in batches by a JavaScript function that resolves to `[submittedMs, doneMs, ...the
//! page GPU timer's packed times]` (`static/gpu-timer.js`: NaN where it was off), and sampled under
//! the same policy as every platform, with batches kept in flight.

use kernels::gpu::{share_ticks, steady_wall_ms};
use kernels::gpu_timer::{measure_cost, GpuTimerSource, GpuTimerUse, WindowTimes};
use kernels::sampling::{sample, ClockGate, Sample, Sampled, Timed, MAX_IN_FLIGHT};
use kernels::RunPlan;
use std::collections::VecDeque;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;

/// A JavaScript exception as text.
pub fn describe(e: JsValue) -> String {
    e.dyn_ref::<js_sys::Error>().map(|e| String::from(e.message())).or_else(|| e.as_string()).unwrap_or_else(|| format!("{e:?}"))
}

/// The file the harness serves under `key` (a user's ONNX file, its external data, its given
/// inputs, a Hugging Face folder's files), fetched whole.
pub async fn fetch_served(api: &kernels::api::Api, key: &str) -> Result<js_sys::Uint8Array, String> {
    api.get_array(&format!("weights?name={key}")).await.map_err(|e| format!("fetching `{key}` from the harness: {}", describe(e)))
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
    /// Whether the adapter has `timestamp-query`, so the page's GPU timer can time the engines.
    pub timestamps: bool,
}

impl Completion {
    /// Nothing measured: no latency, no nudges, no GPU timer. As an app starts (a cold start), and
    /// where no GPU is waited for (onnxruntime-web's CPU provider).
    pub const UNMEASURED: Completion = Completion { latency_ms: 0.0, nudge: false, timestamps: false };

    /// How the page's GPU timer times an engine here: from the start, or why it cannot.
    pub fn gpu_timer(&self) -> GpuTimerUse {
        GpuTimerUse::for_adapter(GpuTimerSource::Page, self.timestamps)
    }
}

/// Turns the page's GPU timer on or off for the passes recorded from now on
/// ([`kernels::gpu::enable_page_timer`]), for an engine's samples.
pub fn enable_timer(on: bool) -> Result<(), JsValue> {
    kernels::gpu::enable_page_timer(on).map_err(|e| JsValue::from_str(&e.to_string()))
}

/// How an engine submits work: `submit(batch, timed, nudge)` runs the case `batch` times, with
/// `timed` in a window of the page's GPU timer, and resolves once the GPU finished it, nudging its
/// device meanwhile with `nudge`.
pub struct Engine<'a> {
    /// The engine's submit function.
    pub submit: &'a dyn Fn(u32, bool, bool) -> Result<js_sys::Promise, JsValue>,
    /// How this browser reports completion.
    pub completion: Completion,
}

impl Engine<'_> {
    /// Samples the case by the plan's policy, then lets every batch still in flight finish; with
    /// `--gpu-timer-cost`, samples it again with the page's GPU timer off.
    pub async fn sample(&self, plan: &RunPlan, clock: &mut impl ClockGate, on_sample: impl FnMut(u32)) -> Result<Sampled, JsValue> {
        let timed = self.completion.timestamps;
        let mut sampled = self.sample_timed(plan, timed, timed, clock, on_sample).await?;
        if let (true, Some(t)) = (plan.sampling.timer_cost && timed, &mut sampled.gpu_timer) {
            t.cost = measure_cost(async |on: bool| Ok::<_, JsValue>(self.sample_timed(plan, on, false, clock, |_| {}).await?.span_and_runs())).await?;
        }
        Ok(sampled)
    }

    /// Samples the case with the page's GPU timer's timestamps on every pass (`timed`) or not,
    /// its times in the samples (`report`) or not: a sampling for the timer's cost sizes its
    /// batches on the wall clock with the timer on as with it off.
    async fn sample_timed(&self, plan: &RunPlan, timed: bool, report: bool, clock: &mut impl ClockGate, on_sample: impl FnMut(u32)) -> Result<Sampled, JsValue> {
        let nudge = plan.sampling.nudged(self.completion.nudge);
        let gpu_timer = self.completion.gpu_timer();
        let mut batches = Batches { engine: self, timed, report, gpu_timer, depth: 1, nudge, nudged_from: nudged(), queued: VecDeque::new(), last_done_ms: f64::NEG_INFINITY, returned: Vec::new() };
        enable_timer(timed)?;
        let measured = sample(&plan.sampling, &mut batches, clock, on_sample).await;
        let drained = batches.drain().await;
        enable_timer(false)?;
        let mut sampled = measured?;
        drained?;
        share_ticks(&mut sampled, &batches.returned);
        sampled.gpu_timer = Some(batches.gpu_timer);
        Ok(sampled)
    }
}

/// Batches of the case, `depth` of them submitted ahead of the one waited for. A sample's wall
/// time runs from the later of its submit and the previous completion to its own.
struct Batches<'a> {
    engine: &'a Engine<'a>,
    /// Whether each batch is timed by the page's GPU timer.
    timed: bool,
    /// Whether its times go into the samples.
    report: bool,
    /// What that timer said so far.
    gpu_timer: GpuTimerUse,
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
        let (Some(&[submitted_ms, done_ms]), Some(window)) = (times.get(..2), WindowTimes::unpack(times.get(2..).unwrap_or_default())) else {
            return Err("the engine's submit resolved to something else than [submittedMs, doneMs, ...the GPU timer's times]".into());
        };
        let n = batch as f64;
        let (gpu_ms, busy_ms) = match self.timed && self.report {
            true => {
                self.gpu_timer.add(&window);
                (window.span_ms.map(|ms| ms / n), window.busy_ms.map(|ms| ms / n))
            }
            false => (None, None),
        };
        let wall_ms = steady_wall_ms(submitted_ms, self.last_done_ms, done_ms, n, gpu_ms);
        self.last_done_ms = done_ms;
        Ok((Sample { busy_ms, ..Sample::new(wall_ms, gpu_ms) }, done_ms))
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
            self.queued.push_back((batch, JsFuture::from((self.engine.submit)(batch, self.timed, self.nudge)?)));
        }
        let (sample, done_ms) = self.complete().await?;
        self.returned.push(done_ms);
        Ok(sample)
    }

    fn keep_in_flight(&mut self, batches: u32) {
        self.depth = batches.clamp(1, MAX_IN_FLIGHT);
    }

    fn gpu_timer(&self) -> bool {
        self.timed && self.report
    }

    fn completion_latency_ms(&self) -> f64 {
        self.engine.completion.latency_ms
    }

    fn nudges(&self) -> u64 {
        nudged() - self.nudged_from
    }
}
