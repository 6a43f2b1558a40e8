//! One planned case: what it ran, how it ended, and what it measured, built from the page's
//! measurement and the check's verdict; and the cases of a run counted by how they ended.

use super::{describe_failure, CaseRoofline, CaseTime, ClockStats, ColdStartReport, EngineProfile, Latency, TextReport, Throughput, Timer};
use kernels::check::Verdict;
use kernels::sampling::{Sample, StopReason};
use kernels::gpu_timer::GpuTimerUse;
use kernels::wire::CaseMeasurement;
use kernels::{CaseInfo, CaseSpec, SamplingMode, Shape, WarmupStop};
use serde::{Deserialize, Serialize};
use stats::{summarize, Summary};

/// What happened to one case.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum CaseStatus {
    /// Measured and within tolerance.
    Passed,
    /// Measured, but the output was wrong.
    Failed,
    /// Exceeded the case timeout.
    TimedOut,
    /// The page or GPU reported an error.
    Error,
    /// Never reached.
    NotRun,
    /// The browser or its driver died while it ran (crash, kill, out of memory); `message` says
    /// what they left behind.
    Crashed,
    /// The GPU device was lost while it ran (a driver reset, a GPU removed, `destroy()`);
    /// `message` has the reason the platform gave. The cases after it ran on a fresh device.
    DeviceLost,
    /// The platform has no way to run it (TensorFlow.js has no op for the kernel); `message`
    /// says why. Not a failure.
    Unsupported,
    /// Measured, but there is no independent reference to check it against (a user kernel whose
    /// manifest names no expected output); `message` says what it agreed with instead. Neither a
    /// pass nor a failure: agreement between platforms is not correctness.
    Unchecked,
}

impl CaseStatus {
    /// Measured, and not found wrong: passed, or unchecked.
    pub fn is_good(self) -> bool {
        matches!(self, CaseStatus::Passed | CaseStatus::Unchecked)
    }

    /// The status as written on disk.
    pub fn as_str(self) -> &'static str {
        match self {
            CaseStatus::Passed => "passed",
            CaseStatus::Failed => "failed",
            CaseStatus::TimedOut => "timedOut",
            CaseStatus::Error => "error",
            CaseStatus::NotRun => "notRun",
            CaseStatus::Crashed => "crashed",
            CaseStatus::DeviceLost => "deviceLost",
            CaseStatus::Unsupported => "unsupported",
            CaseStatus::Unchecked => "unchecked",
        }
    }
}

/// Number of cases in each status.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Counts {
    /// Measured and correct.
    pub passed: usize,
    /// Measured, wrong answer.
    pub failed: usize,
    /// Did not finish in time.
    pub timed_out: usize,
    /// Raised an error.
    pub error: usize,
    /// Never reached.
    pub not_run: usize,
    /// Its browser or driver died while it ran.
    #[serde(default)]
    pub crashed: usize,
    /// Its GPU device was lost while it ran.
    #[serde(default)]
    pub device_lost: usize,
    /// Not supported on the platform (no TensorFlow.js op for the kernel): neither passed nor
    /// failed.
    #[serde(default)]
    pub unsupported: usize,
    /// Measured with no independent reference to check against: neither passed nor failed.
    #[serde(default)]
    pub unchecked: usize,
}

impl Counts {
    /// True when every case the platform supports passed.
    pub fn all_passed(&self) -> bool {
        self.failed + self.timed_out + self.error + self.not_run + self.crashed + self.device_lost == 0
    }
}

/// One case's measurement, statistics and check.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CaseReport {
    /// `kernel/shape/seed=N`.
    pub id: String,
    /// Kernel name.
    pub kernel: String,
    /// The kernel's variant when not its default (what `harness tune` tried or its cache
    /// picked).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variant: Option<String>,
    /// What the kernel computes.
    pub summary: String,
    /// Dimensions.
    pub shape: Shape,
    /// Names of the dimensions.
    pub dims: Vec<String>,
    /// Input seed.
    pub seed: u64,
    /// Outcome.
    pub status: CaseStatus,
    /// Why it is not passed, in words.
    pub message: Option<String>,
    /// Shader-module and pipeline creation, ms, of the pipelines this case compiled.
    pub pipeline_ms: Option<f64>,
    /// Its pipelines an earlier case of the same page (or native device) compiled, which it
    /// reused: `pipeline_ms` leaves them out. Absent where none were.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pipelines_reused: Option<u32>,
    /// First dispatch wall time, ms (lazy compilation and first use).
    pub first_dispatch_ms: Option<f64>,
    /// Time of all warm-up samples together by the headline timer, ms.
    pub warmup_ms: Option<f64>,
    /// Per-dispatch time of each warm-up sample by the headline timer, ms.
    #[serde(default)]
    pub warmup: Vec<f64>,
    /// What ended warm-up: the count asked for, or (auto) times that stopped falling, the limit
    /// or the budget.
    #[serde(default)]
    pub warmup_stop: Option<WarmupStop>,
    /// Every timed sample.
    pub samples: Vec<Sample>,
    /// Whether the sample count or the time budget ended sampling.
    pub stopped_by: Option<StopReason>,
    /// Steady batches or isolated dispatches; every time of the case is per dispatch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sampling: Option<SamplingMode>,
    /// Dispatches per sample (steady: the batch size N).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub batch: Option<u32>,
    /// Batches kept in flight while sampling.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub in_flight: Option<u32>,
    /// Empty command buffers submitted while the steady batches waited, where the browser was
    /// nudged (`--nudge`); absent where none were.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nudges: Option<u64>,
    /// The wall clock's smallest step, ms, where the platform measured it (a CPU bench of
    /// `harness bench`): no sample is reported below one step over its iterations.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timer_resolution_ms: Option<f64>,
    /// The GPU's clocks, power and throttle reasons while the case ran, where a probe watched.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock: Option<ClockStats>,
    /// The timer behind `median` and throughput: GPU timestamps when every sample has one.
    pub timer: Option<Timer>,
    /// Statistics of wall-clock samples.
    pub wall: Option<Summary>,
    /// Statistics of GPU-timestamp samples: the pass harness records a batch in, or the page GPU
    /// timer's span (`gpu_timer` says which).
    pub gpu: Option<Summary>,
    /// Statistics of the page GPU timer's busy times: each sample's passes' times summed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub busy: Option<Summary>,
    /// Which GPU timer timed the case and what it could not time, or why there is no GPU time;
    /// absent for harness's own timestamps.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu_timer: Option<GpuTimerUse>,
    /// FLOPs of one dispatch (kernel's cost model).
    pub flops: f64,
    /// Bytes one dispatch moves at least (inputs read once, output written once).
    pub bytes: f64,
    /// flops / median time of `timer`, in GFLOP/s.
    pub gflops: Option<f64>,
    /// bytes / median time of `timer`, in GB/s.
    pub gbps: Option<f64>,
    /// The check against the f64 reference.
    pub correctness: Option<Verdict>,
    /// For model cases: items (tokens, sentences) per run and the rate the headline median
    /// gives.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub throughput: Option<Throughput>,
    /// Its fraction of the run's peak that binds it, where the run measured both peaks with the
    /// same timer: derived by [`roofline::apply`](super::roofline::apply).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub roofline: Option<CaseRoofline>,
    /// The attempts before this one (`--retries`), in order: each crashed or timed out.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub earlier_attempts: Vec<Attempt>,
    /// The engine's own profile of one run, summed by op: harness's for a program of several
    /// dispatches, onnxruntime-web's JSEP's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engine_profile: Option<EngineProfile>,
    /// Where onnxruntime-web placed the session's nodes, provider by provider, read from its
    /// verbose log: how many fell back to its CPU provider, and which. Absent for other engines.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub placement: Vec<kernels::placement::ProviderNodes>,
    /// The optional WebGPU features its shaders used (`shader-f16`, `subgroups`,
    /// `chromium-experimental-subgroup-matrix`: its GEMMs ran on tensor cores, with f32 inputs
    /// split into two f16 parts each); absent where none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub features: Vec<String>,
    /// A cold-start case's fresh pages, phase by phase (`harness run --cold-start`); its samples
    /// are their times to the first result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cold_start: Option<ColdStartReport>,
    /// A from-text case's calls, phase by phase (`harness run --from-text`): tokenize, run and
    /// pool; its samples are the calls' sums.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from_text: Option<TextReport>,
    /// Where the case's time went, phase by phase, the platform's and harness's, where it was
    /// measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub case_time: Option<CaseTime>,
}

/// An attempt at a case that did not settle it: it crashed or timed out, and was run again.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Attempt {
    /// `crashed` or `timedOut`.
    pub status: CaseStatus,
    /// What happened, as the case's message would have said.
    pub message: String,
}

/// The `variant` a case ran that its `id` does not already end with: what a table must add.
pub fn untold_variant<'a>(id: &str, variant: Option<&'a str>) -> Option<&'a str> {
    variant.filter(|v| !id.ends_with(v))
}

impl CaseReport {
    /// The case as tables name it: its id, and the variant where the id does not say it (a
    /// variant a tune cache picked keeps the default's id, so browsers line up).
    pub fn label(&self) -> String {
        match untold_variant(&self.id, self.variant.as_deref()) {
            Some(v) => format!("{} [{v}]", self.id),
            None => self.id.clone(),
        }
    }

    /// Whether its browser or driver died while it ran, in this attempt or an earlier one.
    pub fn saw_a_crash(&self) -> bool {
        self.status == CaseStatus::Crashed || self.earlier_attempts.iter().any(|a| a.status == CaseStatus::Crashed)
    }

    /// A case with no measurement (timed out, error, not run).
    pub fn unmeasured(spec: &CaseSpec, info: &CaseInfo, status: CaseStatus, message: Option<String>) -> Self {
        CaseReport {
            id: spec.id.clone(),
            kernel: spec.kernel.clone(),
            variant: spec.variant.clone(),
            summary: info.summary.clone(),
            shape: spec.shape.clone(),
            dims: info.dims.clone(),
            seed: spec.seed,
            status,
            message,
            pipeline_ms: None,
            pipelines_reused: None,
            first_dispatch_ms: None,
            warmup_ms: None,
            warmup: Vec::new(),
            warmup_stop: None,
            samples: Vec::new(),
            stopped_by: None,
            sampling: None,
            batch: None,
            in_flight: None,
            nudges: None,
            timer_resolution_ms: None,
            clock: None,
            timer: None,
            wall: None,
            gpu: None,
            busy: None,
            gpu_timer: None,
            flops: info.flops,
            bytes: info.bytes,
            gflops: None,
            gbps: None,
            correctness: None,
            throughput: info.rate.as_ref().map(|r| Throughput {
                item: r.item.clone(),
                per_run: r.per_run,
                per_second: None,
                ms_per_item: None,
                dispatches_per_run: info.dispatches,
            }),
            roofline: None,
            earlier_attempts: Vec::new(),
            engine_profile: None,
            placement: Vec::new(),
            features: Vec::new(),
            cold_start: spec.cold.map(|c| ColdStartReport::of(c.precompile, Vec::new())),
            from_text: None,
            case_time: None,
        }
    }

    /// A measured case: statistics from its samples, status from `verdict`.
    pub fn measured(spec: &CaseSpec, info: &CaseInfo, m: CaseMeasurement, verdict: Verdict) -> Self {
        let mut case = CaseReport::unmeasured(spec, info, CaseStatus::Passed, None);
        if !verdict.passed {
            case.status = CaseStatus::Failed;
            case.message = Some(describe_failure(&verdict));
        }
        case.pipeline_ms = Some(m.pipeline_ms);
        case.pipelines_reused = (m.pipelines_reused > 0).then_some(m.pipelines_reused);
        case.first_dispatch_ms = Some(m.first_dispatch_ms);
        case.warmup_ms = Some(m.warmup.iter().sum::<f64>() * m.batch as f64);
        case.warmup = m.warmup;
        case.warmup_stop = Some(m.warmup_stop);
        case.samples = m.samples;
        case.stopped_by = Some(m.stopped_by);
        case.sampling = Some(m.sampling);
        case.batch = Some(m.batch);
        case.in_flight = Some(m.in_flight);
        case.nudges = (m.nudges > 0).then_some(m.nudges);
        case.timer_resolution_ms = m.timer_resolution_ms;
        case.engine_profile = m.engine_profile.as_deref().and_then(EngineProfile::of);
        case.placement = m.placement;
        case.features = m.features;
        case.gpu_timer = m.gpu_timer;
        if let (Some(report), Some(c)) = (&mut case.cold_start, m.cold) {
            *report = ColdStartReport::of(report.precompile, vec![c]);
        }
        case.from_text = m.split.map(TextReport::of);
        case.case_time = (!m.phases.is_empty()).then(|| CaseTime::new(0.0, m.phases, Vec::new()));
        if let (Some(t), Some(d)) = (&mut case.throughput, m.dispatches) {
            // The program the platform ran, whose kernels it chose for its adapter.
            t.dispatches_per_run = Some(d);
        }
        case.correctness = Some(verdict);
        case.summarize_samples();
        case
    }

    /// Sets the statistics, the headline timer and the rates from the samples. A cold start's
    /// samples are one first run each: no rate of the steady state follows from them.
    fn summarize_samples(&mut self) {
        let walls: Vec<f64> = self.samples.iter().map(|s| s.wall_ms).collect();
        let gpus: Option<Vec<f64>> = self.samples.iter().map(|s| s.gpu_ms).collect();
        let busy: Option<Vec<f64>> = self.samples.iter().map(|s| s.busy_ms).collect();
        self.wall = summarize(&walls);
        self.gpu = gpus.as_deref().and_then(summarize);
        self.busy = busy.as_deref().and_then(summarize);
        // A call from text is timed as an app awaits it: its GPU time stands beside the wall's.
        let gpu_headline = self.gpu.filter(|_| self.from_text.is_none());
        let (timer, headline) = match (gpu_headline, self.wall) {
            (Some(g), _) => (Some(Timer::GpuTimestamp), Some(g)),
            (None, Some(w)) => (Some(Timer::WallClock), Some(w)),
            _ => (None, None),
        };
        self.timer = timer;
        if let Some(h) = headline.filter(|h| h.median > 0.0 && self.cold_start.is_none()) {
            self.gflops = Some(self.flops / h.median / 1e6);
            self.gbps = Some(self.bytes / h.median / 1e6);
            if let Some(t) = &mut self.throughput {
                t.per_second = Some(t.per_run / h.median * 1e3);
                t.ms_per_item = Some(h.median / t.per_run);
            }
        }
    }

    /// One cold-start case of `pages`, each a report of one fresh page: their samples and phases
    /// together, and the first page's status and check unless a later one did worse (failed,
    /// or ran into an error), whose then stand.
    pub fn merge_cold(pages: Vec<CaseReport>) -> Option<CaseReport> {
        let worst = pages.iter().position(|p| !p.status.is_good()).unwrap_or(0);
        let mut samples = Vec::new();
        let mut measured = Vec::new();
        let mut precompile = false;
        for page in &pages {
            samples.extend(page.samples.iter().copied());
            if let Some(c) = &page.cold_start {
                precompile = c.precompile;
                measured.extend(c.pages.iter().cloned());
            }
        }
        let mut case = pages.into_iter().nth(worst)?;
        case.samples = samples;
        case.cold_start = Some(ColdStartReport::of(precompile, measured));
        case.summarize_samples();
        Some(case)
    }

    /// The headline timer as tables name it: `gpu` (harness's timestamps), `gpu span·page` (the
    /// page GPU timer's span), `wall`, or `–` for an unmeasured case.
    pub fn timer_label(&self) -> &'static str {
        match self.timer {
            Some(Timer::GpuTimestamp) => self.gpu_label(),
            Some(t) => t.short(),
            None => "–",
        }
    }

    /// Its GPU timer as tables name it: `gpu` for harness's own timestamps, `gpu span·page` for
    /// the page GPU timer, `gpu span·bracket` for bracketing submissions.
    pub fn gpu_label(&self) -> &'static str {
        self.gpu_timer.as_ref().map_or(Timer::GpuTimestamp.short(), |t| t.source.short())
    }

    /// Statistics of the headline timer.
    pub fn headline(&self) -> Option<&Summary> {
        match self.timer? {
            Timer::GpuTimestamp => self.gpu.as_ref(),
            Timer::WallClock => self.wall.as_ref(),
        }
    }

    /// The samples of `timer`, ms; empty when that timer did not time every sample.
    pub fn times(&self, timer: Timer) -> Vec<f64> {
        match timer {
            Timer::WallClock => self.samples.iter().map(|s| s.wall_ms).collect(),
            Timer::GpuTimestamp => self.samples.iter().map(|s| s.gpu_ms).collect::<Option<Vec<f64>>>().unwrap_or_default(),
        }
    }

    /// How the samples were taken, in a few characters for tables: `steady ×1250`, `isolated`,
    /// or `–` for an unmeasured case.
    pub fn sampling_label(&self) -> String {
        match (self.sampling, self.batch) {
            (Some(SamplingMode::Steady), Some(n)) => format!("steady ×{n}"),
            (Some(mode), _) => mode.as_str().to_string(),
            _ => "–".into(),
        }
    }

    /// How the samples were taken, in words: `steady, 1250 dispatches a sample, 41 in flight`.
    pub fn sampling_description(&self) -> Option<String> {
        let mode = self.sampling?;
        let n = self.batch.unwrap_or(1);
        Some(match mode {
            SamplingMode::Steady => format!(
                "steady: {n} dispatch{} a sample, {} batch{} in flight",
                if n == 1 { "" } else { "es" },
                self.in_flight.unwrap_or(1),
                if self.in_flight == Some(1) { "" } else { "es" }
            ),
            SamplingMode::Isolated => "isolated: one dispatch a sample, the GPU idle in between".into(),
        })
    }

    /// Where the wall clock is the headline timer: the platform's completion latency as a share
    /// of one sample's wall time, in percent, so a reader sees how much of it is the browser's
    /// callback rather than the GPU's work.
    pub fn latency_share_pct(&self, latency: Option<&Latency>) -> Option<f64> {
        if self.timer != Some(Timer::WallClock) {
            return None;
        }
        let sample_ms = self.wall.as_ref()?.median * self.batch.unwrap_or(1) as f64;
        let latency_ms = latency?.work_done_ms()?;
        (sample_ms > 0.0).then(|| 100.0 * latency_ms / sample_ms)
    }

    /// How warm-up was decided, in a sentence; `None` for an unmeasured case.
    pub fn warmup_explanation(&self) -> Option<String> {
        self.warmup_stop.map(|stop| stop.explain(&self.warmup))
    }
}
