//! `harness run --replay results.json` (and `--resume`): the plan, seeds and settings a results
//! file recorded, turned back into run arguments, so a run can be repeated exactly (on another
//! day, machine or browser build).

use super::browser::BrowserChoice;
use super::pipeline::PipelineArgs;
use super::run::RunArgs;
use super::values::{PlatformArg, SuiteArg, WebnnDeviceArg};
use crate::measure::browser::user::{self, UserFlagError};
use clap::ValueEnum;
use kernels::CaseSpec;
use reports::RunReport;
use std::path::Path;

/// Why a results file cannot be replayed.
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    /// The file is unreadable or not a results file.
    #[error(transparent)]
    Report(#[from] reports::ReportError),
    /// A recorded value this harness does not know.
    #[error("{path}: the recorded {what} `{value}` is unknown to this harness version")]
    Unknown {
        /// The file.
        path: String,
        /// Which setting.
        what: &'static str,
        /// Its value.
        value: String,
    },
    /// A recorded `--browser-arg` or `--browser-pref` this harness cannot read.
    #[error("{path}: the recorded {flag} `{value}` cannot be used: {source}. Give your own {flag} to replace the recorded ones")]
    Flag {
        /// The file.
        path: String,
        /// `--browser-arg` or `--browser-pref`.
        flag: &'static str,
        /// Its value.
        value: String,
        /// Why.
        source: Box<UserFlagError>,
    },
}

/// Reads the results file (or the one in a run folder) at `path`, sets `args` to its settings and
/// returns the recorded cases to run.
pub fn apply(args: &mut RunArgs, path: &Path) -> Result<Vec<CaseSpec>, ReplayError> {
    let file = reports::results_path(path);
    let report = reports::read_results(&file)?;
    apply_report(args, &report, &file.display().to_string())
}

/// Sets `args` to the settings of `report` (read from `shown`, for messages) and returns its
/// recorded cases.
pub fn apply_report(args: &mut RunArgs, report: &RunReport, shown: &str) -> Result<Vec<CaseSpec>, ReplayError> {
    apply_pipeline(&mut args.pipeline, report, shown)?;
    let unknown = |what: &'static str, value: &str| ReplayError::Unknown { path: shown.to_string(), what, value: value.to_string() };
    let s = &report.settings;
    args.suite = SuiteArg::from_str(&s.suite, false).map_err(|_| unknown("suite", &s.suite))?;
    args.no_tensor_cores = s.no_tensor_cores;
    args.gpu_kernels = s.gpu_kernels;
    args.profile = s.profile;
    args.gpu_timer = s.gpu_timer.into();
    args.gpu_timer_cost = s.gpu_timer_cost;
    if let Some(device) = s.webnn_device {
        args.webnn_device = WebnnDeviceArg::from_str(device.as_str(), false).map_err(|_| unknown("webnnDevice", device.as_str()))?;
    }
    if args.workloads.weights.is_empty() {
        args.workloads.weights = s.weights.iter().chain(&s.gguf).map(Into::into).collect();
    }
    for case in &s.cases {
        if case.info().is_none() {
            return Err(unknown("kernel", &case.kernel));
        }
    }
    Ok(s.cases.clone())
}

/// Sets the options every measuring subcommand shares to the settings `report` recorded (read
/// from `shown`, for messages): sampling, seed, filters, browsers, platforms, window, and the
/// browser arguments and prefs unless `args` gives its own.
pub fn apply_pipeline(args: &mut PipelineArgs, report: &RunReport, shown: &str) -> Result<(), ReplayError> {
    let shown = shown.to_string();
    let unknown = |what: &'static str, value: &str| ReplayError::Unknown { path: shown.clone(), what, value: value.to_string() };
    let s = &report.settings;
    args.filter = s.filters.clone();
    args.seed = s.seed;
    let sampling = &mut args.sampling;
    // Where the run left the sampling (and timeout) to harness, so does the replay: it then
    // adapts to a software adapter as the run did.
    let chosen = s.cpu_adapter.is_none();
    sampling.samples = chosen.then_some(s.samples);
    sampling.warmup = chosen.then_some(s.warmup);
    sampling.sampling = s.sampling.into();
    sampling.max_time = chosen.then_some(s.max_time_s);
    sampling.timeout = chosen.then_some(s.case_timeout_s);
    sampling.retries = s.retries;
    sampling.target_ci = s.target_ci_pct;
    sampling.nudge = s.nudge.into();
    let browser = &mut args.browser;
    if !browser.headed && !browser.headless {
        browser.headed = !s.headless;
    }
    let flag_error = |flag: &'static str, value: &str, source| ReplayError::Flag { path: shown.clone(), flag, value: value.to_string(), source: Box::new(source) };
    if browser.browser_flags.args.is_empty() {
        browser.browser_flags.args = s
            .browser_args
            .iter()
            .map(|a| user::parse_arg(a).map_err(|e| flag_error("--browser-arg", a, e)))
            .collect::<Result<_, _>>()?;
    }
    if browser.browser_flags.prefs.is_empty() {
        browser.browser_flags.prefs = s
            .browser_prefs
            .iter()
            .map(|p| user::parse_pref(p).map_err(|e| flag_error("--browser-pref", p, e)))
            .collect::<Result<_, _>>()?;
    }
    let (browsers, platforms) = recorded_targets(report);
    browser.browser = browsers
        .iter()
        .map(|b| BrowserChoice::from_str(b, false).map_err(|_| unknown("browser", b)))
        .collect::<Result<_, _>>()?;
    args.platform = platforms
        .iter()
        .map(|p| PlatformArg::from_str(p, false).map_err(|_| unknown("platform", p)))
        .collect::<Result<_, _>>()?;
    Ok(())
}

/// The browsers and platforms a report asked for; for files that predate recording them, the ones
/// its runs show.
fn recorded_targets(report: &RunReport) -> (Vec<String>, Vec<String>) {
    let s = &report.settings;
    if !s.platforms.is_empty() {
        return (s.browsers.clone(), s.platforms.clone());
    }
    let mut browsers = Vec::new();
    let mut platforms = Vec::new();
    for run in &report.runs {
        if run.platform != "native" && !browsers.contains(&run.browser) {
            browsers.push(run.browser.clone());
        }
        if !platforms.contains(&run.platform) {
            platforms.push(run.platform.clone());
        }
    }
    (browsers, platforms)
}
