//! A Hugging Face model folder (`harness run --hf-model DIR`): config.json, tokenizer.json and
//! tokenizer_config.json (a text model), preprocessor_config.json (an image model) or all of them
//! (a speech model), and onnx/model.onnx, the layout transformers.js loads. Its task is read from
//! config.json ([`task`]) before any browser starts, and a task harness does not run is refused
//! then; each case is the folder's pipeline on `--batch` of harness's sentences
//! (feature-extraction), of images made from the case's seed (image-classification) or of audio
//! clips made from it (automatic-speech-recognition, CTC models), on `--platform transformers`.
//! The ONNX file is read as `--onnx` reads one, its inputs are the sentences as the folder's
//! tokenizer gives them ([`tokens`]), the images as its processor normalizes them ([`pixels`]) or
//! the clips as its feature extractor does ([`audio`]), and the reference is tract-onnx's run of
//! it followed by the pipeline's post-processing, natively ([`reference`]).

pub mod audio;
pub mod pixels;
pub mod reference;
pub mod task;
pub mod tokens;

use crate::plan::onnx::read::{Dim, OnnxFile};
use crate::plan::onnx::{case_name, own_model, OnnxError};
use kernels::hf_pipeline::{Feeds, FolderFile, HfPipeline, Task};
use kernels::own_model::{Fill, ModelOutput, OwnModel};
use kernels::{CaseSpec, Shape, Workload};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// A file of a folder, and how to make it where it is missing.
type FolderFileFix = (&'static str, &'static str);

/// The config, which every folder has.
const CONFIG: FolderFileFix = ("config.json", "save the model's config beside it (`model.config.save_pretrained(DIR)`; `optimum-cli export onnx` writes it)");

/// The files of a text model's folder transformers.js reads beside its ONNX file.
const TEXT_FILES: [FolderFileFix; 3] = [
    CONFIG,
    ("tokenizer.json", "save its fast tokenizer beside it (`AutoTokenizer.from_pretrained(MODEL).save_pretrained(DIR)`; `optimum-cli export onnx` writes it): transformers.js reads no other tokenizer format"),
    ("tokenizer_config.json", "save the tokenizer beside it (`AutoTokenizer.from_pretrained(MODEL).save_pretrained(DIR)`), which writes it with tokenizer.json"),
];

/// The files of an image model's folder transformers.js reads beside its ONNX file.
const IMAGE_FILES: [FolderFileFix; 2] = [
    CONFIG,
    ("preprocessor_config.json", "save the model's image processor beside it (`AutoImageProcessor.from_pretrained(MODEL).save_pretrained(DIR)`; `optimum-cli export onnx` writes it)"),
];

/// The files of a speech model's folder transformers.js reads beside its ONNX file: its feature
/// extractor's, and the tokenizer's that decodes the frames.
const AUDIO_FILES: [FolderFileFix; 4] = [
    CONFIG,
    ("preprocessor_config.json", "save the model's feature extractor beside it (`AutoFeatureExtractor.from_pretrained(MODEL).save_pretrained(DIR)`; `optimum-cli export onnx` writes it)"),
    ("tokenizer.json", "transformers.js reads no other tokenizer format, and transformers has no fast tokenizer for CTC models: build it with the tokenizers library, a WordLevel model over vocab.json with the CTC decoder (README, \"Your own ONNX model\", shows how), or take it from a converted folder on the Hugging Face hub"),
    TEXT_FILES[2],
];

/// The files of a folder for `task`, each with why it is needed.
fn folder_files(task: Task) -> &'static [FolderFileFix] {
    match task.feeds() {
        Feeds::Texts => &TEXT_FILES,
        Feeds::Images => &IMAGE_FILES,
        Feeds::Audio => &AUDIO_FILES,
    }
}

/// Where transformers.js looks for a folder's ONNX file.
pub const ONNX_FILE: &str = "onnx/model.onnx";

/// What is wrong with an `--hf-model` folder. Each is found before any browser starts.
#[derive(Debug, thiserror::Error)]
pub enum HfModelError {
    /// The folder cannot be read.
    #[error("--hf-model {folder}: {problem}")]
    Read {
        /// The folder.
        folder: String,
        /// What went wrong.
        problem: String,
    },
    /// A file transformers.js needs is not in the folder.
    #[error("--hf-model {folder}: no {file} in it; {fix}")]
    Missing {
        /// The folder.
        folder: String,
        /// The file, relative to the folder.
        file: &'static str,
        /// How to make it.
        fix: &'static str,
    },
    /// config.json cannot be read, or names no model class.
    #[error("--hf-model {folder}: config.json {problem}")]
    Config {
        /// The folder.
        folder: String,
        /// What is wrong.
        problem: String,
    },
    /// The model is for a task harness does not run yet.
    #[error(
        "--hf-model {folder}: config.json's `architectures` names {architecture}, a model for transformers.js's pipeline('{task}'), which harness does not run yet; \
         it runs feature-extraction (a text encoder without a head, such as BertModel), image-classification (such as ViTForImageClassification) and automatic-speech-recognition by a CTC head (such as Wav2Vec2ForCTC or HubertForCTC; not yet a model that generates its transcript token by token, such as Whisper). \
         `--onnx {folder}/onnx/model.onnx` runs the ONNX file alone on onnxruntime-web"
    )]
    Unsupported {
        /// The folder.
        folder: String,
        /// The model class config.json names.
        architecture: String,
        /// Its pipeline task.
        task: &'static str,
    },
    /// preprocessor_config.json cannot be read, or asks for what harness does not do.
    #[error("--hf-model {folder}: preprocessor_config.json {problem}")]
    Processor {
        /// The folder.
        folder: String,
        /// What is wrong.
        problem: String,
    },
    /// The tokenizer cannot tokenize the sentences.
    #[error("--hf-model {folder}: {problem}")]
    Tokenizer {
        /// The folder.
        folder: String,
        /// What went wrong.
        problem: String,
    },
    /// The ONNX file's inputs or outputs are not those the pipeline feeds and reads.
    #[error("--hf-model {folder}: onnx/model.onnx {problem}")]
    Signature {
        /// The folder.
        folder: String,
        /// What does not fit.
        problem: String,
    },
    /// The ONNX file cannot be run.
    #[error(transparent)]
    Onnx(#[from] OnnxError),
}

/// The options of `--hf-model` runs, as given.
#[derive(Debug, Clone)]
pub struct HfOptions<'a> {
    /// The folders.
    pub folders: &'a [PathBuf],
    /// `--batch`: sentences a call.
    pub batches: &'a [u32],
    /// The sentences a batch takes, the first `batch` of them (repeating past the end).
    pub sentences: &'a [&'a str],
}

/// The cases of every `--hf-model` folder, one per batch size, and the files the page fetches by
/// key. Folders of one name are told apart by their parent folder ([`case_name`]).
pub fn cases(options: &HfOptions, seed: u64) -> Result<(Vec<CaseSpec>, HashMap<String, PathBuf>), HfModelError> {
    let folders = options.folders.iter().map(|dir| Folder::read(dir)).collect::<Result<Vec<_>, _>>()?;
    let dirs: Vec<&Path> = folders.iter().map(|f| f.dir.as_path()).collect();
    let mut cases = Vec::new();
    let mut served = HashMap::new();
    for (n, folder) in folders.iter().enumerate() {
        let name = case_name(&dirs, n);
        for &batch in options.batches {
            let key = format!("hf{n}");
            let mut model = match folder.task.feeds() {
                Feeds::Images => folder.image_case(&key, batch as u64)?,
                Feeds::Audio => folder.audio_case(&key, batch as u64)?,
                Feeds::Texts => folder.text_case(&key, options.sentences.iter().cycle().take(batch as usize).map(|s| s.to_string()).collect())?,
            };
            model.file = format!("{name}/{ONNX_FILE}");
            served.extend(model.served());
            let shape = Shape(model.inputs.first().map(|i| i.shape.iter().map(|&d| d as u32).collect()).unwrap_or_default());
            let mut spec = CaseSpec::of_workload(&name, shape, seed, Workload::Onnx(model));
            spec.id = format!("{name}/{}/batch={batch}", folder.task.name());
            cases.push(spec);
        }
    }
    Ok((cases, served))
}

/// A model folder, read and its task known.
struct Folder {
    /// Where it is (absolute).
    dir: PathBuf,
    /// As given, for messages.
    shown: String,
    /// Its config.json.
    config: serde_json::Value,
    /// Its pipeline's task.
    task: Task,
    /// Its ONNX file.
    onnx: OnnxFile,
}

impl Folder {
    /// Reads the folder at `dir`: config.json and the task it names first (a folder of another
    /// task may lack the files a text model has), then the files of its task (the tokenizer's,
    /// the image processor's) and the ONNX file.
    fn read(dir: &Path) -> Result<Folder, HfModelError> {
        let shown = dir.display().to_string();
        let dir = dir.canonicalize().map_err(|e| HfModelError::Read { folder: shown.clone(), problem: e.to_string() })?;
        if !dir.is_dir() {
            return Err(HfModelError::Read { folder: shown, problem: "not a folder; pass the model's folder, which holds config.json, tokenizer.json (or preprocessor_config.json) and onnx/model.onnx".into() });
        }
        let missing = |(file, fix): FolderFileFix| HfModelError::Missing { folder: shown.clone(), file, fix };
        let text = std::fs::read_to_string(dir.join("config.json")).map_err(|_| missing(CONFIG))?;
        let bad = |problem: String| HfModelError::Config { folder: shown.clone(), problem };
        let config: serde_json::Value = serde_json::from_str(&text).map_err(|e| bad(format!("is not JSON: {e}")))?;
        let architecture = config["architectures"].get(0).and_then(|a| a.as_str()).ok_or_else(|| {
            bad("names no model class in `architectures`, which harness reads the task from; add it (`\"architectures\": [\"BertModel\"]`, as transformers' save_pretrained writes it)".into())
        })?;
        let name = task::of_architecture(architecture, &config);
        let task = task::harness_runs(name, architecture, &config).ok_or_else(|| HfModelError::Unsupported { folder: shown.clone(), architecture: architecture.to_string(), task: name })?;
        for needed in &folder_files(task)[1..] {
            if !dir.join(needed.0).is_file() {
                return Err(missing(*needed));
            }
        }
        let onnx_path = dir.join(ONNX_FILE);
        if !onnx_path.is_file() {
            let fix = "put the model's ONNX file there, where transformers.js loads it from (`optimum-cli export onnx --model MODEL DIR` writes DIR/model.onnx: move it into DIR/onnx/)";
            return Err(missing((ONNX_FILE, fix)));
        }
        let onnx = OnnxFile::read(&onnx_path)?;
        Ok(Folder { dir, shown, config, task, onnx })
    }

    /// The folder's files the page fetches besides the ONNX file, served under `key`.
    fn files(&self, key: &str) -> Vec<FolderFile> {
        folder_files(self.task).iter().map(|(name, _)| FolderFile { name: name.to_string(), key: format!("{key}/{name}") }).collect()
    }

    /// An error of its ONNX file's signature.
    fn wrong(&self, problem: String) -> HfModelError {
        HfModelError::Signature { folder: self.shown.clone(), problem }
    }

    /// Its feature-extraction case on `texts`, the ONNX file's files served under `key`.
    fn text_case(&self, key: &str, texts: Vec<String>) -> Result<OwnModel, HfModelError> {
        let wrong = |problem: String| self.wrong(problem);
        let batch = tokens::batch(&self.dir, &texts).map_err(|problem| HfModelError::Tokenizer { folder: self.shown.clone(), problem })?;
        let sizes = [batch.rows, batch.seq];
        let dims = self.dims(&sizes, "the tokenizer gives", "(sentences, tokens): export it with dynamic batch and sequence dims, as optimum does").map_err(wrong)?;
        let model = own_model(&self.onnx, key, dims, |i, _| {
            let values = batch.input(&i.name).ok_or_else(|| wrong(format!("has the input `{}`, which the tokenizer does not give (it gives {})", i.name, tokens::INPUTS.join(", "))))?;
            Ok::<_, HfModelError>(Fill::Values { values: values.to_vec() })
        })?;
        if !model.inputs.iter().any(|i| i.name == "attention_mask") {
            return Err(wrong("has no input `attention_mask`: harness mean-pools over the mask the model was fed, as transformers.js pools over its tokenizer's".into()));
        }
        // What transformers.js's feature-extraction reads of the outputs, in its order.
        let output = self.output(&model, &["last_hidden_state", "logits", "token_embeddings"], "reads")?;
        let width = output.len.map(|len| len / (batch.rows * batch.seq).max(1)).or_else(|| self.config["hidden_size"].as_u64()).unwrap_or(1);
        let output = output.name.clone();
        Ok(self.with_pipeline(model, key, texts, output, width))
    }

    /// The first of `model`'s outputs named in `names` (in that order), the one the pipeline
    /// `uses` (reads, decodes); refused, listing the outputs it has, where there is none.
    fn output<'m>(&self, model: &'m OwnModel, names: &[&str], uses: &str) -> Result<&'m ModelOutput, HfModelError> {
        if let Some(output) = names.iter().find_map(|n| model.outputs.iter().find(|o| o.name == *n)) {
            return Ok(output);
        }
        let wanted = match names {
            [one] => format!("`{one}`"),
            many => many.join(" nor "),
        };
        let outputs: Vec<&str> = model.outputs.iter().map(|o| o.name.as_str()).collect();
        Err(self.wrong(format!("has no output {wanted}, which transformers.js's {} {uses}; its outputs are: {}", self.task.name(), outputs.join(", "))))
    }

    /// `model` run by the folder's pipeline, whose `output` gives rows of `width`, checked by them.
    fn with_pipeline(&self, mut model: OwnModel, key: &str, texts: Vec<String>, output: String, width: u64) -> OwnModel {
        model.pipeline = Some(HfPipeline { task: self.task, folder: self.dir.display().to_string(), files: self.files(key), texts, output, width });
        model.check = OwnModel::check_rule(self.onnx.precision, &[width]);
        model
    }

    /// Its image-classification case on `batch` seeded images of the size its
    /// preprocessor_config.json asks for, the ONNX file's files served under `key`.
    fn image_case(&self, key: &str, batch: u64) -> Result<OwnModel, HfModelError> {
        let processor = pixels::Processor::read(&self.dir.join("preprocessor_config.json")).map_err(|problem| HfModelError::Processor { folder: self.shown.clone(), problem })?;
        let sizes = [batch, 3, processor.height, processor.width];
        let dims = self.dims(&sizes, "the image processor gives", "(images, channels, height, width): export it with a dynamic batch dim, at the size preprocessor_config.json asks for").map_err(|p| self.wrong(p))?;
        let model = own_model(&self.onnx, key, dims, |i, _| match i.name.as_str() {
            "pixel_values" => Ok::<_, HfModelError>(Fill::Pixels { norm: processor.norm.clone() }),
            other => Err(self.wrong(format!("has the input `{other}`; transformers.js's image-classification feeds `pixel_values` alone"))),
        })?;
        let output = self.output(&model, &["logits"], "reads")?;
        let labels = self.labels()?;
        if let Some(len) = output.len.filter(|&len| len != batch * labels) {
            return Err(self.wrong(format!("output `logits` has {len} values for {batch} image(s); config.json's id2label names {labels} labels")));
        }
        let output = output.name.clone();
        Ok(self.with_pipeline(model, key, Vec::new(), output, labels))
    }

    /// Its automatic-speech-recognition case on `clips` seeded audio clips of
    /// [`audio::CLIP_SECONDS`] at the rate its preprocessor_config.json names, the ONNX file's
    /// files served under `key`: the pipeline runs the model on each clip and decodes its frames.
    fn audio_case(&self, key: &str, clips: u64) -> Result<OwnModel, HfModelError> {
        let extractor = audio::FeatureExtractor::read(&self.dir.join("preprocessor_config.json")).map_err(|problem| HfModelError::Processor { folder: self.shown.clone(), problem })?;
        let sizes = [clips, extractor.samples()];
        let dims = self.dims(&sizes, "the feature extractor gives", "(clips, samples): export it with dynamic batch and sequence dims, as optimum does").map_err(|p| self.wrong(p))?;
        let model = own_model(&self.onnx, key, dims, |i, _| match i.name.as_str() {
            "input_values" => Ok::<_, HfModelError>(Fill::Audio { normalize: extractor.normalize }),
            "attention_mask" => Ok(Fill::Ones),
            other => Err(self.wrong(format!("has the input `{other}`; transformers.js's automatic-speech-recognition feeds `input_values` and `attention_mask` alone"))),
        })?;
        let output = self.output(&model, &["logits"], "decodes")?;
        let bad = |problem: String| HfModelError::Config { folder: self.shown.clone(), problem };
        let vocab = self.config["vocab_size"].as_u64().filter(|&v| v > 0).ok_or_else(|| bad("has no `vocab_size`, the width of each frame's logits; save the model's config beside it (`model.config.save_pretrained(DIR)`)".into()))?;
        if let Some(len) = output.len.filter(|&len| len % (clips * vocab) != 0) {
            return Err(self.wrong(format!("output `logits` has {len} values for {clips} clip(s), not frames of config.json's `vocab_size` {vocab}")));
        }
        let output = output.name.clone();
        Ok(self.with_pipeline(model, key, Vec::new(), output, vocab))
    }

    /// How many labels config.json's `id2label` names: ids 0 to n-1, each label once, as the page
    /// maps the pipeline's labels back to their ids.
    fn labels(&self) -> Result<u64, HfModelError> {
        let bad = |problem: String| HfModelError::Config { folder: self.shown.clone(), problem };
        let Some(id2label) = self.config["id2label"].as_object().filter(|l| !l.is_empty()) else {
            return Err(bad("has no `id2label`, which names the labels transformers.js's image-classification scores; save the config of the classifier (`model.config.save_pretrained(DIR)`)".into()));
        };
        let mut seen = std::collections::HashSet::new();
        for (id, label) in id2label {
            let label = label.as_str().unwrap_or_default();
            if id.parse::<usize>().ok().filter(|&n| n < id2label.len()).is_none() || !seen.insert(label) {
                return Err(bad(format!("`id2label` maps `{id}` to `{label}`: harness reads each label's score back by its name, so the ids must be 0 to {} and each label must be named once", id2label.len() - 1)));
            }
        }
        Ok(id2label.len() as u64)
    }

    /// The ONNX file's dynamic dims where every input is of `sizes` (`gives` and `what` say
    /// where they come from, for a refusal).
    fn dims(&self, sizes: &[u64], gives: &str, what: &str) -> Result<Vec<(String, u64)>, String> {
        let mut dims: Vec<(String, u64)> = Vec::new();
        for input in &self.onnx.inputs {
            let shown: Vec<String> = input.dims.iter().map(|d| match d {
                Dim::Fixed(v) => v.to_string(),
                Dim::Named(n) => n.clone(),
            }).collect();
            let expected: Vec<String> = sizes.iter().map(u64::to_string).collect();
            let refused = || format!("input `{}` is [{}]; {gives} [{}] {what}", input.name, shown.join(", "), expected.join(", "));
            if input.dims.len() != sizes.len() {
                return Err(refused());
            }
            for (dim, &size) in input.dims.iter().zip(sizes) {
                match dim {
                    Dim::Fixed(v) if *v != size => return Err(refused()),
                    Dim::Fixed(_) => {}
                    Dim::Named(n) => match dims.iter().find(|(name, _)| name == n) {
                        Some((_, v)) if *v != size => return Err(refused()),
                        Some(_) => {}
                        None => dims.push((n.clone(), size)),
                    },
                }
            }
        }
        Ok(dims)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kernels::{CheckRule, Platform};

    /// tests/onnx-models/tiny-bert: a BERT of two layers exported by torch, with a tokenizer
    /// transformers trained from MiniLM's (tests/onnx-models/make_tiny_bert.py).
    fn tiny_bert() -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/onnx-models/tiny-bert")
    }

    const SENTENCES: [&str; 2] = ["The quick brown fox jumps over the lazy dog.", "Hello!"];

    fn build(folder: &Path, batches: &[u32]) -> Result<(Vec<CaseSpec>, HashMap<String, PathBuf>), HfModelError> {
        cases(&HfOptions { folders: &[folder.to_path_buf()], batches, sentences: &SENTENCES }, 1)
    }

    fn own(spec: &CaseSpec) -> &OwnModel {
        match &spec.workload {
            Some(Workload::Onnx(o)) => o,
            _ => panic!("{} is not an ONNX case", spec.id),
        }
    }

    /// The folder `from`'s config and ONNX file, and its files `others`, copied into `to`.
    fn copy_into(from: &Path, others: &[&str], to: &Path) {
        std::fs::create_dir_all(to.join("onnx")).unwrap();
        for name in ["config.json", ONNX_FILE].iter().chain(others) {
            std::fs::copy(from.join(name), to.join(name)).unwrap();
        }
    }

    /// A copy of tiny-bert in a folder of the test's, changed by `change`.
    fn copy(change: impl FnOnce(&Path)) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        copy_into(&tiny_bert(), &["tokenizer.json", "tokenizer_config.json"], dir.path());
        change(dir.path());
        dir
    }

    #[test]
    fn a_folder_is_a_case_per_batch_fed_its_tokenizers_ids_and_served_whole() {
        let (cases, served) = build(&tiny_bert(), &[1, 2]).unwrap();
        let ids: Vec<&str> = cases.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(ids, ["tiny-bert/feature-extraction/batch=1", "tiny-bert/feature-extraction/batch=2"]);
        let m = own(&cases[1]);
        // "Hello!" is 4 tokens ([CLS] hello ! [SEP]), padded to the fox's 12 with [PAD] (0), as
        // transformers' own tokenizer gives them for this folder.
        let fills: Vec<&Fill> = m.inputs.iter().map(|i| &i.fill).collect();
        let Fill::Values { values: ids } = fills[0] else { panic!("{fills:?}") };
        assert_eq!(m.inputs[0].shape, [2, 12]);
        assert_eq!(&ids[..12], [2, 62, 267, 216, 257, 228, 140, 62, 262, 225, 7, 3]);
        assert_eq!(&ids[12..], [2, 259, 5, 3, 0, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!(fills[1], &Fill::Values { values: [vec![1; 12], vec![1; 4], vec![0; 8]].concat() });
        assert_eq!(m.dims, [("batch_size".to_string(), 2), ("sequence_length".to_string(), 12)]);
        let p = m.pipeline.as_ref().unwrap();
        assert_eq!((p.task, p.output.as_str(), p.width, p.texts.len()), (Task::FeatureExtraction, "last_hidden_state", 32, 2));
        assert!(matches!(m.check, CheckRule::Cosine { row: 32, .. }), "{:?}", m.check);
        for key in ["hf0", "hf0/config.json", "hf0/tokenizer.json", "hf0/tokenizer_config.json"] {
            assert!(served.get(key).is_some_and(|p| p.is_file()), "{key}: {served:?}");
        }
        // transformers.js runs it; onnxruntime-web runs the file alone, with --onnx.
        assert_eq!(Platform::Transformers.unsupported(&cases[0]), None);
        for p in [Platform::OrtWebgpu, Platform::OrtWasm, Platform::Webgpu] {
            assert!(p.unsupported(&cases[0]).is_some_and(|r| r.contains("pipeline('feature-extraction')") && r.contains("--onnx")), "{p:?}");
        }
        assert!(!cases[0].workload.as_ref().unwrap().has_cold_start());
    }

    #[test]
    fn the_reference_is_each_sentences_embedding_whatever_the_padding() {
        let (cases, served) = build(&tiny_bert(), &[1, 2]).unwrap();
        let embed = |c: &CaseSpec| reference_of(c, &served);
        let (alone, padded) = (embed(&cases[0]), embed(&cases[1]));
        assert_eq!((alone.len(), padded.len()), (32, 64));
        for row in padded.chunks(32) {
            let norm = row.iter().map(|v| v * v).sum::<f64>().sqrt();
            assert!((norm - 1.0).abs() < 1e-9, "L2-normalised: {norm}");
        }
        // The fox's row is the same beside "Hello!" (which pads nothing of it) as alone; and
        // "Hello!", padded, pools over its own 4 tokens only, not the 8 pads.
        let diff = alone.iter().zip(&padded[..32]).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
        assert!(diff < 1e-5, "{diff}");
        let hello = embed(&cases_of(&["Hello!"]).unwrap()[0]);
        let diff = hello.iter().zip(&padded[32..]).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
        assert!(diff < 1e-5, "a padded sentence pools over its own tokens only: {diff}");
        assert!(reference::engine(own(&cases[0]).pipeline.as_ref().unwrap()).contains("tract-onnx"));
    }

    /// What the pipeline returns for case `c`, natively.
    fn reference_of(c: &CaseSpec, served: &HashMap<String, PathBuf>) -> Vec<f64> {
        reference::outputs(&served[&own(c).key], own(c), c.seed).unwrap_or_else(|e| panic!("{}: {e}", c.id))
    }

    fn cases_of(sentences: &[&str]) -> Result<Vec<CaseSpec>, HfModelError> {
        cases(&HfOptions { folders: &[tiny_bert()], batches: &[sentences.len() as u32], sentences }, 1).map(|(c, _)| c)
    }

    #[test]
    fn a_batch_is_cut_at_the_tokenizers_limit_and_padded_on_its_side() {
        let folder = copy(|dir| std::fs::write(dir.join("tokenizer_config.json"), r#"{"pad_token": {"__type": "AddedToken", "content": "[PAD]"}, "padding_side": "left", "model_max_length": 6}"#).unwrap());
        let texts: Vec<String> = SENTENCES.map(String::from).to_vec();
        let batch = tokens::batch(folder.path(), &texts).unwrap();
        assert_eq!((batch.rows, batch.seq), (2, 6));
        assert_eq!(&batch.ids[6..], [0, 0, 2, 259, 5, 3]);
        assert_eq!(batch.mask, [1, 1, 1, 1, 1, 1, 0, 0, 1, 1, 1, 1]);
        assert_eq!(batch.ids[0], 2, "cut at the end, [CLS] kept");
    }

    #[test]
    fn a_folder_missing_a_file_is_refused_naming_the_file_and_its_fix() {
        let folder = copy(|dir| std::fs::remove_file(dir.join(ONNX_FILE)).unwrap());
        let err = build(folder.path(), &[1]).unwrap_err().to_string();
        assert!(err.contains("no onnx/model.onnx in it") && err.contains("optimum-cli export onnx"), "{err}");
        let folder = copy(|dir| std::fs::remove_file(dir.join("tokenizer.json")).unwrap());
        let err = build(folder.path(), &[1]).unwrap_err().to_string();
        assert!(err.contains("no tokenizer.json in it") && err.contains("save_pretrained"), "{err}");
        let folder = copy(|dir| std::fs::write(dir.join("config.json"), r#"{"model_type": "bert"}"#).unwrap());
        let err = build(folder.path(), &[1]).unwrap_err().to_string();
        assert!(err.contains("names no model class in `architectures`"), "{err}");
        let err = build(Path::new("/nonexistent/model"), &[1]).unwrap_err().to_string();
        assert!(err.starts_with("--hf-model /nonexistent/model:"), "{err}");
    }

    /// tests/onnx-models/tiny-vit: a ViT classifier of two layers and 10 labels exported by torch,
    /// with ViTImageProcessor's preprocessor_config.json (tests/onnx-models/make_tiny_vit.py).
    fn tiny_vit() -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/onnx-models/tiny-vit")
    }

    #[test]
    fn an_image_classifier_is_a_case_per_batch_fed_seeded_images_as_its_processor_normalizes_them() {
        let (cases, served) = build(&tiny_vit(), &[1, 3]).unwrap();
        let ids: Vec<&str> = cases.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(ids, ["tiny-vit/image-classification/batch=1", "tiny-vit/image-classification/batch=3"]);
        let m = own(&cases[1]);
        assert_eq!((m.inputs.len(), m.inputs[0].name.as_str(), m.inputs[0].shape.as_slice()), (1, "pixel_values", [3, 3, 32, 32].as_slice()));
        let norm = kernels::hf_pipeline::Normalization { rescale: 1.0 / 255.0, mean: [0.5; 3], std: [0.5; 3] };
        assert_eq!(m.inputs[0].fill, Fill::Pixels { norm });
        assert_eq!(m.dims, [("batch_size".to_string(), 3)]);
        let p = m.pipeline.as_ref().unwrap();
        assert_eq!((p.task, p.output.as_str(), p.width, p.texts.len()), (Task::ImageClassification, "logits", 10, 0));
        assert!(matches!(m.check, CheckRule::Cosine { row: 10, .. }), "{:?}", m.check);
        assert_eq!((m.output_at(29), m.output_at(30)), (Some("scores"), None));
        for key in ["hf0", "hf0/config.json", "hf0/preprocessor_config.json"] {
            assert!(served.get(key).is_some_and(|p| p.is_file()), "{key}: {served:?}");
        }
        assert!(!served.contains_key("hf0/tokenizer.json"));
        assert_eq!(Platform::Transformers.unsupported(&cases[0]), None);
    }

    #[test]
    fn the_image_reference_is_each_images_softmax_in_label_order() {
        let (cases, served) = build(&tiny_vit(), &[1, 3]).unwrap();
        let (one, three) = (reference_of(&cases[0], &served), reference_of(&cases[1], &served));
        assert_eq!((one.len(), three.len()), (10, 30));
        for row in three.chunks(10) {
            assert!((row.iter().sum::<f64>() - 1.0).abs() < 1e-9 && row.iter().all(|&v| v > 0.0), "{row:?}");
            let spread = row.iter().copied().fold(0.0, f64::max) - row.iter().copied().fold(1.0, f64::min);
            assert!(spread > 0.05, "scores a check can tell apart, not a flat row: {row:?}");
        }
        // The seed's first image is the same alone as first of three; the others differ from it.
        let diff = one.iter().zip(&three[..10]).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
        assert!(diff < 1e-6, "{diff}");
        assert!(three[10..20].iter().zip(&one).any(|(a, b)| (a - b).abs() > 1e-3), "{three:?}");
        // They are the softmax of tract's logits on the normalized pixels.
        let logits = crate::plan::onnx::reference::each_output(&served[&own(&cases[1]).key], own(&cases[1]), cases[1].seed).unwrap();
        assert_eq!(three, reference::softmax_rows(&logits[0], 10));
        assert!(reference::engine(own(&cases[0]).pipeline.as_ref().unwrap()).contains("softmax"));
    }

    /// A copy of tiny-vit in a folder of the test's, changed by `change`.
    fn copy_vit(change: impl FnOnce(&Path)) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        copy_into(&tiny_vit(), &["preprocessor_config.json"], dir.path());
        change(dir.path());
        dir
    }

    #[test]
    fn an_image_folder_harness_cannot_follow_is_refused_naming_the_fix() {
        let folder = copy_vit(|dir| std::fs::remove_file(dir.join("preprocessor_config.json")).unwrap());
        let err = build(folder.path(), &[1]).unwrap_err().to_string();
        assert!(err.contains("no preprocessor_config.json in it") && err.contains("AutoImageProcessor"), "{err}");
        // An image size the ONNX file's fixed 32×32 does not take.
        let folder = copy_vit(|dir| std::fs::write(dir.join("preprocessor_config.json"), r#"{"size": {"height": 24, "width": 24}}"#).unwrap());
        let err = build(folder.path(), &[1]).unwrap_err().to_string();
        assert!(err.contains("input `pixel_values` is [batch_size, 3, 32, 32]; the image processor gives [1, 3, 24, 24]"), "{err}");
        let folder = copy_vit(|dir| {
            let config = std::fs::read_to_string(dir.join("config.json")).unwrap().replace("\"id2label\"", "\"id2label_gone\"");
            std::fs::write(dir.join("config.json"), config).unwrap();
        });
        let err = build(folder.path(), &[1]).unwrap_err().to_string();
        assert!(err.contains("has no `id2label`"), "{err}");
        let folder = copy_vit(|dir| {
            let config = std::fs::read_to_string(dir.join("config.json")).unwrap().replace("\"dog\"", "\"cat\"");
            std::fs::write(dir.join("config.json"), config).unwrap();
        });
        let err = build(folder.path(), &[1]).unwrap_err().to_string();
        assert!(err.contains("maps `1` to `cat`") && err.contains("each label must be named once"), "{err}");
    }

    /// tests/onnx-models/tiny-wav2vec2: a Wav2Vec2 CTC model of two layers and a 32-character
    /// vocabulary exported by torch, with Wav2Vec2FeatureExtractor's preprocessor_config.json and
    /// a tokenizer.json built by the tokenizers library (tests/onnx-models/make_tiny_wav2vec2.py).
    fn tiny_wav2vec2() -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/onnx-models/tiny-wav2vec2")
    }

    #[test]
    fn a_ctc_speech_model_is_a_case_per_batch_fed_seeded_clips_its_logits_the_reference() {
        let (cases, served) = build(&tiny_wav2vec2(), &[1, 2]).unwrap();
        let ids: Vec<&str> = cases.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(ids, ["tiny-wav2vec2/automatic-speech-recognition/batch=1", "tiny-wav2vec2/automatic-speech-recognition/batch=2"]);
        let m = own(&cases[1]);
        assert_eq!((m.inputs.len(), m.inputs[0].name.as_str(), m.inputs[0].shape.as_slice()), (1, "input_values", [2, 16000].as_slice()));
        assert_eq!(m.inputs[0].fill, Fill::Audio { normalize: true });
        assert_eq!(m.dims, [("batch_size".to_string(), 2), ("sequence_length".to_string(), 16000)]);
        let p = m.pipeline.as_ref().unwrap();
        assert_eq!((p.task, p.output.as_str(), p.width), (Task::SpeechRecognition, "logits", 32));
        assert!(matches!(m.check, CheckRule::Cosine { row: 32, .. }), "{:?}", m.check);
        for key in ["hf0", "hf0/config.json", "hf0/preprocessor_config.json", "hf0/tokenizer.json", "hf0/tokenizer_config.json"] {
            assert!(served.get(key).is_some_and(|p| p.is_file()), "{key}: {served:?}");
        }
        assert_eq!(Platform::Transformers.unsupported(&cases[0]), None);
        // Frames of the vocabulary's logits, each clip's own: the first clip's alone and first of two.
        let (one, two) = (reference_of(&cases[0], &served), reference_of(&cases[1], &served));
        assert_eq!((one.len() % 32, two.len()), (0, 2 * one.len()));
        let diff = one.iter().zip(&two).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
        assert!(diff < 1e-4, "{diff}");
        assert!(two[one.len()..].iter().zip(&one).any(|(a, b)| (a - b).abs() > 1e-2));
        assert!(reference::engine(p).contains("CTC"));
    }

    #[test]
    fn a_speech_folder_harness_cannot_follow_is_refused_naming_the_fix() {
        let copy_w2v = |change: &dyn Fn(&Path)| {
            let dir = tempfile::tempdir().unwrap();
            copy_into(&tiny_wav2vec2(), &["preprocessor_config.json", "tokenizer.json", "tokenizer_config.json"], dir.path());
            change(dir.path());
            dir
        };
        let folder = copy_w2v(&|dir| std::fs::remove_file(dir.join("tokenizer.json")).unwrap());
        let err = build(folder.path(), &[1]).unwrap_err().to_string();
        assert!(err.contains("no tokenizer.json in it") && err.contains("CTC decoder"), "{err}");
        let folder = copy_w2v(&|dir| std::fs::write(dir.join("preprocessor_config.json"), r#"{"feature_extractor_type": "WhisperFeatureExtractor", "sampling_rate": 16000}"#).unwrap());
        let err = build(folder.path(), &[1]).unwrap_err().to_string();
        assert!(err.contains("preprocessor_config.json names the feature extractor WhisperFeatureExtractor"), "{err}");
        let folder = copy_w2v(&|dir| {
            let config = std::fs::read_to_string(dir.join("config.json")).unwrap().replace("\"vocab_size\"", "\"vocab_gone\"");
            std::fs::write(dir.join("config.json"), config).unwrap();
        });
        let err = build(folder.path(), &[1]).unwrap_err().to_string();
        assert!(err.contains("has no `vocab_size`"), "{err}");
    }

    #[test]
    fn folders_of_one_name_are_told_apart_by_their_parent() {
        let dir = tempfile::tempdir().unwrap();
        for parent in ["a", "b"] {
            copy_into(&tiny_vit(), &["preprocessor_config.json"], &dir.path().join(parent).join("model"));
        }
        let folders = [dir.path().join("a/model"), dir.path().join("b/model"), tiny_vit()];
        let (cases, _) = cases(&HfOptions { folders: &folders, batches: &[1], sentences: &SENTENCES }, 1).unwrap();
        let ids: Vec<&str> = cases.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(ids, ["a/model/image-classification/batch=1", "b/model/image-classification/batch=1", "tiny-vit/image-classification/batch=1"]);
        assert_eq!(own(&cases[1]).file, "b/model/onnx/model.onnx");
    }

    #[test]
    fn a_task_harness_does_not_run_is_refused_naming_it_before_its_files_are_looked_for() {
        // A CTC class of a model type transformers.js's pipeline does not decode is refused too.
        for (class, task) in [("Data2VecAudioForCTC", "automatic-speech-recognition"), ("WhisperForConditionalGeneration", "automatic-speech-recognition"), ("BertForMaskedLM", "fill-mask")] {
            // As such a folder is: no tokenizer.json, no ONNX file looked at.
            let dir = tempfile::tempdir().unwrap();
            std::fs::write(dir.path().join("config.json"), format!(r#"{{"architectures": ["{class}"], "image_size": 224}}"#)).unwrap();
            let err = build(dir.path(), &[1]).unwrap_err();
            assert!(matches!(err, HfModelError::Unsupported { .. }), "{err}");
            let err = err.to_string();
            assert!(err.contains(class) && err.contains(&format!("pipeline('{task}')")) && err.contains("does not run yet"), "{err}");
        }
    }
}
