//! The command line: every subcommand and its options (clap). Options that belong to one stage
//! (what a run measures, a browser's flags) are defined beside it and flattened in here.

pub mod replay;

use crate::measure::browser::user::{self, UserArg, UserPref};
use crate::measure::browser::{BrowserFlags, BrowserKind};
use crate::plan::workload::WorkloadArgs;
use clap::{Args, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

/// Measure and check WebGPU compute kernels in real browsers.
///
/// harness builds a WASM bundle of its kernels, serves it from a local server, drives a real
/// browser through WebDriver, times every case (GPU timestamp queries where the browser has them,
/// wall clock always), checks every output against an independent reference (an f64 CPU
/// reference; for your own kernel, the expected output its manifest names, else it reads
/// unchecked), and writes
/// results.json, a self-contained report.html, summary.md and junit.xml. The same kernels also
/// run on the CPU in WASM and natively through wgpu, for reference, and beside them
/// TensorFlow.js's ops and the browser's WebNN. Every median comes with a 95% bootstrap
/// confidence interval; saved baselines and `harness compare` make a regression gate.
#[derive(Debug, Parser)]
#[command(name = "harness", version, propagate_version = true)]
pub struct Cli {
    /// More log output (-v info, -vv debug); RUST_LOG overrides.
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub verbose: u8,
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run a kernel suite in browsers (or natively), check every result, and write reports.
    #[command(after_help = RUN_AFTER_HELP)]
    Run(Box<RunArgs>),
    /// List kernels, or the cases a suite and filter select.
    List(ListArgs),
    /// List the browsers and WebDriver servers found here, with versions, install hints and what
    /// to expect of WebNN in each.
    Browsers(BrowsersArgs),
    /// Decide, with evidence, whether WebGPU (or native wgpu) runs on real GPU hardware or a
    /// software adapter (SwiftShader, llvmpipe/lavapipe, WARP); in a browser, also whether its
    /// WebNN is available. Exit status (of the WebGPU verdict): 0 hardware, 1 software,
    /// 2 unavailable, 3 inconclusive.
    #[command(after_help = VERIFY_AFTER_HELP)]
    Verify(VerifyArgs),
    /// Compare two runs case by case: the change of each median with its 95% confidence
    /// interval, classed improved, regressed or unchanged.
    #[command(after_help = COMPARE_AFTER_HELP)]
    Compare(CompareArgs),
    /// Serve a folder of runs over HTTP with an index page, and print its URL.
    Open(OpenArgs),
    /// Work with saved reports.
    #[command(subcommand)]
    Report(ReportCommand),
}

const VERIFY_AFTER_HELP: &str = "\
Any sign of software decides SOFTWARE (a disagreement is said out loud). HARDWARE needs a sign of
hardware: isFallbackAdapter false, or the plausibility matmul at least 10x faster on the adapter
than on the CPU. With neither sign the verdict is INCONCLUSIVE: say, the flag is not reported,
the name is hidden (as Firefox hides it) and the speed-up is unmeasured or 3-10x, which fits
either. Its reason names what is missing. To settle it, check where the flag is reported
(--browser chrome, or --platform native for this machine's driver), or let the matmul finish
(a longer --timeout).

Exit status: 0 hardware; 1 software; 2 unavailable (no adapter) or an error; 3 inconclusive.";

const COMPARE_AFTER_HELP: &str = "\
OLD and NEW are each a run folder, a results.json, or the name of a baseline saved with
`harness run --save-baseline NAME` (looked up in --baseline-dir).

Examples:
  harness compare runs/20261101-120000-chrome runs/20261102-090000-chrome
  harness compare main runs/20261102-090000-chrome --fail-on-regression 5   a CI gate
  harness compare main runs/20261102-090000-chrome --out cmp/   also write reports with the comparison

A change counts when its 95% bootstrap interval excludes zero and it exceeds --noise-threshold;
otherwise the case is unchanged. Cases present in only one run are listed.

Exit status: 0 no regression beyond --fail-on-regression (or none given); 1 a regression beyond it;
2 a run could not be read.";

/// Where baselines live and what counts as a regression; shared by `run` and `compare`.
#[derive(Debug, Clone, Args)]
pub struct GateArgs {
    /// Folder of saved baselines (one folder per name).
    #[arg(long, env = "HARNESS_BASELINE_DIR", default_value = "runs/baselines")]
    pub baseline_dir: PathBuf,
    /// Changes smaller than this many percent are unchanged, even when the interval excludes zero.
    #[arg(long, value_name = "PCT", default_value_t = stats::change::DEFAULT_NOISE_PCT, value_parser = non_negative_pct)]
    pub noise_threshold: f64,
    /// Fail (exit status 1) when a case regressed by more than PCT percent.
    #[arg(long, value_name = "PCT", value_parser = non_negative_pct)]
    pub fail_on_regression: Option<f64>,
}

impl GateArgs {
    /// Compares `new` with the baseline `old`, called `name`, under these settings.
    pub fn compare(&self, name: &str, old: &reports::RunReport, new: &reports::RunReport) -> reports::baseline::BaselineComparison {
        reports::baseline::BaselineComparison::new(name, old, new, self.noise_threshold, self.fail_on_regression)
    }
}

/// Browser arguments and prefs of the user's, added after harness's own; shared by `run` and
/// `verify`.
#[derive(Debug, Clone, Default, Args)]
pub struct BrowserFlagArgs {
    /// A browser command-line argument, after harness's own; repeatable. Such as
    /// chrome=--enable-features=Vulkan (Chrome's WebGPU on a real GPU through Vulkan).
    ///
    /// BROWSER= (chrome, firefox, edge) gives it to that browser only; without it every browser
    /// of the run gets it. Where a browser takes the last of a repeated switch, yours wins.
    /// Examples: `--browser-arg chrome=--enable-features=Vulkan`,
    /// `--browser-arg 'chrome=--user-agent=my agent'`, `--browser-arg firefox=-safe-mode`,
    /// `--browser-arg --lang=en` (every browser).
    #[arg(long = "browser-arg", value_name = "[BROWSER=]ARG", allow_hyphen_values = true, value_parser = user::parse_arg)]
    pub args: Vec<UserArg>,
    /// A browser pref, over harness's own; repeatable. Such as
    /// firefox=gfx.webgpu.ignore-blocklist=false.
    ///
    /// Firefox's about:config; Chrome's and Edge's profile prefs. BROWSER= (chrome, firefox,
    /// edge) gives it to that browser only; without it every browser of the run gets it. It
    /// replaces harness's pref of the same name. VALUE is a bool or number when it reads as one,
    /// else text ('"3"' for the text 3). Examples: `--browser-pref firefox=dom.webgpu.enabled=true`,
    /// `--browser-pref firefox=general.useragent.override=my-agent`,
    /// `--browser-pref chrome=download.prompt_for_download=false`.
    #[arg(long = "browser-pref", value_name = "[BROWSER=]NAME=VALUE", value_parser = user::parse_pref)]
    pub prefs: Vec<UserPref>,
}

impl BrowserFlagArgs {
    /// The arguments and prefs `browser` gets, in the order given.
    pub fn for_browser(&self, browser: BrowserKind) -> BrowserFlags {
        user::flags_for(&self.args, &self.prefs, browser)
    }

    /// Prints a warning for every argument or pref that none of `browsers` gets.
    pub fn warn_unused(&self, browsers: &[BrowserKind]) {
        for warning in user::unused(&self.args, &self.prefs, browsers) {
            eprintln!("warning: {warning}");
        }
    }

    /// The `--browser-arg` values as given.
    pub fn given_args(&self) -> Vec<String> {
        self.args.iter().map(|a| a.given.clone()).collect()
    }

    /// The `--browser-pref` values as given.
    pub fn given_prefs(&self) -> Vec<String> {
        self.prefs.iter().map(|p| p.given.clone()).collect()
    }
}

/// Options of `harness compare`.
#[derive(Debug, Args)]
pub struct CompareArgs {
    /// The earlier run: a folder, a results.json, or a baseline name.
    pub old: String,
    /// The later run: a folder, a results.json, or a baseline name.
    pub new: String,
    /// Baseline folder, noise threshold and regression gate.
    #[command(flatten)]
    pub gate: GateArgs,
    /// Also write NEW's reports, with the comparison, into this folder.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Print the comparison as JSON.
    #[arg(long, conflicts_with = "markdown")]
    pub json: bool,
    /// Print the comparison as Markdown (for a CI job summary).
    #[arg(long)]
    pub markdown: bool,
}

/// Options of `harness open`.
#[derive(Debug, Args)]
pub struct OpenArgs {
    /// A folder of runs (such as `runs/`), or one run folder.
    #[arg(default_value = "runs")]
    pub dir: PathBuf,
    /// Port to listen on [default: a free one].
    #[arg(long)]
    pub port: Option<u16>,
    /// Address to listen on; anything beyond loopback exposes the reports to the network.
    #[arg(long, default_value = "127.0.0.1")]
    pub bind: std::net::IpAddr,
}

/// `harness report …`.
#[derive(Debug, Subcommand)]
pub enum ReportCommand {
    /// Merge result folders (one per browser or OS, as a CI matrix writes them) into one
    /// cross-browser report.
    Merge(MergeArgs),
}

/// Options of `harness report merge`.
#[derive(Debug, Args)]
pub struct MergeArgs {
    /// Result folders (or results.json files) to merge.
    #[arg(required = true)]
    pub inputs: Vec<PathBuf>,
    /// Folder for the merged results.json, report.html and summary.md.
    #[arg(long)]
    pub out: PathBuf,
}

/// Options of `harness verify`.
#[derive(Debug, Args)]
pub struct VerifyArgs {
    /// Browser to check (with --platform webgpu).
    #[arg(long, value_enum, default_value = "chrome")]
    pub browser: BrowserKind,
    /// `webgpu` (in the browser) or `native` (wgpu on this machine's driver, no browser).
    #[arg(long, value_enum, default_value = "webgpu")]
    pub platform: PlatformArg,
    /// Browser executable, instead of searching.
    #[arg(long)]
    pub browser_path: Option<PathBuf>,
    /// WebDriver executable, instead of searching.
    #[arg(long)]
    pub driver_path: Option<PathBuf>,
    /// Browser arguments and prefs of yours.
    #[command(flatten)]
    pub browser_flags: BrowserFlagArgs,
    /// Seconds the plausibility matmul may take on each platform.
    #[arg(long, default_value_t = 120.0, value_parser = positive_seconds)]
    pub timeout: f64,
    /// Use this prebuilt page bundle instead of building one.
    #[arg(long, env = "HARNESS_BUNDLE")]
    pub bundle: Option<PathBuf>,
    /// Print the verdict and evidence as JSON.
    #[arg(long)]
    pub json: bool,
}

/// Options of `harness browsers`.
#[derive(Debug, Args)]
pub struct BrowsersArgs {
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// A `--browser` value: one browser, or all that are installed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum BrowserChoice {
    /// Chrome or Chromium.
    Chrome,
    /// Firefox.
    Firefox,
    /// Microsoft Edge.
    Edge,
    /// Every supported browser installed here (see `harness browsers`).
    All,
}

const RUN_AFTER_HELP: &str = "\
Examples:
  harness run                                   default suite, headless Chrome/Chromium
  harness run --suite quick --samples 10        a fast smoke run
  harness run --browser chrome,firefox          both, one after the other, in one report
  harness run --platform webgpu,wasm,native     WebGPU beside the WASM-CPU and native-wgpu baselines
  harness run --platform webgpu,tfjs --filter matmul   harness's matmul beside TensorFlow.js 4.22's WebGPU
                                                backend (install it with `bash ci/setup.sh`; see --tfjs-dir)
  harness run --filter 'matmul_*,softmax'       only some kernels, in that order (see `harness list`)
  harness run --filter 'matmul@13x17x19'        one of the suite's shapes of a kernel
  harness run --headed --timeout 120            watch it run
  harness run --browser-path firefox=/opt/ff/firefox --browser chrome,firefox
  harness run --browser-arg chrome=--enable-features=Vulkan    Chrome's WebGPU on a real GPU through Vulkan
  harness run --browser chrome,firefox --browser-pref firefox=gfx.webgpu.ignore-blocklist=false
                                                Firefox's own GPU blocklist decides (harness turns it off)
  harness run --webdriver-url http://grid:4444 --bind 0.0.0.0 --public-url http://me:8000 --port 8000

Models and your own kernels:
  harness run --model minilm --platform webgpu,native     MiniLM sentences/s at batch 1, 8 × seq 16, 128
  harness run --model tinyllama --layers 2 --context 16   prefill and decode tokens/s, time per op
  harness run --kernel examples/kernels/scale.toml --browser chrome,firefox --platform webgpu,native
                                                checked against the manifest's `expected` file; a kernel
                                                without one is `unchecked` (agreement is not correctness)

Sampling (how each sample is taken; every time reported is per dispatch):
  harness run                                   steady (default): a sample is a batch of N back-to-back
                                                dispatches (N sized to ~5 ms of GPU work, more behind a
                                                slow completion timer such as Firefox's), batches queued
                                                ahead so the GPU never idles; time / N
  harness run --sampling isolated               one dispatch per sample, the GPU idle in between: the
                                                cost of a one-off call, idle clocks and completion latency
                                                included

Statistics and baselines:
  harness run --target-ci 1 --max-time 20        sample until each median is known to ±1% (95% CI)
  harness run --save-baseline main               keep this run as the baseline `main`
  harness run --baseline main --fail-on-regression 5    compare with it; fail on a >5% regression
  harness run --replay runs/<dir>/results.json   run the same plan, seeds and settings again
  harness run --resume runs/<dir>                complete a killed run from its journal (results.jsonl)
  harness run --filter add --suite quick --repeat 100    a 200-case soak in one session; memory (and its
                                                growth per case) in the summary

WebNN (the browser's navigator.ml):
  harness run --platform both                   webgpu and webnn side by side; where the browser has no
                                                WebNN backend the webnn run is `unavailable`, with its reason

Reports go to runs/<timestamp>-<browser>/ (results.json, report.html, summary.md, junit.xml,
and the journal results.jsonl, written as cases finish)
unless --out is given; `harness open` serves them with an index of runs.

Exit status: 0 every case passed its check (an unavailable WebNN, an unsupported case or an unchecked
user kernel, one with no `expected` output, is no failure); 1 a case was wrong,
timed out, crashed its browser (even if a retry then passed), lost its GPU device or raised an error,
or regressed beyond --fail-on-regression; 2 the run could not happen (browser or driver missing, no
WebGPU adapter, nothing available to run, bad arguments).";

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

/// Where kernels run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PlatformArg {
    /// WebGPU in the browser, through wgpu's WebGPU backend compiled to WASM.
    Webgpu,
    /// The same kernels as plain Rust in WASM (SIMD128) on the CPU, in the same page: the CPU
    /// baseline.
    Wasm,
    /// The same WGSL through wgpu on this machine's Vulkan, Metal or DX12 driver, no browser.
    Native,
    /// TensorFlow.js 4.22's WebGPU backend in the same page: its own ops (`tf.matMul`, `tf.add`,
    /// `tf.softmax`, …) on the same inputs, checked the same way; kernels it has no op for are
    /// reported as unsupported there. Needs its npm packages (`bash ci/setup.sh`, or --tfjs-dir).
    Tfjs,
    /// The browser's WebNN (`navigator.ml`): each kernel as a graph of WebNN operators (matmul,
    /// add/sub/mul/div, relu, tanh, gelu and silu composed, softmax, layerNormalization, rmsnorm
    /// composed) on the OS's ML stack: DirectML or ONNX Runtime (Chrome, Edge on Windows), Core ML
    /// (macOS), TFLite. Where the browser has none it is reported unavailable, with its reason.
    /// Chromium gets --enable-features=WebMachineLearningNeuralNetwork.
    Webnn,
    /// webgpu and webnn, side by side.
    Both,
}

impl PlatformArg {
    /// The platforms it stands for.
    pub fn platforms(self) -> &'static [kernels::Platform] {
        use kernels::Platform as P;
        match self {
            PlatformArg::Webgpu => &[P::Webgpu],
            PlatformArg::Wasm => &[P::Wasm],
            PlatformArg::Native => &[P::Native],
            PlatformArg::Tfjs => &[P::Tfjs],
            PlatformArg::Webnn => &[P::Webnn],
            PlatformArg::Both => &[P::Webgpu, P::Webnn],
        }
    }
}

/// `--webnn-device`: which device a WebNN context is asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum WebnnDeviceArg {
    /// The CPU.
    Cpu,
    /// The GPU.
    Gpu,
    /// A neural processing unit, where the machine has one.
    Npu,
}

impl From<WebnnDeviceArg> for kernels::webnn::Device {
    fn from(d: WebnnDeviceArg) -> Self {
        match d {
            WebnnDeviceArg::Cpu => kernels::webnn::Device::Cpu,
            WebnnDeviceArg::Gpu => kernels::webnn::Device::Gpu,
            WebnnDeviceArg::Npu => kernels::webnn::Device::Npu,
        }
    }
}

/// How much to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SuiteArg {
    /// Small shapes: seconds, even on a software adapter.
    Quick,
    /// Medium shapes.
    Default,
    /// Large shapes, for real GPUs.
    Full,
}

impl From<SuiteArg> for kernels::Suite {
    fn from(s: SuiteArg) -> Self {
        match s {
            SuiteArg::Quick => kernels::Suite::Quick,
            SuiteArg::Default => kernels::Suite::Default,
            SuiteArg::Full => kernels::Suite::Full,
        }
    }
}

/// Options of `harness run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// Browsers to drive, comma-separated, one after the other (so they do not share the GPU).
    #[arg(long, value_enum, value_delimiter = ',', default_value = "chrome", conflicts_with_all = ["replay", "resume"])]
    pub browser: Vec<BrowserChoice>,
    /// Where the kernels run, comma-separated; the report puts them side by side with ratios.
    /// `native` needs no browser.
    #[arg(long, value_enum, value_delimiter = ',', default_value = "webgpu", conflicts_with_all = ["replay", "resume"])]
    pub platform: Vec<PlatformArg>,
    /// The device a WebNN context is asked for (`--platform webnn`).
    #[arg(long, value_enum, default_value = "gpu")]
    pub webnn_device: WebnnDeviceArg,
    /// Run the browser without a window (the default).
    #[arg(long, conflicts_with = "headed")]
    pub headless: bool,
    /// Show the browser window.
    #[arg(long)]
    pub headed: bool,
    /// Which shapes to run.
    #[arg(long, value_enum, default_value = "default", conflicts_with_all = ["replay", "resume"])]
    pub suite: SuiteArg,
    /// Kernels to run, as names or globs, comma-separated (`matmul_*,softmax`), in that order;
    /// `KERNEL@SHAPE` keeps one of the suite's shapes (`matmul@13x17x19`, `matvec@*x1`).
    #[arg(long, value_delimiter = ',', conflicts_with_all = ["replay", "resume"])]
    pub filter: Vec<String>,
    /// How a sample is taken: `steady` batches N back-to-back dispatches (N sized so a batch is
    /// ~5 ms of GPU work, longer where the browser reports completion late so the samples span
    /// ten completion latencies; on the wall clock alone, ten latencies a batch) and keeps batches
    /// queued so the GPU never idles; `isolated` times one dispatch at a time, the GPU idle in
    /// between. Times are per dispatch either way.
    #[arg(long, value_enum, default_value = "steady", conflicts_with_all = ["replay", "resume"])]
    pub sampling: SamplingArg,
    /// Timed samples per case; with --target-ci, the fewest taken before the target is checked.
    #[arg(long, default_value_t = 30, value_parser = clap::value_parser!(u32).range(1..=100_000), conflicts_with_all = ["replay", "resume"])]
    pub samples: u32,
    /// Time budget in seconds of a case's timed samples: sampling stops early once it is spent
    /// (at least 5 samples are always taken). The report says which limit ended each case.
    #[arg(long, default_value_t = 10.0, value_parser = positive_seconds, conflicts_with_all = ["replay", "resume"])]
    pub max_time: f64,
    /// Keep sampling each case until the 95% confidence interval of its median is within ±PCT
    /// percent of the median (or --max-time is spent; at most 2048 samples, or --samples if more).
    #[arg(long, value_name = "PCT", value_parser = positive_pct, conflicts_with_all = ["replay", "resume"])]
    pub target_ci: Option<f64>,
    /// Untimed warm-up samples per case after the first (always untimed) dispatch: a count, or
    /// `auto` to go on until two windows of 5 agree within 5% and, where a clock probe watches
    /// the GPU, its clock has settled (at most 100 samples or a quarter of --max-time). The
    /// report says how each case's warm-up ended.
    #[arg(long, default_value = "auto", value_parser = clap::value_parser!(stats::WarmupPolicy), conflicts_with_all = ["replay", "resume"])]
    pub warmup: stats::WarmupPolicy,
    /// Run the whole plan N times over in each browser and platform, in one browser session: a
    /// soak for leaks and drift, or a hunt for a flaky case. Passes after the first have ids of
    /// their own (`…/repeat=2`) and are checked like the first.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=100_000), conflicts_with_all = ["replay", "resume", "tune"])]
    pub repeat: u32,
    /// Seed of the inputs: a case is reproducible from (kernel, shape, seed).
    #[arg(long, default_value_t = 1, conflicts_with_all = ["replay", "resume"])]
    pub seed: u64,
    /// Tune: run every variant of the tunable kernels selected (`matmul`'s tile sizes, workgroup
    /// shapes and vector widths; `matvec`'s workgroup sizes, rows per workgroup and vector
    /// widths) instead of their default, check each, rank the correct ones per
    /// browser and shape, and keep the fastest in --tune-cache for later runs. A wrong variant
    /// is reported and never picked. Other kernels are left out.
    #[arg(long, conflicts_with_all = ["replay", "resume"])]
    pub tune: bool,
    /// The winners of --tune: later runs take each tunable kernel's variant from here (the one
    /// tuned in the same browser, or natively, at the nearest shape). A cache that cannot be
    /// read is ignored with a warning.
    #[arg(long, value_name = "FILE", default_value = "runs/tune.json")]
    pub tune_cache: PathBuf,
    /// Measure each browser's (and native's) roofline first: run the probes `stream_copy` (a vec4
    /// copy: memory bandwidth) and `fma_chain` (chains of f32 FMAs: compute throughput) at the
    /// suite's shapes ahead of the other cases. The largest shape of each is the peak; every case
    /// of the same browser and platform then shows its fraction of the peak that binds it
    /// (`62% mem`, `41% FMA`: bytes / peak GB/s against FLOPs / peak GFLOP/s, whichever takes
    /// longer). Selecting the probes with --filter counts too.
    #[arg(long, conflicts_with_all = ["replay", "resume"])]
    pub roofline: bool,
    /// Run the plan (cases, seeds, browsers, platforms, sampling settings) recorded in a
    /// results.json (or its folder) again.
    #[arg(long, value_name = "RESULTS")]
    pub replay: Option<PathBuf>,
    /// Complete the run in DIR that ended early (harness killed, a CI runner lost): the plan and
    /// settings its journal (results.jsonl) recorded, less the cases it already holds, written
    /// into the same folder. With every case there, it only writes the reports again.
    #[arg(long, value_name = "DIR", conflicts_with_all = ["replay", "out"])]
    pub resume: Option<PathBuf>,
    /// Save this run as the baseline NAME (in --baseline-dir), replacing any of that name.
    #[arg(long, value_name = "NAME")]
    pub save_baseline: Option<String>,
    /// Compare this run with the baseline NAME (or a run folder) and put the changes in the
    /// reports.
    #[arg(long, value_name = "NAME")]
    pub baseline: Option<String>,
    /// Baseline folder, noise threshold and regression gate.
    #[command(flatten)]
    pub gate: GateArgs,
    /// Folder for results.json and report.html [default: runs/<timestamp>-<browser>].
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Seconds a case may take (including its pipeline compile) before it is marked timed out.
    #[arg(long, default_value_t = 60.0, value_parser = positive_seconds, conflicts_with_all = ["replay", "resume"])]
    pub timeout: f64,
    /// Runs a case whose browser crashed, or that timed out, again up to N times; a crash starts a
    /// fresh browser session for it and the cases after it. The report lists every attempt.
    #[arg(long, value_name = "N", default_value_t = 1, conflicts_with_all = ["replay", "resume"])]
    pub retries: u32,
    /// Browser executable instead of searching PATH and the usual install locations; with several
    /// browsers write BROWSER=PATH (repeatable).
    #[arg(long, value_name = "[BROWSER=]PATH")]
    pub browser_path: Vec<String>,
    /// WebDriver executable (chromedriver, geckodriver, msedgedriver) instead of searching; with
    /// several browsers write BROWSER=PATH (repeatable).
    #[arg(long, value_name = "[BROWSER=]PATH")]
    pub driver_path: Vec<String>,
    /// Browser arguments and prefs of yours (with --replay, the recorded ones unless given).
    #[command(flatten)]
    pub browser_flags: BrowserFlagArgs,
    /// Use this running WebDriver endpoint or Selenium Grid instead of launching a driver.
    #[arg(long, value_name = "URL")]
    pub webdriver_url: Option<String>,
    /// Address the server listens on; anything beyond loopback exposes it to the network.
    #[arg(long, default_value = "127.0.0.1")]
    pub bind: std::net::IpAddr,
    /// The server's URL as the browser must use it (for a remote browser), such as
    /// http://my-host:8000 [default: http://BIND:PORT].
    #[arg(long, value_name = "URL")]
    pub public_url: Option<String>,
    /// Port of the server that serves the page and receives results [default: a free one].
    #[arg(long)]
    pub port: Option<u16>,
    /// Use this prebuilt page bundle instead of building one from the source tree.
    #[arg(long, env = "HARNESS_BUNDLE")]
    pub bundle: Option<PathBuf>,
    /// With --platform tfjs: the folder npm installed `@tensorflow/tfjs-core` and
    /// `@tensorflow/tfjs-backend-webgpu` 4.22.0 into (it holds node_modules/@tensorflow/)
    /// [default: target/tfjs of the source tree, where `bash ci/setup.sh` installs them].
    #[arg(long, env = "HARNESS_TFJS_DIR", value_name = "DIR")]
    pub tfjs_dir: Option<PathBuf>,
    /// Print results.json to stdout instead of the summary table.
    #[arg(long)]
    pub json: bool,
    /// Models and user kernels to run (last: clap's help heading carries over to later options).
    #[command(flatten)]
    pub workloads: WorkloadArgs,
}

impl RunArgs {
    /// Whether the browser runs headless.
    pub fn is_headless(&self) -> bool {
        !self.headed
    }

    /// The browsers named, in order, without repeats; `all` stands for `installed`.
    pub fn browsers(&self, installed: impl Fn() -> Vec<BrowserKind>) -> Vec<BrowserKind> {
        let mut out = Vec::new();
        for choice in &self.browser {
            let kinds = match choice {
                BrowserChoice::Chrome => vec![BrowserKind::Chrome],
                BrowserChoice::Firefox => vec![BrowserKind::Firefox],
                BrowserChoice::Edge => vec![BrowserKind::Edge],
                BrowserChoice::All => installed(),
            };
            for k in kinds {
                if !out.contains(&k) {
                    out.push(k);
                }
            }
        }
        out
    }
}

/// Picks the path for `browser` from `--browser-path`/`--driver-path` values: `BROWSER=PATH`
/// entries apply to that browser, a bare path to the only browser of the run.
pub fn path_for(values: &[String], flag: &str, browser: BrowserKind, browsers: usize) -> Result<Option<PathBuf>, String> {
    let key = browser.spec().key;
    let mut found = None;
    for v in values {
        let keyed = v.split_once('=').filter(|(k, _)| BrowserKind::ALL.iter().any(|b| b.spec().key == *k));
        match keyed {
            Some((k, path)) if k == key => found = Some(PathBuf::from(path)),
            Some(_) => {}
            None if browsers == 1 => found = Some(PathBuf::from(v)),
            None => {
                return Err(format!(
                    "{flag} {v}: with several browsers, say which one it is for, as {flag} {key}={v}"
                ))
            }
        }
    }
    Ok(found)
}

/// Options of `harness list`.
#[derive(Debug, Args)]
pub struct ListArgs {
    /// List the cases of this suite instead of the kernels.
    #[arg(long, value_enum)]
    pub suite: Option<SuiteArg>,
    /// Only kernels matching these names or globs, comma-separated, in that order; `KERNEL@SHAPE`
    /// keeps one of the suite's shapes (`matmul@13x17x19`).
    #[arg(long, value_delimiter = ',')]
    pub filter: Vec<String>,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

fn positive_pct(s: &str) -> Result<f64, String> {
    match s.trim_end_matches('%').parse::<f64>() {
        Ok(v) if v > 0.0 && v.is_finite() => Ok(v),
        _ => Err(format!("`{s}` is not a positive percentage")),
    }
}

fn non_negative_pct(s: &str) -> Result<f64, String> {
    match s.trim_end_matches('%').parse::<f64>() {
        Ok(v) if v >= 0.0 && v.is_finite() => Ok(v),
        _ => Err(format!("`{s}` is not a percentage of 0 or more")),
    }
}

fn positive_seconds(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v > 0.0 && v.is_finite() => Ok(v),
        _ => Err(format!("`{s}` is not a positive number of seconds")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Cli, clap::Error> {
        Cli::try_parse_from(std::iter::once("harness").chain(args.iter().copied()))
    }

    #[test]
    fn defaults_are_headless_chrome_webgpu_default_suite() {
        let Command::Run(r) = parse(&["run"]).unwrap().command else { panic!() };
        assert_eq!(r.browsers(Vec::new), vec![BrowserKind::Chrome]);
        assert_eq!((r.platform.as_slice(), r.suite), ([PlatformArg::Webgpu].as_slice(), SuiteArg::Default));
        assert!(r.is_headless());
        assert_eq!((r.samples, r.warmup, r.timeout, r.target_ci), (30, stats::WarmupPolicy::Auto, 60.0, None));
        assert_eq!((r.gate.noise_threshold, r.gate.fail_on_regression), (2.0, None));
    }

    #[test]
    fn headed_and_headless_conflict() {
        assert!(parse(&["run", "--headed", "--headless"]).is_err());
        let Command::Run(r) = parse(&["run", "--headed"]).unwrap().command else { panic!() };
        assert!(!r.is_headless());
    }

    #[test]
    fn both_is_webgpu_and_webnn_and_repeat_is_no_tuning_flag() {
        use kernels::Platform as P;
        for given in [&["run", "--platform", "both"][..], &["run", "--platform", "webgpu,webnn"]] {
            let Command::Run(r) = parse(given).unwrap().command else { panic!() };
            let platforms: Vec<P> = r.platform.iter().flat_map(|p| p.platforms()).copied().collect();
            assert_eq!(platforms, [P::Webgpu, P::Webnn], "{given:?}");
            assert_eq!(r.webnn_device, WebnnDeviceArg::Gpu);
        }
        let Command::Run(r) = parse(&["run", "--platform", "webnn", "--webnn-device", "npu", "--repeat", "3"]).unwrap().command else { panic!() };
        assert_eq!((r.webnn_device, r.repeat), (WebnnDeviceArg::Npu, 3));
        assert!(parse(&["run", "--webnn-device", "tpu"]).is_err());
        assert!(parse(&["run", "--repeat", "2", "--tune"]).is_err(), "a tuning run picks winners once");
        assert!(parse(&["run", "--repeat", "0"]).is_err());
    }

    #[test]
    fn filter_splits_on_commas() {
        let Command::Run(r) = parse(&["run", "--filter", "matmul_*,softmax"]).unwrap().command else { panic!() };
        assert_eq!(r.filter, vec!["matmul_*", "softmax"]);
    }

    #[test]
    fn several_browsers_and_all() {
        let Command::Run(r) = parse(&["run", "--browser", "firefox,chrome,firefox"]).unwrap().command else { panic!() };
        assert_eq!(r.browsers(Vec::new), vec![BrowserKind::Firefox, BrowserKind::Chrome]);
        let Command::Run(r) = parse(&["run", "--browser", "all"]).unwrap().command else { panic!() };
        assert_eq!(r.browsers(|| vec![BrowserKind::Chrome, BrowserKind::Firefox]), vec![BrowserKind::Chrome, BrowserKind::Firefox]);
    }

    #[test]
    fn paths_can_be_given_per_browser() {
        let v = vec!["firefox=/ff".to_string(), "chrome=/c".to_string()];
        assert_eq!(path_for(&v, "--browser-path", BrowserKind::Firefox, 2).unwrap(), Some(PathBuf::from("/ff")));
        assert_eq!(path_for(&v, "--browser-path", BrowserKind::Edge, 2).unwrap(), None);
        let bare = vec!["/usr/bin/chromium".to_string()];
        assert_eq!(path_for(&bare, "--browser-path", BrowserKind::Chrome, 1).unwrap(), Some(PathBuf::from("/usr/bin/chromium")));
        let e = path_for(&bare, "--browser-path", BrowserKind::Chrome, 2).unwrap_err();
        assert!(e.contains("chrome=/usr/bin/chromium"), "{e}");
    }

    #[test]
    fn bad_values_are_rejected_with_the_reason() {
        let e = parse(&["run", "--browser", "netscape"]).unwrap_err().to_string();
        assert!(e.contains("chrome"), "{e}");
        let e = parse(&["run", "--timeout=-1"]).unwrap_err().to_string();
        assert!(e.contains("positive"), "{e}");
        assert!(parse(&["run", "--samples", "0"]).is_err());
        let e = parse(&["run", "--suite", "huge"]).unwrap_err().to_string();
        assert!(e.contains("quick"), "{e}");
        let e = parse(&["run", "--warmup", "soon"]).unwrap_err().to_string();
        assert!(e.contains("neither `auto` nor a number"), "{e}");
        let e = parse(&["run", "--target-ci", "0"]).unwrap_err().to_string();
        assert!(e.contains("positive percentage"), "{e}");
    }

    #[test]
    fn replay_takes_the_plan_from_the_file_so_plan_flags_conflict() {
        let e = parse(&["run", "--replay", "r.json", "--suite", "quick"]).unwrap_err().to_string();
        assert!(e.contains("--suite") && e.contains("--replay"), "{e}");
        let Command::Run(r) = parse(&["run", "--replay", "r.json", "--out", "x", "--browser-path", "/c"]).unwrap().command else { panic!() };
        assert_eq!(r.replay, Some(PathBuf::from("r.json")));
    }

    #[test]
    fn browser_args_and_prefs_parse_the_same_for_run_and_verify() {
        let given = ["--browser-arg", "--enable-features=Vulkan", "--browser-arg", "chrome=--x=y", "--browser-pref", "firefox=a.b=3"];
        let with = |command: &'static str| std::iter::once(command).chain(given).collect::<Vec<_>>();
        let Command::Run(r) = parse(&with("run")).unwrap().command else { panic!() };
        let Command::Verify(v) = parse(&with("verify")).unwrap().command else { panic!() };
        for flags in [&r.browser_flags, &v.browser_flags] {
            assert_eq!(flags.given_args(), ["--enable-features=Vulkan", "chrome=--x=y"]);
            assert_eq!(flags.given_prefs(), ["firefox=a.b=3"]);
            let chrome = flags.for_browser(BrowserKind::Chrome);
            assert_eq!((chrome.args.as_slice(), chrome.prefs.len()), (["--enable-features=Vulkan".to_string(), "--x=y".into()].as_slice(), 0));
            let firefox = flags.for_browser(BrowserKind::Firefox);
            assert_eq!((firefox.args, firefox.prefs), (vec!["--enable-features=Vulkan".to_string()], vec![("a.b".to_string(), serde_json::json!(3))]));
        }
        let e = parse(&["run", "--browser-pref", "firefox=novalue"]).unwrap_err().to_string();
        assert!(e.contains("NAME=VALUE") && e.contains("firefox=dom.webgpu.enabled=true"), "{e}");
        let e = parse(&["verify", "--browser-arg=safari=--x"]).unwrap_err().to_string();
        assert!(e.contains("chrome, firefox, edge"), "{e}");
        // Not part of the plan: they may be given with --replay, replacing the recorded ones.
        assert!(parse(&["run", "--replay", "r.json", "--browser-arg", "--x"]).is_ok());
    }

    #[test]
    fn warmup_and_target_ci_and_gate_parse() {
        let Command::Run(r) = parse(&["run", "--warmup", "3", "--target-ci", "1.5%", "--fail-on-regression", "5"]).unwrap().command else { panic!() };
        assert_eq!((r.warmup, r.target_ci, r.gate.fail_on_regression), (stats::WarmupPolicy::Fixed(3), Some(1.5), Some(5.0)));
    }
}
