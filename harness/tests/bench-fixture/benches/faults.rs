//! One bench of each outcome: passed, error (a panic), failed (a wrong output), unchecked (no
//! reference), and one that never ends.

use harness_bench::{black_box, Benches, Tolerance};

fn sum(n: u32) -> u64 {
    (0..n).map(u64::from).sum()
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
        let module = gpu.device.create_shader_module(harness_bench::wgpu::ShaderModuleDescriptor {
            label: Some("bad"),
            source: harness_bench::wgpu::ShaderSource::Wgsl("@compute @workgroup_size(1) fn main() { let x = not_defined_anywhere; }".into()),
        });
        let pipeline = gpu.device.create_compute_pipeline(&harness_bench::wgpu::ComputePipelineDescriptor {
            label: Some("bad"),
            layout: None,
            module: &module,
            entry_point: Some("main"),
            compilation_options: Default::default(),
            cache: None,
        });
        harness_bench::GpuWork::in_pass(move |pass| {
            pass.set_pipeline(&pipeline);
            pass.dispatch_workgroups(1, 1, 1);
        })
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
