//! How each case is sampled and how long it may take: shared by every measuring subcommand.

use super::parse::{positive_pct, positive_seconds};
use clap::{Args, ValueEnum};

/// How samples are taken (`--sampling`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SamplingArg {
    /// Batches of back-to-back dispatches, queued ahead so the GPU never waits on the browser;
    /// time per dispatch = batch time / N. Throughput at working clocks.
    Steady,
    /// One dispatch per sample, waited for before the next: a cold, one-off call.
    Isolated,
}

impl From<SamplingArg> for kernels::SamplingMode {
    fn from(s: SamplingArg) -> Self {
        match s {
            SamplingArg::Steady => kernels::SamplingMode::Steady,
            SamplingArg::Isolated => kernels::SamplingMode::Isolated,
        }
    }
}

impl From<kernels::SamplingMode> for SamplingArg {
    fn from(s: kernels::SamplingMode) -> Self {
        match s {
            kernels::SamplingMode::Steady => SamplingArg::Steady,
            kernels::SamplingMode::Isolated => SamplingArg::Isolated,
        }
    }
}

/// Whether waits are nudged (`--nudge`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum NudgeArg {
    /// Where the browser reports completion on a timer (Firefox).
    Auto,
    /// Never.
    Off,
}

impl From<NudgeArg> for kernels::Nudge {
    fn from(n: NudgeArg) -> Self {
        match n {
            NudgeArg::Auto => kernels::Nudge::Auto,
            NudgeArg::Off => kernels::Nudge::Off,
        }
    }
}

impl From<kernels::Nudge> for NudgeArg {
    fn from(n: kernels::Nudge) -> Self {
        match n {
            kernels::Nudge::Auto => NudgeArg::Auto,
            kernels::Nudge::Off => NudgeArg::Off,
        }
    }
}

/// The sampling policy, the case timeout and retries.
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Sampling")]
pub struct SamplingArgs {
    /// How a sample is taken: `steady` batches N back-to-back dispatches (N sized so a batch is
    /// ~5 ms of GPU work, longer where the browser reports completion late so the samples span
    /// ten completion latencies; on the wall clock alone, ten latencies a batch) and keeps batches
    /// queued so the GPU never idles; `isolated` times one dispatch at a time, the GPU idle in
    /// between. Times are per dispatch either way.
    #[arg(long, value_enum, default_value = "steady", conflicts_with = "resume")]
    pub sampling: SamplingArg,
    /// Where the browser reports GPU work done only on a timer (Firefox: every ~100 ms, measured
    /// before the cases), `auto` submits an empty command buffer every few ms while a steady batch
    /// waits, for every engine alike (harness, tfjs, onnxruntime-web): the browser then sees each
    /// batch done within a few ms, as Chrome does, and the GPU does not idle between batches.
    /// `off` waits as the browser gives it. The report gives the completion latency both ways.
    #[arg(long, value_enum, default_value = "auto", conflicts_with = "resume")]
    pub nudge: NudgeArg,
    /// Timed samples per case; with --target-ci, the fewest taken before the target is checked.
    /// [default: 30; on a software adapter (a CPU: SwiftShader, lavapipe), where a sample can take
    /// a second, 5 within 1 s right after the first (untimed) run and a 300 s case timeout, unless any of
    /// --samples, --max-time, --warmup, --target-ci and --timeout is given]
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=100_000), conflicts_with = "resume")]
    pub samples: Option<u32>,
    /// Time budget in seconds of a case's timed samples: sampling stops early once it is spent
    /// (at least 5 samples are always taken). The report says which limit ended each case.
    /// [default: 10; 1 on a software adapter, as for --samples]
    #[arg(long, value_parser = positive_seconds, conflicts_with = "resume")]
    pub max_time: Option<f64>,
    /// Keep sampling each case until the 95% confidence interval of its median is within ±PCT
    /// percent of the median (or --max-time is spent; at most 2048 samples, or --samples if more).
    #[arg(long, value_name = "PCT", value_parser = positive_pct, conflicts_with = "resume")]
    pub target_ci: Option<f64>,
    /// Untimed warm-up samples per case after the first (always untimed) dispatch: a count, or
    /// `auto` to go on until two windows of 5 agree within 5% and, where a clock probe watches
    /// the GPU, its clock has settled (at most 100 samples or a quarter of --max-time). The
    /// report says how each case's warm-up ended. [default: auto; 1 on a software adapter, as for
    /// --samples]
    #[arg(long, value_parser = clap::value_parser!(stats::WarmupPolicy), conflicts_with = "resume")]
    pub warmup: Option<stats::WarmupPolicy>,
    /// Seconds a case may take (including its pipeline compile) before it is marked timed out.
    /// [default: 60; on a software adapter 300, as for --samples]
    #[arg(long, value_parser = positive_seconds, conflicts_with = "resume")]
    pub timeout: Option<f64>,
    /// Runs a case whose browser crashed, or that timed out, again up to N times; a crash starts a
    /// fresh browser session for it and the cases after it. The report lists every attempt.
    #[arg(long, value_name = "N", default_value_t = 1, conflicts_with = "resume")]
    pub retries: u32,
}

/// Timed samples per case where the user gives none.
pub const DEFAULT_SAMPLES: u32 = 30;
/// Seconds of timed samples per case where the user gives none.
pub const DEFAULT_MAX_TIME_S: f64 = 10.0;
/// Seconds a case may take where the user gives none.
pub const DEFAULT_TIMEOUT_S: f64 = 60.0;
/// How much longer a case may take on a software adapter (a CPU) where the user gives no
/// `--timeout`: MiniLM's pass at 1×16 took 10 s a sample in SwiftShader, so the GPU's 60 s
/// timed out its warm-up and samples.
pub const CPU_TIMEOUT_FACTOR: f64 = 5.0;

impl SamplingArgs {
    /// The sampling policy asked for, harness's defaults where nothing is given.
    pub fn policy(&self) -> kernels::Sampling {
        kernels::Sampling {
            mode: self.sampling.into(),
            warmup: self.warmup.unwrap_or(stats::WarmupPolicy::Auto),
            samples: self.samples.unwrap_or(DEFAULT_SAMPLES),
            max_time_ms: self.max_time.unwrap_or(DEFAULT_MAX_TIME_S) * 1e3,
            target_ci_pct: self.target_ci,
            nudge: self.nudge.into(),
            profile: false,
            gpu_timer: Default::default(),
            timer_cost: false,
        }
    }

    /// Whether the user chose how long cases take: any of --samples, --max-time, --warmup,
    /// --target-ci and --timeout given. Then what they give, and harness's defaults for the
    /// rest, hold on every adapter.
    fn chosen(&self) -> bool {
        self.samples.is_some() || self.max_time.is_some() || self.warmup.is_some() || self.target_ci.is_some() || self.timeout.is_some()
    }

    /// The policy on a CPU adapter ([`kernels::Sampling::for_cpu`]), where the user left the
    /// sampling to harness.
    pub fn cpu_policy(&self) -> Option<kernels::Sampling> {
        (!self.chosen()).then(|| self.policy().for_cpu())
    }

    /// The case timeout asked for, or harness's default.
    pub fn timeout(&self) -> std::time::Duration {
        std::time::Duration::from_secs_f64(self.timeout.unwrap_or(DEFAULT_TIMEOUT_S))
    }

    /// The case timeout on a CPU adapter, where the user left the sampling to harness.
    pub fn cpu_timeout(&self) -> Option<std::time::Duration> {
        (!self.chosen()).then(|| std::time::Duration::from_secs_f64(DEFAULT_TIMEOUT_S * CPU_TIMEOUT_FACTOR))
    }
}
