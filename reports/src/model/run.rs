//! One invocation of harness and each browser/platform run in it: the settings asked for, the
//! harness, browser and driver that ran, how each run ended and where its time went.

use super::{BaselineComparison, CaseReport, CaseStatus, Counts, HostInfo, Latency, MemoryGrowth, MemorySample, Peaks, ProbeStatus};
use kernels::wire::{AdapterReport, PageError};
use kernels::{CaseSpec, Nudge, SamplingMode, WarmupPolicy};
use serde::{Deserialize, Serialize};

/// One invocation of harness: its settings, where it ran, and one [`PlatformRun`] per browser
/// and platform measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunReport {
    /// [`SCHEMA_VERSION`](super::SCHEMA_VERSION) of the writer.
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
    /// Which GPU timer timed harness's own cases (`--gpu-timer`).
    #[serde(default)]
    pub gpu_timer: kernels::gpu_timer::GpuTimerChoice,
    /// Whether the page GPU timer's cost was measured (`--gpu-timer-cost`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub gpu_timer_cost: bool,
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
    /// derived from `cases` by [`roofline::apply`](super::roofline::apply).
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
        MemoryGrowth::of(&self.memory)
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
