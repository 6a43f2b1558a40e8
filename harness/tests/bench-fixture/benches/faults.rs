//! One bench of each outcome: passed, error (a panic), failed (a wrong output), unchecked (no
//! reference), and one that never ends; shaders the browser rejects, and one that enables
//! `subgroups` as frameworks' browser shaders do.

use harness_bench::{black_box, wgpu, Benches, GpuContext, Tolerance};

fn sum(n: u32) -> u64 {
    (0..n).map(u64::from).sum()
}

const BAD_SHADER: &str = "@compute @workgroup_size(1) fn main() { let x = not_defined_anywhere; }";
/// 1.0 wherever a subgroup's sum of ones is at least one; the sum is taken in a branch on a value
/// read from memory, which Tint cannot prove subgroup-uniform (cubecl-wgpu's matmul does the same).
const SUBGROUP_SHADER: &str = "@group(0) @binding(0) var<storage, read_write> out: array<f32>;
@compute @workgroup_size(64) fn main(@builtin(local_invocation_index) i: u32) {
  var sum = 0u;
  if (out[i] >= 0.0) { sum = subgroupAdd(1u); }
  out[i] = select(0.0, 1.0, sum >= 1u);
}";
/// WebGPU's WGSL needs the directive; wgpu's native WGSL front end (naga) takes the feature from
/// the device instead.
const ENABLE_SUBGROUPS: &str = if cfg!(target_arch = "wasm32") { "enable subgroups;\n" } else { "" };

/// A compute pipeline of `code`'s `main`.
fn pipeline(gpu: &GpuContext, code: &str) -> wgpu::ComputePipeline {
    let module = gpu.device.create_shader_module(wgpu::ShaderModuleDescriptor { label: Some("fixture"), source: wgpu::ShaderSource::Wgsl(code.into()) });
    gpu.device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: Some("fixture"),
        layout: None,
        module: &module,
        entry_point: Some("main"),
        compilation_options: Default::default(),
        cache: None,
    })
}

fn outcomes(c: &mut Benches) {
    let exact = Tolerance { abs: 0.0, rel: 0.0 };
    c.cpu("ok").reference(|| vec![4950.0], exact).run(|b| b.iter(|| sum(black_box(100))));
    c.cpu("panics").reference(|| vec![4950.0], exact).run(|b| {
        b.iter(|| sum(black_box(100)));
        panic!("deliberate panic in a bench");
    });
    // The code sums 0..100 and the reference says 0..=100: a wrong answer the check must catch.
    c.cpu("wrong").reference(|| vec![5050.0], exact).run(|b| b.iter(|| sum(black_box(100))));
    c.cpu("unchecked").run(|b| b.iter(|| sum(black_box(100))));
    // A shader with an unknown identifier: the case fails with the compiler's message.
    c.gpu("bad-shader").run(|gpu| async move {
        let pipeline = pipeline(&gpu, BAD_SHADER);
        harness_bench::GpuWork::in_pass(move |pass| {
            pass.set_pipeline(&pipeline);
            pass.dispatch_workgroups(1, 1, 1);
        })
    });
    // A framework that gives up on a rejected shader with a panic of its own, as cubecl-wgpu does:
    // the panic's message comes with the compiler's.
    c.gpu("rejected-then-panics").run(|gpu| async move {
        let _ = pipeline(&gpu, BAD_SHADER);
        panic!("deliberate panic after a rejected shader");
    });
    // A browser shader that enables `subgroups`, as cubecl-wgpu writes them: it compiles only on a
    // device given the feature, and with Tint's subgroup-uniformity rule off.
    c.gpu("enables-subgroups").reference(|| vec![1.0; 64], exact).run(|gpu| async move {
        let out = gpu.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("out"),
            size: 64 * 4,
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
            mapped_at_creation: false,
        });
        let pipeline = pipeline(&gpu, &format!("{ENABLE_SUBGROUPS}{SUBGROUP_SHADER}"));
        let bind_group = gpu.device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("subgroups"),
            layout: &pipeline.get_bind_group_layout(0),
            entries: &[wgpu::BindGroupEntry { binding: 0, resource: out.as_entire_binding() }],
        });
        harness_bench::GpuWork::in_pass(move |pass| {
            pass.set_pipeline(&pipeline);
            pass.set_bind_group(0, &bind_group, &[]);
            pass.dispatch_workgroups(1, 1, 1);
        })
        .output_f32(&out)
    });
    c.cpu("slow").param(1).reference(|| vec![4950.0], exact).run(|b| b.iter(|| sum(black_box(100))));
    c.cpu("slow").param(2).reference(|| vec![4950.0], exact).run(|b| b.iter(|| sum(black_box(100))));
    // Never returns, and so never reports anything.
    c.cpu("hangs").run(|b| {
        b.iter(|| {
            let mut total = 0u64;
            while !black_box(false) {
                total = total.wrapping_add(sum(black_box(100)));
            }
            total
        })
    });
}

harness_bench::group!(benches, outcomes);
harness_bench::main!(benches);
