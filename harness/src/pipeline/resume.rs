//! Resuming: a run of a journaled plan either comes back as the journal finished it, or runs on
//! the cases the journal lacks, with those it holds put back in the plan's order.

use crate::output::journal;

/// The run labelled `label` of `plan`: as the journal of a resumed run finished it, or run by `go`
/// on the cases the journal lacks, with those it holds put back.
pub async fn resume_or_run<F: std::future::Future<Output = reports::PlatformRun>>(
    journaled: Option<&journal::Journaled>,
    label: &str,
    plan: &kernels::RunPlan,
    go: impl FnOnce(kernels::RunPlan) -> F,
) -> reports::PlatformRun {
    if let Some(done) = journaled.and_then(|j| j.finished_run(label)) {
        return done.clone();
    }
    let settled = journaled.map(|j| j.settled(label).to_vec()).unwrap_or_default();
    let run = go(without(plan, &settled)).await;
    with_settled(run, settled, &plan.cases)
}

/// `plan` less the cases a journal holds as settled.
fn without(plan: &kernels::RunPlan, settled: &[reports::CaseReport]) -> kernels::RunPlan {
    let cases = plan.cases.iter().filter(|c| !settled.iter().any(|s| s.id == c.id)).cloned().collect();
    kernels::RunPlan { cases, ..plan.clone() }
}

/// `run` with the cases a journal held as settled before it put back, all in the order of `plan`
/// (the whole plan of the run).
fn with_settled(mut run: reports::PlatformRun, settled: Vec<reports::CaseReport>, plan: &[kernels::CaseSpec]) -> reports::PlatformRun {
    if settled.is_empty() {
        return run;
    }
    let ran = std::mem::take(&mut run.cases);
    let mut cases: Vec<reports::CaseReport> = settled.into_iter().chain(ran).collect();
    cases.sort_by_key(|c| plan.iter().position(|p| p.id == c.id).map_or(0, |i| i + 1));
    run.cases = cases;
    run
}
