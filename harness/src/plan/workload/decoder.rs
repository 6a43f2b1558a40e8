//! Decoders (`--model tinyllama`, `llama:…`, or `llama` in a GGUF file's shape): prefill, decode
//! and each op of one layer alone, over seeded weights or those of a GGUF file given with
//! `--weights`, which is read, checked against the decoders' shapes and served.

use super::{model_label, parse_shape, WorkloadError, Workloads};
use kernels::model::decoder::{DecoderCase, LlamaConfig, Phase, OPS, TINYLLAMA};
use kernels::model::weights::Weights;
use kernels::{CaseSpec, Dtype, Shape, Workload};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// The key a GGUF file's weights are served under.
pub const GGUF: &str = "gguf";

/// What the decoders' cases are made of, read from `harness run`'s arguments once.
pub(super) struct Options<'a> {
    /// `--context`: the prefill's prompt tokens, or the decode step's cached ones.
    pub contexts: &'a [u32],
    /// `--layers`: the decoder's layers to run, where given.
    pub layers: Option<u32>,
    /// `--prefill-ops`: also time each op of the prefill alone.
    pub prefill_ops: bool,
    /// The GGUF file given with `--weights`, whose weights (and, for `llama` alone, shape) the
    /// decoders take.
    pub gguf: Option<&'a GgufFile>,
}

/// The cases of the decoder `model` (as written) in `dtype` with inputs from `seed`, and the GGUF
/// file they read, once checked to hold them.
pub(super) fn cases(model: &str, opts: &Options, seed: u64, dtype: Dtype) -> Result<Workloads, WorkloadError> {
    let (name, config) = decoder_config(model, opts.layers, opts.gguf)?;
    let cases = decoder_cases(&name, config, opts.contexts, seed, dtype, opts.prefill_ops, opts.gguf.map(|_| GGUF.to_string()));
    let mut weights = HashMap::new();
    if let Some(file) = opts.gguf {
        file.check(&cases)?;
        weights.insert(GGUF.into(), file.path.clone());
    }
    Ok(Workloads { cases, weights })
}

/// A GGUF file given with `--weights`, read and parsed.
pub(super) struct GgufFile {
    path: PathBuf,
    weights: Weights,
}

impl GgufFile {
    /// Reads and parses the GGUF file at `path`, refusing one that is not GGUF.
    pub(super) fn read(path: &Path) -> Result<GgufFile, WorkloadError> {
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
    pub(super) fn check(&self, cases: &[CaseSpec]) -> Result<(), WorkloadError> {
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
    use crate::plan::workload::WorkloadArgs;

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
}
