//! The kernels harness measures: WGSL compute shaders, the seeded inputs they run on, their f64 CPU
//! references and tolerances, and (feature `gpu`) their dispatch through wgpu.
//!
//! The same crate compiles for `wasm32-unknown-unknown` (the browser page dispatches through WebGPU)
//! and natively (the harness computes references; `--platform native` dispatches through
//! Vulkan/Metal/DX12), so a case is reproducible from `(kernel, shape, seed)` on every platform.

pub mod bench;
pub mod case_loop;
pub mod catalog;
pub mod check;
pub mod dtype;
pub mod feed;
pub mod gpu_timer;
pub mod hf_pipeline;
pub mod info;
pub mod kernel;
pub mod model;
pub mod own_model;
pub mod placement;
pub mod plan;
pub mod prng;
pub mod program;
pub mod quant;
pub mod real;
pub mod rows;
pub mod sampling;
pub mod shape;
pub mod software;
pub mod suite;
pub mod tfjs;
pub mod webnn;
pub mod user;
pub mod wire;
pub mod workload;

#[cfg(feature = "gpu")]
pub mod gpu;

/// The page's HTTP API to harness, where the page runs.
#[cfg(all(feature = "gpu", target_arch = "wasm32"))]
pub mod api;

pub use check::{compare, CheckRule, Drift, Tolerance, Verdict};
pub use dtype::Dtype;
pub use info::CaseInfo;
pub use kernel::{Fault, Kernel};
pub use plan::{CaseSpec, ColdStart, Platform, PlanError, RunPlan};
pub use sampling::{Nudge, Sampling, SamplingMode, WarmupPolicy, WarmupStop};
pub use shape::Shape;
pub use suite::Suite;
pub use workload::Workload;

#[cfg(test)]
mod cpu_tests {
    use crate::{compare, plan, Suite};

    #[test]
    fn every_cpu_kernel_passes_its_check() {
        for case in plan::build_cases(Suite::Quick, &[], 1).unwrap() {
            let k = case.kernel().unwrap();
            let inputs = k.inputs(&case.shape, case.seed);
            let v = compare(&k.cpu(&case.shape, &inputs), &k.reference(&case.shape, &inputs), k.tolerance(&case.shape));
            assert!(v.passed, "{}: {v:?}", case.id);
        }
    }
}
