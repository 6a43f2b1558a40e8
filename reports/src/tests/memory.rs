//! Memory growth over a run ([`crate::model::MemoryGrowth`]): a leak is told from honest growth.

use crate::*;

/// harness's RSS over `cases`, as the measured Chromium soak had it (about 4 KiB a case kept
/// for each case's report, in steps of a few allocator chunks, and a warm-up rise), plus
/// `leak_kib` a case.
fn soak(cases: usize, leak_kib: f64) -> PlatformRun {
    let memory = (0..=cases)
        .map(|i| {
            let kept = 4.2 * i as f64;
            let steps = ((kept / 132.0).floor() * 132.0) as u64; // grows in 132 KiB chunks
            let warmup = if i < 10 { 300 * i as u64 } else { 3_000 };
            let jitter = (i as u64 * 7919) % 97;
            MemorySample { cases: i, harness_rss_kib: 80_000 + warmup + steps + jitter + (leak_kib * i as f64) as u64, browser_pss_kib: None }
        })
        .collect();
    PlatformRun { memory, ..crate::testdata::report_with(vec![("chrome", Vec::new())]).runs[0].clone() }
}

#[test]
fn a_leak_of_each_cases_inputs_and_output_fails_the_per_case_bound_and_honest_growth_does_not() {
    let honest = soak(200, 0.0).memory_growth().unwrap();
    assert!(!honest.harness_leaks(), "{}", honest.describe());
    assert!((honest.harness_kib_per_case - 4.2).abs() < 1.0, "{}", honest.harness_kib_per_case);
    // The smallest leak the bound is for: the inputs and output of a quick `add` case, 12 KiB.
    let leaky = soak(200, 12.0).memory_growth().unwrap();
    assert!(leaky.harness_leaks() && leaky.describe().contains("harness leaks"), "{}", leaky.describe());
    // The old bound (15% of the resident set over the run) passed that leak: 200 × 12 KiB on
    // 83 MiB is 2.9%.
    assert!(MemoryGrowth::percent(leaky.harness_kib) < 15.0);
}
