//! Every quick-suite kernel dispatched through native wgpu (llvmpipe/lavapipe on CI, a real GPU
//! elsewhere) and checked against its f64 reference; the self-test kernel must fail the check.

use kernels::gpu::Gpu;
use kernels::sampling::{NoClock, Sampled, StopReason};
use kernels::catalog::matmul;
use kernels::{catalog, compare, Kernel, plan, Sampling, SamplingMode, Suite, WarmupPolicy, WarmupStop};
use kernels::program::Program;
use kernels::wire::le_bytes_to_f32s;

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

/// Prepares `kernel` at `shape`, measures it, and checks its output.
fn measure_and_check(
    gpu: &Gpu,
    kernel: &dyn kernels::Kernel,
    shape: &kernels::Shape,
    samples: u32,
    max_time_ms: f64,
) -> (Sampled, kernels::Verdict) {
    let sampling = Sampling { mode: SamplingMode::Steady, warmup: WarmupPolicy::Fixed(1), samples, max_time_ms, target_ci_pct: None };
    measure_with(gpu, kernel, shape, &sampling)
}

fn measure_with(
    gpu: &Gpu,
    kernel: &dyn kernels::Kernel,
    shape: &kernels::Shape,
    sampling: &Sampling,
) -> (Sampled, kernels::Verdict) {
    let inputs = kernel.inputs(shape, 1);
    let program = Program::of_kernel(kernel, shape, &inputs);
    let prepared = pollster::block_on(gpu.prepare(kernel.name(), &program)).unwrap();
    let m = pollster::block_on(gpu.measure(&prepared, sampling, &mut NoClock, |_| {})).unwrap();
    let out = le_bytes_to_f32s(&pollster::block_on(gpu.read_output(&prepared, &program)).unwrap());
    let verdict = compare(&out, &kernel.reference(shape, &inputs), kernel.tolerance(shape));
    (m, verdict)
}

#[test]
fn quick_suite_kernels_match_their_references_natively() {
    let Some(gpu) = gpu() else { return };
    eprintln!("adapter: {} ({:?})", gpu.info.name, gpu.info.device_type);
    let mut failures = Vec::new();
    for case in plan::build_cases(Suite::Quick, &[], 1).unwrap() {
        let (m, verdict) = measure_and_check(&gpu, &*case.kernel().unwrap(), &case.shape, 3, 1e9);
        assert!(m.first_ms > 0.0);
        assert_eq!(m.samples.len(), 3);
        assert!(m.samples.iter().all(|s| s.wall_ms > 0.0), "{}: {:?}", case.id, m.samples);
        // Steady by default: batches queued ahead, each sample timed on the GPU where it can be.
        assert_eq!(m.mode, SamplingMode::Steady);
        assert!(m.batch >= 1 && m.in_flight >= 2, "{}: {} × {}", case.id, m.batch, m.in_flight);
        if gpu.timestamps {
            assert!(m.samples.iter().all(|s| s.gpu_ms.is_some_and(|g| g > 0.0)), "{}: {:?}", case.id, m.samples);
        }
        if !verdict.passed {
            failures.push(format!("{}: {:?}", case.id, verdict));
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

/// Odd shapes for every matmul variant: a single element, one row, primes, past every tile's edge,
/// and one that every tile divides.
const MATMUL_SHAPES: [[u32; 3]; 6] = [[1, 1, 1], [1, 37, 53], [13, 17, 19], [31, 29, 37], [65, 67, 129], [64, 64, 64]];

#[test]
fn every_matmul_variant_matches_the_reference_at_odd_shapes_natively() {
    let Some(gpu) = gpu() else { return };
    let t0 = std::time::Instant::now();
    let shapes: Vec<kernels::Shape> = MATMUL_SHAPES.iter().map(|d| kernels::Shape::from(&d[..])).collect();
    let inputs: Vec<Vec<Vec<f32>>> = shapes.iter().map(|s| matmul::BLOCKED.inputs(s, 1)).collect();
    let references: Vec<Vec<f64>> = shapes.iter().zip(&inputs).map(|(s, x)| matmul::BLOCKED.reference(s, x)).collect();
    let mut failures = Vec::new();
    for params in matmul::candidates() {
        let kernel = matmul::Matmul::blocked(params).unwrap();
        // Every shape is a step of one program, so the variant's shader compiles once.
        let mut program = Program::default();
        program.outputs = shapes.iter().zip(&inputs).map(|(s, x)| program.kernel_step(&kernel, s, x)).collect();
        let prepared = pollster::block_on(gpu.prepare(&params.to_string(), &program)).unwrap_or_else(|e| panic!("{params}: {e}"));
        pollster::block_on(gpu.dispatch(&prepared)).unwrap();
        let mut out = le_bytes_to_f32s(&pollster::block_on(gpu.read_output(&prepared, &program)).unwrap()).into_iter();
        for (shape, reference) in shapes.iter().zip(&references) {
            let got: Vec<f32> = out.by_ref().take(reference.len()).collect();
            let verdict = compare(&got, reference, kernel.tolerance(shape));
            if !verdict.passed {
                failures.push(format!("{params} at {shape}: {verdict:?}"));
            }
        }
    }
    eprintln!("{} matmul variants × {} shapes in {:.1?}", matmul::candidates().len(), shapes.len(), t0.elapsed());
    assert!(failures.is_empty(), "{failures:#?}");
}

/// The roofline probes at their quick shapes and at odd ones (a copy that is no whole number of
/// vec4s, chains that are no whole number of unrolled loop trips) match their references, and
/// are timed with the throughput the reports divide by.
#[test]
fn the_roofline_probes_match_their_references_natively() {
    let Some(gpu) = gpu() else { return };
    for (name, odd) in [("stream_copy", vec![4099]), ("fma_chain", vec![300, 37])] {
        let kernel = catalog::find(name).unwrap();
        let mut shapes = kernel.shapes(Suite::Quick);
        shapes.push(kernels::Shape(odd));
        for shape in shapes {
            let (m, verdict) = measure_and_check(&gpu, kernel, &shape, 2, 1e9);
            assert!(verdict.passed, "{name} {shape}: {verdict:?}");
            assert!(m.samples.iter().all(|s| s.wall_ms > 0.0));
            assert!(kernel.bytes(&shape) > 0.0 && (name == "stream_copy") == (kernel.flops(&shape) == 0.0), "{name} {shape}");
        }
    }
}

#[test]
fn the_wrong_selftest_kernel_fails_its_check_natively() {
    let Some(gpu) = gpu() else { return };
    let kernel = catalog::find("selftest_wrong").unwrap();
    let (_, verdict) = measure_and_check(&gpu, kernel, &kernel.shapes(Suite::Quick)[0], 1, 1e9);
    assert!(!verdict.passed);
    // Elements 7, 1007, 2007, 3007 and 4007 are corrupted.
    assert_eq!(verdict.mismatches, 5);
}

#[test]
fn sampling_stops_when_the_time_budget_is_spent_but_never_below_the_minimum() {
    let Some(gpu) = gpu() else { return };
    let kernel = catalog::find("add").unwrap();
    let shape = &kernel.shapes(Suite::Quick)[0];
    // A zero budget is spent by the first sample: the minimum still applies.
    let (m, _) = measure_and_check(&gpu, kernel, shape, 50, 0.0);
    assert_eq!(m.samples.len(), kernels::sampling::MIN_SAMPLES as usize);
    assert_eq!(m.stopped_by, StopReason::MaxTime);
    let (m, _) = measure_and_check(&gpu, kernel, shape, 7, 1e9);
    assert_eq!((m.samples.len(), m.stopped_by), (7, StopReason::SampleCount));
}

#[test]
fn a_target_ci_and_auto_warmup_work_on_the_gpu_timer() {
    let Some(gpu) = gpu() else { return };
    let kernel = catalog::find("matmul_tiled").unwrap();
    let shape = &kernel.shapes(Suite::Quick)[0];
    // A generous target: met within the time budget on any adapter, after the minimum count.
    let sampling = Sampling { mode: SamplingMode::Steady, warmup: WarmupPolicy::Auto, samples: 10, max_time_ms: 30_000.0, target_ci_pct: Some(25.0) };
    let (m, verdict) = measure_with(&gpu, kernel, shape, &sampling);
    assert!(verdict.passed);
    assert_eq!(m.stopped_by, StopReason::TargetCi, "{:?}", m.samples);
    assert!(m.samples.len() >= 10);
    assert!(m.warmup.len() >= 10 && m.warmup_stop != WarmupStop::Fixed, "{:?}", m.warmup_stop);
}

#[test]
fn steady_batches_a_fast_kernel_and_isolated_takes_it_one_at_a_time() {
    let Some(mut gpu) = gpu() else { return };
    let latency = pollster::block_on(gpu.measure_latency()).unwrap();
    assert_eq!((latency.work_done_ms.len(), latency.map_async_ms.len()), (kernels::gpu::LATENCY_ROUNDS, kernels::gpu::LATENCY_ROUNDS));
    assert!(gpu.latency_ms > 0.0);
    let kernel = catalog::find("add").unwrap();
    let shape = &kernel.shapes(Suite::Quick)[1];
    let (steady, verdict) = measure_and_check(&gpu, kernel, shape, 5, 1e9);
    assert!(verdict.passed);
    // A 1001-element add takes microseconds: a batch of many of them reaches the target.
    assert!(steady.batch > 1, "{}", steady.batch);
    let isolated = Sampling { mode: SamplingMode::Isolated, warmup: WarmupPolicy::Fixed(1), samples: 5, max_time_ms: 1e9, target_ci_pct: None };
    let (one, verdict) = measure_with(&gpu, kernel, shape, &isolated);
    assert!(verdict.passed);
    assert_eq!((one.mode, one.batch, one.in_flight), (SamplingMode::Isolated, 1, 1));
    let (from, to) = one.timed_span;
    assert!(to > from, "the timed samples' span is recorded");
}
