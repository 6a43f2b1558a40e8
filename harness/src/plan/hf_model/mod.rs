//! A Hugging Face model folder (`harness run --hf-model DIR`): config.json, tokenizer.json,
//! tokenizer_config.json and onnx/model.onnx, the layout transformers.js loads. Its task is read
//! from config.json ([`task`]) before any browser starts, and a task harness does not run is
//! refused then; each case is the folder's pipeline on `--batch` of harness's sentences, on
//! `--platform transformers`. The ONNX file is read as `--onnx` reads one, its inputs are the
//! sentences as the folder's tokenizer gives them ([`tokens`]), and the reference is tract-onnx's
//! run of it followed by the pipeline's post-processing, natively ([`reference`]).

pub mod reference;
pub mod task;
pub mod tokens;

use crate::plan::onnx::read::{Dim, OnnxFile};
use crate::plan::onnx::{own_model, OnnxError};
use kernels::hf_pipeline::{FolderFile, HfPipeline, Task};
use kernels::own_model::{Fill, OwnModel};
use kernels::{CaseSpec, Shape, Workload};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// The files of a folder transformers.js reads beside its ONNX file, each with why it is needed.
const FOLDER_FILES: [(&str, &str); 3] = [
    ("config.json", "save the model's config beside it (`model.config.save_pretrained(DIR)`; `optimum-cli export onnx` writes it)"),
    ("tokenizer.json", "save its fast tokenizer beside it (`AutoTokenizer.from_pretrained(MODEL).save_pretrained(DIR)`; `optimum-cli export onnx` writes it): transformers.js reads no other tokenizer format"),
    ("tokenizer_config.json", "save the tokenizer beside it (`AutoTokenizer.from_pretrained(MODEL).save_pretrained(DIR)`), which writes it with tokenizer.json"),
];

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
         it runs feature-extraction (a text encoder without a head, such as BertModel). `--onnx {folder}/onnx/model.onnx` runs the ONNX file alone on onnxruntime-web"
    )]
    Unsupported {
        /// The folder.
        folder: String,
        /// The model class config.json names.
        architecture: String,
        /// Its pipeline task.
        task: &'static str,
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
/// key.
pub fn cases(options: &HfOptions, seed: u64) -> Result<(Vec<CaseSpec>, HashMap<String, PathBuf>), HfModelError> {
    let mut cases = Vec::new();
    let mut served = HashMap::new();
    for (n, dir) in options.folders.iter().enumerate() {
        let folder = Folder::read(dir)?;
        for &batch in options.batches {
            let texts: Vec<String> = options.sentences.iter().cycle().take(batch as usize).map(|s| s.to_string()).collect();
            let model = folder.case(&format!("hf{n}"), texts)?;
            served.extend(model.served());
            let shape = Shape(model.inputs.first().map(|i| i.shape.iter().map(|&d| d as u32).collect()).unwrap_or_default());
            let mut spec = CaseSpec::of_workload(&folder.name, shape, seed, Workload::Onnx(model));
            spec.id = format!("{}/{}/batch={batch}", folder.name, folder.task.name());
            cases.push(spec);
        }
    }
    Ok((cases, served))
}

/// A model folder, read and its task known.
struct Folder {
    /// Where it is (absolute).
    dir: PathBuf,
    /// Its name, as case ids begin.
    name: String,
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
    /// task may lack the files a text model has), then the tokenizer's files and the ONNX file.
    fn read(dir: &Path) -> Result<Folder, HfModelError> {
        let shown = dir.display().to_string();
        let dir = dir.canonicalize().map_err(|e| HfModelError::Read { folder: shown.clone(), problem: e.to_string() })?;
        if !dir.is_dir() {
            return Err(HfModelError::Read { folder: shown, problem: "not a folder; pass the model's folder, which holds config.json, tokenizer.json and onnx/model.onnx".into() });
        }
        let missing = |(file, fix): (&'static str, &'static str)| HfModelError::Missing { folder: shown.clone(), file, fix };
        let text = std::fs::read_to_string(dir.join("config.json")).map_err(|_| missing(FOLDER_FILES[0]))?;
        let bad = |problem: String| HfModelError::Config { folder: shown.clone(), problem };
        let config: serde_json::Value = serde_json::from_str(&text).map_err(|e| bad(format!("is not JSON: {e}")))?;
        let architecture = config["architectures"].get(0).and_then(|a| a.as_str()).ok_or_else(|| {
            bad("names no model class in `architectures`, which harness reads the task from; add it (`\"architectures\": [\"BertModel\"]`, as transformers' save_pretrained writes it)".into())
        })?;
        let name = task::of_architecture(architecture, &config);
        let task = Task::of_name(name).ok_or_else(|| HfModelError::Unsupported { folder: shown.clone(), architecture: architecture.to_string(), task: name })?;
        for needed in &FOLDER_FILES[1..] {
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
        let name = dir.file_name().map_or_else(|| shown.clone(), |n| n.to_string_lossy().into_owned());
        Ok(Folder { dir, name, shown, config, task, onnx })
    }

    /// Its case on `texts`, the ONNX file's files served under `key`.
    fn case(&self, key: &str, texts: Vec<String>) -> Result<OwnModel, HfModelError> {
        let wrong = |problem: String| HfModelError::Signature { folder: self.shown.clone(), problem };
        let batch = tokens::batch(&self.dir, &texts).map_err(|problem| HfModelError::Tokenizer { folder: self.shown.clone(), problem })?;
        let dims = self.dims(&batch).map_err(wrong)?;
        let mut model = own_model(&self.onnx, key, dims, |i, _| {
            let values = batch.input(&i.name).ok_or_else(|| wrong(format!("has the input `{}`, which the tokenizer does not give (it gives {})", i.name, tokens::INPUTS.join(", "))))?;
            Ok::<_, HfModelError>(Fill::Values { values: values.to_vec() })
        })?;
        if !model.inputs.iter().any(|i| i.name == "attention_mask") {
            return Err(wrong("has no input `attention_mask`: harness mean-pools over the mask the model was fed, as transformers.js pools over its tokenizer's".into()));
        }
        // What transformers.js's feature-extraction reads of the outputs, in its order.
        let read = ["last_hidden_state", "logits", "token_embeddings"];
        let Some(output) = read.iter().find_map(|n| model.outputs.iter().find(|o| o.name == *n)) else {
            let outputs: Vec<&str> = model.outputs.iter().map(|o| o.name.as_str()).collect();
            return Err(wrong(format!("has no output {}, which transformers.js's {} reads; its outputs are: {}", read.join(" nor "), self.task.name(), outputs.join(", "))));
        };
        let width = output.len.map(|len| len / (batch.rows * batch.seq).max(1)).or_else(|| self.config["hidden_size"].as_u64()).unwrap_or(1);
        let files = FOLDER_FILES.iter().map(|(name, _)| FolderFile { name: name.to_string(), key: format!("{key}/{name}") }).collect();
        model.pipeline = Some(HfPipeline { task: self.task, folder: self.dir.display().to_string(), files, texts, output: output.name.clone(), width });
        model.file = format!("{}/{ONNX_FILE}", self.name);
        model.check = OwnModel::check_rule(self.onnx.precision, &[width]);
        Ok(model)
    }

    /// The ONNX file's dynamic dims at the tokenizer's `batch`: every input is [sentences,
    /// tokens], as a tokenizer gives them.
    fn dims(&self, batch: &tokens::Batch) -> Result<Vec<(String, u64)>, String> {
        let mut dims: Vec<(String, u64)> = Vec::new();
        for input in &self.onnx.inputs {
            let shown: Vec<String> = input.dims.iter().map(|d| match d {
                Dim::Fixed(v) => v.to_string(),
                Dim::Named(n) => n.clone(),
            }).collect();
            let refused = || format!("input `{}` is [{}]; the tokenizer gives [{}, {}] (sentences, tokens): export it with dynamic batch and sequence dims, as optimum does", input.name, shown.join(", "), batch.rows, batch.seq);
            if input.dims.len() != 2 {
                return Err(refused());
            }
            for (dim, size) in input.dims.iter().zip([batch.rows, batch.seq]) {
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

    /// A copy of tiny-bert in a folder of the test's, changed by `change`.
    fn copy(change: impl FnOnce(&Path)) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("onnx")).unwrap();
        for name in ["config.json", "tokenizer.json", "tokenizer_config.json", ONNX_FILE] {
            std::fs::copy(tiny_bert().join(name), dir.path().join(name)).unwrap();
        }
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
        let embed = |c: &CaseSpec| reference::outputs(&served[&own(c).key], own(c), c.seed).unwrap_or_else(|e| panic!("{}: {e}", c.id));
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

    #[test]
    fn a_task_harness_does_not_run_is_refused_naming_it_before_its_files_are_looked_for() {
        for (class, task) in [("ViTForImageClassification", "image-classification"), ("WhisperForConditionalGeneration", "automatic-speech-recognition")] {
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
