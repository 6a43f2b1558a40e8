//! The roofline rule ([`crate::model::roofline`]) on hand-made runs.

use crate::model::roofline::*;
use crate::testdata::*;
use crate::*;

#[test]
fn peaks_come_from_the_largest_passing_probe_shapes() {
    let mut report = probed_report(vec![]);
    apply(&mut report);
    let p = report.runs[0].roofline.clone().unwrap();
    assert_eq!((p.memory.as_ref().unwrap().value, p.memory.as_ref().unwrap().case.as_str()), (1000.0, "stream_copy/1"));
    assert_eq!(p.compute.as_ref().unwrap().value, 10_000.0);
    assert_eq!(p.describe(), "1.00 TB/s copy, 10.0 TFLOP/s FMA (GPU timestamps)");
    // A probe that failed its check is no peak.
    report.runs[0].cases[1].status = CaseStatus::Failed;
    apply(&mut report);
    assert_eq!(report.runs[0].roofline.as_ref().unwrap().memory.as_ref().unwrap().value, 2000.0);
    report.runs[0].cases.retain(|c| c.status == CaseStatus::Passed && c.kernel != "stream_copy" && c.kernel != "fma_chain");
    apply(&mut report);
    assert!(report.runs[0].roofline.is_none());
}

#[test]
fn the_bound_is_whichever_peak_takes_longer_and_the_fraction_is_of_that_peak() {
    // Arithmetic intensity 1 FLOP/byte against a ridge of 10: memory-bound at 500 GB/s = 50%.
    // Intensity 100: compute-bound at 2500 GFLOP/s = 25%.
    let mut report = probed_report(vec![costed("add", 1, 5e8, 5e8), costed("matmul", 1, 2.5e9, 2.5e7)]);
    apply(&mut report);
    let cases = &report.runs[0].cases;
    let add = cases[3].roofline.as_ref().unwrap();
    assert_eq!((add.bound, add.fraction, add.peak_gbps, add.peak_gflops), (Bound::Memory, 0.5, 1000.0, 10_000.0));
    assert_eq!(add.label(), "50% mem");
    let mm = cases[4].roofline.as_ref().unwrap();
    assert_eq!((mm.bound, mm.fraction), (Bound::Compute, 0.25));
    assert_eq!(mm.label(), "25% FMA");
    // The probes themselves sit at their own peak.
    assert_eq!(cases[1].roofline.as_ref().unwrap().label(), "100% mem");
    assert_eq!(cases[2].roofline.as_ref().unwrap().label(), "100% FMA");
    // A small fraction keeps a decimal.
    assert_eq!(CaseRoofline { fraction: 0.035, ..mm.clone() }.label(), "3.5% FMA");
}

#[test]
fn no_roofline_without_both_peaks_a_rate_or_a_common_timer() {
    let mut report = probed_report(vec![costed("add", 1, 5e8, 5e8)]);
    report.runs[0].cases.remove(2);
    apply(&mut report);
    assert!(report.runs[0].roofline.as_ref().unwrap().compute.is_none());
    assert!(report.runs[0].cases.iter().all(|c| c.roofline.is_none()), "the bound needs both peaks");
    assert!(!any_roofline(&report));

    let mut report = probed_report(vec![costed("add", 1, 5e8, 5e8), costed("softmax", 1, 5e8, 5e8)]);
    report.runs[0].cases[3].timer = Some(Timer::WallClock);
    report.runs[0].cases[4].gbps = None;
    apply(&mut report);
    assert!(report.runs[0].cases[3].roofline.is_none(), "a wall-clock case is not divided by GPU-timestamp peaks");
    assert!(report.runs[0].cases[4].roofline.is_none(), "nothing measured, nothing to divide");
    assert_eq!(format_roofline(&report.runs[0].cases[4]), "–");
    assert!(any_roofline(&report));
}

#[test]
fn peaks_are_per_target() {
    let mut report = probed_report(vec![]);
    report.runs.push(report_with(vec![("firefox", vec![costed("add", 1, 5e8, 5e8)])]).runs.remove(0));
    apply(&mut report);
    assert!(report.runs[0].roofline.is_some());
    assert!(report.runs[1].roofline.is_none() && report.runs[1].cases[0].roofline.is_none(), "chrome's peaks say nothing of firefox");
}
