//! The catalogue's `matmul` (its default variant, seed 1) as a GPU bench through harness-bench's
//! public API only: the same WGSL, inputs and dispatch that `harness run --filter matmul` times,
//! set up and recorded here with plain wgpu. benches/matmul.rs registers it at 1024³ and 4096³;
//! examples/bench-burn registers it beside burn's matmul.

use harness_bench::wgpu::{self, util::DeviceExt};
use harness_bench::{Bench, Benches, Gpu, GpuContext, GpuWork};
use kernels::program::Program;
use kernels::{catalog, Kernel, Shape};

/// How the bench records a run: in the one pass harness opens per batch (as harness times its own
/// kernels), or in a pass of its own.
#[derive(Clone, Copy)]
pub enum Passes {
    /// In the pass harness opens for a batch ([`GpuWork::in_pass`]).
    One,
    /// In a compute pass of its own ([`GpuWork::new`]).
    PerRun,
}

/// Registers the catalogue's `matmul` at `n`³ as the GPU bench `name@{n}x{n}x{n}`, recorded as
/// `passes` says and checked against the catalogue's f64 reference.
pub fn register(c: &mut Benches, name: &str, passes: Passes, n: u32) {
    let shape = Shape(vec![n, n, n]);
    catalogue_bench(c, name, "matmul", &shape).run(move |gpu| {
        let shape = shape.clone();
        async move { work(&gpu, Program::of_kernel(find("matmul"), &shape, &catalogue_inputs("matmul", &shape)), passes) }
    });
}

/// The GPU bench `name@SHAPE` of the catalogue's kernel `kernel` at `shape`, with its FLOPs, bytes,
/// f64 reference (on its inputs at seed 1: [`catalogue_inputs`]) and tolerance, ready for a `run`
/// of any code that computes the same.
pub fn catalogue_bench<'a>(c: &'a mut Benches, name: &str, kernel: &'static str, shape: &Shape) -> Bench<'a, Gpu> {
    let k = find(kernel);
    let reference_shape = shape.clone();
    c.gpu(name)
        .param(shape.to_string())
        .flops(k.flops(shape))
        .bytes(k.bytes(shape))
        .reference(move || k.reference(&reference_shape, &catalogue_inputs(kernel, &reference_shape)), k.tolerance(shape))
}

/// The catalogue kernel `kernel`'s inputs at `shape`, seed 1: what `harness run` computes on.
pub fn catalogue_inputs(kernel: &str, shape: &Shape) -> Vec<Vec<f32>> {
    find(kernel).inputs(shape, 1)
}

/// The catalogue's kernel `kernel`; a name it lacks is the bench's mistake.
fn find(kernel: &str) -> &'static dyn Kernel {
    catalog::find(kernel).unwrap_or_else(|| panic!("the catalogue has no `{kernel}`"))
}

/// The program's buffers, pipelines and bind groups, and one run of its dispatches.
fn work(gpu: &GpuContext, program: Program, passes: Passes) -> GpuWork {
    let device = &gpu.device;
    let buffers: Vec<wgpu::Buffer> = program
        .buffers
        .iter()
        .map(|b| {
            let usage = wgpu::BufferUsages::COPY_DST
                | if b.uniform { wgpu::BufferUsages::UNIFORM } else { wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC };
            match b.init.bytes() {
                Some(bytes) => device.create_buffer_init(&wgpu::util::BufferInitDescriptor { label: Some(&b.label), contents: &bytes, usage }),
                None => device.create_buffer(&wgpu::BufferDescriptor { label: Some(&b.label), size: b.init.len(), usage, mapped_at_creation: false }),
            }
        })
        .collect();
    let pipelines: Vec<wgpu::ComputePipeline> = program
        .shaders
        .iter()
        .map(|s| {
            let module = device.create_shader_module(wgpu::ShaderModuleDescriptor { label: Some(&s.label), source: wgpu::ShaderSource::Wgsl(s.wgsl.as_str().into()) });
            device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                label: Some(&s.label),
                layout: None,
                module: &module,
                entry_point: Some(&s.entry),
                compilation_options: Default::default(),
                cache: None,
            })
        })
        .collect();
    let steps: Vec<(wgpu::ComputePipeline, wgpu::BindGroup, [u32; 3])> = program
        .steps
        .iter()
        .map(|step| {
            let pipeline = pipelines[step.shader].clone();
            let entries: Vec<wgpu::BindGroupEntry> = step.bindings.iter().map(|&(binding, b)| wgpu::BindGroupEntry { binding, resource: buffers[b].as_entire_binding() }).collect();
            let group = device.create_bind_group(&wgpu::BindGroupDescriptor { label: None, layout: &pipeline.get_bind_group_layout(0), entries: &entries });
            (pipeline, group, step.workgroups)
        })
        .collect();
    let outputs: Vec<wgpu::Buffer> = program.outputs.iter().map(|&i| buffers[i].clone()).collect();
    let run = move |pass: &mut wgpu::ComputePass<'_>| {
        for (pipeline, group, [x, y, z]) in &steps {
            pass.set_pipeline(pipeline);
            pass.set_bind_group(0, group, &[]);
            pass.dispatch_workgroups(*x, *y, *z);
        }
    };
    let mut work = match passes {
        Passes::One => GpuWork::in_pass(run),
        Passes::PerRun => GpuWork::new(move |encoder| run(&mut encoder.begin_compute_pass(&Default::default()))),
    };
    for out in &outputs {
        work = work.output_f32(out);
    }
    work
}
