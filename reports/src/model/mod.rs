//! The data model of `results.json`. Field names are camelCase on disk; the JSON Schema in
//! `reports/schema/results.schema.json` documents every field and is checked against real runs
//! by the test suite. Bump [`SCHEMA_VERSION`] on any change that breaks readers.

mod case_time;
mod change;
mod clock;
pub mod roofline;

pub use case_time::{describe as describe_case_times, totals as case_time_totals, CaseTime};
pub use change::{BaselineComparison, CaseChange, ChangeCounts, HardwareChange, Presence, OTHER_HARDWARE};
pub use clock::{ClockStats, ProbeInfo, ProbeStatus};
pub use roofline::{Bound, CaseRoofline, Peak, Peaks};

use stats::{summarize, Summary};
use kernels::check::{Drift, Verdict};
use kernels::sampling::{Sample, StopReason};
use kernels::wire::{AdapterReport, CaseMeasurement, ColdMeasurement, Phase, CompletionLatency, PageError};
use kernels::{CaseInfo, CaseSpec, Nudge, SamplingMode, Shape, WarmupPolicy, WarmupStop};
use serde::{Deserialize, Serialize};

/// Version of the `results.json` layout.
pub const SCHEMA_VERSION: u32 = 8;

/// One invocation of harness: its settings, where it ran, and one [`PlatformRun`] per browser
/// and platform measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunReport {
    /// [`SCHEMA_VERSION`] of the writer.
    pub schema_version: u32,
    /// The harness that measured.
    pub harness: HarnessInfo,
    /// The machine it ran on.
    pub host: HostInfo,
    /// When the run started, RFC 3339.
    pub created_at: String,
    /// What was asked for.
    pub settings: Settings,
    /// Each browser/platform measured.
    pub runs: Vec<PlatformRun>,
    /// The comparison with a saved baseline (`--baseline`), when one was asked for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline: Option<BaselineComparison>,
}

/// Version of the harness that wrote a report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HarnessInfo {
    /// Crate version.
    pub version: String,
    /// `git describe` of the source tree the run read its catalogue and page from, when it is a
    /// checkout.
    pub git_revision: Option<String>,
    /// `git describe` of the tree the harness binary was built from, when it was a checkout: it
    /// differs from `git_revision` where a binary is run in another tree (a GPU machine's copy).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub build_revision: Option<String>,
}

/// The machine a run happened on.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HostInfo {
    /// Operating system, with its release where known (`/etc/os-release`).
    pub os: String,
    /// CPU architecture.
    pub arch: String,
    /// CPU model name.
    pub cpu: String,
    /// Logical CPUs.
    pub cores: usize,
    /// Hardware GPUs the kernel driver exposes, such as `NVIDIA H100 80GB HBM3 (nvidia
    /// 580.159.04)`: with one here, a browser on a software adapter is warned about. Empty where
    /// none was found or the system is not Linux.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub gpus: Vec<String>,
}

/// The run's settings, enough to run it again (`harness run --replay results.json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Settings {
    /// Suite name.
    pub suite: String,
    /// Kernel filters (globs); empty for all.
    pub filters: Vec<String>,
    /// Timed samples per case (with `target_ci_pct`: the fewest).
    pub samples: u32,
    /// Warm-up runs per case after the first: `auto` or a count.
    pub warmup: WarmupPolicy,
    /// Steady batches (the default) or isolated dispatches (`--sampling`); runs written before
    /// version 4 were isolated.
    #[serde(default = "SamplingMode::legacy")]
    pub sampling: SamplingMode,
    /// Sampling went on until the median's 95% CI half-width was at most this % of the median.
    #[serde(default)]
    pub target_ci_pct: Option<f64>,
    /// Whether steady batches were nudged where the browser needed it (`--nudge`); runs written
    /// before it existed were not (`off`).
    #[serde(default = "Nudge::legacy")]
    pub nudge: Nudge,
    /// Browsers asked for, in order.
    #[serde(default)]
    pub browsers: Vec<String>,
    /// Platforms asked for, in order.
    #[serde(default)]
    pub platforms: Vec<String>,
    /// Every planned case (kernel, shape, seed), in order: the plan `--replay` runs again.
    #[serde(default)]
    pub cases: Vec<CaseSpec>,
    /// The command line, for people (replay reads the fields above).
    #[serde(default)]
    pub command: Vec<String>,
    /// Input seed.
    pub seed: u64,
    /// Time budget of a case's timed samples, seconds.
    pub max_time_s: f64,
    /// Seconds a case may take before it is marked timed out.
    pub case_timeout_s: f64,
    /// What runs on a CPU adapter (a software one) took instead of the sampling and timeout
    /// above, where the user left them to harness; absent where the user chose them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_adapter: Option<CpuAdapterPolicy>,
    /// Models chose their kernels as for a GPU even on a CPU adapter (`--gpu-kernels`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub gpu_kernels: bool,
    /// The device WebNN contexts were asked for (`--webnn-device`), with the webnn platform.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub webnn_device: Option<kernels::webnn::Device>,
    /// GEMMs kept off the tensor cores (`--no-tensor-cores`); absent where they were allowed.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub no_tensor_cores: bool,
    /// Each dispatch of a case of several timed alone after its samples (`--profile`); absent
    /// where not.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub profile: bool,
    /// Further attempts at a case that crashed or timed out (`--retries`); 0 in files written
    /// before it existed.
    #[serde(default)]
    pub retries: u32,
    /// Whether browsers ran headless.
    pub headless: bool,
    /// The encoder's weights folder, when a model read one (`--weights`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weights: Option<String>,
    /// The GGUF file a decoder read its weights from (`--weights FILE.gguf`), when one did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gguf: Option<String>,
    /// `--browser-arg` values as given (`[BROWSER=]ARG`), added after harness's own arguments.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub browser_args: Vec<String>,
    /// `--browser-pref` values as given (`[BROWSER=]NAME=VALUE`), set over harness's own prefs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub browser_prefs: Vec<String>,
}

/// The sampling and case timeout of a run on a CPU adapter (SwiftShader, lavapipe, llvmpipe),
/// which the default policy, sized for a GPU, would keep at a case for minutes.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CpuAdapterPolicy {
    /// Timed samples per case.
    pub samples: u32,
    /// Time budget of a case's timed samples, seconds.
    pub max_time_s: f64,
    /// Warm-up runs after the first.
    pub warmup: WarmupPolicy,
    /// Seconds a case may take.
    pub case_timeout_s: f64,
}

impl CpuAdapterPolicy {
    /// The policy in words, for the terminal and the reports.
    pub fn describe(&self) -> String {
        let warmup = match self.warmup {
            WarmupPolicy::Fixed(0) => String::new(),
            w => format!(" and {w} warm-up"),
        };
        format!(
            "{} samples a case within {} s after its first run (never timed){warmup}, and {} s before a case times out (a CPU takes seconds where a GPU takes milliseconds; --samples, --max-time, --warmup or --timeout choose for yourself)",
            self.samples, self.max_time_s, self.case_timeout_s
        )
    }
}

/// How a browser/platform run ended as a whole.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum RunStatus {
    /// Every case was attempted.
    Completed,
    /// The run stopped early (no adapter, browser crash, interrupted); cases not reached are
    /// `notRun`.
    Failed,
    /// The browser has no way to run the platform at all (no WebNN backend): `unavailable` says
    /// why, every case is `unsupported`, and it is no failure.
    Unavailable,
}

/// The measurements of one browser on one platform.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PlatformRun {
    /// Browser key: chrome, firefox, edge.
    pub browser: String,
    /// Platform: webgpu, wasm, native or tfjs.
    pub platform: String,
    /// The machine this run happened on (runs merged from a CI matrix differ).
    pub host: HostInfo,
    /// The browser as WebDriver reported it.
    pub browser_info: Option<BrowserInfo>,
    /// The WebDriver used.
    pub driver: Option<DriverInfo>,
    /// The WebGPU adapter, as the page saw it.
    pub adapter: Option<AdapterReport>,
    /// Completed or failed.
    pub status: RunStatus,
    /// Why it failed, when it did.
    pub failure: Option<String>,
    /// Why the platform is unavailable in this browser (the browser's own words) and what would
    /// enable it, when it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unavailable: Option<String>,
    /// Exceptions and errors reported by the page, in order.
    pub errors: Vec<PageError>,
    /// Where the harness's time went.
    pub phases: Phases,
    /// How long the platform takes to report trivial GPU work done: a property of the browser,
    /// and the floor under its wall-clock times.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completion_latency: Option<Latency>,
    /// The GPU clock probe attached to the run, or why none was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub probe: Option<ProbeStatus>,
    /// The peaks its roofline probes measured (`stream_copy`, `fma_chain`), when it ran any:
    /// derived from `cases` by [`roofline::apply`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub roofline: Option<Peaks>,
    /// Every planned case, measured or not.
    pub cases: Vec<CaseReport>,
    /// GPU-related lines of the browser's diagnostics page (chrome://gpu, about:support), when
    /// read (`harness verify`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub diagnostics: Vec<String>,
    /// Memory in use as the cases settled (Linux): whether harness or the browser grows over a
    /// long run. Empty where it could not be read.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub memory: Vec<MemorySample>,
}

/// Memory in use once some cases of a run had settled.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MemorySample {
    /// Cases settled so far in the run (0: the page was up, no case yet).
    pub cases: usize,
    /// harness's resident set, KiB.
    pub harness_rss_kib: u64,
    /// The browser's proportional set (all its processes, shared pages split), KiB; absent
    /// natively and with a remote WebDriver.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub browser_pss_kib: Option<u64>,
}

/// How memory changed over a run, from the end of its warm-up (the first tenth of its cases)
/// to its end.
#[derive(Debug, Clone, PartialEq)]
pub struct MemoryGrowth {
    /// Cases between the two samples.
    pub cases: usize,
    /// harness's resident set then and at the end, KiB.
    pub harness_kib: (u64, u64),
    /// The browser's proportional set then and at the end, KiB, where read.
    pub browser_kib: Option<(u64, u64)>,
    /// harness's growth per case after warm-up, KiB: the least-squares slope of its resident set
    /// over every sample from the end of warm-up on, which a leak of anything per case shows and
    /// the noise of a single sample does not.
    pub harness_kib_per_case: f64,
    /// The browser's, likewise, where read.
    pub browser_kib_per_case: Option<f64>,
}

impl MemoryGrowth {
    /// The fewest cases a run needs for its memory growth to be stated.
    pub const MIN_CASES: usize = 100;

    /// harness's growth per case above which it leaks, KiB. harness keeps each finished case's
    /// report (samples, statistics, check, phases): 3.2 KiB a case in a 200-case Chromium soak of
    /// `add` on an idle 2-core machine, 6.6 KiB with three busy loops beside it (CI's suite runs
    /// four tests at once, and failed the soak at a bound of 8). A leak of each case's inputs and
    /// output (12 to 48 KiB at the quick shapes) comes on top of the kept reports: the bound sits
    /// between the reports under load and the smallest such leak above the idle ones (15 KiB).
    pub const HARNESS_LEAK_KIB_PER_CASE: f64 = 10.0;

    /// Whether harness grew by more than [`Self::HARNESS_LEAK_KIB_PER_CASE`] a case.
    pub fn harness_leaks(&self) -> bool {
        self.harness_kib_per_case > Self::HARNESS_LEAK_KIB_PER_CASE
    }

    /// Growth of `(from, to)` in percent.
    pub fn percent((from, to): (u64, u64)) -> f64 {
        (to as f64 / from.max(1) as f64 - 1.0) * 100.0
    }

    /// `harness RSS 41.2 → 42.0 MiB (+1.9%), browser PSS 611 → 623 MiB (+2.0%) over the last 450 cases`.
    pub fn describe(&self) -> String {
        let part = |what: &str, kib: (u64, u64)| {
            format!("{what} {:.1} → {:.1} MiB ({:+.1}%)", kib.0 as f64 / 1024.0, kib.1 as f64 / 1024.0, Self::percent(kib))
        };
        let per_case = |kib: f64| format!(", {kib:+.1} KiB a case");
        let mut parts = vec![part("harness RSS", self.harness_kib) + &per_case(self.harness_kib_per_case)];
        parts.extend(self.browser_kib.map(|b| part("browser PSS", b) + &self.browser_kib_per_case.map(per_case).unwrap_or_default()));
        let leak = if self.harness_leaks() { format!(" (harness leaks: over {} KiB a case)", Self::HARNESS_LEAK_KIB_PER_CASE) } else { String::new() };
        format!("{} over the last {} cases, after warm-up{leak}", parts.join(", "), self.cases)
    }
}

/// The least-squares slope of `points` (x, y); 0 where x does not vary.
fn slope(points: &[(f64, f64)]) -> f64 {
    let n = points.len() as f64;
    let (mx, my) = points.iter().fold((0.0, 0.0), |(a, b), (x, y)| (a + x / n, b + y / n));
    let (sxy, sxx) = points.iter().fold((0.0, 0.0), |(a, b), (x, y)| (a + (x - mx) * (y - my), b + (x - mx) * (x - mx)));
    if sxx > 0.0 { sxy / sxx } else { 0.0 }
}

impl PlatformRun {
    /// How this run was sampled in place of `settings`, where its adapter is a CPU (a software
    /// one) and the user left the sampling to harness.
    pub fn cpu_policy<'a>(&self, settings: &'a Settings) -> Option<&'a CpuAdapterPolicy> {
        settings.cpu_adapter.as_ref().filter(|_| self.adapter.as_ref().and_then(kernels::software::software_sign).is_some())
    }

    /// The optional WebGPU features its cases' shaders used, each with how many cases used it, in
    /// words (`chromium-experimental-subgroup-matrix (tensor cores) in 12 cases, shader-f16 in 3`);
    /// `None` where no case used one.
    pub fn features_used(&self) -> Option<String> {
        let mut counts: Vec<(&str, usize)> = Vec::new();
        for feature in self.cases.iter().flat_map(|c| &c.features) {
            match counts.iter_mut().find(|(f, _)| f == feature) {
                Some((_, n)) => *n += 1,
                None => counts.push((feature, 1)),
            }
        }
        let words: Vec<String> = counts
            .iter()
            .map(|(f, n)| {
                let what = if *f == kernels::catalog::matmul::subgroup_matrix::FEATURE { " (tensor cores)" } else { "" };
                format!("{f}{what} in {n} case{}", if *n == 1 { "" } else { "s" })
            })
            .collect();
        (!words.is_empty()).then(|| words.join(", "))
    }

    /// How memory changed from the end of warm-up (the first sample after a tenth of the
    /// cases) to the last sample; `None` for a run of fewer than [`MemoryGrowth::MIN_CASES`]
    /// cases, too short to tell growth from noise.
    pub fn memory_growth(&self) -> Option<MemoryGrowth> {
        let last = self.memory.last().filter(|s| s.cases >= MemoryGrowth::MIN_CASES)?;
        let warm = self.memory.iter().find(|s| s.cases * 10 >= last.cases).filter(|s| s.cases < last.cases)?;
        let after: Vec<&MemorySample> = self.memory.iter().filter(|s| s.cases >= warm.cases).collect();
        let harness: Vec<(f64, f64)> = after.iter().map(|s| (s.cases as f64, s.harness_rss_kib as f64)).collect();
        let browser: Option<Vec<(f64, f64)>> = after.iter().map(|s| s.browser_pss_kib.map(|k| (s.cases as f64, k as f64))).collect();
        Some(MemoryGrowth {
            cases: last.cases - warm.cases,
            harness_kib: (warm.harness_rss_kib, last.harness_rss_kib),
            browser_kib: warm.browser_pss_kib.zip(last.browser_pss_kib),
            harness_kib_per_case: slope(&harness),
            browser_kib_per_case: browser.as_deref().map(slope),
        })
    }

    /// Cases by status.
    pub fn counts(&self) -> Counts {
        let mut c = Counts::default();
        for case in &self.cases {
            match case.status {
                CaseStatus::Passed => c.passed += 1,
                CaseStatus::Failed => c.failed += 1,
                CaseStatus::TimedOut => c.timed_out += 1,
                CaseStatus::Error => c.error += 1,
                CaseStatus::NotRun => c.not_run += 1,
                CaseStatus::Crashed => c.crashed += 1,
                CaseStatus::DeviceLost => c.device_lost += 1,
                CaseStatus::Unsupported => c.unsupported += 1,
                CaseStatus::Unchecked => c.unchecked += 1,
            }
        }
        c
    }
}

/// A platform's completion latency: the raw rounds and their statistics.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Latency {
    /// Submit of a trivial command buffer → `onSubmittedWorkDone`, ms.
    pub work_done: Option<Summary>,
    /// Submit of a 4-byte copy → `mapAsync` resolved, ms.
    pub map_async: Option<Summary>,
    /// `work_done` again, nudged as steady batches wait in this browser (`kernels::gpu::nudges`);
    /// absent where it is not nudged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nudged_work_done: Option<Summary>,
    /// `map_async` again, nudged; absent where it is not nudged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nudged_map_async: Option<Summary>,
    /// Every round, ms.
    pub samples: CompletionLatency,
}

impl Latency {
    /// Statistics of the measured rounds.
    pub fn new(samples: CompletionLatency) -> Self {
        Latency {
            work_done: summarize(&samples.work_done_ms),
            map_async: summarize(&samples.map_async_ms),
            nudged_work_done: summarize(&samples.nudged_work_done_ms),
            nudged_map_async: summarize(&samples.nudged_map_async_ms),
            samples,
        }
    }

    /// The median `onSubmittedWorkDone` latency, ms.
    pub fn work_done_ms(&self) -> Option<f64> {
        self.work_done.as_ref().map(|s| s.median)
    }

    /// `submit→done 0.052 ms, mapAsync 0.061 ms` (medians), for tables and the terminal.
    pub fn describe(&self) -> String {
        let part = |s: &Option<Summary>| s.as_ref().map(|s| format!("{} ms", format_ms(s.median))).unwrap_or_else(|| "–".into());
        let rounds = self.samples.work_done_ms.len();
        let base = format!("submit→onSubmittedWorkDone {}, mapAsync {} (medians of {rounds} rounds)", part(&self.work_done), part(&self.map_async));
        match self.nudged_work_done.is_some() {
            true => format!(
                "{base}; nudged (an empty submit every few ms while steady batches wait): {}, {}",
                part(&self.nudged_work_done),
                part(&self.nudged_map_async)
            ),
            false => base,
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

/// The browser of a run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BrowserInfo {
    /// `browserName` capability.
    pub name: String,
    /// `browserVersion` capability.
    pub version: String,
    /// Executable, when harness chose it.
    pub path: Option<String>,
    /// Command-line flags, then prefs as `name=value`, the browser was started with: harness's
    /// own followed by the user's.
    pub flags: Vec<String>,
    /// The user's share of `flags` (`--browser-arg`, `--browser-pref`), so reports can say which
    /// are the user's.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub user_flags: Vec<String>,
    /// The share of `flags` harness added to reach this machine's hardware GPU (Chromium's
    /// Vulkan set on Linux, `--gpu-flags`), with why; empty when none were added.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub gpu_flags: Vec<String>,
    /// Environment variables harness set for the driver and browser, each as
    /// `NAME=value (why)`: a Vulkan driver file or library the loader could not see.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub environment: Vec<String>,
    /// What the fresh profile started with from an earlier session of the same browser, and from
    /// where: Firefox's startup cache (the browser's own compiled JavaScript), never anything of a
    /// page; `None` when it started empty.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile_seed: Option<String>,
}

/// The WebDriver of a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DriverInfo {
    /// chromedriver, geckodriver, msedgedriver.
    pub name: String,
    /// Its `--version` output.
    pub version: String,
    /// Executable, when harness launched it.
    pub path: Option<String>,
}

/// Milliseconds the harness spent in each phase of a run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Phases {
    /// Building or reusing the page bundle.
    pub bundle_ms: f64,
    /// Starting the server.
    pub server_ms: f64,
    /// Starting the driver and browser, until the WebDriver session existed.
    pub browser_start_ms: f64,
    /// From navigation until the last case was in.
    pub cases_ms: f64,
}

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

/// Which clock the headline numbers of a case come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Timer {
    /// GPU timestamp queries around the compute pass.
    GpuTimestamp,
    /// Submit to `onSubmittedWorkDone`, wall clock.
    WallClock,
}

impl Timer {
    /// `gpu` or `wall`, as tables and summaries label it.
    pub fn short(self) -> &'static str {
        match self {
            Timer::GpuTimestamp => "gpu",
            Timer::WallClock => "wall",
        }
    }
}

/// Milliseconds with as many decimals as their size needs (0.0123, 1.234, 123.4).
pub fn format_ms(v: f64) -> String {
    if v >= 100.0 {
        format!("{v:.1}")
    } else if v >= 1.0 {
        format!("{v:.3}")
    } else if v >= 0.01 || v <= 0.0 || !v.is_finite() {
        format!("{v:.4}")
    } else {
        // Three significant digits below 10 µs (a CPU bench's iteration): 0.000512, not 0.0005.
        let decimals = (2 - v.log10().floor() as i32).clamp(4, 12) as usize;
        format!("{v:.decimals$}")
    }
}

/// The median's 95% CI half-width as tables show it (`±1.2%`), or `–` without one.
pub fn format_ci(half_width_pct: Option<f64>) -> String {
    half_width_pct.map(|w| format!("±{w:.1}%")).unwrap_or_else(|| "–".into())
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
    /// Statistics of GPU-timestamp samples.
    pub gpu: Option<Summary>,
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
    /// same timer: derived by [`roofline::apply`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub roofline: Option<CaseRoofline>,
    /// The attempts before this one (`--retries`), in order: each crashed or timed out.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub earlier_attempts: Vec<Attempt>,
    /// The engine's own profile of one run, summed by op: harness's for a program of several
    /// dispatches, onnxruntime-web's JSEP's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engine_profile: Option<EngineProfile>,
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

/// A case timed end to end from text, as a web app embeds sentences: each sample one call, split
/// into phases (harness pools on the GPU inside its run: its calls have tokenize and run only).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TextReport {
    /// Each timed call's phases, in sample order.
    pub calls: Vec<Vec<Phase>>,
    /// Each phase's median over the calls, ms, in phase order.
    pub median_phases: Vec<Phase>,
}

impl TextReport {
    /// The report of `calls`.
    pub fn of(calls: Vec<Vec<Phase>>) -> Self {
        let median_phases = median_phases(calls.iter().map(Vec::as_slice));
        TextReport { calls, median_phases }
    }
}

/// Each phase's median over `lists` (the phases of each page or call), named and ordered as the
/// first list has them.
fn median_phases<'a>(lists: impl Iterator<Item = &'a [Phase]> + Clone) -> Vec<Phase> {
    let names: Vec<String> = lists.clone().next().map(|p| p.iter().map(|ph| ph.name.clone()).collect()).unwrap_or_default();
    names
        .into_iter()
        .map(|name| {
            let times: Vec<f64> = lists.clone().filter_map(|p| p.iter().find(|ph| ph.name == name)).map(|ph| ph.ms).collect();
            let ms = summarize(&times).map_or(0.0, |s| s.median);
            Phase { name, ms }
        })
        .collect()
}

/// Phases in a line: `device 120 ms · fetch 31.2 ms · …`.
pub fn phases_line(phases: &[Phase]) -> String {
    phases.iter().map(|p| format!("{} {} ms", p.name, format_ms(p.ms))).collect::<Vec<_>>().join(" · ")
}

/// A cold-start case: each sample a new page in a fresh browser profile, from navigation to the
/// first output read back (and checked), in phases.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ColdStartReport {
    /// Whether every pipeline was compiled up front, all at once, with
    /// `createComputePipelineAsync`, before the first dispatch.
    pub precompile: bool,
    /// Each page's phases, in sample order.
    pub pages: Vec<ColdMeasurement>,
    /// Each phase's median over the pages, ms, in phase order.
    pub median_phases: Vec<Phase>,
}

impl ColdStartReport {
    /// The report of `pages`.
    pub fn of(precompile: bool, pages: Vec<ColdMeasurement>) -> Self {
        let median_phases = median_phases(pages.iter().map(|p| p.phases.as_slice()));
        ColdStartReport { precompile, pages, median_phases }
    }

    /// The median phases in a line: `device 120 ms · fetch 31.2 ms · …`.
    pub fn phases_line(&self) -> String {
        phases_line(&self.median_phases)
    }
}

/// An engine's own GPU times of one run after sampling, each kernel between timestamps in a
/// compute pass of its own (harness's, the median of a few runs; onnxruntime-web's JSEP's, of
/// one), so the gaps between kernels are not in it, as they are in a whole pass's GPU time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EngineProfile {
    /// The kernels' GPU times summed, ms.
    pub gpu_ms: f64,
    /// Kernels the run dispatched.
    pub kernels: usize,
    /// By op, the slowest first.
    pub by_op: Vec<EngineOp>,
}

/// One op's share of an [`EngineProfile`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EngineOp {
    /// The op (`MatMul`).
    pub op: String,
    /// Its kernels in the run.
    pub count: usize,
    /// Their GPU time, ms.
    pub ms: f64,
}

impl EngineProfile {
    /// The profile of `kernels`, summed by op; `None` for no kernels.
    pub fn of(kernels: &[kernels::wire::EngineKernel]) -> Option<EngineProfile> {
        if kernels.is_empty() {
            return None;
        }
        let mut by_op: Vec<EngineOp> = Vec::new();
        for k in kernels {
            match by_op.iter_mut().find(|o| o.op == k.op) {
                Some(o) => {
                    o.count += 1;
                    o.ms += k.ms;
                }
                None => by_op.push(EngineOp { op: k.op.clone(), count: 1, ms: k.ms }),
            }
        }
        by_op.sort_by(|a, b| b.ms.total_cmp(&a.ms));
        Some(EngineProfile { gpu_ms: kernels.iter().map(|k| k.ms).sum(), kernels: kernels.len(), by_op })
    }
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


/// A model-level rate: tokens/s or sentences/s, and milliseconds per item.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Throughput {
    /// The item, singular: `token`, `sentence`.
    pub item: String,
    /// Items one run processes.
    pub per_run: f64,
    /// Items per second at the headline median.
    pub per_second: Option<f64>,
    /// Milliseconds per item at the headline median.
    pub ms_per_item: Option<f64>,
    /// GPU dispatches one run issues (models): launches per token is what bounds a decode step
    /// whose kernels are microseconds each.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dispatches_per_run: Option<u32>,
}

impl Throughput {
    /// The rate's unit, such as `tokens/s`.
    pub fn unit(&self) -> String {
        format!("{}s/s", self.item)
    }

    /// The rate as tables show it (`412.3 tokens/s`), or `–` before a measurement.
    pub fn format_rate(&self) -> String {
        self.per_second.map(|r| format!("{r:.1} {}", self.unit())).unwrap_or_else(|| "–".into())
    }

    /// Milliseconds per item as tables show it (`2.425 ms/token`), or `–` before a measurement.
    pub fn format_ms_per_item(&self) -> String {
        self.ms_per_item.map(|m| format!("{} ms/{}", format_ms(m), self.item)).unwrap_or_else(|| "–".into())
    }

    /// Dispatches per item as tables show it (`287/token`, `2.24/token`), or `–` where the
    /// workload does not say.
    pub fn format_dispatches(&self) -> String {
        match self.dispatches_per_run {
            Some(d) if self.per_run == 1.0 => format!("{d}/{}", self.item),
            Some(d) => format!("{:.3}/{}", f64::from(d) / self.per_run, self.item).replace(".000/", "/"),
            None => "–".into(),
        }
    }
}

/// A check in a few characters, for tables: a cosine check as its worst row's similarity
/// (`cos ≥ 0.99987`, rounded down so the claim holds), otherwise the largest absolute error.
pub fn format_check(v: &Verdict) -> String {
    match (v.min_cosine, v.cosine_threshold) {
        (Some(cos), _) => format!("cos ≥ {:.5}", (cos * 1e5).floor() / 1e5),
        (None, Some(_)) => "cos NaN".into(),
        (None, None) => format!("max abs err {:.1e}", v.max_abs_err),
    }
}

/// A model's error against its f32 model in a few words, for tables (`cos 0.99999988, max Δ
/// 7.7e-5 (0.15% of row RMS)`; no `|`, which would split a Markdown cell). The cosine is rounded
/// down, with digits enough to show how far from 1 it is, so an error never reads as none.
pub fn format_drift(d: &Drift) -> String {
    let cos = match 1.0 - d.min_cosine {
        gap if gap.is_nan() => "NaN".to_string(),
        gap if gap <= 0.0 => "1".to_string(),
        gap => {
            let decimals = (1 - gap.log10().floor() as i32).clamp(5, 12);
            let scale = 10f64.powi(decimals);
            format!("{:.*}", decimals as usize, (d.min_cosine * scale).floor() / scale)
        }
    };
    let share = 100.0 * d.max_rms_err;
    let decimals = if share > 0.0 { (1 - share.log10().floor() as i32).clamp(1, 6) as usize } else { 0 };
    format!("cos {cos}, max Δ {:.1e} ({share:.decimals$}% of row RMS)", d.max_abs_err)
}

/// What the Models tables' *vs f32* column means, said under every table that shows it.
pub const VS_F32_NOTE: &str = "vs f32: a model whose weights are stored in f16, q8_0 or q4_0, compared with the same model \
    in f32: the least cosine similarity of an output row, the largest absolute difference, and that difference as a share \
    of its row's RMS. It is the error the dtype itself causes, shown for reading and never a failure: the check beside it \
    compares with a reference over the same rounded weights.";

/// Each run's label, `browser/platform`, with the host's OS added where that alone is ambiguous
/// (a CI matrix runs the same browser on several OSes).
pub fn labels(report: &RunReport) -> Vec<String> {
    let base: Vec<String> = report.runs.iter().map(|r| format!("{}/{}", r.browser, r.platform)).collect();
    base.iter()
        .zip(&report.runs)
        .map(|(b, r)| {
            if base.iter().filter(|x| *x == b).count() > 1 {
                format!("{b}@{}", r.host.os.split_whitespace().next().unwrap_or("?"))
            } else {
                b.clone()
            }
        })
        .collect()
}

/// One model case (a case with a [`Throughput`]) of one run, formatted once for the Models
/// tables of every report (HTML, Markdown, terminal) so they agree.
#[derive(Debug, Clone, Serialize)]
pub struct ModelRow<'a> {
    /// The case.
    pub case: &'a CaseReport,
    /// The run's label (`chrome/webgpu`, see [`labels`]).
    pub run: String,
    /// `gpu` or `wall`: the timer of `median`.
    pub timer: &'static str,
    /// Median ms per run, or `–`.
    pub median: String,
    /// The median's 95% CI half-width (`±1.2%`), or `–`.
    pub ci: String,
    /// Items per second (`412.3 tokens/s`), or `–`.
    pub rate: String,
    /// Milliseconds per item (`2.425 ms/token`), or `–`.
    pub per_item: String,
    /// GPU dispatches per item (`287/token`), or `–`.
    pub dispatches: String,
    /// The check in brief ([`format_check`]), or `–` unchecked.
    pub check: String,
    /// For a model in f16, q8_0 or q4_0: its error against the f32 model ([`format_drift`]).
    pub vs_f32: Option<String>,
}

/// What the Models tables say under a *vs f32* column ([`VS_F32_NOTE`]), where some row has one.
pub fn vs_f32_note(rows: &[ModelRow<'_>]) -> Option<&'static str> {
    rows.iter().any(|r| r.vs_f32.is_some()).then_some(VS_F32_NOTE)
}

/// Every model case of every run, run by run: the rows of the Models tables. Empty when no case
/// has a throughput (kernel-only runs), so callers leave the section out.
pub fn model_rows(report: &RunReport) -> Vec<ModelRow<'_>> {
    let labels = labels(report);
    let mut rows = Vec::new();
    for (run, label) in report.runs.iter().zip(labels) {
        for case in run.cases.iter().filter(|c| c.cold_start.is_none()) {
            let Some(t) = &case.throughput else { continue };
            let h = case.headline();
            rows.push(ModelRow {
                case,
                run: label.clone(),
                timer: case.timer.map(Timer::short).unwrap_or("–"),
                median: h.map(|s| format_ms(s.median)).unwrap_or_else(|| "–".into()),
                ci: format_ci(h.and_then(|s| s.ci_half_width_pct)),
                rate: t.format_rate(),
                per_item: t.format_ms_per_item(),
                dispatches: t.format_dispatches(),
                check: case.correctness.as_ref().map(format_check).unwrap_or_else(|| "–".into()),
                vs_f32: case.correctness.as_ref().and_then(|v| v.vs_f32.as_ref()).map(format_drift),
            });
        }
    }
    rows
}

/// One case of one run timed in phases (a cold start, a run from text), formatted once for the
/// phase tables of every report.
#[derive(Debug, Clone, Serialize)]
pub struct PhasedRow<'a> {
    /// The case.
    pub case: &'a CaseReport,
    /// The run's label (`chrome/webgpu`, see [`labels`]).
    pub run: String,
    /// Median ms of a sample (to the first result; a whole call), or `–`.
    pub median: String,
    /// `min–max` over the samples, or `–`.
    pub spread: String,
    /// Samples: fresh pages, or calls.
    pub count: usize,
    /// Each phase's median ([`phases_line`]), or `–`.
    pub phases: String,
}

/// A table of cases timed in phases, with what its columns and it mean.
#[derive(Debug, Clone, Serialize)]
pub struct PhasedTable<'a> {
    /// Its anchor in the HTML report (`cold-start`).
    pub id: &'static str,
    /// Its heading.
    pub title: &'static str,
    /// What a row measures, in a line (the terminal's heading).
    pub about: &'static str,
    /// What the median column holds.
    pub median_header: &'static str,
    /// What a sample is (`pages`).
    pub count_header: &'static str,
    /// What it means, said under it.
    pub note: &'static str,
    /// Its rows, run by run.
    pub rows: Vec<PhasedRow<'a>>,
}

/// The phase tables with any rows: cold starts (`harness run --cold-start`), then runs from text
/// (`--from-text`).
pub fn phased_tables(report: &RunReport) -> Vec<PhasedTable<'_>> {
    let cold = PhasedTable {
        id: "cold-start",
        title: "Cold start",
        about: "cold start (from a fresh page in a new profile to the first result read back)",
        median_header: "first result ms (median)",
        count_header: "pages",
        note: COLD_NOTE,
        rows: phased_rows(report, |c| c.cold_start.as_ref().map(|r| (r.pages.len(), r.median_phases.as_slice()))),
    };
    let text = PhasedTable {
        id: "from-text",
        title: "From text",
        about: "from text (sentences to embeddings read back, one call a sample)",
        median_header: "ms a call (median)",
        count_header: "calls",
        note: TEXT_NOTE,
        rows: phased_rows(report, |c| c.from_text.as_ref().map(|r| (r.calls.len(), r.median_phases.as_slice()))),
    };
    [cold, text].into_iter().filter(|t| !t.rows.is_empty()).collect()
}

/// The rows of every case `pick` finds phases in (with their count of samples), run by run.
fn phased_rows<'a>(report: &'a RunReport, pick: impl Fn(&CaseReport) -> Option<(usize, &[Phase])>) -> Vec<PhasedRow<'a>> {
    let labels = labels(report);
    let mut rows = Vec::new();
    for (run, label) in report.runs.iter().zip(labels) {
        for case in &run.cases {
            let Some((count, phases)) = pick(case) else { continue };
            let w = case.wall.as_ref();
            rows.push(PhasedRow {
                case,
                run: label.clone(),
                median: w.map(|w| format_ms(w.median)).unwrap_or_else(|| "–".into()),
                spread: w.map(|w| format!("{}–{}", format_ms(w.min), format_ms(w.max))).unwrap_or_else(|| "–".into()),
                count,
                phases: if phases.is_empty() { "–".into() } else { phases_line(phases) },
            });
        }
    }
    rows
}

/// What the Cold start tables mean, said under each.
pub const COLD_NOTE: &str = "Each page is new, in a fresh browser profile (no HTTP or shader cache), timed from navigation (performance.timeOrigin) to the first output read back, which is then checked like any case. Phases, each from the end of the one before, median over the pages: harness's device (page, its WASM, adapter and device), fetch (weights), upload (program built, weights into GPU buffers), pipelines (created, and validated through an error scope, which waits for compilation), dispatch (first pass encoded and submitted), result (GPU done, output read back); onnxruntime-web's engine (page, WASM, ORT's script), fetch, onnx (the model file written in the page, what an app would fetch), session (InferenceSession.create), dispatch (first session.run), result. +precompile: every pipeline created up front, all at once, with createComputePipelineAsync.";

/// What the From text tables mean, said under each.
pub const TEXT_NOTE: &str = "Sentences to L2-normalised embeddings read back into JavaScript or WASM, as a web app calls it: each sample one call, awaited, after the pipeline was created (wall clock). transformers.js: its pipeline('feature-extraction') step by step, tokenize (its tokenizer, padding to the longest sentence), run (pipe.model: inputs uploaded, onnxruntime-web's C++ WebGPU provider, the hidden states read back), pool (mean over the mask, then L2, in JavaScript). harness: tokenize (the tokenizers crate in the page's WASM, same padding), run (ids written, one pass, the embeddings read back; pooling runs on the GPU inside it). Both on the ONNX-equivalent graph of the same weights, checked against the same reference.";

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
        case.features = m.features;
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
        self.wall = summarize(&walls);
        self.gpu = gpus.as_deref().and_then(summarize);
        let (timer, headline) = match (self.gpu, self.wall) {
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

/// A one-line reason for a failed check.
pub fn describe_failure(v: &Verdict) -> String {
    if v.len != v.expected_len {
        return format!("output has {} elements, expected {}", v.len, v.expected_len);
    }
    if let (Some(cos), Some(min)) = (v.min_cosine, v.cosine_threshold) {
        let row = v.worst_row.map_or_else(|| "a row".to_string(), |r| format!("row {r}"));
        if cos.is_nan() {
            return format!("{row} has no direction: all zeros (never written?) or not finite, where the reference's is not");
        }
        if cos < min {
            return format!("cosine similarity to the reference {cos:.6} in {row} is below {min} (max abs error {:.3e})", v.max_abs_err);
        }
    }
    let mut s = format!("{} of {} elements outside tolerance", v.mismatches, v.len);
    if v.nan_count + v.inf_count > 0 {
        s += &format!(" ({} NaN, {} Inf)", v.nan_count, v.inf_count);
    }
    if let Some(m) = v.first_mismatches.first() {
        s += &format!("; first at [{}]: got {} expected {}", m.index, m.got, m.expected);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dispatches_read_per_item() {
        let t = |per_run: f64, d: Option<u32>| Throughput { item: "token".into(), per_run, per_second: None, ms_per_item: None, dispatches_per_run: d };
        assert_eq!(t(1.0, Some(287)).format_dispatches(), "287/token", "a decode step");
        assert_eq!(t(128.0, Some(331)).format_dispatches(), "2.586/token", "a prefill of 128");
        assert_eq!(t(16.0, Some(16)).format_dispatches(), "1/token");
        assert_eq!(t(1.0, None).format_dispatches(), "–");
    }

    #[test]
    fn milliseconds_keep_three_significant_digits_below_ten_microseconds() {
        assert_eq!(format_ms(152.24), "152.2");
        assert_eq!(format_ms(1.23456), "1.235");
        assert_eq!(format_ms(0.0123), "0.0123");
        assert_eq!(format_ms(0.0081), "0.00810");
        assert_eq!(format_ms(0.000512), "0.000512");
        assert_eq!(format_ms(0.0), "0.0000");
    }
}
