//! `harness run`: builds the cases, serves the page, drives each browser and platform in turn,
//! checks every output, then writes the reports and, where asked, gates on a baseline.

use super::{exit_code, interrupt_watch, serve_page, write_reports};
use crate::cli::{self, path_for, replay, RunArgs};
use crate::measure::browser::BrowserKind;
use crate::measure::controller::{self, BrowserRunRequest, CaseLimits};
use crate::measure::tfjs::TfjsFiles;
use crate::measure::webnn;
use crate::measure::{discovery, host, native, probe};
use crate::output::journal::{self, Journal};
use crate::output::progress::TerminalReporter;
use crate::output::summary;
use crate::plan::tuning::{self, TuneCache};
use crate::plan::{baseline, reference, workload};
use anyhow::{Context, Result};
use reports::{RunReport, Settings, SCHEMA_VERSION};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

/// Runs the plan `args` describe in every browser and platform asked for.
pub async fn exec(mut args: RunArgs) -> Result<ExitCode> {
    let journaled = match &args.resume {
        Some(dir) => Some(journal::read(dir).with_context(|| format!("resuming {}", dir.display()))?),
        None => None,
    };
    let replayed = match (args.replay.clone(), &journaled) {
        (Some(path), _) => replay::apply(&mut args, &path).with_context(|| format!("replaying {}", path.display()))?,
        (None, Some(j)) => {
            let shown = args.resume.as_ref().map(|d| d.join(journal::JOURNAL).display().to_string()).unwrap_or_default();
            replay::apply_report(&mut args, &j.started, &shown).with_context(|| format!("resuming {shown}"))?
        }
        (None, None) => Vec::new(),
    };
    if let Some(name) = &args.save_baseline {
        baseline::check_name(name)?;
    }
    // Read the baseline first: a typo should cost nothing, not a whole run.
    let baseline = match &args.baseline {
        Some(spec) => Some(baseline::load(spec, &args.gate.baseline_dir)?),
        None => None,
    };
    let suite: kernels::Suite = args.suite.into();
    let (cases, weights) = match replayed.is_empty() {
        true => {
            let workloads = workload::Workloads::build(&args.workloads, args.seed)?;
            // With a model or user kernel, the suite runs only where --filter names kernels.
            let mut cases = match workloads.cases.is_empty() || !args.filter.is_empty() {
                true => kernels::plan::build_cases(suite, &args.filter, args.seed)?,
                false => Vec::new(),
            };
            cases.extend(workloads.cases);
            (cases, workloads.weights)
        }
        false => {
            let weights = workload::Workloads::weights_for(&replayed, args.workloads.weights.as_deref())?;
            (replayed, weights)
        }
    };
    let cases = match args.tune {
        true => tuning::expand(&cases).map_err(anyhow::Error::msg)?,
        false => cases,
    };
    let cases = match args.roofline {
        true => kernels::plan::roofline_first(suite, args.seed, cases),
        false => cases,
    };
    let cases = kernels::plan::repeated(cases, args.repeat);
    let (mut tune_cache, warning) = TuneCache::load(&args.tune_cache);
    if let Some(w) = warning {
        eprintln!("warning: {w}");
    }
    // Tuning runs every variant; other runs take each browser's cached winner.
    let variants_for = |target: &str, cases: &[kernels::CaseSpec]| match args.tune {
        true => cases.to_vec(),
        false => tune_cache.apply(target, cases),
    };
    let references = Arc::new(reference::References::new(weights.clone(), reference::DiskCache::from_env()));
    let plan = kernels::RunPlan {
        platform: kernels::Platform::Webgpu,
        sampling: kernels::Sampling {
            mode: args.sampling.into(),
            warmup: args.warmup,
            samples: args.samples,
            max_time_ms: args.max_time * 1e3,
            target_ci_pct: args.target_ci,
        },
        cases,
        webnn: Some(kernels::webnn::Options { device: args.webnn_device.into(), stand_in: std::env::var_os(webnn::STAND_IN_ENV).is_some() }),
    };
    let created = chrono::Utc::now();
    let mut platforms: Vec<kernels::Platform> = Vec::new();
    for &p in args.platform.iter().flat_map(|p| p.platforms()) {
        if !platforms.contains(&p) {
            platforms.push(p);
        }
    }
    anyhow::ensure!(
        !args.tune || platforms.iter().any(|p| *p != kernels::Platform::Wasm),
        "--tune measures GPU variants: add --platform webgpu or native (on the WASM CPU every variant is the same code)"
    );
    if platforms.contains(&kernels::Platform::Webnn) && std::env::var_os(webnn::STAND_IN_ENV).is_some() {
        eprintln!("WARNING: {}", webnn::STAND_IN_WARNING);
    }
    // Before any browser starts: a missing TensorFlow.js install costs nothing.
    let tfjs = match platforms.contains(&kernels::Platform::Tfjs) && !args.tune {
        true => Some(TfjsFiles::find(args.tfjs_dir.as_deref())?),
        false => None,
    };
    let page_platforms: Vec<kernels::Platform> = platforms.iter().copied().filter(|p| p.in_browser()).collect();
    let browsers = if page_platforms.is_empty() { Vec::new() } else { args.browsers(discovery::installed) };
    if !page_platforms.is_empty() && args.browser.contains(&cli::BrowserChoice::All) {
        for missing in BrowserKind::ALL.iter().filter(|b| !browsers.contains(b)) {
            eprintln!("--browser all: skipping {}, not installed here (see `harness browsers`)", missing.spec().key);
        }
    }
    anyhow::ensure!(
        page_platforms.is_empty() || !browsers.is_empty(),
        "no supported browser is installed; `harness browsers` says how to install one"
    );
    args.browser_flags.warn_unused(&browsers);
    let probe = probe::RunProbe::detect();
    let mut requests = Vec::new();
    for (&browser, &platform) in browsers.iter().flat_map(|b| page_platforms.iter().map(move |p| (b, p))) {
        if args.tune && platform == kernels::Platform::Wasm {
            eprintln!("--platform wasm: skipped with --tune, every variant is the same code on the CPU");
            continue;
        }
        if args.tune && matches!(platform, kernels::Platform::Tfjs | kernels::Platform::Webnn) {
            eprintln!("--platform {}: skipped with --tune, it runs its own kernel for every variant", platform.as_str());
            continue;
        }
        // The WASM CPU baseline has the catalogue kernels only.
        let cases: Vec<kernels::CaseSpec> = plan.cases.iter().filter(|c| platform != kernels::Platform::Wasm || c.workload.is_none()).cloned().collect();
        // Tuned variants are harness's own WGSL: TensorFlow.js runs the cases as planned.
        let cases = match platform {
            kernels::Platform::Tfjs | kernels::Platform::Webnn => cases,
            _ => variants_for(browser.spec().key, &cases),
        };
        if cases.is_empty() {
            eprintln!("--platform wasm: skipped, it runs catalogue kernels only (models and user kernels run on webgpu and native)");
            continue;
        }
        requests.push(BrowserRunRequest {
            browser,
            platform,
            headless: args.is_headless(),
            browser_path: path_for(&args.browser_path, "--browser-path", browser, browsers.len()).map_err(anyhow::Error::msg)?,
            driver_path: path_for(&args.driver_path, "--driver-path", browser, browsers.len()).map_err(anyhow::Error::msg)?,
            webdriver_url: args.webdriver_url.clone(),
            user_flags: args.browser_flags.for_browser(browser),
            plan: kernels::RunPlan { cases, ..plan.clone() },
            limits: CaseLimits { timeout: Duration::from_secs_f64(args.timeout), retries: args.retries },
            read_diagnostics: false,
            references: references.clone(),
            probe: probe.clone(),
        });
    }
    let mut keys: Vec<&str> = browsers.iter().map(|b| b.spec().key).collect();
    if platforms.contains(&kernels::Platform::Native) {
        keys.push("native");
    }
    let out_dir = args
        .resume
        .clone()
        .or_else(|| args.out.clone())
        .unwrap_or_else(|| PathBuf::from("runs").join(format!("{}-{}", created.format("%Y%m%d-%H%M%S"), keys.join("+"))));
    if !args.bind.is_loopback() {
        eprintln!(
            "WARNING: the server listens on {} — any machine that can reach it can load the page. \
             Results are accepted only with the run's random token.",
            args.bind
        );
    }
    let mut report = RunReport {
        schema_version: SCHEMA_VERSION,
        harness: host::harness_info(crate::plan::source_dir().as_deref()),
        host: host::host_info(),
        created_at: journaled.as_ref().map_or_else(|| created.to_rfc3339(), |j| j.started.created_at.clone()),
        settings: Settings {
            suite: suite.to_string(),
            filters: args.filter.clone(),
            samples: args.samples,
            warmup: args.warmup,
            sampling: args.sampling.into(),
            target_ci_pct: args.target_ci,
            browsers: browsers.iter().map(|b| b.spec().key.to_string()).collect(),
            platforms: platforms.iter().map(|p| p.as_str().to_string()).collect(),
            cases: plan.cases.clone(),
            command: std::env::args().collect(),
            seed: args.seed,
            max_time_s: args.max_time,
            case_timeout_s: args.timeout,
            retries: args.retries,
            webnn_device: platforms.contains(&kernels::Platform::Webnn).then(|| args.webnn_device.into()),
            headless: args.is_headless(),
            weights: weights.get(workload::MINILM).and_then(|p| p.parent()).map(|p| p.display().to_string()),
            browser_args: args.browser_flags.given_args(),
            browser_prefs: args.browser_flags.given_prefs(),
        },
        runs: Vec::new(),
        baseline: None,
    };
    let mut interrupted = interrupt_watch();
    let mut reporter = match &journaled {
        Some(_) => Journal::append(&out_dir, TerminalReporter::new()),
        None => Journal::create(&out_dir, &report, TerminalReporter::new()),
    };
    let mut runs = Vec::new();
    if !requests.is_empty() {
        let listen = (args.bind, args.port.unwrap_or(0)).into();
        let (server, bundle_ms, server_ms) =
            serve_page(args.bundle.clone(), listen, args.public_url.as_deref(), &mut reporter).await?;
        for (key, path) in &weights {
            server.serve_weights(key, path.clone());
        }
        if let Some(check) = probe.check() {
            server.set_clock(check);
        }
        if let Some(files) = &tfjs {
            server.serve_tfjs(files);
        }

        for request in &requests {
            if *interrupted.borrow() {
                break;
            }
            let label = journal::run_label(request.browser.spec().key, request.platform.as_str());
            let (server, reporter, interrupted) = (&server, &mut reporter, &mut interrupted);
            runs.push(
                resume_or_run(journaled.as_ref(), &label, &request.plan, |plan| async move {
                    let mut run = controller::run_browser(&BrowserRunRequest { plan, ..request.clone() }, server, reporter, interrupted).await;
                    run.phases.bundle_ms = bundle_ms;
                    run.phases.server_ms = server_ms;
                    run
                })
                .await,
            );
        }
    }
    if platforms.contains(&kernels::Platform::Native) && !*interrupted.borrow() {
        let native_plan = kernels::RunPlan { cases: variants_for("native", &plan.cases), ..plan.clone() };
        let label = journal::run_label("wgpu", kernels::Platform::Native.as_str());
        let timeout = Duration::from_secs_f64(args.timeout);
        let (references, probe, reporter, interrupted) = (&references, &probe, &mut reporter, &mut interrupted);
        runs.push(
            resume_or_run(journaled.as_ref(), &label, &native_plan, |plan| async move {
                native::run_native(&plan, timeout, references, probe, reporter, interrupted).await
            })
            .await,
        );
    }
    drop(reporter);

    report.runs = runs;
    if let (Some(old), Some(name)) = (&baseline, &args.baseline) {
        report.baseline = Some(args.gate.compare(name, old, &report));
    }
    write_reports(&mut report, &out_dir, args.json)?;
    if args.tune {
        let rankings = tuning::rank(&report);
        let winners: Vec<tuning::Winner> = rankings.iter().filter_map(|r| r.winner.clone()).collect();
        tune_cache.record(&winners);
        tune_cache.save(&args.tune_cache).with_context(|| format!("writing the tune cache {}", args.tune_cache.display()))?;
        if !args.json {
            print!("{}", summary::tuning(&rankings));
            println!("kept {} winner(s) in {}", winners.len(), args.tune_cache.display());
        }
    }
    if let Some(name) = &args.save_baseline {
        let folder = baseline::save(&report, &args.gate.baseline_dir, name)?;
        if !args.json {
            println!("saved baseline `{name}` in {}", folder.display());
        }
    }
    match report.baseline.as_ref().is_some_and(|b| b.gate_fails()) {
        true => Ok(ExitCode::from(1)),
        false => Ok(exit_code(&report)),
    }
}

/// The run labelled `label` of `plan`: as the journal of a resumed run finished it, or run by `go`
/// on the cases the journal lacks, with those it holds put back.
async fn resume_or_run<F: std::future::Future<Output = reports::PlatformRun>>(
    journaled: Option<&journal::Journaled>,
    label: &str,
    plan: &kernels::RunPlan,
    go: impl FnOnce(kernels::RunPlan) -> F,
) -> reports::PlatformRun {
    if let Some(done) = journaled.and_then(|j| j.finished_run(label)) {
        return done.clone();
    }
    let settled = journaled.map(|j| j.settled(label).to_vec()).unwrap_or_default();
    let run = go(without(plan, &settled)).await;
    with_settled(run, settled, &plan.cases)
}

/// `plan` less the cases a journal holds as settled.
fn without(plan: &kernels::RunPlan, settled: &[reports::CaseReport]) -> kernels::RunPlan {
    let cases = plan.cases.iter().filter(|c| !settled.iter().any(|s| s.id == c.id)).cloned().collect();
    kernels::RunPlan { cases, ..plan.clone() }
}

/// `run` with the cases a journal held as settled before it put back, all in the order of `plan`
/// (the whole plan of the run).
fn with_settled(mut run: reports::PlatformRun, settled: Vec<reports::CaseReport>, plan: &[kernels::CaseSpec]) -> reports::PlatformRun {
    if settled.is_empty() {
        return run;
    }
    let ran = std::mem::take(&mut run.cases);
    let mut cases: Vec<reports::CaseReport> = settled.into_iter().chain(ran).collect();
    cases.sort_by_key(|c| plan.iter().position(|p| p.id == c.id).map_or(0, |i| i + 1));
    run.cases = cases;
    run
}
