//! The subcommands, one file each: what `harness <command>` does with its parsed arguments.
//! This module turns the options the measuring subcommands share into the pipeline's settings:
//! the one place where command-line values become what the layers below take.

pub mod bench;
pub mod browsers;
pub mod compare;
pub mod doctor;
pub mod history;
pub mod list;
pub mod open;
pub mod report;
pub mod run;
pub mod verify;

use crate::cli::browser::{BrowserChoice, BrowserFlagArgs, BrowserPathArgs};
use crate::cli::gate::GateArgs;
use crate::cli::pipeline::PipelineArgs;
use crate::cli::values::PlatformArg;
use crate::measure::browser::{user, BrowserFlags, BrowserKind};
use crate::measure::controller::CaseLimits;
use crate::measure::discovery;
use crate::output::journal::Journaled;
use crate::pipeline::{self, Baselines, Browser, CaseFilter, NativeRunner, Serve, Settings, Tuning};
use crate::plan::baseline;
use anyhow::Result;
use std::path::PathBuf;

/// The pipeline's settings from the options every measuring subcommand shares (with
/// `default_platforms` where `--platform` is not given), for the run that `journaled`
/// (`--resume`) completes if any. Each subcommand then sets what is its own (the
/// bundle, the native runner, the case filter, tuning, …) by struct update; here they are the
/// plain choices: page built from the source tree, native cases in process, every case on every
/// platform, no tuning.
pub fn pipeline_settings(args: &PipelineArgs, default_platforms: &[PlatformArg], journaled: Option<Journaled>) -> Result<Settings> {
    let platforms = match args.platform.is_empty() {
        true => platforms(default_platforms),
        false => platforms(&args.platform),
    };
    if args.output.no_history && args.baseline.gate.fail_on_regression == Some(crate::cli::gate::RegressionGate::History) {
        anyhow::bail!("--fail-on-regression=history gates on the history, which --no-history leaves out: drop one of them");
    }
    let in_browser = platforms.iter().any(|p| p.in_browser());
    let kinds = if in_browser { browser_kinds(&args.browser.browser, discovery::installed) } else { Vec::new() };
    if in_browser && args.browser.browser.contains(&BrowserChoice::All) {
        for missing in BrowserKind::ALL.iter().filter(|b| !kinds.contains(b)) {
            eprintln!("--browser all: skipping {}, not installed here (see `harness browsers`)", missing.spec().key);
        }
    }
    let b = &args.browser;
    warn_unused(&b.browser_flags, &kinds);
    let s = &args.sampling;
    Ok(Settings {
        browsers: browsers(&b.paths, &b.browser_flags, &kinds).map_err(anyhow::Error::msg)?,
        headless: !b.headed,
        webdriver_url: b.webdriver_url.clone(),
        browser_args: b.browser_flags.args.iter().map(|a| a.given.clone()).collect(),
        browser_prefs: b.browser_flags.prefs.iter().map(|p| p.given.clone()).collect(),
        platforms,
        suite: kernels::Suite::Default,
        filters: args.filter.clone(),
        seed: args.seed,
        sampling: s.policy(),
        cpu_sampling: s.cpu_policy(),
        gpu_kernels: false,
        limits: CaseLimits { timeout: s.timeout(), cpu_timeout: s.cpu_timeout(), retries: s.retries },
        webnn_device: kernels::webnn::Device::Gpu,
        no_tensor_cores: false,
        tfjs_dir: None,
        ort_dir: None,
        transformers_dir: None,
        tuning: Tuning::Off,
        baselines: Baselines {
            compare_with: args.baseline.baseline.clone(),
            save_as: args.baseline.save_baseline.clone(),
            gate: gate(&args.baseline.gate),
        },
        serve: Serve { listen: (args.serve.bind, args.serve.port.unwrap_or(0)).into(), public_url: args.serve.public_url.clone(), bundle: None },
        out: args.output.resume.clone().or_else(|| args.output.out.clone()),
        json: args.output.json,
        history: (!args.output.no_history).then(|| args.output.history.history.clone()),
        history_gate: (args.baseline.gate.fail_on_regression == Some(crate::cli::gate::RegressionGate::History)).then_some(args.output.window.window),
        journaled,
        native: NativeRunner::InProcess,
        cases_for: CaseFilter::ALL,
    })
}

/// The journal of the run `--resume` completes, if it was given.
pub fn journal(args: &PipelineArgs) -> Result<Option<Journaled>> {
    args.output.resume.as_deref().map(pipeline::read_journal).transpose()
}

/// The platforms `--platform` names, each once, in order.
fn platforms(args: &[PlatformArg]) -> Vec<kernels::Platform> {
    let mut out: Vec<kernels::Platform> = Vec::new();
    for &p in args.iter().flat_map(|p| p.platforms()) {
        if !out.contains(&p) {
            out.push(p);
        }
    }
    out
}

/// The browsers `--browser` names, in order, without repeats; `all` stands for `installed`.
pub fn browser_kinds(choices: &[BrowserChoice], installed: impl Fn() -> Vec<BrowserKind>) -> Vec<BrowserKind> {
    let mut out = Vec::new();
    for choice in choices {
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

/// Each of `kinds` with its executables from `paths` and its flags from `flags`.
pub fn browsers(paths: &BrowserPathArgs, flags: &BrowserFlagArgs, kinds: &[BrowserKind]) -> Result<Vec<Browser>, String> {
    kinds
        .iter()
        .map(|&kind| {
            Ok(Browser {
                kind,
                browser_path: path_for(&paths.browser_path, "--browser-path", kind, kinds.len())?,
                driver_path: path_for(&paths.driver_path, "--driver-path", kind, kinds.len())?,
                flags: user_flags(flags, kind),
                gpu_flags: flags.gpu_flags,
            })
        })
        .collect()
}

/// The arguments and prefs of `args` that `browser` gets, in the order given.
pub fn user_flags(args: &BrowserFlagArgs, browser: BrowserKind) -> BrowserFlags {
    user::flags_for(&args.args, &args.prefs, browser)
}

/// Prints a warning for every `--browser-arg` or `--browser-pref` that none of `browsers` gets.
pub fn warn_unused(args: &BrowserFlagArgs, browsers: &[BrowserKind]) {
    for warning in user::unused(&args.args, &args.prefs, browsers) {
        eprintln!("warning: {warning}");
    }
}

/// The gate `--baseline-dir`, `--noise-threshold` and `--fail-on-regression` describe.
pub fn gate(args: &GateArgs) -> baseline::Gate {
    baseline::Gate { dir: args.baseline_dir.clone(), noise_pct: args.noise_threshold, fail_on_regression_pct: args.regression_pct() }
}

/// Picks the path for `browser` from `--browser-path`/`--driver-path` values: `BROWSER=PATH`
/// entries apply to that browser, a bare path to the only browser of the run.
fn path_for(values: &[String], flag: &str, browser: BrowserKind, browsers: usize) -> Result<Option<PathBuf>, String> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn browsers_come_in_order_without_repeats_and_all_is_what_is_installed() {
        use BrowserChoice::{All, Chrome, Firefox};
        assert_eq!(browser_kinds(&[Firefox, Chrome, Firefox], Vec::new), [BrowserKind::Firefox, BrowserKind::Chrome]);
        let installed = || vec![BrowserKind::Chrome, BrowserKind::Firefox];
        assert_eq!(browser_kinds(&[All], installed), [BrowserKind::Chrome, BrowserKind::Firefox]);
        assert_eq!(browser_kinds(&[Firefox, All], installed), [BrowserKind::Firefox, BrowserKind::Chrome]);
    }

    #[test]
    fn platforms_come_once_each_in_order() {
        use kernels::Platform as P;
        assert_eq!(platforms(&[PlatformArg::Webnn, PlatformArg::Both, PlatformArg::Native]), [P::Webnn, P::Webgpu, P::Native]);
    }

    #[test]
    fn paths_can_be_given_per_browser() {
        let v = vec!["firefox=/ff".to_string(), "chrome=/c".to_string()];
        assert_eq!(path_for(&v, "--browser-path", BrowserKind::Firefox, 2).unwrap(), Some(PathBuf::from("/ff")));
        assert_eq!(path_for(&v, "--browser-path", BrowserKind::Edge, 2).unwrap(), None);
        let bare = vec!["/usr/bin/chromium".to_string()];
        assert_eq!(path_for(&bare, "--browser-path", BrowserKind::Chrome, 1).unwrap(), Some(PathBuf::from("/usr/bin/chromium")));
        // One browser named anyway, as `harness verify --browser-path chrome=PATH` gives it.
        assert_eq!(path_for(&["chrome=/c".to_string()], "--browser-path", BrowserKind::Chrome, 1).unwrap(), Some(PathBuf::from("/c")));
        let e = path_for(&bare, "--browser-path", BrowserKind::Chrome, 2).unwrap_err();
        assert!(e.contains("chrome=/usr/bin/chromium"), "{e}");
    }
}
