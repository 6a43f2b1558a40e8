//! What each case's output is checked against, computed once per case and shared by every
//! browser and platform of a run: a catalogue kernel's f64 reference, a model's f64 forward pass,
//! a user kernel's expected-output file, or, for a user kernel without one (it has no independent
//! reference), the output of the same program on native wgpu, or failing that the first
//! platform's output: platforms are then only compared with each other, which is agreement, not
//! correctness.

use kernels::gpu::Gpu;
use kernels::model::weights::Weights;
use kernels::wire::CaseMeasurement;
use kernels::{CaseSpec, Platform, RunPlan, Sampling, WarmupPolicy};
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

/// References by case id, and what computing them needs.
#[derive(Default)]
pub struct References {
    weights_paths: HashMap<String, PathBuf>,
    weights: Mutex<HashMap<String, Arc<Weights>>>,
    computed: Mutex<HashMap<String, Arc<Reference>>>,
    native: OnceLock<Option<Mutex<Gpu>>>,
}

impl std::fmt::Debug for References {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("References").field("weights_paths", &self.weights_paths).finish_non_exhaustive()
    }
}

impl References {
    /// References for a run whose encoders read their weights from `weights_paths` (by key).
    pub fn new(weights_paths: HashMap<String, PathBuf>) -> Self {
        References { weights_paths, ..References::default() }
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

    /// The reference of `spec`, computed on first use (blocking: run it off the async threads).
    /// `m` and `run` are this measurement and where it ran: a user kernel with no native adapter
    /// is compared with the first output reported.
    pub fn get(&self, spec: &CaseSpec, m: &CaseMeasurement, run: &str) -> Result<Arc<Reference>, String> {
        // Variants of a kernel share one reference: they compute the same thing.
        let key = spec.reference_id();
        if let Some(r) = self.computed.lock().unwrap_or_else(|e| e.into_inner()).get(&key) {
            return Ok(r.clone());
        }
        let reference = Arc::new(self.compute(spec, m, run)?);
        let mut cache = self.computed.lock().unwrap_or_else(|e| e.into_inner());
        Ok(cache.entry(key).or_insert(reference).clone())
    }

    fn compute(&self, spec: &CaseSpec, m: &CaseMeasurement, run: &str) -> Result<Reference, String> {
        use kernels::Workload;
        let own = |values| Ok(Reference { values, source: None, measured_by: None });
        match &spec.workload {
            None => {
                let kernel = spec.kernel().ok_or_else(|| format!("unknown kernel `{}`", spec.kernel))?;
                let inputs = kernel.inputs(&spec.shape, spec.seed);
                own(kernel.reference(&spec.shape, &inputs))
            }
            Some(Workload::Encoder(e)) => own(e.graph().evaluate(Some(self.weights(&e.weights)?.as_ref())).map_err(|e| e.to_string())?),
            Some(Workload::Decoder(d)) => own(d.graph(spec.seed).evaluate(None).map_err(|e| e.to_string())?),
            Some(Workload::User(u)) if u.expected.is_some() => {
                let path = u.expected.as_deref().unwrap_or_default();
                let text = std::fs::read_to_string(path).map_err(|e| format!("the expected-output file {path}: {e}"))?;
                let values = crate::plan::manifest::expected_values(&text).map_err(|e| format!("{path}: {e}"))?;
                Ok(Reference { values, source: Some(format!("expected output {path}")), measured_by: None })
            }
            Some(Workload::User(_)) => match self.native_output(spec) {
                Ok((values, adapter)) => Ok(Reference { values, source: Some(format!("native wgpu ({adapter})")), measured_by: Some(NATIVE_RUN.into()) }),
                Err(why) => {
                    tracing::warn!("{}: no native reference ({why}); comparing platforms with the first to report", spec.id);
                    let bytes = m.output_bytes().ok_or("the output is not base64 of 4-byte values")?;
                    Ok(Reference {
                        values: spec.decode_output(&bytes),
                        source: Some(format!("{run}'s output (no native adapter: {why})")),
                        measured_by: Some(run.to_string()),
                    })
                }
            },
        }
    }

    /// The case's output from one run on native wgpu, and the adapter's name.
    fn native_output(&self, spec: &CaseSpec) -> Result<(Vec<f64>, String), String> {
        let gpu = self.native.get_or_init(|| pollster::block_on(Gpu::new()).map_err(|e| tracing::warn!("native wgpu: {e}")).ok().map(Mutex::new));
        let mut gpu = gpu.as_ref().ok_or("no native wgpu adapter")?.lock().map_err(|_| "the native GPU failed earlier")?;
        let sampling = Sampling { mode: kernels::SamplingMode::Isolated, warmup: WarmupPolicy::Fixed(0), samples: 1, max_time_ms: 0.0, target_ci_pct: None };
        let plan = RunPlan { platform: Platform::Native, sampling, cases: Vec::new(), webnn: None };
        let m = pollster::block_on(gpu.run_case(&plan, spec, None, &mut kernels::sampling::NoClock, |_| {})).map_err(|e| e.to_string())?;
        let bytes = m.output_bytes().ok_or("native output is not 4-byte values")?;
        Ok((spec.decode_output(&bytes), gpu.info.name.clone()))
    }
}
