//! Work that submits its own command buffers (`GpuWork::submitted`), as a framework does: two
//! command buffers a run, checked right; the same checked against a wrong reference; the same
//! read back by the bench itself (`GpuWork::output_read`, as a framework's `into_data`); and a run
//! that never submits.

use harness_bench::wgpu::{self, util::DeviceExt};
use harness_bench::{Benches, GpuContext, GpuWork, Tolerance};
use std::rc::Rc;

const N: u32 = 4096;
const SHADER: &str = "@group(0) @binding(0) var<storage, read> src: array<f32>;
@group(0) @binding(1) var<storage, read_write> dst: array<f32>;
@compute @workgroup_size(64) fn double(@builtin(global_invocation_id) i: vec3u) { dst[i.x] = src[i.x] * 2.0; }
@compute @workgroup_size(64) fn add_one(@builtin(global_invocation_id) i: vec3u) { dst[i.x] = src[i.x] + 1.0; }";

/// One step of the work: `entry` over `src` into `dst`, in a command buffer of its own.
struct Step {
    pipeline: wgpu::ComputePipeline,
    bind_group: wgpu::BindGroup,
}

fn step(gpu: &GpuContext, module: &wgpu::ShaderModule, entry: &str, src: &wgpu::Buffer, dst: &wgpu::Buffer) -> Step {
    let pipeline = gpu.device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: Some(entry),
        layout: None,
        module,
        entry_point: Some(entry),
        compilation_options: Default::default(),
        cache: None,
    });
    let bind_group = gpu.device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: Some(entry),
        layout: &pipeline.get_bind_group_layout(0),
        entries: &[wgpu::BindGroupEntry { binding: 0, resource: src.as_entire_binding() }, wgpu::BindGroupEntry { binding: 1, resource: dst.as_entire_binding() }],
    });
    Step { pipeline, bind_group }
}

/// How a bench's output comes back: the buffer named to harness, or the bench's own readback.
#[derive(Clone, Copy, PartialEq)]
enum Output {
    Buffer,
    ReadItself,
}

/// `x * 2 + 1` over 0..N: doubled in one command buffer, one added in a second, each submitted on
/// the queue harness gave; the output is the second's buffer.
async fn two_submissions(gpu: GpuContext, submit: bool, output: Output) -> GpuWork {
    let input: Vec<f32> = (0..N).map(|i| i as f32).collect();
    let storage = wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC;
    let x = gpu.device.create_buffer_init(&wgpu::util::BufferInitDescriptor { label: Some("x"), contents: bytes(&input), usage: storage });
    let empty = |label| gpu.device.create_buffer(&wgpu::BufferDescriptor { label: Some(label), size: u64::from(N) * 4, usage: storage, mapped_at_creation: false });
    let (doubled, out) = (empty("doubled"), empty("out"));
    let module = gpu.device.create_shader_module(wgpu::ShaderModuleDescriptor { label: Some("submits"), source: wgpu::ShaderSource::Wgsl(SHADER.into()) });
    let steps = Rc::new([step(&gpu, &module, "double", &x, &doubled), step(&gpu, &module, "add_one", &doubled, &out)]);
    let work = GpuWork::submitted(move |gpu: GpuContext| {
        let steps = steps.clone();
        async move {
            if !submit {
                return;
            }
            for s in steps.iter() {
                let mut encoder = gpu.device.create_command_encoder(&Default::default());
                let mut pass = encoder.begin_compute_pass(&Default::default());
                pass.set_pipeline(&s.pipeline);
                pass.set_bind_group(0, &s.bind_group, &[]);
                pass.dispatch_workgroups(N / 64, 1, 1);
                drop(pass);
                gpu.queue.submit([encoder.finish()]);
            }
        }
    });
    match output {
        Output::Buffer => work.output_f32(&out),
        Output::ReadItself => work.output_read(move |gpu| read_back(gpu, out.clone())),
    }
}

/// `buffer` copied to a buffer of its own, mapped and read, as a framework reads a tensor back.
async fn read_back(gpu: GpuContext, buffer: wgpu::Buffer) -> Vec<f64> {
    let staging = gpu.device.create_buffer(&wgpu::BufferDescriptor { label: Some("read back"), size: buffer.size(), usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST, mapped_at_creation: false });
    let mut encoder = gpu.device.create_command_encoder(&Default::default());
    encoder.copy_buffer_to_buffer(&buffer, 0, &staging, 0, buffer.size());
    gpu.queue.submit([encoder.finish()]);
    let (tx, rx) = futures_channel::oneshot::channel();
    staging.slice(..).map_async(wgpu::MapMode::Read, move |r| {
        let _ = tx.send(r);
    });
    // Natively the callback fires inside poll; in the browser, from the event loop.
    #[cfg(not(target_arch = "wasm32"))]
    gpu.device.poll(wgpu::PollType::wait_indefinitely()).expect("the device answers");
    rx.await.expect("the mapping callback runs").expect("the buffer maps");
    let values = staging.slice(..).get_mapped_range().expect("mapped").chunks_exact(4).map(|c| f64::from(f32::from_le_bytes([c[0], c[1], c[2], c[3]]))).collect();
    staging.unmap();
    values
}

fn bytes(v: &[f32]) -> &[u8] {
    // SAFETY: f32 has no padding and any byte pattern is a valid u8.
    unsafe { std::slice::from_raw_parts(v.as_ptr().cast(), std::mem::size_of_val(v)) }
}

fn submits(c: &mut Benches) {
    let exact = Tolerance { abs: 0.0, rel: 0.0 };
    let right = || (0..N).map(|i| f64::from(i) * 2.0 + 1.0).collect();
    c.gpu("two-submissions").elements(f64::from(N)).reference(right, exact).run(|gpu| two_submissions(gpu, true, Output::Buffer));
    // The reference says x * 2 + 2: the check must catch it, in harness's readback and the bench's own.
    let wrong = || (0..N).map(|i| f64::from(i) * 2.0 + 2.0).collect();
    c.gpu("wrong").reference(wrong, exact).run(|gpu| two_submissions(gpu, true, Output::Buffer));
    c.gpu("reads-itself").reference(right, exact).run(|gpu| two_submissions(gpu, true, Output::ReadItself));
    c.gpu("reads-itself-wrong").reference(wrong, exact).run(|gpu| two_submissions(gpu, true, Output::ReadItself));
    c.gpu("never-submits").reference(right, exact).run(|gpu| two_submissions(gpu, false, Output::Buffer));
}

harness_bench::group!(benches, submits);
harness_bench::main!(benches);
