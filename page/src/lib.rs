//! The WASM entry of the page harness serves: fetches the run plan, runs every case through
//! WebGPU (wgpu's WebGPU backend), and POSTs each case's measurement the moment it is done, so a
//! crash later in the run loses nothing. The page's JavaScript (`static/main.js`) owns adapter
//! diagnostics, the progress WebSocket and error reporting.

#[cfg(target_arch = "wasm32")]
mod engine;
#[cfg(target_arch = "wasm32")]
mod ort;
#[cfg(target_arch = "wasm32")]
mod runner;
#[cfg(target_arch = "wasm32")]
mod text;
#[cfg(target_arch = "wasm32")]
mod tfjs;
#[cfg(target_arch = "wasm32")]
mod webnn;

#[cfg(target_arch = "wasm32")]
pub use runner::run;
