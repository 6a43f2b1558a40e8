//! The kernels harness measures: WGSL compute shaders, the seeded inputs they run on, their f64 CPU
//! references and tolerances, and (feature `gpu`) their dispatch through wgpu.
//!
//! The same crate compiles for `wasm32-unknown-unknown` (the browser page dispatches through WebGPU)
//! and natively (the harness computes references; `--platform native` dispatches through
//! Vulkan/Metal/DX12), so a case is reproducible from `(kernel, shape, seed)` on every platform.

pub mod catalog;
pub mod check;
pub mod kernel;
pub mod plan;
pub mod prng;
pub mod shape;
pub mod wire;

#[cfg(feature = "gpu")]
pub mod gpu;

pub use check::{compare, Tolerance, Verdict};
pub use kernel::{Fault, Kernel};
pub use plan::{CaseSpec, PlanError, RunPlan, Suite};
pub use shape::Shape;
