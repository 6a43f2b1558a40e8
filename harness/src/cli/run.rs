//! The options of `harness run`: the shared options of a measuring run ([`PipelineArgs`]) and
//! what only `run` has: the suite, tuning, the roofline, `--replay`, the page bundle, TensorFlow.js
//! and WebNN settings, models and user kernels.

use super::pipeline::{PipelineArgs, CASES};
use super::values::{GpuTimerArg, SuiteArg, WebnnDeviceArg};
use crate::plan::workload::WorkloadArgs;
use clap::Args;
use std::path::PathBuf;

/// The help heading of what a run measures beyond each case's times.
const MEASURING: &str = "Measuring";
/// The help heading of where the page and the engines beside harness's come from.
const ENGINES: &str = "Page and engines";

/// Options of `harness run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// Which shapes to run.
    #[arg(long, value_enum, default_value = "default", help_heading = CASES, conflicts_with = "resume")]
    pub suite: SuiteArg,
    /// Run the whole plan N times over in each browser and platform, in one browser session: a
    /// soak for leaks and drift, or a hunt for a flaky case. Passes after the first have ids of
    /// their own (`…/repeat=2`) and are checked like the first.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=100_000), help_heading = CASES, conflicts_with_all = ["resume", "tune"])]
    pub repeat: u32,
    /// Measure each model's cold start instead of its steady state: N fresh pages per whole pass
    /// (per-op cases and catalogue kernels are left out), each page in a new browser profile
    /// (no shader or HTTP cache), timed from navigation to the first output read back and
    /// checked, in phases: device (page, WASM, adapter, device), weights fetched, uploaded,
    /// pipelines, first dispatch, first result. On webgpu each pass runs twice, as `…/cold`
    /// (each pipeline created the usual way, with createComputePipeline, as the program is
    /// readied) and `…/cold+precompile` (all created up front at once with
    /// createComputePipelineAsync, while the weights upload); a two-encoder model (`--model
    /// clip`) also as `…/cold+parallel` and `…/cold+precompile+parallel`, its encoders loaded at
    /// once. onnxruntime-web's phases are its script, weights fetched, ONNX written, session,
    /// first run, first result.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1000), help_heading = CASES, conflicts_with_all = ["resume", "tune", "repeat", "roofline", "from_text", "hf_model"])]
    pub cold_start: Option<u32>,
    /// Where cases run, browsers, sampling, baselines, output and server.
    #[command(flatten)]
    pub pipeline: PipelineArgs,
    /// Models and user kernels to run (clap's help heading carries over to later options: each
    /// below names its own).
    #[command(flatten)]
    pub workloads: WorkloadArgs,
    /// The device a WebNN context is asked for (`--platform webnn`, and `ort-webnn`'s provider).
    #[arg(long, value_enum, default_value = "gpu", help_heading = MEASURING)]
    pub webnn_device: WebnnDeviceArg,
    /// Keep models' GEMMs off the tensor cores: where Chromium offers them
    /// (`chromium-experimental-subgroup-matrix`), harness runs its GEMMs on them by default, each
    /// f32 split into two f16 parts for f32's accuracy; this runs the f32 register-blocked kernels
    /// instead, to measure one against the other. Each case's `features` in results.json say which ran.
    #[arg(long, help_heading = MEASURING)]
    pub no_tensor_cores: bool,
    /// Choose models' kernels as for a GPU even on a software adapter (a CPU: SwiftShader,
    /// lavapipe), where harness otherwise runs every linear layer of several rows as one matmul
    /// of 16×16 blocks, never a matvec a row nor with K split, which a CPU runs many times
    /// faster: to check a GPU's kernels in CI, which has only software adapters.
    #[arg(long, help_heading = MEASURING)]
    pub gpu_kernels: bool,
    /// After a case of several dispatches (a model's pass, a kernel file's program) is sampled,
    /// time each dispatch alone: in a compute pass of its own between GPU timestamps, the median
    /// of up to 5 runs (as many as 100 ms of GPU time holds). The case's `engineProfile` in
    /// results.json and the HTML report's Profiles then say where its GPU time went, kernel by
    /// kernel, as onnxruntime-web's JSEP profile (always taken) does for its own. Needs
    /// `timestamp-query`. Off by default: on a software adapter even one more run of a model's
    /// pass takes a while.
    #[arg(long, help_heading = MEASURING)]
    pub profile: bool,
    /// Which GPU timer times harness's own cases on `webgpu`: `harness`, its own timestamps at
    /// the begin and end of the pass a batch is recorded in; or `page`, the page's GPU timer
    /// alone (page/static/gpu-timer.js), with harness's timestamps off. The page's timer times
    /// every compute pass any code in the page records: it is how onnxruntime-web, TensorFlow.js
    /// and transformers.js get GPU busy and span times (always, where the adapter has
    /// `timestamp-query`). Run both on the same cases to check that they agree.
    #[arg(long, value_enum, default_value_t = GpuTimerArg::Harness, help_heading = MEASURING)]
    pub gpu_timer: GpuTimerArg,
    /// Measure the page GPU timer's cost: after each case it times, sample the case again in the
    /// same page, alternately with the timer's timestamps and without them, twice each, batches
    /// sized on the wall clock both ways, and report the wall time a run over each way's timed
    /// samples (`gpuTimer.cost`, the reports' GPU timer table). For the engines and
    /// `--gpu-timer page`. Behind Firefox's completion timer the batches are long: about 30 s a model case more on
    /// the H200 (docs/hardware/h200-timer.md).
    #[arg(long, help_heading = MEASURING)]
    pub gpu_timer_cost: bool,
    /// Tune: run every variant of the tunable kernels selected (`matmul`'s tile sizes, workgroup
    /// shapes and vector widths; `matvec`'s workgroup sizes, rows per workgroup and vector
    /// widths) instead of their default, check each, rank the correct ones per
    /// browser and shape, and keep the fastest in --tune-cache for later runs. A wrong variant
    /// is reported and never picked. Other kernels are left out.
    #[arg(long, conflicts_with = "resume", help_heading = MEASURING)]
    pub tune: bool,
    /// The winners of --tune: later runs take each tunable kernel's variant from here (the one
    /// tuned in the same browser, or natively, at the nearest shape). A cache that cannot be
    /// read is ignored with a warning.
    #[arg(long, value_name = "FILE", default_value = "runs/tune.json", help_heading = MEASURING)]
    pub tune_cache: PathBuf,
    /// Measure each browser's (and native's) roofline first: run the probes `stream_copy` (a vec4
    /// copy: memory bandwidth) and `fma_chain` (chains of f32 FMAs: compute throughput) at the
    /// suite's shapes ahead of the other cases. The largest shape of each is the peak; every case
    /// of the same browser and platform then shows its fraction of the peak that binds it
    /// (`62% mem`, `41% FMA`: bytes / peak GB/s against FLOPs / peak GFLOP/s, whichever takes
    /// longer). Selecting the probes with --filter counts too.
    #[arg(long, conflicts_with = "resume", help_heading = MEASURING)]
    pub roofline: bool,
    /// Run the plan (cases, seeds, browsers, platforms, sampling settings) recorded in a
    /// results.json (or its folder) again.
    #[arg(long, value_name = "RESULTS", conflicts_with_all = REPLAYED, help_heading = CASES)]
    pub replay: Option<PathBuf>,
    /// Use this prebuilt page bundle instead of building one from the source tree.
    #[arg(long, env = "HARNESS_BUNDLE", help_heading = ENGINES)]
    pub bundle: Option<PathBuf>,
    /// With --platform tfjs: the folder npm installed `@tensorflow/tfjs-core` and
    /// `@tensorflow/tfjs-backend-webgpu` 4.22.0 into (it holds node_modules/@tensorflow/)
    /// [default: target/tfjs of the source tree, where `bash ci/setup.sh` installs them].
    #[arg(long, env = "HARNESS_TFJS_DIR", value_name = "DIR", help_heading = ENGINES)]
    pub tfjs_dir: Option<PathBuf>,
    /// With --platform ort-webgpu, ort-jsep or ort: the folder npm installed `onnxruntime-web`
    /// 1.30.0 into (it holds node_modules/onnxruntime-web/) [default: target/ort of the source
    /// tree, where `bash ci/setup.sh` installs it].
    #[arg(long, env = "HARNESS_ORT_DIR", value_name = "DIR", help_heading = ENGINES)]
    pub ort_dir: Option<PathBuf>,
    /// With --platform transformers: the folder npm installed `@huggingface/transformers` 4.3.1
    /// into, with the onnxruntime-web build it pins (node_modules/@huggingface/transformers/ and
    /// node_modules/onnxruntime-web/) [default: target/transformers of the source tree, where
    /// `bash ci/setup.sh` installs them].
    #[arg(long, env = "HARNESS_TRANSFORMERS_DIR", value_name = "DIR", help_heading = ENGINES)]
    pub transformers_dir: Option<PathBuf>,
}

/// The options `--replay` takes from the results file, so it conflicts with them (as `--resume`
/// does with the journal's).
const REPLAYED: [&str; 18] = [
    "resume", "suite", "repeat", "cold_start", "tune", "roofline", "platform", "filter", "seed", "browser", "sampling", "samples", "max_time",
    "target_ci", "warmup", "timeout", "retries", "nudge",
];

pub const AFTER_HELP: &str = "\
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
  harness run --model minilm,vit --no-ops --platform webgpu,ort   harness's models beside onnxruntime-web (both EPs)
  harness run --model whisper --batch 1 --no-ops --profile
                                                where a pass's GPU time goes, kernel by kernel (the
                                                HTML report's Profiles; results.json engineProfile)
  harness run --model minilm --batch 1 --seq 16 --cold-start 5 --platform webgpu,ort
                                                from a fresh page to the first checked result, 5 fresh
                                                profiles each, in phases; with and without precompiling
  harness run --model minilm --from-text --no-ops --batch 1,8 --platform webgpu,transformers
                                                sentences to embeddings, a call a sample, tokenize, run
                                                and pool: harness beside transformers.js's pipeline
  harness run --kernel examples/kernels/scale.toml --browser chrome,firefox --platform webgpu,native
                                                checked against the manifest's `expected` file; a kernel
                                                without one is `unchecked` (agreement is not correctness)

Sampling (how each sample is taken; every time reported is per dispatch):
  harness run                                   steady (default): a sample is a batch of N back-to-back
                                                dispatches (N sized to ~5 ms of GPU work), batches queued
                                                ahead so the GPU never idles; time / N. Behind a browser's
                                                completion timer (Firefox's 100 ms), every engine's waits
                                                are nudged with empty submits, so batches are seen done
                                                within a few ms
  harness run --browser firefox --nudge off     ... or waits as the browser gives them
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
or regressed beyond --fail-on-regression (or, under that gate, ran on other hardware than its
baseline; with --fail-on-regression=history, a series of the run regressed against its history);
2 the run could not happen (browser or driver missing, no
WebGPU adapter, nothing available to run, bad arguments).";
