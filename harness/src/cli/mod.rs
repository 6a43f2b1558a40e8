//! The command line: every subcommand and its options (clap), as plain data. One file per
//! subcommand (`run.rs`, `verify.rs`, `compare.rs`, …); the option groups every measuring
//! subcommand shares (browsers, sampling, baselines, output, server) each have a file of their
//! own and come together in [`pipeline::PipelineArgs`], which a subcommand flattens. What the
//! options mean to the layers below is worked out in `commands`.

pub mod bench;
pub mod browser;
pub mod browsers;
pub mod compare;
pub mod doctor;
pub mod gate;
pub mod history;
pub mod list;
pub mod open;
pub mod output;
mod parse;
pub mod pipeline;
pub mod replay;
pub mod report;
pub mod run;
pub mod sampling;
pub mod serve;
pub mod values;
pub mod verify;

use bench::BenchArgs;
use browsers::BrowsersArgs;
use clap::{Parser, Subcommand};
use compare::CompareArgs;
use doctor::DoctorArgs;
use list::ListArgs;
use open::OpenArgs;
use report::ReportCommand;
use run::RunArgs;
use verify::VerifyArgs;

/// Measure and check WebGPU compute kernels in real browsers.
///
/// harness builds a WASM bundle of its kernels, serves it from a local server, drives a real
/// browser through WebDriver, times every case (GPU timestamp queries where the browser has them,
/// wall clock always), checks every output against an independent reference (an f64 CPU
/// reference; for your own kernel, the expected output its manifest names, else it reads
/// unchecked), and writes
/// results.json, a self-contained report.html, summary.md and junit.xml. The same kernels also
/// run on the CPU in WASM and natively through wgpu, for reference, and beside them
/// TensorFlow.js's ops, the browser's WebNN, and harness's models on onnxruntime-web and (from
/// text) transformers.js. `harness bench` does the same for your own
/// crate's benches. Every median comes with a 95% bootstrap
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
    #[command(after_help = run::AFTER_HELP)]
    Run(Box<RunArgs>),
    /// Run your own crate's benches (harness-bench: CPU and wgpu code) in browsers and natively,
    /// with run's sampling, checks and reports.
    #[command(after_help = bench::AFTER_HELP)]
    Bench(Box<BenchArgs>),
    /// List kernels, or the cases a suite and filter select.
    List(ListArgs),
    /// List the browsers and WebDriver servers found here, with versions, install hints and what
    /// to expect of WebNN in each.
    Browsers(BrowsersArgs),
    /// Decide, with evidence, whether WebGPU (or native wgpu) runs on real GPU hardware or a
    /// software adapter (SwiftShader, llvmpipe/lavapipe, WARP); in a browser, also whether its
    /// WebNN is available. Exit status (of the WebGPU verdict): 0 hardware, 1 software,
    /// 2 unavailable, 3 inconclusive.
    #[command(after_help = verify::AFTER_HELP)]
    Verify(VerifyArgs),
    /// Walk the chain from this machine's GPU to each installed browser's WebGPU adapter (driver,
    /// Vulkan loader and ICD, libGLdispatch, native wgpu, each browser) and name the first broken
    /// link with its fix. Exit status: 0 every browser reaches a hardware GPU, 1 not, 2 no
    /// browser or an error.
    #[command(after_help = doctor::AFTER_HELP)]
    Doctor(DoctorArgs),
    /// Compare two runs case by case: the change of each median with its 95% confidence
    /// interval, classed improved, regressed or unchanged.
    #[command(after_help = compare::AFTER_HELP)]
    Compare(CompareArgs),
    /// Serve a folder of runs over HTTP with an index page, or a trend site (`harness trend`), and
    /// print its URL.
    Open(OpenArgs),
    /// Work with saved reports.
    #[command(subcommand)]
    Report(ReportCommand),
    /// The history of runs across commits (runs/history.sqlite, which every run adds to): import
    /// results, find regressions over a window, narrow a step to its commit.
    #[command(subcommand)]
    History(history::HistoryCommand),
    /// Write the history as a static site (like `asv publish`): a graph per series over the runs,
    /// the latest change of each; `harness open DIR` serves it.
    Trend(history::TrendArgs),
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::browser::{user, BrowserKind};
    use browser::BrowserChoice;
    use std::path::PathBuf;
    use values::{SuiteArg, WebnnDeviceArg};

    fn parse(args: &[&str]) -> Result<Cli, clap::Error> {
        Cli::try_parse_from(std::iter::once("harness").chain(args.iter().copied()))
    }

    fn run(args: &[&str]) -> RunArgs {
        let Command::Run(r) = parse(&[&["run"], args].concat()).unwrap().command else { panic!() };
        *r
    }

    #[test]
    fn defaults_are_headless_chrome_webgpu_default_suite() {
        let r = run(&[]);
        let (p, s) = (&r.pipeline, &r.pipeline.sampling);
        assert_eq!(p.browser.browser, [BrowserChoice::Chrome]);
        assert_eq!((p.platform.as_slice(), r.suite), ([].as_slice(), SuiteArg::Default), "no --platform: each subcommand's own default");
        assert!(!p.browser.headed);
        assert_eq!((s.samples, s.warmup, s.timeout, s.target_ci), (None, None, None, None), "left to harness");
        let policy = s.policy();
        assert_eq!((policy.samples, policy.warmup, policy.max_time_ms, s.timeout().as_secs()), (30, stats::WarmupPolicy::Auto, 10_000.0, 60));
        let cpu = s.cpu_policy().expect("nothing chosen: a CPU adapter gets its own");
        assert_eq!((cpu.samples, cpu.warmup, cpu.max_time_ms, s.cpu_timeout().map(|t| t.as_secs())), (5, stats::WarmupPolicy::Fixed(0), 1000.0, Some(300)));
        // One choice of the user's holds everywhere, and so do harness's defaults for the rest.
        for chosen in [&["--samples", "30"][..], &["--timeout", "60"], &["--warmup", "auto"], &["--max-time", "10"], &["--target-ci", "2"]] {
            let s = &run(chosen).pipeline.sampling;
            assert!(s.cpu_policy().is_none() && s.cpu_timeout().is_none(), "{chosen:?}");
        }
        assert_eq!((p.baseline.gate.noise_threshold, p.baseline.gate.fail_on_regression), (2.0, None));
    }

    #[test]
    fn headed_and_headless_conflict() {
        assert!(parse(&["run", "--headed", "--headless"]).is_err());
        assert!(run(&["--headed"]).pipeline.browser.headed);
    }

    #[test]
    fn no_tensor_cores_and_profile_are_off_unless_asked_for_and_a_replay_keeps_them() {
        let bench = parse(&["bench", "--profile"]).map(|_| ()).unwrap_err().to_string();
        assert!(bench.contains("--profile"), "harness bench's benches are the user's own code: {bench}");
        let file = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/hardware/h200-tensor/chrome/l5-plain-results.json");
        let mut report = reports::read_results(std::path::Path::new(file)).unwrap();
        type Flag = (&'static str, fn(&RunArgs) -> bool, fn(&mut reports::Settings) -> &mut bool);
        let flags: [Flag; 2] = [
            ("--no-tensor-cores", |a| a.no_tensor_cores, |s| &mut s.no_tensor_cores),
            ("--profile", |a| a.profile, |s| &mut s.profile),
        ];
        for (flag, given, recorded_in) in flags {
            assert!(!given(&run(&[])) && given(&run(&[flag])), "{flag}");
            for recorded in [true, false] {
                *recorded_in(&mut report.settings) = recorded;
                let mut args = run(&[if recorded { "--seed=1" } else { flag }]);
                replay::apply_report(&mut args, &report, file).unwrap();
                assert_eq!(given(&args), recorded, "{flag}");
            }
        }
    }

    #[test]
    fn both_is_webgpu_and_webnn_and_repeat_is_no_tuning_flag() {
        use kernels::Platform as P;
        for given in [&["--platform", "both"][..], &["--platform", "webgpu,webnn"]] {
            let r = run(given);
            let platforms: Vec<P> = r.pipeline.platform.iter().flat_map(|p| p.platforms()).copied().collect();
            assert_eq!(platforms, [P::Webgpu, P::Webnn], "{given:?}");
            assert_eq!(r.webnn_device, WebnnDeviceArg::Gpu);
        }
        let r = run(&["--platform", "webnn", "--webnn-device", "npu", "--repeat", "3"]);
        assert_eq!((r.webnn_device, r.repeat), (WebnnDeviceArg::Npu, 3));
        assert!(parse(&["run", "--webnn-device", "tpu"]).is_err());
        assert!(parse(&["run", "--repeat", "2", "--tune"]).is_err(), "a tuning run picks winners once");
        assert!(parse(&["run", "--repeat", "0"]).is_err());
    }

    #[test]
    fn filter_splits_on_commas() {
        assert_eq!(run(&["--filter", "matmul_*,softmax"]).pipeline.filter, vec!["matmul_*", "softmax"]);
    }

    #[test]
    fn several_browsers_and_all() {
        let r = run(&["--browser", "firefox,chrome,firefox"]);
        assert_eq!(r.pipeline.browser.browser, [BrowserChoice::Firefox, BrowserChoice::Chrome, BrowserChoice::Firefox]);
        assert_eq!(run(&["--browser", "all"]).pipeline.browser.browser, [BrowserChoice::All]);
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
        for (flag, value) in [("--suite", "quick"), ("--platform", "native"), ("--samples", "5"), ("--seed", "2"), ("--resume", "runs/x")] {
            let e = parse(&["run", "--replay", "r.json", flag, value]).unwrap_err().to_string();
            assert!(e.contains(flag) && e.contains("--replay"), "{e}");
        }
        for (flag, value) in [("--samples", "5"), ("--browser", "firefox"), ("--filter", "add"), ("--suite", "quick")] {
            let e = parse(&["run", "--resume", "runs/x", flag, value]).unwrap_err().to_string();
            assert!(e.contains(flag) && e.contains("--resume"), "{e}");
        }
        assert!(parse(&["run", "--resume", "runs/x", "--out", "y"]).is_err());
        let r = run(&["--replay", "r.json", "--out", "x", "--browser-path", "/c"]);
        assert_eq!(r.replay, Some(PathBuf::from("r.json")));
    }

    /// `run`, `verify` and `doctor`, each parsed with `given` after it.
    fn run_verify_doctor(given: &[&str]) -> (Box<run::RunArgs>, verify::VerifyArgs, doctor::DoctorArgs) {
        let parsed = |command: &str| parse(&[&[command], given].concat()).unwrap().command;
        let (Command::Run(r), Command::Verify(v), Command::Doctor(d)) = (parsed("run"), parsed("verify"), parsed("doctor")) else { panic!() };
        (r, v, d)
    }

    #[test]
    fn browser_and_driver_paths_parse_the_same_for_run_verify_and_doctor() {
        // BROWSER=PATH or a bare path, resolved for each browser by `commands::browsers` (tested there).
        let (r, v, d) = run_verify_doctor(&["--browser", "chrome", "--browser-path", "chrome=/opt/chromium/chromium", "--driver-path", "/opt/chromium/chromedriver"]);
        for paths in [&r.pipeline.browser.paths, &v.paths, &d.paths] {
            assert_eq!((paths.browser_path.as_slice(), paths.driver_path.as_slice()), (["chrome=/opt/chromium/chromium".to_string()].as_slice(), ["/opt/chromium/chromedriver".to_string()].as_slice()));
        }
    }

    #[test]
    fn browser_args_and_prefs_parse_the_same_for_run_and_verify() {
        let (r, v, _) = run_verify_doctor(&["--browser-arg", "--enable-features=Vulkan", "--browser-arg", "chrome=--x=y", "--browser-pref", "firefox=a.b=3"]);
        for flags in [&r.pipeline.browser.browser_flags, &v.browser_flags] {
            assert_eq!(flags.args.iter().map(|a| a.given.as_str()).collect::<Vec<_>>(), ["--enable-features=Vulkan", "chrome=--x=y"]);
            assert_eq!(flags.prefs.iter().map(|p| p.given.as_str()).collect::<Vec<_>>(), ["firefox=a.b=3"]);
            let chrome = user::flags_for(&flags.args, &flags.prefs, BrowserKind::Chrome);
            assert_eq!((chrome.args.as_slice(), chrome.prefs.len()), (["--enable-features=Vulkan".to_string(), "--x=y".into()].as_slice(), 0));
            let firefox = user::flags_for(&flags.args, &flags.prefs, BrowserKind::Firefox);
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
        let r = run(&["--warmup", "3", "--target-ci", "1.5%", "--fail-on-regression", "5"]);
        let p = &r.pipeline;
        assert_eq!((p.sampling.warmup, p.sampling.target_ci, p.baseline.gate.fail_on_regression), (Some(stats::WarmupPolicy::Fixed(3)), Some(1.5), Some(crate::cli::gate::RegressionGate::Pct(5.0))));
    }
}
