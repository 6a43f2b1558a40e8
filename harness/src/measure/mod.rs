//! How a run happens: the page bundle and the server that hands it out and takes results, the
//! WebDriver and the browsers it drives, the native runner, the GPU clock probe, what this
//! machine offers a GPU-backed WebGPU (`gpu_stack`), and the controller that turns page events into checked cases, and TensorFlow.js for `--platform tfjs`.

pub mod browser;
pub mod bundle;
pub mod controller;
pub mod discovery;
pub mod driver;
pub mod events;
pub mod gpu_stack;
pub mod host;
pub mod loader;
pub mod revision;
pub mod memory;
pub mod native;
pub mod probe;
pub mod server;
pub mod npm;
pub mod webnn;
