//! A user's bench target (`harness bench`): found through `cargo metadata`, checked against the
//! wasm-bindgen harness links, built natively (to list the benches, compute their references and
//! run `--platform native`) and for wasm32 (the page), and turned into cases.

use kernels::bench::BenchCase;
use kernels::CaseSpec;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The wasm-bindgen harness links (`wasm-bindgen-cli-support`): a bench target's WASM must be
/// built against exactly this version, as the page is.
pub const WASM_BINDGEN: &str = "0.2.130";

/// Why a bench target could not be had.
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    /// No Cargo.toml where pointed.
    #[error("{0}: no such Cargo.toml; pass --manifest-path PATH/Cargo.toml of the crate whose benches to run")]
    NoManifest(PathBuf),
    /// `cargo metadata` failed.
    #[error("cargo metadata failed for {0}:\n{1}")]
    Metadata(PathBuf, String),
    /// The package has no bench target, or not the one asked for.
    #[error("{package} has {found}; {hint}")]
    NoTarget {
        /// The package.
        package: String,
        /// What it has.
        found: String,
        /// What to do.
        hint: String,
    },
    /// The crate's tree asks for another wasm-bindgen than harness links.
    #[error(
        "{at} asks for wasm-bindgen {theirs}, but this harness links wasm-bindgen {WASM_BINDGEN}, and the two must be the same version for the page to load the bench's WASM. \
         Fix: depend on the harness-bench of this harness (it pins wasm-bindgen = \"={WASM_BINDGEN}\"), change the requirement to \"={WASM_BINDGEN}\", \
         or run `cargo update -p wasm-bindgen --precise {WASM_BINDGEN}` in {dir}"
    )]
    WasmBindgen {
        /// What asks for it (`Cargo.lock`, `Cargo.toml`).
        at: String,
        /// The version or requirement it asks for.
        theirs: String,
        /// The crate's folder.
        dir: String,
    },
    /// cargo could not compile the bench target.
    #[error("the bench target `{target}` did not compile ({platform}):\n{stderr}")]
    Compile {
        /// The bench target.
        target: String,
        /// `native` or `wasm32`.
        platform: &'static str,
        /// cargo's messages.
        stderr: String,
    },
    /// The built bench binary did not answer as harness-bench's `main!` does.
    #[error("{exe}: {what}; is the target a harness-bench target (`harness = false`, ending in `harness_bench::main!(...)`)?")]
    Protocol {
        /// The binary.
        exe: String,
        /// What went wrong.
        what: String,
    },
    /// A prebuilt bench binary (`--bench-binary`) run in a browser without its page bundle.
    #[error("{0}: a prebuilt bench binary has no crate to build the page's WASM from; pass --bundle with the folder `harness bench` built it in (TARGET_DIR/harness-bench/NAME)")]
    NoBundle(String),
    /// cargo or the binary could not be started.
    #[error("could not run {0}: {1}")]
    Spawn(String, std::io::Error),
}

/// A bench target, built natively, with its benches.
#[derive(Debug, Clone)]
pub struct BenchTarget {
    /// The bench target's name (`cargo bench --bench NAME`).
    pub name: String,
    /// The package's Cargo.toml; `None` for a prebuilt binary.
    pub manifest: Option<PathBuf>,
    /// The native bench binary.
    pub native: PathBuf,
    /// cargo's target folder for the crate.
    pub target_dir: PathBuf,
    /// Its benches, as it lists them.
    pub cases: Vec<BenchCase>,
}

impl BenchTarget {
    /// Finds the bench target `bench` (the package's only bench target when `None`) of the
    /// package at `manifest`, checks its wasm-bindgen, builds it natively and lists its benches.
    pub fn build(manifest: &Path, bench: Option<&str>) -> Result<BenchTarget, BenchError> {
        if !manifest.is_file() {
            return Err(BenchError::NoManifest(manifest.to_path_buf()));
        }
        let manifest = manifest.canonicalize().map_err(|e| BenchError::Spawn(manifest.display().to_string(), e))?;
        check_wasm_bindgen(&manifest)?;
        let (name, target_dir) = bench_target(&manifest, bench)?;
        let native = compile(&manifest, &name, None)?;
        let cases = list(&native)?;
        Ok(BenchTarget { name, manifest: Some(manifest), native, target_dir, cases })
    }

    /// A bench binary built before (on another machine: a GPU machine without a Rust toolchain),
    /// as `cargo build --release --bench NAME` leaves it.
    pub fn prebuilt(exe: &Path) -> Result<BenchTarget, BenchError> {
        let native = exe.canonicalize().map_err(|e| BenchError::Spawn(exe.display().to_string(), e))?;
        // cargo names it NAME-HASH.
        let stem = native.file_stem().and_then(|s| s.to_str()).unwrap_or("bench");
        let name = stem.rsplit_once('-').filter(|(_, h)| h.len() == 16 && h.chars().all(|c| c.is_ascii_hexdigit())).map_or(stem, |(n, _)| n).to_string();
        let cases = list(&native)?;
        let target_dir = native.parent().unwrap_or(Path::new(".")).to_path_buf();
        Ok(BenchTarget { name, manifest: None, native, target_dir, cases })
    }

    /// Builds the target for wasm32, as the page is built; returns the `.wasm`.
    pub fn build_wasm(&self) -> Result<PathBuf, BenchError> {
        let manifest = self.manifest.as_ref().ok_or_else(|| BenchError::NoBundle(self.native.display().to_string()))?;
        compile(manifest, &self.name, Some("wasm32-unknown-unknown"))
    }

    /// Every reference its benches give, by reference id: computed once, natively, by the bench
    /// binary.
    pub fn references(&self, cases: &[CaseSpec]) -> Result<HashMap<String, Vec<f64>>, BenchError> {
        let json = answer(&self.native, &[harness_bench::native::REFERENCES])?;
        let by_label: HashMap<String, Vec<f64>> = serde_json::from_str(&json).map_err(|e| protocol(&self.native, format!("its references are not JSON ({e})")))?;
        Ok(cases
            .iter()
            .filter_map(|c| match &c.workload {
                Some(kernels::Workload::Bench(b)) => by_label.get(&b.label()).map(|v| (c.reference_id(), v.clone())),
                _ => None,
            })
            .collect())
    }

    /// The cases of the benches `filters` select (`NAME@PARAM`, globs in either part; all when
    /// empty), in the patterns' order.
    pub fn cases(&self, filters: &[String]) -> Result<Vec<CaseSpec>, kernels::PlanError> {
        let matches = |pattern: &str, b: &BenchCase| {
            let (name, param) = kernels::plan::filter_parts(pattern);
            kernels::plan::glob_match(name, &b.name) && kernels::plan::glob_match(param, b.param.as_deref().unwrap_or(""))
        };
        if filters.is_empty() {
            return Ok(self.cases.iter().cloned().map(CaseSpec::of_bench).collect());
        }
        let mut selected: Vec<&BenchCase> = Vec::new();
        for pattern in filters {
            if !self.cases.iter().any(|b| matches(pattern, b)) {
                let known: Vec<String> = self.cases.iter().map(BenchCase::label).collect();
                return Err(kernels::PlanError::NoMatch { pattern: pattern.clone(), known: known.join(", ") });
            }
            for b in &self.cases {
                if matches(pattern, b) && !selected.contains(&b) {
                    selected.push(b);
                }
            }
        }
        Ok(selected.into_iter().cloned().map(CaseSpec::of_bench).collect())
    }
}

/// The benches the binary lists.
fn list(exe: &Path) -> Result<Vec<BenchCase>, BenchError> {
    let listed = answer(exe, &[harness_bench::native::LIST])?;
    serde_json::from_str(&listed).map_err(|e| protocol(exe, format!("its list is not JSON ({e})")))
}

fn protocol(exe: &Path, what: String) -> BenchError {
    BenchError::Protocol { exe: exe.display().to_string(), what }
}

/// What the bench binary prints when asked `args`.
fn answer(exe: &Path, args: &[&str]) -> Result<String, BenchError> {
    let out = Command::new(exe).args(args).output().map_err(|e| BenchError::Spawn(exe.display().to_string(), e))?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    // libtest's harness, not harness-bench's `main!`, answered.
    if stderr.contains("Unrecognized option") && stderr.contains("harness-") {
        return Err(protocol(exe, "it runs Rust's default test harness: add `harness = false` under its `[[bench]]` in Cargo.toml".into()));
    }
    if !out.status.success() {
        return Err(protocol(exe, format!("`{}` exited with {}: {}", args.join(" "), out.status, stderr.trim())));
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// Refuses a crate whose Cargo.lock or Cargo.toml asks for another wasm-bindgen than harness's,
/// before cargo is run: the mismatch would otherwise surface as a resolver error or a page that
/// cannot load the WASM.
fn check_wasm_bindgen(manifest: &Path) -> Result<(), BenchError> {
    let dir = manifest.parent().unwrap_or(Path::new("."));
    let mismatch = |at: &Path, theirs: String| BenchError::WasmBindgen { at: at.display().to_string(), theirs, dir: dir.display().to_string() };
    let ours = semver::Version::parse(WASM_BINDGEN).expect("harness's wasm-bindgen version parses");
    if let Ok(text) = std::fs::read_to_string(manifest) {
        let doc: toml::Table = toml::from_str(&text).unwrap_or_default();
        for section in ["dependencies", "dev-dependencies"] {
            let req = doc.get(section).and_then(|d| d.get("wasm-bindgen")).and_then(|d| d.as_str().or_else(|| d.get("version").and_then(|v| v.as_str())));
            if let Some(req) = req {
                if semver::VersionReq::parse(req).is_ok_and(|r| !r.matches(&ours)) {
                    return Err(mismatch(manifest, req.to_string()));
                }
            }
        }
    }
    // The lock file sits by the manifest or at the root of its workspace.
    if let Some(lock) = dir.ancestors().map(|d| d.join("Cargo.lock")).find(|l| l.is_file()) {
        let text = std::fs::read_to_string(&lock).unwrap_or_default();
        let locked: toml::Table = toml::from_str(&text).unwrap_or_default();
        let packages = locked.get("package").and_then(|p| p.as_array()).cloned().unwrap_or_default();
        for p in packages {
            if p.get("name").and_then(|n| n.as_str()) == Some("wasm-bindgen") {
                let version = p.get("version").and_then(|v| v.as_str()).unwrap_or_default();
                if version != WASM_BINDGEN {
                    return Err(mismatch(&lock, version.to_string()));
                }
            }
        }
    }
    Ok(())
}

/// The bench target to build (`bench`, or the package's only one) and cargo's target folder.
fn bench_target(manifest: &Path, bench: Option<&str>) -> Result<(String, PathBuf), BenchError> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let out = Command::new(&cargo)
        .args(["metadata", "--format-version", "1", "--no-deps", "--manifest-path"])
        .arg(manifest)
        .output()
        .map_err(|e| BenchError::Spawn("cargo metadata".into(), e))?;
    if !out.status.success() {
        return Err(BenchError::Metadata(manifest.to_path_buf(), String::from_utf8_lossy(&out.stderr).trim().to_string()));
    }
    let metadata: serde_json::Value = serde_json::from_slice(&out.stdout).map_err(|e| BenchError::Metadata(manifest.to_path_buf(), e.to_string()))?;
    let package = metadata["packages"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|p| p["manifest_path"].as_str().map(Path::new) == Some(manifest))
        .ok_or_else(|| BenchError::Metadata(manifest.to_path_buf(), "no package of this manifest (a virtual workspace? point at a package's Cargo.toml)".into()))?;
    let package_name = package["name"].as_str().unwrap_or_default().to_string();
    let benches: Vec<String> = package["targets"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|t| t["kind"].as_array().is_some_and(|k| k.iter().any(|k| k == "bench")))
        .filter_map(|t| t["name"].as_str().map(String::from))
        .collect();
    let found = match benches.as_slice() {
        [] => "no bench target".to_string(),
        all => format!("the bench targets {}", all.join(", ")),
    };
    let target_dir = PathBuf::from(metadata["target_directory"].as_str().unwrap_or("target"));
    match (bench, benches.as_slice()) {
        (Some(b), all) if all.iter().any(|n| n == b) => Ok((b.to_string(), target_dir)),
        (None, [only]) => Ok((only.clone(), target_dir)),
        (Some(b), _) => Err(BenchError::NoTarget { package: package_name, found, hint: format!("there is no `{b}`; pass one of them to --bench") }),
        (None, []) => Err(BenchError::NoTarget {
            package: package_name,
            found,
            hint: "add `[[bench]] name = \"NAME\"\nharness = false` to Cargo.toml and benches/NAME.rs (README: \"Benchmark your own crate\")".into(),
        }),
        (None, _) => Err(BenchError::NoTarget { package: package_name, found, hint: "pass --bench NAME to pick one".into() }),
    }
}

/// Compiles the bench target `name` in release (for `target`, or natively) and returns the
/// artifact: the executable, or the `.wasm`.
fn compile(manifest: &Path, name: &str, target: Option<&str>) -> Result<PathBuf, BenchError> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut command = Command::new(cargo);
    command.args(["build", "--release", "--message-format", "json-render-diagnostics", "--bench", name, "--manifest-path"]).arg(manifest);
    if let Some(t) = target {
        command.args(["--target", t]);
    }
    let out = command.output().map_err(|e| BenchError::Spawn("cargo build".into(), e))?;
    let platform = if target.is_some() { "wasm32" } else { "native" };
    if !out.status.success() {
        return Err(BenchError::Compile { target: name.to_string(), platform, stderr: String::from_utf8_lossy(&out.stderr).trim().to_string() });
    }
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|m| m["reason"] == "compiler-artifact" && m["target"]["name"] == name && m["target"]["kind"].as_array().is_some_and(|k| k.iter().any(|k| k == "bench")))
        .find_map(|m| m["executable"].as_str().map(PathBuf::from))
        .ok_or_else(|| BenchError::Compile { target: name.to_string(), platform, stderr: "cargo reported no executable for it".into() })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn harness_links_the_wasm_bindgen_it_names() {
        let workspace = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../Cargo.toml")).unwrap();
        assert!(workspace.contains(&format!("wasm-bindgen-cli-support = \"={WASM_BINDGEN}\"")), "update WASM_BINDGEN with the pin");
    }

    #[test]
    fn another_wasm_bindgen_is_refused_by_name_before_any_build() {
        let dir = tempfile::tempdir().unwrap();
        let manifest = dir.path().join("Cargo.toml");
        std::fs::write(&manifest, "[package]\nname = \"x\"\nversion = \"0.1.0\"\n[dev-dependencies]\nwasm-bindgen = \"=0.2.100\"\n").unwrap();
        let e = check_wasm_bindgen(&manifest).unwrap_err().to_string();
        assert!(e.contains("=0.2.100") && e.contains(WASM_BINDGEN) && e.contains("cargo update -p wasm-bindgen"), "{e}");
        std::fs::write(&manifest, "[package]\nname = \"x\"\nversion = \"0.1.0\"\n").unwrap();
        std::fs::write(dir.path().join("Cargo.lock"), "version = 4\n[[package]]\nname = \"wasm-bindgen\"\nversion = \"0.2.99\"\n").unwrap();
        let e = check_wasm_bindgen(&manifest).unwrap_err().to_string();
        assert!(e.contains("Cargo.lock") && e.contains("0.2.99"), "{e}");
        std::fs::write(dir.path().join("Cargo.lock"), format!("version = 4\n[[package]]\nname = \"wasm-bindgen\"\nversion = \"{WASM_BINDGEN}\"\n")).unwrap();
        check_wasm_bindgen(&manifest).unwrap();
    }
}
