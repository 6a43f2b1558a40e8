//! Dispatching a kernel through wgpu and timing it: the browser's WebGPU on wasm32, Vulkan, Metal
//! or DX12 natively. One code path, so the page and `--platform native` measure the same thing.

use crate::model::weights::Weights;
use crate::catalog::matmul::subgroup_matrix;
use crate::program::{Caps, Init, Program};
pub use crate::sampling::now_ms;
use crate::sampling::{sample, CaseClock, ClockGate, Sample, Sampled, Sampling, Timed, MAX_IN_FLIGHT};
use crate::wire::CompletionLatency;
use futures_channel::oneshot;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

/// Timestamp slots of a prepared case: one per batch in flight, and one spare so a slot is
/// reused only after its batch was read.
const TIMESTAMP_SLOTS: u32 = MAX_IN_FLIGHT + 1;
/// WebGPU resolves queries only to 256-byte-aligned offsets.
const RESOLVE_STRIDE: u64 = 256;
/// Runs of a whole program [`Gpu::profile`] takes at most: each dispatch's time is its median.
pub const PROFILE_RUNS: u32 = 5;
/// GPU time, ms, a profile's runs take at most where one run is shorter: a model's pass on a
/// software adapter (tens to hundreds of ms) gets one run.
pub const PROFILE_BUDGET_MS: f64 = 100.0;
/// WebGPU's largest query set.
const MAX_QUERIES: u32 = 4096;
/// Rounds of each completion-latency measurement.
pub const LATENCY_ROUNDS: usize = 10;
/// A completion latency above this, ms, means the browser reports completion on a timer (Firefox:
/// its GPU process polls its devices every ~100 ms), and harness nudges while its steady batches
/// wait ([`nudges`]).
pub const NUDGE_ABOVE_MS: f64 = 20.0;
/// How often a nudge is submitted while a steady batch is waited for, ms (browsers clamp a timer
/// to about 4 ms once timers nest).
pub const NUDGE_EVERY_MS: i32 = 1;

/// Whether a browser whose completion latency is `latency_ms` is nudged while steady batches
/// wait: an empty command buffer submitted every [`NUDGE_EVERY_MS`]. Firefox polls its devices
/// on a 100 ms timer and after every submit (wgpu polls then), so without nudges a batch is seen
/// done up to a tick after the GPU finished it, and the GPU idles meanwhile; with them, within a
/// few ms, as in Chrome. Every engine harness drives there is nudged alike (static/completion.js).
pub fn nudges(latency_ms: f64) -> bool {
    latency_ms > NUDGE_ABOVE_MS
}

/// The optional WebGPU features harness asks for, by their WebGPU names: GPU timestamps, f16
/// kernels and subgroup kernels each use one where the adapter has it.
const FEATURES: [(&str, wgpu::Features); 3] = [
    ("timestamp-query", wgpu::Features::TIMESTAMP_QUERY),
    ("shader-f16", wgpu::Features::SHADER_F16),
    ("subgroups", wgpu::Features::SUBGROUP),
];

/// An adapter wgpu offers on this machine, natively: what `harness doctor` shows of the link
/// between the Vulkan (Metal, DX12) driver and the browsers.
#[cfg(not(target_arch = "wasm32"))]
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct NativeAdapter {
    /// The device's name, such as `NVIDIA H100 80GB HBM3` or `llvmpipe (LLVM 15.0.6, 256 bits)`.
    pub name: String,
    /// wgpu's device type: `DiscreteGpu`, `IntegratedGpu`, `VirtualGpu`, `Cpu`, `Other`.
    pub device_type: String,
    /// The backend: `Vulkan`, `Metal`, `Dx12`, `Gl`.
    pub backend: String,
    /// The driver's name and version, where the backend says.
    pub driver: String,
    /// Of `timestamp-query`, `shader-f16` and `subgroups`, those it offers.
    pub features: Vec<String>,
}

#[cfg(not(target_arch = "wasm32"))]
impl NativeAdapter {
    /// A GPU rather than a CPU implementation (llvmpipe, lavapipe, WARP report `Cpu`).
    pub fn is_hardware(&self) -> bool {
        matches!(self.device_type.as_str(), "DiscreteGpu" | "IntegratedGpu")
    }
}

/// Every adapter wgpu finds on this machine, on every backend.
#[cfg(not(target_arch = "wasm32"))]
pub async fn native_adapters() -> Vec<NativeAdapter> {
    let instance = wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle());
    instance
        .enumerate_adapters(wgpu::Backends::all())
        .await
        .into_iter()
        .map(|a| {
            let info = a.get_info();
            NativeAdapter {
                name: info.name,
                device_type: format!("{:?}", info.device_type),
                backend: format!("{:?}", info.backend),
                driver: format!("{} {}", info.driver, info.driver_info).trim().to_string(),
                features: FEATURES.iter().filter(|(_, f)| a.features().contains(*f)).map(|(n, _)| n.to_string()).collect(),
            }
        })
        .collect()
}

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
    /// The program needs a WebGPU feature the device does not have.
    #[error("{label} needs the WebGPU feature `{feature}`, which this adapter does not offer{hint}")]
    MissingFeature {
        /// The program.
        label: String,
        /// The feature, by its WebGPU name.
        feature: String,
        /// What offers it.
        hint: &'static str,
    },
    /// Waiting for submitted work failed (device lost, timeout).
    #[error("waiting for the GPU failed: {0}")]
    Wait(String),
    /// The device was lost while the case ran (a driver reset, a GPU removed, `destroy()`); a
    /// fresh device runs the next case.
    #[error("the GPU device was lost: {0}")]
    DeviceLost(String),
    /// The GPU raised an error no error scope caught (`uncapturederror`).
    #[error("the GPU reported an uncaptured error: {0}")]
    Uncaptured(String),
}

impl GpuError {
    /// This error as the report of case `case_id`: `unsupported` when the adapter lacks a
    /// feature the case needs, an error otherwise.
    pub fn for_case(&self, case_id: &str) -> crate::wire::PageError {
        crate::wire::PageError {
            unsupported: matches!(self, GpuError::MissingFeature { .. }),
            device_lost: matches!(self, GpuError::DeviceLost(_)),
            ..crate::wire::PageError::case(case_id, self.to_string())
        }
    }
}

/// An adapter, its device and queue, and whether GPU timestamps are available.
pub struct Gpu {
    /// What wgpu reports about the adapter.
    pub info: wgpu::AdapterInfo,
    /// True when the device was created with `timestamp-query`.
    pub timestamps: bool,
    /// True when the browser's device has tensor cores for `matmul` (`page/static/subgroup-matrix.js`
    /// asks for them on wgpu's behalf); never natively.
    subgroup_matrix: bool,
    /// Median ms until `onSubmittedWorkDone` resolves for trivial work, once measured
    /// ([`Gpu::measure_latency`]), not nudged; 0 before.
    pub latency_ms: f64,
    /// Whether steady batches are nudged while they wait ([`nudges`]), once the latency is
    /// measured.
    pub nudge: bool,
    /// Nudges submitted so far.
    nudged: AtomicU64,
    /// The last program's constant buffers of seeded contents, for the next program that has
    /// them or parts of them ([`Gpu::create_buffers`]).
    kept: Mutex<Vec<Kept>>,
    /// Every pipeline compiled on this device, by its shader, for later programs with the same
    /// shader: a model's prefill, decode step, ops and dtypes share most of theirs, which Chrome
    /// took up to 3.8 s a case to compile on the H200 (docs/hardware/h200-phases.md).
    compiled: Mutex<Vec<(crate::program::Shader, wgpu::ComputePipeline)>>,
    /// Whether models choose their kernels for a CPU: on a software adapter, unless the plan asks
    /// for a GPU's ([`Gpu::adapt`]); a GPU's until then.
    cpu_kernels: bool,
    device: wgpu::Device,
    queue: wgpu::Queue,
    watch: Arc<Mutex<Watch>>,
}

/// What the device's callbacks reported: its loss, and errors no error scope caught.
#[derive(Default)]
struct Watch {
    lost: Option<String>,
    uncaptured: Vec<String>,
}

impl Gpu {
    /// Requests the high-performance adapter and a device with its full limits, plus
    /// `timestamp-query`, `shader-f16` and `subgroups` where the adapter offers them, and
    /// watches the device for loss and uncaptured errors.
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
        let wanted = FEATURES.iter().fold(wgpu::Features::empty(), |all, (_, f)| all | *f);
        let required_features = adapter.features() & wanted;
        #[cfg(target_arch = "wasm32")]
        let _ = subgroup_matrix_arm(subgroup_matrix::WORKGROUP_BYTES);
        let (device, queue) = adapter
            .request_device(&wgpu::DeviceDescriptor {
                label: Some("harness"),
                required_features,
                required_limits: adapter.limits(),
                ..Default::default()
            })
            .await
            .map_err(|e| GpuError::Device(e.to_string()))?;
        let watch = Arc::new(Mutex::new(Watch::default()));
        let on_lost = watch.clone();
        device.set_device_lost_callback(move |reason, message| {
            let why = match reason {
                wgpu::DeviceLostReason::Destroyed => "destroyed",
                wgpu::DeviceLostReason::Unknown => "unknown",
            };
            lock(&on_lost).lost = Some(format!("reason `{why}`: {message}").trim_end_matches(": ").to_string());
        });
        // Natively, wgpu's default handler panics: an error here must fail the case, not harness.
        let on_error = watch.clone();
        device.on_uncaptured_error(Arc::new(move |e| lock(&on_error).uncaptured.push(e.to_string())));
        #[cfg(target_arch = "wasm32")]
        let subgroup_matrix = device.as_webgpu().is_some_and(|d| subgroup_matrix_has(d).unwrap_or(false));
        #[cfg(not(target_arch = "wasm32"))]
        let subgroup_matrix = false;
        Ok(Gpu {
            cpu_kernels: false,
            info: adapter.get_info(),
            timestamps,
            subgroup_matrix,
            latency_ms: 0.0,
            nudge: false,
            nudged: AtomicU64::new(0),
            kept: Mutex::new(Vec::new()),
            compiled: Mutex::new(Vec::new()),
            device,
            queue,
            watch,
        })
    }

    /// Why the device was lost, once it was.
    pub fn lost(&self) -> Option<String> {
        // Natively, wgpu reports a loss (and `destroy()`) only from inside `poll`.
        #[cfg(not(target_arch = "wasm32"))]
        let _ = self.device.poll(wgpu::PollType::Poll);
        lock(&self.watch).lost.clone()
    }

    /// Gives a browser time to report a loss: Firefox resolves `device.lost` about 90 ms after
    /// the failures a lost device causes, which come at once. Natively a loss is known at once.
    async fn await_loss_report(&self) {
        #[cfg(target_arch = "wasm32")]
        for _ in 0..50 {
            if self.lost().is_some() {
                break;
            }
            pause(10).await;
        }
    }

    /// Awaits `work`; with `nudge`, submits an empty command buffer every [`NUDGE_EVERY_MS`]
    /// meanwhile ([`nudges`]). Natively there is nothing to nudge: waits poll the device.
    async fn settle<T>(&self, nudge: bool, work: impl std::future::Future<Output = T>) -> T {
        #[cfg(target_arch = "wasm32")]
        if nudge {
            let mut work = std::pin::pin!(work);
            loop {
                let tick = std::pin::pin!(pause(NUDGE_EVERY_MS));
                match futures_util::future::select(work.as_mut(), tick).await {
                    futures_util::future::Either::Left((done, _)) => return done,
                    futures_util::future::Either::Right(_) => {
                        self.queue.submit([self.device.create_command_encoder(&Default::default()).finish()]);
                        self.nudged.fetch_add(1, Ordering::Relaxed);
                    }
                }
            }
        }
        let _ = nudge;
        work.await
    }

    /// Replaces a device lost for `why` with a fresh one from a new adapter, keeping the
    /// measured latency; `why`, with the reason no fresh one came where none did.
    async fn replace_lost(&mut self, why: String) -> Result<String, String> {
        match Gpu::new().await {
            Ok(fresh) => {
                let (latency_ms, nudge, subgroup_matrix, cpu_kernels) = (self.latency_ms, self.nudge, self.subgroup_matrix, self.cpu_kernels);
                *self = fresh;
                (self.latency_ms, self.nudge, self.cpu_kernels) = (latency_ms, nudge, cpu_kernels);
                self.subgroup_matrix &= subgroup_matrix;
                Ok(why)
            }
            Err(e) => Err(format!("{why}; no new device: {e}")),
        }
    }

    /// Whether the device has the WebGPU feature `name` (`shader-f16`, `subgroups`,
    /// `timestamp-query`, [`subgroup_matrix::FEATURE`]).
    pub fn has(&self, name: &str) -> bool {
        if name == subgroup_matrix::FEATURE {
            return self.subgroup_matrix;
        }
        FEATURES.iter().any(|(n, f)| *n == name && self.device.features().contains(*f))
    }

    /// Adapts this device and `plan` to each other before the cases run: models' GEMMs kept off
    /// the tensor cores where the plan says so (`--no-tensor-cores`), also on a device that
    /// replaces a lost one; on a CPU adapter, the plan's [`RunPlan::cpu_sampling`] where it has
    /// one, and kernels chosen for a GPU only where it asks ([`RunPlan::gpu_kernels`]). Whether
    /// the adapter is a CPU is read from `adapter` as the reports read it
    /// ([`crate::software::software_sign`]): in a browser, what the page reported of it, which
    /// says more than wgpu passes on.
    ///
    /// [`RunPlan::cpu_sampling`]: crate::RunPlan::cpu_sampling
    /// [`RunPlan::gpu_kernels`]: crate::RunPlan::gpu_kernels
    pub fn adapt(&mut self, plan: &mut crate::RunPlan, adapter: &crate::wire::AdapterReport) {
        if plan.no_tensor_cores {
            self.subgroup_matrix = false;
        }
        let cpu = crate::software::software_sign(adapter).is_some();
        self.cpu_kernels = cpu && !plan.gpu_kernels;
        if let Some(sampling) = plan.cpu_sampling.filter(|_| cpu) {
            plan.sampling = sampling;
        }
    }

    /// How many buffers this device keeps from the last program for the next ([`Buffer::constant`]
    /// ones of seeded contents: a model's weights).
    ///
    /// [`Buffer::constant`]: crate::program::Buffer::constant
    pub fn kept(&self) -> usize {
        self.kept.lock().unwrap_or_else(|e| e.into_inner()).len()
    }

    /// What a model's lowering may use on this device.
    pub fn caps(&self) -> Caps {
        Caps { subgroups: self.has("subgroups"), subgroup_matrix: self.subgroup_matrix, cpu: self.cpu_kernels }
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
            features: FEATURES.iter().map(|(n, _)| *n).chain([subgroup_matrix::FEATURE]).filter(|n| self.has(n)).map(str::to_string).collect(),
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

    /// Measures the completion latency of trivial work, [`LATENCY_ROUNDS`] rounds of each kind
    /// after one unrecorded round; where it is long ([`nudges`]) and `nudge` allows, measures it
    /// again nudged, and steady batches will be. Keeps the median `onSubmittedWorkDone` latency,
    /// not nudged, for sizing steady batches: a nudge changes how soon a finished batch is seen,
    /// not how long a batch is (batches of one short pass, sized by the nudged latency, left
    /// Firefox's GPU idle enough to stay at its idle clock: h200-nudge.md).
    pub async fn measure_latency(&mut self, nudge: crate::Nudge) -> Result<CompletionLatency, GpuError> {
        let (work_done_ms, map_async_ms) = self.latency_rounds(false).await?;
        self.latency_ms = median(&work_done_ms);
        self.nudge = nudge == crate::Nudge::Auto && nudges(self.latency_ms);
        let mut latency = CompletionLatency { work_done_ms, map_async_ms, ..Default::default() };
        if self.nudge {
            (latency.nudged_work_done_ms, latency.nudged_map_async_ms) = self.latency_rounds(true).await?;
        }
        Ok(latency)
    }

    /// Each round's ms from submit to `onSubmittedWorkDone` and to `mapAsync` resolved.
    async fn latency_rounds(&self, nudge: bool) -> Result<(Vec<f64>, Vec<f64>), GpuError> {
        let target = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("latency source"),
            size: 4,
            usage: wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let readback = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("latency readback"),
            size: 4,
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let (mut work_done, mut map_async) = (Vec::new(), Vec::new());
        for round in 0..=LATENCY_ROUNDS {
            let mut encoder = self.device.create_command_encoder(&Default::default());
            encoder.clear_buffer(&target, 0, None);
            let t0 = now_ms();
            let index = self.queue.submit([encoder.finish()]);
            self.settle(nudge, self.finished(index, self.done_after_submit())).await?;
            let done_ms = now_ms() - t0;

            let mut encoder = self.device.create_command_encoder(&Default::default());
            encoder.copy_buffer_to_buffer(&target, 0, &readback, 0, 4);
            let t0 = now_ms();
            self.queue.submit([encoder.finish()]);
            self.settle(nudge, self.map_read(&readback, 4)).await?;
            if round > 0 {
                work_done.push(done_ms);
                map_async.push(now_ms() - t0);
            }
        }
        Ok((work_done, map_async))
    }

    /// Creates the program's buffers, compiles its pipelines (timed) and bind groups, and readies
    /// GPU timestamps for the batches in flight.
    pub async fn prepare(&self, label: &str, program: &Program) -> Result<Prepared, GpuError> {
        Ok(self.prepare_timed(label, program, false, true).await?.0)
    }

    /// [`Gpu::prepare`], and when the buffers were uploaded (the page's clock). With `precompile`,
    /// every pipeline is compiled at once through the browser's `createComputePipelineAsync`
    /// while the buffers upload ([`Gpu::precompile`]); the pipeline time runs from the upload's end
    /// either way.
    /// With `reuse`, buffers and pipelines kept from earlier programs serve this one
    /// ([`Gpu::create_buffers`], [`Gpu::create_pipelines`]); without (a cold start, which may load
    /// several programs at once, each as a fresh page would), nothing is kept or taken.
    async fn prepare_timed(&self, label: &str, program: &Program, precompile: bool, reuse: bool) -> Result<(Prepared, f64), GpuError> {
        let failed = |message: String| GpuError::Pipeline { kernel: label.to_string(), message };
        self.check_features(label, program)?;
        let compiling = precompile.then(|| self.precompile(program));
        let (buffers, owned) = self.create_buffers(program, reuse).await.map_err(failed)?;
        let uploaded = now_ms();
        if let Some(compiling) = compiling {
            compiling.await.map_err(failed)?;
        }
        Ok((self.create_pipelines(label, program, buffers, owned, uploaded, reuse).await?, uploaded))
    }

    /// Refuses a program that needs a feature the device lacks, saying what offers it.
    fn check_features(&self, label: &str, program: &Program) -> Result<(), GpuError> {
        let Some(feature) = program.features.iter().find(|f| !self.has(f)) else { return Ok(()) };
        let hint = match feature.as_str() {
            "shader-f16" => " (f16 kernels store their inputs in f16; most GPUs have it, software adapters often do not)",
            // wgpu 30's WebGPU backend has no mapping for `subgroups`, so it never asks the
            // browser for it, even where the browser's adapter offers it.
            "subgroups" if cfg!(target_arch = "wasm32") => " to wgpu (wgpu 30's WebGPU backend cannot request `subgroups` from the browser, so subgroup variants run natively only)",
            "subgroups" => " (subgroup variants are tuner candidates where the adapter has it; the others run everywhere)",
            subgroup_matrix::FEATURE => " (tensor cores through Chromium's WebGPU; harness asks for it where the adapter has f16 products with an f32 result at 16×16×16)",
            _ => "",
        };
        Err(GpuError::MissingFeature { label: label.to_string(), feature: feature.clone(), hint })
    }

    /// The program's buffers, each with its initial contents uploaded (a view, the buffer it is
    /// a range of), and whether the program's [`Prepared`] owns each (not a view, nor one this
    /// device keeps); the validation error where one is refused.
    ///
    /// Constant buffers of seeded contents are the device's, kept from one program to the next
    /// ([`Kept`]): a model's prefill, decode step and ops share weights that take seconds to
    /// generate and upload (TinyLlama's are 4.4 GB in f32). A buffer the last program had too is
    /// that program's; a part of one (a layer's weights, which a prefill's GEMMs join into one
    /// buffer and a decode step's matvecs read alone) is copied on the GPU from where the last
    /// program had it. What this program does not have is freed once its buffers are made.
    async fn create_buffers(&self, program: &Program, reuse: bool) -> Result<(Vec<wgpu::Buffer>, Vec<bool>), String> {
        let keeps = |b: &crate::program::Buffer| reuse && b.constant && !b.uniform && generated(&b.init);
        let old: Vec<Kept> = match reuse {
            true => std::mem::take(&mut *self.kept.lock().unwrap_or_else(|e| e.into_inner())),
            false => Vec::new(),
        };
        let mut kept: Vec<Kept> = Vec::new();
        let mut copies = self.device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("kept weights") });
        let scope = self.device.push_error_scope(wgpu::ErrorFilter::Validation);
        let created: Vec<Option<wgpu::Buffer>> = program
            .buffers
            .iter()
            .map(|b| {
                if let Init::View { .. } = b.init {
                    return None;
                }
                let usage = wgpu::BufferUsages::COPY_DST
                    | match b.uniform {
                        true => wgpu::BufferUsages::UNIFORM,
                        false => wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
                    };
                if keeps(b) {
                    let buffer = match old.iter().find(|k| k.init == b.init) {
                        Some(whole) => whole.buffer.clone(),
                        None => self.assemble(&b.label, &b.init, usage, &old, &mut copies),
                    };
                    kept.push(Kept { init: b.init.clone(), buffer: buffer.clone() });
                    return Some(buffer);
                }
                let buffer = match b.init.bytes() {
                    Some(bytes) => self.buffer_of(&b.label, &bytes, usage),
                    None => self.device.create_buffer(&wgpu::BufferDescriptor {
                        label: Some(&b.label),
                        size: b.init.len(),
                        usage,
                        mapped_at_creation: false,
                    }),
                };
                Some(buffer)
            })
            .collect();
        self.queue.submit([copies.finish()]);
        // What this program does not have goes (after the copies from it, which the device
        // finishes first).
        for k in &old {
            if !kept.iter().any(|n| n.buffer == k.buffer) {
                k.buffer.destroy();
            }
        }
        if reuse {
            *self.kept.lock().unwrap_or_else(|e| e.into_inner()) = kept;
        }
        let buffers = (0..created.len()).map(|i| {
            let of = program.buffers[i].init.binding(i).0;
            created.get(of).cloned().flatten().ok_or_else(|| format!("buffer `{}` is a view of no buffer of its own", program.buffers[i].label))
        });
        let buffers = buffers.collect::<Result<Vec<_>, String>>();
        let owned = program.buffers.iter().map(|b| !matches!(b.init, Init::View { .. }) && !keeps(b)).collect();
        match scope.pop().await {
            Some(err) => {
                // A refused buffer must not be handed to the next program.
                self.kept.lock().unwrap_or_else(|e| e.into_inner()).clear();
                Err(err.to_string())
            }
            None => buffers.map(|b| (b, owned)),
        }
    }

    /// A new buffer of `init`'s seeded contents (in parts, where joined): each part copied on
    /// the GPU where a buffer of `old` holds it, else generated into the buffer mapped at its
    /// creation, as `create_buffer_init` writes (in Chrome, TinyLlama's weights through
    /// `writeBuffer` took half as long again).
    fn assemble(&self, label: &str, init: &Init, usage: wgpu::BufferUsages, old: &[Kept], copies: &mut wgpu::CommandEncoder) -> wgpu::Buffer {
        let size = init.len().next_multiple_of(wgpu::COPY_BUFFER_ALIGNMENT);
        let buffer = self.device.create_buffer(&wgpu::BufferDescriptor { label: Some(label), size, usage, mapped_at_creation: true });
        for (part, offset) in parts(init) {
            let len = part.len().next_multiple_of(wgpu::COPY_BUFFER_ALIGNMENT);
            if let Some((from, at)) = old.iter().find_map(|k| parts(&k.init).into_iter().find(|(p, _)| *p == part).map(|(_, at)| (&k.buffer, at))) {
                copies.copy_buffer_to_buffer(from, at, &buffer, offset, Some(len));
            } else if let Some(bytes) = part.bytes() {
                write_mapped(&buffer, offset, &bytes);
            }
        }
        buffer.unmap();
        buffer
    }

    /// A buffer of `bytes` (padded to 4), written mapped at its creation ([`write_mapped`]).
    fn buffer_of(&self, label: &str, bytes: &[u8], usage: wgpu::BufferUsages) -> wgpu::Buffer {
        let size = (bytes.len() as u64).next_multiple_of(wgpu::COPY_BUFFER_ALIGNMENT).max(wgpu::COPY_BUFFER_ALIGNMENT);
        let buffer = self.device.create_buffer(&wgpu::BufferDescriptor { label: Some(label), size, usage, mapped_at_creation: true });
        write_mapped(&buffer, 0, bytes);
        buffer.unmap();
        buffer
    }

    /// Creates the program's pipelines and bind groups over `buffers` (those `owned` freed with
    /// it); its pipeline time runs from `since_ms` (when a precompilation began, or now).
    async fn create_pipelines(&self, label: &str, program: &Program, buffers: Vec<wgpu::Buffer>, owned: Vec<bool>, since_ms: f64, reuse: bool) -> Result<Prepared, GpuError> {
        let scope = self.device.push_error_scope(wgpu::ErrorFilter::Validation);
        // The lock is held only for each lookup, never across an await: two programs may be
        // prepared at once (a cold start's parts), and a second lock in the same thread panics
        // in WASM.
        let compiled = |s| self.compiled.lock().unwrap_or_else(|e| e.into_inner()).iter().find(|(shader, _)| shader == s).map(|(_, p)| p.clone());
        let mut reused = 0;
        let mut fresh = Vec::new();
        let pipelines: Vec<wgpu::ComputePipeline> = program
            .shaders
            .iter()
            .map(|s| {
                if let Some(pipeline) = reuse.then(|| compiled(s)).flatten() {
                    reused += 1;
                    return pipeline;
                }
                let module = self.device.create_shader_module(wgpu::ShaderModuleDescriptor {
                    label: Some(&s.label),
                    source: wgpu::ShaderSource::Wgsl(for_this_compiler(&s.wgsl)),
                });
                let pipeline = self.device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                    label: Some(&s.label),
                    layout: None,
                    module: &module,
                    entry_point: Some(&s.entry),
                    compilation_options: Default::default(),
                    cache: None,
                });
                fresh.push((s.clone(), pipeline.clone()));
                pipeline
            })
            .collect();
        let pipeline_ms = now_ms() - since_ms;
        if let Some(err) = scope.pop().await {
            return Err(GpuError::Pipeline { kernel: label.to_string(), message: err.to_string() });
        }
        // Only pipelines known good are kept for later programs.
        if reuse {
            self.compiled.lock().unwrap_or_else(|e| e.into_inner()).extend(fresh);
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
                    .map(|&(binding, b)| {
                        let resource = match program.buffers[b].init {
                            Init::View { offset, len, .. } => {
                                wgpu::BindingResource::Buffer(wgpu::BufferBinding { buffer: &buffers[b], offset, size: std::num::NonZeroU64::new(len) })
                            }
                            _ => buffers[b].as_entire_binding(),
                        };
                        wgpu::BindGroupEntry { binding, resource }
                    })
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
        let outputs = program.outputs.iter().map(|&i| { let (_, offset, len) = program.buffers[i].init.binding(i); (i, offset, len) }).collect();
        Ok(Prepared { buffers, owned, pipelines, steps, outputs, pipeline_ms, pipelines_reused: reused, dispatched: AtomicU64::new(0) })
    }

    /// Runs `case` once as a fresh page would, after its weights were fetched: builds each part's
    /// program (a CLIP-shaped pair has two; its cold start says whether they load one after the
    /// other or at once), uploads it, creates its pipelines (precompiled where it says so: all at
    /// once through the browser's `createComputePipelineAsync`, while the weights upload), submits
    /// one pass of every part and reads their outputs back. The page's clock readings at the end
    /// of each phase go to `marks`; for parts loaded one after the other, `upload` ends after the
    /// time all of them spent uploading.
    pub async fn run_cold(&mut self, case: &crate::CaseSpec, weights: Option<&Weights>, marks: &mut Vec<(&'static str, f64)>) -> Result<Vec<u8>, GpuError> {
        let label = case.kernel.clone();
        let cold = case.cold.unwrap_or(crate::ColdStart { samples: 1, precompile: false, parallel: false });
        let parts = case.workload.as_ref().map(|w| w.parts(case.seed)).unwrap_or_default();
        let failed = |message: String| GpuError::Pipeline { kernel: label.clone(), message };
        if parts.is_empty() {
            return Err(failed("a cold start runs harness's models only".into()));
        }
        self.guarded(async |gpu: &Gpu| {
            let start = now_ms();
            // A part's prepared program, its time uploading, and when that ended.
            let load = async |graph: &crate::model::graph::Graph| {
                let begun = now_ms();
                let program = graph.lower(weights, gpu.caps()).map_err(|e| failed(e.to_string()))?;
                gpu.check_fits(&label, &program)?;
                let (prepared, uploaded) = gpu.prepare_timed(&label, &program, cold.precompile, false).await?;
                Ok::<_, GpuError>((prepared, uploaded - begun, uploaded))
            };
            let loaded = match cold.parallel {
                true => futures_util::future::try_join_all(parts.iter().map(load)).await?,
                false => {
                    let mut loaded = Vec::new();
                    for part in &parts {
                        loaded.push(load(part).await?);
                    }
                    loaded
                }
            };
            let uploaded = match cold.parallel {
                true => loaded.iter().map(|l| l.2).fold(start, f64::max),
                false => start + loaded.iter().map(|l| l.1).sum::<f64>(),
            };
            marks.push(("upload", uploaded));
            #[cfg(target_arch = "wasm32")]
            if cold.precompile && precompile_unused() > 0 {
                return Err(failed(format!("{} precompiled pipelines were not taken by wgpu: static/precompile.js no longer matches how wgpu creates them", precompile_unused())));
            }
            marks.push(("pipelines", now_ms()));
            let index = gpu.queue.submit(loaded.iter().map(|(prepared, ..)| gpu.encode(prepared, None, 1, None)));
            marks.push(("dispatch", now_ms()));
            gpu.wait_natively(Some(index))?;
            let outputs: Vec<(&wgpu::Buffer, u64, u64)> = loaded.iter().flat_map(|(p, ..)| p.output_buffers()).collect();
            let bytes = gpu.read_ranges(&outputs).await?;
            marks.push(("result", now_ms()));
            Ok(bytes)
        })
        .await
    }

    /// Compiles every pipeline of `program` at once through the browser's
    /// `createComputePipelineAsync` (wgpu 30 has no asynchronous creation): the page's
    /// `precompile.js` keeps each, and hands it to wgpu when wgpu creates the same pipeline.
    /// Natively there is nothing to do: wgpu creates pipelines as it is asked.
    fn precompile(&self, program: &Program) -> impl std::future::Future<Output = Result<(), String>> {
        #[cfg(target_arch = "wasm32")]
        let pending = {
            let shaders: js_sys::Array = program
                .shaders
                .iter()
                .map(|s| js_sys::Array::of2(&for_this_compiler(&s.wgsl).as_ref().into(), &s.entry.as_str().into()))
                .collect();
            match self.device.as_webgpu() {
                Some(device) => precompile_js(device, &shaders).map(wasm_bindgen_futures::JsFuture::from).map_err(|e| format!("{e:?}")),
                None => Err("wgpu's device is not the browser's WebGPU device".to_string()),
            }
        };
        #[cfg(not(target_arch = "wasm32"))]
        let _ = program;
        async move {
            #[cfg(target_arch = "wasm32")]
            pending?.await.map_err(|e| format!("precompiling: {}", js_sys::Error::from(e).message()))?;
            Ok(())
        }
    }

    /// GPU timestamp queries for the batches in flight, where the device has them.
    fn timestamps(&self) -> Option<Queries> {
        self.timestamps.then(|| Queries {
            set: self.device.create_query_set(&wgpu::QuerySetDescriptor {
                label: Some("timestamps"),
                ty: wgpu::QueryType::Timestamp,
                count: 2 * TIMESTAMP_SLOTS,
            }),
            resolve: self.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("timestamp resolve"),
                size: TIMESTAMP_SLOTS as u64 * RESOLVE_STRIDE,
                usage: wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
                mapped_at_creation: false,
            }),
            readback: (0..TIMESTAMP_SLOTS)
                .map(|_| {
                    self.device.create_buffer(&wgpu::BufferDescriptor {
                        label: Some("timestamp readback"),
                        size: 16,
                        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                        mapped_at_creation: false,
                    })
                })
                .collect(),
        })
    }

    /// The device, for work harness does not describe itself (a user's GPU bench).
    pub fn device(&self) -> &wgpu::Device {
        &self.device
    }

    /// The queue of [`Gpu::device`].
    pub fn queue(&self) -> &wgpu::Queue {
        &self.queue
    }

    /// Records `batch` back-to-back runs of `work`, with the begin and end GPU timestamps in
    /// `slot` where given, resolved for reading.
    fn encode(&self, work: &dyn Recorded, queries: Option<&Queries>, batch: u32, slot: Option<u32>) -> wgpu::CommandBuffer {
        let mut encoder = self.device.create_command_encoder(&Default::default());
        let queries = queries.zip(slot);
        let writes = queries.map(|(q, slot)| wgpu::ComputePassTimestampWrites {
            query_set: &q.set,
            beginning_of_pass_write_index: Some(2 * slot),
            end_of_pass_write_index: Some(2 * slot + 1),
        });
        work.record(&mut encoder, batch, writes);
        if let Some((q, slot)) = queries {
            let at = slot as u64 * RESOLVE_STRIDE;
            encoder.resolve_query_set(&q.set, 2 * slot..2 * slot + 2, &q.resolve, at);
            encoder.copy_buffer_to_buffer(&q.resolve, at, &q.readback[slot as usize], 0, 16);
        }
        encoder.finish()
    }

    /// Each dispatch of `case` alone: in a compute pass of its own between two timestamps, ms,
    /// the median of `runs` runs of the whole program (at most [`PROFILE_RUNS`]). Where a program
    /// is many dispatches (a model's pass), this is where its GPU time goes; their sum leaves out
    /// the gaps between them that a pass's own time holds. Empty without timestamp queries, for a
    /// program of one dispatch, where a run's queries would not fit in a query set, and where a
    /// dispatch got no valid pair of timestamps in any run ([`span_ms`]).
    pub async fn profile(&self, case: &Prepared, runs: u32) -> Result<Vec<f64>, GpuError> {
        let steps = case.steps.len() as u32;
        let runs = runs.min(PROFILE_RUNS).min(MAX_QUERIES / (2 * steps).max(1));
        if !self.timestamps || steps < 2 || runs == 0 {
            return Ok(Vec::new());
        }
        let count = 2 * steps * runs;
        let set = self.device.create_query_set(&wgpu::QuerySetDescriptor { label: Some("profile"), ty: wgpu::QueryType::Timestamp, count });
        let resolve = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("profile resolve"),
            size: u64::from(count) * 8,
            usage: wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
            mapped_at_creation: false,
        });
        let mut encoder = self.device.create_command_encoder(&Default::default());
        for at in (0..count).step_by(2) {
            let (shader, bind_group, [x, y, z]) = &case.steps[(at / 2 % steps) as usize];
            let writes = wgpu::ComputePassTimestampWrites { query_set: &set, beginning_of_pass_write_index: Some(at), end_of_pass_write_index: Some(at + 1) };
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor { label: Some("profile"), timestamp_writes: Some(writes) });
            pass.set_pipeline(&case.pipelines[*shader]);
            pass.set_bind_group(0, bind_group, &[]);
            pass.dispatch_workgroups(*x, *y, *z);
        }
        case.dispatched.fetch_add(u64::from(count / 2), Ordering::Relaxed);
        encoder.resolve_query_set(&set, 0..count, &resolve, 0);
        self.queue.submit([encoder.finish()]);
        let bytes = self.read_ranges(&[(&resolve, 0, u64::from(count) * 8)]).await;
        set.destroy();
        resolve.destroy();
        let ticks = ticks(&bytes?);
        let period = f64::from(self.queue.get_timestamp_period());
        let times: Option<Vec<f64>> = (0..steps as usize)
            .map(|i| {
                let ms: Vec<f64> = ticks.chunks_exact(2).skip(i).step_by(steps as usize).filter_map(|t| span_ms([t[0], t[1]], period)).collect();
                (!ms.is_empty()).then(|| median(&ms))
            })
            .collect();
        Ok(times.unwrap_or_default())
    }

    /// Submits one run of `case` and waits until the queue reports it done.
    pub async fn dispatch(&self, case: &Prepared) -> Result<(), GpuError> {
        let index = self.queue.submit([self.encode(case, None, 1, None)]);
        self.finished(index, self.done_after_submit()).await
    }

    /// Measures `case` by the sampling policy ([`crate::sampling`]), with GPU timestamps where
    /// the device has them.
    pub async fn measure(
        &self,
        case: &Prepared,
        sampling: &Sampling,
        clock: &mut impl ClockGate,
        on_sample: impl FnMut(u32),
    ) -> Result<Sampled, GpuError> {
        self.measure_work(case, sampling, clock, on_sample).await
    }

    /// Measures `work` as [`Gpu::measure`] measures a program: GPU timestamps (where the device
    /// has them) on queries of its own, freed when it is done.
    pub async fn measure_work(
        &self,
        work: &dyn Recorded,
        sampling: &Sampling,
        clock: &mut impl ClockGate,
        on_sample: impl FnMut(u32),
    ) -> Result<Sampled, GpuError> {
        let queries = self.timestamps();
        let mut batches = Batches {
            gpu: self,
            work,
            queries: queries.as_ref(),
            depth: 1,
            nudge: sampling.nudged(self.nudge),
            nudged_from: self.nudged.load(Ordering::Relaxed),
            queued: VecDeque::new(),
            next_slot: 0,
            last_done_ms: f64::NEG_INFINITY,
            tick_ms: 0.0,
            returned: Vec::new(),
        };
        let mut sampled = sample(sampling, &mut batches, clock, on_sample).await?;
        // Batches queued ahead of the last sample are waited for, so their timestamp buffers
        // are free and the output read next sees a quiet queue.
        batches.drain().await?;
        share_ticks(&mut sampled, &batches.returned);
        Ok(sampled)
    }

    /// Runs one case of `plan` end to end: its program (built from `weights` for an encoder),
    /// pipelines, measurement by the sampling policy, and the output read back, ready to send.
    /// A device lost meanwhile fails the case with [`GpuError::DeviceLost`] and is replaced, so
    /// the next case runs on a fresh one; an uncaptured GPU error fails it too.
    /// `phases` is the case's clock, started as it was announced: each phase of the case ends on
    /// it as it passes (the measurement carries them).
    pub async fn run_case(
        &mut self,
        plan: &crate::RunPlan,
        case: &crate::CaseSpec,
        weights: Option<&Weights>,
        clock: &mut impl ClockGate,
        phases: &mut CaseClock,
        on_sample: impl FnMut(u32),
    ) -> Result<crate::wire::CaseMeasurement, GpuError> {
        self.ready().await?;
        if case.kernel().and_then(|k| k.fault()) == Some(crate::Fault::LoseDevice) {
            self.device.destroy();
        }
        self.guarded(async |gpu: &Gpu| {
            let program = case.program(weights, gpu.caps()).map_err(|e| GpuError::Pipeline { kernel: case.kernel.clone(), message: e.to_string() })?;
            gpu.check_fits(&case.kernel, &program)?;
            phases.mark("build");
            let (prepared, uploaded) = gpu.prepare_timed(&case.kernel, &program, false, true).await?;
            phases.mark_at("upload", uploaded);
            phases.mark("pipelines");
            let measured = gpu.measure(&prepared, &plan.sampling, clock, on_sample).await?;
            // The batches still queued behind the last timed sample are drained with the samples.
            phases.mark_at("warmup", measured.timed_span.0);
            phases.mark("samples");
            let output = crate::wire::CaseMeasurement::encode_bytes(&gpu.read_output(&prepared, &program).await?);
            phases.mark("readback");
            let profile = match plan.sampling.profile {
                true => gpu.profile(&prepared, profile_runs(&measured.samples)).await?,
                false => Vec::new(),
            };
            if plan.sampling.profile {
                phases.mark("profile");
            }
            let measurement = crate::wire::CaseMeasurement {
                phases: phases.phases(),
                dispatches: Some(program.steps.len() as u32),
                pipelines_reused: prepared.pipelines_reused,
                ..crate::wire::CaseMeasurement::of_sampled(case.id.clone(), prepared.pipeline_ms, measured, output)
            };
            let engine_profile = (!profile.is_empty()).then(|| {
                let kernel = |(i, ms): (usize, f64)| crate::wire::EngineKernel { op: program.shaders[program.steps[i].shader].label.clone(), node: program.step_name(i), ms };
                profile.into_iter().enumerate().map(kernel).collect()
            });
            Ok(crate::wire::CaseMeasurement { features: program.features.clone(), engine_profile, ..measurement })
        })
        .await
    }

    /// Replaces a device lost since the last case (a browser reports loss asynchronously): that
    /// is no fault of the next case, unless no fresh device comes.
    pub async fn ready(&mut self) -> Result<(), GpuError> {
        if let Some(why) = self.lost() {
            self.replace_lost(why).await.map_err(GpuError::DeviceLost)?;
        }
        Ok(())
    }

    /// Runs one case's GPU work `body` on this device: a device lost meanwhile fails it with
    /// [`GpuError::DeviceLost`] and is replaced, so the next case runs on a fresh one; an
    /// uncaptured GPU error fails it too.
    pub async fn guarded<T>(&mut self, body: impl AsyncFnOnce(&Gpu) -> Result<T, GpuError>) -> Result<T, GpuError> {
        let gpu = &*self;
        let measured = async {
            // Natively, wgpu panics on some calls to a lost device (mapping a buffer at creation).
            if let Some(why) = gpu.lost() {
                return Err(GpuError::DeviceLost(why));
            }
            body(gpu).await
        }
        .await;
        let uncaptured = std::mem::take(&mut lock(&self.watch).uncaptured);
        if measured.as_ref().is_err_and(|e| !matches!(e, GpuError::MissingFeature { .. })) {
            self.await_loss_report().await;
        }
        if let Some(why) = self.lost() {
            let (Ok(why) | Err(why)) = self.replace_lost(why).await;
            return Err(GpuError::DeviceLost(why));
        }
        match (measured, uncaptured.is_empty()) {
            (Ok(_), false) => Err(GpuError::Uncaptured(uncaptured.join("; "))),
            // What the GPU reported first explains what failed after it: natively, a shader that
            // did not compile surfaces only as a failed wait for the submission that used it.
            (Err(e), false) => Err(GpuError::Uncaptured(format!("{}; then: {e}", uncaptured.join("; ")))),
            (measured, true) => measured,
        }
    }

    /// Refuses a program with a buffer larger than the device allows, naming it, before WebGPU
    /// refuses it with a less helpful validation error.
    fn check_fits(&self, label: &str, program: &Program) -> Result<(), GpuError> {
        let limits = self.device.limits();
        let most = limits.max_buffer_size.min(limits.max_storage_buffer_binding_size);
        match program.buffers.iter().find(|b| b.init.len() > most) {
            Some(b) => Err(GpuError::Pipeline {
                kernel: label.to_string(),
                message: format!("buffer `{}` needs {} bytes, more than this device allows in one binding ({most})", b.label, b.init.len()),
            }),
            None => Ok(()),
        }
    }

    /// Copies the program's output buffers back to the CPU, concatenated. A program that asks
    /// for a fresh output first gets its buffers' initial contents back and runs once more.
    pub async fn read_output(&self, case: &Prepared, program: &Program) -> Result<Vec<u8>, GpuError> {
        if program.fresh_output {
            let mut clears = self.device.create_command_encoder(&Default::default());
            for (buffer, b) in case.buffers.iter().zip(&program.buffers) {
                if let Init::View { .. } = b.init {
                    continue;
                }
                match b.init.bytes() {
                    Some(bytes) => self.queue.write_buffer(buffer, 0, &bytes),
                    None => clears.clear_buffer(buffer, 0, None),
                }
            }
            self.queue.submit([clears.finish()]);
            self.dispatch(case).await?;
        }
        self.read_ranges(&case.output_buffers()).await
    }

    /// Replaces the contents of `program`'s buffer `label` with `bytes` before the next run: a
    /// run from text writes each call's token ids and lengths so.
    pub fn write_input(&self, case: &Prepared, program: &Program, label: &str, bytes: &[u8]) -> Result<(), GpuError> {
        let index = program.buffers.iter().position(|b| b.label == label);
        let range = index.map(|i| (i, program.buffers[i].init.binding(i))).filter(|(_, (.., len))| *len >= bytes.len() as u64);
        let Some((buffer, offset)) = range.and_then(|(i, (_, offset, _))| Some((case.buffers.get(i)?, offset))) else {
            return Err(GpuError::Pipeline { kernel: label.to_string(), message: format!("the program has no buffer `{label}` of {} bytes to write", bytes.len()) });
        };
        self.queue.write_buffer(buffer, offset, bytes);
        Ok(())
    }

    /// Submits one run of `case` and reads its outputs back: one call of an app that awaits its
    /// answer.
    pub async fn run_and_read(&self, case: &Prepared) -> Result<Vec<u8>, GpuError> {
        self.queue.submit([self.encode(case, None, 1, None)]);
        self.read_ranges(&case.output_buffers()).await
    }

    /// Copies the first `len` bytes of each buffer back to the CPU, concatenated: what a check
    /// compares. Each buffer needs `COPY_SRC`.
    pub async fn read_buffers(&self, buffers: &[(&wgpu::Buffer, u64)]) -> Result<Vec<u8>, GpuError> {
        let ranges: Vec<(&wgpu::Buffer, u64, u64)> = buffers.iter().map(|&(buffer, len)| (buffer, 0, len)).collect();
        self.read_ranges(&ranges).await
    }

    /// [`read_buffers`](Gpu::read_buffers) of `len` bytes from `offset` of each buffer.
    async fn read_ranges(&self, buffers: &[(&wgpu::Buffer, u64, u64)]) -> Result<Vec<u8>, GpuError> {
        let total: u64 = buffers.iter().map(|(.., n)| n).sum();
        let readback = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("output readback"),
            size: total.max(4),
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let mut encoder = self.device.create_command_encoder(&Default::default());
        let mut at = 0;
        for &(buffer, offset, len) in buffers {
            encoder.copy_buffer_to_buffer(buffer, offset, &readback, at, len);
            at += len;
        }
        self.queue.submit([encoder.finish()]);
        let bytes = self.map_read(&readback, total).await;
        readback.destroy();
        bytes
    }

    /// Waits until submission `index` is done, as its receiver `done` reports.
    async fn finished(&self, index: wgpu::SubmissionIndex, done: oneshot::Receiver<()>) -> Result<(), GpuError> {
        self.wait_natively(Some(index))?;
        done.await.map_err(|_| dropped_callback())
    }

    /// A receiver that fires when the work submitted so far is done.
    fn done_after_submit(&self) -> oneshot::Receiver<()> {
        let (tx, rx) = oneshot::channel();
        self.queue.on_submitted_work_done(move || {
            let _ = tx.send(());
        });
        rx
    }

    async fn map_read(&self, buffer: &wgpu::Buffer, len: u64) -> Result<Vec<u8>, GpuError> {
        let slice = buffer.slice(0..len);
        let (tx, rx) = oneshot::channel();
        slice.map_async(wgpu::MapMode::Read, move |r| {
            let _ = tx.send(r);
        });
        self.wait_natively(None)?;
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

    /// Natively, callbacks fire only inside `poll`, which here waits for submission `index` (the
    /// latest when `None`) and leaves later ones running; in the browser the event loop drives
    /// them.
    fn wait_natively(&self, index: Option<wgpu::SubmissionIndex>) -> Result<(), GpuError> {
        #[cfg(not(target_arch = "wasm32"))]
        self.device
            .poll(wgpu::PollType::Wait { submission_index: index, timeout: None })
            .map_err(|e| GpuError::Wait(e.to_string()))?;
        #[cfg(target_arch = "wasm32")]
        let _ = index;
        Ok(())
    }
}

/// Writes `bytes` at `offset` of `buffer`, which is mapped at its creation. In the browser they go
/// straight into the mapped `ArrayBuffer`: wgpu's writable view first copies the whole mapping
/// into the WASM heap and back out on drop, three copies of a model's weights where one will do
/// (Chrome took 12–23 s to upload a seeded TinyLlama on the H200). A buffer refused at its
/// creation (too large) maps to nothing: the error scope says why.
///
/// A mapped range's size must be a multiple of 4 (WebGPU's `getMappedRange`): the range covers
/// `bytes` padded to it (the buffer is), else an odd count of f16s maps to nothing and stays zero.
fn write_mapped(buffer: &wgpu::Buffer, offset: u64, bytes: &[u8]) {
    if bytes.is_empty() {
        return;
    }
    let len = (bytes.len() as u64).next_multiple_of(wgpu::COPY_BUFFER_ALIGNMENT);
    let range = buffer.slice(offset..offset + len);
    #[cfg(target_arch = "wasm32")]
    if let Ok(view) = range.get_mapped_range() {
        // SAFETY: nothing allocates between the view of WASM memory and the copy out of it.
        unsafe { view.as_uint8array().set(&js_sys::Uint8Array::view(bytes), 0) };
    }
    #[cfg(not(target_arch = "wasm32"))]
    if let Ok(mut view) = range.get_mapped_range_mut() {
        view.slice(..bytes.len()).copy_from_slice(bytes);
    }
}

/// A buffer of seeded contents a device keeps for the next program: its contents, and it.
struct Kept {
    init: Init,
    buffer: wgpu::Buffer,
}

/// The parts of a buffer of `init` and where each starts: a joined buffer's, or the whole one;
/// zeroed parts left out (a new buffer is zeroed).
fn parts(init: &Init) -> Vec<(&Init, u64)> {
    match init {
        Init::Concat(parts) => {
            let mut offset = 0;
            parts
                .iter()
                .filter_map(|p| {
                    let at = offset;
                    offset += p.len();
                    (!matches!(p, Init::Zeroed(_))).then_some((p, at))
                })
                .collect()
        }
        Init::Zeroed(_) => Vec::new(),
        whole => vec![(whole, 0)],
    }
}

/// Whether a buffer of `init` is generated from a seed (in parts, where joined), and so worth
/// keeping for a later program rather than generating and uploading it again.
fn generated(init: &Init) -> bool {
    match init {
        Init::Seeded { .. } => true,
        Init::Concat(parts) => parts.iter().all(|p| generated(p) || matches!(p, Init::Zeroed(_))) && parts.iter().any(generated),
        _ => false,
    }
}

/// The watch, also after a callback panicked while holding it.
fn lock(watch: &Mutex<Watch>) -> MutexGuard<'_, Watch> {
    watch.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Timestamps as a query set resolves them: little-endian u64 ticks.
fn ticks(bytes: &[u8]) -> Vec<u64> {
    bytes.chunks_exact(8).map(|c| u64::from_le_bytes(c.try_into().expect("8-byte chunk"))).collect()
}

/// Milliseconds from a `begin` to an `end` tick, `period` ns a tick; none where the driver wrote
/// a zero or an unordered pair, as some do.
fn span_ms([begin, end]: [u64; 2], period: f64) -> Option<f64> {
    (end >= begin && begin != 0).then(|| (end - begin) as f64 * period / 1e6)
}

/// The median of `rounds`, 0 for none.
fn median(rounds: &[f64]) -> f64 {
    match rounds.is_empty() {
        true => 0.0,
        false => stats::bootstrap::median_in_place(&mut rounds.to_vec()),
    }
}

/// Resolves after `ms` on the page's timer (at once where there is no window).
#[cfg(target_arch = "wasm32")]
async fn pause(ms: i32) {
    let pause = js_sys::Promise::new(&mut |resolve, _| {
        let timer = web_sys::window().map(|w| w.set_timeout_with_callback_and_timeout_and_arguments_0(&resolve, ms));
        if !matches!(timer, Some(Ok(_))) {
            let _ = resolve.call0(&resolve);
        }
    });
    let _ = wasm_bindgen_futures::JsFuture::from(pause).await;
}

fn dropped_callback() -> GpuError {
    GpuError::Wait("the queue dropped its completion callback".into())
}

/// A batch submitted and not yet read.
struct InFlight {
    batch: u32,
    submitted_ms: f64,
    index: wgpu::SubmissionIndex,
    done: oneshot::Receiver<()>,
    /// The timestamp slot and its pending mapping, where timestamps are taken.
    timestamps: Option<(u32, oneshot::Receiver<Result<(), wgpu::BufferAsyncError>>)>,
}

/// One prepared case as the sampling policy runs it: batches of dispatches, `depth` of them
/// queued, each with its own timestamp slot read as it completes. A sample's wall time runs from
/// the later of its submit and the previous completion to its own completion, so with batches
/// queued ahead it is the GPU's throughput, not the browser's callback latency.
struct Batches<'a> {
    gpu: &'a Gpu,
    work: &'a dyn Recorded,
    queries: Option<&'a Queries>,
    depth: u32,
    /// Whether waits are nudged ([`nudges`]): steady batches in a browser that needs it.
    nudge: bool,
    /// The device's nudge count when these batches began.
    nudged_from: u64,
    queued: VecDeque<InFlight>,
    next_slot: u32,
    last_done_ms: f64,
    /// When a completion was last waited for: the turn in which already-reported batches were
    /// reported.
    tick_ms: f64,
    /// The turn in which each batch that `run` returned was reported, in order.
    returned: Vec<f64>,
}

impl Batches<'_> {
    fn submit(&mut self, batch: u32) {
        let slot = self.queries.map(|_| {
            let slot = self.next_slot;
            self.next_slot = (slot + 1) % TIMESTAMP_SLOTS;
            slot
        });
        let commands = self.gpu.encode(self.work, self.queries, batch, slot);
        let submitted_ms = now_ms();
        let index = self.gpu.queue.submit([commands]);
        let done = self.gpu.done_after_submit();
        let timestamps = slot.zip(self.queries).map(|(slot, q)| {
            let (tx, rx) = oneshot::channel();
            // Mapping waits for the submission that writes the buffer, so it resolves with it.
            q.readback[slot as usize].slice(..).map_async(wgpu::MapMode::Read, move |r| {
                let _ = tx.send(r);
            });
            (slot, rx)
        });
        self.queued.push_back(InFlight { batch, submitted_ms, index, done, timestamps });
    }

    /// Waits for the oldest batch and returns its per-dispatch times.
    async fn complete(&mut self) -> Result<Sample, GpuError> {
        let Some(mut front) = self.queued.pop_front() else {
            return Err(GpuError::Wait("no batch in flight".into()));
        };
        // A batch already reported done when we come to it was reported in the same turn as the
        // one before (a browser that reports completion on a timer reports many at once): it is
        // dated by that turn, not by when we got round to it.
        if front.done.try_recv().map_err(|_| dropped_callback())?.is_none() {
            self.gpu.settle(self.nudge, self.gpu.finished(front.index, front.done)).await?;
            self.tick_ms = now_ms();
        }
        let done_ms = now_ms();
        let n = front.batch as f64;
        let (submitted_ms, last_done_ms) = (front.submitted_ms, self.last_done_ms);
        self.last_done_ms = done_ms;
        let gpu_ms = match (front.timestamps, self.queries) {
            (Some((slot, mapped)), Some(q)) => {
                self.gpu
                    .settle(self.nudge, mapped)
                    .await
                    .map_err(|_| GpuError::Map("the mapping callback was dropped".into()))?
                    .map_err(|e| GpuError::Map(e.to_string()))?;
                let buffer = &q.readback[slot as usize];
                let ticks = ticks(&buffer.slice(..).get_mapped_range().map_err(|e| GpuError::Map(e.to_string()))?);
                buffer.unmap();
                span_ms([ticks[0], ticks[1]], f64::from(self.gpu.queue.get_timestamp_period())).map(|ms| ms / n)
            }
            _ => None,
        };
        Ok(Sample { wall_ms: steady_wall_ms(submitted_ms, last_done_ms, done_ms, n, gpu_ms), gpu_ms })
    }

    /// Waits for every batch still queued, discarding their times.
    async fn drain(&mut self) -> Result<(), GpuError> {
        while !self.queued.is_empty() {
            self.complete().await?;
        }
        self.last_done_ms = f64::NEG_INFINITY;
        Ok(())
    }
}

impl Timed for Batches<'_> {
    type Error = GpuError;

    async fn run(&mut self, batch: u32) -> Result<Sample, GpuError> {
        // Batches queued at another size belong to calibration: let them finish unrecorded.
        if self.queued.front().is_some_and(|f| f.batch != batch) {
            self.drain().await?;
        }
        while self.queued.len() < self.depth.max(1) as usize {
            self.submit(batch);
        }
        let sample = self.complete().await?;
        self.returned.push(self.tick_ms);
        Ok(sample)
    }

    fn keep_in_flight(&mut self, batches: u32) {
        self.depth = batches.clamp(1, MAX_IN_FLIGHT);
    }

    fn gpu_timer(&self) -> bool {
        self.queries.is_some()
    }

    fn completion_latency_ms(&self) -> f64 {
        self.gpu.latency_ms
    }

    fn nudges(&self) -> u64 {
        self.gpu.nudged.load(Ordering::Relaxed) - self.nudged_from
    }
}

/// A batch's wall time per dispatch, from the later of its submit and the previous batch's
/// completion to its own completion (`n` dispatches): with batches queued ahead, the GPU's
/// throughput. That span is too short when the previous completion was seen late (a browser that
/// reports completions in bursts): a batch cannot take less than its own GPU time (`gpu_ms`, per
/// dispatch), so below that the sample is the span from its own submit instead, which by
/// causality holds the whole batch.
pub fn steady_wall_ms(submitted_ms: f64, previous_done_ms: f64, done_ms: f64, n: f64, gpu_ms: Option<f64>) -> f64 {
    let throughput = (done_ms - submitted_ms.max(previous_done_ms)) / n;
    match gpu_ms {
        Some(gpu) if throughput < gpu => (done_ms - submitted_ms) / n,
        _ => throughput,
    }
}

/// Completions seen closer together than this came in one turn of the browser's event loop.
pub const SAME_TICK_MS: f64 = 1.0;

/// Per-dispatch wall times of queued batches of `batch` dispatches that were seen complete at
/// `done[1..]` (`done[0]`: the completion before the first), with each batch's GPU time per
/// dispatch in `gpu` where timestamps gave one. A browser that reports completion on a timer
/// (Firefox: every ~100 ms) reports many batches in one tick; each batch of a tick gets the tick's
/// share: the time since the previous tick over the batches it completed, which with the GPU kept
/// busy is the GPU's throughput. A completion that comes sooner after the one before than its own
/// batch's GPU time means the one before was seen late (Chrome delivers completions in bursts):
/// the two share their span too, rather than one counting the other's time.
pub fn spread_ticks(done: &[f64], batch: u32, gpu: &[Option<f64>]) -> Vec<f64> {
    let mut walls = vec![0.0; done.len().saturating_sub(1)];
    let too_soon = |i: usize| SAME_TICK_MS.max(gpu.get(i - 1).copied().flatten().unwrap_or(0.0) * f64::from(batch));
    let mut start = 1;
    while start < done.len() {
        let mut end = start;
        while end + 1 < done.len() && done[end + 1] - done[end] < too_soon(end + 1) {
            end += 1;
        }
        let per = (done[end] - done[start - 1]) / ((end - start + 1) as f64 * batch as f64);
        walls[start - 1..end].fill(per);
        start = end + 1;
    }
    walls
}

/// Gives the timed samples of `sampled`, taken with batches in flight, their share of the
/// completion ticks ([`spread_ticks`]), but never less than their own GPU time; `returned` holds
/// when each batch that the sampling ran was seen complete, in order, the timed samples last.
/// The ticks are spread over all of `returned`, not from the last completion before the timed
/// samples: the first timed batch may be seen in one tick with the warm-up batch before it, and
/// then the two share that tick's span. Counted from that warm-up completion alone, it read the
/// few µs between the two (onnxruntime-web's JSEP on Whisper-tiny in Chrome: 0.01 ms for a pass of
/// 5 ms, docs/hardware/h100-goals.md). Batches before the timed ones that share a tick with them
/// are the warm-up's, of the same size: calibration runs one batch at a time, each waited for.
pub fn share_ticks(sampled: &mut Sampled, returned: &[f64]) {
    let timed = sampled.samples.len();
    if sampled.in_flight <= 1 || returned.len() <= timed {
        return;
    }
    let untimed = returned.len() - 1 - timed;
    let gpu: Vec<Option<f64>> = std::iter::repeat_n(None, untimed).chain(sampled.samples.iter().map(|s| s.gpu_ms)).collect();
    let walls = spread_ticks(returned, sampled.batch, &gpu);
    for (s, wall) in sampled.samples.iter_mut().zip(walls[untimed..].iter().copied()) {
        // A tick of no length (everything already done when first looked at, as on a CPU adapter
        // that runs work at submit) says nothing: the sample keeps the time it was seen. A share
        // below the batch's own GPU time cannot be (the tick before it was seen late): the batch
        // took at least that. Not the span from its own submit (`steady_wall_ms`), which holds the
        // batches queued ahead of it too: two batches of one tick whose GPU times differed by 1%
        // read one and three times the GPU time with three in flight (Chrome, H200 and SwiftShader).
        if wall > 0.0 {
            s.wall_ms = s.gpu_ms.map_or(wall, |gpu| wall.max(gpu));
        }
    }
}

/// Runs a profile takes after `samples` ([`Gpu::profile`]): as many as [`PROFILE_BUDGET_MS`] holds
/// at their median, 1 to [`PROFILE_RUNS`].
pub fn profile_runs(samples: &[Sample]) -> u32 {
    if samples.is_empty() {
        return 1;
    }
    let run_ms = median(&samples.iter().map(|s| s.gpu_ms.unwrap_or(s.wall_ms)).collect::<Vec<_>>());
    ((PROFILE_BUDGET_MS / run_ms).floor() as u32).clamp(1, PROFILE_RUNS)
}

/// Work the timer runs in batches: a program of harness's, or a user's GPU bench.
pub trait Recorded {
    /// Records `batch` back-to-back runs into `encoder`; `timestamps`, where given, must be
    /// written at the beginning of the first pass and the end of the last, so they span the
    /// batch.
    fn record(&self, encoder: &mut wgpu::CommandEncoder, batch: u32, timestamps: Option<wgpu::ComputePassTimestampWrites<'_>>);
}

impl Recorded for Prepared {
    fn record(&self, encoder: &mut wgpu::CommandEncoder, batch: u32, timestamps: Option<wgpu::ComputePassTimestampWrites<'_>>) {
        let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor { label: Some("case"), timestamp_writes: timestamps });
        // State persists within a pass: a one-step program sets it once and then only
        // dispatches, which keeps encoding a large batch cheap in the browser.
        let single = self.steps.len() == 1;
        self.dispatched.fetch_add(u64::from(batch) * self.steps.len() as u64, Ordering::Relaxed);
        for i in 0..batch {
            for (shader, bind_group, [x, y, z]) in &self.steps {
                if i == 0 || !single {
                    pass.set_pipeline(&self.pipelines[*shader]);
                    pass.set_bind_group(0, bind_group, &[]);
                }
                pass.dispatch_workgroups(*x, *y, *z);
            }
        }
    }
}

/// GPU timestamp queries for the batches in flight; freed on drop.
struct Queries {
    set: wgpu::QuerySet,
    resolve: wgpu::Buffer,
    readback: Vec<wgpu::Buffer>,
}

/// A program ready to dispatch: its pipelines and bound buffers.
pub struct Prepared {
    /// Each program buffer's, a view's being the buffer it is a range of.
    buffers: Vec<wgpu::Buffer>,
    /// Whether each is its own, freed with it: not a view (whose buffer is another's), nor a
    /// buffer the device keeps for later programs.
    owned: Vec<bool>,
    pipelines: Vec<wgpu::ComputePipeline>,
    /// (pipeline index, bind group, workgroups) of each step.
    steps: Vec<(usize, wgpu::BindGroup, [u32; 3])>,
    /// (buffer index, offset, bytes) of each output.
    outputs: Vec<(usize, u64, u64)>,
    /// Milliseconds spent creating the shader modules and pipelines this program compiled.
    pub pipeline_ms: f64,
    /// Its pipelines an earlier program on this device compiled, which it reused.
    pub pipelines_reused: u32,
    /// Dispatches recorded so far ([`Prepared::dispatched`]).
    dispatched: AtomicU64,
}

impl Prepared {
    /// Each output buffer and its bytes, in the program's output order.
    fn output_buffers(&self) -> Vec<(&wgpu::Buffer, u64, u64)> {
        self.outputs.iter().map(|&(b, offset, len)| (&self.buffers[b], offset, len)).collect()
    }

    /// The dispatches recorded into command buffers so far, every run of every batch: what a
    /// test holds against the dispatches a case's report says one run issues.
    pub fn dispatched(&self) -> u64 {
        self.dispatched.load(Ordering::Relaxed)
    }
}

// In the browser wgpu leaves freeing to JavaScript's garbage collector, which lets a long run's
// GPU memory pile up between collections (Chromium grew 0.4 MB a case): a case's buffers and
// queries are freed the moment it is done with them.
impl Drop for Prepared {
    fn drop(&mut self) {
        self.buffers.iter().zip(&self.owned).filter(|(_, owned)| **owned).for_each(|(b, _)| b.destroy());
    }
}

impl Drop for Queries {
    fn drop(&mut self) {
        self.set.destroy();
        self.resolve.destroy();
        self.readback.iter().for_each(wgpu::Buffer::destroy);
    }
}

#[cfg(target_arch = "wasm32")]
#[wasm_bindgen::prelude::wasm_bindgen]
extern "C" {
    /// `static/precompile.js`: creates each `[code, entryPoint]` pipeline on `device` with
    /// `createComputePipelineAsync`, all at once; resolves when all are ready.
    #[wasm_bindgen(catch, js_namespace = harnessPrecompile, js_name = compile)]
    fn precompile_js(device: &wgpu::webgpu::GpuDevice, shaders: &js_sys::Array) -> Result<js_sys::Promise, wasm_bindgen::JsValue>;
    /// `static/subgroup-matrix.js`: wgpu's next `requestDevice` also asks for tensor cores, where
    /// the adapter has what `matmul` on them needs, `workgroup_bytes` of workgroup memory among it.
    #[wasm_bindgen(catch, js_namespace = harnessSubgroupMatrix, js_name = arm)]
    fn subgroup_matrix_arm(workgroup_bytes: u32) -> Result<(), wasm_bindgen::JsValue>;
    /// Whether `device` was given tensor cores.
    #[wasm_bindgen(catch, js_namespace = harnessSubgroupMatrix, js_name = has)]
    fn subgroup_matrix_has(device: &wgpu::webgpu::GpuDevice) -> Result<bool, wasm_bindgen::JsValue>;
    /// How many precompiled pipelines wgpu has not taken.
    #[wasm_bindgen(js_namespace = harnessPrecompile, js_name = unused)]
    fn precompile_unused() -> u32;
}

/// The WGSL as this platform's compiler takes it. Browsers want `enable subgroups;` before subgroup
/// built-ins; naga 30 (the native path) lists that directive as unimplemented and refuses it, yet
/// compiles the built-ins without it where the device has the `SUBGROUP` feature.
fn for_this_compiler(wgsl: &str) -> std::borrow::Cow<'_, str> {
    const ENABLE: &str = crate::catalog::matvec::SUBGROUPS_ENABLE;
    match wgsl.strip_prefix(ENABLE) {
        Some(rest) if !cfg!(target_arch = "wasm32") => rest.into(),
        _ => wgsl.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_zero_or_unordered_pair_of_timestamps_is_no_time() {
        assert_eq!(span_ms([1_000, 3_000], 1.0), Some(0.002));
        assert_eq!(span_ms([1_000, 3_000], 2.0), Some(0.004));
        assert_eq!(span_ms([0, 3_000], 1.0), None);
        assert_eq!(span_ms([3_000, 1_000], 1.0), None);
        assert_eq!(ticks(&[1, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0]), [1, 256]);
    }

    #[test]
    fn a_profile_takes_as_many_runs_as_its_budget_holds() {
        let at = |gpu: &[Option<f64>]| profile_runs(&gpu.iter().map(|&g| Sample { wall_ms: 40.0, gpu_ms: g }).collect::<Vec<_>>());
        // A pass on a GPU; one of 30 ms; one on a software adapter; no timestamps: the wall's 40 ms.
        assert_eq!(at(&[Some(2.2), Some(2.1), Some(2.3)]), PROFILE_RUNS);
        assert_eq!(at(&[Some(30.0), Some(31.0), Some(29.0)]), 3);
        assert_eq!(at(&[Some(250.0)]), 1);
        assert_eq!(at(&[None, None]), 2);
        assert_eq!(at(&[]), 1);
    }

    #[test]
    fn a_browser_that_reports_completion_on_a_timer_is_nudged_a_prompt_one_is_not() {
        // Firefox's poll timer (h100-firefox.md: 100.1 ms); Chrome and native wgpu, well under 1 ms.
        assert!(nudges(100.1));
        assert!(!nudges(0.05) && !nudges(NUDGE_ABOVE_MS));
        // Runs written before the setting existed were not nudged; a plan without it may be.
        assert_eq!((crate::Nudge::legacy(), crate::Nudge::default()), (crate::Nudge::Off, crate::Nudge::Auto));
        let plan: crate::RunPlan = serde_json::from_value(serde_json::json!({
            "platform": "webgpu", "mode": "steady", "warmup": 0, "samples": 3, "maxTimeMs": 1000.0, "targetCiPct": null, "cases": []
        }))
        .unwrap();
        assert_eq!(plan.sampling.nudge, crate::Nudge::Auto);
        // Steady batches only: an isolated sample waits as a one-off call does.
        let steady = plan.sampling;
        let isolated = crate::Sampling { mode: crate::SamplingMode::Isolated, ..steady };
        assert!(steady.nudged(true) && !steady.nudged(false) && !isolated.nudged(true));
    }

    #[test]
    fn batches_reported_in_one_tick_share_it() {
        // Firefox's ~100 ms completion timer: five 5 ms batches of 1000 dispatches each come back
        // in two ticks (three, then two), the GPU busy throughout.
        let done = [0.0, 100.0, 100.2, 100.3, 125.0, 125.1];
        let walls = spread_ticks(&done, 1000, &[None; 5]);
        let tick1 = 100.3 / 3.0 / 1000.0;
        let tick2 = (125.1 - 100.3) / 2.0 / 1000.0;
        for (got, want) in walls.iter().zip([tick1, tick1, tick1, tick2, tick2]) {
            assert!((got - want).abs() < 1e-9, "{walls:?}");
        }
        // Completions a batch apart (native, Chromium) keep their own intervals.
        assert_eq!(spread_ticks(&[10.0, 15.0, 20.0, 26.0], 2, &[Some(2.4); 3]), [2.5, 2.5, 3.0]);
        assert!(spread_ticks(&[1.0], 5, &[]).is_empty());
    }

    #[test]
    fn a_completion_seen_late_shares_its_span_with_the_one_seen_soon_after_it() {
        // Chrome: batches of 5 ms on the GPU (1000 dispatches of 5 µs), the GPU busy throughout;
        // the completion at 15 ms was seen at 18.5, the next on time at 20. 1.5 ms apart is less
        // than a batch takes, so the two share the 10 ms since 10: 5 µs each, not 8.5 and a
        // sample that counts its queueing behind the late one.
        let gpu = [Some(0.005); 5];
        let walls = spread_ticks(&[0.0, 5.0, 10.0, 18.5, 20.0, 25.0], 1000, &gpu);
        for w in &walls {
            assert!((w - 0.005).abs() < 1e-12, "{walls:?}");
        }
        // Without GPU times nothing tells a late completion from a slow batch.
        let walls = spread_ticks(&[0.0, 5.0, 10.0, 18.5, 20.0, 25.0], 1000, &[None; 5]);
        assert!((walls[2] - 0.0085).abs() < 1e-12 && (walls[3] - 0.0015).abs() < 1e-12, "{walls:?}");
    }

    /// Steady `samples` of `batch` dispatches each, `in_flight` batches queued.
    fn steady(samples: Vec<Sample>, batch: u32, in_flight: u32) -> Sampled {
        Sampled {
            first_ms: 1.0,
            warmup: Vec::new(),
            warmup_stop: stats::warmup::WarmupStop::Fixed,
            samples,
            stopped_by: crate::sampling::StopReason::SampleCount,
            mode: crate::sampling::SamplingMode::Steady,
            batch,
            in_flight,
            timed_span: (0.0, 1.0),
            nudges: 0,
        }
    }

    #[test]
    fn a_wall_sample_is_never_below_its_batchs_gpu_time() {
        // Batch 2 was submitted at 0 and took 4 ms on the GPU (10 dispatches), but batch 1's
        // completion was seen late, at 9.9 ms, and batch 2's at 10: the throughput view says
        // 0.01 ms a dispatch, which cannot be.
        assert_eq!(steady_wall_ms(0.0, 9.9, 10.0, 10.0, Some(0.4)), 1.0);
        // Seen on time, the throughput view stands (it is the GPU's time with batches queued).
        assert_eq!(steady_wall_ms(0.0, 6.0, 10.0, 10.0, Some(0.4)), 0.4);
        assert_eq!(steady_wall_ms(0.0, 9.9, 10.0, 10.0, None), (10.0 - 9.9) / 10.0);
        // A tick's share below a batch's GPU time is not given to it.
        let sample = |wall_ms: f64, gpu_ms: f64| Sample { wall_ms, gpu_ms: Some(gpu_ms) };
        let mut sampled = steady(vec![sample(0.5, 0.05), sample(0.5, 0.03)], 10, 2);
        share_ticks(&mut sampled, &[0.0, 0.8, 0.81, 5.0]);
        let walls: Vec<f64> = sampled.samples.iter().map(|s| s.wall_ms).collect();
        assert!(walls[0] == 0.05 && (walls[1] - 0.419).abs() < 1e-12, "the first batch's share (0.001) is below its 0.05 GPU ms: {walls:?}");
        // Two batches seen in one tick share it, each at least its own GPU time, even where the
        // share falls between their GPU times; neither keeps the span from its submit, which with
        // three in flight is three batches (seen in Chrome: 2362.8 and 7290.6 ms for 2359.8 and
        // 2394.0 of GPU time).
        sampled.samples = vec![sample(1.0, 1.0), sample(7290.6, 2394.0), sample(1.0, 1.0)];
        sampled.batch = 1;
        sampled.in_flight = 3;
        share_ticks(&mut sampled, &[0.0, 1.0, 1.0 + 4725.6, 1.0 + 4725.6 + 0.5, 4728.1]);
        let walls: Vec<f64> = sampled.samples.iter().map(|s| s.wall_ms).collect();
        assert_eq!(walls[1], 2394.0, "{walls:?}");
    }

    #[test]
    fn a_first_timed_batch_seen_in_one_tick_with_the_warm_up_before_it_shares_that_tick() {
        // Wall clock only (onnxruntime-web), batches of 1 run of about 5 ms, 3 in flight: warm-up
        // batches seen at 5, 10 and 15 ms, the last of them late, at 19.99, in one tick with the
        // first timed batch at 20; the timed ones after at 25 and 30.
        let wall = |wall_ms: f64| Sample { wall_ms, gpu_ms: None };
        let mut sampled = steady(vec![wall(0.01), wall(5.0), wall(5.0)], 1, 3);
        share_ticks(&mut sampled, &[0.0, 5.0, 10.0, 19.99, 20.0, 25.0, 30.0]);
        let walls: Vec<f64> = sampled.samples.iter().map(|s| s.wall_ms).collect();
        // The late warm-up batch and the first timed one share the 10 ms since 10.
        assert!((walls[0] - 5.0).abs() < 1e-9 && walls[1] == 5.0 && walls[2] == 5.0, "{walls:?}");
    }
}

