//! Where TensorFlow.js comes from for `--platform tfjs`: the two browser bundles of
//! `@tensorflow/tfjs-core` and `@tensorflow/tfjs-backend-webgpu`, installed by npm under a folder
//! (`ci/setup.sh` puts them in `target/tfjs` of the source tree; `--tfjs-dir` or `HARNESS_TFJS_DIR`
//! names another). They are checked before any browser starts and served to the page under
//! `/tfjs/`.

use crate::plan::source_dir;
use std::path::{Path, PathBuf};

/// The files the page loads, by the name it asks for: (served name, npm package, file in it).
const FILES: [(&str, &str, &str); 2] = [
    ("tf-core.min.js", "@tensorflow/tfjs-core", "dist/tf-core.min.js"),
    ("tf-backend-webgpu.min.js", "@tensorflow/tfjs-backend-webgpu", "dist/tf-backend-webgpu.min.js"),
];

/// The command that installs TensorFlow.js where harness looks by default.
pub fn install_command() -> String {
    let v = kernels::tfjs::VERSION;
    format!("npm install --prefix target/tfjs --no-save --no-package-lock @tensorflow/tfjs-core@{v} @tensorflow/tfjs-backend-webgpu@{v}")
}

/// Why TensorFlow.js cannot be served.
#[derive(Debug, thiserror::Error)]
pub enum TfjsError {
    /// Not installed in the folder looked at.
    #[error(
        "--platform tfjs: TensorFlow.js {version} is not installed in {dir} ({missing} is missing). Install it with \
         `bash ci/setup.sh`, or from the source tree with `{command}`; or pass --tfjs-dir DIR (or set HARNESS_TFJS_DIR) \
         to a folder where npm installed both packages"
    )]
    Missing {
        /// The folder.
        dir: PathBuf,
        /// The first file missing.
        missing: String,
        /// [`kernels::tfjs::VERSION`].
        version: &'static str,
        /// [`install_command`].
        command: String,
    },
    /// Installed at another version than harness drives.
    #[error("--platform tfjs: {package} in {dir} is version {found}, harness drives {wanted}; reinstall with `{command}`")]
    WrongVersion {
        /// The folder.
        dir: PathBuf,
        /// The npm package.
        package: &'static str,
        /// Its version there.
        found: String,
        /// [`kernels::tfjs::VERSION`].
        wanted: &'static str,
        /// [`install_command`].
        command: String,
    },
    /// Neither `--tfjs-dir` nor a source tree to look in.
    #[error("--platform tfjs: this harness was not run from its source tree; pass --tfjs-dir DIR (or set HARNESS_TFJS_DIR) to the folder npm installed TensorFlow.js {0} into")]
    NoDir(&'static str),
}

/// TensorFlow.js's browser bundles, found and checked.
#[derive(Debug, Clone, PartialEq)]
pub struct TfjsFiles {
    /// The npm prefix they were found under.
    pub dir: PathBuf,
    /// (served name, path) of each bundle.
    pub files: Vec<(&'static str, PathBuf)>,
}

impl TfjsFiles {
    /// The bundles under `explicit` (`--tfjs-dir`), else under `target/tfjs` of the source tree.
    pub fn find(explicit: Option<&Path>) -> Result<TfjsFiles, TfjsError> {
        let dir = match explicit {
            Some(d) => d.to_path_buf(),
            None => source_dir().ok_or(TfjsError::NoDir(kernels::tfjs::VERSION))?.join("target").join("tfjs"),
        };
        Self::in_dir(&dir)
    }

    /// The bundles of npm's install under `dir`, at the version harness drives.
    pub fn in_dir(dir: &Path) -> Result<TfjsFiles, TfjsError> {
        let mut files = Vec::new();
        for (served, package, file) in FILES {
            let root = dir.join("node_modules").join(package);
            let missing = |p: &Path| TfjsError::Missing {
                dir: dir.to_path_buf(),
                missing: p.strip_prefix(dir).unwrap_or(p).display().to_string(),
                version: kernels::tfjs::VERSION,
                command: install_command(),
            };
            let manifest = root.join("package.json");
            let text = std::fs::read_to_string(&manifest).map_err(|_| missing(&manifest))?;
            let found = serde_json::from_str::<serde_json::Value>(&text)
                .ok()
                .and_then(|v| v.get("version").and_then(|v| v.as_str()).map(str::to_string))
                .unwrap_or_else(|| "unknown".into());
            if found != kernels::tfjs::VERSION {
                return Err(TfjsError::WrongVersion {
                    dir: dir.to_path_buf(),
                    package,
                    found,
                    wanted: kernels::tfjs::VERSION,
                    command: install_command(),
                });
            }
            let bundle = root.join(file);
            if !bundle.is_file() {
                return Err(missing(&bundle));
            }
            files.push((served, bundle));
        }
        Ok(TfjsFiles { dir: dir.to_path_buf(), files })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn install(dir: &Path, version: &str) {
        for (_, package, file) in FILES {
            let root = dir.join("node_modules").join(package);
            std::fs::create_dir_all(root.join("dist")).unwrap();
            std::fs::write(root.join("package.json"), format!(r#"{{"name": "{package}", "version": "{version}"}}"#)).unwrap();
            std::fs::write(root.join(file), "/* bundle */").unwrap();
        }
    }

    #[test]
    fn an_install_is_found_with_both_bundles() {
        let dir = tempfile::tempdir().unwrap();
        install(dir.path(), kernels::tfjs::VERSION);
        let found = TfjsFiles::in_dir(dir.path()).unwrap();
        let names: Vec<&str> = found.files.iter().map(|(n, _)| *n).collect();
        assert_eq!(names, ["tf-core.min.js", "tf-backend-webgpu.min.js"]);
        assert!(found.files.iter().all(|(_, p)| p.is_file()));
    }

    #[test]
    fn a_missing_install_names_the_command_that_installs_it() {
        let dir = tempfile::tempdir().unwrap();
        let err = TfjsFiles::in_dir(dir.path()).unwrap_err().to_string();
        assert!(err.contains("ci/setup.sh") && err.contains("@tensorflow/tfjs-backend-webgpu@4.22.0") && err.contains("--tfjs-dir"), "{err}");
        install(dir.path(), kernels::tfjs::VERSION);
        std::fs::remove_file(dir.path().join("node_modules/@tensorflow/tfjs-backend-webgpu/dist/tf-backend-webgpu.min.js")).unwrap();
        let err = TfjsFiles::in_dir(dir.path()).unwrap_err().to_string();
        assert!(err.contains("tf-backend-webgpu.min.js is missing"), "{err}");
    }

    #[test]
    fn another_version_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        install(dir.path(), "4.21.0");
        let err = TfjsFiles::in_dir(dir.path()).unwrap_err().to_string();
        assert!(err.contains("4.21.0") && err.contains("4.22.0"), "{err}");
    }
}
