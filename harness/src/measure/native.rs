//! `--platform native`: the same WGSL through wgpu on this machine's Vulkan, Metal or DX12 driver,
//! no browser, as the baseline WebGPU numbers are put beside. A worker thread plays the page's
//! part and sends the same events, so cases are settled, checked and reported exactly as in a
//! browser.

use crate::measure::controller::{finish_run, new_run, run_cases, CaseBook, CaseLimits, Restart};
use crate::measure::probe::RunProbe;
use crate::measure::events::{Reporter, RunEvent};
use crate::plan::reference::References;
use crate::measure::server::PageEvent;
use anyhow::{bail, Result};
use kernels::gpu::Gpu;
use kernels::wire::{AdapterReport, CaseMeasurement, PageError, Progress};
use kernels::{Platform, RunPlan};
use reports::{BrowserInfo, PlatformRun};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::{mpsc, watch};

/// The wgpu version harness is built with, for reports.
pub const WGPU: &str = "wgpu 30";

/// A native dispatch cannot be interrupted: a hung case ends the run.
struct NoRestart;

impl Restart for NoRestart {
    async fn restart(&mut self, _plan: RunPlan) -> Result<()> {
        bail!("a native case did not finish in time, and a native dispatch cannot be interrupted")
    }
}

/// The name a native run goes by in place of a browser's (in reports and its journal label).
pub const BROWSER: &str = "wgpu";

/// Runs `plan` natively.
pub async fn run_native(
    plan: &RunPlan,
    case_timeout: Duration,
    references: &Arc<References>,
    probe: &RunProbe,
    reporter: &mut dyn Reporter,
    interrupted: &mut watch::Receiver<bool>,
) -> PlatformRun {
    let mut run = new_run(BROWSER, Platform::Native);
    run.probe = Some(probe.status(false));
    run.browser_info = Some(BrowserInfo { name: BROWSER.into(), version: WGPU.into(), path: None, flags: Vec::new(), user_flags: Vec::new() });
    let (tx, mut events) = mpsc::unbounded_channel();
    let worker_plan = plan.clone();
    let weights = references.clone();
    let worker_probe = probe.clone();
    let worker = std::thread::spawn(move || pollster::block_on(worker(worker_plan, weights, worker_probe, tx)));
    let mut book = CaseBook::new(&plan.cases);
    let t = Instant::now();
    reporter.event(RunEvent::RunStarted { browser: &run.browser, platform: &run.platform });
    reporter.event(RunEvent::Planned { browser: &run.browser, cases: plan.cases.len(), sampling: &plan.sampling });
    // A native dispatch cannot be interrupted, so a timed-out case is not run again.
    let limits = CaseLimits { timeout: case_timeout, retries: 0 };
    let outcome = run_cases(plan, limits, &mut events, &mut NoRestart, &mut run, &mut book, reporter, interrupted, &[], references, probe.probe()).await;
    run.phases.cases_ms = t.elapsed().as_secs_f64() * 1e3;
    // The worker drops its device when it ends: let it, before harness goes on to exit. A driver
    // torn down by the exit while a thread still releases its device crashed harness on an H100.
    // A hung case never ends, so it is not waited for.
    if outcome.is_ok() {
        let _ = tokio::task::spawn_blocking(move || worker.join()).await;
    }
    if let Some(adapter) = &run.adapter {
        if let Some(info) = &mut run.browser_info {
            info.flags = vec![adapter.user_agent.clone()];
        }
    }
    finish_run(run, book, outcome, reporter)
}

/// Plays the page: adapter, then each case, then done. Stops when the controller stops listening.
async fn worker(plan: RunPlan, references: Arc<References>, probe: RunProbe, tx: mpsc::UnboundedSender<PageEvent>) {
    let mut gpu = match Gpu::new().await {
        Ok(g) => g,
        Err(e) => {
            let _ = tx.send(PageEvent::Adapter(AdapterReport { available: false, reason: Some(e.to_string()), ..Default::default() }));
            return;
        }
    };
    if tx.send(PageEvent::Adapter(gpu.report())).is_err() {
        return;
    }
    match gpu.measure_latency().await {
        Ok(latency) => {
            let _ = tx.send(PageEvent::Latency(latency));
        }
        Err(e) => tracing::warn!("native wgpu: the completion latency could not be measured: {e}"),
    }
    for case in &plan.cases {
        let _ = tx.send(PageEvent::Progress(Progress::CaseStarted { case_id: case.id.clone(), at_ms: kernels::sampling::now_ms() }));
        let event = match measure(&mut gpu, &plan, case, &references, &probe, &tx).await {
            Ok(mut m) => {
                m.sent_ms = kernels::sampling::now_ms();
                PageEvent::Result(Box::new(m))
            }
            Err(error) => PageEvent::Error(error),
        };
        if tx.send(event).is_err() {
            return;
        }
    }
    let _ = tx.send(PageEvent::Done);
}

async fn measure(
    gpu: &mut Gpu,
    plan: &RunPlan,
    case: &kernels::CaseSpec,
    references: &References,
    probe: &RunProbe,
    tx: &mpsc::UnboundedSender<PageEvent>,
) -> Result<CaseMeasurement, PageError> {
    if case.kernel().and_then(|k| k.fault()).is_some_and(|f| f != kernels::Fault::LoseDevice) {
        return Err(PageError::case(&case.id, format!("{}: self-test faults are page-only", case.kernel)));
    }
    let weights = match case.workload.as_ref().and_then(|w| w.weights_key()) {
        Some(key) => Some(references.weights(key).map_err(|e| PageError::case(&case.id, e))?),
        None => None,
    };
    gpu.run_case(plan, case, weights.as_deref(), &mut &*probe, |done| {
        let _ = tx.send(PageEvent::Progress(Progress::SampleDone { case_id: case.id.clone(), done }));
    })
    .await
    .map_err(|e| e.for_case(&case.id))
}
