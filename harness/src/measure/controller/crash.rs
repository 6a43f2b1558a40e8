//! What happens to a case that hangs or whose platform dies: the per-case timeout (and the page's
//! idle limit) that reloads the page with the cases still to run, a browser or driver that died
//! (the case is `crashed`), a crashed or timed-out case run again (`--retries`), and a fresh
//! session after a crash, tried again after a wait, until the browser is given up.

use super::lifecycle::CaseBook;
use super::session::{start_session, Session};
use super::BrowserRunRequest;
use crate::measure::events::{Reporter, RunEvent};
use crate::measure::server::Server;
use anyhow::{bail, Result};
use kernels::wire::PageError;
use kernels::CaseSpec;
use reports::{Attempt, CaseStatus, PlatformRun};
use std::time::{Duration, Instant};
use tokio::sync::watch;

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
pub(super) const LIVENESS_EVERY: Duration = Duration::from_secs(1);
/// Waits before each new try at a session after a crash (a Grid node restarting, say).
const RELAUNCH_BACKOFF: [Duration; 3] = [Duration::from_secs(1), Duration::from_secs(2), Duration::from_secs(4)];

/// The watch over a run's cases for hangs: the case timeout from when the case in flight started,
/// the page's idle limit from when it last spoke, and the restarts that a hang or a failed page
/// costs, up to a bound.
pub(super) struct Watchdog {
    case_timeout: Duration,
    idle_limit: Duration,
    idle_since: Instant,
    reloads: usize,
}

impl Watchdog {
    /// A watch over cases that may take `limits.timeout` each.
    pub(super) fn new(limits: &CaseLimits) -> Self {
        let case_timeout = limits.timeout;
        // The page needs time to load, find an adapter and compile the WASM before its first case.
        let idle_limit = case_timeout.max(Duration::from_secs(60));
        Watchdog { case_timeout, idle_limit, idle_since: Instant::now(), reloads: 0 }
    }

    /// When the case that started at `started` times out, or, with no case in flight, when the
    /// page has been silent too long.
    pub(super) fn deadline(&self, started: Option<Instant>) -> Instant {
        match started {
            Some(started) => started + self.case_timeout,
            None => self.idle_since + self.idle_limit,
        }
    }

    /// The page spoke, or was loaded again: its idle limit starts now.
    pub(super) fn page_spoke(&mut self) {
        self.idle_since = Instant::now();
    }

    /// The cases run on a software adapter: each takes `limits.cpu_timeout` where there is one.
    pub(super) fn on_cpu(&mut self, limits: &CaseLimits) {
        self.case_timeout = limits.cpu_timeout.unwrap_or(self.case_timeout);
    }

    /// The deadline passed with `current` in flight: that attempt timed out (settled so, or left
    /// to run again), and the page is to be reloaded; with no case in flight, the page or the
    /// browser hung and the run ends.
    pub(super) fn expired(&self, current: Option<(String, Instant)>, book: &mut CaseBook, retries: u32, reporter: &mut dyn Reporter) -> Result<()> {
        match current {
            Some((id, _)) => {
                if let Some(spec) = book.open_spec(&id) {
                    let message = format!("no result within the {} s case timeout (--timeout)", self.case_timeout.as_secs_f64());
                    book.attempt_failed(&spec, CaseStatus::TimedOut, message, retries, reporter);
                }
                Ok(())
            }
            None => bail!(
                "the page sent nothing for {} s: it did not load, or the browser hung",
                self.idle_limit.as_secs()
            ),
        }
    }

    /// Counts a restart of a plan of `cases` cases, ending the run once it has restarted more
    /// often than every case's every attempt could need.
    pub(super) fn restarting(&mut self, cases: usize, retries: u32) -> Result<()> {
        self.reloads += 1;
        if self.reloads > cases * (retries as usize + 1) + 1 {
            bail!("the platform kept failing; gave up after {} restarts", self.reloads);
        }
        Ok(())
    }
}

/// The platform is gone, having left `why`: the case it was running (`current`) crashed, settled
/// so or left to run again; the error that ends the run.
pub(super) fn platform_gone(current: Option<(String, Instant)>, why: String, book: &mut CaseBook, retries: u32, reporter: &mut dyn Reporter) -> anyhow::Error {
    if let Some(spec) = current.and_then(|(id, _)| book.open_spec(&id)) {
        book.attempt_failed(&spec, CaseStatus::Crashed, why.clone(), retries, reporter);
    }
    Crashed(why).into()
}

impl CaseBook {
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
}

/// A browser's crashes across its sessions: how many in a row, with no case settled in between,
/// and how many cases had settled when the current session started.
#[derive(Default)]
pub(super) struct Crashes {
    in_a_row: u32,
    settled_before: usize,
}

impl Crashes {
    /// Starts a session of `req`'s browser: the first at once, one after a crash through
    /// [`relaunch`].
    pub(super) async fn start<'a>(
        &mut self,
        req: &BrowserRunRequest,
        server: &'a Server,
        run: &mut PlatformRun,
        book: &CaseBook,
        reporter: &mut dyn Reporter,
        interrupted: &mut watch::Receiver<bool>,
    ) -> Result<Session<'a>> {
        self.settled_before = book.settled_without_a_crash();
        match self.in_a_row {
            0 => start_session(req, server, run, reporter).await,
            _ => relaunch(req, server, run, reporter, interrupted).await,
        }
    }

    /// The session of the browser `display` crashed, leaving `why`: records it in `run`'s errors
    /// and gives the browser up after [`CRASHES_IN_A_ROW`]. `Ok(true)` when a fresh session is to
    /// run the cases still open, `Ok(false)` when none is.
    pub(super) fn crashed(&mut self, why: String, display: &str, book: &mut CaseBook, run: &mut PlatformRun, reporter: &mut dyn Reporter) -> Result<bool> {
        self.in_a_row = if book.settled_without_a_crash() > self.settled_before { 1 } else { self.in_a_row + 1 };
        let case_id = book.last_crashed.take();
        run.errors.push(PageError { message: format!("{display} crashed: {why}"), case_id, fatal: true, crashed: true, ..PageError::case("", String::new()) });
        if self.in_a_row >= CRASHES_IN_A_ROW {
            bail!("{display} crashed {} times in a row with no case finished in between; gave up on it. The last time: {why}", self.in_a_row);
        }
        let left = book.remaining().len();
        if left == 0 {
            return Ok(false);
        }
        reporter.event(RunEvent::Step(&format!("{display} crashed; starting a fresh session for the {left} cases still to run")));
        Ok(true)
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
