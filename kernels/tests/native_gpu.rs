//! Every quick-suite kernel dispatched through native wgpu (llvmpipe/lavapipe on CI, a real GPU
//! elsewhere) and checked against its f64 reference; the self-test kernel must fail the check.
//! Without an adapter the tests fail under CI or beside lavapipe's ICD, and skip only elsewhere.

use kernels::gpu::Gpu;
use kernels::sampling::{NoClock, Sampled, StopReason};
use kernels::{catalog, compare, plan, Sampling, SamplingMode, Suite, WarmupPolicy, WarmupStop};
use kernels::program::Program;
use kernels::wire::le_bytes_to_f32s;

/// The native adapter, or `None` where a test may skip without one (it says why). Under CI, or
/// where lavapipe's ICD is installed ([`must_have_adapter`]), no adapter fails the test instead.
fn gpu() -> Option<Gpu> {
    let e = match pollster::block_on(Gpu::new()) {
        Ok(g) => return Some(g),
        Err(e) => e,
    };
    let ci = std::env::var_os("CI");
    let icd = lavapipe_icd();
    if must_have_adapter(ci.as_deref(), icd.is_some()) {
        panic!(
            "no native wgpu adapter ({e}), yet one was promised: CI={ci:?}, lavapipe's ICD {}",
            icd.map_or("absent".to_string(), |p| format!("at {}", p.display()))
        );
    }
    eprintln!("SKIPPED: no native wgpu adapter ({e}); CI is unset and lavapipe's ICD absent: install mesa-vulkan-drivers");
    None
}

/// Whether a test with no native adapter must fail rather than skip: where the `CI` variable is
/// set and non-empty (CI installs lavapipe), or where lavapipe's ICD file is present.
fn must_have_adapter(ci_env: Option<&std::ffi::OsStr>, icd_present: bool) -> bool {
    icd_present || ci_env.is_some_and(|v| !v.is_empty())
}

/// lavapipe's Vulkan ICD file (`lvp_icd.*.json`, from mesa-vulkan-drivers), where installed.
fn lavapipe_icd() -> Option<std::path::PathBuf> {
    ["/usr/share/vulkan/icd.d", "/etc/vulkan/icd.d"]
        .into_iter()
        .flat_map(|dir| std::fs::read_dir(dir).into_iter().flatten().flatten())
        .map(|entry| entry.path())
        .find(|p| p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with("lvp_icd.") && n.ends_with(".json")))
}

#[test]
fn no_adapter_fails_under_ci_or_beside_lavapipe_and_skips_only_where_neither() {
    let set = |v: &'static str| Some(std::ffi::OsStr::new(v));
    for (ci_env, icd_present, must) in [
        (None, false, false),
        (set(""), false, false),
        (None, true, true),
        (set(""), true, true),
        (set("true"), false, true),
        (set("true"), true, true),
    ] {
        assert_eq!(must_have_adapter(ci_env, icd_present), must, "CI={ci_env:?}, ICD present: {icd_present}");
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
    let sampling = Sampling { mode: SamplingMode::Steady, warmup: WarmupPolicy::Fixed(1), samples, max_time_ms, target_ci_pct: None, nudge: kernels::Nudge::Auto, profile: false, gpu_timer: Default::default(), timer_cost: false };
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
        let kernel = case.kernel().unwrap();
        if let Some(feature) = kernel.features().into_iter().find(|f| !gpu.has(f)) {
            eprintln!("SKIPPED {}: this adapter has no {feature}", case.id);
            continue;
        }
        let (m, verdict) = measure_and_check(&gpu, &*kernel, &case.shape, 3, 1e9);
        assert!(m.first_ms > 0.0);
        assert_eq!(m.samples.len(), 3);
        assert!(m.samples.iter().all(|s| s.wall_ms > 0.0), "{}: {:?}", case.id, m.samples);
        // Steady by default: batches queued ahead, each sample timed on the GPU where it can be.
        assert_eq!(m.mode, SamplingMode::Steady);
        assert!(m.batch >= 1 && m.in_flight >= kernels::sampling::MIN_IN_FLIGHT, "{}: {} × {}", case.id, m.batch, m.in_flight);
        if gpu.timestamps {
            assert!(m.samples.iter().all(|s| s.gpu_ms.is_some_and(|g| g > 0.0)), "{}: {:?}", case.id, m.samples);
        }
        if !verdict.passed {
            failures.push(format!("{}: {:?}", case.id, verdict));
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

/// A framework set up on harness's device (burn's cubecl-wgpu) writes shaders with the i64, f64 and
/// f32-atomic types the adapter offers: the device must have them too, or those shaders fail
/// validation (burn's conv2d and softmax did, `u64` without `SHADER_INT64`).
#[test]
fn the_device_has_the_shader_capabilities_its_adapter_offers() {
    let Some(gpu) = gpu() else { return };
    let offered = gpu.adapter().features() & kernels::gpu::SHADER_CAPABILITIES;
    eprintln!("adapter {} offers {offered:?}", gpu.info.name);
    assert!(gpu.device().features().contains(offered), "the device has {:?}", gpu.device().features());
}

/// Runs every variant the tuner can pick of catalogue kernel `name` and of its f16 form at
/// `shapes` (all shapes one program per variant, so its shader compiles once) and returns those
/// that miss the f64 reference. The f16 form, and subgroup variants, are skipped, saying so,
/// where the adapter lacks `shader-f16` or `subgroups`.
fn variants_failing_at(gpu: &Gpu, name: &str, shapes: &[&[u32]]) -> Vec<String> {
    let f16 = format!("{name}_f16");
    if !gpu.has("shader-f16") {
        eprintln!("SKIPPED {f16}: this adapter has no shader-f16");
        return variants_of_failing_at(gpu, name, shapes);
    }
    [variants_of_failing_at(gpu, name, shapes), variants_of_failing_at(gpu, &f16, shapes)].concat()
}

fn variants_of_failing_at(gpu: &Gpu, name: &str, shapes: &[&[u32]]) -> Vec<String> {
    let t0 = std::time::Instant::now();
    let default = catalog::find(name).unwrap();
    let shapes: Vec<kernels::Shape> = shapes.iter().map(|d| kernels::Shape::from(*d)).collect();
    let inputs: Vec<Vec<Vec<f32>>> = shapes.iter().map(|s| default.inputs(s, 1)).collect();
    let references: Vec<Vec<f64>> = shapes.iter().zip(&inputs).map(|(s, x)| default.reference(s, x)).collect();
    let variants = catalog::variants(name);
    assert!(!variants.is_empty(), "{name} has no variants");
    let mut failures = Vec::new();
    for variant in &variants {
        let kernel = catalog::variant(name, variant).unwrap();
        if let Some(feature) = kernel.features().into_iter().find(|f| !gpu.has(f)) {
            eprintln!("SKIPPED {name} {variant}: this adapter has no {feature}");
            continue;
        }
        let mut program = Program::default();
        program.outputs = shapes.iter().zip(&inputs).map(|(s, x)| program.kernel_step(&*kernel, s, x)).collect();
        let prepared = pollster::block_on(gpu.prepare(variant, &program)).unwrap_or_else(|e| panic!("{name} {variant}: {e}"));
        pollster::block_on(gpu.dispatch(&prepared)).unwrap();
        let mut out = le_bytes_to_f32s(&pollster::block_on(gpu.read_output(&prepared, &program)).unwrap()).into_iter();
        for (shape, reference) in shapes.iter().zip(&references) {
            let got: Vec<f32> = out.by_ref().take(reference.len()).collect();
            let verdict = compare(&got, reference, kernel.tolerance(shape));
            if !verdict.passed {
                failures.push(format!("{name} {variant} at {shape}: {verdict:?}"));
            }
        }
    }
    eprintln!("{} {name} variants × {} shapes in {:.1?}", variants.len(), shapes.len(), t0.elapsed());
    failures
}

#[test]
fn every_matmul_variant_matches_the_reference_at_odd_shapes_natively() {
    let Some(gpu) = gpu() else { return };
    // A single element, one row, primes, past every tile's edge, and one that every tile divides.
    let shapes: [&[u32]; 6] = [&[1, 1, 1], &[1, 37, 53], &[13, 17, 19], &[31, 29, 37], &[65, 67, 129], &[64, 64, 64]];
    let failures = variants_failing_at(&gpu, "matmul", &shapes);
    assert!(failures.is_empty(), "{failures:#?}");
}

#[test]
fn every_matvec_variant_matches_the_reference_at_odd_shapes_natively() {
    let Some(gpu) = gpu() else { return };
    // [K, N]: a single element, one output, one input, primes, K not a multiple of 4, fewer rows
    // than a workgroup takes, K past every workgroup's width, and shapes every variant divides.
    let shapes: [&[u32]; 8] = [&[1, 1], &[37, 1], &[1, 41], &[13, 17], &[77, 33], &[6, 9], &[1031, 67], &[256, 64]];
    let failures = variants_failing_at(&gpu, "matvec", &shapes);
    assert!(failures.is_empty(), "{failures:#?}");
}

/// The quantized matvecs in every variant: K of whole blocks, K that pads its last block (1, 37,
/// 77), K not a multiple of 4 (scalar loads of x), and more rows than a workgroup takes.
#[test]
fn every_quantized_matvec_variant_matches_the_dequantized_reference_natively() {
    let Some(gpu) = gpu() else { return };
    let shapes: [&[u32]; 7] = [&[1, 1], &[37, 1], &[32, 41], &[77, 33], &[64, 9], &[1031, 67], &[256, 64]];
    for name in ["matvec_q8_0", "matvec_q4_0"] {
        let failures = variants_of_failing_at(&gpu, name, &shapes);
        assert!(failures.is_empty(), "{failures:#?}");
    }
}

/// `(m, k, n, bias)` of the linear layers that [`models_linear_layers_match_f64_at_odd_shapes_natively`] runs.
const LINEARS: [(u32, u32, u32, bool, bool); 23] = [
    // One row: matvec, scalar (K % 4 != 0) and vec4, with and without bias and a residual added at
    // the store; 300000 outputs need more workgroups than one dispatch dimension holds.
    (1, 1, 1, true, false), (1, 77, 33, false, false), (1, 77, 33, true, false), (1, 64, 70, true, false), (1, 2048, 5, false, false),
    (1, 4, 300_000, true, false), (1, 77, 33, false, true), (1, 64, 70, true, true), (1, 1, 3, true, true),
    // Several rows: matmul with B [N,K], each block size the lowering picks, past every tile's edge.
    (2, 1, 1, true, false), (3, 7, 5, false, false), (13, 17, 19, true, false), (31, 29, 37, false, false), (65, 67, 129, true, false),
    (33, 64, 70, true, false), (128, 64, 2048, false, false), (600, 36, 500, true, false),
    (3, 7, 5, false, true), (65, 67, 129, true, true), (33, 64, 70, false, true),
    // A few rows run as a matvec per row (Linear::choose): past 65535 workgroups a row, with both terms.
    (2, 4, 300_000, true, true),
    // A deep K split in chunks, summed after with both terms: a last chunk shorter than the others.
    (300, 1100, 70, true, true), (300, 2048, 256, false, false),
];

#[test]
fn models_linear_layers_match_f64_at_odd_shapes_natively() {
    let Some(gpu) = gpu() else { return };
    // Quantized weights: matvec and matmul dequantize as they read, any K (a padded last block).
    for dtype in weights_it_has(&gpu, &[kernels::Dtype::F32, kernels::Dtype::F16, kernels::Dtype::Q8_0, kernels::Dtype::Q4_0]) {
        linear_layers_match_f64(&gpu, dtype);
    }
}

/// [`LINEARS`] with their weights stored as `dtype`, against f64 from the same (rounded) weights.
fn linear_layers_match_f64(gpu: &Gpu, dtype: kernels::Dtype) {
    use kernels::model::{graph::{Data, Graph}, op::Op};
    let mut g = Graph { seed: 3, ..Graph::default() };
    for (m, k, n, bias, add) in LINEARS {
        let x = g.seeded(format!("x {m}x{k}"), (m * k) as usize, -1.0, 1.0);
        let w = g.seeded(format!("w {n}x{k}"), (n * k) as usize, -1.0, 1.0);
        let w = g.store_as(w, dtype, k as usize);
        let b = bias.then(|| g.seeded(format!("b {n}"), n as usize, -1.0, 1.0));
        let add = add.then(|| g.seeded(format!("r {m}x{n}"), (m * n) as usize, -1.0, 1.0));
        let y = g.tensor(format!("y {m}x{n}"), (m * n) as usize, Data::Computed);
        g.op("linear", Op::Linear { x, w, b, add, y, m, k, n });
        g.outputs.push(y);
    }
    // matmul's tolerance, over K products, the bias and the addend.
    let failures: Vec<String> = failing_outputs(gpu, &g, |i| kernels::Tolerance { abs: 2e-6 * (LINEARS[i].1 + 2) as f64, rel: 1e-5 })
        .into_iter()
        .map(|(i, lowering, verdict)| {
            let (m, k, n, bias, add) = LINEARS[i];
            format!("{m}×{k}×{n} bias {bias} add {add}, w {dtype}, {lowering}: {verdict:?}")
        })
        .collect();
    assert!(failures.is_empty(), "{failures:#?}");
}

/// A linear layer's GEMM on tensor cores (`matmul` on subgroup matrices), its builtins emulated
/// (`subgroup_matrix::emulated`: no adapter here has them; the real ones run only on the GPU
/// machine), against f64, in 64×64 blocks: K split in chunks (with K whole a block takes 256
/// workgroups to be chosen, which llvmpipe takes seconds to run), and K whole where the plan took
/// 32×32 blocks (too few of 64×64), with a bias and a residual at the store. What the kernel tiles,
/// offsets, splits and stores is checked here; the f16 rounding of the split in
/// `the_split_keeps_f32s_accuracy_where_f16_inputs_lose_it`.
#[test]
fn tensor_core_gemms_match_f64_with_subgroup_matrices_emulated_natively() {
    use kernels::catalog::matmul::subgroup_matrix;
    use kernels::model::{graph::{Data, Graph}, op::Op};
    let Some(gpu) = gpu() else { return };
    // (rows, K, columns, with a bias and a residual, the plan's block without tensor cores)
    for (m, k, n, epilogue, plain) in [(300, 768, 72, false, "bm64-bn64"), (520, 36, 512, true, "bm32-bn32")] {
        let mut g = Graph { seed: 7, ..Graph::default() };
        let x = g.seeded("x", (m * k) as usize, -1.0, 1.0);
        let w = g.seeded("w", (n * k) as usize, -1.0, 1.0);
        let b = epilogue.then(|| g.seeded("b", n as usize, -1.0, 1.0));
        let add = epilogue.then(|| g.seeded("add", (m * n) as usize, -1.0, 1.0));
        let y = g.tensor("y", (m * n) as usize, Data::Computed);
        g.op("linear", Op::Linear { x, w, b, add, y, m, k, n });
        g.outputs.push(y);
        let lowered = |caps| g.lower(None, caps).unwrap();
        let blocks = |p: &kernels::program::Program| p.shaders.iter().map(|s| s.label.clone()).filter(|l| l.contains("matmul")).collect::<Vec<_>>();
        let plain_blocks = blocks(&lowered(kernels::program::Caps::NONE));
        assert!(plain_blocks.len() == 1 && plain_blocks[0].contains(plain), "{plain_blocks:?}");
        let mut program = lowered(kernels::program::Caps { subgroup_matrix: true, ..kernels::program::Caps::NONE });
        let labels: Vec<&str> = program.shaders.iter().map(|s| s.label.as_str()).filter(|l| l.contains("on subgroup matrices")).collect();
        assert!(labels.len() == 1 && labels[0].contains("64x64"), "{labels:?}");
        for shader in program.shaders.iter_mut().filter(|s| s.label.contains("on subgroup matrices")) {
            shader.wgsl = subgroup_matrix::emulated(&shader.wgsl);
        }
        program.features.retain(|f| f != subgroup_matrix::FEATURE && f != "shader-f16");
        let prepared = pollster::block_on(gpu.prepare("gemms", &program)).unwrap();
        pollster::block_on(gpu.dispatch(&prepared)).unwrap();
        let got = le_bytes_to_f32s(&pollster::block_on(gpu.read_output(&prepared, &program)).unwrap());
        let verdict = compare(&got, &g.evaluate(None).unwrap(), kernels::Tolerance { abs: 2e-6 * (k + 2) as f64, rel: 1e-5 });
        assert!(verdict.passed, "{m}×{k}×{n}: {verdict:?}");
    }
}

/// Linear layers of one input and width run as one GEMM (`Dispatch::Gemms`), each output a range of
/// one buffer: the ranges are read back as outputs and bound as another op's inputs, a layer
/// without a bias among ones with, a layer of another width beside them stays on its own; f32 and
/// f16 weights, K whole and split, against f64.
#[test]
fn linear_layers_of_one_input_run_as_one_gemm_and_match_f64_natively() {
    use kernels::model::{fuse::Dispatch, graph::Graph, op::Op};
    let Some(gpu) = gpu() else { return };
    // 300 rows of 3 × 64 columns: a matmul of 16×16 blocks, too many rows for a matvec per row;
    // with K 1100, 64×64 blocks with K split in 4, the partials summed with the biases after (the
    // wider layer splits too: five dispatches).
    let shapes = [(300, 36, 64, 3), (300, 1100, 64, 5)];
    let floats = weights_it_has(&gpu, &[kernels::Dtype::F32, kernels::Dtype::F16]);
    for ((m, k, n, steps), dtype) in shapes.into_iter().flat_map(|s| floats.iter().map(move |&d| (s, d))) {
        let mut g = Graph { seed: 9, ..Graph::default() };
        let x = g.seeded("x", (m * k) as usize, -1.0, 1.0);
        let linear = |g: &mut Graph, name: &str, n: u32, bias: bool| {
            let w = g.seeded(format!("{name}.w"), (n * k) as usize, -1.0, 1.0);
            let w = g.store_as(w, dtype, k as usize);
            let b = bias.then(|| g.seeded(format!("{name}.b"), n as usize, -1.0, 1.0));
            let y = g.computed(format!("{name}.y"), (m * n) as usize);
            g.op("qkv", Op::Linear { x, w, b, add: None, y, m, k, n });
            y
        };
        let q = linear(&mut g, "q", n, true);
        let key = linear(&mut g, "k", n, false);
        let v = linear(&mut g, "v", n, true);
        let other = linear(&mut g, "other", 2 * n, true);
        let sum = g.computed("k + v", (m * n) as usize);
        g.op("add", Op::Add { a: key, b: v, y: sum, n: m * n });
        g.outputs = vec![q, key, v, other, sum];
        let plan = g.plan(kernels::program::Caps::NONE);
        assert!(plan.contains(&Dispatch::Gemms { ops: vec![0, 1, 2] }) && plan.contains(&Dispatch::Op(3)), "{plan:?}");
        assert_linear_outputs_match_f64(&gpu, &g, steps, &format!("{m}×{k}×{n}, {dtype}"), k);
    }
}

/// A linear layer run as `matmul` stores the GELU of its outputs where only the GELU after it reads
/// them (`Dispatch::Activated`): with a bias, with a residual too, K whole and split (the split's
/// sum takes the GELU), f32 and f16 weights, against f64; a layer whose output is also read
/// elsewhere keeps its GELU apart.
#[test]
fn a_gemm_stores_the_gelu_of_its_outputs_and_matches_f64_natively() {
    use kernels::model::{fuse::Dispatch, graph::Graph, op::Op};
    let Some(gpu) = gpu() else { return };
    // (rows, K, columns, residual, dispatches): 16×16 blocks with K whole; 64×64 blocks with K
    // split in 4 and a sum after; the second layer's output is a result too, so its GELU stays apart.
    let shapes = [(300, 36, 64, false, 3), (300, 1100, 64, true, 5)];
    let floats = weights_it_has(&gpu, &[kernels::Dtype::F32, kernels::Dtype::F16]);
    for ((m, k, n, residual, steps), dtype) in shapes.into_iter().flat_map(|s| floats.iter().map(move |&d| (s, d))) {
        let mut g = Graph { seed: 13, ..Graph::default() };
        let x = g.seeded("x", (m * k) as usize, -1.0, 1.0);
        let gelu_of = |g: &mut Graph, name: &str| {
            let w = g.seeded(format!("{name}.w"), (n * k) as usize, -2.0 / (k as f32).sqrt(), 2.0 / (k as f32).sqrt());
            let w = g.store_as(w, dtype, k as usize);
            let b = Some(g.seeded(format!("{name}.b"), n as usize, -1.0, 1.0));
            let add = residual.then(|| g.seeded(format!("{name}.add"), (m * n) as usize, -1.0, 1.0));
            let y = g.computed(format!("{name}.y"), (m * n) as usize);
            g.op("ffn_up", Op::Linear { x, w, b, add, y, m, k, n });
            let act = g.computed(format!("{name}.gelu"), (m * n) as usize);
            g.op("gelu", Op::Gelu { x: y, y: act, n: m * n });
            (y, act)
        };
        let (_, fused) = gelu_of(&mut g, "fused");
        let (apart, act) = gelu_of(&mut g, "apart");
        g.outputs = vec![fused, apart, act];
        assert_eq!(g.plan(kernels::program::Caps::NONE)[..3], [Dispatch::Activated { linear: 0, gelu: 1 }, Dispatch::Op(2), Dispatch::Op(3)], "{m}×{k}×{n}");
        assert_linear_outputs_match_f64(&gpu, &g, steps, &format!("{m}×{k}×{n}, {dtype}"), k);
    }
}

/// A linear layer whose K splits and the norm of its output right after (`Dispatch::Normed`): the
/// dispatch adding up the chunks stores the sum (with a bias and a residual) and normalizes its rows,
/// LayerNorm and RMSNorm, rows in `vec4`s and not, against f64; a layer whose K does not split keeps
/// its norm apart.
#[test]
fn a_split_gemms_sum_normalizes_its_rows_and_matches_f64_natively() {
    use kernels::model::{fuse::Dispatch, graph::Graph, op::Op};
    let Some(gpu) = gpu() else { return };
    // (rows, K, columns, LayerNorm, fused): K 1100 splits in 4, K 36 not at all.
    for (m, k, n, center, fused) in [(300, 1100, 64, true, true), (300, 1100, 70, false, true), (300, 36, 64, true, false)] {
        let mut g = Graph { seed: 17, ..Graph::default() };
        let x = g.seeded("x", (m * k) as usize, -1.0, 1.0);
        let w = g.seeded("w", (n * k) as usize, -1.0, 1.0);
        let b = Some(g.seeded("b", n as usize, -1.0, 1.0));
        let add = Some(g.seeded("residual", (m * n) as usize, -4.0, 4.0));
        let y = g.computed("y", (m * n) as usize);
        g.op("ffn_down", Op::Linear { x, w, b, add, y, m, k, n });
        let gain = g.seeded("gain", n as usize, 0.5, 1.5);
        let shift = center.then(|| g.seeded("shift", n as usize, -1.0, 1.0));
        let h = g.computed("h", (m * n) as usize);
        g.op("layernorm", Op::Norm { x: y, g: gain, b: shift, y: h, rows: m, cols: n, eps: 1e-5 });
        g.outputs = vec![y, h];
        let expected = if fused { Dispatch::Normed { linear: 0, norm: 1 } } else { Dispatch::Op(0) };
        assert_eq!(g.plan(kernels::program::Caps::NONE)[0], expected, "{m}×{k}×{n}");
        let failures = failing_outputs(&gpu, &g, |i| if i == 0 { kernels::Tolerance { abs: 2e-6 * (k + 2) as f64, rel: 1e-5 } } else { kernels::Tolerance { abs: 2e-4, rel: 1e-4 } });
        assert!(failures.is_empty(), "{m}×{k}×{n}: {failures:#?}");
    }
}

/// Those of `dtypes` whose weights the adapter can hold, saying which it skips.
fn weights_it_has(gpu: &Gpu, dtypes: &[kernels::Dtype]) -> Vec<kernels::Dtype> {
    let (has, lacks): (Vec<kernels::Dtype>, Vec<kernels::Dtype>) = dtypes.iter().partition(|d| d.feature().is_none_or(|f| gpu.has(f)));
    for dtype in lacks {
        eprintln!("SKIPPED {dtype} weights: this adapter has no {}", dtype.feature().unwrap_or_default());
    }
    has
}

/// Asserts that `g`, outputs of linear layers `k` deep, lowers to `steps` dispatches and that
/// every output matches the f64 reference (`what` names the case).
fn assert_linear_outputs_match_f64(gpu: &Gpu, g: &kernels::model::graph::Graph, steps: usize, what: &str, k: u32) {
    assert_eq!(g.lower(None, kernels::program::Caps::NONE).unwrap().steps.len(), steps, "{what}");
    let failures = failing_outputs(gpu, g, |_| kernels::Tolerance { abs: 2e-6 * (k + 2) as f64, rel: 1e-5 });
    assert!(failures.is_empty(), "{what}: {failures:#?}");
}

/// Runs `g` on the GPU and checks each of its outputs against the f64 reference with
/// `tolerance(i)` (`i` its index in `g.outputs`): lowered without subgroups, and again with them
/// where the adapter has them (the linear layers' matvecs then reduce through them). Returns the
/// failures as `(i, lowering, verdict)`.
fn failing_outputs(gpu: &Gpu, g: &kernels::model::graph::Graph, tolerance: impl Fn(usize) -> kernels::Tolerance) -> Vec<(usize, &'static str, kernels::Verdict)> {
    let mut failures = Vec::new();
    let reference = g.evaluate(None).unwrap();
    for (subgroups, lowering) in [(false, "workgroup reduction"), (true, "subgroup reduction")] {
        if subgroups && !gpu.has("subgroups") {
            eprintln!("SKIPPED the subgroup lowering: this adapter has no subgroups");
            continue;
        }
        let program = g.lower(None, kernels::program::Caps { subgroups, ..kernels::program::Caps::NONE }).unwrap();
        assert_eq!(program.features.iter().any(|f| f == "subgroups"), subgroups && g.ops.iter().any(|(_, op)| is_one_row_linear(op)));
        let prepared = pollster::block_on(gpu.prepare("model ops", &program)).unwrap();
        pollster::block_on(gpu.dispatch(&prepared)).unwrap();
        let mut got = le_bytes_to_f32s(&pollster::block_on(gpu.read_output(&prepared, &program)).unwrap()).into_iter();
        let mut expected = reference.iter().copied();
        for (i, &o) in g.outputs.iter().enumerate() {
            let len = g.tensors[o].len;
            let (got, expected): (Vec<f32>, Vec<f64>) = (got.by_ref().take(len).collect(), expected.by_ref().take(len).collect());
            let verdict = compare(&got, &expected, tolerance(i));
            if !verdict.passed {
                failures.push((i, lowering, verdict));
            }
        }
    }
    failures
}

/// Whether `op` is a linear layer (or SwiGLU) that runs as a vec4 matvec (one row, or a few:
/// `Linear::choose`), which the lowering gives a subgroup reduction where the device has subgroups.
fn is_one_row_linear(op: &kernels::model::op::Op) -> bool {
    use kernels::catalog::linear::Linear;
    use kernels::model::op::Op;
    match *op {
        Op::Linear { m, k, n, .. } | Op::SwiGlu { m, k, n, .. } => k % 4 == 0 && matches!(Linear::choose(m, k, n, kernels::program::Caps::SUBGROUPS), Linear::Matvec(_)),
        _ => false,
    }
}

/// RMSNorm and LayerNorm at odd widths (scalar and vec4 loads, fewer columns than invocations,
/// more than two per invocation), LayerNorm also on rows far from zero mean, where a variance
/// taken as E[x²] − mean² in f32 would lose most of its digits.
#[test]
fn model_norms_match_f64_at_odd_widths_natively() {
    use kernels::model::{graph::Graph, op::Op};
    let Some(gpu) = gpu() else { return };
    let cases: Vec<(u32, bool, f32)> =
        [1, 3, 5, 2047, 2048, 4100].into_iter().flat_map(|c| [(c, false, 0.0), (c, true, 0.0), (c, true, 100.0)]).collect();
    let mut g = Graph { seed: 5, ..Graph::default() };
    let rows = 3;
    for &(cols, layer, offset) in &cases {
        let x = g.seeded(format!("x {cols} {layer} {offset}"), (rows * cols) as usize, offset - 1.0, offset + 1.0);
        let gain = g.seeded(format!("g {cols} {layer} {offset}"), cols as usize, 0.5, 1.5);
        let b = layer.then(|| g.seeded(format!("b {cols} {offset}"), cols as usize, -1.0, 1.0));
        let y = g.computed(format!("y {cols} {layer} {offset}"), (rows * cols) as usize);
        g.op("norm", Op::Norm { x, g: gain, b, y, rows, cols, eps: 1e-5 });
        g.outputs.push(y);
    }
    let failures: Vec<String> = failing_outputs(&gpu, &g, |_| kernels::Tolerance { abs: 1e-4, rel: 1e-4 })
        .into_iter()
        .map(|(i, lowering, verdict)| format!("{rows} rows of (cols, layer norm, around) {:?}, {lowering}: {verdict:?}", cases[i]))
        .collect();
    assert!(failures.is_empty(), "{failures:#?}");
}

/// SwiGLU's fused gate and up projections, `silu(x·Gᵀ) · (x·Uᵀ)`: one matvec dispatch for one row
/// (scalar and vec4 loads, every rows-per-workgroup the lowering picks, more workgroups than one
/// dimension holds), a matmul of the gate and up weights joined (K whole and split) or two where
/// they do not join, and an elementwise product for many, weights f32 and f16.
#[test]
fn model_swiglu_matches_f64_at_odd_shapes_natively() {
    use kernels::model::{graph::Graph, op::Op};
    let Some(gpu) = gpu() else { return };
    let shapes = [
        (1, 1, 1), (1, 77, 33), (1, 64, 70), (1, 2048, 5), (1, 36, 2100), (1, 4, 300_000), (1, 5632, 3), (3, 7, 5), (33, 64, 70),
        (300, 64, 64), (300, 1100, 64), (300, 64, 70),
    ];
    for dtype in [kernels::Dtype::F32, kernels::Dtype::F16] {
        if dtype.feature().is_some_and(|f| !gpu.has(f)) {
            eprintln!("SKIPPED f16 weights: this adapter has no shader-f16");
            continue;
        }
        let mut g = Graph { seed: 7, ..Graph::default() };
        for (m, k, n) in shapes {
            let a = 1.0 / (k as f32).sqrt();
            let x = g.seeded(format!("x {m}x{k}"), (m * k) as usize, -1.0, 1.0);
            let gate = g.seeded(format!("gate {n}x{k}"), (n * k) as usize, -a, a);
            let up = g.seeded(format!("up {n}x{k}"), (n * k) as usize, -a, a);
            let (gate, up) = (g.store_as(gate, dtype, k as usize), g.store_as(up, dtype, k as usize));
            let y = g.computed(format!("y {m}x{n}"), (m * n) as usize);
            g.op("gate_up", Op::SwiGlu { x, gate, up, y, m, k, n });
            g.outputs.push(y);
        }
        let joined = g.lower(None, kernels::program::Caps::NONE).unwrap().shaders.iter().filter(|s| s.label.contains("in segments of 64")).count();
        assert_eq!(joined, 2, "the two 64-wide SwiGLUs of 300 rows run as one GEMM each (K whole, K split)");
        let failures: Vec<String> = failing_outputs(&gpu, &g, |i| kernels::Tolerance { abs: 4e-6 * (shapes[i].1 + 1) as f64, rel: 1e-5 })
            .into_iter()
            .map(|(i, lowering, verdict)| format!("m, k, n {:?}, w {dtype}, {lowering}: {verdict:?}", shapes[i]))
            .collect();
        assert!(failures.is_empty(), "{failures:#?}");
    }
}

/// What `fuse::plan` runs as one dispatch matches the f64 reference of the ops one by one: an
/// RMSNorm folded into Q, K and V (segments of a multiple of the rows a workgroup takes, and not;
/// vec4 and scalar loads; one token and three), into a SwiGLU, and the RoPE and cache writes
/// folded into one token's attention; then whole decoders, decode and prefills short (matvecs) and
/// long (matmuls), in every weight dtype. Each graph must lower to fewer dispatches than it has
/// ops, or nothing was fused.
#[test]
fn fused_dispatches_match_the_unfused_f64_reference_natively() {
    use kernels::model::decoder::{DecoderCase, LlamaConfig, Phase};
    use kernels::model::{graph::Graph, op::Op};
    let Some(gpu) = gpu() else { return };
    let mut g = Graph { seed: 11, ..Graph::default() };
    // (tokens, K, rows of Q, of K and V)
    let shapes = [(1, 64, 64, 16), (1, 37, 33, 7), (3, 64, 64, 16), (1, 2048, 2048, 256)];
    for (m, k, nq, nkv) in shapes {
        let x = g.seeded(format!("x {m} {k}"), (m * k) as usize, -2.0, 2.0);
        let gain = g.seeded(format!("gain {m} {k}"), k as usize, 0.8, 1.2);
        let h = g.computed(format!("h {m} {k}"), (m * k) as usize);
        g.op("attn_norm", Op::Norm { x, g: gain, b: None, y: h, rows: m, cols: k, eps: 1e-5 });
        for (name, n) in [("q", nq), ("k", nkv), ("v", nkv)] {
            let w = g.seeded(format!("w{name} {m} {k}"), (n * k) as usize, -0.2, 0.2);
            let y = g.computed(format!("{name} {m} {k}"), (m * n) as usize);
            g.op("qkv", Op::Linear { x: h, w, b: None, add: None, y, m, k, n });
            g.outputs.push(y);
        }
        let (gate, up) = (g.seeded(format!("gate {m} {k}"), (24 * k) as usize, -0.2, 0.2), g.seeded(format!("up {m} {k}"), (24 * k) as usize, -0.2, 0.2));
        let h2 = g.computed(format!("h2 {m} {k}"), (m * k) as usize);
        g.op("ffn_norm", Op::Norm { x, g: gain, b: None, y: h2, rows: m, cols: k, eps: 1e-5 });
        let y = g.computed(format!("swiglu {m} {k}"), (m * 24) as usize);
        g.op("gate_up", Op::SwiGlu { x: h2, gate, up, y, m, k, n: 24 });
        g.outputs.push(y);
    }
    assert_eq!(g.lower(None, kernels::program::Caps::NONE).unwrap().steps.len(), 2 * shapes.len(), "a norm and QKV, a norm and SwiGLU");
    let failures: Vec<String> = failing_outputs(&gpu, &g, |i| kernels::Tolerance { abs: 1e-5 * shapes[i / 4].1 as f64, rel: 1e-4 })
        .into_iter()
        .map(|(i, lowering, verdict)| format!("(tokens, K, Q rows, KV rows) {:?}, output {}, {lowering}: {verdict:?}", shapes[i / 4], i % 4))
        .collect();
    assert!(failures.is_empty(), "{failures:#?}");

    let config = LlamaConfig { hidden: 64, heads: 8, kv_heads: 2, ffn: 96, layers: 2 };
    for dtype in [kernels::Dtype::F32, kernels::Dtype::F16, kernels::Dtype::Q8_0, kernels::Dtype::Q4_0] {
        if dtype.feature().is_some_and(|f| !gpu.has(f)) {
            eprintln!("SKIPPED f16 weights: this adapter has no shader-f16");
            continue;
        }
        for (phase, ctx) in [(Phase::Decode, 9), (Phase::Prefill, 3), (Phase::Prefill, 300)] {
            let case = DecoderCase { model: "test".into(), config, phase: phase.clone(), ctx, dtype, weights: None };
            let g = case.graph(5);
            assert!(ctx > 256 || g.dispatches() < g.ops.len() as u32, "{phase:?}: nothing fused");
            let failures = failing_outputs(&gpu, &g, |_| kernels::Tolerance { abs: 2e-4, rel: 1e-4 });
            assert!(failures.is_empty(), "{phase:?} {dtype}: {failures:#?}");
        }
    }
}

/// The image and audio encoders at odd shapes (a head width that is no multiple of 4, a frame
/// count the strided convolution does not halve evenly, several items a batch) match the f64
/// reference through every layer, in f32 and with q8_0 weights.
#[test]
fn perception_encoders_match_f64_at_odd_shapes_natively() {
    use kernels::model::perception::{Front, PerceptionCase, PerceptionConfig};
    let Some(gpu) = gpu() else { return };
    let fronts = [(Front::Image { size: 12, patch: 4, channels: 3 }, 24, 3), (Front::Audio { mels: 7, frames: 23 }, 20, 4)];
    for (front, hidden, heads) in fronts {
        for dtype in [kernels::Dtype::F32, kernels::Dtype::Q8_0] {
            let config = PerceptionConfig { front, hidden, heads, layers: 2, ffn: 40 };
            let case = PerceptionCase { model: "test".into(), config, batch: 2, dtype, op: None };
            let failures = failing_outputs(&gpu, &case.graph(3), |_| kernels::Tolerance { abs: 2e-4, rel: 1e-4 });
            assert!(failures.is_empty(), "{front:?} {dtype}: {failures:#?}");
        }
    }
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
    let sampling = Sampling { mode: SamplingMode::Steady, warmup: WarmupPolicy::Auto, samples: 10, max_time_ms: 30_000.0, target_ci_pct: Some(25.0), nudge: kernels::Nudge::Auto, profile: false, gpu_timer: Default::default(), timer_cost: false };
    let (m, verdict) = measure_with(&gpu, kernel, shape, &sampling);
    assert!(verdict.passed);
    assert_eq!(m.stopped_by, StopReason::TargetCi, "{:?}", m.samples);
    assert!(m.samples.len() >= 10);
    assert!(m.warmup.len() >= 10 && m.warmup_stop != WarmupStop::Fixed, "{:?}", m.warmup_stop);
}

#[test]
fn steady_batches_a_fast_kernel_and_isolated_takes_it_one_at_a_time() {
    let Some(mut gpu) = gpu() else { return };
    let latency = pollster::block_on(gpu.measure_latency(kernels::Nudge::Auto)).unwrap();
    assert_eq!((latency.work_done_ms.len(), latency.map_async_ms.len()), (kernels::gpu::LATENCY_ROUNDS, kernels::gpu::LATENCY_ROUNDS));
    assert!(!gpu.nudge && latency.nudged_work_done_ms.is_empty(), "natively every wait polls the device: nothing to nudge");
    assert!(gpu.latency_ms > 0.0);
    let kernel = catalog::find("add").unwrap();
    let shape = &kernel.shapes(Suite::Quick)[1];
    let (steady, verdict) = measure_and_check(&gpu, kernel, shape, 5, 1e9);
    assert!(verdict.passed);
    // A 1001-element add takes microseconds: a batch of many of them reaches the target.
    assert!(steady.batch > 1, "{}", steady.batch);
    let isolated = Sampling { mode: SamplingMode::Isolated, warmup: WarmupPolicy::Fixed(1), samples: 5, max_time_ms: 1e9, target_ci_pct: None, nudge: kernels::Nudge::Auto, profile: false, gpu_timer: Default::default(), timer_cost: false };
    let (one, verdict) = measure_with(&gpu, kernel, shape, &isolated);
    assert!(verdict.passed);
    assert_eq!((one.mode, one.batch, one.in_flight), (SamplingMode::Isolated, 1, 1));
    let (from, to) = one.timed_span;
    assert!(to > from, "the timed samples' span is recorded");
}

/// `Op::Attention` configurations, as `(batch, seq, heads, kv_heads, hd, kv_len, causal, pos0, lens)`;
/// rows are `batch · seq`. Decode, one key, keys past one workgroup's worth, causal prefill after a
/// cache, GQA groups of 1, 2, 3 and 8, head dims in vec4s and not, whose columns leave invocations over, wider than one workgroup's
/// columns, lens shorter than kv_len, and the most keys a row may see; then the flash kernel's.
#[allow(clippy::type_complexity)]
const ATTENTIONS: &[(u32, u32, u32, u32, u32, u32, bool, u32, &[u32])] = &[
    (1, 1, 32, 4, 64, 129, true, 128, &[0]),
    (1, 1, 2, 2, 64, 1, true, 0, &[0]),
    (1, 1, 3, 1, 6, 1, false, 0, &[1]),
    (1, 1, 8, 8, 64, 300, true, 299, &[0]),
    (1, 5, 4, 2, 32, 8, true, 3, &[0]),
    (1, 6, 4, 2, 6, 6, true, 0, &[0]),
    (3, 7, 2, 2, 32, 7, false, 0, &[7, 3, 1]),
    (2, 5, 3, 1, 6, 5, false, 0, &[5, 2]),
    (1, 2, 3, 3, 6, 90, true, 88, &[0]),
    (2, 1, 4, 2, 48, 100, false, 0, &[100, 57]),
    (1, 3, 2, 1, 128, 40, false, 0, &[33]),
    (2, 2, 2, 1, 1028, 3, false, 0, &[3, 2]),
    (1, 2, 1, 1, 258, 4, true, 2, &[0]),
    (1, 1, 8, 1, 64, 2048, true, 2047, &[0]),
    (1, 1, 2, 2, 32, 2048, false, 0, &[2048]),
    // Flash (an item of at least 32 rows): causal after a cache with GQA, rows and keys not a
    // multiple of a tile, lens masks, a head of two vec4s, a head dim of nine vec4s, more keys than
    // the one-row kernel holds.
    (16, 40, 12, 4, 64, 80, true, 40, &[0; 16]),
    (16, 50, 8, 8, 32, 70, false, 0, &[70, 33, 70, 1, 70, 69, 2, 70, 70, 64, 70, 70, 5, 70, 70, 70]),
    (32, 64, 4, 1, 8, 64, true, 0, &[0; 32]),
    (12, 33, 16, 16, 64, 512, false, 0, &[500; 12]),
    (16, 40, 11, 11, 36, 300, false, 0, &[290; 16]),
    (2, 33, 2, 1, 64, 2500, false, 0, &[2500, 2301]),
    // Keys in chunks (too few workgroups to fill the GPU), merged after: causal after a cache, and
    // causal from the first token, whose early rows see nothing of the later chunks.
    (1, 40, 4, 2, 64, 600, true, 560, &[0]),
    (1, 600, 2, 1, 64, 600, true, 0, &[0]),
];

/// Every [`ATTENTIONS`] configuration through `Graph::lower` against `Graph::evaluate` (f64).
#[test]
fn attention_matches_f64_at_odd_configurations_natively() {
    use kernels::model::{graph::{Data, Graph}, op::Op};
    let Some(gpu) = gpu() else { return };
    let mut g = Graph { seed: 5, ..Graph::default() };
    for &(batch, seq, heads, kv_heads, hd, kv_len, causal, pos0, lens) in ATTENTIONS {
        let rows = batch * seq;
        let name = format!("{batch}×{seq} h{heads}/{kv_heads} hd{hd} kv{kv_len} causal {causal} pos0 {pos0}");
        let q = g.seeded(format!("q {name}"), (rows * heads * hd) as usize, -1.0, 1.0);
        let k = g.seeded(format!("k {name}"), (batch * kv_len * kv_heads * hd) as usize, -1.0, 1.0);
        let v = g.seeded(format!("v {name}"), (batch * kv_len * kv_heads * hd) as usize, -1.0, 1.0);
        let lens = g.tensor(format!("lens {name}"), lens.len(), Data::U32(lens.to_vec()));
        let y = g.computed(format!("y {name}"), (rows * heads * hd) as usize);
        g.op("attention", Op::Attention { q, k, v, lens, y, rows, seq, heads, kv_heads, hd, kv_len, causal, pos0 });
        g.outputs.push(y);
    }
    let program = g.lower(None, kernels::program::Caps::NONE).unwrap();
    let prepared = pollster::block_on(gpu.prepare("attention", &program)).unwrap();
    pollster::block_on(gpu.dispatch(&prepared)).unwrap();
    let mut got = le_bytes_to_f32s(&pollster::block_on(gpu.read_output(&prepared, &program)).unwrap()).into_iter();
    let mut expected = g.evaluate(None).unwrap().into_iter();
    let mut failures = Vec::new();
    for &(batch, seq, heads, _, hd, kv_len, causal, pos0, _) in ATTENTIONS {
        let len = (batch * seq * heads * hd) as usize;
        let (got, expected): (Vec<f32>, Vec<f64>) = (got.by_ref().take(len).collect(), expected.by_ref().take(len).collect());
        let verdict = compare(&got, &expected, kernels::Tolerance { abs: 1e-5, rel: 1e-4 });
        if !verdict.passed {
            failures.push(format!("{batch}×{seq} rows, {heads} heads, hd {hd}, kv_len {kv_len}, causal {causal} pos0 {pos0}: {verdict:?}"));
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

/// A decode step dispatches what its report says: one run of the program records exactly the
/// dispatches of `CaseInfo::dispatches`, and each further run as many again; its profile has a
/// time for each of them, from runs of its own.
#[test]
fn a_decode_step_dispatches_what_its_report_says() {
    use kernels::model::decoder::{DecoderCase, LlamaConfig, Phase};
    let Some(gpu) = gpu() else { return };
    let config = LlamaConfig { hidden: 64, heads: 8, kv_heads: 2, ffn: 96, layers: 3 };
    let case = DecoderCase { model: "test".into(), config, phase: Phase::Decode, ctx: 7, dtype: kernels::Dtype::F32, weights: None };
    let said = case.info().dispatches.expect("a model says its dispatches");
    let program = case.graph(1).lower(None, kernels::program::Caps::NONE).unwrap();
    let prepared = pollster::block_on(gpu.prepare("decode", &program)).unwrap();
    pollster::block_on(gpu.dispatch(&prepared)).unwrap();
    assert_eq!(prepared.dispatched(), u64::from(said), "one run");
    assert_eq!(said, 3 * 5 + 1, "5 a layer and the final norm");
    pollster::block_on(gpu.dispatch(&prepared)).unwrap();
    pollster::block_on(gpu.dispatch(&prepared)).unwrap();
    assert_eq!(prepared.dispatched(), 3 * u64::from(said), "every run counts");
    let profile = pollster::block_on(gpu.profile(&prepared, kernels::gpu::PROFILE_RUNS)).unwrap();
    if !gpu.timestamps {
        assert!(profile.is_empty());
        return println!("no timestamp queries here: no profile");
    }
    assert_eq!(profile.len(), said as usize);
    assert!(profile.iter().all(|ms| ms.is_finite() && *ms >= 0.0) && profile.iter().sum::<f64>() > 0.0, "{profile:?}");
    assert_eq!(prepared.dispatched(), u64::from(3 + kernels::gpu::PROFILE_RUNS) * u64::from(said), "the profile's runs count");
}

/// A decoder's prefill, decode step and ops one after the other on one device, as a run takes
/// them: the seeded weights stay on the device from case to case (kept, not generated and
/// uploaded again; the prefill's GEMMs join K and V, and gate and up, into one buffer each, which
/// the decode step's matvecs read apart: copied on the GPU), the KV caches the decode step writes
/// do not, and every output still matches the f64 reference; another dtype's weights replace them.
/// Kernels chosen for a CPU, whose matmuls of 16 rows join their weights.
#[test]
fn a_models_weights_stay_on_the_device_from_case_to_case_and_every_output_still_checks() {
    use kernels::model::decoder::{DecoderCase, LlamaConfig, Phase};
    let Some(mut gpu) = gpu() else { return };
    let sampling = Sampling { mode: SamplingMode::Isolated, warmup: WarmupPolicy::Fixed(0), samples: 1, max_time_ms: 1e9, target_ci_pct: None, nudge: kernels::Nudge::Auto, profile: false, gpu_timer: Default::default(), timer_cost: false };
    let mut plan = kernels::RunPlan { sampling, ..kernels::RunPlan::empty(kernels::Platform::Native) };
    gpu.adapt(&mut plan, &kernels::wire::AdapterReport { available: true, is_fallback_adapter: Some(true), ..Default::default() });
    // K and V 64 wide, gate and up 512: each a whole number of 256-byte views, so they join.
    let config = LlamaConfig { hidden: 256, heads: 8, kv_heads: 2, ffn: 512, layers: 2 };
    let decoder = |phase: Phase, dtype| DecoderCase { model: "test".into(), config, phase, ctx: 16, dtype, weights: None };
    let joined = decoder(Phase::Prefill, kernels::Dtype::F32).graph(1).lower(None, gpu.caps()).unwrap();
    assert!(joined.buffers.iter().filter(|b| b.constant && matches!(b.init, kernels::program::Init::Concat(_))).count() >= 2, "the prefill joins weights");
    let phases = [Phase::Prefill, Phase::Decode, Phase::Op("kv_write".into()), Phase::Op("attention".into()), Phase::Decode];
    let weights_of = |d: &DecoderCase| d.graph(1).tensors.iter().filter(|t| t.name.ends_with(".weight") && !t.name.contains("norm")).count();
    let mut kept_before = Vec::new();
    for (i, (phase, dtype)) in phases.into_iter().map(|p| (p, kernels::Dtype::F32)).chain([(Phase::Decode, kernels::Dtype::F16)]).enumerate() {
        let d = decoder(phase, dtype);
        let case = kernels::CaseSpec { workload: Some(kernels::Workload::Decoder(d.clone())), ..kernels::CaseSpec::new(&format!("case{i}"), kernels::Shape(vec![1]), 1) };
        kept_before.push(gpu.kept());
        let m = match pollster::block_on(gpu.run_case(&plan, &case, None, &mut NoClock, &mut kernels::sampling::CaseClock::start(), |_| {})) {
            Ok(m) => m,
            Err(kernels::gpu::GpuError::MissingFeature { .. }) => continue,
            Err(e) => panic!("{:?}: {e}", d.phase),
        };
        let got: Vec<f64> = le_bytes_to_f32s(&m.output_bytes().unwrap()).into_iter().map(f64::from).collect();
        let verdict = kernels::check::check(&got, &d.graph(1).evaluate(None).unwrap(), case.check_rule().unwrap());
        assert!(verdict.passed, "{:?} {dtype} after {i} cases on this device: {verdict:?}", d.phase);
        if i == 1 {
            assert!(gpu.kept() >= weights_of(&d), "the decode step's weights, apart, are kept: {} of {}", gpu.kept(), weights_of(&d));
        }
    }
    assert_eq!(kept_before[0], 0);
    assert!(kept_before[1] > 0 && kept_before[4] > 0, "{kept_before:?}");
}

#[test]
fn a_destroyed_device_fails_its_case_as_lost_and_the_next_case_gets_a_fresh_one() {
    let Some(mut gpu) = gpu() else { return };
    let sampling = Sampling { mode: SamplingMode::Isolated, warmup: WarmupPolicy::Fixed(0), samples: 2, max_time_ms: 1e9, target_ci_pct: None, nudge: kernels::Nudge::Auto, profile: false, gpu_timer: Default::default(), timer_cost: false };
    let plan = kernels::RunPlan { sampling, ..kernels::RunPlan::empty(kernels::Platform::Native) };
    let run = |gpu: &mut Gpu, kernel: &str| {
        let case = kernels::CaseSpec::new(kernel, kernels::Shape(vec![4096]), 1);
        pollster::block_on(gpu.run_case(&plan, &case, None, &mut NoClock, &mut kernels::sampling::CaseClock::start(), |_| {}))
    };
    match run(&mut gpu, "selftest_lose_device") {
        Err(e @ kernels::gpu::GpuError::DeviceLost(_)) => {
            assert!(e.to_string().contains("destroyed"), "{e}");
            assert!(e.for_case("x").device_lost);
        }
        other => panic!("expected a lost device, got {:?}", other.map(|m| m.case_id)),
    }
    assert_eq!(gpu.lost(), None, "replaced by a fresh device");
    let m = run(&mut gpu, "add").expect("the next case runs on the fresh device");
    let kernel = catalog::find("add").unwrap();
    let shape = kernels::Shape(vec![4096]);
    let out = le_bytes_to_f32s(&m.output_bytes().unwrap());
    assert!(compare(&out, &kernel.reference(&shape, &kernel.inputs(&shape, 1)), kernel.tolerance(&shape)).passed);
}
