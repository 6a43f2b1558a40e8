//! Runs a plan in one browser: starts the driver (or uses a remote WebDriver) and the browser,
//! navigates to the page served by the shared server, settles every case as its events arrive (checking each result against the reference),
//! enforces the per-case timeout by reloading the page with the cases still to run, and always
//! ends the browser and driver. Whatever happens, it returns a [`PlatformRun`] holding every case
//! settled so far.

use crate::measure::browser::{BrowserFlags, BrowserKind, LaunchOptions};
use crate::measure::driver::Driver;
use crate::measure::events::{Reporter, RunEvent};
use crate::measure::server::{PageEvent, Server};
use anyhow::{anyhow, bail, Context, Result};
use kernels::wire::{CaseMeasurement, Progress};
use crate::measure::probe::{ClockProbe, PageClock, RunProbe};
use crate::plan::reference::References;
use kernels::check::check;
use kernels::{CaseSpec, Platform, RunPlan};
use reports::{BrowserInfo, CaseReport, CaseStatus, DriverInfo, Phases, PlatformRun, RunStatus};
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
    /// The cases and their timing settings.
    pub plan: RunPlan,
    /// Longest a case may take.
    pub case_timeout: Duration,
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

    let mut book = CaseBook::new(&req.plan.cases);
    // What the platform cannot run is settled now, with the reason; the page gets the rest.
    for spec in &req.plan.cases {
        if let Some(reason) = req.platform.unsupported(spec) {
            let case = book.unmeasured(spec, CaseStatus::Unsupported, reason);
            book.settle(case, reporter);
        }
    }
    let remaining = book.remaining();
    if remaining.is_empty() {
        return finish_run(run, book, Ok(()), reporter);
    }
    let req = &BrowserRunRequest { plan: RunPlan { cases: remaining, ..req.plan.clone() }, ..req.clone() };
    let mut events = server.begin_run(RunPlan { platform: req.platform, ..req.plan.clone() });
    tracing::info!("serving the page at {}", server.page_url());
    let outcome = drive(req, server, &mut events, &mut run, &mut book, reporter, interrupted).await;
    finish_run(run, book, outcome, reporter)
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

/// Starts the cases still to run again, after a case hung or the page failed.
pub trait Restart {
    /// Goes on with `plan`, the remaining cases.
    #[allow(async_fn_in_trait)]
    async fn restart(&mut self, plan: RunPlan) -> Result<()>;
}

/// Restarts a browser run by reloading the page with the remaining cases.
struct PageRestart<'a> {
    server: &'a Server,
    client: &'a fantoccini::Client,
    url: String,
}

impl Restart for PageRestart<'_> {
    async fn restart(&mut self, plan: RunPlan) -> Result<()> {
        self.server.set_plan(plan);
        navigate(self.client, &self.url).await
    }
}

async fn drive(
    req: &BrowserRunRequest,
    server: &Server,
    events: &mut mpsc::UnboundedReceiver<PageEvent>,
    run: &mut PlatformRun,
    book: &mut CaseBook,
    reporter: &mut dyn Reporter,
    interrupted: &mut watch::Receiver<bool>,
) -> Result<()> {
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
    // Declared before the driver so it is removed only after the browser has ended.
    let profile = match remote {
        true => None,
        false => Some(tempfile::Builder::new().prefix("harness-profile-").tempdir()?),
    };
    let options = LaunchOptions {
        binary: binary.clone(),
        headless: req.headless,
        profile_dir: profile.as_ref().map(|p| p.path().to_path_buf()),
    };
    let mut flags = (spec.flags)(&options);
    flags.merge(&req.user_flags);
    let capabilities = (spec.capabilities)(&options, &flags);

    let t = Instant::now();
    let (endpoint, driver) = match (&req.webdriver_url, driver_path) {
        (Some(url), _) => {
            reporter.event(RunEvent::Step(&format!("asking {url} for a {} session", spec.display)));
            run.driver = Some(DriverInfo { name: "remote WebDriver".into(), version: "unknown".into(), path: Some(url.clone()) });
            (url.clone(), None)
        }
        (None, Some(path)) => {
            reporter.event(RunEvent::Step(&format!("starting {} and {}", path.display(), spec.display)));
            let launch_path = path.clone();
            let driver = tokio::task::spawn_blocking(move || Driver::launch(&launch_path)).await??;
            run.driver = Some(DriverInfo {
                name: spec.driver_names[0].to_string(),
                version: driver.version.clone(),
                path: Some(path.display().to_string()),
            });
            (driver.url.clone(), Some(driver))
        }
        (None, None) => unreachable!("a local run always has a driver path"),
    };
    let client = fantoccini::ClientBuilder::new(hyper_util::client::legacy::connect::HttpConnector::new())
        .capabilities(capabilities)
        .connect(&endpoint)
        .await;
    let client = match client {
        Ok(c) => c,
        Err(e) => {
            let log = driver.as_ref().map(Driver::log_tail).unwrap_or_default();
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
    });
    run.phases.browser_start_ms = elapsed_ms(t);

    let t = Instant::now();
    let url = server.page_url();
    reporter.event(RunEvent::Planned { browser: &run.browser, cases: req.plan.cases.len(), sampling: &req.plan.sampling });
    let mut restart = PageRestart { server, client: &client, url: url.clone() };
    let result = match navigate(&client, &url).await {
        Ok(()) => {
            let plan = RunPlan { platform: req.platform, ..req.plan.clone() };
            let flags = flags.describe();
            let probe = req.probe.probe().filter(|_| req.webdriver_url.is_none());
            run_cases(&plan, req.case_timeout, events, &mut restart, run, book, reporter, interrupted, &flags, &req.references, probe).await
        }
        Err(e) => Err(e),
    };
    run.phases.cases_ms = elapsed_ms(t);
    if req.read_diagnostics {
        run.diagnostics = read_diagnostics(&client, spec.diagnostics_url).await;
    }

    let _ = tokio::time::timeout(Duration::from_secs(10), client.close()).await;
    if let Some(d) = driver {
        tokio::task::spawn_blocking(move || d.stop()).await?;
    }
    drop(profile);
    result
}

/// Settles every case of `plan` from the platform's `events` (a page's, or the native worker's),
/// enforcing `case_timeout` through `restart`.
#[allow(clippy::too_many_arguments)]
pub async fn run_cases(
    plan: &RunPlan,
    case_timeout: Duration,
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
    // The page needs time to load, find an adapter and compile the WASM before its first case.
    let idle_limit = case_timeout.max(Duration::from_secs(60));
    let mut current: Option<(String, Instant)> = None;
    // When the current case started, on the probe's clock.
    let mut started_ms = 0.0;
    let mut page_clock = PageClock::default();
    let mut idle_since = Instant::now();
    let mut reloads = 0usize;

    loop {
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
                        reporter.event(RunEvent::Adapter(&adapter));
                        let missing = (!adapter.available).then(|| adapter.reason.clone().unwrap_or_default());
                        run.adapter = Some(adapter);
                        if let Some(reason) = missing.filter(|_| matches!(plan.platform, Platform::Webgpu | Platform::Tfjs)) {
                            bail!("no WebGPU adapter: {reason}. Browser flags used: {}", flags.join(" "));
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
                    PageEvent::Result(m) => {
                        if let Some(spec) = book.open_spec(&m.case_id) {
                            let label = format!("{} {}", run.browser, run.platform);
                            // The clocks while the timed samples ran; the whole case where the
                            // platform did not say when that was.
                            let clock = probe.and_then(|p| {
                                let arrived = p.now_ms();
                                let (from, to) = page_clock.timed_span(&m, arrived).unwrap_or((started_ms, arrived));
                                p.window(from, to)
                            });
                            let mut case = analyze(spec, *m, references.clone(), label).await?;
                            case.clock = clock;
                            book.settle(case, reporter);
                        }
                        current = None;
                        idle_since = Instant::now();
                    }
                    PageEvent::Error(e) => {
                        // A case this adapter cannot run (a missing feature) is no error of the run.
                        let status = if e.unsupported { CaseStatus::Unsupported } else { CaseStatus::Error };
                        if !e.unsupported {
                            reporter.event(RunEvent::PageError(&e));
                            run.errors.push(e.clone());
                        }
                        let case_id = e.case_id.clone().or_else(|| current.as_ref().map(|(id, _)| id.clone()));
                        if let Some(spec) = case_id.as_deref().and_then(|id| book.open_spec(id)) {
                            // The stack stays with the error in `run.errors`.
                            let case = book.unmeasured(&spec, status, e.message.clone());
                            book.settle(case, reporter);
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
                            let case = book.unmeasured(&spec, CaseStatus::TimedOut, message);
                            book.settle(case, reporter);
                        }
                        reload = true;
                    }
                    None => bail!(
                        "the page sent nothing for {} s: it did not load, or the browser hung",
                        idle_limit.as_secs()
                    ),
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
            if reloads > plan.cases.len() + 1 {
                bail!("the platform kept failing; gave up after {reloads} restarts");
            }
            tracing::info!("restarting for the {} cases still to run", remaining.len());
            restart.restart(RunPlan { cases: remaining, ..plan.clone() }).await?;
            idle_since = Instant::now();
        }
    }
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
    if let Err(e) = navigate(client, url).await {
        tracing::warn!("could not open {url}: {e:#}");
        return Vec::new();
    }
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let text = match client.execute(script, Vec::new()).await {
        Ok(v) => {
            tracing::debug!("{url}: {} characters of text", v.as_str().map(str::len).unwrap_or(0));
            v.as_str().unwrap_or_default().to_string()
        }
        Err(e) => {
            tracing::warn!("could not read {url}: {e}");
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
/// heavy). `run` names where it ran, for a user kernel compared with the first platform.
async fn analyze(spec: CaseSpec, m: CaseMeasurement, references: Arc<References>, run: String) -> Result<CaseReport> {
    Ok(tokio::task::spawn_blocking(move || {
        let info = spec.info().expect("plans only hold known cases");
        let unmeasured = |message: String| CaseReport::unmeasured(&spec, &info, CaseStatus::Error, Some(message));
        let Some(bytes) = m.output_bytes() else {
            return unmeasured("the platform sent an output that is not base64 of 4-byte values".into());
        };
        let reference = match references.get(&spec, &m, &run) {
            Ok(r) => r,
            Err(e) => return unmeasured(format!("no reference to check against: {e}")),
        };
        let rule = spec.check_rule().expect("plans only hold known cases");
        let mut verdict = check(&spec.decode_output(&bytes), &reference.values, rule);
        verdict.reference = reference.source.clone();
        CaseReport::measured(&spec, &info, m, verdict)
    })
    .await?)
}

/// The plan's cases and what became of each.
pub struct CaseBook {
    specs: Vec<CaseSpec>,
    settled: HashMap<String, CaseReport>,
}

impl CaseBook {
    /// A book of `specs`, none settled.
    pub fn new(specs: &[CaseSpec]) -> Self {
        CaseBook { specs: specs.to_vec(), settled: HashMap::new() }
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

    /// Records `case` as settled and tells the reporter.
    fn settle(&mut self, case: CaseReport, reporter: &mut dyn Reporter) {
        reporter.event(RunEvent::CaseFinished(&case));
        self.settled.insert(case.id.clone(), case);
    }

    fn remaining(&self) -> Vec<CaseSpec> {
        self.specs.iter().filter(|s| !self.settled.contains_key(&s.id)).cloned().collect()
    }

    /// Every case in plan order; those never reached are `notRun`.
    fn finish(mut self) -> Vec<CaseReport> {
        let specs = std::mem::take(&mut self.specs);
        specs
            .iter()
            .map(|s| {
                self.settled.remove(&s.id).unwrap_or_else(|| {
                    self.unmeasured(s, CaseStatus::NotRun, "the run ended before this case".into())
                })
            })
            .collect()
    }
}

fn elapsed_ms(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}

