//! The quickstart's benches: `harness bench --manifest-path examples/bench-quickstart/Cargo.toml`
//! runs them in browsers (CPU benches as WASM, GPU benches on WebGPU) and natively.

use bench_quickstart::{dot_scalar, dot_simd, inputs, SUM_CHUNK, SUM_WGSL};
use harness_bench::wgpu::{self, util::DeviceExt};
use harness_bench::{black_box, Benches, GpuContext, GpuWork, Tolerance};

/// The exact dot product, in f64: the reference both dot products are checked against.
fn dot_f64(n: usize) -> Vec<f64> {
    let (a, b) = (inputs(n, 1), inputs(n, 2));
    vec![a.iter().zip(&b).map(|(x, y)| *x as f64 * *y as f64).sum()]
}

/// A CPU bench per dot product and size: the size sweep.
fn dot_products(c: &mut Benches) {
    for n in [1 << 10, 1 << 14, 1 << 18] {
        for (name, dot) in [("dot/scalar", dot_scalar as fn(&[f32], &[f32]) -> f32), ("dot/simd", dot_simd)] {
            c.cpu(name)
                .param(n)
                .flops(2.0 * n as f64)
                .bytes(8.0 * n as f64)
                // An f32 sum of n products drifts from the exact one by about sqrt(n) roundings.
                .reference(move || dot_f64(n), Tolerance { abs: 0.0, rel: 1e-3 })
                .run(move |b| {
                    let (x, y) = (inputs(n, 1), inputs(n, 2));
                    b.iter(|| dot(black_box(&x), black_box(&y)));
                });
        }
    }
}

/// A GPU bench of two dispatches, a two-pass sum, at three sizes.
fn gpu_sum(c: &mut Benches) {
    for n in [1u32 << 16, 1 << 20, 1 << 22] {
        c.gpu("sum/two-pass")
            .param(n)
            .bytes(4.0 * n as f64)
            .elements(n as f64)
            .reference(move || vec![inputs(n as usize, 3).iter().map(|&x| x as f64).sum()], Tolerance { abs: 0.0, rel: 1e-5 })
            .run(move |gpu| async move { sum_work(&gpu, n) });
    }
}

/// Buffers, pipelines and bind groups of the two-pass sum over `n` inputs.
fn sum_work(gpu: &GpuContext, n: u32) -> GpuWork {
    let device = &gpu.device;
    let groups = n.div_ceil(SUM_CHUNK);
    let storage = wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC;
    let input = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: Some("input"),
        contents: &inputs(n as usize, 3).iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>(),
        usage: storage,
    });
    let partials = device.create_buffer(&wgpu::BufferDescriptor { label: Some("partials"), size: 4 * groups as u64, usage: storage, mapped_at_creation: false });
    let out = device.create_buffer(&wgpu::BufferDescriptor { label: Some("out"), size: 4, usage: storage, mapped_at_creation: false });
    let params = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: Some("params"),
        contents: &[n.to_le_bytes(), groups.to_le_bytes()].concat(),
        usage: wgpu::BufferUsages::UNIFORM,
    });
    let module = device.create_shader_module(wgpu::ShaderModuleDescriptor { label: Some("sum"), source: wgpu::ShaderSource::Wgsl(SUM_WGSL.into()) });
    let pipeline = |entry: &str| {
        device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some(entry),
            layout: None,
            module: &module,
            entry_point: Some(entry),
            compilation_options: Default::default(),
            cache: None,
        })
    };
    let (partial, total) = (pipeline("partial"), pipeline("total"));
    let bind = |p: &wgpu::ComputePipeline, buffers: &[(u32, &wgpu::Buffer)]| {
        let entries: Vec<wgpu::BindGroupEntry> = buffers.iter().map(|&(binding, b)| wgpu::BindGroupEntry { binding, resource: b.as_entire_binding() }).collect();
        device.create_bind_group(&wgpu::BindGroupDescriptor { label: None, layout: &p.get_bind_group_layout(0), entries: &entries })
    };
    let first = bind(&partial, &[(0, &input), (1, &partials), (3, &params)]);
    let second = bind(&total, &[(1, &partials), (2, &out), (3, &params)]);
    GpuWork::new(move |encoder| {
        let mut pass = encoder.begin_compute_pass(&Default::default());
        pass.set_pipeline(&partial);
        pass.set_bind_group(0, &first, &[]);
        pass.dispatch_workgroups(groups, 1, 1);
        drop(pass);
        let mut pass = encoder.begin_compute_pass(&Default::default());
        pass.set_pipeline(&total);
        pass.set_bind_group(0, &second, &[]);
        pass.dispatch_workgroups(1, 1, 1);
    })
    .output_f32(&out)
}

harness_bench::group!(benches, dot_products, gpu_sum);
harness_bench::main!(benches);
