//! Which cases a run measures, and with what settings: the plan the page fetches.

use crate::catalog;
use crate::check::CheckRule;
use crate::info::CaseInfo;
use crate::kernel::KernelRef;
use crate::model::{weights::Weights, ModelError};
use crate::program::Program;
use crate::sampling::Sampling;
use crate::shape::Shape;
use crate::suite::Suite;
use crate::workload::Workload;
use serde::{Deserialize, Serialize};

/// Where kernels run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Platform {
    /// WGSL through the browser's WebGPU (wgpu's WebGPU backend in WASM).
    Webgpu,
    /// The same kernels as plain Rust compiled to WASM, on the CPU in the same page: the CPU
    /// baseline.
    Wasm,
    /// WGSL through wgpu on the machine's Vulkan, Metal or DX12 driver, no browser.
    Native,
    /// TensorFlow.js's WebGPU backend ([`crate::tfjs::VERSION`]) in the same page: its own ops
    /// on the same inputs, for kernels it has an op for ([`crate::tfjs::call`]).
    Tfjs,
    /// The browser's WebNN (`navigator.ml`): a graph of its operators per kernel
    /// ([`crate::webnn::graph`]), on the OS's ML stack (DirectML, Core ML, TFLite).
    Webnn,
    /// onnxruntime-web ([`crate::model::onnx::ORT_WEB_VERSION`]) with its C++ WebGPU execution
    /// provider, on the ONNX file of the case's model graph ([`crate::model::onnx`]): the engine
    /// under transformers.js, on the same model, weights and inputs.
    #[serde(rename = "ort-webgpu")]
    OrtWebgpu,
    /// The same with onnxruntime-web's JavaScript WebGPU execution provider (JSEP).
    #[serde(rename = "ort-jsep")]
    OrtJsep,
    /// onnxruntime-web's CPU execution provider (its WASM, with SIMD; threads where the page is
    /// cross-origin isolated): a user's ONNX file on the CPU, beside its WebGPU providers.
    #[serde(rename = "ort-wasm")]
    OrtWasm,
    /// onnxruntime-web's WebNN execution provider: a user's ONNX file handed to the browser's
    /// WebNN (`navigator.ml`), on the device `--webnn-device` names; unavailable, as `webnn`
    /// is, where the browser has no WebNN backend.
    #[serde(rename = "ort-webnn")]
    OrtWebnn,
    /// transformers.js ([`crate::model::onnx::TRANSFORMERS_VERSION`]): its
    /// `pipeline('feature-extraction')` with its own tokenizer (onnxruntime-web's C++ WebGPU
    /// provider underneath), on MiniLM from text ([`CaseSpec::from_text`]) in the ONNX file
    /// harness writes, or on a user's Hugging Face folder ([`crate::hf_pipeline`]). It runs
    /// those cases only.
    Transformers,
}

impl Platform {
    /// The platform's name as the CLI and reports spell it.
    pub fn as_str(self) -> &'static str {
        match self {
            Platform::Webgpu => "webgpu",
            Platform::Wasm => "wasm",
            Platform::Native => "native",
            Platform::Tfjs => "tfjs",
            Platform::Webnn => "webnn",
            Platform::OrtWebgpu => "ort-webgpu",
            Platform::OrtJsep => "ort-jsep",
            Platform::OrtWasm => "ort-wasm",
            Platform::OrtWebnn => "ort-webnn",
            Platform::Transformers => "transformers",
        }
    }

    /// Why `case` cannot run here, or `None` when it can: the WASM CPU runs catalogue kernels
    /// only, TensorFlow.js only the kernels it has an op for, at their default variant.
    pub fn unsupported(self, case: &CaseSpec) -> Option<String> {
        let workload_reason = || format!("{}: models and user kernels run on webgpu and native only", case.kernel);
        if let Some(Workload::Onnx(o)) = &case.workload {
            return match (self, &o.pipeline) {
                (Platform::OrtWebgpu | Platform::OrtJsep | Platform::OrtWasm | Platform::OrtWebnn, None) | (Platform::Transformers, Some(_)) => None,
                (_, Some(p)) => Some(format!(
                    "{}: a Hugging Face folder runs through transformers.js's pipeline('{}') on --platform transformers; its ONNX file alone runs on onnxruntime-web with --onnx",
                    case.id,
                    p.task.name()
                )),
                _ => Some(format!("{}: an ONNX file runs on onnxruntime-web (ort-webgpu, ort-jsep, ort-wasm, ort-webnn), not on {}", o.file, self.as_str())),
            };
        }
        if let Some(Workload::Bench(b)) = &case.workload {
            return match (self, b.kind) {
                (Platform::Native, _) | (Platform::Wasm, crate::bench::BenchKind::Cpu) | (Platform::Webgpu, crate::bench::BenchKind::Gpu) => None,
                (_, crate::bench::BenchKind::Cpu) => Some(format!("{}: a CPU bench runs on wasm and native", b.label())),
                (_, crate::bench::BenchKind::Gpu) => Some(format!("{}: a GPU bench runs on webgpu and native", b.label())),
            };
        }
        match (self, case.cold) {
            (Platform::Native, Some(_)) => {
                return Some(format!("{}: a cold start is measured from a fresh page in a browser (natively, a case's pipelineMs and firstDispatchMs show its first run)", case.id))
            }
            (Platform::OrtWebgpu | Platform::OrtJsep, Some(c)) if c.precompile => {
                return Some(format!("{}: onnxruntime-web creates its own pipelines in its first run; precompiling is harness's", case.id))
            }
            // Seen on the GPU machine in Chrome and Firefox (docs/hardware/h200-cold.md).
            (Platform::OrtWebgpu, Some(c)) if c.parallel => {
                return Some(format!(
                    "{}: onnxruntime-web {}'s C++ WebGPU provider refuses two sessions created at once (\"another WebGPU EP inference session is being created\"); ort-jsep loads them at once",
                    case.id,
                    crate::model::onnx::ORT_WEB_VERSION
                ))
            }
            _ => {}
        }
        match (self, case.from_text) {
            (Platform::Webgpu | Platform::Transformers, true) => return None,
            (Platform::Transformers, false) => {
                return Some(format!(
                    "{}: transformers.js runs MiniLM from text (add --from-text) and Hugging Face folders (--hf-model DIR) only; --platform ort-webgpu runs the model alone on the same engine",
                    case.id
                ))
            }
            (_, true) => {
                return Some(format!(
                    "{}: a pipeline from text runs in a page, on webgpu (harness, its tokenizer in WASM) and transformers (transformers.js); the model case at the same shape is the other platforms' measure",
                    case.id
                ))
            }
            _ => {}
        }
        match self {
            Platform::Webgpu | Platform::Native | Platform::Transformers => None,
            Platform::OrtWebgpu | Platform::OrtJsep => match case.workload.as_ref().is_some_and(Workload::is_model) {
                true => None,
                false => Some(format!("{}: onnxruntime-web runs harness's models (minilm, llama, vit, whisper) and your ONNX files (--onnx) only", case.kernel)),
            },
            Platform::OrtWasm | Platform::OrtWebnn => Some(format!("{}: {} runs your ONNX files (--onnx) only", case.id, self.as_str())),
            Platform::Wasm | Platform::Tfjs | Platform::Webnn if case.kernel().and_then(|k| k.fault()) == Some(crate::Fault::LoseDevice) => {
                Some(format!("{}: it destroys harness's own GPU device, which {} does not use", case.kernel, self.as_str()))
            }
            Platform::Wasm => case.workload.as_ref().map(|_| workload_reason()),
            Platform::Tfjs if case.workload.is_some() => Some(workload_reason()),
            Platform::Tfjs if case.variant.is_some() => {
                Some(format!("{}: variants are harness's own WGSL; TensorFlow.js picks its own kernel", case.kernel))
            }
            Platform::Tfjs => match crate::tfjs::call(&case.kernel, &case.shape) {
                Some(_) => None,
                None => Some(format!("not supported on tfjs: TensorFlow.js {} has no op for `{}`", crate::tfjs::VERSION, case.kernel)),
            },
            Platform::Webnn if case.workload.is_some() => Some(workload_reason()),
            Platform::Webnn if case.variant.is_some() => Some(format!("{}: variants are harness's own WGSL; WebNN picks its own kernel", case.kernel)),
            Platform::Webnn => match crate::webnn::graph(&case.kernel, &case.shape) {
                Some(_) => None,
                None => Some(crate::webnn::unsupported_reason(&case.kernel)),
            },
        }
    }

    /// Whether it runs in a browser page.
    pub fn in_browser(self) -> bool {
        self != Platform::Native
    }

    /// The onnxruntime-web execution provider it names (`webgpu`, `jsep`, `wasm`), if it is one.
    pub fn ort_ep(self) -> Option<&'static str> {
        match self {
            Platform::OrtWebgpu => Some("webgpu"),
            Platform::OrtJsep => Some("jsep"),
            Platform::OrtWasm => Some("wasm"),
            Platform::OrtWebnn => Some("webnn"),
            _ => None,
        }
    }

    /// Whether it runs another engine's kernels rather than harness's WGSL (so tuned variants
    /// mean nothing there).
    pub fn other_engine(self) -> bool {
        matches!(self, Platform::Tfjs | Platform::Webnn | Platform::OrtWebgpu | Platform::OrtJsep | Platform::OrtWasm | Platform::OrtWebnn | Platform::Transformers)
    }

    /// Whether it runs on the browser's WebNN (`navigator.ml`), whose absence makes the run
    /// unavailable rather than failed: `webnn`, and onnxruntime-web's WebNN provider.
    pub fn on_webnn(self) -> bool {
        matches!(self, Platform::Webnn | Platform::OrtWebnn)
    }
}

/// One case: a kernel (or a model or user workload) at a shape with a seed. Everything else
/// about it is derived.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CaseSpec {
    /// `kernel/shape/seed`, unique within a run.
    pub id: String,
    /// Kernel name; for a workload, its name in reports (`minilm`, `tinyllama.decode`).
    pub kernel: String,
    /// Dimensions.
    pub shape: Shape,
    /// Input seed.
    pub seed: u64,
    /// What runs, when it is not the catalogue kernel `kernel`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workload: Option<Workload>,
    /// The catalogue kernel's variant, when not its default (`bm64-bn64-bk16-tm4-tn4-v4` for
    /// `matmul`): what `harness tune` tries and what its cache picks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variant: Option<String>,
    /// Which pass of the plan this is under `--repeat`, from 2 (the first pass has none); the id
    /// ends with it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repeat: Option<u32>,
    /// Measured from a fresh page to its first result instead of in the steady state
    /// (`--cold-start`); the id ends with it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cold: Option<ColdStart>,
    /// Timed end to end from text, as a web app embeds sentences: tokenize, run, pool, each
    /// sample one call (`--from-text`, MiniLM only); the id ends with `/from-text`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub from_text: bool,
}

/// How a cold-start case is measured: each sample a new page in a fresh browser profile, timed
/// from navigation to the first output read back, in phases.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ColdStart {
    /// Fresh pages, one a sample.
    pub samples: u32,
    /// Every pipeline created up front, all at once, with `createComputePipelineAsync`, before
    /// the first dispatch; otherwise each is created the usual way (`createComputePipeline`,
    /// which browsers compile lazily).
    pub precompile: bool,
    /// For a model of several parts (a CLIP-shaped pair), all loaded at once rather than one
    /// after the other.
    #[serde(default)]
    pub parallel: bool,
}

impl ColdStart {
    /// What a case id adds for it: `/cold`, `/cold+precompile`, `/cold+parallel`, ….
    fn suffix(self) -> String {
        format!("/cold{}{}", if self.precompile { "+precompile" } else { "" }, if self.parallel { "+parallel" } else { "" })
    }
}
impl CaseSpec {
    /// The case of `kernel` at `shape` with `seed`.
    pub fn new(kernel: &str, shape: Shape, seed: u64) -> Self {
        CaseSpec {
            id: default_id(kernel, &shape, seed),
            kernel: kernel.to_string(),
            shape,
            seed,
            workload: None,
            variant: None,
            repeat: None,
            cold: None,
            from_text: false,
        }
    }

    /// The same case with the kernel's `variant`, which its id names; checked by
    /// [`catalog::variant`].
    pub fn with_variant(self, variant: &str) -> Result<Self, catalog::VariantError> {
        catalog::variant(&self.kernel, variant)?;
        let id = format!("{}/{variant}{}", default_id(&self.kernel, &self.shape, self.seed), self.repeat_suffix());
        Ok(CaseSpec { id, variant: Some(variant.to_string()), ..self })
    }

    /// The same case in pass `pass` (from 2) of `--repeat`, which its id names.
    pub fn in_pass(self, pass: u32) -> Self {
        let id = format!("{}/repeat={pass}", self.id);
        CaseSpec { id, repeat: Some(pass), ..self }
    }

    /// The same case measured cold (`--cold-start`) as `cold` says, which its id names.
    pub fn cold_start(self, cold: ColdStart) -> Self {
        let id = format!("{}{}", self.id, cold.suffix());
        CaseSpec { id, cold: Some(cold), ..self }
    }

    /// The same case timed end to end from text (`--from-text`), which its id names.
    pub fn from_text(self) -> Self {
        let id = format!("{}/from-text", self.id);
        CaseSpec { id, from_text: true, ..self }
    }

    /// What the id adds for a repeat, a cold start or a run from text.
    fn repeat_suffix(&self) -> String {
        let cold = self.cold.map(ColdStart::suffix).unwrap_or_default();
        let text = if self.from_text { "/from-text" } else { "" };
        format!("{text}{cold}{}", self.repeat.map(|r| format!("/repeat={r}")).unwrap_or_default())
    }

    /// The id of the case whose output this one must equal: its own, or for a variant, the
    /// default variant's (every variant computes the same thing); never a repeat's, a cold
    /// start's or a run from text's.
    pub fn reference_id(&self) -> String {
        match self.variant {
            Some(_) => default_id(&self.kernel, &self.shape, self.seed),
            None => self.id.strip_suffix(&self.repeat_suffix()).unwrap_or(&self.id).to_string(),
        }
    }

    /// The case running `workload`, called `name` in reports.
    pub fn of_workload(name: &str, shape: Shape, seed: u64, workload: Workload) -> Self {
        CaseSpec { workload: Some(workload), ..CaseSpec::new(name, shape, seed) }
    }

    /// The case of a user's bench: its id is the bench's label (`dot/scalar@1024`), its shape
    /// the parameter where it is a number.
    pub fn of_bench(bench: crate::bench::BenchCase) -> Self {
        let shape = Shape(bench.param.as_deref().and_then(|p| p.parse().ok()).into_iter().collect());
        CaseSpec { id: bench.label(), kernel: bench.name.clone(), shape, seed: 0, workload: Some(Workload::Bench(bench)), variant: None, repeat: None, cold: None, from_text: false }
    }

    /// The catalogue kernel this case runs; `None` for a workload, or a kernel from another
    /// harness version.
    pub fn kernel(&self) -> Option<KernelRef> {
        match (&self.workload, &self.variant) {
            (Some(_), _) => None,
            (None, None) => catalog::find(&self.kernel).map(KernelRef::Static),
            (None, Some(v)) => catalog::variant(&self.kernel, v).ok().map(KernelRef::Owned),
        }
    }

    /// What a report says of this case before any measurement; `None` for a kernel this
    /// harness does not know.
    pub fn info(&self) -> Option<CaseInfo> {
        if let Some(w) = &self.workload {
            return Some(w.info());
        }
        let k = self.kernel()?;
        Some(CaseInfo {
            summary: k.summary().to_string(),
            dims: k.dims().iter().map(|d| d.to_string()).collect(),
            flops: k.flops(&self.shape),
            bytes: k.bytes(&self.shape),
            rate: None,
            dispatches: None,
        })
    }

    /// The GPU program of this case; `weights` only for an encoder; `caps`, what the device offers
    /// that a model's lowering may use.
    pub fn program(&self, weights: Option<&Weights>, caps: crate::program::Caps) -> Result<Program, ModelError> {
        match (&self.workload, self.kernel()) {
            (Some(w), _) => w.program(self.seed, weights, caps),
            (None, Some(k)) => Ok(Program::of_kernel(&*k, &self.shape, &k.inputs(&self.shape, self.seed))),
            (None, None) => Err(ModelError::UnknownKernel(self.kernel.clone())),
        }
    }

    /// How this case's output is checked.
    pub fn check_rule(&self) -> Option<CheckRule> {
        match (&self.workload, self.kernel()) {
            (Some(w), _) => Some(w.check()),
            (None, Some(k)) => Some(CheckRule::Elementwise(k.tolerance(&self.shape))),
            (None, None) => None,
        }
    }

    /// The output bytes as values: f32 except where a user kernel's output has another type.
    pub fn decode_output(&self, bytes: &[u8]) -> Vec<f64> {
        match &self.workload {
            Some(Workload::User(u)) => u.decode_output(bytes),
            Some(Workload::Bench(_)) => crate::bench::BenchCase::decode_output(bytes),
            _ => crate::wire::le_bytes_to_f32s(bytes).into_iter().map(f64::from).collect(),
        }
    }
}

/// `kernel/shape/seed=N`: the id of a case that runs its kernel's default.
fn default_id(kernel: &str, shape: &Shape, seed: u64) -> String {
    format!("{kernel}/{shape}/seed={seed}")
}

/// What the page fetches: the cases still to run and how to time them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunPlan {
    /// Where the cases run.
    pub platform: Platform,
    /// How each case is sampled.
    #[serde(flatten)]
    pub sampling: Sampling,
    /// Cases in order.
    pub cases: Vec<CaseSpec>,
    /// How to create the WebNN context, for a webnn run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub webnn: Option<crate::webnn::Options>,
    /// Leave the tensor cores out (`--no-tensor-cores`): GEMMs run on the f32 register-blocked
    /// kernels even where the browser offers subgroup matrices, to measure against them.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub no_tensor_cores: bool,
    /// How each case is sampled instead where the adapter turns out to be a CPU (a software
    /// adapter, which only the page learns): [`Sampling::for_cpu`] of `sampling`. `None` where
    /// the user chose the sampling, which then holds on every adapter.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_sampling: Option<Sampling>,
    /// Choose kernels as for a GPU even on a CPU adapter (`--gpu-kernels`): what CI does to
    /// check a GPU's kernels on the software adapters it has.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub gpu_kernels: bool,
}

impl RunPlan {
    /// A plan with no cases: what the server holds before the first run.
    pub fn empty(platform: Platform) -> Self {
        let sampling = Sampling { mode: crate::SamplingMode::Isolated, warmup: crate::WarmupPolicy::Fixed(0), samples: 1, max_time_ms: 0.0, target_ci_pct: None, nudge: crate::Nudge::Auto, profile: false, gpu_timer: Default::default(), timer_cost: false };
        RunPlan { platform, sampling, cases: Vec::new(), webnn: None, no_tensor_cores: false, cpu_sampling: None, gpu_kernels: false }
    }
}

/// Why a plan could not be built.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum PlanError {
    /// A filter pattern matched no kernel.
    #[error("--filter `{pattern}` matches no kernel; known kernels: {known}")]
    NoMatch {
        /// The pattern.
        pattern: String,
        /// Comma-separated kernel names.
        known: String,
    },
}

/// A `--filter` pattern's name and shape (or parameter) parts: `matmul@13x17x19` is
/// (`matmul`, `13x17x19`), a bare name any shape (`*`).
pub fn filter_parts(pattern: &str) -> (&str, &str) {
    pattern.split_once('@').unwrap_or((pattern, "*"))
}

/// `*` matches any run of characters, `?` any one; everything else matches itself.
pub fn glob_match(pattern: &str, name: &str) -> bool {
    wildmatch::WildMatch::new(pattern).matches(name)
}

/// The cases of `suite` whose kernel matches any of `filters` (all kernels when empty). A pattern
/// `KERNEL@SHAPE` (`matmul@13x17x19`, globs in either part) keeps only the suite's shapes that match.
/// Cases follow the patterns' order, each under the first that selects it, and the catalogue's
/// order under one pattern (`selftest_lose_device,add` loses the device before `add` runs).
///
/// Self-test kernels are left out unless a pattern that names `selftest` selects them, so
/// `--filter '*'` never runs a deliberately broken kernel.
pub fn build_cases(suite: Suite, filters: &[String], seed: u64) -> Result<Vec<CaseSpec>, PlanError> {
    let kernels = catalog::all();
    let split = |pattern: &str| -> (String, String) {
        let (kernel, shape) = filter_parts(pattern);
        (kernel.to_string(), shape.to_string())
    };
    for pattern in filters {
        let (kernel, shape) = split(pattern);
        if !kernels.iter().any(|k| glob_match(&kernel, k.name()) && k.shapes(suite).iter().any(|s| glob_match(&shape, &s.to_string()))) {
            let known: Vec<&str> = kernels.iter().map(|k| k.name()).collect();
            return Err(PlanError::NoMatch {
                pattern: pattern.clone(),
                known: known.join(", "),
            });
        }
    }
    let selected_by = |k: &dyn crate::Kernel, s: &Shape| -> Option<usize> {
        if filters.is_empty() {
            return (!k.is_selftest()).then_some(0);
        }
        filters.iter().position(|p| {
            let (kernel, shape) = split(p);
            glob_match(&kernel, k.name()) && glob_match(&shape, &s.to_string()) && (!k.is_selftest() || kernel.contains("selftest"))
        })
    };
    let mut cases: Vec<(usize, CaseSpec)> = kernels
        .into_iter()
        .flat_map(|k| k.shapes(suite).into_iter().filter_map(|s| selected_by(k, &s).map(|p| (p, CaseSpec::new(k.name(), s, seed)))))
        .collect();
    cases.sort_by_key(|(pattern, _)| *pattern);
    Ok(cases.into_iter().map(|(_, case)| case).collect())
}

/// `cases` `times` over, in order: each pass after the first with ids of its own
/// ([`CaseSpec::in_pass`]), so a soak or a flakiness hunt runs the same plan again.
pub fn repeated(cases: Vec<CaseSpec>, times: u32) -> Vec<CaseSpec> {
    let passes = (2..=times).flat_map(|pass| cases.iter().map(move |c| c.clone().in_pass(pass))).collect::<Vec<_>>();
    cases.into_iter().chain(passes).collect()
}

/// `cases` with the roofline probes (`stream_copy`, `fma_chain`, `fma_chain_f16`) at `suite`'s shapes run first:
/// every target measures its peaks before the cases the reports divide by them. A probe case
/// already in `cases` moves to the front rather than running twice.
pub fn roofline_first(suite: Suite, seed: u64, cases: Vec<CaseSpec>) -> Vec<CaseSpec> {
    let mut plan: Vec<CaseSpec> = catalog::ROOFLINE_RUN
        .iter()
        .flat_map(|k| k.shapes(suite).into_iter().map(move |s| CaseSpec::new(k.name(), s, seed)))
        .collect();
    let rest: Vec<CaseSpec> = cases.into_iter().filter(|c| !plan.iter().any(|p| p.id == c.id)).collect();
    plan.extend(rest);
    plan
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeated_plans_run_in_passes_with_ids_of_their_own_and_the_first_pass_references() {
        let cases = build_cases(Suite::Quick, &["add".into(), "matmul".into()], 1).unwrap();
        let all = repeated(cases.clone(), 3);
        assert_eq!(all.len(), 3 * cases.len());
        assert_eq!(all[..cases.len()], cases[..], "the first pass is the plan as it was");
        let ids: std::collections::HashSet<&str> = all.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(ids.len(), all.len(), "every id unique");
        let third = &all[2 * cases.len()];
        assert_eq!((third.id.as_str(), third.repeat), (format!("{}/repeat=3", cases[0].id).as_str(), Some(3)));
        assert_eq!(third.reference_id(), cases[0].id, "checked against the same reference");
        let matmul = all.iter().rposition(|c| c.kernel == "matmul").unwrap();
        let variant = all[matmul].clone().with_variant("bm64-bn64-bk16-tm4-tn4-v4").unwrap();
        assert!(variant.id.ends_with("/bm64-bn64-bk16-tm4-tn4-v4/repeat=3"), "{}", variant.id);
        assert_eq!(variant.reference_id(), cases[matmul - 2 * cases.len()].id);
        assert_eq!(repeated(cases.clone(), 1), cases);
    }

    #[test]
    fn a_cold_start_has_an_id_of_its_own_the_steady_reference_and_runs_in_browsers_only() {
        use crate::model::decoder::{DecoderCase, LlamaConfig, Phase};
        let config = LlamaConfig { hidden: 8, heads: 2, kv_heads: 1, ffn: 16, layers: 1 };
        let d = DecoderCase { model: "tinyllama".into(), config, phase: Phase::Prefill, ctx: 16, dtype: Default::default(), weights: None };
        let steady = CaseSpec::of_workload("tinyllama.prefill", Shape(vec![1, 16]), 1, Workload::Decoder(d));
        let cold = steady.clone().cold_start(ColdStart { samples: 3, precompile: false, parallel: false });
        let pre = steady.clone().cold_start(ColdStart { samples: 3, precompile: true, parallel: false });
        let both = steady.clone().cold_start(ColdStart { samples: 3, precompile: true, parallel: true });
        assert_eq!((cold.id.clone(), pre.id.clone()), (format!("{}/cold", steady.id), format!("{}/cold+precompile", steady.id)));
        assert_eq!(both.id, format!("{}/cold+precompile+parallel", steady.id));
        assert_eq!((cold.reference_id(), pre.reference_id(), both.reference_id()), (steady.id.clone(), steady.id.clone(), steady.id.clone()));
        assert_eq!(Platform::Webgpu.unsupported(&pre), None);
        assert_eq!(Platform::OrtJsep.unsupported(&cold), None);
        assert!(Platform::OrtWebgpu.unsupported(&pre).is_some_and(|r| r.contains("its own pipelines")));
        let parallel = steady.clone().cold_start(ColdStart { samples: 3, precompile: false, parallel: true });
        assert!(Platform::OrtWebgpu.unsupported(&parallel).is_some_and(|r| r.contains("two sessions created at once")));
        assert_eq!(Platform::OrtJsep.unsupported(&parallel), None);
        assert!(Platform::Native.unsupported(&cold).is_some_and(|r| r.contains("fresh page")));
        assert_eq!(Platform::Native.unsupported(&steady), None);
    }

    #[test]
    fn a_case_from_text_has_an_id_of_its_own_the_model_case_s_reference_and_runs_on_webgpu_and_transformers_only() {
        let steady = CaseSpec::new("minilm", Shape(vec![1, 12]), 1);
        let text = steady.clone().from_text();
        assert_eq!((text.id.as_str(), text.reference_id()), ("minilm/1x12/seed=1/from-text", steady.id.clone()));
        assert_eq!(text.clone().in_pass(2).reference_id(), steady.id);
        for p in [Platform::Webgpu, Platform::Transformers] {
            assert_eq!(p.unsupported(&text), None, "{p:?}");
        }
        for p in [Platform::Native, Platform::OrtWebgpu, Platform::OrtJsep, Platform::Wasm] {
            assert!(p.unsupported(&text).is_some_and(|r| r.contains("pipeline from text")), "{p:?}");
        }
        assert!(Platform::Transformers.unsupported(&steady).is_some_and(|r| r.contains("--from-text")));
        assert!(Platform::Transformers.other_engine() && Platform::Transformers.in_browser());
    }

    #[test]
    fn glob_matches_like_a_shell() {
        assert!(glob_match("matmul_*", "matmul_tiled"));
        assert!(glob_match("*", "add"));
        assert!(glob_match("s?b", "sub"));
        assert!(!glob_match("matmul", "matmul_tiled"));
        assert!(!glob_match("a*z", "abc"));
    }

    #[test]
    fn suites_leave_selftests_out() {
        for suite in Suite::ALL {
            let cases = build_cases(suite, &[], 1).unwrap();
            assert!(!cases.is_empty());
            assert!(cases.iter().all(|c| !c.kernel.starts_with("selftest")));
        }
        let star = build_cases(Suite::Quick, &["*".into()], 1).unwrap();
        assert!(star.iter().all(|c| !c.kernel.starts_with("selftest")));
    }

    #[test]
    fn selftests_run_when_named() {
        let cases = build_cases(Suite::Quick, &["selftest_wrong".into()], 1).unwrap();
        assert_eq!(cases.len(), 1);
    }

    #[test]
    fn filter_matching_nothing_is_an_error_naming_the_kernels() {
        let err = build_cases(Suite::Quick, &["nope".into()], 1).unwrap_err();
        assert!(err.to_string().contains("matmul_tiled"), "{err}");
        assert!(build_cases(Suite::Quick, &["matmul@2x2x2".into()], 1).is_err(), "no such quick shape");
    }

    #[test]
    fn cases_follow_the_order_of_the_patterns_that_select_them() {
        let kernels = |filters: &[&str]| {
            let filters: Vec<String> = filters.iter().map(|f| f.to_string()).collect();
            build_cases(Suite::Quick, &filters, 1).unwrap().into_iter().map(|c| c.kernel).collect::<Vec<_>>()
        };
        assert_eq!(kernels(&["selftest_lose_device", "add"]), ["selftest_lose_device", "add", "add"]);
        assert_eq!(kernels(&["add", "selftest_lose_device"]), ["add", "add", "selftest_lose_device"]);
        let each_once = kernels(&["softmax", "matmul_*", "matmul_tiled"]);
        assert_eq!(each_once[..4], ["softmax", "softmax", "matmul_naive", "matmul_naive"]);
        assert_eq!(each_once.len(), 2 + kernels(&["matmul_*"]).len(), "a case two patterns select runs once");
    }

    #[test]
    fn a_filter_may_name_a_shape_after_the_kernel() {
        let ids = |f: &str| build_cases(Suite::Quick, &[f.into()], 1).unwrap().into_iter().map(|c| c.shape.to_string()).collect::<Vec<_>>();
        assert_eq!(ids("matmul@13x17x19"), ["13x17x19"]);
        assert_eq!(ids("matvec@*x1"), ["37x1", "1x1"]);
        assert_eq!(ids("matmul").len(), 4);
    }

    #[test]
    fn roofline_probes_run_first_and_once() {
        let cases = build_cases(Suite::Quick, &["add".into(), "stream_copy".into()], 1).unwrap();
        let plan = roofline_first(Suite::Quick, 1, cases);
        let kernels: Vec<&str> = plan.iter().map(|c| c.kernel.as_str()).collect();
        assert_eq!(kernels, ["stream_copy", "stream_copy", "fma_chain", "fma_chain_f16", "add", "add"]);
    }

    #[test]
    fn tfjs_runs_the_kernels_it_has_an_op_for() {
        let case = |k: &str, dims: Vec<u32>| CaseSpec::new(k, Shape(dims), 1);
        assert_eq!(Platform::Tfjs.unsupported(&case("matmul", vec![4, 4, 4])), None);
        assert_eq!(Platform::Tfjs.unsupported(&case("softmax", vec![2, 8])), None);
        let why = Platform::Tfjs.unsupported(&case("rmsnorm", vec![2, 8])).unwrap();
        assert!(why.contains("not supported on tfjs") && why.contains("rmsnorm"), "{why}");
        let variant = case("matmul", vec![4, 4, 4]).with_variant("bm64-bn64-bk16-tm4-tn4-v4").unwrap();
        assert!(Platform::Tfjs.unsupported(&variant).unwrap().contains("variants"));
        assert_eq!(Platform::Webgpu.unsupported(&case("rmsnorm", vec![2, 8])), None);
        assert_eq!(serde_json::to_string(&Platform::Tfjs).unwrap(), "\"tfjs\"");
    }

    #[test]
    fn onnxruntime_web_runs_models_only_and_each_platform_reads_back_by_its_name() {
        let kernel = CaseSpec::new("matmul", Shape(vec![4, 4, 4]), 1);
        let why = Platform::OrtJsep.unsupported(&kernel).unwrap();
        assert!(why.contains("onnxruntime-web runs harness's models"), "{why}");
        let config = crate::model::perception::PerceptionConfig { front: crate::model::perception::Front::Image { size: 32, patch: 8, channels: 3 }, hidden: 32, heads: 4, layers: 1, ffn: 64 };
        let vit = crate::model::perception::PerceptionCase { model: "vit".into(), config, batch: 1, dtype: crate::dtype::Dtype::F32, op: None };
        let model = CaseSpec { workload: Some(Workload::Perception(vit)), ..kernel };
        assert_eq!(Platform::OrtWebgpu.unsupported(&model), None);
        for p in [Platform::Webgpu, Platform::Wasm, Platform::Native, Platform::Tfjs, Platform::Webnn, Platform::OrtWebgpu, Platform::OrtJsep] {
            assert_eq!(serde_json::from_str::<Platform>(&format!("\"{}\"", p.as_str())).unwrap(), p);
            assert_eq!(serde_json::to_string(&p).unwrap(), format!("\"{}\"", p.as_str()));
        }
        assert_eq!((Platform::OrtWebgpu.ort_ep(), Platform::OrtJsep.ort_ep(), Platform::Webgpu.ort_ep()), (Some("webgpu"), Some("jsep"), None));
        assert!(Platform::OrtJsep.other_engine() && !Platform::Native.other_engine());
    }

    #[test]
    fn case_ids_are_unique() {
        let cases = build_cases(Suite::Full, &[], 3).unwrap();
        let mut ids: Vec<_> = cases.iter().map(|c| c.id.clone()).collect();
        ids.sort();
        ids.dedup();
        assert_eq!(ids.len(), cases.len());
    }
}
