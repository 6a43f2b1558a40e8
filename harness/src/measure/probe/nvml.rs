//! NVIDIA clocks through NVML, the library behind `nvidia-smi`. `nvml-wrapper` loads
//! `libnvidia-ml` when the source is opened, so harness builds anywhere and a machine without the
//! NVIDIA driver merely gets an error.

use super::throttle::throttle_names;
use super::{ClockReading, ClockSource, ProbeError};
use nvml_wrapper::enum_wrappers::device::{Clock, TemperatureSensor};
use nvml_wrapper::error::NvmlError;
use nvml_wrapper::Nvml;
use std::sync::OnceLock;

/// The driver library NVML is loaded from (as `nvml-wrapper` names it).
#[cfg(target_os = "linux")]
const LIBRARY: &str = "libnvidia-ml.so.1";
#[cfg(not(target_os = "linux"))]
const LIBRARY: &str = "nvml.dll";

/// NVML, loaded once and never unloaded: shutting it down and unloading the driver library
/// while the probe thread's exit still runs its thread-local destructors is a classic crash at
/// exit (harness aborted with `free(): invalid pointer` after its reports on the H100).
static NVML: OnceLock<Nvml> = OnceLock::new();

fn nvml() -> Result<&'static Nvml, ProbeError> {
    if let Some(n) = NVML.get() {
        return Ok(n);
    }
    let loaded = Nvml::init()?;
    Ok(NVML.get_or_init(|| loaded))
}

/// Reads one NVIDIA GPU through NVML: the most direct source, a driver call per reading.
pub struct NvmlSource {
    nvml: &'static Nvml,
    index: u32,
    name: String,
}

impl NvmlSource {
    /// Loads NVML and checks GPU `index` is there.
    pub fn open(index: u32) -> Result<Self, ProbeError> {
        let nvml = nvml()?;
        let name = nvml.device_by_index(index)?.name()?;
        Ok(NvmlSource { nvml, index, name })
    }
}

impl ClockSource for NvmlSource {
    fn name(&self) -> String {
        "NVML".into()
    }

    fn device(&self) -> Option<String> {
        Some(self.name.clone())
    }

    fn is_stand_in(&self) -> bool {
        false
    }

    /// The SM clock must be read; the rest is `None` where the GPU does not support it (power on
    /// some boards, for one).
    fn read(&mut self) -> Result<ClockReading, ProbeError> {
        // Looked up each time because a `Device` borrows the `Nvml` it came from; a handle
        // lookup by index is cheap next to the reads.
        let device = self.nvml.device_by_index(self.index)?;
        Ok(ClockReading {
            sm_mhz: Some(f64::from(device.clock_info(Clock::SM)?)),
            mem_mhz: device.clock_info(Clock::Memory).ok().map(f64::from),
            power_w: device.power_usage().ok().map(|mw| f64::from(mw) / 1e3),
            temp_c: device.temperature(TemperatureSensor::Gpu).ok().map(f64::from),
            throttle: device.current_throttle_reasons().map(|r| throttle_names(r.bits())).unwrap_or_default(),
        })
    }
}

/// Why NVML does not apply, as one phrase for [`super::NoProbe`].
pub fn why_not(error: &ProbeError) -> String {
    match error {
        ProbeError::Nvml(NvmlError::LibloadingError(_)) => format!("no NVIDIA driver library ({LIBRARY}) for NVML"),
        other => other.to_string(),
    }
}
