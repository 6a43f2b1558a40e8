//! The sampling policy every platform follows: one untimed first run (kept apart: it absorbs
//! lazy compilation and first use), then, in steady mode, a calibration that sizes the batch,
//! warm-up runs until the [`WarmupPolicy`] is satisfied (and the GPU clock has settled, where a
//! probe watches it), then timed samples until the count is reached, the median's confidence
//! interval is as narrow as asked (`--target-ci`), or the time budget is spent (after at least
//! [`MIN_SAMPLES`]).
//!
//! Two modes, after nvbench: *steady* (the default) makes a sample a batch of N back-to-back
//! dispatches, with enough batches queued that the GPU never waits for the browser's completion
//! callback, and reports the batch's time divided by N; *isolated* times one dispatch per sample
//! with the GPU idle in between, which is what a cold, one-off call costs.

use serde::{Deserialize, Serialize};
pub use stats::{WarmupPolicy, WarmupStop};

/// Samples always taken (or all of them, when fewer are asked for), whatever the time budget.
pub const MIN_SAMPLES: u32 = 5;
/// Most timed samples a case takes while aiming for a target CI.
pub const MAX_ADAPTIVE_SAMPLES: u32 = 2048;
/// Fewest samples whose bootstrap CI is checked against the target: below this the percentile
/// bootstrap of a median is too coarse to trust.
pub const MIN_CI_SAMPLES: u32 = 10;
/// GPU time a steady batch aims for: long enough that per-batch costs (encoding, submit,
/// timestamp resolution) and timer resolution are small beside it, short enough for many samples
/// a second.
pub const BATCH_TARGET_MS: f64 = 5.0;
/// Most dispatches in one batch.
pub const MAX_BATCH: u32 = 4096;
/// With only the wall clock, a batch lasts at least this many completion latencies, so that the
/// latency is at most a tenth of what is measured.
pub const WALL_BATCH_LATENCIES: f64 = 10.0;
/// ...but a wall-clock batch lasts no longer than this.
pub const MAX_WALL_BATCH_MS: f64 = 500.0;
/// Most batches kept in flight.
pub const MAX_IN_FLIGHT: u32 = 64;
/// Fewest batches kept in flight: the one waited for and two queued behind it, so that a
/// completion reported a batch late still finds work queued. With one queued behind, such samples
/// read two batches' time: ViT-B/16 at batch 8 in Chrome on an H100 (quartiles 17.5 and 33.8 ms
/// for 17.3 of GPU time, h200-flash.md), Whisper's encoder at batch 8 in Firefox, nudged (18.6 or
/// 33–38 ms for 18.5, h200-nudge.md).
pub const MIN_IN_FLIGHT: u32 = 3;
/// Batch sizes tried at most while calibrating.
const CALIBRATION_ROUNDS: usize = 6;

/// How samples are taken.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum SamplingMode {
    /// A sample is a batch of back-to-back dispatches, time divided by their count, with batches
    /// queued ahead so the GPU never idles (nvbench's batch measurement): throughput at steady
    /// clocks, comparable across browsers.
    #[default]
    Steady,
    /// One dispatch per sample, waited for before the next (nvbench's cold measurement): what a
    /// one-off call costs, idle clocks and completion latency included.
    Isolated,
}

impl SamplingMode {
    /// The mode as the CLI and reports spell it.
    pub fn as_str(self) -> &'static str {
        match self {
            SamplingMode::Steady => "steady",
            SamplingMode::Isolated => "isolated",
        }
    }

    /// What results written before the modes existed were measured with.
    pub fn legacy() -> Self {
        SamplingMode::Isolated
    }
}

/// Whether harness nudges the browser while steady batches wait (`kernels::gpu::nudges`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Nudge {
    /// Where the browser reports completion on a timer (a long completion latency: Firefox),
    /// every engine's steady batches are nudged alike.
    #[default]
    Auto,
    /// Never: every wait as the browser gives it.
    Off,
}

impl Nudge {
    /// What results written before nudging existed were measured with.
    pub fn legacy() -> Self {
        Nudge::Off
    }
}

/// How a case is sampled.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Sampling {
    /// Steady batches or isolated dispatches.
    #[serde(default = "SamplingMode::legacy")]
    pub mode: SamplingMode,
    /// Warm-up runs before timing.
    pub warmup: WarmupPolicy,
    /// Timed samples per case; with `target_ci_pct`, the fewest taken before the target is
    /// checked.
    pub samples: u32,
    /// Time budget of a case's timed samples, ms: sampling stops once their wall times add up to
    /// it, after at least [`MIN_SAMPLES`].
    pub max_time_ms: f64,
    /// Keep sampling until the median's 95% CI half-width is at most this percentage of the
    /// median (or the time budget is spent).
    pub target_ci_pct: Option<f64>,
    /// Whether steady batches may be nudged where the browser needs it.
    #[serde(default)]
    pub nudge: Nudge,
    /// Whether each dispatch of a case of several is also timed alone after its samples
    /// ([`crate::gpu::Gpu::profile`]): where its GPU time goes, at the cost of a few more runs.
    #[serde(default)]
    pub profile: bool,
    /// Which GPU timer times harness's own cases in a browser (`--gpu-timer`).
    #[serde(default)]
    pub gpu_timer: crate::gpu_timer::GpuTimerChoice,
    /// Whether each case is sampled again with the page's GPU timer off, for its cost
    /// (`--gpu-timer-cost`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub timer_cost: bool,
}

/// Time budget of a case's timed samples on a CPU adapter ([`Sampling::for_cpu`]), ms.
pub const CPU_MAX_TIME_MS: f64 = 1000.0;

impl Sampling {
    /// This policy as it is used where the adapter turns out to be a CPU (a software adapter:
    /// SwiftShader, lavapipe, llvmpipe) and the user left the sampling to harness: the default
    /// policy is sized for a GPU, where a sample takes microseconds to milliseconds, and spends
    /// tens of seconds a case on a CPU that takes a second a sample. On a CPU there is no clock to
    /// ramp up, and the first run (never timed) already compiled everything: [`MIN_SAMPLES`]
    /// samples within [`CPU_MAX_TIME_MS`], right after it. Mode, nudging and profiling stay.
    pub fn for_cpu(&self) -> Sampling {
        Sampling {
            warmup: WarmupPolicy::Fixed(0),
            samples: self.samples.min(MIN_SAMPLES),
            max_time_ms: self.max_time_ms.min(CPU_MAX_TIME_MS),
            target_ci_pct: None,
            ..*self
        }
    }

    /// Whether this policy's waits are nudged in a browser that needs it (`browser`, from
    /// `kernels::gpu::nudges` and this policy's [`Nudge`]): steady batches only; an isolated
    /// sample waits as a one-off call does.
    pub fn nudged(&self, browser: bool) -> bool {
        browser && self.mode == SamplingMode::Steady
    }

    /// The most timed samples a case can take.
    pub fn max_samples(&self) -> u32 {
        match self.target_ci_pct {
            Some(_) => MAX_ADAPTIVE_SAMPLES.max(self.samples),
            None => self.samples,
        }
    }
}

/// The time a batch aims for: [`BATCH_TARGET_MS`] of GPU time where GPU timestamps time it, or
/// longer where the completion latency is long, so that the `samples` timed batches together
/// span at least [`WALL_BATCH_LATENCIES`] latencies and the wall clock beside them (a browser
/// reports completion on its timer's ticks) still resolves them; with only the wall clock, long
/// enough that a completion latency of `latency_ms` is a small part of each batch.
pub fn batch_target_ms(gpu_timer: bool, latency_ms: f64, samples: u32) -> f64 {
    match gpu_timer {
        true => BATCH_TARGET_MS.max(WALL_BATCH_LATENCIES * latency_ms / samples.max(1) as f64),
        false => (latency_ms * WALL_BATCH_LATENCIES).clamp(BATCH_TARGET_MS, MAX_WALL_BATCH_MS),
    }
}

/// Dispatches per batch so that a batch of dispatches taking `per_dispatch_ms` each reaches
/// `target_ms`, between 1 and [`MAX_BATCH`]. A time too small to measure gives the cap.
pub fn batch_size(per_dispatch_ms: f64, target_ms: f64) -> u32 {
    if per_dispatch_ms.is_nan() || per_dispatch_ms <= 0.0 {
        return MAX_BATCH;
    }
    (target_ms / per_dispatch_ms).ceil().clamp(1.0, MAX_BATCH as f64) as u32
}

/// Batches to keep in flight so the GPU never waits for a completion callback that arrives
/// `latency_ms` after the work is done: queued work covers twice the latency, plus the batch
/// being waited for; at least [`MIN_IN_FLIGHT`], at most [`MAX_IN_FLIGHT`].
pub fn in_flight(latency_ms: f64, batch_ms: f64) -> u32 {
    if batch_ms.is_nan() || batch_ms <= 0.0 {
        return MAX_IN_FLIGHT;
    }
    let ahead = (2.0 * latency_ms.max(0.0) / batch_ms).ceil();
    (ahead + 1.0).clamp(MIN_IN_FLIGHT as f64, MAX_IN_FLIGHT as f64) as u32
}

/// Milliseconds on a monotonic clock: `performance.now()` in the browser, `Instant` natively.
pub fn now_ms() -> f64 {
    #[cfg(target_arch = "wasm32")]
    {
        web_sys::window()
            .and_then(|w| w.performance())
            .map(|p| p.now())
            .unwrap_or(0.0)
    }
    #[cfg(not(target_arch = "wasm32"))]
    {
        use std::sync::OnceLock;
        use std::time::Instant;
        static START: OnceLock<Instant> = OnceLock::new();
        START.get_or_init(Instant::now).elapsed().as_secs_f64() * 1e3
    }
}

/// One timed sample, per dispatch: a sample of a batch of N dispatches holds its times divided
/// by N.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Sample {
    /// Wall milliseconds, measured with `performance.now()` (or `Instant` natively): from
    /// `queue.submit` until the queue reported the work done (`onSubmittedWorkDone`), or, with
    /// batches queued ahead, from the previous batch's completion until this one's.
    pub wall_ms: f64,
    /// GPU milliseconds, when the device has `timestamp-query`: between the begin and end
    /// timestamps of the pass harness records a batch in, or, by the page's GPU timer
    /// ([`crate::gpu_timer`]), the span from the sample's first pass's begin to its last pass's end.
    pub gpu_ms: Option<f64>,
    /// By the page's GPU timer: the sample's passes' GPU times summed, ms (its span, `gpu_ms`,
    /// holds the idle gaps between them too).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub busy_ms: Option<f64>,
}

impl Sample {
    /// A sample of a wall time and, where timestamps measured one, a GPU time with no busy time
    /// of its own (one pass: busy is the span).
    pub fn new(wall_ms: f64, gpu_ms: Option<f64>) -> Self {
        Sample { wall_ms, gpu_ms, busy_ms: None }
    }
}

/// What ended a case's sampling.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum StopReason {
    /// All requested samples were taken.
    SampleCount,
    /// The case's time budget (`--max-time`) was spent first.
    MaxTime,
    /// The median's confidence interval reached the target (`--target-ci`).
    TargetCi,
}

impl StopReason {
    /// What ended sampling, in words.
    pub fn describe(self) -> &'static str {
        match self {
            StopReason::SampleCount => "sample count",
            StopReason::MaxTime => "time budget",
            StopReason::TargetCi => "target CI reached",
        }
    }
}

/// Something that can be run and timed: GPU dispatches, or a CPU kernel.
#[allow(async_fn_in_trait)]
pub trait Timed {
    /// What a failed run reports.
    type Error;
    /// Runs the work `batch` times back to back and returns the time per run: wall clock always,
    /// GPU time where timestamps measured it.
    async fn run(&mut self, batch: u32) -> Result<Sample, Self::Error>;
    /// Keep this many batches queued from now on, so the next ones start while a finished one is
    /// being waited for. Work that runs synchronously ignores it.
    fn keep_in_flight(&mut self, _batches: u32) {}
    /// Whether per-run times come from GPU timestamps.
    fn gpu_timer(&self) -> bool {
        false
    }
    /// Wall ms from a finished submit until the platform says so (0 where there is no queue):
    /// what a wall-clock batch must dwarf.
    fn completion_latency_ms(&self) -> f64 {
        0.0
    }
    /// Empty command buffers submitted so far while waits were nudged (`kernels::gpu::nudges`).
    fn nudges(&self) -> u64 {
        0
    }
    /// The clock a case's time budget (`--max-time`) is spent on: elapsed wall time. A sum of
    /// samples' walls is not it: batches in flight overlap, and a batch whose completion came in a
    /// burst is timed from its own submit.
    fn now_ms(&self) -> f64 {
        now_ms()
    }
}

/// Whether the GPU clock has settled, for warm-up: `None` where no probe watches it.
#[allow(async_fn_in_trait)]
pub trait ClockGate {
    /// `Some(true)` once the clock is steady at its working speed.
    async fn steady(&mut self) -> Option<bool>;
}

/// No clock probe: warm-up goes by the times alone.
pub struct NoClock;

impl ClockGate for NoClock {
    async fn steady(&mut self) -> Option<bool> {
        None
    }
}

/// What one case's sampling took.
#[derive(Debug, Clone, PartialEq)]
pub struct Sampled {
    /// The first run (one dispatch), wall ms.
    pub first_ms: f64,
    /// Each warm-up run's per-dispatch time by the headline timer, ms.
    pub warmup: Vec<f64>,
    /// What ended warm-up.
    pub warmup_stop: WarmupStop,
    /// Each timed sample, per dispatch.
    pub samples: Vec<Sample>,
    /// What ended sampling.
    pub stopped_by: StopReason,
    /// How the samples were taken.
    pub mode: SamplingMode,
    /// Dispatches per sample.
    pub batch: u32,
    /// Batches kept in flight.
    pub in_flight: u32,
    /// When the timed samples began and ended, on [`now_ms`]'s clock.
    pub timed_span: (f64, f64),
    /// Empty command buffers submitted while its batches waited ([`Timed::nudges`]).
    pub nudges: u64,
    /// Which timer gave the GPU times, where the sampler says ([`crate::gpu_timer`]).
    pub gpu_timer: Option<crate::gpu_timer::GpuTimerUse>,
}

impl Sampled {
    /// The timed samples' wall span, ms, and the runs they hold: their throughput, which no
    /// sharing-out of completions between samples changes.
    pub fn span_and_runs(&self) -> (f64, u64) {
        ((self.timed_span.1 - self.timed_span.0).max(0.0), self.samples.len() as u64 * u64::from(self.batch))
    }
}

/// The time by the headline timer: GPU where measured.
fn headline(s: &Sample) -> f64 {
    s.gpu_ms.unwrap_or(s.wall_ms)
}

/// Sizes a steady batch: runs growing batches until one reaches the target by the headline
/// timer, then returns (batch, batches in flight).
async fn calibrate<T: Timed>(timed: &mut T, samples: u32) -> Result<(u32, u32), T::Error> {
    let latency = timed.completion_latency_ms();
    let target = batch_target_ms(timed.gpu_timer(), latency, samples);
    let mut n = 1u32;
    let mut per_dispatch = 0.0;
    for _ in 0..CALIBRATION_ROUNDS {
        let s = timed.run(n).await?;
        // An isolated wall-clock run includes the completion latency: take it out.
        let batch_ms = match s.gpu_ms {
            Some(g) => g * n as f64,
            None => s.wall_ms * n as f64 - latency,
        };
        per_dispatch = batch_ms / n as f64;
        let next = batch_size(per_dispatch, target);
        if next <= n.saturating_mul(2) || n == MAX_BATCH {
            n = next.max(1);
            break;
        }
        // Grow at most 64× a round: one fast outlier must not blow the batch up.
        n = next.min(n.saturating_mul(64));
    }
    Ok((n, in_flight(latency, per_dispatch * n as f64)))
}

/// Runs `timed` by the policy `s`, calling `on_sample` with the count of timed samples taken.
pub async fn sample<T: Timed>(
    s: &Sampling,
    timed: &mut T,
    clock: &mut impl ClockGate,
    mut on_sample: impl FnMut(u32),
) -> Result<Sampled, T::Error> {
    let first_ms = timed.run(1).await?.wall_ms;
    let (batch, in_flight) = match s.mode {
        SamplingMode::Steady => calibrate(timed, s.samples).await?,
        SamplingMode::Isolated => (1, 1),
    };
    timed.keep_in_flight(in_flight);
    let mut warmup = Vec::new();
    let warmup_from = timed.now_ms();
    let warmup_stop = loop {
        match s.warmup.decide(&warmup, timed.now_ms() - warmup_from, s.max_time_ms) {
            // Times can settle while the clock is still ramping: wait for both.
            Some(WarmupStop::Stable) if clock.steady().await == Some(false) => {}
            Some(stop) => break stop,
            None => {}
        }
        let run = timed.run(batch).await?;
        warmup.push(headline(&run));
    };
    let max_samples = s.max_samples();
    let mut samples: Vec<Sample> = Vec::with_capacity(max_samples.min(4096) as usize);
    let mut stopped_by = StopReason::SampleCount;
    let mut next_check = s.samples.max(MIN_CI_SAMPLES);
    let timed_from = now_ms();
    let budget_from = timed.now_ms();
    for i in 0..max_samples {
        let run = timed.run(batch).await?;
        samples.push(run);
        let n = i + 1;
        on_sample(n);
        if n == max_samples {
            break;
        }
        if let Some(target) = s.target_ci_pct.filter(|_| n >= next_check) {
            let series: Vec<f64> = match samples.iter().map(|s| s.gpu_ms).collect::<Option<Vec<f64>>>() {
                Some(gpu) => gpu,
                None => samples.iter().map(|s| s.wall_ms).collect(),
            };
            if stats::summary::ci_half_width_pct(&series, stats::bootstrap::RESAMPLES).is_some_and(|w| w <= target) {
                stopped_by = StopReason::TargetCi;
                break;
            }
            // Checking at geometrically spaced counts keeps the bootstrap's cost a small share.
            next_check = (n + 5).max((n as f64 * 1.1).ceil() as u32);
        }
        if n >= MIN_SAMPLES && timed.now_ms() - budget_from >= s.max_time_ms {
            stopped_by = StopReason::MaxTime;
            break;
        }
    }
    let timed_span = (timed_from, now_ms());
    Ok(Sampled { first_ms, warmup, warmup_stop, samples, stopped_by, mode: s.mode, batch, in_flight, timed_span, nudges: timed.nudges(), gpu_timer: None })
}

/// A named span of wall time: a phase of a measured case, of a cold start, or of one run of a
/// pipeline from text.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Phase {
    /// A measured case's ([`CaseClock`]): `weights`, `build`, `upload`, `pipelines`, `warmup`,
    /// `samples`, `readback`, `profile`; harness's after them: `reference`, `check`, `clock`.
    /// A cold start's: `device` (page, WASM, adapter and device), `fetch` (weights fetched),
    /// `upload` (program built, weights uploaded), `pipelines`, `dispatch` (first pass encoded
    /// and submitted), `result` (first output read back); for onnxruntime-web `engine` (its
    /// script loaded), `onnx` (the model written), `session` (`InferenceSession.create`) in place
    /// of device, upload and pipelines. From text: `tokenize`, `run`, `pool`.
    pub name: String,
    /// Wall ms from the end of the phase before.
    pub ms: f64,
}

/// The phases that end at the clock readings `marks` ([`now_ms`]'s), named in order, the first
/// from `start`.
pub fn phases_of_marks(start: f64, marks: &[(&str, f64)]) -> Vec<Phase> {
    let mut before = start;
    marks
        .iter()
        .map(|&(name, at)| {
            let ms = (at - before).max(0.0);
            before = at;
            Phase { name: name.to_string(), ms }
        })
        .collect()
}

/// The phases of one measured case on a platform, as they pass: each [`mark`](CaseClock::mark)
/// ends the phase it names at [`now_ms`]. What the report's "where a case's time went" reads.
#[derive(Debug, Clone, PartialEq)]
pub struct CaseClock {
    start: f64,
    marks: Vec<(&'static str, f64)>,
}

impl CaseClock {
    /// A clock started now, as the case is announced.
    pub fn start() -> Self {
        CaseClock { start: now_ms(), marks: Vec::new() }
    }

    /// Ends phase `name` now.
    pub fn mark(&mut self, name: &'static str) {
        self.mark_at(name, now_ms());
    }

    /// Ends phase `name` at `at` ([`now_ms`]'s clock), where it ended earlier than now (the
    /// warm-up at the first timed sample).
    pub fn mark_at(&mut self, name: &'static str, at: f64) {
        self.marks.push((name, at));
    }

    /// The phases so far.
    pub fn phases(&self) -> Vec<Phase> {
        phases_of_marks(self.start, &self.marks)
    }
}

/// Work timed end to end in named phases, one call at a time (a pipeline from text: tokenize,
/// run, pool): what [`sample_phases`] samples.
#[allow(async_fn_in_trait)]
pub trait Phased {
    /// What a failed call reports.
    type Error;
    /// Makes one call and returns its phases, each `(name, wall ms)`, in order.
    async fn call(&mut self) -> Result<Vec<(&'static str, f64)>, Self::Error>;
    /// The last call's GPU span and busy times, ms, where a GPU timer timed it: beside the
    /// phases, never in them.
    fn gpu_ms(&self) -> (Option<f64>, Option<f64>) {
        (None, None)
    }
}

/// Samples `work` by the policy `s`, isolated (each sample one call, awaited, as an app awaits
/// it): a sample's wall time is the sum of its phases. Returns the samples and each timed
/// sample's phases, in order.
pub async fn sample_phases<P: Phased>(
    s: &Sampling,
    work: &mut P,
    clock: &mut impl ClockGate,
    on_sample: impl FnMut(u32),
) -> Result<(Sampled, Vec<Vec<Phase>>), P::Error> {
    struct Calls<'a, P> {
        work: &'a mut P,
        phases: Vec<Vec<Phase>>,
    }
    impl<P: Phased> Timed for Calls<'_, P> {
        type Error = P::Error;
        async fn run(&mut self, batch: u32) -> Result<Sample, P::Error> {
            let (mut total, mut span, mut busy) = (0.0, Some(0.0), Some(0.0));
            for _ in 0..batch {
                let phases = self.work.call().await?;
                total += phases.iter().map(|p| p.1).sum::<f64>();
                let (s, b) = self.work.gpu_ms();
                span = span.zip(s).map(|(a, b)| a + b);
                busy = busy.zip(b).map(|(a, b)| a + b);
                self.phases.push(phases.into_iter().map(|(name, ms)| Phase { name: name.to_string(), ms }).collect());
            }
            let n = batch as f64;
            Ok(Sample { busy_ms: busy.map(|b| b / n), ..Sample::new(total / n, span.map(|s| s / n)) })
        }
    }
    let isolated = Sampling { mode: SamplingMode::Isolated, ..*s };
    let mut calls = Calls { work, phases: Vec::new() };
    let sampled = sample(&isolated, &mut calls, clock, on_sample).await?;
    // The first run and the warm-up came before the timed samples.
    let timed = calls.phases.split_off(calls.phases.len() - sampled.samples.len());
    Ok((sampled, timed))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A clock-free stand-in: run `i` takes `times(i)` ms per dispatch; with `gpu`, that is a GPU
    /// time and the wall clock adds `latency` ms to each isolated run.
    struct Scripted<F: Fn(usize) -> f64> {
        times: F,
        runs: usize,
        gpu: bool,
        latency: f64,
        batches: Vec<u32>,
        in_flight: u32,
        /// Its clock: each batch's wall time, one after another, unless `overlap` (batches in
        /// flight timed from their own submits, which overlap: each adds an eighth of its wall).
        clock: f64,
        overlap: bool,
    }

    fn scripted<F: Fn(usize) -> f64>(times: F) -> Scripted<F> {
        Scripted { times, runs: 0, gpu: false, latency: 0.0, batches: Vec::new(), in_flight: 1, clock: 0.0, overlap: false }
    }

    impl<F: Fn(usize) -> f64> Timed for Scripted<F> {
        type Error = ();
        async fn run(&mut self, batch: u32) -> Result<Sample, ()> {
            self.runs += 1;
            self.batches.push(batch);
            let t = (self.times)(self.runs - 1);
            let wall = t + if self.in_flight > 1 { 0.0 } else { self.latency / batch as f64 };
            self.clock += wall * batch as f64 / if self.overlap { 8.0 } else { 1.0 };
            Ok(Sample::new(wall, self.gpu.then_some(t)))
        }
        fn now_ms(&self) -> f64 {
            self.clock
        }
        fn keep_in_flight(&mut self, batches: u32) {
            self.in_flight = batches;
        }
        fn gpu_timer(&self) -> bool {
            self.gpu
        }
        fn completion_latency_ms(&self) -> f64 {
            self.latency
        }
    }

    fn sampling(samples: u32, max_time_ms: f64, target_ci_pct: Option<f64>) -> Sampling {
        Sampling { mode: SamplingMode::Isolated, warmup: WarmupPolicy::Fixed(2), samples, max_time_ms, target_ci_pct, nudge: Nudge::Auto, profile: false, gpu_timer: Default::default(), timer_cost: false }
    }

    fn go<F: Fn(usize) -> f64>(s: Sampling, timed: &mut Scripted<F>) -> Sampled {
        pollster::block_on(sample(&s, timed, &mut NoClock, |_| {})).unwrap()
    }

    #[test]
    fn the_count_ends_sampling() {
        let w = go(sampling(8, 1e9, None), &mut scripted(|_| 1.0));
        assert_eq!((w.samples.len(), w.stopped_by, w.warmup.len(), w.warmup_stop), (8, StopReason::SampleCount, 2, WarmupStop::Fixed));
        assert_eq!((w.batch, w.in_flight, w.mode), (1, 1, SamplingMode::Isolated));
    }

    #[test]
    fn the_time_budget_ends_sampling_after_the_minimum() {
        let w = go(sampling(100, 3.0, None), &mut scripted(|_| 1.0));
        assert_eq!((w.samples.len(), w.stopped_by), (MIN_SAMPLES as usize, StopReason::MaxTime));
    }

    #[test]
    fn the_time_budget_is_elapsed_time_not_the_samples_walls_added_up() {
        // Samples of 1 ms whose walls overlap eight to one: 100 ms of budget is 800 samples, not 100.
        let mut overlapping = Scripted { overlap: true, ..scripted(|_| 1.0) };
        let w = go(sampling(100_000, 100.0, None), &mut overlapping);
        assert_eq!((w.samples.len(), w.stopped_by), (800, StopReason::MaxTime));
    }

    #[test]
    fn a_target_ci_keeps_sampling_until_it_is_met() {
        // Alternating 1.0 / 1.1: the median's interval is wide at first and narrows with n.
        let noisy = |i: usize| if i % 3 == 0 { 1.1 } else { 1.0 + (i % 7) as f64 * 0.01 };
        let w = go(sampling(10, 1e9, Some(1.0)), &mut scripted(noisy));
        assert_eq!(w.stopped_by, StopReason::TargetCi);
        let walls: Vec<f64> = w.samples.iter().map(|s| s.wall_ms).collect();
        assert!(stats::summary::ci_half_width_pct(&walls, stats::bootstrap::RESAMPLES).unwrap() <= 1.0);
        // A target that cannot be met runs into the time budget instead.
        let w = go(sampling(10, 200.0, Some(0.0001)), &mut scripted(noisy));
        assert_eq!(w.stopped_by, StopReason::MaxTime);
    }

    #[test]
    fn auto_warmup_is_recorded() {
        let s = Sampling { warmup: WarmupPolicy::Auto, ..sampling(5, 1e9, None) };
        let w = go(s, &mut scripted(|i| if i < 8 { 5.0 } else { 1.0 }));
        assert_eq!(w.warmup_stop, WarmupStop::Stable);
        assert_eq!(w.warmup.len(), 15);
    }

    #[test]
    fn batch_arithmetic() {
        // GPU-timed: 5 ms of work per batch, or more where 30 samples must span ten 100 ms
        // completion latencies.
        assert_eq!(batch_target_ms(true, 0.05, 30), BATCH_TARGET_MS);
        assert!((batch_target_ms(true, 100.0, 30) - 1000.0 / 30.0).abs() < 1e-9);
        assert_eq!(batch_size(0.004, BATCH_TARGET_MS), 1250);
        assert_eq!(batch_size(0.8, BATCH_TARGET_MS), 7);
        assert_eq!(batch_size(33.0, BATCH_TARGET_MS), 1, "a long program is one per sample");
        assert_eq!(batch_size(1e-7, BATCH_TARGET_MS), MAX_BATCH, "capped");
        assert_eq!(batch_size(0.0, BATCH_TARGET_MS), MAX_BATCH, "too fast to see: the cap");
        assert_eq!(batch_size(f64::NAN, BATCH_TARGET_MS), MAX_BATCH);
        // Wall clock only: ten completion latencies, within bounds.
        assert_eq!(batch_target_ms(false, 0.05, 30), BATCH_TARGET_MS);
        assert_eq!(batch_target_ms(false, 20.0, 30), 200.0);
        assert_eq!(batch_target_ms(false, 100.0, 30), MAX_WALL_BATCH_MS);
        // In flight: a 100 ms callback timer over 5 ms batches needs 41 queued (200 ms of work).
        assert_eq!(in_flight(100.0, 5.0), 41);
        assert_eq!(in_flight(0.05, 5.0), MIN_IN_FLIGHT, "two queued behind the one awaited, whatever the latency");
        assert_eq!(in_flight(1.3, 18.5), 3, "Firefox nudged, a pass of 18.5 ms a batch");
        assert_eq!(in_flight(1000.0, 1.0), MAX_IN_FLIGHT);
        assert_eq!(in_flight(1.0, 0.0), MAX_IN_FLIGHT);
    }

    #[test]
    fn steady_calibrates_a_batch_that_reaches_the_target_on_the_gpu_timer() {
        // 0.004 ms a dispatch on the GPU, behind a 0.05 ms completion latency (Chromium, native).
        let mut t = Scripted { gpu: true, latency: 0.05, ..scripted(|_| 0.004) };
        let w = go(Sampling { mode: SamplingMode::Steady, ..sampling(10, 1e9, None) }, &mut t);
        assert_eq!((w.mode, w.batch, w.in_flight), (SamplingMode::Steady, 1250, 3));
        assert_eq!(w.samples.len(), 10);
        assert!(w.samples.iter().all(|s| s.gpu_ms == Some(0.004)));
        // First run and calibration one at a time, then every warm-up and sample at full size.
        assert_eq!(t.batches[..3], [1, 1, 64]);
        assert!(t.batches[t.batches.len() - 12..].iter().all(|&b| b == 1250), "{:?}", t.batches);
        // Behind a 100 ms completion timer (Firefox): 10 samples must span a second, so batches
        // grow to the cap (4096 × 0.004 ms = 16 ms) and 14 are kept in flight (200 ms of work).
        let mut t = Scripted { gpu: true, latency: 100.0, ..scripted(|_| 0.004) };
        let w = go(Sampling { mode: SamplingMode::Steady, ..sampling(10, 1e9, None) }, &mut t);
        assert_eq!((w.batch, w.in_flight), (MAX_BATCH, 14));
    }

    #[test]
    fn steady_on_the_wall_clock_alone_outgrows_the_latency() {
        // 0.01 ms a dispatch, seen only through a 20 ms completion latency.
        let mut t = Scripted { latency: 20.0, ..scripted(|_| 0.01) };
        let w = go(Sampling { mode: SamplingMode::Steady, ..sampling(5, 1e9, None) }, &mut t);
        // 200 ms of work a batch: the latency is a tenth of it.
        assert_eq!(w.batch, 20_000u32.min(MAX_BATCH));
        assert!(w.in_flight >= 2);
    }

    #[test]
    fn isolated_takes_one_dispatch_per_sample() {
        let mut t = Scripted { gpu: true, latency: 100.0, ..scripted(|_| 0.004) };
        let w = go(sampling(4, 1e9, None), &mut t);
        assert!(t.batches.iter().all(|&b| b == 1));
        assert!(w.samples.iter().all(|s| s.wall_ms > 100.0), "the latency is part of an isolated wall time");
    }

    /// A probe that says the clock settles only after `after` asks.
    struct RampingClock {
        asked: u32,
        after: u32,
    }

    impl ClockGate for RampingClock {
        async fn steady(&mut self) -> Option<bool> {
            self.asked += 1;
            Some(self.asked > self.after)
        }
    }

    #[test]
    fn warmup_waits_for_the_clock_where_a_probe_watches_it() {
        let s = Sampling { warmup: WarmupPolicy::Auto, ..sampling(5, 1e9, None) };
        let mut clock = RampingClock { asked: 0, after: 2 };
        let w = pollster::block_on(sample(&s, &mut scripted(|_| 1.0), &mut clock, |_| {})).unwrap();
        // Times are flat after two windows; the clock holds warm-up for two more.
        assert_eq!((w.warmup.len(), w.warmup_stop, clock.asked), (20, WarmupStop::Stable, 3));
    }

    /// Calls whose phases take 1 and 2 ms, then 3 and 4, …: counts the calls made.
    struct Steps(u32);
    impl Phased for Steps {
        type Error = std::convert::Infallible;
        async fn call(&mut self) -> Result<Vec<(&'static str, f64)>, Self::Error> {
            self.0 += 1;
            Ok(vec![("tokenize", self.0 as f64), ("run", 2.0 * self.0 as f64)])
        }
    }

    #[test]
    fn phased_samples_are_the_sums_of_their_phases_and_keep_only_the_timed_calls_phases() {
        let s = Sampling { mode: SamplingMode::Steady, warmup: WarmupPolicy::Fixed(2), samples: 3, max_time_ms: 1e9, target_ci_pct: None, nudge: Nudge::Auto, profile: false, gpu_timer: Default::default(), timer_cost: false };
        let mut steps = Steps(0);
        let (sampled, phases) = pollster::block_on(sample_phases(&s, &mut steps, &mut NoClock, |_| {})).unwrap();
        // One first call and two warm-up calls come before the three timed ones, isolated.
        assert_eq!((steps.0, sampled.mode, sampled.batch), (6, SamplingMode::Isolated, 1));
        let walls: Vec<f64> = sampled.samples.iter().map(|s| s.wall_ms).collect();
        assert_eq!(walls, [12.0, 15.0, 18.0]);
        let firsts: Vec<(&str, f64)> = phases.iter().map(|p| (p[0].name.as_str(), p[0].ms)).collect();
        assert_eq!(firsts, [("tokenize", 4.0), ("tokenize", 5.0), ("tokenize", 6.0)]);
    }
}
