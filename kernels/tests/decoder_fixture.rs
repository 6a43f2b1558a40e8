//! The decoder's f64 reference (`Graph::evaluate`, which shares its wiring with the GPU program)
//! against hidden states that Hugging Face transformers' `LlamaModel` computed in float64 from
//! the same seeded weights (kernels/tests/fixtures/make_decoder_fixture.py): passing means the
//! RoPE, grouped-query attention, KV cache, SwiGLU and residual wiring agrees with an
//! implementation written apart from this crate, not just with itself. The fixture is committed,
//! so this needs no Python.
//!
//! The `#[ignore]`d test writes the seeded tensors the script loads into `LlamaModel`.

use kernels::dtype::Dtype;
use kernels::model::decoder::{DecoderCase, LlamaConfig, Phase};
use kernels::model::graph::Data;
use kernels::prng::Prng;
use serde_json::{json, Map, Value};

/// The shape of decoder.rs's tests: two layers, 8 query heads sharing 2 KV heads.
const CONFIG: LlamaConfig = LlamaConfig { hidden: 64, heads: 8, kv_heads: 2, ffn: 96, layers: 2 };
/// The seed of the fixture's weights and inputs.
const SEED: u64 = 7;
/// Environment variable naming where `write_decoder_tensors` writes.
const OUT_VAR: &str = "DECODER_TENSORS_OUT";

/// The fixture's cases: a 5-token prompt, and one token after 4 cached ones (RoPE at positions
/// 0..5 and at 4; queries of each group of 4 heads reading one KV head).
fn cases() -> Vec<DecoderCase> {
    [(Phase::Prefill, 5), (Phase::Decode, 4)]
        .into_iter()
        .map(|(phase, ctx)| DecoderCase { model: "fixture".into(), config: CONFIG, phase, ctx, dtype: Dtype::F32, weights: None })
        .collect()
}

fn phase_name(phase: &Phase) -> &'static str {
    match phase {
        Phase::Prefill => "prefill",
        Phase::Decode => "decode",
        Phase::Op(_) | Phase::PrefillOp(_) => unreachable!("the fixture has whole-model cases only"),
    }
}

/// Writes, for every fixture case, each seeded tensor of its graph (weights, norm gains, input
/// tokens and, for decode, the KV cache) by name as f32 values (written as f64, so Python reads
/// them exactly). Run by make_decoder_fixture.py:
/// `DECODER_TENSORS_OUT=PATH cargo test -p kernels --test decoder_fixture -- --ignored`.
#[test]
#[ignore = "writes the fixture script's input; run with DECODER_TENSORS_OUT=PATH"]
fn write_decoder_tensors() {
    let path = std::env::var(OUT_VAR).unwrap_or_else(|_| panic!("set {OUT_VAR} to the output path"));
    let cases: Vec<Value> = cases()
        .iter()
        .map(|case| {
            let g = case.graph(SEED);
            let mut tensors = Map::new();
            for t in &g.tensors {
                if let Data::Seeded { stream, lo, hi } = t.data {
                    assert_eq!(t.dtype, Dtype::F32, "{}", t.name);
                    let values: Vec<f64> = Prng::new(g.seed, stream).fill(t.len, lo, hi).into_iter().map(f64::from).collect();
                    tensors.insert(t.name.clone(), json!(values));
                }
            }
            json!({ "phase": phase_name(&case.phase), "ctx": case.ctx, "tensors": tensors })
        })
        .collect();
    let out = json!({ "config": CONFIG, "seed": SEED, "eps": 1e-5, "ropeTheta": 10_000.0, "cases": cases });
    std::fs::write(&path, serde_json::to_string(&out).unwrap()).unwrap();
    eprintln!("wrote {path}");
}

#[test]
fn decoder_reference_matches_the_transformers_llama_fixture() {
    // Read when run rather than included, so that the script can regenerate it from scratch.
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/decoder_hidden.json");
    let fixture: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let config: LlamaConfig = serde_json::from_value(fixture["config"].clone()).unwrap();
    assert_eq!(config, CONFIG);
    assert_eq!(fixture["seed"].as_u64(), Some(SEED));
    let expected_cases = fixture["cases"].as_array().unwrap();
    assert_eq!(expected_cases.len(), cases().len());
    for (case, expected) in cases().iter().zip(expected_cases) {
        assert_eq!(expected["phase"].as_str(), Some(phase_name(&case.phase)));
        assert_eq!(expected["ctx"].as_u64(), Some(case.ctx as u64));
        let want: Vec<Vec<f64>> = serde_json::from_value(expected["hidden"].clone()).unwrap();
        let got = case.graph(SEED).evaluate(None).unwrap();
        assert_eq!(got.len(), want.len() * config.hidden as usize, "{:?}", case.phase);
        for (row, (g, w)) in got.chunks(config.hidden as usize).zip(&want).enumerate() {
            let max_err = g.iter().zip(w).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
            eprintln!("{:?} ctx {} row {row}: max abs error {max_err:.2e}", case.phase, case.ctx);
            // Observed: 5e-10, the fixture's rounding to 10 significant digits (1.5e-12 unrounded).
            // Wiring errors move elements by 7e-2 to 3.5 (a RoPE sign, pair layout, frequency or
            // position; a query head's KV group; a residual; the causal window; the scale).
            assert!(max_err < 1e-7, "{:?} ctx {} row {row}: max abs error {max_err:.3e} against transformers' LlamaModel", case.phase, case.ctx);
        }
    }
}
