//! `harness verify`: runs one matmul on the adapter and on the CPU, gathers the evidence and
//! decides whether WebGPU (or native wgpu) runs on real GPU hardware.

use super::{browsers, warn_unused};
use crate::cli::values::PlatformArg;
use crate::cli::verify::VerifyArgs;
use crate::measure::controller::{self, BrowserRunRequest, CaseLimits};
use crate::measure::{native, probe};
use crate::output::progress::TerminalReporter;
use crate::output::verdict;
use crate::pipeline::{interrupt_watch, serve_page};
use crate::plan::reference;
use anyhow::Result;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The case `harness verify` times on the adapter and on the CPU: large enough that dispatch
/// overhead does not hide a real GPU, small enough for a software adapter to finish in seconds.
fn plausibility_case() -> kernels::CaseSpec {
    kernels::CaseSpec::new("matmul_tiled", kernels::Shape(vec![512, 512, 512]), 1)
}

/// What ran on the adapter and what it is compared with.
struct Measured {
    /// What was checked, such as `chrome/webgpu`.
    checked: String,
    /// The plausibility case's run on the adapter.
    gpu: reports::PlatformRun,
    /// Where the CPU time comes from, in words.
    cpu_where: &'static str,
    /// The CPU's median ms, where it ran.
    cpu_ms: Option<f64>,
    /// Whether the browser's WebNN is available (in a browser only).
    webnn: Option<String>,
}

/// Prints the verdict and its evidence; the exit status says which verdict.
pub async fn exec(args: VerifyArgs) -> Result<ExitCode> {
    let case = plausibility_case();
    let plan = kernels::RunPlan {
        platform: kernels::Platform::Webgpu,
        sampling: kernels::Sampling {
            mode: kernels::SamplingMode::Steady,
            warmup: kernels::WarmupPolicy::Fixed(1),
            samples: 3,
            max_time_ms: 10_000.0,
            target_ci_pct: None,
            // The browser as it is: verify judges its waits too.
            nudge: kernels::Nudge::Off,
            profile: false,
            gpu_timer: Default::default(),
            timer_cost: false,
        },
        cases: vec![case.clone()],
        webnn: Some(kernels::webnn::Options::default()),
        ..kernels::RunPlan::empty(kernels::Platform::Webgpu)
    };
    let timeout = Duration::from_secs_f64(args.timeout);
    let references = Arc::new(reference::References::default());
    let probe = probe::RunProbe::detect();
    let kinds = match args.platform {
        PlatformArg::Webgpu => vec![args.browser],
        _ => Vec::new(),
    };
    warn_unused(&args.browser_flags, &kinds);
    let browser = browsers(&args.paths, &args.browser_flags, &[args.browser]).map_err(anyhow::Error::msg)?.remove(0);
    let mut interrupted = interrupt_watch();
    let mut reporter = TerminalReporter::new();
    let measured = match args.platform {
        PlatformArg::Wasm => anyhow::bail!("verify checks --platform webgpu or native; wasm is the CPU it compares with"),
        PlatformArg::Tfjs | PlatformArg::OrtWebgpu | PlatformArg::OrtJsep | PlatformArg::OrtWasm | PlatformArg::OrtWebnn | PlatformArg::Ort | PlatformArg::Transformers => {
            anyhow::bail!("verify checks --platform webgpu or native; tfjs, ort and transformers run on the same adapter as webgpu")
        }
        PlatformArg::Webnn | PlatformArg::Both => {
            anyhow::bail!("verify checks --platform webgpu or native; with webgpu it also says whether the browser's WebNN is available")
        }
        PlatformArg::Native => {
            let gpu = native::run_native(&plan, &native::Worker::InProcess, crate::measure::controller::CaseLimits { timeout, cpu_timeout: None, retries: 0 }, &references, &probe, &mut reporter, &mut interrupted).await;
            let cpu_case = case.clone();
            let cpu = tokio::task::spawn_blocking(move || native_cpu_ms(&cpu_case)).await?;
            Measured { checked: "wgpu/native".to_string(), gpu, cpu_where: "the native CPU (f32 Rust, one thread)", cpu_ms: Some(cpu), webnn: None }
        }
        PlatformArg::Webgpu => {
            let limits = CaseLimits { timeout, cpu_timeout: None, retries: 0 };
            let request = |platform| BrowserRunRequest {
                browser: args.browser,
                platform,
                headless: true,
                browser_path: browser.browser_path.clone(),
                driver_path: browser.driver_path.clone(),
                webdriver_url: None,
                user_flags: browser.flags.clone(),
                gpu_flags: browser.gpu_flags,
                plan: plan.clone(),
                limits,
                read_diagnostics: platform == kernels::Platform::Webgpu,
                references: references.clone(),
                probe: probe.clone(),
            };
            in_browser(&args, request, &probe, &mut reporter, &mut interrupted).await?
        }
    };
    drop(reporter);
    let evidence = evidence(&args, &case, &measured);
    let gpu = &measured.gpu;
    let (verdict, reason) = verdict::decide(gpu.adapter.as_ref(), &evidence);
    let (adapter, diagnostics) = (gpu.adapter.clone(), gpu.diagnostics.clone());
    let report = verdict::Report { verdict, reason, checked: measured.checked, adapter, evidence, diagnostics, webnn: measured.webnn };
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print!("{}", report.render());
    }
    if let (verdict::Verdict::Software, Some(host_gpu)) = (verdict, crate::measure::gpu_stack::this_machine().gpus.first()) {
        let sign = report.adapter.as_ref().and_then(reports::adapter::software_sign).unwrap_or_else(|| report.reason.clone());
        let chromium = args.platform == PlatformArg::Webgpu && args.browser != crate::measure::browser::BrowserKind::Firefox;
        let gpu_flags = gpu.browser_info.as_ref().is_some_and(|i| !i.gpu_flags.is_empty());
        eprintln!("warning: {}", reports::adapter::software_adapter_warning(&report.checked, &sign, &host_gpu.name, chromium, gpu_flags));
    }
    Ok(ExitCode::from(verdict.exit_code()))
}

/// Runs the plausibility case in the browser on WebGPU and, where the adapter is there, on the
/// WASM CPU; then asks its WebNN. `request` is the run of one platform.
async fn in_browser(
    args: &VerifyArgs,
    request: impl Fn(kernels::Platform) -> BrowserRunRequest,
    probe: &probe::RunProbe,
    reporter: &mut TerminalReporter,
    interrupted: &mut tokio::sync::watch::Receiver<bool>,
) -> Result<Measured> {
    let (server, _, _) = serve_page(args.bundle.clone(), ([127, 0, 0, 1], 0).into(), None, reporter).await?;
    if let Some(check) = probe.check() {
        server.set_clock(check);
    }
    let gpu = controller::run_browser(&request(kernels::Platform::Webgpu), &server, reporter, interrupted).await;
    let cpu_ms = match gpu.adapter.as_ref().is_some_and(|a| a.available) {
        true => {
            let run = controller::run_browser(&request(kernels::Platform::Wasm), &server, reporter, interrupted).await;
            verdict::AdapterTimes::of(&run).wall_ms
        }
        false => None,
    };
    let webnn_run = controller::run_browser(&request(kernels::Platform::Webnn), &server, reporter, interrupted).await;
    Ok(Measured {
        checked: format!("{}/webgpu", args.browser.spec().key),
        gpu,
        cpu_where: "the CPU in the same browser (WASM SIMD128, one thread)",
        cpu_ms,
        webnn: Some(verdict::webnn_finding(&webnn_run)),
    })
}

/// The evidence the verdict is decided on: the adapter's own word, the browser's diagnostics,
/// the plausibility timing and completion latency; without an adapter, why and what this
/// machine's GPU stack lacks.
fn evidence(args: &VerifyArgs, case: &kernels::CaseSpec, m: &Measured) -> Vec<verdict::Evidence> {
    let mut evidence = Vec::new();
    if let Some(a) = m.gpu.adapter.as_ref().filter(|a| a.available) {
        evidence.extend(verdict::adapter_evidence(a));
        if args.platform == PlatformArg::Webgpu {
            evidence.push(verdict::diagnostics_evidence(args.browser.spec().diagnostics_url, &m.gpu.diagnostics));
        }
        evidence.push(verdict::plausibility_evidence(&case.id, &m.checked, verdict::AdapterTimes::of(&m.gpu), m.cpu_where, m.cpu_ms));
        evidence.push(verdict::latency_evidence(m.gpu.completion_latency.as_ref()));
    } else {
        if let Some(f) = &m.gpu.failure {
            evidence.push(verdict::Evidence { source: "run".into(), finding: f.clone(), says_software: None });
        }
        // No adapter: say what this machine's GPU stack lacks, and how to add it.
        if cfg!(target_os = "linux") {
            let stack = crate::measure::gpu_stack::this_machine();
            evidence.extend(verdict::gpu_stack_evidence(&stack.links(crate::measure::gpu_stack::applied_fixes())));
        }
    }
    evidence
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
