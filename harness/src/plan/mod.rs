//! What to run: the catalogue's suites, models and user kernels turned into cases
//! (`workload`, `manifest`; a user's ONNX file, `onnx`, and Hugging Face folder, `hf_model`), the baselines a run is compared with, and the references every
//! output is checked against.

pub mod baseline;
pub mod bench;
pub mod hf_model;
pub mod manifest;
pub mod onnx;
pub mod reference;
pub mod tuning;
pub mod workload;

use std::path::{Path, PathBuf};

/// The workspace this harness was built from, when it is still there: the page bundle is built
/// from it and default model weights are looked for in it.
pub fn source_dir() -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).parent()?.to_path_buf();
    dir.join("page").join("Cargo.toml").is_file().then_some(dir)
}

/// A folder harness keeps between runs: the one in the environment `variable`, else `name` under
/// `$XDG_CACHE_HOME/harness` or `~/.cache/harness`; `None` when that variable is `off` (or empty)
/// or no folder is known.
pub fn cache_dir(variable: &str, name: &str) -> Option<PathBuf> {
    match std::env::var_os(variable) {
        Some(v) if v == "off" || v.is_empty() => None,
        Some(v) => Some(PathBuf::from(v)),
        None => Some(
            std::env::var_os("XDG_CACHE_HOME")
                .map(PathBuf::from)
                .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))?
                .join("harness")
                .join(name),
        ),
    }
}
