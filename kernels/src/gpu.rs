//! Dispatching a kernel through wgpu and timing it: the browser's WebGPU on wasm32, Vulkan, Metal
//! or DX12 natively. One code path, so the page and `--platform native` measure the same thing.

use crate::kernel::Kernel;
use crate::shape::Shape;
pub use crate::sampling::now_ms;
use crate::sampling::{sample, Sampling, Timed, WarmupStop};
use crate::wire::{f32s_to_le_bytes, le_bytes_to_f32s, Sample, StopReason};
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

    /// Creates the case's buffers from `inputs`, compiles its pipeline (timed), and readies room
    /// for `samples` GPU timestamps.
    pub async fn prepare(
        &self,
        kernel: &dyn Kernel,
        shape: &Shape,
        inputs: &[Vec<f32>],
        samples: u32,
    ) -> Result<Prepared, GpuError> {
        let storage = wgpu::BufferUsages::STORAGE;
        let params = kernel.params(shape);
        let mut buffers = vec![self.device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("params"),
            contents: &words_to_bytes(&params),
            usage: wgpu::BufferUsages::UNIFORM,
        })];
        for input in inputs {
            buffers.push(self.device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some("input"),
                contents: &f32s_to_le_bytes(input),
                usage: storage,
            }));
        }
        let output_len = kernel.output_len(shape);
        let output_bytes = (output_len * 4) as u64;
        let output = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("output"),
            size: output_bytes,
            usage: storage | wgpu::BufferUsages::COPY_SRC,
            mapped_at_creation: false,
        });
        let readback = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("output readback"),
            size: output_bytes,
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });

        let scope = self.device.push_error_scope(wgpu::ErrorFilter::Validation);
        let t0 = now_ms();
        let module = self.device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some(kernel.name()),
            source: wgpu::ShaderSource::Wgsl(kernel.wgsl().into()),
        });
        let pipeline = self.device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some(kernel.name()),
            layout: None,
            module: &module,
            entry_point: Some("main"),
            compilation_options: Default::default(),
            cache: None,
        });
        let pipeline_ms = now_ms() - t0;
        let entries: Vec<wgpu::BindGroupEntry> = buffers
            .iter()
            .chain(std::iter::once(&output))
            .enumerate()
            .map(|(i, b)| wgpu::BindGroupEntry {
                binding: i as u32,
                resource: b.as_entire_binding(),
            })
            .collect();
        let bind_group = self.device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some(kernel.name()),
            layout: &pipeline.get_bind_group_layout(0),
            entries: &entries,
        });
        if let Some(err) = scope.pop().await {
            return Err(GpuError::Pipeline {
                kernel: kernel.name().to_string(),
                message: err.to_string(),
            });
        }

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
        Ok(Prepared {
            pipeline,
            bind_group,
            workgroups: kernel.workgroups(shape),
            output,
            readback,
            output_bytes,
            queries,
            pipeline_ms,
        })
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
            pass.set_pipeline(&case.pipeline);
            pass.set_bind_group(0, &case.bind_group, &[]);
            let [x, y, z] = case.workgroups;
            pass.dispatch_workgroups(x, y, z);
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

    /// Runs one case of `plan` end to end: inputs, pipeline, measurement by the sampling policy,
    /// and the output read back, ready to send.
    pub async fn run_case(
        &self,
        plan: &crate::RunPlan,
        case: &crate::CaseSpec,
        on_sample: impl FnMut(u32),
    ) -> Result<crate::wire::CaseMeasurement, GpuError> {
        let kernel = case.kernel().ok_or_else(|| GpuError::Pipeline {
            kernel: case.kernel.clone(),
            message: "unknown kernel (page and harness differ in version)".into(),
        })?;
        let inputs = kernel.inputs(&case.shape, case.seed);
        let prepared = self.prepare(kernel, &case.shape, &inputs, plan.sampling.max_samples()).await?;
        let measured = self.measure(&prepared, &plan.sampling, on_sample).await?;
        let output = self.read_output(&prepared).await?;
        Ok(crate::wire::CaseMeasurement {
            case_id: case.id.clone(),
            pipeline_ms: prepared.pipeline_ms,
            first_dispatch_ms: measured.first_dispatch_ms,
            warmup: measured.warmup,
            warmup_stop: measured.warmup_stop,
            samples: measured.samples,
            output: crate::wire::CaseMeasurement::encode_output(&output),
            stopped_by: measured.stopped_by,
        })
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

    /// Copies the case's output back to the CPU.
    pub async fn read_output(&self, case: &Prepared) -> Result<Vec<f32>, GpuError> {
        let mut encoder = self.device.create_command_encoder(&Default::default());
        encoder.copy_buffer_to_buffer(&case.output, 0, &case.readback, 0, case.output_bytes);
        self.queue.submit([encoder.finish()]);
        let bytes = self.map_read(&case.readback, case.output_bytes).await?;
        Ok(le_bytes_to_f32s(&bytes))
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

/// A case ready to dispatch: its pipeline, bound buffers and timestamp queries.
pub struct Prepared {
    pipeline: wgpu::ComputePipeline,
    bind_group: wgpu::BindGroup,
    workgroups: [u32; 3],
    output: wgpu::Buffer,
    readback: wgpu::Buffer,
    output_bytes: u64,
    queries: Option<Queries>,
    /// Milliseconds spent creating the shader module and pipeline.
    pub pipeline_ms: f64,
}

fn words_to_bytes(words: &[u32]) -> Vec<u8> {
    words.iter().flat_map(|w| w.to_le_bytes()).collect()
}
