//! How a case is built from what the page sent: cold-start pages merged into one case.

use crate::testdata::*;
use crate::*;

#[test]
fn cold_pages_merge_into_one_case_whose_samples_are_the_first_results_and_whose_worst_page_stands() {
    let marks = |scale: f64| [("device", 100.0 * scale), ("fetch", 150.0 * scale), ("upload", 160.0 * scale), ("pipelines", 200.0 * scale), ("dispatch", 201.0 * scale), ("result", 300.0 * scale)];
    let page = cold_page(true, &marks(1.0), true);
    assert_eq!(page.samples.len(), 1);
    assert_eq!(page.samples[0].wall_ms, 300.0, "the sample is the time to the first result");
    assert_eq!((page.timer, page.throughput.as_ref().and_then(|t| t.per_second), page.gflops), (Some(Timer::WallClock), None, None), "a first run is no rate");
    let phases = &page.cold_start.as_ref().unwrap().median_phases;
    assert_eq!(phases.iter().map(|p| (p.name.as_str(), p.ms)).collect::<Vec<_>>(), [("device", 100.0), ("fetch", 50.0), ("upload", 10.0), ("pipelines", 40.0), ("dispatch", 1.0), ("result", 99.0)]);

    let merged = CaseReport::merge_cold(vec![cold_page(true, &marks(1.0), true), cold_page(true, &marks(2.0), true), cold_page(true, &marks(3.0), true)]).unwrap();
    assert_eq!(merged.status, CaseStatus::Passed);
    assert_eq!(merged.samples.iter().map(|s| s.wall_ms).collect::<Vec<_>>(), [300.0, 600.0, 900.0]);
    assert_eq!((merged.wall.unwrap().median, merged.wall.unwrap().n), (600.0, 3));
    let cold = merged.cold_start.as_ref().unwrap();
    assert!(cold.precompile);
    assert_eq!(cold.pages.len(), 3);
    assert_eq!(cold.median_phases[0].ms, 200.0, "each phase's median over the pages");
    assert!(cold.phases_line().starts_with("device 200.0 ms · fetch 100.0 ms"), "{}", cold.phases_line());

    let wrong = CaseReport::merge_cold(vec![cold_page(false, &marks(1.0), true), cold_page(false, &marks(2.0), false)]).unwrap();
    assert_eq!(wrong.status, CaseStatus::Failed, "a page with a wrong first result fails the case");
    assert_eq!(wrong.samples.len(), 2);
    assert!(CaseReport::merge_cold(Vec::new()).is_none());
}
