//! Every quick-suite kernel dispatched through native wgpu (llvmpipe/lavapipe on CI, a real GPU
//! elsewhere) and checked against its f64 reference; the self-test kernel must fail the check.

use kernels::gpu::Gpu;
use kernels::{catalog, compare, plan, Suite};

fn gpu() -> Option<Gpu> {
    match pollster::block_on(Gpu::new()) {
        Ok(g) => Some(g),
        Err(e) => {
            // CI installs mesa-vulkan-drivers, so this only skips on a machine without any Vulkan.
            eprintln!("SKIPPED: no native wgpu adapter ({e}); install mesa-vulkan-drivers");
            None
        }
    }
}

#[test]
fn quick_suite_kernels_match_their_references_natively() {
    let Some(gpu) = gpu() else { return };
    eprintln!("adapter: {} ({:?})", gpu.info.name, gpu.info.device_type);
    let mut failures = Vec::new();
    for case in plan::build_cases(Suite::Quick, &[], 1).unwrap() {
        let kernel = case.kernel().unwrap();
        let inputs = kernel.inputs(&case.shape, case.seed);
        let prepared = pollster::block_on(gpu.prepare(kernel, &case.shape, &inputs, 3)).unwrap();
        let m = pollster::block_on(gpu.measure(&prepared, 1, 3, 1e9, |_| {})).unwrap();
        assert!(m.first_dispatch_ms > 0.0);
        assert_eq!(m.samples.len(), 3);
        assert!(m.samples.iter().all(|s| s.wall_ms > 0.0), "{}: {:?}", case.id, m.samples);
        let out = pollster::block_on(gpu.read_output(&prepared)).unwrap();
        let verdict = compare(&out, &kernel.reference(&case.shape, &inputs), kernel.tolerance(&case.shape));
        if !verdict.passed {
            failures.push(format!("{}: {:?}", case.id, verdict));
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

#[test]
fn the_wrong_selftest_kernel_fails_its_check_natively() {
    let Some(gpu) = gpu() else { return };
    let kernel = catalog::find("selftest_wrong").unwrap();
    let shape = kernel.shapes(Suite::Quick).remove(0);
    let inputs = kernel.inputs(&shape, 1);
    let prepared = pollster::block_on(gpu.prepare(kernel, &shape, &inputs, 1)).unwrap();
    pollster::block_on(gpu.dispatch(&prepared, None)).unwrap();
    let out = pollster::block_on(gpu.read_output(&prepared)).unwrap();
    let verdict = compare(&out, &kernel.reference(&shape, &inputs), kernel.tolerance(&shape));
    assert!(!verdict.passed);
    // Elements 7, 1007, 2007, 3007 and 4007 are corrupted.
    assert_eq!(verdict.mismatches, 5);
}

#[test]
fn sampling_stops_when_the_time_budget_is_spent_but_never_below_the_minimum() {
    let Some(gpu) = gpu() else { return };
    let kernel = catalog::find("add").unwrap();
    let shape = kernel.shapes(Suite::Quick).remove(0);
    let inputs = kernel.inputs(&shape, 1);
    let prepared = pollster::block_on(gpu.prepare(kernel, &shape, &inputs, 50)).unwrap();
    // A zero budget is spent by the first sample: the minimum still applies.
    let m = pollster::block_on(gpu.measure(&prepared, 0, 50, 0.0, |_| {})).unwrap();
    assert_eq!(m.samples.len(), kernels::plan::MIN_SAMPLES as usize);
    assert_eq!(m.stopped_by, kernels::wire::StopReason::MaxTime);
    let m = pollster::block_on(gpu.measure(&prepared, 0, 7, 1e9, |_| {})).unwrap();
    assert_eq!((m.samples.len(), m.stopped_by), (7, kernels::wire::StopReason::SampleCount));
}
