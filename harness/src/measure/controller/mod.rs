//! Runs a plan in one browser: starts the driver (or uses a remote WebDriver) and the browser,
//! navigates to the page served by the shared server, settles every case as its events arrive (checking each result against the reference),
//! enforces the per-case timeout by reloading the page with the cases still to run, notices a
//! browser or driver that died (the case is `crashed`) and goes on in a fresh session, runs a
//! crashed or timed-out case again (`--retries`), and always ends the browser and driver.
//! Whatever happens, it returns a [`PlatformRun`] holding every case settled so far.
//!
//! This module sequences the run; each decision about a case has a room of its own: `lifecycle`
//! (the [`CaseBook`], settling each case against its reference), `crash` (timeouts, crashes,
//! retries and relaunch), `cold_start` (fresh pages merged into one case), `unavailable`
//! (platforms that cannot run a case, or any), and `session` (a browser session and its page).
//! Memory is sampled through [`crate::measure::memory`].

mod cold_start;
mod crash;
mod lifecycle;
mod session;
mod unavailable;

pub use crash::{CaseLimits, Crashed};
pub use lifecycle::{finish_run, new_run, CaseBook};

use crate::measure::browser::{BrowserFlags, BrowserKind, GpuFlags};
use crate::measure::events::{Reporter, RunEvent};
use crate::measure::memory;
use crate::measure::probe::{ClockProbe, PageClock, RunProbe};
use crate::measure::server::{PageEvent, Server};
use crate::plan::reference::References;
use anyhow::{bail, Result};
use cold_start::{ColdPages, OnePage};
use crash::{Crashes, Watchdog, LIVENESS_EVERY};
use kernels::wire::{Phase, Progress};
use kernels::{CaseSpec, Platform, RunPlan};
use reports::{CaseStatus, CaseTime, PlatformRun};
use session::{navigate, profile_seed, read_diagnostics, start_session};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;
use tokio::sync::{mpsc, watch};

/// Everything needed to run a plan in one browser.
#[derive(Debug, Clone)]
pub struct BrowserRunRequest {
    /// Which browser.
    pub browser: BrowserKind,
    /// `webgpu`, `wasm` or `tfjs`: the page platforms.
    pub platform: Platform,
    /// Without a window.
    pub headless: bool,
    /// Browser executable override (with a remote WebDriver: the path on that machine).
    pub browser_path: Option<PathBuf>,
    /// Driver executable override.
    pub driver_path: Option<PathBuf>,
    /// A running WebDriver endpoint or Selenium Grid to use instead of launching a driver.
    pub webdriver_url: Option<String>,
    /// The user's arguments and prefs for this browser (`--browser-arg`, `--browser-pref`),
    /// added after harness's own.
    pub user_flags: BrowserFlags,
    /// Whether Chrome and Edge get the flags that reach a hardware GPU (`--gpu-flags`).
    pub gpu_flags: GpuFlags,
    /// The cases and their timing settings.
    pub plan: RunPlan,
    /// Longest a case may take, and how often a crashed or timed-out one runs again.
    pub limits: CaseLimits,
    /// Read the browser's GPU diagnostics page after the cases (`harness verify`).
    pub read_diagnostics: bool,
    /// What outputs are checked against, shared by every browser and platform of the run.
    pub references: Arc<References>,
    /// The GPU clock probe of the invocation, or why there is none.
    pub probe: RunProbe,
}

/// Runs `req` with the page `server` serves. A browser that cannot start, crashes or hangs yields
/// a failed [`PlatformRun`] holding every case settled so far.
pub async fn run_browser(
    req: &BrowserRunRequest,
    server: &Server,
    reporter: &mut dyn Reporter,
    interrupted: &mut watch::Receiver<bool>,
) -> PlatformRun {
    let mut run = new_run(req.browser.spec().key, req.platform);
    run.probe = Some(req.probe.status(req.webdriver_url.is_some()));
    reporter.event(RunEvent::RunStarted { browser: &run.browser, platform: &run.platform });

    let mut book = CaseBook::new(&req.plan.cases, req.platform);
    // What the platform cannot run is settled now, with the reason; the page gets the rest.
    unavailable::settle_unsupported(&req.plan.cases, req.platform, &mut book, reporter);
    let remaining = book.remaining();
    if remaining.is_empty() {
        return finish_run(run, book, Ok(()), reporter);
    }
    let req = &BrowserRunRequest { plan: RunPlan { cases: remaining, ..req.plan.clone() }, ..req.clone() };
    let mut events = server.begin_run(RunPlan { platform: req.platform, ..req.plan.clone() });
    tracing::info!("serving the page at {}", server.page_url());
    let mut browsing = Browsing { req, server, events: &mut events, run: &mut run, book: &mut book, reporter: &mut *reporter, interrupted };
    let outcome = async {
        run_cold(&mut browsing).await?;
        match browsing.book.remaining().is_empty() {
            true => Ok(()),
            false => drive(&mut browsing).await,
        }
    }
    .await;
    finish_run(run, book, outcome, reporter)
}

/// One browser's run under way: what it was asked, the server, the page's events, the run and the
/// book of its cases being filled in, and where its events and an interrupt come from.
struct Browsing<'a> {
    req: &'a BrowserRunRequest,
    server: &'a Server,
    events: &'a mut mpsc::UnboundedReceiver<PageEvent>,
    run: &'a mut PlatformRun,
    book: &'a mut CaseBook,
    reporter: &'a mut dyn Reporter,
    interrupted: &'a mut watch::Receiver<bool>,
}

/// Measures the book's cold-start cases (`--cold-start`): each sample is a new browser session,
/// so a fresh profile (no shader or HTTP cache), on a page that runs that one case; the pages
/// make one case. A page that fails ends its case with that failure; a browser that will not
/// start ends the run.
async fn run_cold(browsing: &mut Browsing<'_>) -> Result<()> {
    let Browsing { req, server, events, run, book, reporter, interrupted } = browsing;
    let reporter: &mut dyn Reporter = &mut **reporter;
    let cold: Vec<CaseSpec> = book.remaining().into_iter().filter(|s| s.cold.is_some()).collect();
    if cold.is_empty() {
        return Ok(());
    }
    reporter.event(RunEvent::Planned { browser: &run.browser, cases: cold.len(), sampling: &req.plan.sampling });
    // Every fresh page's browser starts alike: from the profile seed, made first where there is none.
    if profile_seed(req).is_some_and(|seed| !seed.exists()) {
        reporter.event(RunEvent::Step(&format!("starting {} once to keep its startup cache for the fresh profiles", req.browser.spec().display)));
        start_session(req, server, run, reporter).await?.end().await;
    }
    for spec in cold {
        let mut pages = ColdPages::new(&spec);
        let samples = pages.samples();
        for page in 1..=samples {
            reporter.event(RunEvent::Step(&format!("{}: fresh page {page} of {samples}", spec.id)));
            let t = Instant::now();
            let mut session = start_session(req, server, run, reporter).await?;
            run.phases.browser_start_ms += elapsed_ms(t);
            let t = Instant::now();
            let plan = RunPlan { platform: req.platform, cases: vec![spec.clone()], ..req.plan.clone() };
            server.set_plan(plan.clone());
            // What the last page sent after its case settled (its `done`) is not this page's.
            while events.try_recv().is_ok() {}
            let mut one = CaseBook::new(std::slice::from_ref(&spec), req.platform);
            let limits = CaseLimits { retries: 0, ..req.limits };
            let flags = run.browser_info.as_ref().map(|b| b.flags.clone()).unwrap_or_default();
            let result = match navigate(&session.client, &session.url).await {
                Ok(()) => run_cases(&plan, limits, events, &mut session, run, &mut one, &mut OnePage(reporter), interrupted, &flags, &req.references, None).await,
                Err(e) => Err(e),
            };
            run.phases.cases_ms += elapsed_ms(t);
            session.end().await;
            if *interrupted.borrow() {
                return result;
            }
            if !pages.page_ended(&spec, page, one, &result, run) {
                break;
            }
        }
        if let Some(case) = pages.merged() {
            book.settle(case, reporter);
        }
    }
    Ok(())
}

/// Starts the cases still to run again, after a case hung or the page failed, and says whether
/// the platform is still there.
#[allow(async_fn_in_trait)]
pub trait Restart {
    /// Goes on with `plan`, the remaining cases.
    async fn restart(&mut self, plan: RunPlan) -> Result<()>;

    /// `Ok` while the platform can go on; what it left behind once it is gone.
    async fn check_alive(&mut self) -> Result<(), String> {
        Ok(())
    }

    /// The process group of the browser's driver, whose memory the run records; `None` for a
    /// remote WebDriver or no browser.
    fn process_group(&self) -> Option<i32> {
        None
    }
}

/// Runs the book's cases in sessions of the browser, a fresh one after each crash, until every
/// case is settled or the browser is given up.
async fn drive(browsing: &mut Browsing<'_>) -> Result<()> {
    let Browsing { req, server, events, run, book, reporter, interrupted } = browsing;
    let reporter: &mut dyn Reporter = &mut **reporter;
    let spec = req.browser.spec();
    let mut crashes = Crashes::default();
    loop {
        let t = Instant::now();
        let mut session = crashes.start(req, server, run, book, reporter, interrupted).await?;
        run.phases.browser_start_ms += elapsed_ms(t);

        let t = Instant::now();
        let remaining = book.remaining();
        reporter.event(RunEvent::Planned { browser: &run.browser, cases: remaining.len(), sampling: &req.plan.sampling });
        let plan = RunPlan { platform: req.platform, cases: remaining, ..req.plan.clone() };
        server.set_plan(plan.clone());
        let result = match navigate(&session.client, &session.url).await {
            Ok(()) => {
                let flags = run.browser_info.as_ref().map(|b| b.flags.clone()).unwrap_or_default();
                let probe = req.probe.probe().filter(|_| req.webdriver_url.is_none());
                run_cases(&plan, req.limits, events, &mut session, run, book, reporter, interrupted, &flags, &req.references, probe).await
            }
            // A browser that died before the page loaded is a crash like any other.
            Err(e) => match session.check_alive().await {
                Err(why) => Err(Crashed(why).into()),
                Ok(()) => Err(e),
            },
        };
        run.phases.cases_ms += elapsed_ms(t);
        let crash = result.as_ref().err().and_then(|e| e.downcast_ref::<Crashed>()).map(|c| c.0.clone());
        if req.read_diagnostics && crash.is_none() {
            run.diagnostics = read_diagnostics(&session.client, spec.diagnostics_url).await;
        }
        session.end().await;
        let Some(why) = crash else { return result };

        if !crashes.crashed(why, spec.display, book, run, reporter)? {
            return Ok(());
        }
    }
}

/// Settles every case of `plan` from the platform's `events` (a page's, or the native worker's),
/// enforcing `limits` through `restart`. A platform that is gone ends it with [`Crashed`], the
/// case it was running settled `crashed` (or left to run again).
#[allow(clippy::too_many_arguments)]
pub async fn run_cases(
    plan: &RunPlan,
    limits: CaseLimits,
    events: &mut mpsc::UnboundedReceiver<PageEvent>,
    restart: &mut impl Restart,
    run: &mut PlatformRun,
    book: &mut CaseBook,
    reporter: &mut dyn Reporter,
    interrupted: &mut watch::Receiver<bool>,
    flags: &[String],
    references: &Arc<References>,
    probe: Option<&ClockProbe>,
) -> Result<()> {
    let mut watchdog = Watchdog::new(&limits);
    let mut liveness = tokio::time::interval(LIVENESS_EVERY);
    liveness.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut current: Option<(String, Instant)> = None;
    // When the current case started, on the probe's clock.
    let mut started_ms = 0.0;
    let mut page_clock = PageClock::default();
    let mut sampled_at = None;

    loop {
        // Memory after each settled case (and before the first), for soaks.
        let settled = book.settled.len();
        if sampled_at != Some(settled) {
            sampled_at = Some(settled);
            run.memory.extend(memory::sample(settled, restart.process_group()));
        }
        let deadline = watchdog.deadline(current.as_ref().map(|(_, started)| *started));
        let mut reload = false;
        tokio::select! {
            event = events.recv() => {
                let Some(event) = event else { bail!("the server stopped unexpectedly") };
                match event {
                    PageEvent::Adapter(adapter) => {
                        if unavailable::take_adapter(plan, adapter, run, book, reporter, flags)? {
                            return Ok(());
                        }
                        if let Some(sign) = run.adapter.as_ref().and_then(kernels::software::software_sign).filter(|_| !plan.platform.on_webnn()) {
                            watchdog.on_cpu(&limits);
                            if let Some(policy) = cpu_policy(plan, &limits) {
                                reporter.event(RunEvent::Step(&format!("{} {} runs on a software adapter ({sign}): {}", run.browser, run.platform, policy.describe())));
                            }
                        }
                        watchdog.page_spoke();
                    }
                    PageEvent::Latency(latency) => {
                        let latency = reports::Latency::new(latency);
                        reporter.event(RunEvent::Latency(&latency));
                        run.completion_latency = Some(latency);
                    }
                    PageEvent::Progress(Progress::CaseStarted { case_id, at_ms }) => {
                        reporter.event(RunEvent::CaseStarted(&case_id));
                        current = Some((case_id, Instant::now()));
                        started_ms = probe.map(ClockProbe::now_ms).unwrap_or_default();
                        page_clock.observe(at_ms, started_ms);
                    }
                    PageEvent::Progress(Progress::SampleDone { case_id, done }) => {
                        reporter.event(RunEvent::SampleDone { case_id: &case_id, done });
                    }
                    PageEvent::Result(mut m) => {
                        if let Some(cold) = &mut m.cold {
                            cold.arrived_ms = chrono::Utc::now().timestamp_micros() as f64 / 1e3;
                        }
                        if let Some(spec) = book.open_spec(&m.case_id) {
                            let label = format!("{} {}", run.browser, run.platform);
                            // The clocks while the timed samples ran; the whole case where the
                            // platform did not say when that was.
                            let span = probe.map(|p| {
                                let arrived = p.now_ms();
                                page_clock.timed_span(&m, arrived).unwrap_or((started_ms, arrived))
                            });
                            let (mut case, mut harness_phases) = lifecycle::analyze(spec, *m, references.clone(), label).await?;
                            let waited = Instant::now();
                            case.clock = match (probe, span) {
                                (Some(p), Some((from, to))) => match p.window(from, to) {
                                    Some(clock) => Some(clock),
                                    // A span shorter than the probe's interval, reported before the
                                    // reading after it was taken: that reading stands in for it.
                                    None => {
                                        tokio::time::sleep(p.interval()).await;
                                        harness_phases.push(Phase { name: "clock".into(), ms: waited.elapsed().as_secs_f64() * 1e3 });
                                        p.window(from, to)
                                    }
                                },
                                _ => None,
                            };
                            if let Some((_, started)) = &current {
                                let platform = case.case_time.take().map(|t| t.phases).unwrap_or_default();
                                case.case_time = Some(CaseTime::new(started.elapsed().as_secs_f64() * 1e3, platform, harness_phases));
                            }
                            book.settle(case, reporter);
                        }
                        current = None;
                        watchdog.page_spoke();
                    }
                    PageEvent::Error(e) => {
                        // A case this adapter cannot run (a missing feature) is no error of the run.
                        let status = match (e.unsupported, e.device_lost) {
                            (true, _) => CaseStatus::Unsupported,
                            (_, true) => CaseStatus::DeviceLost,
                            _ => CaseStatus::Error,
                        };
                        if !e.unsupported {
                            reporter.event(RunEvent::PageError(&e));
                            run.errors.push(e.clone());
                        }
                        let case_id = e.case_id.clone().or_else(|| current.as_ref().map(|(id, _)| id.clone()));
                        if let Some(spec) = case_id.as_deref().and_then(|id| book.open_spec(id)) {
                            // The stack stays with the error in `run.errors`.
                            book.settle_unmeasured(&spec, status, e.message.clone(), reporter);
                        } else if e.fatal {
                            bail!("the page failed outside any case: {}", e.message);
                        }
                        current = None;
                        watchdog.page_spoke();
                        reload = e.fatal;
                    }
                    PageEvent::Done => return Ok(()),
                }
            }
            _ = tokio::time::sleep_until(deadline.into()) => {
                watchdog.expired(current.take(), book, limits.retries, reporter)?;
                reload = true;
            }
            _ = liveness.tick() => {
                if let Err(why) = restart.check_alive().await {
                    return Err(crash::platform_gone(current.take(), why, book, limits.retries, reporter));
                }
            }
            _ = interrupted.changed() => bail!("interrupted (Ctrl-C, SIGTERM or SIGHUP)"),
        }
        if reload {
            let remaining = book.remaining();
            if remaining.is_empty() {
                return Ok(());
            }
            watchdog.restarting(plan.cases.len(), limits.retries)?;
            tracing::info!("restarting for the {} cases still to run", remaining.len());
            restart.restart(RunPlan { cases: remaining, ..plan.clone() }).await?;
            watchdog.page_spoke();
        }
    }
}

/// What `plan` and `limits` give a run on a CPU adapter in place of what was asked, where the
/// user left either to harness.
pub fn cpu_policy(plan: &RunPlan, limits: &CaseLimits) -> Option<reports::CpuAdapterPolicy> {
    if plan.cpu_sampling.is_none() && limits.cpu_timeout.is_none() {
        return None;
    }
    let sampling = plan.cpu_sampling.unwrap_or(plan.sampling);
    Some(reports::CpuAdapterPolicy {
        samples: sampling.samples,
        max_time_s: sampling.max_time_ms / 1e3,
        warmup: sampling.warmup,
        case_timeout_s: limits.cpu_timeout.unwrap_or(limits.timeout).as_secs_f64(),
    })
}

fn elapsed_ms(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}
