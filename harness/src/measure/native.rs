//! `--platform native`: the same WGSL through wgpu on this machine's Vulkan, Metal or DX12 driver,
//! no browser, as the baseline WebGPU numbers are put beside. A worker thread plays the page's
//! part and sends the same events, so cases are settled, checked and reported exactly as in a
//! browser.

use crate::measure::controller::{finish_run, new_run, run_cases, CaseBook, CaseLimits, Restart};
use crate::measure::probe::RunProbe;
use crate::measure::events::{Reporter, RunEvent};
use crate::plan::reference::References;
use crate::measure::server::PageEvent;
use anyhow::{bail, Context, Result};
use std::path::PathBuf;
use kernels::case_loop::{self, open_gpu, Sink};
use kernels::gpu::Gpu;
use kernels::wire::{CaseMeasurement, PageError, Progress};
use kernels::{CaseSpec, Platform, RunPlan};
use reports::{BrowserInfo, PlatformRun};
use std::sync::Arc;
use std::time::Instant;
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

/// What plays the page's part for a plan's `--platform native` cases: the one stage a subcommand
/// may swap. Every variant reports its run under [`BROWSER`] (`wgpu`), the name a resumed run's
/// journal finds it by.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Worker {
    /// harness's own worker thread, through native wgpu (the catalogue, models, user kernels).
    #[default]
    InProcess,
    /// A user's natively built bench binary (`harness bench`), in a process of its own that is
    /// started again after a crash or a timed-out case.
    BenchBinary(PathBuf),
}

/// Runs `plan` natively, on `worker`.
pub async fn run_native(
    plan: &RunPlan,
    on: &Worker,
    limits: CaseLimits,
    references: &Arc<References>,
    probe: &RunProbe,
    reporter: &mut dyn Reporter,
    interrupted: &mut watch::Receiver<bool>,
) -> PlatformRun {
    let mut run = new_run(BROWSER, Platform::Native);
    run.probe = Some(probe.status(false));
    run.browser_info = Some(BrowserInfo { name: BROWSER.into(), version: WGPU.into(), path: None, environment: crate::measure::gpu_stack::applied_environment(), ..Default::default() });
    let (tx, mut events) = mpsc::unbounded_channel();
    let mut book = CaseBook::new(&plan.cases, Platform::Native);
    let t = Instant::now();
    reporter.event(RunEvent::RunStarted { browser: &run.browser, platform: &run.platform });
    reporter.event(RunEvent::Planned { browser: &run.browser, cases: plan.cases.len(), sampling: &plan.sampling });
    let outcome = match on {
        Worker::InProcess => {
            let worker_plan = plan.clone();
            let weights = references.clone();
            let worker_probe = probe.clone();
            let worker = std::thread::spawn(move || pollster::block_on(worker(worker_plan, weights, worker_probe, tx)));
            // A native dispatch cannot be interrupted, so a timed-out case is not run again.
            let limits = CaseLimits { retries: 0, ..limits };
            let outcome = run_cases(plan, limits, &mut events, &mut NoRestart, &mut run, &mut book, reporter, interrupted, &[], references, probe.probe()).await;
            // The worker drops its device when it ends: let it, before harness goes on to exit. A
            // driver torn down by the exit while a thread still releases its device crashed
            // harness on an H100. A hung case never ends, so it is not waited for.
            if outcome.is_ok() {
                let _ = tokio::task::spawn_blocking(move || worker.join()).await;
            }
            outcome
        }
        Worker::BenchBinary(exe) => {
            let mut process = BenchProcess { exe: exe.clone(), tx, running: None };
            match process.restart(plan.clone()).await {
                Ok(()) => run_cases(plan, limits, &mut events, &mut process, &mut run, &mut book, reporter, interrupted, &[], references, probe.probe()).await,
                Err(e) => Err(e),
            }
        }
    };
    run.phases.cases_ms = t.elapsed().as_secs_f64() * 1e3;
    if let Some(adapter) = &run.adapter {
        if let Some(info) = &mut run.browser_info {
            info.flags = vec![adapter.user_agent.clone()];
        }
    }
    finish_run(run, book, outcome, reporter)
}

/// A bench binary measuring a plan: a process per attempt, its standard output read as
/// [`PageEvent`]s. Unlike a dispatch in harness's own process, it can be stopped: a hung or
/// crashed bench costs its case, and a fresh process runs the rest.
struct BenchProcess {
    exe: PathBuf,
    tx: mpsc::UnboundedSender<PageEvent>,
    /// The process and its reader.
    running: Option<(tokio::process::Child, tokio::task::JoinHandle<()>)>,
}

impl Restart for BenchProcess {
    async fn restart(&mut self, plan: RunPlan) -> Result<()> {
        if let Some((mut child, reader)) = self.running.take() {
            reader.abort();
            let _ = child.kill().await;
        }
        // The plan goes on the bench's standard input: a file would outlive a killed harness.
        let plan = serde_json::to_vec(&plan)?;
        let mut command = tokio::process::Command::new(&self.exe);
        command
            .arg(harness_bench::native::RUN)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .kill_on_drop(true);
        // A bench stuck in its own code never learns that harness is gone: the kernel ends it when
        // the thread that started it does (harness's runtime threads live as long as harness).
        #[cfg(target_os = "linux")]
        // SAFETY: prctl only sets a flag of the child, between fork and exec.
        unsafe {
            command.pre_exec(|| {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                Ok(())
            });
        }
        let mut child = command.spawn().with_context(|| format!("starting the bench binary {}", self.exe.display()))?;
        if let Some(mut stdin) = child.stdin.take() {
            use tokio::io::AsyncWriteExt;
            // A bench that ends before reading its plan is reported by the reader below, with
            // what it said.
            if let Err(e) = stdin.write_all(&plan).await {
                tracing::debug!("the bench did not take its plan: {e}");
            }
        }
        let (stdout, stderr) = (child.stdout.take(), child.stderr.take());
        let tx = self.tx.clone();
        let reader = tokio::spawn(async move {
            use tokio::io::{AsyncBufReadExt, BufReader};
            // What the bench printed to stderr, the end of which explains a crash.
            let said = tokio::spawn(async move {
                let mut tail = std::collections::VecDeque::new();
                let Some(stderr) = stderr else { return tail };
                let mut lines = BufReader::new(stderr).lines();
                while let Ok(Some(line)) = lines.next_line().await {
                    tracing::debug!("bench: {line}");
                    tail.push_back(line);
                    if tail.len() > 20 {
                        tail.pop_front();
                    }
                }
                tail
            });
            let mut done = false;
            if let Some(stdout) = stdout {
                let mut lines = BufReader::new(stdout).lines();
                while let Ok(Some(line)) = lines.next_line().await {
                    match line.strip_prefix(harness_bench::native::EVENT_PREFIX).map(serde_json::from_str::<PageEvent>) {
                        Some(Ok(event)) => {
                            done |= matches!(event, PageEvent::Done);
                            let _ = tx.send(event);
                        }
                        Some(Err(e)) => tracing::warn!("bench: an event harness cannot read ({e}): {line}"),
                        None => tracing::info!("bench: {line}"),
                    }
                }
            }
            if !done {
                let tail: Vec<String> = said.await.unwrap_or_default().into();
                let message = format!("the bench binary ended before the plan was done; it said:\n{}", tail.join("\n"));
                let _ = tx.send(PageEvent::Error(PageError { fatal: true, case_id: None, ..PageError::case("", message) }));
            }
        });
        self.running = Some((child, reader));
        Ok(())
    }
}

/// Where the worker's case loop sends its events: the controller's channel. Once the controller
/// stops listening, the loop ends.
struct Channel(mpsc::UnboundedSender<PageEvent>);

/// The controller stopped listening.
struct Gone;

impl Sink for Channel {
    type Error = Gone;

    fn progress(&self, event: Progress) {
        let _ = self.0.send(PageEvent::Progress(event));
    }

    async fn send(&mut self, event: PageEvent) -> Result<(), Gone> {
        self.0.send(event).map_err(|_| Gone)
    }

    fn latency_unmeasured(&mut self, error: kernels::gpu::GpuError) -> Result<(), Gone> {
        tracing::warn!("native wgpu: the completion latency could not be measured: {error}");
        Ok(())
    }
}

/// Plays the page: adapter, then each case, then done. Stops when the controller stops listening.
async fn worker(mut plan: RunPlan, references: Arc<References>, probe: RunProbe, tx: mpsc::UnboundedSender<PageEvent>) {
    let mut sink = Channel(tx);
    let Ok(Some(mut gpu)) = open_gpu(&mut sink, plan.sampling.nudge, |gpu| gpu.adapt(&mut plan, &gpu.report())).await else { return };
    let _ = case_loop::run_cases(&plan.cases, &mut sink, async |case: &CaseSpec, on_sample: &dyn Fn(u32)| Ok(measure(&mut gpu, &plan, case, &references, &probe, on_sample).await?)).await;
}

async fn measure(
    gpu: &mut Gpu,
    plan: &RunPlan,
    case: &kernels::CaseSpec,
    references: &References,
    probe: &RunProbe,
    on_sample: &dyn Fn(u32),
) -> Result<CaseMeasurement, PageError> {
    if case.kernel().and_then(|k| k.fault()).is_some_and(|f| f != kernels::Fault::LoseDevice) {
        return Err(PageError::case(&case.id, format!("{}: self-test faults are page-only", case.kernel)));
    }
    let mut phases = kernels::sampling::CaseClock::start();
    let weights = match case.workload.as_ref().and_then(|w| w.weights_key()) {
        Some(key) => Some(references.weights(key).map_err(|e| PageError::case(&case.id, e))?),
        None => None,
    };
    if weights.is_some() {
        phases.mark("weights");
    }
    gpu.run_case(plan, case, weights.as_deref(), &mut &*probe, &mut phases, on_sample).await.map_err(|e| e.for_case(&case.id))
}
