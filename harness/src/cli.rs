//! The command line: `harness run`, `harness list`.

use crate::browser::BrowserKind;
use clap::{Args, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

/// Measure and check WebGPU compute kernels in real browsers.
///
/// harness builds a WASM bundle of its kernels, serves it from a local server, drives a real
/// browser through WebDriver, times every case (GPU timestamp queries where the browser has them,
/// wall clock always), checks every output against an f64 CPU reference, and writes
/// results.json and a self-contained report.html.
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
    /// Run a kernel suite in a browser, check every result, and write reports.
    #[command(after_help = RUN_AFTER_HELP)]
    Run(RunArgs),
    /// List kernels, or the cases a suite and filter select.
    List(ListArgs),
}

const RUN_AFTER_HELP: &str = "\
Examples:
  harness run                                   default suite, headless Chrome/Chromium
  harness run --suite quick --samples 10        a fast smoke run
  harness run --filter 'matmul_*,softmax'       only some kernels (see `harness list`)
  harness run --headed --timeout 120            watch it run

Reports go to runs/<timestamp>-<browser>/ (results.json, report.html) unless --out is given.

Exit status: 0 every case passed its check; 1 a case was wrong, timed out or raised an error;
2 the run could not happen (browser or driver missing, no WebGPU adapter, bad arguments).";

/// Where kernels run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Platform {
    /// WebGPU in the browser, through wgpu's WebGPU backend compiled to WASM.
    Webgpu,
}

impl Platform {
    /// The name used in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Platform::Webgpu => "webgpu",
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
    /// Browser to drive.
    #[arg(long, value_enum, default_value = "chrome")]
    pub browser: BrowserKind,
    /// Where the kernels run.
    #[arg(long, value_enum, default_value = "webgpu")]
    pub platform: Platform,
    /// Run the browser without a window (the default).
    #[arg(long, conflicts_with = "headed")]
    pub headless: bool,
    /// Show the browser window.
    #[arg(long)]
    pub headed: bool,
    /// Which shapes to run.
    #[arg(long, value_enum, default_value = "default")]
    pub suite: SuiteArg,
    /// Kernels to run, as names or globs, comma-separated (`matmul_*,softmax`).
    #[arg(long, value_delimiter = ',')]
    pub filter: Vec<String>,
    /// Timed samples per case.
    #[arg(long, default_value_t = 30, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub samples: u32,
    /// Time budget in seconds of a case's timed samples: sampling stops early once it is spent
    /// (at least 5 samples are always taken). The report says which limit ended each case.
    #[arg(long, default_value_t = 10.0, value_parser = positive_seconds)]
    pub max_time: f64,
    /// Untimed warm-up dispatches per case, after the first dispatch (which is always untimed).
    #[arg(long, default_value_t = 5)]
    pub warmup: u32,
    /// Seed of the inputs: a case is reproducible from (kernel, shape, seed).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Folder for results.json and report.html [default: runs/<timestamp>-<browser>].
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Seconds a case may take (including its pipeline compile) before it is marked timed out.
    #[arg(long, default_value_t = 60.0, value_parser = positive_seconds)]
    pub timeout: f64,
    /// Browser executable, instead of searching PATH and the usual install locations.
    #[arg(long)]
    pub browser_path: Option<PathBuf>,
    /// WebDriver executable (chromedriver), instead of searching PATH and the usual locations.
    #[arg(long)]
    pub driver_path: Option<PathBuf>,
    /// Port of the local server that serves the page and receives results [default: a free one].
    #[arg(long)]
    pub port: Option<u16>,
    /// Use this prebuilt page bundle instead of building one from the source tree.
    #[arg(long, env = "HARNESS_BUNDLE")]
    pub bundle: Option<PathBuf>,
    /// Print results.json to stdout instead of the summary table.
    #[arg(long)]
    pub json: bool,
}

impl RunArgs {
    /// Whether the browser runs headless.
    pub fn is_headless(&self) -> bool {
        !self.headed
    }
}

/// Options of `harness list`.
#[derive(Debug, Args)]
pub struct ListArgs {
    /// List the cases of this suite instead of the kernels.
    #[arg(long, value_enum)]
    pub suite: Option<SuiteArg>,
    /// Only kernels matching these names or globs, comma-separated.
    #[arg(long, value_delimiter = ',')]
    pub filter: Vec<String>,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
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
        assert_eq!((r.browser, r.platform, r.suite), (BrowserKind::Chrome, Platform::Webgpu, SuiteArg::Default));
        assert!(r.is_headless());
        assert_eq!((r.samples, r.warmup, r.timeout), (30, 5, 60.0));
    }

    #[test]
    fn headed_and_headless_conflict() {
        assert!(parse(&["run", "--headed", "--headless"]).is_err());
        let Command::Run(r) = parse(&["run", "--headed"]).unwrap().command else { panic!() };
        assert!(!r.is_headless());
    }

    #[test]
    fn filter_splits_on_commas() {
        let Command::Run(r) = parse(&["run", "--filter", "matmul_*,softmax"]).unwrap().command else { panic!() };
        assert_eq!(r.filter, vec!["matmul_*", "softmax"]);
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
    }
}
