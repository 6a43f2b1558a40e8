//! The options every measuring subcommand (`run`, and `bench` beside it) takes, in one struct to
//! flatten: where the cases run and which, the browsers, sampling, baselines, output and server.
//! `commands` turns them into the pipeline's settings.

use super::browser::BrowserArgs;
use super::gate::BaselineArgs;
use super::output::OutputArgs;
use super::sampling::SamplingArgs;
use super::serve::ServeArgs;
use super::values::PlatformArg;
use clap::Args;

/// The help heading of the options that say which cases run where.
pub const CASES: &str = "Cases";

/// The options of a measuring run that do not depend on what is measured.
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = CASES)]
pub struct PipelineArgs {
    /// Where the kernels run, comma-separated; the report puts them side by side with ratios.
    /// `native` needs no browser. [default: webgpu; for `harness bench`, webgpu,wasm: its GPU
    /// benches on WebGPU and its CPU benches as WASM]
    #[arg(long, value_enum, value_delimiter = ',', conflicts_with = "resume")]
    pub platform: Vec<PlatformArg>,
    /// Kernels to run, as names or globs, comma-separated (`matmul_*,softmax`), in that order;
    /// `KERNEL@SHAPE` keeps one of the suite's shapes (`matmul@13x17x19`, `matvec@*x1`).
    #[arg(long, value_delimiter = ',', conflicts_with = "resume")]
    pub filter: Vec<String>,
    /// Seed of the inputs: a case is reproducible from (kernel, shape, seed).
    #[arg(long, default_value_t = 1, conflicts_with = "resume")]
    pub seed: u64,
    /// Browsers, their executables, drivers and flags.
    #[command(flatten)]
    pub browser: BrowserArgs,
    /// Sampling policy, case timeout and retries.
    #[command(flatten)]
    pub sampling: SamplingArgs,
    /// The baseline to compare with or save, and the regression gate.
    #[command(flatten)]
    pub baseline: BaselineArgs,
    /// The report folder, stdout, and the run to resume.
    #[command(flatten)]
    pub output: OutputArgs,
    /// Where the page's server listens.
    #[command(flatten)]
    pub serve: ServeArgs,
}
