//! Why the GPU could not run a case, and how a case reports it.

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
    /// Work that submits its own command buffers (`GpuWork::submitted`) submitted none.
    #[error("{0}: its work submitted no command buffer to the queue it was given, so there is nothing to time; GpuWork::submitted times what its closure submits on GpuContext's queue (queue.submit, as a framework set up on that device does): submit there, or record into harness's encoder with GpuWork::new")]
    NothingSubmitted(String),
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
