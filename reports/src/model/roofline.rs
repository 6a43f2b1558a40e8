//! The measured roofline: each target's peaks, from its probe cases (`stream_copy` for memory
//! bandwidth, `fma_chain` for f32 throughput), and each case's fraction of the peak that binds it.
//! Derived from the cases alone, so a report rebuilt from results.json derives it again.

use super::{CaseReport, CaseStatus, PlatformRun, RunReport};
use kernels::catalog::ROOFLINE_PROBES;

pub use super::peaks::{Bound, CaseRoofline, Peak, Peaks};

/// The roofline fraction of `case`, as tables show it ([`CaseRoofline::label`]), or `–`.
pub fn format_roofline(case: &CaseReport) -> String {
    case.roofline.as_ref().map(CaseRoofline::label).unwrap_or_else(|| "–".into())
}

/// True when some run has a case with a roofline: tables add their column only then.
pub fn any_roofline(report: &RunReport) -> bool {
    report.runs.iter().flat_map(|r| &r.cases).any(|c| c.roofline.is_some())
}

/// Sets every run's peaks and every case's roofline from the cases measured, replacing what was
/// there: the same report always gets the same roofline.
pub fn apply(report: &mut RunReport) {
    for run in &mut report.runs {
        let peaks = peaks(run);
        for case in &mut run.cases {
            case.roofline = peaks.as_ref().and_then(|p| case_roofline(case, p));
        }
        run.roofline = peaks;
    }
}

/// A run's peaks: for each probe, its largest shape (most bytes for the copy, most FLOPs for the
/// FMA chains) among the cases that passed their check; `None` when neither probe passed.
pub fn peaks(run: &PlatformRun) -> Option<Peaks> {
    let [copy, fma] = ROOFLINE_PROBES;
    let best = |kernel: &str, size: fn(&CaseReport) -> f64, rate: fn(&CaseReport) -> Option<f64>| {
        run.cases
            .iter()
            .filter(|c| c.kernel == kernel && c.variant.is_none() && c.status == CaseStatus::Passed)
            .filter_map(|c| Some((c, rate(c)?, c.timer?)))
            .max_by(|(a, ra, _), (b, rb, _)| size(a).total_cmp(&size(b)).then(ra.total_cmp(rb)))
            .map(|(c, value, timer)| Peak { value, case: c.id.clone(), timer })
    };
    let memory = best(copy.name(), |c| c.bytes, |c| c.gbps);
    let compute = best(fma.name(), |c| c.flops, |c| c.gflops);
    (memory.is_some() || compute.is_some()).then_some(Peaks { memory, compute })
}

/// The roofline rule for one case: the bound is whichever peak its bytes or FLOPs would take
/// longer at, and the fraction is its achieved rate over that peak. `None` without both peaks,
/// without a measured rate, or where the case's timer is not the peaks' (times from different
/// clocks are not divided).
pub fn case_roofline(case: &CaseReport, peaks: &Peaks) -> Option<CaseRoofline> {
    let (memory, compute) = (peaks.memory.as_ref()?, peaks.compute.as_ref()?);
    let timer = case.timer?;
    if memory.timer != timer || compute.timer != timer || memory.value <= 0.0 || compute.value <= 0.0 {
        return None;
    }
    let (gbps, gflops) = (case.gbps?, case.gflops?);
    if case.bytes <= 0.0 && case.flops <= 0.0 {
        return None;
    }
    let bound = match case.flops / compute.value > case.bytes / memory.value {
        true => Bound::Compute,
        false => Bound::Memory,
    };
    let fraction = match bound {
        Bound::Memory => gbps / memory.value,
        Bound::Compute => gflops / compute.value,
    };
    Some(CaseRoofline { peak_gbps: memory.value, peak_gflops: compute.value, bound, fraction })
}
