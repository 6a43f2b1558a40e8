//! Runs a plan in one browser: starts the driver (or uses a remote WebDriver) and the browser,
//! navigates to the page served by the shared server, settles every case as its events arrive (checking each result against the reference),
//! enforces the per-case timeout by reloading the page with the cases still to run, notices a
//! browser or driver that died (the case is `crashed`) and goes on in a fresh session, runs a
//! crashed or timed-out case again (`--retries`), and always ends the browser and driver.
//! Whatever happens, it returns a [`PlatformRun`] holding every case settled so far.

use crate::measure::browser::{seed::ProfileSeed, BrowserFlags, BrowserKind, GpuFlags, LaunchOptions};
use crate::measure::gpu_stack;
use crate::measure::driver::Driver;
use crate::measure::memory;
use crate::measure::events::{Reporter, RunEvent};
use crate::measure::server::{PageEvent, Server};
use anyhow::{anyhow, bail, Context, Result};
use kernels::wire::{CaseMeasurement, Phase, Progress};
use crate::measure::probe::{ClockProbe, PageClock, RunProbe};
use crate::plan::reference::References;
use kernels::check::check;
use kernels::{CaseSpec, Platform, RunPlan};
use kernels::wire::PageError;
use reports::{Attempt, BrowserInfo, CaseReport, CaseStatus, CaseTime, DriverInfo, Phases, PlatformRun, RunStatus};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};
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

/// How long a case may take, and how often one that crashed or timed out is run again.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CaseLimits {
    /// Longest a case may take (`--timeout`).
    pub timeout: Duration,
    /// Longest a case may take on a CPU adapter (a software one), where the user gave no
    /// `--timeout`.
    pub cpu_timeout: Option<Duration>,
    /// Further attempts at a case that crashed or timed out (`--retries`).
    pub retries: u32,
}

/// The browser or its driver died while the page ran; the message says what they left behind.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct Crashed(pub String);

/// Crashes in a row, with no case settled in between, after which a browser is given up.
pub const CRASHES_IN_A_ROW: u32 = 3;
/// How often a run checks that its browser is still there.
const LIVENESS_EVERY: Duration = Duration::from_secs(1);
/// How long the browser may take to answer that check before it counts as busy (a hang is the
/// case timeout's to judge), not gone.
const LIVENESS_ANSWER: Duration = Duration::from_secs(5);
/// Waits before each new try at a session after a crash (a Grid node restarting, say).
const RELAUNCH_BACKOFF: [Duration; 3] = [Duration::from_secs(1), Duration::from_secs(2), Duration::from_secs(4)];

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
    for spec in &req.plan.cases {
        if let Some(reason) = req.platform.unsupported(spec) {
            book.settle_unmeasured(spec, CaseStatus::Unsupported, reason, reporter);
        }
    }
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
        let samples = spec.cold.map_or(1, |c| c.samples);
        let mut pages = Vec::new();
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
            let Some(mut case) = one.finish().pop() else { break };
            if let Err(e) = &result {
                let crashed = e.downcast_ref::<Crashed>().is_some();
                run.errors.push(PageError { message: format!("{}, fresh page {page}: {e:#}", spec.id), fatal: true, crashed, ..PageError::case(&spec.id, String::new()) });
                if case.status == CaseStatus::NotRun {
                    case.status = CaseStatus::Error;
                    case.message = Some(format!("{e:#}"));
                }
            }
            let good = case.status.is_good();
            if !good {
                case.message = Some(format!("fresh page {page} of {samples}: {}", case.message.take().unwrap_or_default()));
            }
            pages.push(case);
            if !good {
                break;
            }
        }
        if let Some(case) = CaseReport::merge_cold(pages) {
            book.settle(case, reporter);
        }
    }
    Ok(())
}

/// A reporter for one fresh page of a cold-start case: the case finishes once, after its last
/// page, so a page's end is not passed on.
struct OnePage<'a>(&'a mut dyn Reporter);

impl Reporter for OnePage<'_> {
    fn event(&mut self, event: RunEvent<'_>) {
        if !matches!(event, RunEvent::CaseFinished(_)) {
            self.0.event(event);
        }
    }
}

/// A run of `browser` on `platform` with nothing settled yet.
pub fn new_run(browser: &str, platform: Platform) -> PlatformRun {
    PlatformRun {
        browser: browser.to_string(),
        platform: platform.as_str().to_string(),
        host: crate::measure::host::host_info(),
        browser_info: None,
        driver: None,
        adapter: None,
        status: RunStatus::Completed,
        failure: None,
        errors: Vec::new(),
        phases: Phases::default(),
        completion_latency: None,
        probe: None,
        roofline: None,
        cases: Vec::new(),
        diagnostics: Vec::new(),
        memory: Vec::new(),
        unavailable: None,
    }
}

/// Records how the run ended and every case's fate, and tells the reporter.
pub fn finish_run(mut run: PlatformRun, book: CaseBook, outcome: Result<()>, reporter: &mut dyn Reporter) -> PlatformRun {
    if let Err(e) = outcome {
        run.status = RunStatus::Failed;
        run.failure = Some(format!("{e:#}"));
    }
    run.cases = book.finish();
    reporter.event(RunEvent::RunFinished(&run));
    run
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

/// A browser session: the driver harness started (none with a remote WebDriver), the WebDriver
/// session, and the scratch folder (the profile, the driver's log), which outlives the browser.
struct Session<'a> {
    server: &'a Server,
    url: String,
    client: fantoccini::Client,
    driver: Option<Driver>,
    driver_name: String,
    scratch: Option<tempfile::TempDir>,
    /// The profile's seed and the profile, kept as the seed after a clean quit where there is none.
    seed: Option<(ProfileSeed, PathBuf)>,
}

impl Restart for Session<'_> {
    async fn restart(&mut self, plan: RunPlan) -> Result<()> {
        self.server.set_plan(plan);
        navigate(&self.client, &self.url).await
    }

    fn process_group(&self) -> Option<i32> {
        self.driver.as_ref().map(Driver::process_group)
    }

    async fn check_alive(&mut self) -> Result<(), String> {
        let exited = self.driver.as_mut().and_then(Driver::exit_status);
        let answer = tokio::time::timeout(LIVENESS_ANSWER, self.client.window()).await;
        let said = match (answer, &exited) {
            // It answered, or it is busy: a hang is the case timeout's to judge.
            (Ok(Ok(_)) | Err(_), None) => return Ok(()),
            (Ok(Err(e)), _) => format!("the WebDriver session failed: {e}"),
            (_, Some(_)) => "the WebDriver session is gone".to_string(),
        };
        Err(self.leftovers(&said, exited))
    }
}

impl Session<'_> {
    /// What the browser and driver left behind: what WebDriver `said`, how the driver ended (or
    /// that it still runs) and the end of its log.
    fn leftovers(&self, said: &str, exited: Option<String>) -> String {
        let Some(driver) = &self.driver else { return format!("{said} (a remote WebDriver: its logs are on its machine)") };
        let state = exited.map_or_else(|| "is still running".to_string(), |status| format!("ended: {status}"));
        let tail = driver.log_tail(8);
        format!("{said}; {} {state}; its log ends:\n{tail}", self.driver_name)
    }

    /// Closes the WebDriver session and stops the driver (and with it the browser), keeps the
    /// profile's seed where the browser quit cleanly, then removes the scratch folder.
    async fn end(self) {
        let closed = matches!(tokio::time::timeout(Duration::from_secs(10), self.client.close()).await, Ok(Ok(())));
        if let Some(d) = self.driver {
            let _ = tokio::task::spawn_blocking(move || d.stop()).await;
        }
        if let Some((seed, profile)) = self.seed.filter(|_| closed) {
            let _ = tokio::task::spawn_blocking(move || seed.keep(&profile)).await;
        }
        drop(self.scratch);
    }
}

/// Runs the book's cases in sessions of the browser, a fresh one after each crash, until every
/// case is settled or the browser is given up.
async fn drive(browsing: &mut Browsing<'_>) -> Result<()> {
    let Browsing { req, server, events, run, book, reporter, interrupted } = browsing;
    let reporter: &mut dyn Reporter = &mut **reporter;
    let spec = req.browser.spec();
    let mut crashes_in_a_row = 0;
    loop {
        let t = Instant::now();
        let settled_before = book.settled_without_a_crash();
        let mut session = match crashes_in_a_row {
            0 => start_session(req, server, run, reporter).await?,
            _ => relaunch(req, server, run, reporter, interrupted).await?,
        };
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

        crashes_in_a_row = if book.settled_without_a_crash() > settled_before { 1 } else { crashes_in_a_row + 1 };
        let case_id = book.last_crashed.take();
        run.errors.push(PageError { message: format!("{} crashed: {why}", spec.display), case_id, fatal: true, crashed: true, ..PageError::case("", String::new()) });
        if crashes_in_a_row >= CRASHES_IN_A_ROW {
            bail!("{} crashed {crashes_in_a_row} times in a row with no case finished in between; gave up on it. The last time: {why}", spec.display);
        }
        let left = book.remaining().len();
        if left == 0 {
            return Ok(());
        }
        reporter.event(RunEvent::Step(&format!("{} crashed; starting a fresh session for the {left} cases still to run", spec.display)));
    }
}

/// Starts a session again after a crash, trying again after each of [`RELAUNCH_BACKOFF`]'s waits
/// (a Grid node may take a moment to come back).
async fn relaunch<'a>(
    req: &BrowserRunRequest,
    server: &'a Server,
    run: &mut PlatformRun,
    reporter: &mut dyn Reporter,
    interrupted: &mut watch::Receiver<bool>,
) -> Result<Session<'a>> {
    let mut tries = RELAUNCH_BACKOFF.iter();
    loop {
        match start_session(req, server, run, reporter).await {
            Ok(session) => return Ok(session),
            Err(e) => match tries.next() {
                Some(wait) => {
                    tracing::warn!("a fresh session did not start ({e:#}); trying again in {} s", wait.as_secs());
                    tokio::select! {
                        _ = tokio::time::sleep(*wait) => {}
                        _ = interrupted.changed() => bail!("interrupted (Ctrl-C, SIGTERM or SIGHUP)"),
                    }
                }
                None => return Err(e.context(format!("no fresh session after {} tries", RELAUNCH_BACKOFF.len() + 1))),
            },
        }
    }
}

/// Starts the driver (unless the WebDriver is remote) and a browser session, and records them in
/// `run`.
async fn start_session<'a>(req: &BrowserRunRequest, server: &'a Server, run: &mut PlatformRun, reporter: &mut dyn Reporter) -> Result<Session<'a>> {
    let spec = req.browser.spec();
    let remote = req.webdriver_url.is_some();
    // A remote browser's path (if given) is a path on its machine, so it is not checked here.
    let binary = match remote {
        true => req.browser_path.clone(),
        false => Some(spec.find_browser(req.browser_path.as_deref())?),
    };
    let driver_path = match remote {
        true => None,
        false => Some(spec.find_driver(req.driver_path.as_deref())?),
    };
    // The driver's and its browser's temporary folder: the profile is made in it.
    let scratch = match remote {
        true => None,
        false => Some(tempfile::Builder::new().prefix("harness-").tempdir()?),
    };
    let profile_dir = scratch.as_ref().map(|s| s.path().join("profile"));
    if let Some(profile) = &profile_dir {
        std::fs::create_dir_all(profile)?;
    }
    let options = LaunchOptions {
        binary: binary.clone(),
        headless: req.headless,
        profile_dir,
        webnn: req.platform == Platform::Webnn,
        gpu: req.gpu_flags.resolve(cfg!(target_os = "linux"), gpu_stack::this_machine().has_gpu(), remote),
        nvidia: gpu_stack::this_machine().has_nvidia(),
    };
    // The fresh profile starts with what the browser compiled of itself in an earlier session.
    let seed = profile_seed(req).zip(options.profile_dir.clone());
    let seeded = seed.as_ref().is_some_and(|(seed, profile)| seed.plant(profile));
    let mut flags = (spec.flags)(&options);
    // What the GPU flags added: the flags against the same launch without them.
    let gpu_share = match options.gpu {
        true => {
            let without = (spec.flags)(&LaunchOptions { gpu: false, ..options.clone() }).describe();
            flags.describe().into_iter().filter(|f| !without.contains(f)).collect()
        }
        false => Vec::new(),
    };
    flags.merge(&req.user_flags);
    let capabilities = (spec.capabilities)(&options, &flags);

    let (endpoint, driver) = match (&req.webdriver_url, driver_path, &scratch) {
        (Some(url), _, _) => {
            reporter.event(RunEvent::Step(&format!("asking {url} for a {} session", spec.display)));
            run.driver = Some(DriverInfo { name: "remote WebDriver".into(), version: "unknown".into(), path: Some(url.clone()) });
            (url.clone(), None)
        }
        (None, Some(path), Some(scratch)) => {
            reporter.event(RunEvent::Step(&format!("starting {} and {}", path.display(), spec.display)));
            let (launch_path, launch_scratch) = (path.clone(), scratch.path().to_path_buf());
            let driver = tokio::task::spawn_blocking(move || Driver::launch(&launch_path, &launch_scratch)).await??;
            run.driver = Some(DriverInfo {
                name: spec.driver_names[0].to_string(),
                version: driver.version.clone(),
                path: Some(path.display().to_string()),
            });
            (driver.url.clone(), Some(driver))
        }
        (None, _, _) => unreachable!("a local run always has a driver path and a scratch folder"),
    };
    let client = fantoccini::ClientBuilder::new(hyper_util::client::legacy::connect::HttpConnector::new())
        .capabilities(capabilities)
        .connect(&endpoint)
        .await;
    let client = match client {
        Ok(c) => c,
        Err(e) => {
            let log = driver.as_ref().map(|d| d.log_tail(20)).unwrap_or_default();
            if let Some(d) = driver {
                tokio::task::spawn_blocking(move || d.stop()).await?;
            }
            let browser = binary.map(|b| format!(" ({})", b.display())).unwrap_or_default();
            bail!("{endpoint} could not start {}{browser}: {e}\n{log}", spec.display);
        }
    };
    let caps = client.capabilities().cloned().unwrap_or_default();
    let cap_str = |k: &str| caps.get(k).and_then(|v| v.as_str()).unwrap_or("unknown").to_string();
    run.browser_info = Some(BrowserInfo {
        name: cap_str("browserName"),
        version: cap_str("browserVersion"),
        path: binary.map(|b| b.display().to_string()),
        flags: flags.describe(),
        user_flags: req.user_flags.describe(),
        gpu_flags: gpu_share,
        environment: if remote { Vec::new() } else { gpu_stack::applied_environment() },
        profile_seed: seed.as_ref().filter(|_| seeded).map(|(seed, _)| format!("{} from {}", spec.profile_seed.join(" and "), seed.dir().display())),
    });
    let driver_name = spec.driver_names[0].to_string();
    Ok(Session { server, url: server.page_url(), client, driver, driver_name, scratch, seed })
}

/// The seed of the fresh profiles of `req`'s browser, where it is started here and has one.
fn profile_seed(req: &BrowserRunRequest) -> Option<ProfileSeed> {
    let spec = req.browser.spec();
    let binary = spec.find_browser(req.browser_path.as_deref()).ok().filter(|_| req.webdriver_url.is_none())?;
    ProfileSeed::of(spec.key, &binary, spec.profile_seed)
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
    let mut case_timeout = limits.timeout;
    // The page needs time to load, find an adapter and compile the WASM before its first case.
    let idle_limit = case_timeout.max(Duration::from_secs(60));
    let mut liveness = tokio::time::interval(LIVENESS_EVERY);
    liveness.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut current: Option<(String, Instant)> = None;
    // When the current case started, on the probe's clock.
    let mut started_ms = 0.0;
    let mut page_clock = PageClock::default();
    let mut idle_since = Instant::now();
    let mut reloads = 0usize;
    let mut sampled_at = None;

    loop {
        // Memory after each settled case (and before the first), for soaks.
        let settled = book.settled.len();
        if sampled_at != Some(settled) {
            sampled_at = Some(settled);
            run.memory.extend(memory::sample(settled, restart.process_group()));
        }
        let deadline = match &current {
            Some((_, started)) => *started + case_timeout,
            None => idle_since + idle_limit,
        };
        let mut reload = false;
        tokio::select! {
            event = events.recv() => {
                let Some(event) = event else { bail!("the server stopped unexpectedly") };
                match event {
                    PageEvent::Adapter(adapter) => {
                        let missing = (!adapter.available).then(|| adapter.reason.clone().unwrap_or_default());
                        // An unavailable WebNN is said below in its own words: it is no missing WebGPU adapter.
                        if missing.is_none() || plan.platform != Platform::Webnn {
                            reporter.event(RunEvent::Adapter(&adapter));
                        }
                        run.adapter = Some(adapter);
                        if let Some(reason) = missing.as_ref().filter(|_| plan.platform == Platform::Webnn) {
                            let why = format!("{}. {}", reason.trim_end_matches('.'), crate::measure::webnn::how_to_enable(&run.browser));
                            reporter.event(RunEvent::Step(&format!("webnn is unavailable in {}: {why}", run.browser)));
                            for spec in book.remaining() {
                                book.settle_unmeasured(&spec, CaseStatus::Unsupported, format!("webnn is unavailable here: {reason}"), reporter);
                            }
                            run.status = RunStatus::Unavailable;
                            run.unavailable = Some(why);
                            return Ok(());
                        }
                        if let Some(reason) = missing.filter(|_| matches!(plan.platform, Platform::Webgpu | Platform::Tfjs)) {
                            bail!("no WebGPU adapter: {reason}. Browser flags used: {}", flags.join(" "));
                        }
                        if let Some(sign) = run.adapter.as_ref().and_then(kernels::software::software_sign).filter(|_| plan.platform != Platform::Webnn) {
                            case_timeout = limits.cpu_timeout.unwrap_or(case_timeout);
                            if let Some(policy) = cpu_policy(plan, &limits) {
                                reporter.event(RunEvent::Step(&format!("{} {} runs on a software adapter ({sign}): {}", run.browser, run.platform, policy.describe())));
                            }
                        }
                        idle_since = Instant::now();
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
                            let (mut case, mut harness_phases) = analyze(spec, *m, references.clone(), label).await?;
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
                        idle_since = Instant::now();
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
                        idle_since = Instant::now();
                        reload = e.fatal;
                    }
                    PageEvent::Done => return Ok(()),
                }
            }
            _ = tokio::time::sleep_until(deadline.into()) => {
                match current.take() {
                    Some((id, _)) => {
                        if let Some(spec) = book.open_spec(&id) {
                            let message = format!("no result within the {} s case timeout (--timeout)", case_timeout.as_secs_f64());
                            book.attempt_failed(&spec, CaseStatus::TimedOut, message, limits.retries, reporter);
                        }
                        reload = true;
                    }
                    None => bail!(
                        "the page sent nothing for {} s: it did not load, or the browser hung",
                        idle_limit.as_secs()
                    ),
                }
            }
            _ = liveness.tick() => {
                if let Err(why) = restart.check_alive().await {
                    if let Some(spec) = current.take().and_then(|(id, _)| book.open_spec(&id)) {
                        book.attempt_failed(&spec, CaseStatus::Crashed, why.clone(), limits.retries, reporter);
                    }
                    return Err(Crashed(why).into());
                }
            }
            _ = interrupted.changed() => bail!("interrupted (Ctrl-C, SIGTERM or SIGHUP)"),
        }
        if reload {
            let remaining = book.remaining();
            if remaining.is_empty() {
                return Ok(());
            }
            reloads += 1;
            if reloads > plan.cases.len() * (limits.retries as usize + 1) + 1 {
                bail!("the platform kept failing; gave up after {reloads} restarts");
            }
            tracing::info!("restarting for the {} cases still to run", remaining.len());
            restart.restart(RunPlan { cases: remaining, ..plan.clone() }).await?;
            idle_since = Instant::now();
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

/// The GPU-related lines of a diagnostics page; empty when the browser will not show it.
async fn read_diagnostics(client: &fantoccini::Client, url: &str) -> Vec<String> {
    const WORDS: [&str; 12] = [
        "gpu", "vulkan", "webgpu", "renderer", "adapter", "driver", "swiftshader", "llvmpipe", "lavapipe", "angle", "vendor", "device",
    ];
    // chrome://gpu renders into nested shadow roots, which innerText skips: walk them. Both
    // pages fill in their data after load.
    let script = r#"let out = '';
        const walk = (n) => {
          if (n.shadowRoot) walk(n.shadowRoot);
          for (const c of n.childNodes) {
            if (c.nodeType === 3) out += c.textContent;
            else if (c.nodeType === 1 || c.nodeType === 11) {
              if (c.tagName === 'TD' || c.tagName === 'TH') out += ' ';
              walk(c);
              if (/^(DIV|TR|P|LI|H[1-6]|TABLE|BR|UL)$/.test(c.tagName)) out += '\n';
            }
          }
        };
        walk(document.documentElement);
        return out;"#;
    // Not a warning: the evidence says the page could not be read (Firefox 153 refuses about:
    // pages to WebDriver), and -v shows why.
    if let Err(e) = navigate(client, url).await {
        tracing::info!("could not open {url}: {e:#}");
        return Vec::new();
    }
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let text = match client.execute(script, Vec::new()).await {
        Ok(v) => {
            tracing::debug!("{url}: {} characters of text", v.as_str().map(str::len).unwrap_or(0));
            v.as_str().unwrap_or_default().to_string()
        }
        Err(e) => {
            tracing::info!("could not read {url}: {e}");
            return Vec::new();
        }
    };
    text.lines()
        .map(str::trim)
        // Style rules come along with chrome://gpu's shadow roots.
        .filter(|l| !l.is_empty() && !l.contains('{') && !l.contains('}'))
        .filter(|l| WORDS.iter().any(|w| l.to_lowercase().contains(w)))
        .map(|l| l.chars().take(200).collect())
        .take(40)
        .collect()
}

async fn navigate(client: &fantoccini::Client, url: &str) -> Result<()> {
    tokio::time::timeout(Duration::from_secs(60), client.goto(url))
        .await
        .map_err(|_| anyhow!("the browser did not load the page within 60 s"))?
        .with_context(|| format!("the browser could not load {url}"))
}

/// Checks a measurement against the case's reference, off the async threads (references can be
/// heavy). `run` names where it ran, for a user kernel compared with the first platform. The
/// report carries the platform's phases of the case ([`CaseReport::case_time`]); harness's own
/// (`reference`, computed or waited for, and `check`) come beside it.
async fn analyze(spec: CaseSpec, m: CaseMeasurement, references: Arc<References>, run: String) -> Result<(CaseReport, Vec<Phase>)> {
    Ok(tokio::task::spawn_blocking(move || {
        let mut phases = Vec::new();
        let mut lap = Lap::new();
        let case = analyze_blocking(&spec, m, &references, &run, &mut |name| phases.push(lap.phase(name)));
        (case, phases)
    })
    .await?)
}

/// Successive wall-time laps, each a [`Phase`] from the end of the one before.
struct Lap(Instant);

impl Lap {
    fn new() -> Self {
        Lap(Instant::now())
    }

    fn phase(&mut self, name: &str) -> Phase {
        let now = Instant::now();
        let ms = (now - std::mem::replace(&mut self.0, now)).as_secs_f64() * 1e3;
        Phase { name: name.to_string(), ms }
    }
}

/// [`analyze`]'s work: `mark` is told as the reference and the check end.
fn analyze_blocking(spec: &CaseSpec, m: CaseMeasurement, references: &References, run: &str, mark: &mut dyn FnMut(&str)) -> CaseReport {
        let info = spec.info().expect("plans only hold known cases");
        let unmeasured = |message: String| CaseReport::unmeasured(spec, &info, CaseStatus::Error, Some(message));
        let Some(bytes) = m.output_bytes() else {
            return unmeasured("the platform sent an output that is not base64 of 4-byte values".into());
        };
        let reference = match references.get(&spec, &m, run) {
            Ok(r) => r,
            Err(e) => return unmeasured(format!("no reference to check against: {e}")),
        };
        let rule = spec.check_rule().expect("plans only hold known cases");
        let got = spec.decode_output(&bytes);
        let twin = references.vs_f32(&spec, &got, &m, run);
        mark("reference");
        let mut verdict = check(&got, &reference.values, rule);
        verdict.reference = reference.source.clone();
        verdict.vs_f32 = twin;
        mark("check");
        let Some(by) = &reference.measured_by else {
            return CaseReport::measured(&spec, &info, m, verdict);
        };
        // Another platform's output: agreement at best, never a pass.
        let source = reference.source.clone().unwrap_or_default();
        let agreed = verdict.passed;
        let mut case = CaseReport::measured(&spec, &info, m, verdict);
        let no_expected = match &spec.workload {
            Some(kernels::Workload::Bench(_)) => {
                "the bench gives no `.reference(...)`, so nothing independent checks it (add `.reference(|| expected, tolerance)` with plain Rust that computes the output, as harness-bench's docs show)"
            }
            _ => "its manifest names no `expected` output file, so nothing independent checks it",
        };
        case.message = Some(if *by == run {
            format!("unchecked: {no_expected}, and the output compared with on other platforms is this one's")
        } else if agreed {
            format!("unchecked: agrees with {source} within tolerance, which is agreement, not correctness: {no_expected}")
        } else {
            format!("disagrees with {source}: {}", case.message.take().unwrap_or_default())
        });
        if *by == run || agreed {
            case.status = CaseStatus::Unchecked;
        }
        case
}

/// The plan's cases and what became of each, with the attempts that did not settle a case.
pub struct CaseBook {
    specs: Vec<CaseSpec>,
    settled: HashMap<String, CaseReport>,
    earlier: HashMap<String, Vec<Attempt>>,
    /// The case the last crash hit, for the run's error list.
    last_crashed: Option<String>,
    /// Where the cases run: another engine's dispatches are its own, so its cases carry no count.
    platform: Platform,
}

impl CaseBook {
    /// A book of `specs` run on `platform`, none settled.
    pub fn new(specs: &[CaseSpec], platform: Platform) -> Self {
        CaseBook { specs: specs.to_vec(), settled: HashMap::new(), earlier: HashMap::new(), last_crashed: None, platform }
    }

    /// An attempt at `spec` crashed or timed out: it is settled so, unless it has had fewer
    /// than `retries` earlier attempts, in which case it stays open to run again.
    fn attempt_failed(&mut self, spec: &CaseSpec, status: CaseStatus, message: String, retries: u32, reporter: &mut dyn Reporter) {
        if status == CaseStatus::Crashed {
            self.last_crashed = Some(spec.id.clone());
        }
        let earlier = self.earlier.get(&spec.id).map_or(0, Vec::len);
        if earlier < retries as usize {
            let what = if status == CaseStatus::Crashed { "crashed" } else { "timed out" };
            reporter.event(RunEvent::Step(&format!("{} {what}; it runs again (attempt {} of {})", spec.id, earlier + 2, retries + 1)));
            self.earlier.entry(spec.id.clone()).or_default().push(Attempt { status, message });
        } else {
            self.settle_unmeasured(spec, status, message, reporter);
        }
    }

    /// Cases settled with any status but `crashed`: the sign that a session got somewhere.
    fn settled_without_a_crash(&self) -> usize {
        self.settled.values().filter(|c| c.status != CaseStatus::Crashed).count()
    }

    /// The spec of a case of this plan not settled yet.
    fn open_spec(&self, id: &str) -> Option<CaseSpec> {
        if self.settled.contains_key(id) {
            return None;
        }
        self.specs.iter().find(|s| s.id == id).cloned()
    }

    fn unmeasured(&self, spec: &CaseSpec, status: CaseStatus, message: String) -> CaseReport {
        let info = spec.info().expect("plans only hold known cases");
        CaseReport::unmeasured(spec, &info, status, Some(message))
    }

    /// Settles `spec` with no measurement, as `status` for the reason `message`.
    fn settle_unmeasured(&mut self, spec: &CaseSpec, status: CaseStatus, message: String, reporter: &mut dyn Reporter) {
        let case = self.unmeasured(spec, status, message);
        self.settle(case, reporter);
    }

    /// Records `case` as settled, with its earlier attempts, and tells the reporter.
    fn settle(&mut self, mut case: CaseReport, reporter: &mut dyn Reporter) {
        case.earlier_attempts = self.earlier.remove(&case.id).unwrap_or_default();
        // The dispatch count a case's info carries is harness's program's.
        if self.platform.other_engine() {
            if let Some(t) = &mut case.throughput {
                t.dispatches_per_run = None;
            }
        }
        reporter.event(RunEvent::CaseFinished(&case));
        self.settled.insert(case.id.clone(), case);
    }

    fn remaining(&self) -> Vec<CaseSpec> {
        self.specs.iter().filter(|s| !self.settled.contains_key(&s.id)).cloned().collect()
    }

    /// Every case in plan order. One the run ended before is `notRun`, or, if an attempt at it
    /// crashed or timed out, what its last attempt was.
    fn finish(mut self) -> Vec<CaseReport> {
        let specs = std::mem::take(&mut self.specs);
        specs
            .iter()
            .map(|s| {
                self.settled.remove(&s.id).unwrap_or_else(|| {
                    let mut earlier = self.earlier.remove(&s.id).unwrap_or_default();
                    let mut case = match earlier.pop() {
                        Some(last) => self.unmeasured(s, last.status, last.message),
                        None => self.unmeasured(s, CaseStatus::NotRun, "the run ended before this case".into()),
                    };
                    case.earlier_attempts = earlier;
                    case
                })
            })
            .collect()
    }
}

fn elapsed_ms(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}

