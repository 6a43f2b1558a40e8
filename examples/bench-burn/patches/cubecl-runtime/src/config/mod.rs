/// Autotune config module.
pub mod autotune;
/// Cache config module, re-exported from `cubecl-environment`.
#[cfg(std_io)]
pub mod cache {
    pub use cubecl_environment::persistence::CacheConfig;
}
/// Compilation config module.
pub mod compilation;
/// Which named environment the process warms into.
pub mod environment;
/// Memory config module.
pub mod memory;
/// Profiling config module.
pub mod profiling;
/// Human-readable byte sizes for config files.
pub mod size;
/// Streaming config module.
pub mod streaming;
/// Throughput config module.
pub mod throughput;

mod base;
mod logger;

pub use base::*;
pub use cubecl_environment::config::RuntimeConfig;
pub use logger::Logger;
