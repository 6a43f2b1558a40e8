//! Timing work that records and submits its own command buffers on harness's queue: a framework
//! set up on harness's device (burn on cubecl-wgpu), any wgpu application (`GpuWork::submitted` in
//! harness-bench). Natively, each batch of runs is bracketed by two timestamp-only submissions on
//! the same queue: a queue runs its submissions in order, so the end's timestamp minus the
//! begin's is the batch's GPU span. In the browser the page's GPU timer times every pass the runs
//! submit ([`super::page_timer`]): span and busy.

use super::error::GpuError;
use super::page_timer;
use super::Gpu;
use crate::gpu_timer::{GpuTimerSource, GpuTimerUse, TimerCounts, WindowTimes};
use crate::sampling::{now_ms, sample, ClockGate, Sample, Sampled, Sampling, Timed};
use std::future::Future;
use std::pin::Pin;

/// One run of work that submits itself: awaited before the next starts.
pub type Submit<'a> = &'a dyn Fn() -> Pin<Box<dyn Future<Output = ()>>>;

/// The queries of the native bracket: a begin and an end timestamp, resolved and read back.
struct Bracket {
    set: wgpu::QuerySet,
    resolve: wgpu::Buffer,
    readback: wgpu::Buffer,
}

impl Gpu {
    /// Measures `run` (work labelled `label` that submits its own command buffers) by the
    /// sampling policy: batches of runs, each awaited before the next, timed natively between
    /// timestamp-only submissions before and after the batch, in the browser by the page's GPU
    /// timer, by the wall clock always. A batch that submitted nothing is an error that names
    /// the fix.
    pub async fn measure_submitted(&self, label: &str, run: Submit<'_>, sampling: &Sampling, clock: &mut impl ClockGate, on_sample: impl FnMut(u32)) -> Result<Sampled, GpuError> {
        let page = cfg!(target_arch = "wasm32") && self.timestamps;
        let bracket = (!cfg!(target_arch = "wasm32") && self.timestamps).then(|| self.bracket());
        let source = if page { GpuTimerSource::Page } else { GpuTimerSource::Bracket };
        let timer = GpuTimerUse::for_adapter(source, self.timestamps);
        let mut runs = Runs { gpu: self, label, run, page, bracket, timer };
        if page {
            page_timer::enable(true)?;
        }
        let sampled = sample(sampling, &mut runs, clock, on_sample).await;
        if page {
            page_timer::enable(false)?;
        }
        let mut sampled = sampled?;
        sampled.gpu_timer = Some(runs.timer);
        Ok(sampled)
    }

    fn bracket(&self) -> Bracket {
        let buffer = |label, usage| self.device.create_buffer(&wgpu::BufferDescriptor { label: Some(label), size: 16, usage, mapped_at_creation: false });
        Bracket {
            set: self.device.create_query_set(&wgpu::QuerySetDescriptor { label: Some("bracket"), ty: wgpu::QueryType::Timestamp, count: 2 }),
            resolve: buffer("bracket resolve", wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC),
            readback: buffer("bracket readback", wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST),
        }
    }

    /// Submits an empty compute pass that writes timestamp `at` of `b`; at the end, resolves both
    /// timestamps for reading.
    fn submit_mark(&self, b: &Bracket, at: u32) -> wgpu::SubmissionIndex {
        let mut encoder = self.device.create_command_encoder(&Default::default());
        let (begin, end) = if at == 0 { (Some(0), None) } else { (None, Some(1)) };
        let writes = wgpu::ComputePassTimestampWrites { query_set: &b.set, beginning_of_pass_write_index: begin, end_of_pass_write_index: end };
        encoder.begin_compute_pass(&wgpu::ComputePassDescriptor { label: Some("bracket"), timestamp_writes: Some(writes) });
        if at == 1 {
            encoder.resolve_query_set(&b.set, 0..2, &b.resolve, 0);
            encoder.copy_buffer_to_buffer(&b.resolve, 0, &b.readback, 0, 16);
        }
        self.queue.submit([encoder.finish()])
    }
}

/// The number of a submission. wgpu keeps it private; its `Debug` shows it
/// (`SubmissionIndex { index: 7 }`), and one queue numbers its submissions one after another.
fn number(index: &wgpu::SubmissionIndex) -> Option<u64> {
    format!("{index:?}").chars().filter(char::is_ascii_digit).collect::<String>().parse().ok()
}

struct Runs<'a> {
    gpu: &'a Gpu,
    label: &'a str,
    run: Submit<'a>,
    /// Whether the page's timer times the batches (in a browser, with timestamps).
    page: bool,
    /// The native bracket, where the device has timestamps.
    bracket: Option<Bracket>,
    timer: GpuTimerUse,
}

impl Timed for Runs<'_> {
    type Error = GpuError;

    async fn run(&mut self, batch: u32) -> Result<Sample, GpuError> {
        let gpu = self.gpu;
        let t0 = now_ms();
        let begun = self.bracket.as_ref().map(|b| gpu.submit_mark(b, 0));
        if self.page {
            page_timer::open()?;
        }
        for _ in 0..batch {
            (self.run)().await;
        }
        let window = if self.page { Some(page_timer::close()?) } else { None };
        let ended = match &self.bracket {
            Some(b) => gpu.submit_mark(b, 1),
            None => gpu.queue.submit([]),
        };
        if let (Some(Some(a)), Some(b)) = (begun.as_ref().map(number), number(&ended)) {
            if b <= a + 1 {
                return Err(GpuError::NothingSubmitted(self.label.to_string()));
            }
        }
        gpu.finished(ended, gpu.done_after_submit()).await?;
        let n = batch as f64;
        let wall_ms = (now_ms() - t0) / n;
        let times = match (window, &self.bracket) {
            (Some(w), _) => {
                let times = w.times().await?;
                if times.counts.command_buffers == 0 {
                    return Err(GpuError::NothingSubmitted(self.label.to_string()));
                }
                times
            }
            (None, Some(b)) => {
                let ticks = gpu.map_read(&b.readback, 16).await?;
                let t: Vec<u64> = ticks.chunks_exact(8).map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes"))).collect();
                let span = (t[1] >= t[0] && t[0] != 0).then(|| (t[1] - t[0]) as f64 * f64::from(gpu.queue.get_timestamp_period()) / 1e6);
                WindowTimes { span_ms: span, busy_ms: None, counts: TimerCounts::default() }
            }
            (None, None) => WindowTimes::default(),
        };
        match (self.page, self.bracket.is_some()) {
            (true, _) => self.timer.add(&times),
            // The bracket times the span alone: it sees no passes, so none are counted.
            (false, true) => self.timer.windows += 1,
            (false, false) => {}
        }
        Ok(Sample { busy_ms: times.busy_ms.map(|ms| ms / n), ..Sample::new(wall_ms, times.span_ms.map(|ms| ms / n)) })
    }

    fn gpu_timer(&self) -> bool {
        self.page || self.bracket.is_some()
    }

    fn completion_latency_ms(&self) -> f64 {
        self.gpu.latency_ms
    }
}
