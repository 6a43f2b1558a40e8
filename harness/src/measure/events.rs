//! What happens during a run, as events the controller and the native runner emit and a
//! [`Reporter`] consumes: the measuring side never draws, and the terminal never drives.

use kernels::wire::{AdapterReport, PageError};
use kernels::Sampling;
use reports::{CaseReport, PlatformRun};

/// Something that happened during a run.
#[derive(Debug)]
pub enum RunEvent<'a> {
    /// A slow step began (building the bundle, starting the browser).
    Step(&'a str),
    /// A browser's (or native) run begins: every event up to its `RunFinished` is of it.
    RunStarted {
        /// Browser key (`wgpu` natively).
        browser: &'a str,
        /// Platform name.
        platform: &'a str,
    },
    /// A browser's (or native) cases are about to run, or to run on after a crash.
    Planned {
        /// Browser key.
        browser: &'a str,
        /// Number of cases.
        cases: usize,
        /// How each case is sampled.
        sampling: &'a Sampling,
    },
    /// The page reported its adapter.
    Adapter(&'a AdapterReport),
    /// The platform's completion latency was measured.
    Latency(&'a reports::Latency),
    /// A case began.
    CaseStarted(&'a str),
    /// A timed sample finished.
    SampleDone {
        /// The case.
        case_id: &'a str,
        /// Samples done.
        done: u32,
    },
    /// A case is settled (measured, failed, timed out or errored).
    CaseFinished(&'a CaseReport),
    /// The page reported an error.
    PageError(&'a PageError),
    /// A browser's run is over.
    RunFinished(&'a PlatformRun),
}

/// A consumer of run events.
pub trait Reporter {
    /// Handles one event.
    fn event(&mut self, event: RunEvent<'_>);
}
