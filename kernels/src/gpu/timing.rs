//! Timing a prepared program: batches of back-to-back dispatches kept in flight as the sampling
//! policy asks, each with GPU timestamps where the device has them, their wall times shared out
//! over the completion ticks a browser reports them in, and a program's profile, dispatch by
//! dispatch.

use super::error::GpuError;
use super::page_timer::{self, Window};
use super::prepare::Prepared;
use super::Gpu;
use crate::gpu_timer::{measure_cost, GpuTimerChoice, GpuTimerSource, GpuTimerUse};
use crate::sampling::{now_ms, sample, ClockGate, Sample, Sampled, Sampling, Timed, MAX_IN_FLIGHT};
use futures_channel::oneshot;
use std::collections::VecDeque;
use std::sync::atomic::Ordering;

/// Timestamp slots of a prepared case: one per batch in flight, and one spare so a slot is
/// reused only after its batch was read.
const TIMESTAMP_SLOTS: u32 = MAX_IN_FLIGHT + 1;
/// WebGPU resolves queries only to 256-byte-aligned offsets.
const RESOLVE_STRIDE: u64 = 256;
/// Runs of a whole program [`Gpu::profile`] takes at most: each dispatch's time is its median.
pub const PROFILE_RUNS: u32 = 5;
/// GPU time, ms, a profile's runs take at most where one run is shorter: a model's pass on a
/// software adapter (tens to hundreds of ms) gets one run.
pub const PROFILE_BUDGET_MS: f64 = 100.0;
/// WebGPU's largest query set.
const MAX_QUERIES: u32 = 4096;

impl Gpu {
    /// GPU timestamp queries for the batches in flight, where the device has them.
    fn timestamps(&self) -> Option<Queries> {
        self.timestamps.then(|| Queries {
            set: self.device.create_query_set(&wgpu::QuerySetDescriptor {
                label: Some("timestamps"),
                ty: wgpu::QueryType::Timestamp,
                count: 2 * TIMESTAMP_SLOTS,
            }),
            resolve: self.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("timestamp resolve"),
                size: TIMESTAMP_SLOTS as u64 * RESOLVE_STRIDE,
                usage: wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
                mapped_at_creation: false,
            }),
            readback: (0..TIMESTAMP_SLOTS)
                .map(|_| {
                    self.device.create_buffer(&wgpu::BufferDescriptor {
                        label: Some("timestamp readback"),
                        size: 16,
                        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                        mapped_at_creation: false,
                    })
                })
                .collect(),
        })
    }

    /// Records `batch` back-to-back runs of `work`, with the begin and end GPU timestamps in
    /// `slot` where given, resolved for reading.
    pub(super) fn encode(&self, work: &dyn Recorded, queries: Option<&Queries>, batch: u32, slot: Option<u32>) -> wgpu::CommandBuffer {
        let mut encoder = self.device.create_command_encoder(&Default::default());
        let queries = queries.zip(slot);
        let writes = queries.map(|(q, slot)| wgpu::ComputePassTimestampWrites {
            query_set: &q.set,
            beginning_of_pass_write_index: Some(2 * slot),
            end_of_pass_write_index: Some(2 * slot + 1),
        });
        work.record(&mut encoder, batch, writes);
        if let Some((q, slot)) = queries {
            let at = slot as u64 * RESOLVE_STRIDE;
            encoder.resolve_query_set(&q.set, 2 * slot..2 * slot + 2, &q.resolve, at);
            encoder.copy_buffer_to_buffer(&q.resolve, at, &q.readback[slot as usize], 0, 16);
        }
        encoder.finish()
    }

    /// Each dispatch of `case` alone: in a compute pass of its own between two timestamps, ms,
    /// the median of `runs` runs of the whole program (at most [`PROFILE_RUNS`]). Where a program
    /// is many dispatches (a model's pass), this is where its GPU time goes; their sum leaves out
    /// the gaps between them that a pass's own time holds. Empty without timestamp queries, for a
    /// program of one dispatch, where a run's queries would not fit in a query set, and where a
    /// dispatch got no valid pair of timestamps in any run ([`span_ms`]).
    pub async fn profile(&self, case: &Prepared, runs: u32) -> Result<Vec<f64>, GpuError> {
        let steps = case.steps.len() as u32;
        let runs = runs.min(PROFILE_RUNS).min(MAX_QUERIES / (2 * steps).max(1));
        if !self.timestamps || steps < 2 || runs == 0 {
            return Ok(Vec::new());
        }
        let count = 2 * steps * runs;
        let set = self.device.create_query_set(&wgpu::QuerySetDescriptor { label: Some("profile"), ty: wgpu::QueryType::Timestamp, count });
        let resolve = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("profile resolve"),
            size: u64::from(count) * 8,
            usage: wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
            mapped_at_creation: false,
        });
        let mut encoder = self.device.create_command_encoder(&Default::default());
        for at in (0..count).step_by(2) {
            let (shader, bind_group, [x, y, z]) = &case.steps[(at / 2 % steps) as usize];
            let writes = wgpu::ComputePassTimestampWrites { query_set: &set, beginning_of_pass_write_index: Some(at), end_of_pass_write_index: Some(at + 1) };
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor { label: Some("profile"), timestamp_writes: Some(writes) });
            pass.set_pipeline(&case.pipelines[*shader]);
            pass.set_bind_group(0, bind_group, &[]);
            pass.dispatch_workgroups(*x, *y, *z);
        }
        case.dispatched.fetch_add(u64::from(count / 2), Ordering::Relaxed);
        encoder.resolve_query_set(&set, 0..count, &resolve, 0);
        self.queue.submit([encoder.finish()]);
        let bytes = self.read_ranges(&[(&resolve, 0, u64::from(count) * 8)]).await;
        set.destroy();
        resolve.destroy();
        let ticks = ticks(&bytes?);
        let period = f64::from(self.queue.get_timestamp_period());
        let times: Option<Vec<f64>> = (0..steps as usize)
            .map(|i| {
                let ms: Vec<f64> = ticks.chunks_exact(2).skip(i).step_by(steps as usize).filter_map(|t| span_ms([t[0], t[1]], period)).collect();
                (!ms.is_empty()).then(|| median(&ms))
            })
            .collect();
        Ok(times.unwrap_or_default())
    }

    /// Submits one run of `case` and waits until the queue reports it done.
    pub async fn dispatch(&self, case: &Prepared) -> Result<(), GpuError> {
        let index = self.queue.submit([self.encode(case, None, 1, None)]);
        self.finished(index, self.done_after_submit()).await
    }

    /// Measures `case` by the sampling policy ([`crate::sampling`]), with GPU timestamps where
    /// the device has them.
    pub async fn measure(
        &self,
        case: &Prepared,
        sampling: &Sampling,
        clock: &mut impl ClockGate,
        on_sample: impl FnMut(u32),
    ) -> Result<Sampled, GpuError> {
        self.measure_work(case, sampling, clock, on_sample).await
    }

    /// Measures `work` as [`Gpu::measure`] measures a program: GPU timestamps (where the device
    /// has them) on queries of its own, freed when it is done; or, with `--gpu-timer page`, by
    /// the page's GPU timer alone ([`page_timer`]).
    pub async fn measure_work(
        &self,
        work: &dyn Recorded,
        sampling: &Sampling,
        clock: &mut impl ClockGate,
        on_sample: impl FnMut(u32),
    ) -> Result<Sampled, GpuError> {
        // Natively there is no page: harness's own timestamps time `--platform native` either way.
        let page = (cfg!(target_arch = "wasm32") && sampling.gpu_timer == GpuTimerChoice::Page).then(|| GpuTimerUse::for_adapter(GpuTimerSource::Page, self.timestamps));
        let timed_by_page = page.as_ref().is_some_and(GpuTimerUse::times);
        let mut sampled = self.sample_batches(work, sampling, page, true, clock, on_sample).await?;
        // The timer's cost: the same case again right after, alternately with the timer's
        // timestamps and with none, both sized on the wall clock.
        if let (true, Some(t)) = (sampling.timer_cost && timed_by_page, &mut sampled.gpu_timer) {
            t.cost = measure_cost(async |on: bool| {
                let page = match on {
                    true => GpuTimerUse::page(),
                    false => GpuTimerUse::unavailable(GpuTimerSource::Page, "off, for its cost"),
                };
                Ok(self.sample_batches(work, sampling, Some(page), false, clock, |_| {}).await?.span_and_runs())
            })
            .await?;
        }
        Ok(sampled)
    }

    /// Samples `work`'s batches: by the page's timer where `page` says it can, with no
    /// timestamps where it says it cannot, else with harness's own where the device has them;
    /// the page timer's times in the samples where `report`.
    async fn sample_batches(
        &self,
        work: &dyn Recorded,
        sampling: &Sampling,
        page: Option<GpuTimerUse>,
        report: bool,
        clock: &mut impl ClockGate,
        on_sample: impl FnMut(u32),
    ) -> Result<Sampled, GpuError> {
        let queries = if page.is_some() { None } else { self.timestamps() };
        let timed_by_page = page.as_ref().is_some_and(GpuTimerUse::times);
        if timed_by_page {
            page_timer::enable(true)?;
        }
        let mut batches = Batches {
            gpu: self,
            work,
            page,
            timed_by_page,
            report,
            queries: queries.as_ref(),
            depth: 1,
            nudge: sampling.nudged(self.nudge),
            nudged_from: self.nudged.load(Ordering::Relaxed),
            queued: VecDeque::new(),
            next_slot: 0,
            last_done_ms: f64::NEG_INFINITY,
            tick_ms: 0.0,
            returned: Vec::new(),
        };
        let measured = sample(sampling, &mut batches, clock, on_sample).await;
        // Batches queued ahead of the last sample are waited for, so their timestamp buffers
        // are free and the output read next sees a quiet queue.
        let drained = batches.drain().await;
        if timed_by_page {
            page_timer::enable(false)?;
        }
        let mut sampled = measured?;
        drained?;
        share_ticks(&mut sampled, &batches.returned);
        sampled.gpu_timer = batches.page;
        Ok(sampled)
    }

    /// Waits until submission `index` is done, as its receiver `done` reports.
    pub(super) async fn finished(&self, index: wgpu::SubmissionIndex, done: oneshot::Receiver<()>) -> Result<(), GpuError> {
        self.wait_natively(Some(index))?;
        done.await.map_err(|_| dropped_callback())
    }

    /// A receiver that fires when the work submitted so far is done.
    pub(super) fn done_after_submit(&self) -> oneshot::Receiver<()> {
        let (tx, rx) = oneshot::channel();
        self.queue.on_submitted_work_done(move || {
            let _ = tx.send(());
        });
        rx
    }
}

/// Timestamps as a query set resolves them: little-endian u64 ticks.
fn ticks(bytes: &[u8]) -> Vec<u64> {
    bytes.chunks_exact(8).map(|c| u64::from_le_bytes(c.try_into().expect("8-byte chunk"))).collect()
}

/// Milliseconds from a `begin` to an `end` tick, `period` ns a tick; none where the driver wrote
/// a zero or an unordered pair, as some do.
fn span_ms([begin, end]: [u64; 2], period: f64) -> Option<f64> {
    (end >= begin && begin != 0).then(|| (end - begin) as f64 * period / 1e6)
}

/// The median of `rounds`, 0 for none.
pub(super) fn median(rounds: &[f64]) -> f64 {
    match rounds.is_empty() {
        true => 0.0,
        false => stats::bootstrap::median_in_place(&mut rounds.to_vec()),
    }
}

fn dropped_callback() -> GpuError {
    GpuError::Wait("the queue dropped its completion callback".into())
}

/// A batch submitted and not yet read.
struct InFlight {
    batch: u32,
    submitted_ms: f64,
    index: wgpu::SubmissionIndex,
    done: oneshot::Receiver<()>,
    /// The timestamp slot and its pending mapping, where timestamps are taken.
    timestamps: Option<(u32, oneshot::Receiver<Result<(), wgpu::BufferAsyncError>>)>,
    /// The page timer's window around its submit, where that timer times it.
    window: Option<Window>,
}

/// One prepared case as the sampling policy runs it: batches of dispatches, `depth` of them
/// queued, each with its own timestamp slot read as it completes. A sample's wall time runs from
/// the later of its submit and the previous completion to its own completion, so with batches
/// queued ahead it is the GPU's throughput, not the browser's callback latency.
struct Batches<'a> {
    gpu: &'a Gpu,
    work: &'a dyn Recorded,
    /// What the page's timer said so far, where it times the batches (`--gpu-timer page`).
    page: Option<GpuTimerUse>,
    /// Whether the page's timer times them (it does not where the adapter has no timestamps).
    timed_by_page: bool,
    /// Whether the page timer's times go into the samples.
    report: bool,
    queries: Option<&'a Queries>,
    depth: u32,
    /// Whether waits are nudged ([`nudges`](super::nudges)): steady batches in a browser that needs it.
    nudge: bool,
    /// The device's nudge count when these batches began.
    nudged_from: u64,
    queued: VecDeque<InFlight>,
    next_slot: u32,
    last_done_ms: f64,
    /// When a completion was last waited for: the turn in which already-reported batches were
    /// reported.
    tick_ms: f64,
    /// The turn in which each batch that `run` returned was reported, in order.
    returned: Vec<f64>,
}

impl Batches<'_> {
    fn submit(&mut self, batch: u32) -> Result<(), GpuError> {
        let slot = self.queries.map(|_| {
            let slot = self.next_slot;
            self.next_slot = (slot + 1) % TIMESTAMP_SLOTS;
            slot
        });
        let commands = self.gpu.encode(self.work, self.queries, batch, slot);
        let submitted_ms = now_ms();
        let (index, window) = match self.timed_by_page {
            true => page_timer::around(|| self.gpu.queue.submit([commands])).map(|(i, w)| (i, Some(w)))?,
            false => (self.gpu.queue.submit([commands]), None),
        };
        let done = self.gpu.done_after_submit();
        let timestamps = slot.zip(self.queries).map(|(slot, q)| {
            let (tx, rx) = oneshot::channel();
            // Mapping waits for the submission that writes the buffer, so it resolves with it.
            q.readback[slot as usize].slice(..).map_async(wgpu::MapMode::Read, move |r| {
                let _ = tx.send(r);
            });
            (slot, rx)
        });
        self.queued.push_back(InFlight { batch, submitted_ms, index, done, timestamps, window });
        Ok(())
    }

    /// Waits for the oldest batch and returns its per-dispatch times.
    async fn complete(&mut self) -> Result<Sample, GpuError> {
        let Some(mut front) = self.queued.pop_front() else {
            return Err(GpuError::Wait("no batch in flight".into()));
        };
        // A batch already reported done when we come to it was reported in the same turn as the
        // one before (a browser that reports completion on a timer reports many at once): it is
        // dated by that turn, not by when we got round to it.
        if front.done.try_recv().map_err(|_| dropped_callback())?.is_none() {
            self.gpu.settle(self.nudge, self.gpu.finished(front.index, front.done)).await?;
            self.tick_ms = now_ms();
        }
        let done_ms = now_ms();
        let n = front.batch as f64;
        let (submitted_ms, last_done_ms) = (front.submitted_ms, self.last_done_ms);
        self.last_done_ms = done_ms;
        if let Some(window) = front.window {
            let times = self.gpu.settle(self.nudge, window.times()).await?;
            if let Some(page) = &mut self.page {
                page.add(&times);
            }
            let (gpu_ms, busy_ms) = match self.report {
                true => (times.span_ms.map(|ms| ms / n), times.busy_ms.map(|ms| ms / n)),
                false => (None, None),
            };
            return Ok(Sample { busy_ms, ..Sample::new(steady_wall_ms(submitted_ms, last_done_ms, done_ms, n, gpu_ms), gpu_ms) });
        }
        let gpu_ms = match (front.timestamps, self.queries) {
            (Some((slot, mapped)), Some(q)) => {
                self.gpu
                    .settle(self.nudge, mapped)
                    .await
                    .map_err(|_| GpuError::Map("the mapping callback was dropped".into()))?
                    .map_err(|e| GpuError::Map(e.to_string()))?;
                let buffer = &q.readback[slot as usize];
                let ticks = ticks(&buffer.slice(..).get_mapped_range().map_err(|e| GpuError::Map(e.to_string()))?);
                buffer.unmap();
                span_ms([ticks[0], ticks[1]], f64::from(self.gpu.queue.get_timestamp_period())).map(|ms| ms / n)
            }
            _ => None,
        };
        Ok(Sample::new(steady_wall_ms(submitted_ms, last_done_ms, done_ms, n, gpu_ms), gpu_ms))
    }

    /// Waits for every batch still queued, discarding their times.
    async fn drain(&mut self) -> Result<(), GpuError> {
        while !self.queued.is_empty() {
            self.complete().await?;
        }
        self.last_done_ms = f64::NEG_INFINITY;
        Ok(())
    }
}

impl Timed for Batches<'_> {
    type Error = GpuError;

    async fn run(&mut self, batch: u32) -> Result<Sample, GpuError> {
        // Batches queued at another size belong to calibration: let them finish unrecorded.
        if self.queued.front().is_some_and(|f| f.batch != batch) {
            self.drain().await?;
        }
        while self.queued.len() < self.depth.max(1) as usize {
            self.submit(batch)?;
        }
        let sample = self.complete().await?;
        self.returned.push(self.tick_ms);
        Ok(sample)
    }

    fn keep_in_flight(&mut self, batches: u32) {
        self.depth = batches.clamp(1, MAX_IN_FLIGHT);
    }

    fn gpu_timer(&self) -> bool {
        self.queries.is_some() || (self.timed_by_page && self.report)
    }

    fn completion_latency_ms(&self) -> f64 {
        self.gpu.latency_ms
    }

    fn nudges(&self) -> u64 {
        self.gpu.nudged.load(Ordering::Relaxed) - self.nudged_from
    }
}

/// A batch's wall time per dispatch, from the later of its submit and the previous batch's
/// completion to its own completion (`n` dispatches): with batches queued ahead, the GPU's
/// throughput. That span is too short when the previous completion was seen late (a browser that
/// reports completions in bursts): a batch cannot take less than its own GPU time (`gpu_ms`, per
/// dispatch), so below that the sample is the span from its own submit instead, which by
/// causality holds the whole batch.
pub fn steady_wall_ms(submitted_ms: f64, previous_done_ms: f64, done_ms: f64, n: f64, gpu_ms: Option<f64>) -> f64 {
    let throughput = (done_ms - submitted_ms.max(previous_done_ms)) / n;
    match gpu_ms {
        Some(gpu) if throughput < gpu => (done_ms - submitted_ms) / n,
        _ => throughput,
    }
}

/// Completions seen closer together than this came in one turn of the browser's event loop.
pub const SAME_TICK_MS: f64 = 1.0;

/// Per-dispatch wall times of queued batches of `batch` dispatches that were seen complete at
/// `done[1..]` (`done[0]`: the completion before the first), with each batch's GPU time per
/// dispatch in `gpu` where timestamps gave one. A browser that reports completion on a timer
/// (Firefox: every ~100 ms) reports many batches in one tick; each batch of a tick gets the tick's
/// share: the time since the previous tick over the batches it completed, which with the GPU kept
/// busy is the GPU's throughput. A completion that comes sooner after the one before than its own
/// batch's GPU time means the one before was seen late (Chrome delivers completions in bursts):
/// the two share their span too, rather than one counting the other's time.
pub fn spread_ticks(done: &[f64], batch: u32, gpu: &[Option<f64>]) -> Vec<f64> {
    let mut walls = vec![0.0; done.len().saturating_sub(1)];
    let too_soon = |i: usize| SAME_TICK_MS.max(gpu.get(i - 1).copied().flatten().unwrap_or(0.0) * f64::from(batch));
    let mut start = 1;
    while start < done.len() {
        let mut end = start;
        while end + 1 < done.len() && done[end + 1] - done[end] < too_soon(end + 1) {
            end += 1;
        }
        let per = (done[end] - done[start - 1]) / ((end - start + 1) as f64 * batch as f64);
        walls[start - 1..end].fill(per);
        start = end + 1;
    }
    walls
}

/// Gives the timed samples of `sampled`, taken with batches in flight, their share of the
/// completion ticks ([`spread_ticks`]), but never less than their own GPU time; `returned` holds
/// when each batch that the sampling ran was seen complete, in order, the timed samples last.
/// The ticks are spread over all of `returned`, not from the last completion before the timed
/// samples: the first timed batch may be seen in one tick with the warm-up batch before it, and
/// then the two share that tick's span. Counted from that warm-up completion alone, it read the
/// few µs between the two (onnxruntime-web's JSEP on Whisper-tiny in Chrome: 0.01 ms for a pass of
/// 5 ms, docs/hardware/h100-goals.md). Batches before the timed ones that share a tick with them
/// are the warm-up's, of the same size: calibration runs one batch at a time, each waited for.
pub fn share_ticks(sampled: &mut Sampled, returned: &[f64]) {
    let timed = sampled.samples.len();
    if sampled.in_flight <= 1 || returned.len() <= timed {
        return;
    }
    let untimed = returned.len() - 1 - timed;
    let gpu: Vec<Option<f64>> = std::iter::repeat_n(None, untimed).chain(sampled.samples.iter().map(|s| s.gpu_ms)).collect();
    let walls = spread_ticks(returned, sampled.batch, &gpu);
    for (s, wall) in sampled.samples.iter_mut().zip(walls[untimed..].iter().copied()) {
        // A tick of no length (everything already done when first looked at, as on a CPU adapter
        // that runs work at submit) says nothing: the sample keeps the time it was seen. A share
        // below the batch's own GPU time cannot be (the tick before it was seen late): the batch
        // took at least that. Not the span from its own submit (`steady_wall_ms`), which holds the
        // batches queued ahead of it too: two batches of one tick whose GPU times differed by 1%
        // read one and three times the GPU time with three in flight (Chrome, H200 and SwiftShader).
        if wall > 0.0 {
            s.wall_ms = s.gpu_ms.map_or(wall, |gpu| wall.max(gpu));
        }
    }
}

/// Runs a profile takes after `samples` ([`Gpu::profile`]): as many as [`PROFILE_BUDGET_MS`] holds
/// at their median, 1 to [`PROFILE_RUNS`].
pub fn profile_runs(samples: &[Sample]) -> u32 {
    if samples.is_empty() {
        return 1;
    }
    let run_ms = median(&samples.iter().map(|s| s.gpu_ms.unwrap_or(s.wall_ms)).collect::<Vec<_>>());
    ((PROFILE_BUDGET_MS / run_ms).floor() as u32).clamp(1, PROFILE_RUNS)
}

/// Work the timer runs in batches: a program of harness's, or a user's GPU bench.
pub trait Recorded {
    /// Records `batch` back-to-back runs into `encoder`; `timestamps`, where given, must be
    /// written at the beginning of the first pass and the end of the last, so they span the
    /// batch.
    fn record(&self, encoder: &mut wgpu::CommandEncoder, batch: u32, timestamps: Option<wgpu::ComputePassTimestampWrites<'_>>);
}

impl Recorded for Prepared {
    fn record(&self, encoder: &mut wgpu::CommandEncoder, batch: u32, timestamps: Option<wgpu::ComputePassTimestampWrites<'_>>) {
        let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor { label: Some("case"), timestamp_writes: timestamps });
        // State persists within a pass: a one-step program sets it once and then only
        // dispatches, which keeps encoding a large batch cheap in the browser.
        let single = self.steps.len() == 1;
        self.dispatched.fetch_add(u64::from(batch) * self.steps.len() as u64, Ordering::Relaxed);
        for i in 0..batch {
            for (shader, bind_group, [x, y, z]) in &self.steps {
                if i == 0 || !single {
                    pass.set_pipeline(&self.pipelines[*shader]);
                    pass.set_bind_group(0, bind_group, &[]);
                }
                pass.dispatch_workgroups(*x, *y, *z);
            }
        }
    }
}

/// GPU timestamp queries for the batches in flight; freed on drop.
pub(super) struct Queries {
    set: wgpu::QuerySet,
    resolve: wgpu::Buffer,
    readback: Vec<wgpu::Buffer>,
}

impl Drop for Queries {
    fn drop(&mut self) {
        self.set.destroy();
        self.resolve.destroy();
        self.readback.iter().for_each(wgpu::Buffer::destroy);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_zero_or_unordered_pair_of_timestamps_is_no_time() {
        assert_eq!(span_ms([1_000, 3_000], 1.0), Some(0.002));
        assert_eq!(span_ms([1_000, 3_000], 2.0), Some(0.004));
        assert_eq!(span_ms([0, 3_000], 1.0), None);
        assert_eq!(span_ms([3_000, 1_000], 1.0), None);
        assert_eq!(ticks(&[1, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0]), [1, 256]);
    }

    #[test]
    fn a_profile_takes_as_many_runs_as_its_budget_holds() {
        let at = |gpu: &[Option<f64>]| profile_runs(&gpu.iter().map(|&g| Sample::new(40.0, g)).collect::<Vec<_>>());
        // A pass on a GPU; one of 30 ms; one on a software adapter; no timestamps: the wall's 40 ms.
        assert_eq!(at(&[Some(2.2), Some(2.1), Some(2.3)]), PROFILE_RUNS);
        assert_eq!(at(&[Some(30.0), Some(31.0), Some(29.0)]), 3);
        assert_eq!(at(&[Some(250.0)]), 1);
        assert_eq!(at(&[None, None]), 2);
        assert_eq!(at(&[]), 1);
    }

    #[test]
    fn batches_reported_in_one_tick_share_it() {
        // Firefox's ~100 ms completion timer: five 5 ms batches of 1000 dispatches each come back
        // in two ticks (three, then two), the GPU busy throughout.
        let done = [0.0, 100.0, 100.2, 100.3, 125.0, 125.1];
        let walls = spread_ticks(&done, 1000, &[None; 5]);
        let tick1 = 100.3 / 3.0 / 1000.0;
        let tick2 = (125.1 - 100.3) / 2.0 / 1000.0;
        for (got, want) in walls.iter().zip([tick1, tick1, tick1, tick2, tick2]) {
            assert!((got - want).abs() < 1e-9, "{walls:?}");
        }
        // Completions a batch apart (native, Chromium) keep their own intervals.
        assert_eq!(spread_ticks(&[10.0, 15.0, 20.0, 26.0], 2, &[Some(2.4); 3]), [2.5, 2.5, 3.0]);
        assert!(spread_ticks(&[1.0], 5, &[]).is_empty());
    }

    #[test]
    fn a_completion_seen_late_shares_its_span_with_the_one_seen_soon_after_it() {
        // Chrome: batches of 5 ms on the GPU (1000 dispatches of 5 µs), the GPU busy throughout;
        // the completion at 15 ms was seen at 18.5, the next on time at 20. 1.5 ms apart is less
        // than a batch takes, so the two share the 10 ms since 10: 5 µs each, not 8.5 and a
        // sample that counts its queueing behind the late one.
        let gpu = [Some(0.005); 5];
        let walls = spread_ticks(&[0.0, 5.0, 10.0, 18.5, 20.0, 25.0], 1000, &gpu);
        for w in &walls {
            assert!((w - 0.005).abs() < 1e-12, "{walls:?}");
        }
        // Without GPU times nothing tells a late completion from a slow batch.
        let walls = spread_ticks(&[0.0, 5.0, 10.0, 18.5, 20.0, 25.0], 1000, &[None; 5]);
        assert!((walls[2] - 0.0085).abs() < 1e-12 && (walls[3] - 0.0015).abs() < 1e-12, "{walls:?}");
    }

    /// Steady `samples` of `batch` dispatches each, `in_flight` batches queued.
    fn steady(samples: Vec<Sample>, batch: u32, in_flight: u32) -> Sampled {
        Sampled {
            first_ms: 1.0,
            warmup: Vec::new(),
            warmup_stop: stats::warmup::WarmupStop::Fixed,
            samples,
            stopped_by: crate::sampling::StopReason::SampleCount,
            mode: crate::sampling::SamplingMode::Steady,
            batch,
            in_flight,
            timed_span: (0.0, 1.0),
            nudges: 0,
            gpu_timer: None,
        }
    }

    #[test]
    fn a_wall_sample_is_never_below_its_batchs_gpu_time() {
        // Batch 2 was submitted at 0 and took 4 ms on the GPU (10 dispatches), but batch 1's
        // completion was seen late, at 9.9 ms, and batch 2's at 10: the throughput view says
        // 0.01 ms a dispatch, which cannot be.
        assert_eq!(steady_wall_ms(0.0, 9.9, 10.0, 10.0, Some(0.4)), 1.0);
        // Seen on time, the throughput view stands (it is the GPU's time with batches queued).
        assert_eq!(steady_wall_ms(0.0, 6.0, 10.0, 10.0, Some(0.4)), 0.4);
        assert_eq!(steady_wall_ms(0.0, 9.9, 10.0, 10.0, None), (10.0 - 9.9) / 10.0);
        // A tick's share below a batch's GPU time is not given to it.
        let sample = |wall_ms: f64, gpu_ms: f64| Sample::new(wall_ms, Some(gpu_ms));
        let mut sampled = steady(vec![sample(0.5, 0.05), sample(0.5, 0.03)], 10, 2);
        share_ticks(&mut sampled, &[0.0, 0.8, 0.81, 5.0]);
        let walls: Vec<f64> = sampled.samples.iter().map(|s| s.wall_ms).collect();
        assert!(walls[0] == 0.05 && (walls[1] - 0.419).abs() < 1e-12, "the first batch's share (0.001) is below its 0.05 GPU ms: {walls:?}");
        // Two batches seen in one tick share it, each at least its own GPU time, even where the
        // share falls between their GPU times; neither keeps the span from its submit, which with
        // three in flight is three batches (seen in Chrome: 2362.8 and 7290.6 ms for 2359.8 and
        // 2394.0 of GPU time).
        sampled.samples = vec![sample(1.0, 1.0), sample(7290.6, 2394.0), sample(1.0, 1.0)];
        sampled.batch = 1;
        sampled.in_flight = 3;
        share_ticks(&mut sampled, &[0.0, 1.0, 1.0 + 4725.6, 1.0 + 4725.6 + 0.5, 4728.1]);
        let walls: Vec<f64> = sampled.samples.iter().map(|s| s.wall_ms).collect();
        assert_eq!(walls[1], 2394.0, "{walls:?}");
    }

    #[test]
    fn a_first_timed_batch_seen_in_one_tick_with_the_warm_up_before_it_shares_that_tick() {
        // Wall clock only (onnxruntime-web), batches of 1 run of about 5 ms, 3 in flight: warm-up
        // batches seen at 5, 10 and 15 ms, the last of them late, at 19.99, in one tick with the
        // first timed batch at 20; the timed ones after at 25 and 30.
        let wall = |wall_ms: f64| Sample::new(wall_ms, None);
        let mut sampled = steady(vec![wall(0.01), wall(5.0), wall(5.0)], 1, 3);
        share_ticks(&mut sampled, &[0.0, 5.0, 10.0, 19.99, 20.0, 25.0, 30.0]);
        let walls: Vec<f64> = sampled.samples.iter().map(|s| s.wall_ms).collect();
        // The late warm-up batch and the first timed one share the 10 ms since 10.
        assert!((walls[0] - 5.0).abs() < 1e-9 && walls[1] == 5.0 && walls[2] == 5.0, "{walls:?}");
    }
}
