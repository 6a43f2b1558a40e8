//! Dispatching a kernel through wgpu and timing it: the browser's WebGPU on wasm32, Vulkan, Metal
//! or DX12 natively. One code path, so the page and `--platform native` measure the same thing.
//!
//! By concern, each module naming only those after it: running a case end to end (`run`);
//! requesting the adapter and device, what it offers, its loss and uncaptured errors (`device`);
//! completion latency and the Firefox nudge (`latency`); timing batches in flight and profiles
//! (`timing`); timing work that submits its own command buffers (`submitted`), by the page's GPU
//! timer in a browser (`page_timer`); reading buffers back (`readback`); preparing a program's buffers and pipelines
//! (`prepare`); why the GPU could not run a case (`error`). [`Gpu`] itself is here, its methods
//! in the module of their concern.

mod device;
mod error;
mod latency;
mod page_timer;
mod prepare;
mod readback;
mod run;
mod submitted;
mod timing;

pub use crate::sampling::now_ms;
#[cfg(not(target_arch = "wasm32"))]
pub use device::{native_adapters, NativeAdapter, SHADER_CAPABILITIES};
pub use error::GpuError;
pub use latency::{nudges, LATENCY_ROUNDS, NUDGE_ABOVE_MS, NUDGE_EVERY_MS};
pub use prepare::Prepared;
pub use page_timer::enable as enable_page_timer;
pub use submitted::Submit;
pub use timing::{profile_runs, share_ticks, spread_ticks, steady_wall_ms, Recorded, PROFILE_BUDGET_MS, PROFILE_RUNS, SAME_TICK_MS};

use device::Watch;
use prepare::Kept;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex};

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
    instance: wgpu::Instance,
    adapter: wgpu::Adapter,
    device: wgpu::Device,
    queue: wgpu::Queue,
    watch: Arc<Mutex<Watch>>,
}
