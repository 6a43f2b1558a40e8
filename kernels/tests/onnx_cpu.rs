//! The ONNX files harness writes ([`kernels::model::onnx`]) run on ONNX Runtime's own native CPU
//! build (1.30, the library inside the npm package onnxruntime-node, which `ci/setup.sh`
//! installs) and match the f64 reference of the graph they were written from. ORT refusing a file
//! (an unknown op, a wrong attribute, a shape its type inference rejects) fails here before any
//! browser sees it; a wrong translation of an op fails the comparison.

use kernels::check::{check, CheckRule};
use kernels::dtype::Dtype;
use kernels::model::decoder::{DecoderCase, LlamaConfig, Phase};
use kernels::model::encoder::{BertConfig, EncoderCase};
use kernels::model::graph::Graph;
use kernels::model::onnx::{export, export_bert, InputData, Onnx};
use kernels::model::perception::{Front, PerceptionCase, PerceptionConfig};
use kernels::model::weights::Weights;
use ort::session::{Session, SessionInputValue};
use ort::value::Tensor;
use std::borrow::Cow;
use std::path::PathBuf;
use std::sync::OnceLock;

/// Where ci/setup.sh puts onnxruntime-node's library; `ORT_DYLIB_PATH` names another.
fn library() -> PathBuf {
    if let Some(p) = std::env::var_os("ORT_DYLIB_PATH") {
        return p.into();
    }
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let lib = root.join("target/onnxruntime-node/node_modules/onnxruntime-node/bin/napi-v6/linux/x64/libonnxruntime.so.1");
    assert!(
        lib.is_file(),
        "ONNX Runtime's native library is missing ({}): run `bash ci/setup.sh`, which installs the npm package \
         onnxruntime-node@1.30.0 into target/onnxruntime-node, or set ORT_DYLIB_PATH to a libonnxruntime.so",
        lib.display()
    );
    lib
}

/// The process's one ORT environment.
fn environment() -> &'static ort::environment::Environment {
    static ENV: OnceLock<ort::environment::Environment> = OnceLock::new();
    ENV.get_or_init(|| ort::init_from(library()).expect("load libonnxruntime").with_name("harness-onnx-test").build().expect("ORT environment"))
}

/// Runs `graph` exported to ONNX on ORT's CPU and returns its outputs, concatenated.
fn run_on_ort(graph: &Graph, weights: Option<&Weights>) -> Vec<f64> {
    run_file_on_ort(export(graph, weights).expect("export"))
}

/// Runs the file `onnx` on ORT's CPU, fed its own feeds; returns its outputs, concatenated.
fn run_file_on_ort(onnx: Onnx) -> Vec<f64> {
    let mut session = Session::builder(environment()).unwrap().commit_from_memory(&onnx.bytes).unwrap_or_else(|e| panic!("ONNX Runtime refused the file: {e}"));
    let inputs: Vec<(Cow<str>, SessionInputValue)> = onnx
        .feeds
        .iter()
        .map(|f| {
            let shape = f.dims.clone();
            let value: SessionInputValue = match &f.data {
                InputData::F32(v) => Tensor::from_array((shape, v.clone())).unwrap().into(),
                InputData::I32(v) => Tensor::from_array((shape, v.clone())).unwrap().into(),
                InputData::I64(v) => Tensor::from_array((shape, v.clone())).unwrap().into(),
                other => panic!("harness's ONNX writer feeds f32, i32 and i64 only, not {other:?}"),
            };
            (Cow::from(f.name.clone()), value)
        })
        .collect();
    let outputs = session.run(inputs).unwrap_or_else(|e| panic!("ONNX Runtime could not run the file: {e}"));
    onnx.outputs.iter().flat_map(|name| outputs[name.as_str()].try_extract_tensor::<f32>().unwrap().1.iter().map(|&v| v as f64).collect::<Vec<_>>()).collect()
}

/// ORT's output of `graph` against the f64 reference, by the model check (cosine per row and
/// RMS-scaled error).
fn assert_matches(what: &str, graph: &Graph, weights: Option<&Weights>, row: usize) {
    let got = run_on_ort(graph, weights);
    let want = graph.evaluate(weights).unwrap();
    let verdict = check(&got, &want, CheckRule::Cosine { row, min: kernels::model::MIN_COSINE, tol: kernels::model::tolerance(Dtype::F32) });
    assert!(verdict.passed, "{what}: ORT's output differs from the reference: {verdict:?}");
}

#[test]
fn vit_and_whisper_encoders_written_as_onnx_match_the_reference_on_ort_s_cpu() {
    let tiny = |front| PerceptionConfig { front, hidden: 32, heads: 4, layers: 2, ffn: 48 };
    for (model, front) in [("vit", Front::Image { size: 32, patch: 8, channels: 3 }), ("whisper", Front::Audio { mels: 8, frames: 40 })] {
        let case = PerceptionCase { model: model.into(), config: tiny(front), batch: 2, dtype: Dtype::F32, op: None };
        assert_matches(model, &case.graph(5), None, case.row_len());
        // The front end alone: its im2col written out (Pad, Gather, Transpose) rather than as a Conv.
        for op in ["embed", "attention"] {
            let case = PerceptionCase { op: Some(op.into()), ..case.clone() };
            assert_matches(&format!("{model} {op}"), &case.graph(5), None, case.row_len());
        }
    }
}

#[test]
fn a_llama_prefill_written_as_onnx_matches_the_reference_on_ort_s_cpu() {
    // Grouped-query attention (8 heads on 2 KV heads), RoPE, RMSNorm, SwiGLU, a causal mask.
    let config = LlamaConfig { hidden: 64, heads: 8, kv_heads: 2, ffn: 96, layers: 2 };
    for (phase, ctx) in [(Phase::Prefill, 7), (Phase::Decode, 5)] {
        let case = DecoderCase { model: "test".into(), config, phase: phase.clone(), ctx, dtype: Dtype::F32, weights: None };
        assert_matches(&format!("{phase:?}"), &case.graph(3), None, case.row_len());
    }
}

#[test]
fn minilm_with_its_real_weights_and_padding_written_as_onnx_matches_the_reference_on_ort_s_cpu() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../models/all-MiniLM-L6-v2");
    let read = |name: &str| std::fs::read(dir.join(name)).unwrap_or_else(|e| panic!("{name} in {} ({e}): run `bash ci/setup.sh`", dir.display()));
    let config: BertConfig = serde_json::from_slice(&read("config.json")).unwrap();
    let weights = Weights::parse(read("model.safetensors")).unwrap();
    // Two sentences of 8 and 5 tokens, padded to 8: the mask and the pooling see only real ones.
    let ids = vec![101, 7592, 2088, 2003, 1037, 3231, 6251, 102, 101, 2023, 2003, 2009, 102, 0, 0, 0];
    let case = EncoderCase { model: "minilm".into(), config, weights: "minilm".into(), prefix: String::new(), batch: 2, seq: 8, ids, lens: vec![8, 5], dtype: Dtype::F32, op: None, texts: Vec::new() };
    assert_matches("minilm", &case.graph(), Some(&weights), case.row_len());

    // With BERT's signature, as transformers.js feeds it: the hidden states out, pooled here as
    // its feature-extraction pipeline pools them (mean over the mask, then L2), in f64.
    let onnx = export_bert(&case.graph(), Some(&weights)).unwrap();
    let names: Vec<(&str, &[i64])> = onnx.feeds.iter().map(|f| (f.name.as_str(), f.dims.as_slice())).collect();
    assert_eq!(names, [("input_ids", &[2i64, 8][..]), ("attention_mask", &[2, 8][..])]);
    assert_eq!(onnx.outputs, ["last_hidden_state"]);
    let hidden = run_file_on_ort(onnx);
    let h = case.config.hidden_size as usize;
    let mut pooled = Vec::new();
    for (i, &len) in case.lens.iter().enumerate() {
        let mean: Vec<f64> = (0..h).map(|d| (0..len as usize).map(|t| hidden[(i * 8 + t) * h + d]).sum::<f64>() / len as f64).collect();
        let norm = mean.iter().map(|v| v * v).sum::<f64>().sqrt();
        pooled.extend(mean.iter().map(|v| v / norm));
    }
    let want = case.graph().evaluate(Some(&weights)).unwrap();
    let verdict = check(&pooled, &want, CheckRule::Cosine { row: h, min: kernels::model::MIN_COSINE, tol: kernels::model::tolerance(Dtype::F32) });
    assert!(verdict.passed, "BERT-signature file: pooled hidden states differ from the reference: {verdict:?}");
}
