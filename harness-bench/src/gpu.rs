//! GPU benches: the passes a user records, timed by harness's own GPU timer
//! ([`kernels::gpu::Gpu::measure_work`]): batches of back-to-back runs, GPU timestamps around
//! each batch where the adapter has them, steady or isolated sampling; or work that submits its
//! own command buffers (a framework such as burn), timed around its submissions
//! ([`kernels::gpu::Gpu::measure_submitted`]).

use kernels::gpu::Recorded;
use std::future::Future;
use std::pin::Pin;

/// The device a GPU bench builds on: the browser's WebGPU adapter in the page, Vulkan, Metal or
/// DX12 natively. Everything a framework needs to be set up on it (cubecl-wgpu's `init_device`
/// takes the instance, adapter, device, queue and backend). Cheap to clone.
#[derive(Clone)]
pub struct GpuContext {
    /// The instance the adapter came from.
    pub instance: wgpu::Instance,
    /// The adapter.
    pub adapter: wgpu::Adapter,
    /// The device, with `timestamp-query`, `shader-f16` and `subgroups` where the adapter offers
    /// them, and the adapter's full limits.
    pub device: wgpu::Device,
    /// Its queue: work that submits itself ([`GpuWork::submitted`]) submits here.
    pub queue: wgpu::Queue,
    /// The adapter's backend: `BrowserWebGpu` in the page, Vulkan, Metal or DX12 natively.
    pub backend: wgpu::Backend,
}

impl GpuContext {
    /// The context of harness's device `gpu`.
    pub(crate) fn of(gpu: &kernels::gpu::Gpu) -> Self {
        GpuContext {
            instance: gpu.instance().clone(),
            adapter: gpu.adapter().clone(),
            device: gpu.device().clone(),
            queue: gpu.queue().clone(),
            backend: gpu.info.backend,
        }
    }
}

/// One run of work that submits itself, given the context.
type SubmitRun = Box<dyn Fn(GpuContext) -> Pin<Box<dyn Future<Output = ()>>>>;

/// A readback of the bench's own (or its framework's), after the timing.
type ReadOutput = Box<dyn Fn(GpuContext) -> Pin<Box<dyn Future<Output = Vec<f64>>>>>;

/// An output buffer and how its bytes read.
enum OutputBuffer {
    F32(wgpu::Buffer),
    U32(wgpu::Buffer),
}

/// How a run is recorded.
enum Record {
    /// Into the encoder: passes of the bench's own.
    Encoder(Box<dyn Fn(&mut wgpu::CommandEncoder)>),
    /// Into one compute pass that harness opens for the whole batch.
    Pass(Box<dyn Fn(&mut wgpu::ComputePass<'_>)>),
    /// Nowhere: the run records and submits its own command buffers.
    Submitted(SubmitRun),
}

/// What a GPU bench times: one run, recorded back to back, and the buffers whose contents after
/// the timing are its output.
pub struct GpuWork {
    record: Record,
    outputs: Vec<OutputBuffer>,
    /// Values the bench reads back itself, after those of `outputs`.
    read: Option<ReadOutput>,
}

impl GpuWork {
    /// Work that `record` records into the encoder it is given: one run of the bench (any
    /// number of passes and dispatches). It is called once per run, many times per encoder.
    pub fn new(record: impl Fn(&mut wgpu::CommandEncoder) + 'static) -> Self {
        GpuWork { record: Record::Encoder(Box::new(record)), outputs: Vec::new(), read: None }
    }

    /// Work that `record` records into a compute pass: one run of the bench (dispatches only).
    /// harness opens one pass for a whole batch of runs, with the GPU timestamps on it, as it times
    /// its own kernels. A pass per run ([`GpuWork::new`]) costs a synchronisation between runs that
    /// some implementations do not make between dispatches of one pass (wgpu's, natively and in
    /// Firefox: about 6 µs a run on an H100, docs/hardware/h100-bench.md).
    pub fn in_pass(record: impl Fn(&mut wgpu::ComputePass<'_>) + 'static) -> Self {
        GpuWork { record: Record::Pass(Box::new(record)), outputs: Vec::new(), read: None }
    }

    /// Work that submits its own command buffers: `run` is one run of the bench, given the
    /// context; it records and submits on [`GpuContext::queue`] (as a framework set up on that
    /// device does) and may await. Runs are awaited one after another. harness times each batch
    /// of runs: natively between timestamp-only submissions on the same queue before and after
    /// it (the queue runs its submissions in order, so that is the batch's GPU span); in the
    /// browser by the page's GPU timer, which times every compute pass submitted (span and busy).
    /// A run that submits nothing is an error. Natively, a run that awaits a mapping must poll
    /// the device, as wgpu requires (frameworks do).
    pub fn submitted<F, Fut>(run: F) -> Self
    where
        F: Fn(GpuContext) -> Fut + 'static,
        Fut: Future<Output = ()> + 'static,
    {
        GpuWork { record: Record::Submitted(Box::new(move |gpu| Box::pin(run(gpu)))), outputs: Vec::new(), read: None }
    }

    /// Reads (part of) the output back with `read`, after the timing and after the buffers of
    /// [`GpuWork::output_f32`]: a framework's own readback (burn's `into_data`), whose values are
    /// checked against the bench's reference like any output. Natively, a readback that waits for
    /// a mapping must poll the device, as wgpu requires (frameworks do).
    pub fn output_read<F, Fut>(mut self, read: F) -> Self
    where
        F: Fn(GpuContext) -> Fut + 'static,
        Fut: Future<Output = Vec<f64>> + 'static,
    {
        self.read = Some(Box::new(move |gpu| Box::pin(read(gpu))));
        self
    }

    /// The values the bench reads back itself ([`GpuWork::output_read`]), if it does.
    pub(crate) async fn read_output(&self, gpu: GpuContext) -> Vec<f64> {
        match &self.read {
            Some(read) => read(gpu).await,
            None => Vec::new(),
        }
    }

    /// The run, where the work submits itself.
    pub(crate) fn submitter(&self) -> Option<&SubmitRun> {
        match &self.record {
            Record::Submitted(run) => Some(run),
            _ => None,
        }
    }

    /// Reads `buffer` (`f32`s; it needs `COPY_SRC`) back after the timing as (part of) the output:
    /// its contents after every timed run, so a run that reads what it writes (in place) is
    /// checked after many runs, not one.
    pub fn output_f32(mut self, buffer: &wgpu::Buffer) -> Self {
        readable(buffer);
        self.outputs.push(OutputBuffer::F32(buffer.clone()));
        self
    }

    /// Reads `buffer` (`u32`s; it needs `COPY_SRC`) back after the timing as (part of) the output.
    pub fn output_u32(mut self, buffer: &wgpu::Buffer) -> Self {
        readable(buffer);
        self.outputs.push(OutputBuffer::U32(buffer.clone()));
        self
    }

    /// The output buffers and their sizes, for [`kernels::gpu::Gpu::read_buffers`].
    pub(crate) fn output_buffers(&self) -> Vec<(&wgpu::Buffer, u64)> {
        self.outputs
            .iter()
            .map(|o| match o {
                OutputBuffer::F32(b) | OutputBuffer::U32(b) => (b, b.size()),
            })
            .collect()
    }

    /// The bytes [`GpuWork::output_buffers`] read, as values.
    pub(crate) fn decode(&self, bytes: &[u8]) -> Vec<f64> {
        let mut values = Vec::new();
        let mut at = 0usize;
        for o in &self.outputs {
            let (b, float) = match o {
                OutputBuffer::F32(b) => (b, true),
                OutputBuffer::U32(b) => (b, false),
            };
            let len = b.size() as usize;
            for c in bytes[at..at + len].chunks_exact(4) {
                let raw = [c[0], c[1], c[2], c[3]];
                values.push(if float { f32::from_le_bytes(raw) as f64 } else { u32::from_le_bytes(raw) as f64 });
            }
            at += len;
        }
        values
    }
}

/// Refuses, by name, an output buffer harness cannot copy back, before WebGPU refuses the copy
/// with a validation error that names neither the bench nor the fix.
fn readable(buffer: &wgpu::Buffer) {
    assert!(
        buffer.usage().contains(wgpu::BufferUsages::COPY_SRC),
        "an output buffer of GpuWork must be created with BufferUsages::COPY_SRC (it is read back after the timing to be checked); this one has {:?}",
        buffer.usage()
    );
}

impl Recorded for GpuWork {
    fn record(&self, encoder: &mut wgpu::CommandEncoder, batch: u32, timestamps: Option<wgpu::ComputePassTimestampWrites<'_>>) {
        let record = match &self.record {
            Record::Encoder(record) => record,
            // The runner times it with Gpu::measure_submitted instead: nothing to record.
            Record::Submitted(_) => return,
            Record::Pass(record) => {
                let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor { label: Some("batch"), timestamp_writes: timestamps });
                for _ in 0..batch {
                    record(&mut pass);
                }
                return;
            }
        };
        // The user's passes are their own: the batch's timestamps go on empty passes around
        // them. Passes run in order, so the first begins before the batch and the last ends
        // after it.
        let around = |begin: bool| {
            timestamps.as_ref().map(|t| wgpu::ComputePassTimestampWrites {
                query_set: t.query_set,
                beginning_of_pass_write_index: if begin { t.beginning_of_pass_write_index } else { None },
                end_of_pass_write_index: if begin { None } else { t.end_of_pass_write_index },
            })
        };
        if let Some(writes) = around(true) {
            encoder.begin_compute_pass(&wgpu::ComputePassDescriptor { label: Some("batch begins"), timestamp_writes: Some(writes) });
        }
        for _ in 0..batch {
            record(encoder);
        }
        if let Some(writes) = around(false) {
            encoder.begin_compute_pass(&wgpu::ComputePassDescriptor { label: Some("batch ends"), timestamp_writes: Some(writes) });
        }
    }
}
