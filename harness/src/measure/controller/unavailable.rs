//! Platforms that cannot run what was asked: the cases a platform does not support are settled
//! `unsupported` before its page loads; a WebNN the browser lacks settles every case left
//! `unsupported` and marks the run `unavailable`; a page with no WebGPU adapter fails the run.

use super::lifecycle::CaseBook;
use crate::measure::events::{Reporter, RunEvent};
use anyhow::{bail, Result};
use kernels::wire::AdapterReport;
use kernels::{CaseSpec, Platform, RunPlan};
use reports::{CaseStatus, PlatformRun, RunStatus};

/// Settles each case of `specs` that `platform` cannot run, with the reason; the page gets the
/// rest.
pub(super) fn settle_unsupported(specs: &[CaseSpec], platform: Platform, book: &mut CaseBook, reporter: &mut dyn Reporter) {
    for spec in specs {
        if let Some(reason) = platform.unsupported(spec) {
            book.settle_unmeasured(spec, CaseStatus::Unsupported, reason, reporter);
        }
    }
}

/// Takes the adapter the page of `plan` got (or why it got none) into `run`. A WebNN that is
/// unavailable settles every case left and marks the run so: `Ok(true)`, the run's end. No
/// WebGPU adapter where one is needed fails the run (`flags` are the browser's, said with it).
pub(super) fn take_adapter(plan: &RunPlan, adapter: AdapterReport, run: &mut PlatformRun, book: &mut CaseBook, reporter: &mut dyn Reporter, flags: &[String]) -> Result<bool> {
    let missing = (!adapter.available).then(|| adapter.reason.clone().unwrap_or_default());
    // An unavailable WebNN is said below in its own words: it is no missing WebGPU adapter.
    if missing.is_none() || !plan.platform.on_webnn() {
        reporter.event(RunEvent::Adapter(&adapter));
    }
    run.adapter = Some(adapter);
    if let Some(reason) = missing.as_ref().filter(|_| plan.platform.on_webnn()) {
        let why = format!("{}. {}", reason.trim_end_matches('.'), crate::measure::webnn::how_to_enable(&run.browser));
        reporter.event(RunEvent::Step(&format!("{} is unavailable in {}: {why}", plan.platform.as_str(), run.browser)));
        for spec in book.remaining() {
            book.settle_unmeasured(&spec, CaseStatus::Unsupported, format!("{} is unavailable here: {reason}", plan.platform.as_str()), reporter);
        }
        run.status = RunStatus::Unavailable;
        run.unavailable = Some(why);
        return Ok(true);
    }
    if let Some(reason) = missing.filter(|_| matches!(plan.platform, Platform::Webgpu | Platform::Tfjs)) {
        bail!("no WebGPU adapter: {reason}. Browser flags used: {}", flags.join(" "));
    }
    Ok(false)
}
