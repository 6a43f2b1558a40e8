//! A Llama-style decoder: pre-norm layers of RMSNorm, grouped-query attention with rotary
//! position embeddings and a KV cache, and a SwiGLU feed-forward. Its weights are seeded, or a
//! GGUF file's (llama.cpp's tensor names, the same for both). The input is seeded token vectors (the embedding lookup and the vocabulary projection are left
//! out: they are one gather and one matrix-vector product, and would need a vocabulary).
//!
//! Three phases: `prefill` runs a whole prompt of `ctx` tokens; `decode` runs one new token
//! against a KV cache already holding `ctx` tokens (seeded, as if a prompt had filled it); `op`
//! (and `prefillOp`) runs one op of layer 0 of the decode step (of the prefill) alone, for the
//! time per op.

use super::gguf::{Gguf, TensorType};
use super::graph::{Data, Graph};
use super::op::{Op, T};
use super::weights::Weights;
use super::ModelError;
use crate::dtype::Dtype;
use crate::info::{CaseInfo, Rate};
use serde::{Deserialize, Serialize};

/// The shape of a Llama-style decoder.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LlamaConfig {
    /// Width of every token vector.
    pub hidden: u32,
    /// Query heads.
    pub heads: u32,
    /// Key/value heads (grouped-query attention: each serves `heads / kv_heads` query heads).
    pub kv_heads: u32,
    /// Width of the SwiGLU feed-forward layer.
    pub ffn: u32,
    /// Decoder layers run.
    pub layers: u32,
}

/// TinyLlama-1.1B's shape.
pub const TINYLLAMA: LlamaConfig = LlamaConfig { hidden: 2048, heads: 32, kv_heads: 4, ffn: 5632, layers: 22 };

/// RMSNorm epsilon (Llama's).
const EPS: f32 = 1e-5;
/// RoPE base (Llama's).
const ROPE_BASE: f32 = 10_000.0;

impl LlamaConfig {
    /// Why this configuration cannot run, if it cannot.
    pub fn problem(&self) -> Option<String> {
        let LlamaConfig { hidden, heads, kv_heads, ffn, layers } = *self;
        if [hidden, heads, kv_heads, ffn, layers].contains(&0) {
            return Some("hidden, heads, kv_heads, ffn and layers must all be positive".into());
        }
        if hidden % heads != 0 || (hidden / heads) % 2 != 0 {
            return Some(format!("hidden {hidden} must split into {heads} heads of an even width (RoPE rotates pairs)"));
        }
        if heads % kv_heads != 0 {
            return Some(format!("heads {heads} must be a multiple of kv_heads {kv_heads}"));
        }
        None
    }

    fn head_dim(&self) -> u32 {
        self.hidden / self.heads
    }

    /// The shape a llama GGUF file's metadata gives (all its layers), refused where the decoder
    /// here would compute something else than the file's model (another architecture, RoPE base
    /// or norm epsilon).
    pub fn from_gguf(g: &Gguf) -> Result<LlamaConfig, ModelError> {
        let bad = |key: &str, problem: String| ModelError::Metadata { key: key.to_string(), problem };
        let arch = g.str("general.architecture").unwrap_or("(none)");
        if arch != "llama" {
            return Err(bad("general.architecture", format!("`{arch}`; the decoder runs llama-architecture files (TinyLlama, Llama 2, Mistral)")));
        }
        let number = |key: &str| {
            let key = format!("llama.{key}");
            g.uint(&key).and_then(|v| u32::try_from(v).ok()).ok_or_else(|| bad(&key, "missing or not a whole number".into()))
        };
        let heads = number("attention.head_count")?;
        let config = LlamaConfig {
            hidden: number("embedding_length")?,
            heads,
            kv_heads: number("attention.head_count_kv").unwrap_or(heads),
            ffn: number("feed_forward_length")?,
            layers: number("block_count")?,
        };
        let base = g.float("llama.rope.freq_base").unwrap_or(ROPE_BASE.into());
        if base != f64::from(ROPE_BASE) {
            return Err(bad("llama.rope.freq_base", format!("{base}; the decoder's RoPE uses base {ROPE_BASE}")));
        }
        let eps = g.float("llama.attention.layer_norm_rms_epsilon").unwrap_or(EPS.into());
        if (eps - f64::from(EPS)).abs() > 1e-9 {
            return Err(bad("llama.attention.layer_norm_rms_epsilon", format!("{eps}; the decoder's RMSNorm uses {EPS}")));
        }
        if let Some(problem) = config.problem() {
            return Err(bad("llama.attention.head_count", problem));
        }
        Ok(config)
    }
}

/// What a decoder case runs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Phase {
    /// A prompt of `ctx` tokens through every layer, filling the KV cache.
    Prefill,
    /// One token after `ctx` cached ones, through every layer.
    Decode,
    /// One op of layer 0 of the decode step, by its tag (see [`OPS`]).
    Op(String),
    /// One op of layer 0 of the prefill, by its tag: where a prompt's time goes.
    PrefillOp(String),
}

/// The op tags of one decoder layer, in order: the per-op cases.
/// `o_proj` and `down` add the residual as they store their output; `gate_up` is SwiGLU's gate and
/// up projections and their product.
pub const OPS: [&str; 9] = ["attn_norm", "qkv", "rope", "kv_write", "attention", "o_proj", "ffn_norm", "gate_up", "down"];

/// One decoder case.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DecoderCase {
    /// Model name in reports (`tinyllama`).
    pub model: String,
    /// The model's shape.
    pub config: LlamaConfig,
    /// What runs.
    pub phase: Phase,
    /// Prefill: prompt tokens. Decode and op: tokens already in the KV cache.
    pub ctx: u32,
    /// How the linear layers' weights are stored (activations stay f32).
    #[serde(default)]
    pub dtype: Dtype,
    /// The key a GGUF file's weights are served under; `None`: seeded weights.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weights: Option<String>,
}

impl DecoderCase {
    /// Checks that the GGUF file `w` holds this decoder: every tensor it reads in the right shape
    /// (the first misfit named), then what the shapes cannot tell (heads, RoPE base, epsilon).
    pub fn check_weights(&self, w: &Weights) -> Result<(), ModelError> {
        self.graph(0).check_weights(w)?;
        let g = w.gguf().ok_or_else(|| ModelError::BadWeights { format: "GGUF", problem: "a decoder's weights are a GGUF file".into() })?;
        let file = LlamaConfig::from_gguf(g)?;
        let c = self.config;
        let differs = |key: &str, file: u32, here: u32| ModelError::Metadata { key: format!("llama.{key}"), problem: format!("{file} in the file; {} runs {here}", self.model) };
        for (key, f, h) in [("attention.head_count", file.heads, c.heads), ("attention.head_count_kv", file.kv_heads, c.kv_heads)] {
            if f != h {
                return Err(differs(key, f, h));
            }
        }
        if c.layers > file.layers {
            return Err(differs("block_count", file.layers, c.layers));
        }
        Ok(())
    }

    /// Tokens one run processes.
    fn tokens(&self) -> u32 {
        match self.phase {
            Phase::Prefill | Phase::PrefillOp(_) => self.ctx,
            _ => 1,
        }
    }

    /// Values per output row: a hidden state.
    pub fn row_len(&self) -> usize {
        match &self.phase {
            Phase::Op(_) | Phase::PrefillOp(_) => {
                let g = self.graph(0);
                g.outputs.first().map_or(1, |&o| g.tensors[o].len / self.tokens() as usize).max(1)
            }
            _ => self.config.hidden as usize,
        }
    }

    /// The run's graph; weights and inputs come from `seed`.
    pub fn graph(&self, seed: u64) -> Graph {
        let full = self.full_graph(seed);
        match &self.phase {
            Phase::Op(tag) | Phase::PrefillOp(tag) => full.only(tag),
            _ => full,
        }
    }

    fn full_graph(&self, seed: u64) -> Graph {
        let c = self.config;
        let (h, hd) = (c.hidden, c.head_dim());
        let kvdim = c.kv_heads * hd;
        let t = self.tokens();
        let (pos0, cache_len) = match self.phase {
            Phase::Prefill | Phase::PrefillOp(_) => (0, self.ctx),
            _ => (self.ctx, self.ctx + 1),
        };
        let mut g = Graph { seed, ..Graph::default() };
        // A weight of the file, or seeded in [lo, hi).
        let param = |g: &mut Graph, name: String, len: u32, lo: f32, hi: f32| match self.weights {
            Some(_) => g.tensor(name.clone(), len as usize, Data::Named(name)),
            None => g.seeded(name, len as usize, lo, hi),
        };
        // Weights uniform in ±1/√fan_in keep activations near unit scale, as trained ones are.
        let weight = |g: &mut Graph, name: String, out: u32, k: u32| {
            let a = 1.0 / (k as f32).sqrt();
            let w = param(g, name, out * k, -a, a);
            g.store_as(w, self.dtype, k as usize)
        };
        let gain = |g: &mut Graph, name: String| param(g, name, h, 0.8, 1.2);
        // `add`: the residual, added as the layer stores its output.
        let linear = |g: &mut Graph, tag: &'static str, x: T, w: T, add: Option<T>, k: u32, n: u32, name: String| {
            let y = g.computed(name, (t * n) as usize);
            g.op(tag, Op::Linear { x, w, b: None, add, y, m: t, k, n });
            y
        };
        let n = t * h;
        let mut x = g.seeded("tokens", n as usize, -1.0, 1.0);
        g.inputs.push(x);
        let lens = g.tensor("lens", 1, Data::U32(vec![cache_len]));
        // The RoPE table is the graph's last tensor (added below): a seeded tensor's stream is its
        // index, so one added before the weights would change every seeded weight (and the
        // fixture of transformers' hidden states made from them).
        let rope = usize::MAX;
        for l in 0..c.layers {
            let p = |s: &str| format!("blk.{l}.{s}");
            let norm = |g: &mut Graph, tag: &'static str, x: T, name: String| {
                let gw = gain(g, format!("{name}.weight"));
                let y = g.computed(name, n as usize);
                g.op(tag, Op::Norm { x, g: gw, b: None, y, rows: t, cols: h, eps: EPS });
                y
            };
            let hn = norm(&mut g, "attn_norm", x, p("attn_norm"));
            let (wq, wk, wv) = (weight(&mut g, p("attn_q.weight"), h, h), weight(&mut g, p("attn_k.weight"), kvdim, h), weight(&mut g, p("attn_v.weight"), kvdim, h));
            let q = linear(&mut g, "qkv", hn, wq, None, h, h, p("q"));
            let k = linear(&mut g, "qkv", hn, wk, None, h, kvdim, p("k"));
            let v = linear(&mut g, "qkv", hn, wv, None, h, kvdim, p("v"));
            let (qr, kr) = (g.computed(p("q_rope"), n as usize), g.computed(p("k_rope"), (t * kvdim) as usize));
            g.op("rope", Op::Rope { x: q, y: qr, table: rope, tokens: t, heads: c.heads, hd, pos0, base: ROPE_BASE });
            g.op("rope", Op::Rope { x: k, y: kr, table: rope, tokens: t, heads: c.kv_heads, hd, pos0, base: ROPE_BASE });
            let cache = |g: &mut Graph, name: String| match self.phase {
                Phase::Prefill | Phase::PrefillOp(_) => g.computed(name, (cache_len * kvdim) as usize),
                _ => g.seeded(name, (cache_len * kvdim) as usize, -1.0, 1.0),
            };
            let (kc, vc) = (cache(&mut g, p("k_cache")), cache(&mut g, p("v_cache")));
            g.op("kv_write", Op::KvWrite { src: kr, cache: kc, tokens: t, dim: kvdim, pos0 });
            g.op("kv_write", Op::KvWrite { src: v, cache: vc, tokens: t, dim: kvdim, pos0 });
            let a = g.computed(p("attention"), n as usize);
            g.op("attention", Op::Attention {
                q: qr, k: kc, v: vc, lens, y: a, rows: t, seq: t, heads: c.heads, kv_heads: c.kv_heads, hd, kv_len: cache_len, causal: true, pos0,
            });
            let wo = weight(&mut g, p("attn_output.weight"), h, h);
            let x2 = linear(&mut g, "o_proj", a, wo, Some(x), h, h, p("residual1"));
            let h2 = norm(&mut g, "ffn_norm", x2, p("ffn_norm"));
            let (wg, wu) = (weight(&mut g, p("ffn_gate.weight"), c.ffn, h), weight(&mut g, p("ffn_up.weight"), c.ffn, h));
            let sw = g.computed(p("swiglu"), (t * c.ffn) as usize);
            g.op("gate_up", Op::SwiGlu { x: h2, gate: wg, up: wu, y: sw, m: t, k: h, n: c.ffn });
            let wd = weight(&mut g, p("ffn_down.weight"), h, c.ffn);
            x = linear(&mut g, "down", sw, wd, Some(x2), c.ffn, h, p("residual2"));
        }
        let fw = gain(&mut g, "output_norm.weight".into());
        let out = g.computed("hidden", n as usize);
        g.op("final_norm", Op::Norm { x, g: fw, b: None, y: out, rows: t, cols: h, eps: EPS });
        g.outputs = vec![out];
        let table = g.tensor("rope_table", (t * hd) as usize, Data::F32(super::rope::table(t, hd, pos0, ROPE_BASE)));
        for (_, op) in &mut g.ops {
            if let Op::Rope { table: t @ usize::MAX, .. } = op {
                *t = table;
            }
        }
        g
    }

    /// Report metadata; prefill and decode rows are rated in tokens.
    pub fn info(&self) -> CaseInfo {
        let c = self.config;
        let g = self.graph(0);
        let source = if self.weights.is_some() { "a GGUF file's" } else { "seeded" };
        let shape = format!("hidden {}, {} heads, {} KV heads, FFN {}, {source} weights in {}", c.hidden, c.heads, c.kv_heads, c.ffn, self.dtype);
        let (summary, rate) = match &self.phase {
            Phase::Prefill => (format!("{} prefill of {} tokens through {} layers ({shape})", self.model, self.ctx, c.layers), true),
            Phase::Decode => (format!("{} decode of 1 token after {} cached, {} layers ({shape})", self.model, self.ctx, c.layers), true),
            Phase::Op(op) => (format!("{} layer op `{op}` of a decode step after {} cached tokens ({shape})", self.model, self.ctx), false),
            Phase::PrefillOp(op) => (format!("{} layer op `{op}` of a prefill of {} tokens ({shape})", self.model, self.ctx), false),
        };
        CaseInfo {
            summary,
            dims: vec!["layers".into(), "ctx".into()],
            flops: g.flops(),
            bytes: g.bytes(),
            rate: rate.then(|| Rate { item: "token".into(), per_run: self.tokens() as f64 }),
            dispatches: Some(g.dispatches()),
        }
    }
}

impl DecoderCase {
    /// The seeded weights of this decoder (all its layers) as a llama GGUF file, the matrices in
    /// `ty` and the norms in F32, with Q and K interleaved as llama.cpp's converter writes them:
    /// the same model for llama.cpp, and a file of known content for tests.
    pub fn to_gguf(&self, seed: u64, ty: TensorType) -> Result<Vec<u8>, ModelError> {
        use super::gguf::Value;
        let c = self.config;
        let seeded = DecoderCase { dtype: Dtype::F32, weights: None, phase: Phase::Decode, ..self.clone() }.graph(seed);
        let meta = [
            ("general.architecture", Value::String("llama".into())),
            ("general.name", Value::String(self.model.clone())),
            ("llama.embedding_length", Value::Uint(c.hidden.into())),
            ("llama.feed_forward_length", Value::Uint(c.ffn.into())),
            ("llama.block_count", Value::Uint(c.layers.into())),
            ("llama.attention.head_count", Value::Uint(c.heads.into())),
            ("llama.attention.head_count_kv", Value::Uint(c.kv_heads.into())),
            ("llama.rope.freq_base", Value::Float(ROPE_BASE.into())),
            ("llama.attention.layer_norm_rms_epsilon", Value::Float(EPS.into())),
        ];
        let mut tensors = Vec::new();
        for (t, tensor) in seeded.tensors.iter().enumerate().filter(|(_, t)| t.name.ends_with(".weight")) {
            let mut values = seeded.values(t, None)?;
            let (k, rows) = (tensor.row, tensor.len / tensor.row);
            let heads = match &tensor.name {
                n if n.ends_with(".attn_q.weight") => c.heads,
                n if n.ends_with(".attn_k.weight") => c.kv_heads,
                _ => 0,
            } as usize;
            if heads > 0 {
                values = super::weights::permute(&values, heads, k);
            }
            let bad = |e: crate::quant::QuantError| ModelError::BadTensor { name: tensor.name.clone(), problem: e.to_string() };
            let (ty, dims, bytes) = match ty {
                _ if rows == 1 => (TensorType::F32, vec![k as u64], crate::wire::f32s_to_le_bytes(&values)),
                TensorType::Quant(f) => (ty, vec![k as u64, rows as u64], values.chunks(k).map(|r| f.quantize_row(r)).collect::<Result<Vec<_>, _>>().map_err(bad)?.concat()),
                TensorType::F16 => (ty, vec![k as u64, rows as u64], values.iter().flat_map(|&v| half::f16::from_f32(v).to_le_bytes()).collect()),
                _ => (TensorType::F32, vec![k as u64, rows as u64], crate::wire::f32s_to_le_bytes(&values)),
            };
            tensors.push((tensor.name.as_str(), dims, ty, bytes));
        }
        Ok(super::gguf::write(&meta, &tensors))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tiny(phase: Phase, ctx: u32) -> DecoderCase {
        let config = LlamaConfig { hidden: 64, heads: 8, kv_heads: 2, ffn: 96, layers: 2 };
        DecoderCase { model: "test".into(), config, phase, ctx, dtype: Dtype::F32, weights: None }
    }

    #[test]
    fn tinyllama_shape_is_valid_and_bad_shapes_are_named() {
        assert_eq!(TINYLLAMA.problem(), None);
        let bad = LlamaConfig { heads: 3, ..TINYLLAMA };
        assert!(bad.problem().unwrap().contains("3 heads"), "{:?}", bad.problem());
    }

    #[test]
    fn decode_after_prefill_equals_prefill_of_one_more_token_in_shape() {
        let g = tiny(Phase::Decode, 5).graph(1);
        assert_eq!(g.tensors[g.outputs[0]].len, 64);
        let p = tiny(Phase::Prefill, 6).graph(1);
        assert_eq!(p.tensors[p.outputs[0]].len, 6 * 64);
    }

    #[test]
    fn every_op_tag_slices_to_a_runnable_graph() {
        for op in OPS {
            for phase in [Phase::Op(op.into()), Phase::PrefillOp(op.into())] {
                let g = tiny(phase.clone(), 4).graph(1);
                assert!(!g.ops.is_empty(), "{phase:?}");
                let out = g.evaluate(None).unwrap();
                assert!(!out.is_empty() && out.iter().all(|v| v.is_finite()), "{phase:?}");
            }
        }
        // A prefill op runs every token of the prompt.
        assert_eq!(tiny(Phase::PrefillOp("qkv".into()), 4).graph(1).outputs.len(), 1);
        let q = |phase: Phase| tiny(phase, 4).graph(1).tensors.iter().find(|t| t.name == "blk.0.q").map(|t| t.len);
        assert_eq!(q(Phase::PrefillOp("qkv".into())), Some(4 * 64));
        assert_eq!(q(Phase::Op("qkv".into())), Some(64));
    }

    #[test]
    fn a_decode_layer_is_five_dispatches_and_prefill_fuses_only_its_matvecs() {
        // Decode: RMSNorm + Q, K, V; RoPE + KV writes + attention; o_proj (+ residual); RMSNorm +
        // gate_up (+ silu·up); down (+ residual). Then the final norm.
        assert_eq!(tiny(Phase::Decode, 4).graph(1).lower(None, crate::program::Caps::NONE).unwrap().steps.len(), 2 * 5 + 1);
        // What the report says is what the program dispatches.
        assert_eq!(tiny(Phase::Decode, 4).info().dispatches, Some(2 * 5 + 1));
        let tinyllama = DecoderCase { model: "tinyllama".into(), config: TINYLLAMA, phase: Phase::Decode, ctx: 128, dtype: Dtype::F32, weights: None };
        assert_eq!(tinyllama.info().dispatches, Some(22 * 5 + 1), "TinyLlama's decode: 5 a layer and the final norm");
        // A few rows are too few for matmul's blocks and run as matvecs, fused as in decode, but
        // the RoPE, KV writes and attention of several tokens stay four dispatches; rows enough to
        // fill the blocks (1024 here) fuse nothing and make gate, up and silu_mul three dispatches.
        assert_eq!(tiny(Phase::Prefill, 4).graph(1).lower(None, crate::program::Caps::NONE).unwrap().steps.len(), 2 * 9 + 1);
        assert_eq!(tiny(Phase::Prefill, 1024).graph(1).lower(None, crate::program::Caps::NONE).unwrap().steps.len(), 2 * 15 + 1);
        // A per-op case runs its op alone: Q, K and V (one input) still as one matvec, the rest unfused.
        for (op, steps) in [("attn_norm", 1), ("qkv", 1), ("rope", 2), ("attention", 1)] {
            assert_eq!(tiny(Phase::Op(op.into()), 4).graph(1).lower(None, crate::program::Caps::NONE).unwrap().steps.len(), steps, "{op}");
        }
        // Where the device has subgroups, decode's matvecs reduce through them (and say they need
        // them); prefill's matmuls have no reduction to change.
        let decode = tiny(Phase::Decode, 4).graph(1).lower(None, crate::program::Caps::SUBGROUPS).unwrap();
        assert_eq!(decode.features, vec!["subgroups".to_string()]);
        let matvecs: Vec<&str> = decode.shaders.iter().map(|s| s.label.as_str()).filter(|l| l.contains(": matvec ")).collect();
        assert!(!matvecs.is_empty() && matvecs.iter().all(|l| l.contains("-sg")), "{matvecs:?}");
        assert!(tiny(Phase::Prefill, 1024).graph(1).lower(None, crate::program::Caps::SUBGROUPS).unwrap().features.is_empty());
    }

    #[test]
    fn f16_weights_are_stored_in_half_the_bytes_and_the_reference_reads_them_rounded() {
        let f32_case = tiny(Phase::Decode, 4);
        let f16_case = DecoderCase { dtype: Dtype::F16, ..f32_case.clone() };
        let (g32, g16) = (f32_case.graph(3), f16_case.graph(3));
        let weights: Vec<usize> = (0..g16.tensors.len()).filter(|&t| g16.tensors[t].dtype == Dtype::F16).collect();
        // Seven linear weights a layer (q, k, v, o, gate, up, down), two layers.
        assert_eq!(weights.len(), 14);
        let saved: usize = weights.iter().map(|&t| 2 * g16.tensors[t].len).sum();
        assert_eq!(g32.bytes() - g16.bytes(), saved as f64);
        let program = g16.lower(None, crate::program::Caps::NONE).unwrap();
        assert_eq!(program.features, vec!["shader-f16".to_string()]);
        assert!(g32.lower(None, crate::program::Caps::NONE).unwrap().features.is_empty());
        let (a, b) = (g32.evaluate(None).unwrap(), g16.evaluate(None).unwrap());
        assert_ne!(a, b, "the f16 reference must read rounded weights");
        assert!(crate::check::cosine(&a, &b) > 0.999, "f16 weights stay close to f32's");
    }

    #[test]
    fn causal_prefill_rows_do_not_see_later_tokens() {
        // Row 0 of a 3-token prefill equals the output of a 1-token prefill (same seeded weights,
        // same first token), because causal attention hides tokens 1 and 2.
        let three = tiny(Phase::Prefill, 3).graph(9).evaluate(None).unwrap();
        let one = tiny(Phase::Prefill, 1).graph(9);
        // The 1-token graph seeds the same streams in the same order except the inputs' length.
        let one = one.evaluate(None).unwrap();
        assert_eq!(one.len(), 64);
        assert!(three[..64].iter().zip(&one).all(|(a, b)| (a - b).abs() < 1e-9));
    }
}

#[cfg(test)]
mod fusion_tests {
    use super::*;
    use crate::model::fuse::Dispatch;
    use crate::model::op::Op;

    fn decode(config: LlamaConfig) -> Graph {
        DecoderCase { model: "test".into(), config, phase: Phase::Decode, ctx: 3, dtype: crate::Dtype::F32, weights: None }.graph(1)
    }

    #[test]
    fn a_decode_layer_plans_as_norm_qkv_attention_o_proj_norm_gate_up_down() {
        let config = LlamaConfig { hidden: 64, heads: 8, kv_heads: 2, ffn: 96, layers: 1 };
        let g = decode(config);
        let plan = g.plan(crate::program::Caps::NONE);
        let kinds: Vec<&str> = plan
            .iter()
            .map(|d| match d {
                Dispatch::Op(i) => g.ops[*i].0,
                Dispatch::Matvecs { norm: Some(_), ops } if ops.len() == 3 => "norm+qkv",
                Dispatch::Matvecs { norm: Some(_), .. } => "norm+gate_up",
                Dispatch::Matvecs { .. } => "matvecs",
                Dispatch::DecodeAttention { .. } => "rope+kv_write+attention",
                Dispatch::Gemms { .. } => "gemms",
                Dispatch::Activated { .. } => "linear+gelu",
                Dispatch::Normed { .. } => "linear+norm",
            })
            .collect();
        assert_eq!(kinds, ["norm+qkv", "rope+kv_write+attention", "o_proj", "norm+gate_up", "down", "final_norm"]);
    }

    #[test]
    fn what_another_op_reads_or_the_run_returns_is_not_fused_away() {
        let config = LlamaConfig { hidden: 64, heads: 8, kv_heads: 2, ffn: 96, layers: 1 };
        // The attention norm's output is also a result: the norm must store it.
        let mut g = decode(config);
        let hn = g.ops.iter().find_map(|(tag, op)| match op {
            Op::Norm { y, .. } if *tag == "attn_norm" => Some(*y),
            _ => None,
        });
        g.outputs.push(hn.unwrap());
        assert!(matches!(g.plan(crate::program::Caps::NONE)[0], Dispatch::Op(0)), "{:?}", g.plan(crate::program::Caps::NONE));
        assert!(matches!(g.plan(crate::program::Caps::NONE)[1], Dispatch::Matvecs { norm: None, .. }));
        // A head dimension of 6 is no whole number of vec4s: RoPE, writes and attention stay apart.
        let odd = decode(LlamaConfig { hidden: 48, heads: 8, kv_heads: 2, ffn: 96, layers: 1 });
        assert!(!odd.plan(crate::program::Caps::NONE).iter().any(|d| matches!(d, Dispatch::DecodeAttention { .. })));
        // Every op is in exactly one dispatch, fused or not.
        for g in [&g, &odd] {
            let mut seen: Vec<usize> = g.plan(crate::program::Caps::NONE)
                .into_iter()
                .flat_map(|d| d.ops())
                .collect();
            seen.sort();
            assert_eq!(seen, (0..g.ops.len()).collect::<Vec<_>>());
        }
    }
}

#[cfg(test)]
mod gguf_tests {
    use super::*;
    use crate::quant::QuantFormat;

    fn case(dtype: Dtype) -> DecoderCase {
        let config = LlamaConfig { hidden: 64, heads: 4, kv_heads: 2, ffn: 96, layers: 2 };
        DecoderCase { model: "test".into(), config, phase: Phase::Decode, ctx: 3, dtype, weights: None }
    }

    /// The weight buffers of `case`'s program, by label, as the GPU gets them.
    fn weight_bytes(case: &DecoderCase, w: Option<&Weights>) -> Vec<(String, Vec<u8>)> {
        let p = case.graph(7).lower(w, crate::program::Caps::NONE).unwrap();
        p.buffers.iter().filter(|b| b.label.ends_with(".weight")).map(|b| (b.label.clone(), b.init.bytes().unwrap().into_owned())).collect()
    }

    #[test]
    fn a_gguf_of_the_seeded_weights_runs_the_same_decoder_down_to_the_blocks() {
        for (dtype, ty) in [(Dtype::F32, TensorType::F32), (Dtype::Q8_0, TensorType::Quant(QuantFormat::Q8_0)), (Dtype::Q4_0, TensorType::Quant(QuantFormat::Q4_0))] {
            let seeded = case(dtype);
            let w = Weights::parse(seeded.to_gguf(7, ty).unwrap()).unwrap();
            let from_file = DecoderCase { weights: Some("gguf".into()), ..seeded.clone() };
            from_file.check_weights(&w).unwrap();
            // Q and K come back in the order the RoPE expects, and quantized blocks quantize back
            // to themselves: the same program and the same reference.
            assert_eq!(weight_bytes(&from_file, Some(&w)), weight_bytes(&seeded, None), "{dtype}");
            assert_eq!(from_file.graph(7).evaluate(Some(&w)).unwrap(), seeded.graph(7).evaluate(None).unwrap(), "{dtype}");
            assert!(from_file.info().summary.contains("a GGUF file's weights in"), "{}", from_file.info().summary);
            assert_eq!(LlamaConfig::from_gguf(w.gguf().unwrap()).unwrap(), seeded.config);
        }
    }

    #[test]
    fn a_gguf_of_another_shape_is_refused_naming_the_tensor_or_key() {
        let file = Weights::parse(case(Dtype::F32).to_gguf(7, TensorType::F32).unwrap()).unwrap();
        let check = |config: LlamaConfig| DecoderCase { config, weights: Some("gguf".into()), ..case(Dtype::F32) }.check_weights(&file).unwrap_err().to_string();
        let c = case(Dtype::F32).config;
        let err = check(LlamaConfig { ffn: 128, ..c });
        assert!(err.contains("`blk.0.ffn_gate.weight`") && err.contains("[64, 96]") && err.contains("[64, 128]"), "{err}");
        let err = check(LlamaConfig { heads: 8, kv_heads: 4, ..c });
        assert!(err.contains("`llama.attention.head_count`") && err.contains("4 in the file"), "{err}");
        let err = check(LlamaConfig { layers: 3, ..c });
        assert!(err.contains("`blk.2.attn_norm.weight`"), "{err}");
        assert_eq!(DecoderCase { config: LlamaConfig { layers: 1, ..c }, weights: Some("gguf".into()), ..case(Dtype::F32) }.check_weights(&file), Ok(()), "a model's first layers run alone");
    }
}
