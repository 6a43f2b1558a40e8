//! The page bundle: `index.html`, `main.js` and the wasm-bindgen output of the `page` crate.
//! Built from the source tree when harness runs from one (cargo rebuilds only what changed and
//! the bindgen step is skipped when the WASM is unchanged), or taken ready-made with `--bundle`.

use crate::plan::source_dir;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::SystemTime;

/// The page's static files, copied into every bundle: built into harness, so a bench bundle needs
/// no source tree.
const STATIC_FILES: [(&str, &str); 11] = [
    ("index.html", include_str!("../../../page/static/index.html")),
    ("main.js", include_str!("../../../page/static/main.js")),
    ("tfjs.js", include_str!("../../../page/static/tfjs.js")),
    ("ort.js", include_str!("../../../page/static/ort.js")),
    ("webnn.js", include_str!("../../../page/static/webnn.js")),
    ("precompile.js", include_str!("../../../page/static/precompile.js")),
    ("subgroup-matrix.js", include_str!("../../../page/static/subgroup-matrix.js")),
    ("transformers.js", include_str!("../../../page/static/transformers.js")),
    ("completion.js", include_str!("../../../page/static/completion.js")),
    ("gpu-timer.js", include_str!("../../../page/static/gpu-timer.js")),
    ("shader-errors.js", include_str!("../../../page/static/shader-errors.js")),
];

/// A folder the server can serve as the page.
#[derive(Debug, Clone)]
pub struct Bundle {
    /// The folder.
    pub dir: PathBuf,
    /// True when the WASM glue was regenerated, false when reused.
    pub rebuilt: bool,
}

/// Why no bundle could be had.
#[derive(Debug, thiserror::Error)]
pub enum BundleError {
    /// Neither `--bundle` nor a source tree.
    #[error("no page bundle: this harness was not run from its source tree; pass --bundle DIR (a folder holding index.html, main.js, tfjs.js, ort.js, webnn.js, precompile.js, subgroup-matrix.js, transformers.js, completion.js, gpu-timer.js, shader-errors.js and pkg/)")]
    NoSource,
    /// `--bundle` points at something incomplete.
    #[error("--bundle {0}: missing {1}; build one with `harness run` from the source tree (it is written to target/harness-bundle)")]
    Incomplete(PathBuf, String),
    /// The wasm32 target is not installed.
    #[error("the wasm32-unknown-unknown target is not installed: run `rustup target add wasm32-unknown-unknown`")]
    NoWasmTarget,
    /// cargo failed to build the page.
    #[error("building the page crate for wasm32 failed:\n{0}")]
    Cargo(String),
    /// cargo could not be run at all.
    #[error("could not run cargo to build the page ({0}); is the Rust toolchain on PATH?")]
    NoCargo(std::io::Error),
    /// wasm-bindgen failed.
    #[error("wasm-bindgen failed on {0}: {1}")]
    Bindgen(PathBuf, String),
    /// File system trouble.
    #[error("{0}: {1}")]
    Io(PathBuf, std::io::Error),
}

/// A ready bundle: `explicit` when given (checked), else built from the source tree.
pub fn prepare(explicit: Option<&Path>) -> Result<Bundle, BundleError> {
    if let Some(dir) = explicit {
        check_complete(dir)?;
        return Ok(Bundle { dir: dir.to_path_buf(), rebuilt: false });
    }
    let src = source_dir().ok_or(BundleError::NoSource)?;
    build(&src)
}

fn check_complete(dir: &Path) -> Result<(), BundleError> {
    for f in STATIC_FILES.map(|(f, _)| f).into_iter().chain(["pkg/page.js", "pkg/page_bg.wasm"]) {
        if !dir.join(f).is_file() {
            return Err(BundleError::Incomplete(dir.to_path_buf(), f.to_string()));
        }
    }
    Ok(())
}

fn target_dir(src: &Path) -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| src.join("target"))
}

fn build(src: &Path) -> Result<Bundle, BundleError> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let out = Command::new(cargo)
        .args(["build", "--quiet", "-p", "page", "--target", "wasm32-unknown-unknown", "--profile", "wasm"])
        .current_dir(src)
        .output()
        .map_err(BundleError::NoCargo)?;
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr).to_string();
        if stderr.contains("wasm32-unknown-unknown") && stderr.contains("target may not be installed") {
            return Err(BundleError::NoWasmTarget);
        }
        return Err(BundleError::Cargo(stderr));
    }
    let target = target_dir(src);
    assemble(&target.join("wasm32-unknown-unknown/wasm/page.wasm"), &target.join("harness-bundle"))
}

/// The page in `dir` around `wasm`, a WASM module built for the page: the catalogue's, or a
/// bench target's (`harness bench`), which exports `harness_bench_run` in place of `run`.
pub fn assemble(wasm: &Path, dir: &Path) -> Result<Bundle, BundleError> {
    let pkg = dir.join("pkg");
    let glue = pkg.join("page_bg.wasm");
    let rebuilt = modified(wasm) > modified(&glue);
    // Another harness run may be serving this bundle right now (two runs from one tree, tests run
    // side by side): every file is written beside its place and renamed into it, so a browser
    // never loads half a file, and a file that is already right is left alone.
    if rebuilt {
        let fresh = dir.join(format!("pkg.{}", std::process::id()));
        std::fs::create_dir_all(&fresh).map_err(|e| BundleError::Io(fresh.clone(), e))?;
        wasm_bindgen_cli_support::Bindgen::new()
            .input_path(wasm)
            .web(true)
            .map_err(|e| BundleError::Bindgen(wasm.to_path_buf(), e.to_string()))?
            .typescript(false)
            .out_name("page")
            .generate(&fresh)
            .map_err(|e| BundleError::Bindgen(wasm.to_path_buf(), format!("{e:#}")))?;
        std::fs::create_dir_all(&pkg).map_err(|e| BundleError::Io(pkg.clone(), e))?;
        for entry in std::fs::read_dir(&fresh).map_err(|e| BundleError::Io(fresh.clone(), e))?.flatten() {
            let to = pkg.join(entry.file_name());
            std::fs::rename(entry.path(), &to).map_err(|e| BundleError::Io(to, e))?;
        }
        let _ = std::fs::remove_dir_all(&fresh);
    }
    for (f, text) in STATIC_FILES {
        let to = dir.join(f);
        if std::fs::read(&to).ok().as_deref() != Some(text.as_bytes()) {
            let tmp = dir.join(format!("{f}.{}", std::process::id()));
            std::fs::write(&tmp, text).and_then(|_| std::fs::rename(&tmp, &to)).map_err(|e| BundleError::Io(to, e))?;
        }
    }
    Ok(Bundle { dir: dir.to_path_buf(), rebuilt })
}

fn modified(p: &Path) -> Option<SystemTime> {
    std::fs::metadata(p).and_then(|m| m.modified()).ok()
}
