//! Where the JavaScript engines harness runs beside its own come from: TensorFlow.js for
//! `--platform tfjs` (the browser bundles of `@tensorflow/tfjs-core` and
//! `@tensorflow/tfjs-backend-webgpu`) and onnxruntime-web for `--platform ort-webgpu`/`ort-jsep`
//! (its `dist/` bundles and WASM), transformers.js for `--platform transformers` (its browser
//! bundle, and the WASM of the onnxruntime-web build it pins). Each is installed by npm under a
//! folder (`ci/setup.sh` puts them in `target/tfjs`, `target/ort` and `target/transformers` of the
//! source tree; a flag or environment variable names another), checked at the versions harness
//! drives before any browser starts, and served to the page under `/tfjs/`, `/ort/` or
//! `/transformers/`.

use crate::plan::source_dir;
use std::path::{Path, PathBuf};

/// One engine's npm install, as harness looks for it.
#[derive(Debug)]
pub struct NpmEngine {
    /// Its name (`TensorFlow.js`).
    pub name: &'static str,
    /// The platforms that need it, as the error names them (`--platform tfjs`).
    pub platform: &'static str,
    /// The npm packages its files come from, each `(package, version, given to npm install)`,
    /// the engine's own first (its version is the one harness names): a package another pulls in
    /// (transformers.js's onnxruntime-web) is checked, not named.
    pub packages: &'static [(&'static str, &'static str, bool)],
    /// What `npm install` adds to its usual flags.
    pub npm_flags: &'static str,
    /// The folder under the source tree's `target/` it is installed in, and the URL path the
    /// server serves its files under.
    pub dir: &'static str,
    /// The flag that names another folder (`--tfjs-dir`), and its environment variable.
    pub flag: &'static str,
    /// See `flag`.
    pub env: &'static str,
    /// The files the page loads: (served name, npm package, file in it).
    pub files: &'static [(&'static str, &'static str, &'static str)],
}

/// TensorFlow.js 4.22's WebGPU backend.
pub const TFJS: NpmEngine = NpmEngine {
    name: "TensorFlow.js",
    platform: "--platform tfjs",
    packages: &[("@tensorflow/tfjs-core", kernels::tfjs::VERSION, true), ("@tensorflow/tfjs-backend-webgpu", kernels::tfjs::VERSION, true)],
    npm_flags: "",
    dir: "tfjs",
    flag: "--tfjs-dir",
    env: "HARNESS_TFJS_DIR",
    files: &[
        ("tf-core.min.js", "@tensorflow/tfjs-core", "dist/tf-core.min.js"),
        ("tf-backend-webgpu.min.js", "@tensorflow/tfjs-backend-webgpu", "dist/tf-backend-webgpu.min.js"),
    ],
};

/// onnxruntime-web: each execution provider's bundle and the WASM it loads.
pub const ORT: NpmEngine = NpmEngine {
    name: "onnxruntime-web",
    platform: "--platform ort-webgpu/ort-jsep",
    packages: &[("onnxruntime-web", kernels::model::onnx::ORT_WEB_VERSION, true)],
    npm_flags: "",
    dir: "ort",
    flag: "--ort-dir",
    env: "HARNESS_ORT_DIR",
    files: &[
        ("ort.webgpu.min.js", "onnxruntime-web", "dist/ort.webgpu.min.js"),
        ("ort-wasm-simd-threaded.asyncify.mjs", "onnxruntime-web", "dist/ort-wasm-simd-threaded.asyncify.mjs"),
        ("ort-wasm-simd-threaded.asyncify.wasm", "onnxruntime-web", "dist/ort-wasm-simd-threaded.asyncify.wasm"),
        ("ort.min.js", "onnxruntime-web", "dist/ort.min.js"),
        ("ort-wasm-simd-threaded.jsep.mjs", "onnxruntime-web", "dist/ort-wasm-simd-threaded.jsep.mjs"),
        ("ort-wasm-simd-threaded.jsep.wasm", "onnxruntime-web", "dist/ort-wasm-simd-threaded.jsep.wasm"),
    ],
};

/// transformers.js: its one-module browser bundle (onnxruntime-web's JavaScript inside) and the
/// WASM of the onnxruntime-web build it pins, which it would otherwise fetch from a CDN. Its
/// `onnxruntime-node` dependency (native, with an install script that downloads CUDA libraries)
/// and `sharp` are not used in a browser: npm's scripts and optional packages are skipped.
pub const TRANSFORMERS: NpmEngine = NpmEngine {
    name: "transformers.js",
    platform: "--platform transformers",
    packages: &[
        ("@huggingface/transformers", kernels::model::onnx::TRANSFORMERS_VERSION, true),
        ("onnxruntime-web", kernels::model::onnx::TRANSFORMERS_ORT_VERSION, false),
    ],
    npm_flags: "--ignore-scripts --omit=optional ",
    dir: "transformers",
    flag: "--transformers-dir",
    env: "HARNESS_TRANSFORMERS_DIR",
    files: &[
        ("transformers.min.js", "@huggingface/transformers", "dist/transformers.min.js"),
        ("ort-wasm-simd-threaded.asyncify.mjs", "onnxruntime-web", "dist/ort-wasm-simd-threaded.asyncify.mjs"),
        ("ort-wasm-simd-threaded.asyncify.wasm", "onnxruntime-web", "dist/ort-wasm-simd-threaded.asyncify.wasm"),
    ],
};

/// Every engine, each served under `/{dir}/`.
pub const ENGINES: [&NpmEngine; 3] = [&TFJS, &ORT, &TRANSFORMERS];

impl NpmEngine {
    /// The command that installs it where harness looks by default.
    pub fn install_command(&self) -> String {
        let at: Vec<String> = self.packages.iter().filter(|p| p.2).map(|(p, v, _)| format!("{p}@{v}")).collect();
        format!("npm install --prefix target/{} --no-save --no-package-lock {}{}", self.dir, self.npm_flags, at.join(" "))
    }

    /// The version harness drives (its first package's).
    pub fn version(&self) -> &'static str {
        self.packages[0].1
    }

    /// The version harness drives of `package`, one of its files' packages.
    fn version_of(&self, package: &str) -> &'static str {
        self.packages.iter().find(|p| p.0 == package).map_or(self.version(), |p| p.1)
    }

    /// Where npm put `package` under `dir`: nested under a package that depends on it at
    /// another version than the top level's, else at the top level.
    fn package_root(&self, dir: &Path, package: &str) -> PathBuf {
        let modules = dir.join("node_modules");
        self.packages
            .iter()
            .filter(|p| p.0 != package)
            .map(|p| modules.join(p.0).join("node_modules").join(package))
            .find(|nested| nested.join("package.json").is_file())
            .unwrap_or_else(|| modules.join(package))
    }
}

/// Why an engine's files cannot be served.
#[derive(Debug, thiserror::Error)]
pub enum NpmError {
    /// Not installed in the folder looked at.
    #[error(
        "{p}: {n} {v} is not installed in {d} ({missing} is missing). Install it with `bash ci/setup.sh`, or from the \
         source tree with `{c}`; or pass {f} DIR (or set {e}) to a folder where npm installed it",
        p = .engine.platform, n = .engine.name, v = .engine.version(), d = .dir.display(), c = .engine.install_command(), f = .engine.flag, e = .engine.env
    )]
    Missing {
        /// The engine.
        engine: &'static NpmEngine,
        /// The folder.
        dir: PathBuf,
        /// The first file missing.
        missing: String,
    },
    /// Installed at another version than harness drives.
    #[error(
        "{p}: {package} in {d} is version {found}, harness drives {v}; reinstall with `{c}`",
        p = .engine.platform, d = .dir.display(), v = .engine.version_of(.package), c = .engine.install_command()
    )]
    WrongVersion {
        /// The engine.
        engine: &'static NpmEngine,
        /// The folder.
        dir: PathBuf,
        /// The npm package.
        package: &'static str,
        /// Its version there.
        found: String,
    },
    /// Neither the flag nor a source tree to look in.
    #[error(
        "{p}: this harness was not run from its source tree; pass {f} DIR (or set {e}) to the folder npm installed {n} {v} into",
        p = .0.platform, f = .0.flag, e = .0.env, n = .0.name, v = .0.version()
    )]
    NoDir(&'static NpmEngine),
}

/// An engine's files, found and checked.
#[derive(Debug, Clone)]
pub struct EngineFiles {
    /// The engine (served under `/{engine.dir}/`).
    pub engine: &'static NpmEngine,
    /// (served name, path) of each file.
    pub files: Vec<(&'static str, PathBuf)>,
}

impl NpmEngine {
    /// Its files under `explicit` (the flag), else under `target/{dir}` of the source tree.
    pub fn find(&'static self, explicit: Option<&Path>) -> Result<EngineFiles, NpmError> {
        let dir = match explicit {
            Some(d) => d.to_path_buf(),
            None => source_dir().ok_or(NpmError::NoDir(self))?.join("target").join(self.dir),
        };
        self.in_dir(&dir)
    }

    /// Its files in npm's install under `dir`, at the version harness drives.
    pub fn in_dir(&'static self, dir: &Path) -> Result<EngineFiles, NpmError> {
        let mut files = Vec::new();
        for &(served, package, file) in self.files {
            let root = self.package_root(dir, package);
            let missing = |p: &Path| NpmError::Missing { engine: self, dir: dir.to_path_buf(), missing: p.strip_prefix(dir).unwrap_or(p).display().to_string() };
            let manifest = root.join("package.json");
            let text = std::fs::read_to_string(&manifest).map_err(|_| missing(&manifest))?;
            let found = serde_json::from_str::<serde_json::Value>(&text)
                .ok()
                .and_then(|v| v.get("version").and_then(|v| v.as_str()).map(str::to_string))
                .unwrap_or_else(|| "unknown".into());
            if found != self.version_of(package) {
                return Err(NpmError::WrongVersion { engine: self, dir: dir.to_path_buf(), package, found });
            }
            let bundle = root.join(file);
            if !bundle.is_file() {
                return Err(missing(&bundle));
            }
            files.push((served, bundle));
        }
        Ok(EngineFiles { engine: self, files })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn install(engine: &NpmEngine, dir: &Path, version: &str) {
        for (_, package, file) in engine.files {
            let root = dir.join("node_modules").join(package);
            let version = if version == engine.version() { engine.version_of(package) } else { version };
            std::fs::create_dir_all(root.join("dist")).unwrap();
            std::fs::write(root.join("package.json"), format!(r#"{{"name": "{package}", "version": "{version}"}}"#)).unwrap();
            std::fs::write(root.join(file), "/* bundle */").unwrap();
        }
    }

    #[test]
    fn an_install_is_found_with_every_file() {
        let dir = tempfile::tempdir().unwrap();
        install(&TFJS, dir.path(), kernels::tfjs::VERSION);
        let found = TFJS.in_dir(dir.path()).unwrap();
        let names: Vec<&str> = found.files.iter().map(|(n, _)| *n).collect();
        assert_eq!(names, ["tf-core.min.js", "tf-backend-webgpu.min.js"]);
        assert!(found.files.iter().all(|(_, p)| p.is_file()));
        install(&ORT, dir.path(), kernels::model::onnx::ORT_WEB_VERSION);
        let found = ORT.in_dir(dir.path()).unwrap();
        assert_eq!((found.engine.dir, found.files.len()), ("ort", 6));
    }

    #[test]
    fn transformers_js_is_found_with_the_onnxruntime_web_it_pins_nested_or_not() {
        let dir = tempfile::tempdir().unwrap();
        install(&TRANSFORMERS, dir.path(), kernels::model::onnx::TRANSFORMERS_VERSION);
        let found = TRANSFORMERS.in_dir(dir.path()).unwrap();
        assert_eq!(found.files.len(), 3);
        // Beside an onnxruntime-web of another version at the top level, npm nests the pinned one.
        std::fs::write(dir.path().join("node_modules/onnxruntime-web/package.json"), r#"{"version": "1.30.0"}"#).unwrap();
        let err = TRANSFORMERS.in_dir(dir.path()).unwrap_err().to_string();
        assert!(err.contains("onnxruntime-web") && err.contains("1.30.0") && err.contains(kernels::model::onnx::TRANSFORMERS_ORT_VERSION), "{err}");
        assert!(err.contains("npm install --prefix target/transformers --no-save --no-package-lock --ignore-scripts --omit=optional @huggingface/transformers@4.3.1"), "{err}");
        let nested = dir.path().join("node_modules/@huggingface/transformers/node_modules/onnxruntime-web");
        std::fs::create_dir_all(nested.join("dist")).unwrap();
        std::fs::write(nested.join("package.json"), format!(r#"{{"version": "{}"}}"#, kernels::model::onnx::TRANSFORMERS_ORT_VERSION)).unwrap();
        for f in ["ort-wasm-simd-threaded.asyncify.mjs", "ort-wasm-simd-threaded.asyncify.wasm"] {
            std::fs::write(nested.join("dist").join(f), "").unwrap();
        }
        let found = TRANSFORMERS.in_dir(dir.path()).unwrap();
        assert!(found.files[1].1.starts_with(&nested), "{:?}", found.files);
    }

    #[test]
    fn a_missing_install_names_the_command_that_installs_it() {
        let dir = tempfile::tempdir().unwrap();
        let err = TFJS.in_dir(dir.path()).unwrap_err().to_string();
        assert!(err.contains("ci/setup.sh") && err.contains("@tensorflow/tfjs-backend-webgpu@4.22.0") && err.contains("--tfjs-dir"), "{err}");
        install(&TFJS, dir.path(), kernels::tfjs::VERSION);
        std::fs::remove_file(dir.path().join("node_modules/@tensorflow/tfjs-backend-webgpu/dist/tf-backend-webgpu.min.js")).unwrap();
        let err = TFJS.in_dir(dir.path()).unwrap_err().to_string();
        assert!(err.contains("tf-backend-webgpu.min.js is missing"), "{err}");
        let err = ORT.in_dir(dir.path()).unwrap_err().to_string();
        assert!(
            err.contains("--platform ort") && err.contains("npm install --prefix target/ort --no-save --no-package-lock onnxruntime-web@1.30.0") && err.contains("--ort-dir"),
            "{err}"
        );
    }

    #[test]
    fn another_version_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        install(&TFJS, dir.path(), "4.21.0");
        let err = TFJS.in_dir(dir.path()).unwrap_err().to_string();
        assert!(err.contains("4.21.0") && err.contains("4.22.0"), "{err}");
        install(&ORT, dir.path(), "1.22.0");
        let err = ORT.in_dir(dir.path()).unwrap_err().to_string();
        assert!(err.contains("onnxruntime-web") && err.contains("1.22.0") && err.contains("1.30.0"), "{err}");
    }
}
