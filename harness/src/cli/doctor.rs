//! The options of `harness doctor`.

use super::browser::{BrowserChoice, BrowserFlagArgs, BrowserPathArgs};
use super::parse::positive_seconds;
use clap::Args;
use std::path::PathBuf;

pub const AFTER_HELP: &str = "\
The chain, in order: GPU driver (NVIDIA's /proc/driver/nvidia, AMD's and Intel's DRM devices) ->
Vulkan loader (libvulkan.so.1) -> the GPU's Vulkan driver file (ICD json) and the library it names
-> libGLdispatch (NVIDIA) -> wgpu's native adapter -> each browser's WebGPU adapter -> its
timestamp-query and shader-f16. Each link reads ok, fixed (harness mends it for the processes it
starts: VK_DRIVER_FILES for an ICD in the driver's own folder, LD_LIBRARY_PATH for a libGLdispatch
on no library path) or BROKEN with its fix; the first broken link is named at the end.

Each browser is started once, headless, with the flags `harness run` gives it (on a Linux machine
with a GPU, Chrome's and Edge's Vulkan flags: --gpu-flags), and runs one small matmul.

Exit status: 0 every browser checked reaches a hardware GPU; 1 one does not (a machine without a
GPU included); 2 no browser installed, or an error.";

/// Options of `harness doctor`.
#[derive(Debug, Args)]
pub struct DoctorArgs {
    /// Browsers to check, comma-separated; `all`: every one installed here.
    #[arg(long, value_enum, value_delimiter = ',', default_value = "all")]
    pub browser: Vec<BrowserChoice>,
    /// Where the browsers and their drivers are, when not found by searching.
    #[command(flatten)]
    pub paths: BrowserPathArgs,
    /// Browser arguments and prefs of yours, and --gpu-flags.
    #[command(flatten)]
    pub browser_flags: BrowserFlagArgs,
    /// Seconds each browser may take to start and report its adapter.
    #[arg(long, default_value_t = 60.0, value_parser = positive_seconds)]
    pub timeout: f64,
    /// Use this prebuilt page bundle instead of building one.
    #[arg(long, env = "HARNESS_BUNDLE")]
    pub bundle: Option<PathBuf>,
    /// Print the diagnosis as JSON (every link, the first broken one, the exit status).
    #[arg(long)]
    pub json: bool,
    /// Only list wgpu's native adapters, as JSON (how doctor asks the Vulkan loader why it offers
    /// no GPU, in a child of its own with VK_LOADER_DEBUG set).
    #[arg(long, hide = true)]
    pub adapters_only: bool,
}
