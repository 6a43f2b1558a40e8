//! The adapter and its device: requesting them with the features and limits harness wants, what
//! they offer and how they are reported, adapting a device and a plan to each other, and watching
//! the device for loss and uncaptured errors, replacing a lost one and guarding each case's work
//! with them.

use super::error::GpuError;
#[cfg(target_arch = "wasm32")]
use super::latency::pause;
use super::Gpu;
use crate::catalog::matmul::subgroup_matrix;
use crate::program::Caps;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex, MutexGuard};

/// The optional WebGPU features harness asks for, by their WebGPU names: GPU timestamps, f16
/// kernels and subgroup kernels each use one where the adapter has it.
const FEATURES: [(&str, wgpu::Features); 3] = [
    ("timestamp-query", wgpu::Features::TIMESTAMP_QUERY),
    ("shader-f16", wgpu::Features::SHADER_F16),
    ("subgroups", wgpu::Features::SUBGROUP),
];

/// Shader capabilities wgpu offers natively (they have no WebGPU name) that a framework set up on
/// harness's device may use: cubecl-wgpu (burn's wgpu backend) reads i64/u64, f64 and f32 atomics
/// off the *adapter's* features and writes shaders with them, which a device without them rejects.
/// harness's own kernels use none of them.
#[cfg(not(target_arch = "wasm32"))]
pub const SHADER_CAPABILITIES: wgpu::Features =
    wgpu::Features::SHADER_INT64.union(wgpu::Features::SHADER_F64).union(wgpu::Features::SHADER_FLOAT32_ATOMIC);

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

/// What the device's callbacks reported: its loss, and errors no error scope caught.
#[derive(Default)]
pub(super) struct Watch {
    lost: Option<String>,
    uncaptured: Vec<String>,
}

impl Gpu {
    /// Requests the high-performance adapter and a device with its full limits, plus
    /// `timestamp-query`, `shader-f16` and `subgroups` where the adapter offers them (and natively
    /// [`SHADER_CAPABILITIES`]), and watches the device for loss and uncaptured errors.
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
        #[cfg(not(target_arch = "wasm32"))]
        let wanted = wanted | SHADER_CAPABILITIES;
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
            instance,
            adapter,
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

    /// The device, for work harness does not describe itself (a user's GPU bench).
    pub fn device(&self) -> &wgpu::Device {
        &self.device
    }

    /// The queue of [`Gpu::device`].
    pub fn queue(&self) -> &wgpu::Queue {
        &self.queue
    }

    /// The instance the adapter came from: a framework set up on harness's device (cubecl-wgpu's
    /// `init_device`) takes it with the adapter, device and queue.
    pub fn instance(&self) -> &wgpu::Instance {
        &self.instance
    }

    /// The adapter of [`Gpu::device`].
    pub fn adapter(&self) -> &wgpu::Adapter {
        &self.adapter
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
        if uncaptured.is_empty() {
            return measured;
        }
        let uncaptured = format!("{}{}", uncaptured.join("; "), rejected_shaders().await);
        match measured {
            Ok(_) => Err(GpuError::Uncaptured(uncaptured)),
            // What the GPU reported first explains what failed after it: natively, a shader that
            // did not compile surfaces only as a failed wait for the submission that used it.
            Err(e) => Err(GpuError::Uncaptured(format!("{uncaptured}; then: {e}"))),
        }
    }

    /// Natively, callbacks fire only inside `poll`, which here waits for submission `index` (the
    /// latest when `None`) and leaves later ones running; in the browser the event loop drives
    /// them.
    pub(super) fn wait_natively(&self, index: Option<wgpu::SubmissionIndex>) -> Result<(), GpuError> {
        #[cfg(not(target_arch = "wasm32"))]
        self.device
            .poll(wgpu::PollType::Wait { submission_index: index, timeout: None })
            .map_err(|e| GpuError::Wait(e.to_string()))?;
        #[cfg(target_arch = "wasm32")]
        let _ = index;
        Ok(())
    }
}

/// In the browser, the compiler's messages for the shader modules it rejected since the last call
/// (`static/shader-errors.js`), as text to append to an error: a pipeline made from such a module
/// fails saying only that the module is invalid. Natively wgpu's error carries naga's message.
async fn rejected_shaders() -> String {
    #[cfg(target_arch = "wasm32")]
    {
        if let Ok(settled) = shader_errors_settled(1000) {
            let _ = wasm_bindgen_futures::JsFuture::from(settled).await;
        }
        shader_errors_take().unwrap_or_default()
    }
    #[cfg(not(target_arch = "wasm32"))]
    String::new()
}

/// The watch, also after a callback panicked while holding it.
fn lock(watch: &Mutex<Watch>) -> MutexGuard<'_, Watch> {
    watch.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

#[cfg(target_arch = "wasm32")]
#[wasm_bindgen::prelude::wasm_bindgen]
extern "C" {
    /// `static/subgroup-matrix.js`: wgpu's next `requestDevice` also asks for tensor cores, where
    /// the adapter has what `matmul` on them needs, `workgroup_bytes` of workgroup memory among it,
    /// and for `subgroups` where the adapter has it (frameworks' browser shaders enable it).
    #[wasm_bindgen(catch, js_namespace = harnessSubgroupMatrix, js_name = arm)]
    fn subgroup_matrix_arm(workgroup_bytes: u32) -> Result<(), wasm_bindgen::JsValue>;
    /// Whether `device` was given tensor cores.
    #[wasm_bindgen(catch, js_namespace = harnessSubgroupMatrix, js_name = has)]
    fn subgroup_matrix_has(device: &wgpu::webgpu::GpuDevice) -> Result<bool, wasm_bindgen::JsValue>;
    /// `static/shader-errors.js`: resolves once every shader module's compile messages are in, or
    /// after `ms`.
    #[wasm_bindgen(catch, js_namespace = harnessShaderErrors, js_name = settled)]
    fn shader_errors_settled(ms: u32) -> Result<js_sys::Promise, wasm_bindgen::JsValue>;
    /// The compile errors kept since the last call, as text to append to an error ('' when none).
    #[wasm_bindgen(catch, js_namespace = harnessShaderErrors, js_name = take)]
    fn shader_errors_take() -> Result<String, wasm_bindgen::JsValue>;
}
