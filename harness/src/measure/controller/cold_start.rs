//! `--cold-start`: each sample of a case is a fresh page in a new browser session, whose one case
//! is taken as that page's report; once the pages end (the last, or the first that failed), their
//! reports are merged into the case's.

use super::crash::Crashed;
use super::lifecycle::CaseBook;
use crate::measure::events::{Reporter, RunEvent};
use anyhow::Result;
use kernels::wire::PageError;
use kernels::CaseSpec;
use reports::{CaseReport, CaseStatus, PlatformRun};

/// A reporter for one fresh page of a cold-start case: the case finishes once, after its last
/// page, so a page's end is not passed on.
pub(super) struct OnePage<'a>(
    /// Where every other event goes.
    pub(super) &'a mut dyn Reporter,
);

impl Reporter for OnePage<'_> {
    fn event(&mut self, event: RunEvent<'_>) {
        if !matches!(event, RunEvent::CaseFinished(_)) {
            self.0.event(event);
        }
    }
}

/// The fresh pages of one cold-start case so far, each page's report of the case.
pub(super) struct ColdPages {
    samples: u32,
    pages: Vec<CaseReport>,
}

impl ColdPages {
    /// No page yet of `spec`, which takes one page a sample.
    pub(super) fn new(spec: &CaseSpec) -> Self {
        ColdPages { samples: spec.cold.map_or(1, |c| c.samples), pages: Vec::new() }
    }

    /// How many fresh pages the case takes.
    pub(super) fn samples(&self) -> u32 {
        self.samples
    }

    /// Takes page `page`'s report of `spec` from `one`, the book of its one case, after the page's
    /// run ended with `result` (a failure is recorded in `run`'s errors and, where the case did
    /// not run, is its end). Whether another page is to follow: none after a page that failed or
    /// left no report.
    pub(super) fn page_ended(&mut self, spec: &CaseSpec, page: u32, one: CaseBook, result: &Result<()>, run: &mut PlatformRun) -> bool {
        let samples = self.samples;
        let Some(mut case) = one.finish().pop() else { return false };
        if let Err(e) = result {
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
        self.pages.push(case);
        good
    }

    /// The case's report: its pages merged, `None` where no page left one.
    pub(super) fn merged(self) -> Option<CaseReport> {
        CaseReport::merge_cold(self.pages)
    }
}
