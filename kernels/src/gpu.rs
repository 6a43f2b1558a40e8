//! Dispatching a kernel through wgpu and timing it: the browser's WebGPU on wasm32, Vulkan, Metal
//! or DX12 natively. One code path, so the page and `--platform native` measure the same thing.

use crate::model::weights::Weights;
use crate::program::Program;
pub use crate::sampling::now_ms;
use crate::sampling::{sample, Sampling, Timed, WarmupStop};
use crate::wire::{Sample, StopReason};
use futures_channel::oneshot;
use wgpu::util::DeviceExt;

/// Most timed samples per case that get GPU timestamps (a query set holds at most 4096 queries,
/// two per sample); later samples keep their wall-clock time.
pub const MAX_TIMESTAMPED_SAMPLES: u32 = 2048;

/// Why the GPU could not run a case.
#[derive(Debug, thiserror::Error)]
pub enum GpuError {
    /// No adapter was granted.
    #[error("no GPU adapter was found: {0}")]
    NoAdapter(String),
    /// The adapter refused a device.
    #[error("the adapter refused a device: {0}")]
    Device(String),
    /// Shader compilation or pipeline validation failed.
    #[error("{kernel}: the shader or pipeline was rejected: {message}")]
    Pipeline {
        /// Kernel name.
        kernel: String,
        /// The validation message.
        message: String,
    },
    /// Reading a buffer back failed.
    #[error("reading a GPU buffer back failed: {0}")]
    Map(String),
    /// Waiting for submitted work failed (device lost, timeout).
    #[error("waiting for the GPU failed: {0}")]
    Wait(String),
}

/// An adapter, its device and queue, and whether GPU timestamps are available.
pub struct Gpu {
    /// What wgpu reports about the adapter.
    pub info: wgpu::AdapterInfo,
    /// True when the device was created with `timestamp-query`.
    pub timestamps: bool,
    device: wgpu::Device,
    queue: wgpu::Queue,
}

impl Gpu {
    /// Requests the high-performance adapter and a device with its full limits, plus
    /// `timestamp-query` where the adapter offers it.
    pub async fn new() -> Result<Gpu, GpuError> {
        let instance = wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle());
        let adapter = instance
            .request_adapter(&wgpu::RequestAdapterOptions {
                power_preference: wgpu::PowerPreference::HighPerformance,
                ..Default::default()
            })
            .await
            .map_err(|e| GpuError::NoAdapter(e.to_string()))?;
        let timestamps = adapter.features().contains(wgpu::Features::TIMESTAMP_QUERY);
        let required_features = if timestamps {
            wgpu::Features::TIMESTAMP_QUERY
        } else {
            wgpu::Features::empty()
        };
        let (device, queue) = adapter
            .request_device(&wgpu::DeviceDescriptor {
                label: Some("harness"),
                required_features,
                required_limits: adapter.limits(),
                ..Default::default()
            })
            .await
            .map_err(|e| GpuError::Device(e.to_string()))?;
        Ok(Gpu {
            info: adapter.get_info(),
            timestamps,
            device,
            queue,
        })
    }

    /// The adapter as a report: what wgpu says of it, its features, and a fallback flag that is
    /// true when wgpu classes the device as a CPU.
    pub fn report(&self) -> crate::wire::AdapterReport {
        let i = &self.info;
        let limits = self.device.limits();
        crate::wire::AdapterReport {
            available: true,
            reason: None,
            vendor: format!("0x{:04x}", i.vendor),
            architecture: format!("{:?}", i.device_type),
            device: i.name.clone(),
            description: format!("{} ({:?}; driver: {} {})", i.name, i.backend, i.driver, i.driver_info).trim().to_string(),
            is_fallback_adapter: Some(i.device_type == wgpu::DeviceType::Cpu),
            features: self.device.features().iter_names().map(|(n, _)| n.to_lowercase().replace('_', "-")).collect(),
            limits: [
                ("maxStorageBufferBindingSize", limits.max_storage_buffer_binding_size as f64),
                ("maxComputeWorkgroupStorageSize", limits.max_compute_workgroup_storage_size as f64),
                ("maxComputeInvocationsPerWorkgroup", limits.max_compute_invocations_per_workgroup as f64),
                ("maxComputeWorkgroupsPerDimension", limits.max_compute_workgroups_per_dimension as f64),
            ]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect(),
            user_agent: format!("wgpu ({:?})", i.backend),
            cross_origin_isolated: false,
        }
    }

    /// Creates the program's buffers, compiles its pipelines (timed) and bind groups, and readies
    /// room for `samples` GPU timestamps.
    pub async fn prepare(&self, label: &str, program: &Program, samples: u32) -> Result<Prepared, GpuError> {
        let scope = self.device.push_error_scope(wgpu::ErrorFilter::Validation);
        let buffers: Vec<wgpu::Buffer> = program
            .buffers
            .iter()
            .map(|b| {
                let usage = wgpu::BufferUsages::COPY_DST
                    | match b.uniform {
                        true => wgpu::BufferUsages::UNIFORM,
                        false => wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
                    };
                match b.init.bytes() {
                    Some(bytes) => self.device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                        label: Some(&b.label),
                        contents: &bytes,
                        usage,
                    }),
                    None => self.device.create_buffer(&wgpu::BufferDescriptor {
                        label: Some(&b.label),
                        size: b.init.len(),
                        usage,
                        mapped_at_creation: false,
                    }),
                }
            })
            .collect();
        let t0 = now_ms();
        let pipelines: Vec<wgpu::ComputePipeline> = program
            .shaders
            .iter()
            .map(|s| {
                let module = self.device.create_shader_module(wgpu::ShaderModuleDescriptor {
                    label: Some(&s.label),
                    source: wgpu::ShaderSource::Wgsl(s.wgsl.as_str().into()),
                });
                self.device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                    label: Some(&s.label),
                    layout: None,
                    module: &module,
                    entry_point: Some(&s.entry),
                    compilation_options: Default::default(),
                    cache: None,
                })
            })
            .collect();
        let pipeline_ms = now_ms() - t0;
        if let Some(err) = scope.pop().await {
            return Err(GpuError::Pipeline { kernel: label.to_string(), message: err.to_string() });
        }
        // Bind groups come after the pipelines are known good: an invalid pipeline's layout
        // would only add a second, less helpful error.
        let scope = self.device.push_error_scope(wgpu::ErrorFilter::Validation);
        let steps = program
            .steps
            .iter()
            .map(|step| {
                let pipeline = &pipelines[step.shader];
                let entries: Vec<wgpu::BindGroupEntry> = step
                    .bindings
                    .iter()
                    .map(|&(binding, b)| wgpu::BindGroupEntry { binding, resource: buffers[b].as_entire_binding() })
                    .collect();
                let bind_group = self.device.create_bind_group(&wgpu::BindGroupDescriptor {
                    label: Some(&program.shaders[step.shader].label),
                    layout: &pipeline.get_bind_group_layout(0),
                    entries: &entries,
                });
                (step.shader, bind_group, step.workgroups)
            })
            .collect();
        if let Some(err) = scope.pop().await {
            return Err(GpuError::Pipeline { kernel: label.to_string(), message: err.to_string() });
        }
        let outputs = program.outputs.iter().map(|&i| (i, program.buffers[i].init.len())).collect();

        let queries = (self.timestamps && samples > 0).then(|| {
            let capacity = samples.min(MAX_TIMESTAMPED_SAMPLES);
            let bytes = 2 * capacity as u64 * 8;
            Queries {
                set: self.device.create_query_set(&wgpu::QuerySetDescriptor {
                    label: Some("timestamps"),
                    ty: wgpu::QueryType::Timestamp,
                    count: 2 * capacity,
                }),
                resolve: self.device.create_buffer(&wgpu::BufferDescriptor {
                    label: Some("timestamp resolve"),
                    size: bytes,
                    usage: wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
                    mapped_at_creation: false,
                }),
                readback: self.device.create_buffer(&wgpu::BufferDescriptor {
                    label: Some("timestamp readback"),
                    size: bytes,
                    usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                    mapped_at_creation: false,
                }),
                capacity,
            }
        });
        Ok(Prepared { buffers, pipelines, steps, outputs, queries, pipeline_ms })
    }

    /// Submits one dispatch of `case` and returns wall milliseconds from submit until the queue
    /// reports the work done. With `timestamp_slot`, the pass writes its begin and end GPU
    /// timestamps into that slot, to be read by [`Gpu::read_timestamps`].
    pub async fn dispatch(&self, case: &Prepared, timestamp_slot: Option<u32>) -> Result<f64, GpuError> {
        let mut encoder = self.device.create_command_encoder(&Default::default());
        {
            let timestamp_writes = match (&case.queries, timestamp_slot) {
                (Some(q), Some(slot)) if slot < q.capacity => Some(wgpu::ComputePassTimestampWrites {
                    query_set: &q.set,
                    beginning_of_pass_write_index: Some(2 * slot),
                    end_of_pass_write_index: Some(2 * slot + 1),
                }),
                _ => None,
            };
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("case"),
                timestamp_writes,
            });
            for (shader, bind_group, [x, y, z]) in &case.steps {
                pass.set_pipeline(&case.pipelines[*shader]);
                pass.set_bind_group(0, bind_group, &[]);
                pass.dispatch_workgroups(*x, *y, *z);
            }
        }
        let commands = encoder.finish();
        let t0 = now_ms();
        self.queue.submit([commands]);
        self.work_done().await?;
        Ok(now_ms() - t0)
    }

    /// Measures `case` by the sampling policy ([`crate::sampling`]), with GPU timestamps where
    /// the device has them.
    pub async fn measure(&self, case: &Prepared, sampling: &Sampling, on_sample: impl FnMut(u32)) -> Result<Measured, GpuError> {
        let walls = sample(sampling, &mut Dispatches { gpu: self, case }, on_sample).await?;
        let taken = walls.samples.len() as u32;
        let gpu = self.read_timestamps(case, taken).await?;
        let samples = walls
            .samples
            .into_iter()
            .enumerate()
            .map(|(i, wall_ms)| Sample {
                wall_ms,
                gpu_ms: gpu.get(i).copied().flatten(),
            })
            .collect();
        Ok(Measured {
            first_dispatch_ms: walls.first_ms,
            warmup: walls.warmup,
            warmup_stop: walls.warmup_stop,
            samples,
            stopped_by: walls.stopped_by,
        })
    }

    /// Runs one case of `plan` end to end: its program (built from `weights` for an encoder),
    /// pipelines, measurement by the sampling policy, and the output read back, ready to send.
    pub async fn run_case(
        &self,
        plan: &crate::RunPlan,
        case: &crate::CaseSpec,
        weights: Option<&Weights>,
        on_sample: impl FnMut(u32),
    ) -> Result<crate::wire::CaseMeasurement, GpuError> {
        let program = case.program(weights).map_err(|e| GpuError::Pipeline { kernel: case.kernel.clone(), message: e.to_string() })?;
        self.check_fits(&case.kernel, &program)?;
        let prepared = self.prepare(&case.kernel, &program, plan.sampling.max_samples()).await?;
        let measured = self.measure(&prepared, &plan.sampling, on_sample).await?;
        let output = self.read_output(&prepared, &program).await?;
        Ok(crate::wire::CaseMeasurement {
            case_id: case.id.clone(),
            pipeline_ms: prepared.pipeline_ms,
            first_dispatch_ms: measured.first_dispatch_ms,
            warmup: measured.warmup,
            warmup_stop: measured.warmup_stop,
            samples: measured.samples,
            output: crate::wire::CaseMeasurement::encode_bytes(&output),
            stopped_by: measured.stopped_by,
        })
    }

    /// Refuses a program with a buffer larger than the device allows, naming it, before WebGPU
    /// refuses it with a less helpful validation error.
    fn check_fits(&self, label: &str, program: &Program) -> Result<(), GpuError> {
        let limits = self.device.limits();
        let most = limits.max_buffer_size.min(limits.max_storage_buffer_binding_size as u64);
        match program.buffers.iter().find(|b| b.init.len() > most) {
            Some(b) => Err(GpuError::Pipeline {
                kernel: label.to_string(),
                message: format!("buffer `{}` needs {} bytes, more than this device allows in one binding ({most})", b.label, b.init.len()),
            }),
            None => Ok(()),
        }
    }

    /// The GPU time of the first `samples` timestamped dispatches, in ms; `None` where the device
    /// has no timestamps or the pair is not ordered (some drivers write zeros).
    pub async fn read_timestamps(&self, case: &Prepared, samples: u32) -> Result<Vec<Option<f64>>, GpuError> {
        let Some(q) = &case.queries else {
            return Ok(vec![None; samples as usize]);
        };
        let n = samples.min(q.capacity);
        if n == 0 {
            return Ok(vec![None; samples as usize]);
        }
        let mut encoder = self.device.create_command_encoder(&Default::default());
        encoder.resolve_query_set(&q.set, 0..2 * n, &q.resolve, 0);
        encoder.copy_buffer_to_buffer(&q.resolve, 0, &q.readback, 0, 2 * n as u64 * 8);
        self.queue.submit([encoder.finish()]);
        let bytes = self.map_read(&q.readback, 2 * n as u64 * 8).await?;
        let period = self.queue.get_timestamp_period() as f64;
        let ticks: Vec<u64> = bytes
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().expect("8-byte chunk")))
            .collect();
        let mut out: Vec<Option<f64>> = ticks
            .chunks_exact(2)
            .map(|p| (p[1] >= p[0] && p[0] != 0).then(|| (p[1] - p[0]) as f64 * period / 1e6))
            .collect();
        out.resize(samples as usize, None);
        Ok(out)
    }

    /// Copies the program's output buffers back to the CPU, concatenated. A program that asks
    /// for a fresh output first gets its buffers' initial contents back and runs once more.
    pub async fn read_output(&self, case: &Prepared, program: &Program) -> Result<Vec<u8>, GpuError> {
        if program.fresh_output {
            let mut clears = self.device.create_command_encoder(&Default::default());
            for (buffer, b) in case.buffers.iter().zip(&program.buffers) {
                match b.init.bytes() {
                    Some(bytes) => self.queue.write_buffer(buffer, 0, &bytes),
                    None => clears.clear_buffer(buffer, 0, None),
                }
            }
            self.queue.submit([clears.finish()]);
            self.dispatch(case, None).await?;
        }
        let total: u64 = case.outputs.iter().map(|(_, n)| n).sum();
        let readback = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("output readback"),
            size: total.max(4),
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let mut encoder = self.device.create_command_encoder(&Default::default());
        let mut at = 0;
        for &(buffer, len) in &case.outputs {
            encoder.copy_buffer_to_buffer(&case.buffers[buffer], 0, &readback, at, len);
            at += len;
        }
        self.queue.submit([encoder.finish()]);
        self.map_read(&readback, total).await
    }

    async fn work_done(&self) -> Result<(), GpuError> {
        let (tx, rx) = oneshot::channel();
        self.queue.on_submitted_work_done(move || {
            let _ = tx.send(());
        });
        self.wait_natively()?;
        rx.await.map_err(|_| GpuError::Wait("the queue dropped its completion callback".into()))
    }

    async fn map_read(&self, buffer: &wgpu::Buffer, len: u64) -> Result<Vec<u8>, GpuError> {
        let slice = buffer.slice(0..len);
        let (tx, rx) = oneshot::channel();
        slice.map_async(wgpu::MapMode::Read, move |r| {
            let _ = tx.send(r);
        });
        self.wait_natively()?;
        rx.await
            .map_err(|_| GpuError::Map("the mapping callback was dropped".into()))?
            .map_err(|e| GpuError::Map(e.to_string()))?;
        let bytes = slice
            .get_mapped_range()
            .map_err(|e| GpuError::Map(e.to_string()))?
            .to_vec();
        buffer.unmap();
        Ok(bytes)
    }

    /// Natively, callbacks fire only inside `poll`; in the browser the event loop drives them.
    fn wait_natively(&self) -> Result<(), GpuError> {
        #[cfg(not(target_arch = "wasm32"))]
        self.device
            .poll(wgpu::PollType::wait_indefinitely())
            .map_err(|e| GpuError::Wait(e.to_string()))?;
        Ok(())
    }
}

/// What [`Gpu::measure`] took.
#[derive(Debug, Clone)]
pub struct Measured {
    /// Wall ms of the first, untimed dispatch.
    pub first_dispatch_ms: f64,
    /// Wall ms of each warm-up dispatch.
    pub warmup: Vec<f64>,
    /// What ended warm-up.
    pub warmup_stop: WarmupStop,
    /// The timed samples.
    pub samples: Vec<Sample>,
    /// What ended sampling.
    pub stopped_by: StopReason,
}

/// One prepared case as the sampling policy runs it: timed sample `i` writes timestamp slot `i`,
/// and the target CI is judged on GPU time whenever every sample so far has a timestamp.
struct Dispatches<'a> {
    gpu: &'a Gpu,
    case: &'a Prepared,
}

impl Timed for Dispatches<'_> {
    type Error = GpuError;

    async fn run(&mut self, slot: Option<u32>) -> Result<f64, GpuError> {
        self.gpu.dispatch(self.case, slot).await
    }

    async fn headline(&mut self, walls: &[f64]) -> Result<Vec<f64>, GpuError> {
        let gpu = self.gpu.read_timestamps(self.case, walls.len() as u32).await?;
        Ok(gpu.into_iter().collect::<Option<Vec<f64>>>().unwrap_or_else(|| walls.to_vec()))
    }
}

struct Queries {
    set: wgpu::QuerySet,
    resolve: wgpu::Buffer,
    readback: wgpu::Buffer,
    capacity: u32,
}

/// A program ready to dispatch: its pipelines, bound buffers and timestamp queries.
pub struct Prepared {
    buffers: Vec<wgpu::Buffer>,
    pipelines: Vec<wgpu::ComputePipeline>,
    /// (pipeline index, bind group, workgroups) of each step.
    steps: Vec<(usize, wgpu::BindGroup, [u32; 3])>,
    /// (buffer index, bytes) of each output.
    outputs: Vec<(usize, u64)>,
    queries: Option<Queries>,
    /// Milliseconds spent creating the shader module and pipeline.
    pub pipeline_ms: f64,
}
