//! `harness`: measure and check WebGPU compute in real browsers.
//!
//! The data flow, one module each: `cli` → `bundle` → `server` → `driver`/`browser` →
//! `controller` (page events → checked cases) → `reports` (results.json, report.html) →
//! `summary`/`progress` in the terminal.

mod baseline;
mod browser;
mod bundle;
mod cli;
mod controller;
mod discovery;
mod driver;
mod host;
mod manifest;
mod native;
mod open;
mod probe;
mod progress;
mod reference;
mod replay;
mod server;
mod summary;
mod verify;
mod workload;

use anyhow::{Context, Result};
use clap::Parser;
use browser::BrowserKind;
use cli::{path_for, BrowsersArgs, Cli, CompareArgs, Command, ListArgs, MergeArgs, PlatformArg, ReportCommand, RunArgs, VerifyArgs};
use controller::BrowserRunRequest;
use progress::{Reporter, RunEvent, TerminalReporter};
use reports::{RunReport, Settings, SCHEMA_VERSION};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::watch;

/// Exit status when the run itself could not happen.
const EXIT_UNUSABLE: u8 = 2;

fn main() -> ExitCode {
    let cli = Cli::parse();
    init_logging(cli.verbose);
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::from(EXIT_UNUSABLE);
        }
    };
    match runtime.block_on(dispatch(cli)) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(EXIT_UNUSABLE)
        }
    }
}

fn init_logging(verbose: u8) {
    let default = match verbose {
        0 => "warn",
        1 => "info",
        _ => "debug",
    };
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr).init();
}

async fn dispatch(cli: Cli) -> Result<ExitCode> {
    match cli.command {
        Command::Run(args) => run(*args).await,
        Command::Verify(args) => verify(args).await,
        Command::List(args) => list(args),
        Command::Browsers(args) => browsers(args),
        Command::Compare(args) => compare(args),
        Command::Open(args) => open::serve(args).await,
        Command::Report(ReportCommand::Merge(args)) => merge(args),
    }
}

/// A watch that turns true on the first Ctrl-C (or SIGTERM/SIGHUP); a second one kills every
/// driver group and exits.
fn interrupt_watch() -> watch::Receiver<bool> {
    let (tx, rx) = watch::channel(false);
    tokio::spawn(async move {
        if let Ok(why) = stop_signal().await {
            eprintln!("\n{why}: ending the browser and writing what was measured (Ctrl-C again to quit at once)");
            let _ = tx.send(true);
            if stop_signal().await.is_ok() {
                driver::kill_all_now();
                std::process::exit(130);
            }
        }
    });
    rx
}

/// Waits for Ctrl-C or, on Unix, SIGTERM or SIGHUP (what CI runners and closing terminals send
/// when they cancel a job); says which.
async fn stop_signal() -> std::io::Result<&'static str> {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        let mut term = signal(SignalKind::terminate())?;
        let mut hup = signal(SignalKind::hangup())?;
        tokio::select! {
            r = tokio::signal::ctrl_c() => r.map(|_| "interrupted"),
            _ = term.recv() => Ok("terminated (SIGTERM)"),
            _ = hup.recv() => Ok("hung up (SIGHUP)"),
        }
    }
    #[cfg(not(unix))]
    {
        tokio::signal::ctrl_c().await.map(|_| "interrupted")
    }
}

async fn run(mut args: RunArgs) -> Result<ExitCode> {
    let replayed = match args.replay.clone() {
        Some(path) => replay::apply(&mut args, &path).with_context(|| format!("replaying {}", path.display()))?,
        None => Vec::new(),
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
    let references = Arc::new(reference::References::new(weights.clone()));
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
    };
    let created = chrono::Utc::now();
    let mut platforms: Vec<kernels::Platform> = Vec::new();
    for p in &args.platform {
        if !platforms.contains(&(*p).into()) {
            platforms.push((*p).into());
        }
    }
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
        // The WASM CPU baseline has the catalogue kernels only.
        let cases: Vec<kernels::CaseSpec> = plan.cases.iter().filter(|c| platform != kernels::Platform::Wasm || c.workload.is_none()).cloned().collect();
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
            case_timeout: Duration::from_secs_f64(args.timeout),
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
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from("runs").join(format!("{}-{}", created.format("%Y%m%d-%H%M%S"), keys.join("+"))));
    if !args.bind.is_loopback() {
        eprintln!(
            "WARNING: the server listens on {} — any machine that can reach it can load the page. \
             Results are accepted only with the run's random token.",
            args.bind
        );
    }
    let mut interrupted = interrupt_watch();
    let mut reporter = TerminalReporter::new();
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

        for request in &requests {
            if *interrupted.borrow() {
                break;
            }
            let mut run = controller::run_browser(request, &server, &mut reporter, &mut interrupted).await;
            run.phases.bundle_ms = bundle_ms;
            run.phases.server_ms = server_ms;
            runs.push(run);
        }
    }
    if platforms.contains(&kernels::Platform::Native) && !*interrupted.borrow() {
        runs.push(native::run_native(&plan, Duration::from_secs_f64(args.timeout), &references, &probe, &mut reporter, &mut interrupted).await);
    }
    drop(reporter);

    let mut report = RunReport {
        schema_version: SCHEMA_VERSION,
        harness: host::harness_info(bundle::source_dir().as_deref()),
        host: host::host_info(),
        created_at: created.to_rfc3339(),
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
            headless: args.is_headless(),
            weights: weights.get(workload::MINILM).and_then(|p| p.parent()).map(|p| p.display().to_string()),
            browser_args: args.browser_flags.given_args(),
            browser_prefs: args.browser_flags.given_prefs(),
        },
        runs,
        baseline: None,
    };
    if let (Some(old), Some(name)) = (&baseline, &args.baseline) {
        report.baseline = Some(args.gate.compare(name, old, &report));
    }
    write_reports(&report, &out_dir, args.json)?;
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

fn compare(args: CompareArgs) -> Result<ExitCode> {
    let old = baseline::load(&args.old, &args.gate.baseline_dir)?;
    let mut new = baseline::load(&args.new, &args.gate.baseline_dir)?;
    let cmp = args.gate.compare(&args.old, &old, &new);
    if args.json {
        println!("{}", serde_json::to_string_pretty(&cmp)?);
    } else if args.markdown {
        print!("{}", reports::markdown::baseline_section(&cmp));
    } else {
        print!("{}", summary::baseline_table(&cmp));
    }
    let fails = cmp.gate_fails();
    if let Some(out) = &args.out {
        new.baseline = Some(cmp);
        let written = reports::write_all(&new, out).with_context(|| format!("writing the reports to {}", out.display()))?;
        if !args.json && !args.markdown {
            for path in written {
                println!("wrote {}", path.display());
            }
        }
    }
    Ok(if fails { ExitCode::from(1) } else { ExitCode::SUCCESS })
}

/// Builds (or takes) the page bundle and starts the server for it; returns the server and the
/// milliseconds each step took.
async fn serve_page(
    explicit_bundle: Option<PathBuf>,
    listen: std::net::SocketAddr,
    public_url: Option<&str>,
    reporter: &mut dyn Reporter,
) -> Result<(server::Server, f64, f64)> {
    reporter.event(RunEvent::Step("building the page bundle (the first build takes a minute or two)"));
    let t = Instant::now();
    let bundle = tokio::task::spawn_blocking(move || bundle::prepare(explicit_bundle.as_deref())).await??;
    let bundle_ms = t.elapsed().as_secs_f64() * 1e3;
    tracing::info!("bundle at {} ({})", bundle.dir.display(), if bundle.rebuilt { "rebuilt" } else { "reused" });
    let t = Instant::now();
    let server = server::start(listen, public_url, &bundle.dir).await?;
    let server_ms = t.elapsed().as_secs_f64() * 1e3;
    tracing::info!("server listening on {}", server.addr);
    Ok((server, bundle_ms, server_ms))
}

/// Writes the report files, then prints the summary (or, with `json`, results.json) to stdout.
fn write_reports(report: &RunReport, out_dir: &std::path::Path, json: bool) -> Result<()> {
    let t = Instant::now();
    let written = reports::write_all(report, out_dir)
        .with_context(|| format!("writing the reports to {}", out_dir.display()))?;
    let report_ms = t.elapsed().as_secs_f64() * 1e3;
    if json {
        println!("{}", serde_json::to_string_pretty(report)?);
    } else {
        print!("{}", summary::table(report));
        println!("report writing {report_ms:.0} ms");
        for path in &written {
            println!("wrote {}", path.display());
        }
    }
    Ok(())
}

fn merge(args: MergeArgs) -> Result<ExitCode> {
    let report = reports::merge(&args.inputs)?;
    write_reports(&report, &args.out, false)?;
    Ok(ExitCode::SUCCESS)
}

fn browsers(args: BrowsersArgs) -> Result<ExitCode> {
    let found = discovery::discover();
    if args.json {
        println!("{}", serde_json::to_string_pretty(&found)?);
        return Ok(ExitCode::SUCCESS);
    }
    let mut table = comfy_table::Table::new();
    table.load_preset(comfy_table::presets::UTF8_FULL_CONDENSED);
    table.set_header(["browser", "executable", "version", "driver", "driver version"]);
    let mut hints = Vec::new();
    for f in &found {
        let cell = |l: &discovery::Located, v: bool| match (v, &l.path, &l.version) {
            (false, Some(p), _) => p.clone(),
            (true, Some(_), Some(ver)) => ver.clone(),
            _ => "missing".into(),
        };
        table.add_row(vec![
            f.browser.to_string(),
            cell(&f.executable, false),
            cell(&f.executable, true),
            cell(&f.driver, false),
            cell(&f.driver, true),
        ]);
        hints.extend(f.executable.missing.iter().chain(&f.driver.missing).cloned());
    }
    println!("{table}");
    for h in hints {
        println!("- {h}");
    }
    let usable: Vec<&str> = found.iter().filter(|f| f.usable()).map(|f| f.browser).collect();
    println!("usable with --browser: {}", if usable.is_empty() { "none".into() } else { usable.join(", ") });
    Ok(ExitCode::SUCCESS)
}

fn exit_code(report: &RunReport) -> ExitCode {
    let nothing_measured = report
        .runs
        .iter()
        .all(|r| r.cases.iter().all(|c| c.samples.is_empty()) && r.failure.is_some());
    if nothing_measured {
        ExitCode::from(EXIT_UNUSABLE)
    } else if report.runs.iter().all(|r| r.counts().all_passed() && r.failure.is_none()) {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

fn list(args: ListArgs) -> Result<ExitCode> {
    match args.suite {
        Some(suite) => {
            let cases = kernels::plan::build_cases(suite.into(), &args.filter, 1)?;
            if args.json {
                println!("{}", serde_json::to_string_pretty(&cases)?);
            } else {
                for c in cases {
                    println!("{}", c.id);
                }
            }
        }
        None => {
            let kernels: Vec<_> = kernels::catalog::all()
                .into_iter()
                .filter(|k| args.filter.is_empty() || args.filter.iter().any(|p| kernels::plan::glob_match(p, k.name())))
                .collect();
            if args.json {
                let rows: Vec<_> = kernels
                    .iter()
                    .map(|k| serde_json::json!({"name": k.name(), "summary": k.summary(), "dims": k.dims(), "selftest": k.is_selftest()}))
                    .collect();
                println!("{}", serde_json::to_string_pretty(&rows)?);
            } else {
                for k in kernels {
                    println!("{:<16} [{}] {}", k.name(), k.dims().join("×"), k.summary());
                }
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The case `harness verify` times on the adapter and on the CPU: large enough that dispatch
/// overhead does not hide a real GPU, small enough for a software adapter to finish in seconds.
fn plausibility_case() -> kernels::CaseSpec {
    kernels::CaseSpec::new("matmul_tiled", kernels::Shape(vec![512, 512, 512]), 1)
}

async fn verify(args: VerifyArgs) -> Result<ExitCode> {
    let case = plausibility_case();
    let plan = kernels::RunPlan {
        platform: kernels::Platform::Webgpu,
        sampling: kernels::Sampling {
            mode: kernels::SamplingMode::Steady,
            warmup: kernels::WarmupPolicy::Fixed(1),
            samples: 3,
            max_time_ms: 10_000.0,
            target_ci_pct: None,
        },
        cases: vec![case.clone()],
    };
    let timeout = Duration::from_secs_f64(args.timeout);
    let references = Arc::new(reference::References::default());
    let probe = probe::RunProbe::detect();
    let browsers = match args.platform {
        PlatformArg::Webgpu => vec![args.browser],
        _ => Vec::new(),
    };
    args.browser_flags.warn_unused(&browsers);
    let mut interrupted = interrupt_watch();
    let mut reporter = TerminalReporter::new();
    let (checked, gpu_run, cpu_where, cpu_ms) = match args.platform {
        PlatformArg::Wasm => anyhow::bail!("verify checks --platform webgpu or native; wasm is the CPU it compares with"),
        PlatformArg::Native => {
            let run = native::run_native(&plan, timeout, &references, &probe, &mut reporter, &mut interrupted).await;
            let cpu_case = case.clone();
            let cpu = tokio::task::spawn_blocking(move || native_cpu_ms(&cpu_case)).await?;
            ("wgpu/native".to_string(), run, "the native CPU (f32 Rust, one thread)", Some(cpu))
        }
        PlatformArg::Webgpu => {
            let (server, _, _) = serve_page(args.bundle.clone(), ([127, 0, 0, 1], 0).into(), None, &mut reporter).await?;
            if let Some(check) = probe.check() {
                server.set_clock(check);
            }
            let request = |platform| BrowserRunRequest {
                browser: args.browser,
                platform,
                headless: true,
                browser_path: args.browser_path.clone(),
                driver_path: args.driver_path.clone(),
                webdriver_url: None,
                user_flags: args.browser_flags.for_browser(args.browser),
                plan: plan.clone(),
                case_timeout: timeout,
                read_diagnostics: platform == kernels::Platform::Webgpu,
                references: references.clone(),
                probe: probe.clone(),
            };
            let gpu = controller::run_browser(&request(kernels::Platform::Webgpu), &server, &mut reporter, &mut interrupted).await;
            let cpu = match gpu.adapter.as_ref().is_some_and(|a| a.available) {
                true => {
                    let run = controller::run_browser(&request(kernels::Platform::Wasm), &server, &mut reporter, &mut interrupted).await;
                    verify::AdapterTimes::of(&run).wall_ms
                }
                false => None,
            };
            (format!("{}/webgpu", args.browser.spec().key), gpu, "the CPU in the same browser (WASM SIMD128, one thread)", cpu)
        }
    };
    drop(reporter);
    let mut evidence = Vec::new();
    if let Some(a) = gpu_run.adapter.as_ref().filter(|a| a.available) {
        evidence.extend(verify::adapter_evidence(a));
        if args.platform == PlatformArg::Webgpu {
            evidence.push(verify::diagnostics_evidence(args.browser.spec().diagnostics_url, &gpu_run.diagnostics));
        }
        evidence.push(verify::plausibility_evidence(&case.id, &checked, verify::AdapterTimes::of(&gpu_run), cpu_where, cpu_ms));
        evidence.push(verify::latency_evidence(gpu_run.completion_latency.as_ref()));
    } else {
        if let Some(f) = &gpu_run.failure {
            evidence.push(verify::Evidence { source: "run".into(), finding: f.clone(), says_software: None });
        }
        // No adapter: say what this machine's GPU stack lacks, and how to add it.
        if cfg!(target_os = "linux") {
            evidence.extend(verify::this_machines_gpu_stack());
        }
    }
    let (verdict, reason) = verify::decide(gpu_run.adapter.as_ref(), &evidence);
    let report = verify::Report { verdict, reason, checked, adapter: gpu_run.adapter.clone(), evidence, diagnostics: gpu_run.diagnostics.clone() };
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print!("{}", report.render());
    }
    Ok(ExitCode::from(verdict.exit_code()))
}

/// Median ms of the plausibility case's f32 CPU kernel, natively.
fn native_cpu_ms(case: &kernels::CaseSpec) -> f64 {
    let kernel = case.kernel().expect("the plausibility kernel exists");
    let inputs = kernel.inputs(&case.shape, case.seed);
    let mut times: Vec<f64> = (0..3)
        .map(|_| {
            let t = Instant::now();
            std::hint::black_box(kernel.cpu(&case.shape, &inputs));
            t.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    times.sort_by(f64::total_cmp);
    times[1]
}
