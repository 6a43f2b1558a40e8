//! The machine a run happened on, as harness found it: its OS, CPU and the hardware GPUs its kernel
//! driver exposes. (What timed each case, told from this and the run's adapter, is
//! [`crate::hardware`]'s to say.)

use serde::{Deserialize, Serialize};

/// The machine a run happened on.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HostInfo {
    /// Operating system, with its release where known (`/etc/os-release`).
    pub os: String,
    /// CPU architecture.
    pub arch: String,
    /// CPU model name.
    pub cpu: String,
    /// Logical CPUs.
    pub cores: usize,
    /// Hardware GPUs the kernel driver exposes, such as `NVIDIA H100 80GB HBM3 (nvidia
    /// 580.159.04)`: with one here, a browser on a software adapter is warned about. Empty where
    /// none was found or the system is not Linux.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub gpus: Vec<String>,
}
