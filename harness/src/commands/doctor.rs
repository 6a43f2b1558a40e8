//! `harness doctor`: reads this machine's GPU stack, asks wgpu for its native adapters and each
//! browser for its WebGPU adapter, and prints the chain with its first broken link.

use super::{browser_kinds, browsers, warn_unused};
use crate::cli::doctor::DoctorArgs;
use crate::measure::controller::{self, BrowserRunRequest, CaseLimits};
use crate::measure::{discovery, gpu_stack, probe};
use crate::output::doctor::{self, BrowserFinding};
use crate::output::progress::TerminalReporter;
use crate::pipeline::{interrupt_watch, serve_page};
use crate::plan::reference;
use anyhow::Result;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

/// Prints the diagnosis; the exit status says whether every browser reaches a hardware GPU.
pub async fn exec(args: DoctorArgs) -> Result<ExitCode> {
    let stack = gpu_stack::this_machine();
    let native = kernels::gpu::native_adapters().await;
    if args.adapters_only {
        println!("{}", serde_json::to_string(&native.iter().map(|a| &a.name).collect::<Vec<_>>())?);
        return Ok(ExitCode::SUCCESS);
    }
    // The loader's own words, where it offers the machine's GPU to no one.
    let loader = match stack.has_gpu() && !native.iter().any(|a| a.is_hardware()) {
        true => crate::measure::loader::messages(),
        false => Vec::new(),
    };
    let kinds = browser_kinds(&args.browser, discovery::installed);
    warn_unused(&args.browser_flags, &kinds);
    let mut findings = Vec::new();
    if !kinds.is_empty() {
        let mut reporter = TerminalReporter::new();
        let mut interrupted = interrupt_watch();
        let (server, _, _) = serve_page(args.bundle.clone(), ([127, 0, 0, 1], 0).into(), None, &mut reporter).await?;
        let references = Arc::new(reference::References::default());
        for browser in browsers(&args.paths, &args.browser_flags, &kinds).map_err(anyhow::Error::msg)? {
            let request = BrowserRunRequest {
                browser: browser.kind,
                platform: kernels::Platform::Webgpu,
                headless: true,
                browser_path: browser.browser_path,
                driver_path: browser.driver_path,
                webdriver_url: None,
                user_flags: browser.flags,
                gpu_flags: browser.gpu_flags,
                plan: adapter_plan(),
                limits: CaseLimits { timeout: Duration::from_secs_f64(args.timeout), cpu_timeout: None, retries: 0 },
                read_diagnostics: false,
                references: references.clone(),
                probe: probe::RunProbe::none("harness doctor reads no clocks"),
            };
            let run = controller::run_browser(&request, &server, &mut reporter, &mut interrupted).await;
            findings.push(BrowserFinding {
                kind: browser.kind,
                adapter: run.adapter.clone(),
                failure: run.failure.clone(),
                gpu_flags: run.browser_info.as_ref().is_some_and(|i| !i.gpu_flags.is_empty()),
            });
        }
    }
    let diagnosis = doctor::diagnose(stack.links(gpu_stack::applied_fixes()), stack, &native, &loader, &findings);
    if args.json {
        println!("{}", serde_json::to_string_pretty(&diagnosis)?);
    } else {
        print!("{}", doctor::render(&diagnosis));
    }
    Ok(ExitCode::from(diagnosis.exit))
}

/// One small matmul: enough for the page to report its adapter and show that a dispatch runs.
fn adapter_plan() -> kernels::RunPlan {
    kernels::RunPlan {
        platform: kernels::Platform::Webgpu,
        sampling: kernels::Sampling {
            mode: kernels::SamplingMode::Isolated,
            warmup: kernels::WarmupPolicy::Fixed(0),
            samples: 1,
            max_time_ms: 5_000.0,
            target_ci_pct: None,
            nudge: kernels::Nudge::Off,
            profile: false,
            gpu_timer: Default::default(),
            timer_cost: false,
        },
        cases: vec![kernels::CaseSpec::new("matmul_tiled", kernels::Shape(vec![64, 64, 64]), 1)],
        ..kernels::RunPlan::empty(kernels::Platform::Webgpu)
    }
}
