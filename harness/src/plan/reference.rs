//! What each case's output is checked against, computed once per case and shared by every
//! browser and platform of a run: a catalogue kernel's f64 reference, a model's f64 forward pass,
//! a user kernel's expected-output file, or, for a user kernel without one (it has no independent
//! reference), the output of the same program on native wgpu, or failing that the first
//! platform's output: platforms are then only compared with each other, which is agreement, not
//! correctness.

use kernels::gpu::Gpu;
use kernels::model::weights::Weights;
use kernels::wire::CaseMeasurement;
use kernels::{CaseSpec, CheckRule, Drift, Platform, RunPlan, Sampling, WarmupPolicy};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};

/// The expected output of a case.
#[derive(Debug, Clone)]
pub struct Reference {
    /// Expected values.
    pub values: Vec<f64>,
    /// What they came from, when not the case's own f64 reference (reports show it).
    pub source: Option<String>,
    /// Where the values are another platform's output (a user kernel with no expected file): the
    /// run that produced them (`wgpu native`), so a check against them is agreement, not
    /// correctness, and none at all for that run itself. `None`: an independent reference.
    pub measured_by: Option<String>,
}

/// The label of the native run, as [`Reference::measured_by`] names it.
const NATIVE_RUN: &str = "wgpu native";

/// A reference computed once, or why it could not be: a second asker waits for the first's result.
type Once = Arc<OnceLock<Result<Arc<Reference>, String>>>;

/// References by case id, and what computing them needs.
#[derive(Default)]
pub struct References {
    weights_paths: HashMap<String, PathBuf>,
    weights: Mutex<HashMap<String, Arc<Weights>>>,
    /// By reference id, each computed once: a second asker waits for the first's result.
    computed: Mutex<HashMap<String, Once>>,
    native: OnceLock<Option<Mutex<Gpu>>>,
    disk: Option<DiskCache>,
    /// References computed elsewhere, by reference id: a bench's, by its own CPU reference in
    /// the natively built bench binary.
    given: HashMap<String, Vec<f64>>,
}

/// References that took long to compute, kept on disk between runs (a 4096³ matmul's f64
/// reference is 137 GFLOP), so a suite run again does not wait for them twice. Each file is the
/// values as little-endian f64s, named by the case's reference id and a hash of what decides
/// the values: the case itself (kernel, shape, seed, workload) and this harness binary (the
/// reference code's version: a rebuilt harness computes afresh).
#[derive(Debug, Clone)]
pub struct DiskCache {
    dir: PathBuf,
    binary: String,
}

impl DiskCache {
    /// References slower than this to compute are kept.
    const WORTH_KEEPING: std::time::Duration = std::time::Duration::from_millis(500);

    /// The cache in `HARNESS_REFERENCE_CACHE`, else `$XDG_CACHE_HOME/harness/references` or
    /// `~/.cache/harness/references`; `None` when that variable is `off` or no folder is known.
    pub fn from_env() -> Option<DiskCache> {
        let dir = super::cache_dir("HARNESS_REFERENCE_CACHE", "references")?;
        let exe = std::env::current_exe().ok().and_then(|p| std::fs::metadata(p).ok());
        let modified = exe.as_ref().and_then(|m| m.modified().ok()).and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok());
        let binary = format!("{} {} {:?}", env!("CARGO_PKG_VERSION"), exe.map_or(0, |m| m.len()), modified);
        Some(DiskCache { dir, binary })
    }

    fn path(&self, spec: &CaseSpec) -> PathBuf {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        // The reference id names the kernel, shape and seed; a workload's fields are the rest.
        let id = spec.reference_id();
        (&self.binary, &id, serde_json::to_string(&spec.workload).unwrap_or_default()).hash(&mut h);
        let name: String = id.chars().map(|c| if c.is_ascii_alphanumeric() || c == '.' || c == '-' { c } else { '_' }).collect();
        self.dir.join(format!("{name}-{:016x}.f64", h.finish()))
    }

    fn load(&self, spec: &CaseSpec) -> Option<Vec<f64>> {
        let bytes = std::fs::read(self.path(spec)).ok()?;
        (bytes.len() % 8 == 0).then(|| bytes.chunks_exact(8).map(|c| f64::from_le_bytes(c.try_into().expect("8 bytes"))).collect())
    }

    /// Keeps `values`; a cache that cannot be written is only a warning.
    fn store(&self, spec: &CaseSpec, values: &[f64]) {
        let path = self.path(spec);
        let tmp = path.with_extension(format!("tmp{}", std::process::id()));
        let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        let written = std::fs::create_dir_all(&self.dir).and_then(|_| std::fs::write(&tmp, bytes)).and_then(|_| std::fs::rename(&tmp, &path));
        if let Err(e) = written {
            let _ = std::fs::remove_file(&tmp);
            tracing::warn!("could not keep the reference of {} in {}: {e}", spec.id, self.dir.display());
        }
    }
}

impl std::fmt::Debug for References {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("References").field("weights_paths", &self.weights_paths).finish_non_exhaustive()
    }
}

impl References {
    /// References for a run whose encoders read their weights from `weights_paths` (by key),
    /// keeping slow ones in `disk`.
    pub fn new(weights_paths: HashMap<String, PathBuf>, disk: Option<DiskCache>) -> Self {
        References { weights_paths, disk, ..References::default() }
    }

    /// These references, with the values of `given` (by reference id) for the cases they name:
    /// computed elsewhere, as a bench binary computes its benches' references.
    pub fn with_given(self, given: HashMap<String, Vec<f64>>) -> Self {
        References { given, ..self }
    }

    /// The weights called `key`, read once.
    pub fn weights(&self, key: &str) -> Result<Arc<Weights>, String> {
        let mut cache = self.weights.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(w) = cache.get(key) {
            return Ok(w.clone());
        }
        let path = self.weights_paths.get(key).ok_or_else(|| format!("no weights called `{key}` in this run"))?;
        let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let w = Arc::new(Weights::parse(bytes).map_err(|e| format!("{}: {e}", path.display()))?);
        cache.insert(key.to_string(), w.clone());
        Ok(w)
    }

    /// The reference of `spec`, computed on first use, or waited for where another thread is
    /// computing it ([`References::prefetch`]); blocking: run it off the async threads. `m` and
    /// `run` are this measurement and where it ran: a user kernel with no native adapter is
    /// compared with the first output reported.
    pub fn get(&self, spec: &CaseSpec, m: &CaseMeasurement, run: &str) -> Result<Arc<Reference>, String> {
        // Variants of a kernel share one reference: they compute the same thing.
        let cell = self.computed.lock().unwrap_or_else(|e| e.into_inner()).entry(spec.reference_id()).or_default().clone();
        cell.get_or_init(|| self.compute(spec, m, run).map(Arc::new)).clone()
    }

    /// Starts computing, on a thread of its own and one after the other, the references of
    /// `cases` that follow from the case alone (the catalogue's and the models', with the f32
    /// twin a narrower dtype is measured against), so that they are ready, or under way, when the
    /// browser's results come: a model's f64 reference takes seconds, which the browser's own
    /// start, compilation and sampling then hide. A reference that fails here fails again, in
    /// the same words, for its case.
    pub fn prefetch(self: &Arc<Self>, cases: &[CaseSpec]) {
        let independent = |c: &CaseSpec| !matches!(c.workload, Some(kernels::Workload::User(_) | kernels::Workload::Bench(_)));
        let mut specs: Vec<CaseSpec> = Vec::new();
        for case in cases.iter().filter(|c| independent(c)) {
            for spec in std::iter::once(case.clone()).chain(crate::plan::workload::f32_twin(case).map(|(_, twin)| twin)) {
                if !specs.iter().any(|s| s.reference_id() == spec.reference_id()) {
                    specs.push(spec);
                }
            }
        }
        let specs = Arc::new(specs);
        let next = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        for worker in 0..prefetch_workers() {
            let (references, specs, next) = (self.clone(), specs.clone(), next.clone());
            let spawned = std::thread::Builder::new().name(format!("references-{worker}")).spawn(move || {
                yield_to_the_browser();
                while let Some(spec) = specs.get(next.fetch_add(1, std::sync::atomic::Ordering::Relaxed)) {
                    let _ = references.get(spec, &nothing(), "");
                }
            });
            if let Err(e) = spawned {
                tracing::warn!("references are computed as results come: no thread for them ({e})");
            }
        }
    }

    /// For a model case run in another dtype than f32: how far its output `got` lands from the
    /// f32 model's reference (computed and kept like any reference, as the f32 case's own), the
    /// error the dtype causes. `None` for other cases; a reference that cannot be computed is
    /// a warning, since this never decides the check.
    pub fn vs_f32(&self, spec: &CaseSpec, got: &[f64], m: &CaseMeasurement, run: &str) -> Option<Drift> {
        let (dtype, twin) = crate::plan::workload::f32_twin(spec)?;
        let reference = self.get(&twin, m, run).map_err(|e| tracing::warn!("{}: no f32 reference to tell the error of {dtype} ({e})", spec.id)).ok()?;
        let row = match spec.check_rule() {
            Some(CheckRule::Cosine { row, .. }) => row,
            _ => got.len(),
        };
        kernels::check::drift(dtype, got, &reference.values, row)
    }

    fn compute(&self, spec: &CaseSpec, m: &CaseMeasurement, run: &str) -> Result<Reference, String> {
        use kernels::Workload;
        // Where the reference is another engine's (a user's ONNX file's, tract-onnx's), reports
        // name it, also when it comes from the disk cache.
        let onnx = matches!(spec.workload, Some(Workload::Onnx(_)));
        let source = match &spec.workload {
            Some(Workload::Onnx(o)) => Some(o.pipeline.as_ref().map_or_else(|| crate::plan::onnx::reference::ENGINE.to_string(), crate::plan::hf_model::reference::engine)),
            _ => None,
        };
        let own = |values| Ok(Reference { values, source: source.clone(), measured_by: None });
        // Only what the case alone decides is kept on disk: not a model's that reads a weights
        // file, nor a user kernel's (its files, or another platform's output).
        let weights = spec.workload.as_ref().and_then(Workload::weights_key);
        let disk = self.disk.as_ref().filter(|_| weights.is_none() && matches!(spec.workload, None | Some(Workload::Decoder(_) | Workload::Perception(_) | Workload::Onnx(_))));
        let weights = weights.map(|key| self.weights(key)).transpose()?;
        if let Some(values) = disk.and_then(|d| d.load(spec)) {
            return own(values);
        }
        let started = std::time::Instant::now();
        let keep = |values: Vec<f64>| {
            tracing::debug!("{}: reference computed in {:.2} s", spec.reference_id(), started.elapsed().as_secs_f64());
            // A user's ONNX model's is always kept: its inputs and the file's fingerprint decide it.
            if let Some(d) = disk.filter(|_| onnx || started.elapsed() >= DiskCache::WORTH_KEEPING) {
                d.store(spec, &values);
            }
            own(values)
        };
        match &spec.workload {
            None => {
                let kernel = spec.kernel().ok_or_else(|| format!("unknown kernel `{}`", spec.kernel))?;
                let inputs = kernel.inputs(&spec.shape, spec.seed);
                keep(kernel.reference(&spec.shape, &inputs))
            }
            Some(Workload::Encoder(e)) => own(e.graph().evaluate(weights.as_deref()).map_err(|e| e.to_string())?),
            Some(Workload::Decoder(d)) => keep(d.graph(spec.seed).evaluate(weights.as_deref()).map_err(|e| e.to_string())?),
            Some(Workload::Perception(p)) => keep(p.graph(spec.seed).evaluate(None).map_err(|e| e.to_string())?),
            Some(Workload::Clip(c)) => own(c.graph(spec.seed).evaluate(weights.as_deref()).map_err(|e| e.to_string())?),
            Some(Workload::User(kernels::user::UserKernel { expected: Some(path), .. })) => {
                let text = std::fs::read_to_string(path).map_err(|e| format!("the expected-output file {path}: {e}"))?;
                let values = crate::plan::manifest::expected_values(&text).map_err(|e| format!("{path}: {e}"))?;
                Ok(Reference { values, source: Some(format!("expected output {path}")), measured_by: None })
            }
            Some(Workload::User(_)) => match self.native_output(spec) {
                Ok((values, adapter)) => Ok(Reference { values, source: Some(format!("native wgpu ({adapter})")), measured_by: Some(NATIVE_RUN.into()) }),
                Err(why) => {
                    tracing::warn!("{}: no native reference ({why}); comparing platforms with the first to report", spec.id);
                    first_output(spec, m, run, &format!("no native adapter: {why}"))
                }
            },
            Some(Workload::Onnx(o)) => {
                let path = self.weights_paths.get(&o.key).ok_or_else(|| format!("no ONNX file called `{}` in this run", o.key))?;
                let values = match &o.pipeline {
                    Some(_) => crate::plan::hf_model::reference::outputs(path, o, spec.seed)?,
                    None => crate::plan::onnx::reference::outputs(path, o, spec.seed)?,
                };
                keep(values)
            }
            Some(Workload::Bench(b)) => match (self.given.get(&spec.reference_id()), b.reference) {
                (Some(values), Some(_)) => Ok(Reference { values: values.clone(), source: Some("the bench's CPU reference".into()), measured_by: None }),
                (None, Some(_)) => Err(format!("{}: the bench binary gave no reference for it", b.label())),
                (_, None) => first_output(spec, m, run, "the bench gives no reference"),
            },
        }
    }

    /// The case's output from one run on native wgpu, and the adapter's name.
    fn native_output(&self, spec: &CaseSpec) -> Result<(Vec<f64>, String), String> {
        let gpu = self.native.get_or_init(|| pollster::block_on(Gpu::new()).map_err(|e| tracing::warn!("native wgpu: {e}")).ok().map(Mutex::new));
        let mut gpu = gpu.as_ref().ok_or("no native wgpu adapter")?.lock().map_err(|_| "the native GPU failed earlier")?;
        let sampling = Sampling { mode: kernels::SamplingMode::Isolated, warmup: WarmupPolicy::Fixed(0), samples: 1, max_time_ms: 0.0, target_ci_pct: None, nudge: kernels::Nudge::Off, profile: false, gpu_timer: Default::default(), timer_cost: false };
        let plan = RunPlan { sampling, ..RunPlan::empty(Platform::Native) };
        let m = pollster::block_on(gpu.run_case(&plan, spec, None, &mut kernels::sampling::NoClock, &mut kernels::sampling::CaseClock::start(), |_| {})).map_err(|e| e.to_string())?;
        let bytes = m.output_bytes().ok_or("native output is not 4-byte values")?;
        Ok((spec.decode_output(&bytes), gpu.info.name.clone()))
    }
}

/// The output `run` reported for `spec`, as what the other platforms are compared with: agreement,
/// not correctness (`why`: why there is no independent reference).
fn first_output(spec: &CaseSpec, m: &CaseMeasurement, run: &str, why: &str) -> Result<Reference, String> {
    let bytes = m.output_bytes().ok_or("the output is not base64")?;
    Ok(Reference { values: spec.decode_output(&bytes), source: Some(format!("{run}'s output ({why})")), measured_by: Some(run.to_string()) })
}

/// Threads computing references ahead ([`References::prefetch`]): each takes the next case's,
/// and each reference's linear layers and attention use every core, but much of a model's
/// reference (its weights made and rounded, its norms) is one core's. A large model's reference
/// holds its weights in f64 (TinyLlama's 8.8 GB), so there is one a 32 GB of memory, up to 4.
fn prefetch_workers() -> usize {
    let total_kib = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|m| m.lines().find_map(|l| l.strip_prefix("MemTotal:").and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())))
        .unwrap_or(0);
    (total_kib / (32 << 20)).clamp(1, 4) as usize
}

/// Lowers this thread's priority (and that of the threads it starts, which inherit it), so that
/// references computed ahead take only the cores the browser leaves: on the H200, four threads at
/// full priority slowed Chrome's upload of TinyLlama's weights by half as much as they saved.
fn yield_to_the_browser() {
    #[cfg(target_os = "linux")]
    // SAFETY: setpriority on the calling thread (who 0); a failure only leaves its priority as it was.
    unsafe {
        libc::setpriority(libc::PRIO_PROCESS, 0, 10);
    }
}

/// A measurement with nothing in it: the references that follow from the case alone (the
/// catalogue's, the models') do not look at it.
fn nothing() -> CaseMeasurement {
    let sampled = kernels::sampling::Sampled {
        first_ms: 0.0,
        warmup: Vec::new(),
        warmup_stop: kernels::WarmupStop::Fixed,
        samples: Vec::new(),
        stopped_by: kernels::sampling::StopReason::SampleCount,
        mode: kernels::SamplingMode::Isolated,
        batch: 1,
        in_flight: 1,
        timed_span: (0.0, 0.0),
        nudges: 0,
        gpu_timer: None,
    };
    CaseMeasurement::of_sampled(String::new(), 0.0, sampled, String::new())
}

#[cfg(test)]
mod tests {
    use super::*;
    use kernels::Shape;

    fn cache(dir: &std::path::Path, binary: &str) -> DiskCache {
        DiskCache { dir: dir.to_path_buf(), binary: binary.into() }
    }

    #[test]
    fn a_kept_reference_is_used_again_and_only_for_the_same_case_and_binary() {
        let dir = tempfile::tempdir().unwrap();
        let spec = CaseSpec::new("add", Shape(vec![4]), 1);
        let disk = cache(dir.path(), "harness 1");
        // Values no computation gives: seeing them back proves the file was read, not recomputed.
        disk.store(&spec, &[7.5, -1.0, 0.25, 3.0]);
        let references = References::new(HashMap::new(), Some(disk.clone()));
        let got = references.get(&spec, &nothing(), "chrome webgpu").unwrap();
        assert_eq!(got.values, [7.5, -1.0, 0.25, 3.0]);
        // Another seed, shape or harness binary is another file.
        for other in [CaseSpec::new("add", Shape(vec![4]), 2), CaseSpec::new("add", Shape(vec![5]), 1)] {
            assert_ne!(disk.path(&other), disk.path(&spec));
        }
        assert_ne!(cache(dir.path(), "harness 2").path(&spec), disk.path(&spec));
        assert!(cache(dir.path(), "harness 2").load(&spec).is_none());
        // A cheap reference is computed, not kept.
        let fresh = References::new(HashMap::new(), Some(cache(dir.path(), "harness 3")));
        let values = fresh.get(&spec, &nothing(), "chrome webgpu").unwrap().values.clone();
        assert_eq!(values.len(), 4);
        assert!(cache(dir.path(), "harness 3").load(&spec).is_none(), "under {:?} to compute: not worth a file", DiskCache::WORTH_KEEPING);
    }

    #[test]
    fn a_prefetched_reference_is_computed_once_and_shared_with_every_asker() {
        let references = Arc::new(References::new(HashMap::new(), None));
        let specs = [CaseSpec::new("add", Shape(vec![4]), 1), CaseSpec::new("softmax", Shape(vec![2, 8]), 1)];
        references.prefetch(&specs);
        for spec in &specs {
            let (first, second) = (references.get(spec, &nothing(), "chrome webgpu").unwrap(), references.get(spec, &nothing(), "wgpu native").unwrap());
            assert!(Arc::ptr_eq(&first, &second), "{}: one computation, its result shared", spec.id);
            assert_eq!(first.values.len(), spec.shape.0.iter().product::<u32>() as usize);
        }
    }

    #[test]
    fn a_narrower_dtype_is_measured_against_the_f32_model_and_f32_against_nothing() {
        use crate::plan::workload::{WorkloadArgs, Workloads};
        let args = |dtype| WorkloadArgs { model: vec!["llama:hidden=32,heads=4,kv_heads=2,ffn=48,layers=1".into()], dtype: vec![dtype], context: vec![3], ..WorkloadArgs::default() };
        let decode = |dtype| Workloads::build(&args(dtype), 1).unwrap().cases.into_iter().find(|c| c.id.contains(".decode")).unwrap();
        let references = References::new(HashMap::new(), None);
        let f32_case = decode(kernels::Dtype::F32);
        let f32_values = references.get(&f32_case, &nothing(), "native").unwrap().values.clone();
        assert!(references.vs_f32(&f32_case, &f32_values, &nothing(), "native").is_none());
        for dtype in [kernels::Dtype::F16, kernels::Dtype::Q8_0, kernels::Dtype::Q4_0] {
            let case = decode(dtype);
            // An output exactly the dtype's own reference: all its error from f32 is the dtype's.
            let own = references.get(&case, &nothing(), "native").unwrap().values.clone();
            let d = references.vs_f32(&case, &own, &nothing(), "native").unwrap();
            assert_eq!(d.dtype, dtype);
            assert!(d.min_cosine < 1.0 && d.min_cosine > 0.9 && d.max_abs_err > 0.0 && d.max_rms_err > 0.0, "{dtype}: {d:?}");
            // The f32 output is the f32 model's own: no drift at all.
            let none = references.vs_f32(&case, &f32_values, &nothing(), "native").unwrap();
            assert_eq!((none.max_abs_err, none.max_rms_err), (0.0, 0.0), "{dtype}");
        }
    }
}
