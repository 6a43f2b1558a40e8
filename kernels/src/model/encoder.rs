//! A BERT-family sentence encoder (all-MiniLM-L6-v2 and its kin): token, position and type
//! embeddings, post-norm layers of multi-head self-attention and a GELU feed-forward, then mean
//! pooling over each sentence's tokens and L2 normalisation, as sentence-transformers does.

use super::graph::{Data, Graph};
use super::op::{Op, T};
use crate::dtype::Dtype;
use crate::info::{CaseInfo, Rate};
use serde::{Deserialize, Serialize};

/// The shape of a BERT encoder, with the field names of Hugging Face's `config.json`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct BertConfig {
    /// Width of every token vector.
    pub hidden_size: u32,
    /// Attention heads.
    pub num_attention_heads: u32,
    /// Encoder layers.
    pub num_hidden_layers: u32,
    /// Width of the feed-forward layer.
    pub intermediate_size: u32,
    /// Token vocabulary.
    pub vocab_size: u32,
    /// Longest sequence the position table covers.
    pub max_position_embeddings: u32,
    /// Token types (segments).
    #[serde(default = "one")]
    pub type_vocab_size: u32,
    /// LayerNorm epsilon.
    #[serde(default = "bert_eps")]
    pub layer_norm_eps: f32,
}

fn one() -> u32 {
    1
}

fn bert_eps() -> f32 {
    1e-12
}

impl BertConfig {
    /// Why this configuration cannot run, if it cannot.
    pub fn problem(&self) -> Option<String> {
        let BertConfig { hidden_size: h, num_attention_heads: heads, .. } = *self;
        if heads == 0 || h % heads != 0 {
            return Some(format!("hidden_size {h} is not a multiple of num_attention_heads {heads}"));
        }
        None
    }
}

/// One encoder case: `batch` sentences, each padded (or cut) to `seq` token ids.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EncoderCase {
    /// Model name in reports (`minilm`).
    pub model: String,
    /// The model's shape.
    pub config: BertConfig,
    /// The key the weights are served under.
    pub weights: String,
    /// Prefix of every tensor name in the weights (`bert.` in some checkpoints, empty in
    /// sentence-transformers').
    #[serde(default)]
    pub prefix: String,
    /// Sentences.
    pub batch: u32,
    /// Tokens per sentence, padding included.
    pub seq: u32,
    /// `batch × seq` token ids, each sentence padded with 0.
    pub ids: Vec<u32>,
    /// Real tokens of each sentence; attention and pooling see only these.
    pub lens: Vec<u32>,
    /// How the linear layers' weights are stored (embeddings, norms and activations stay f32).
    #[serde(default)]
    pub dtype: Dtype,
    /// One op of the pass alone (its first occurrence: the first layer's), timed by itself to
    /// show where the pass's time goes; `None`: the whole pass.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub op: Option<String>,
    /// The sentences the ids were tokenised from, one per batch row: what a run from text
    /// ([`crate::CaseSpec::from_text`]) tokenises again each time. Empty where not needed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub texts: Vec<String>,
}

/// The ops of an encoder pass, in order, each a per-op case of its own (`minilm.op.attention`).
pub const ENCODER_OPS: [&str; 9] = ["embed", "layernorm", "qkv", "attention", "attn_out", "ffn_up", "gelu", "ffn_down", "pool"];

impl EncoderCase {
    /// The run's graph: the whole pass, or its [`op`](EncoderCase::op) alone (inputs it would
    /// have computed are seeded instead).
    pub fn graph(&self) -> Graph {
        let full = self.full_graph();
        match &self.op {
            Some(tag) => full.only(tag),
            None => full,
        }
    }

    /// Values per output row, for the cosine check: a hidden state (an FFN row for the FFN's
    /// own ops; a sentence's embedding for the pass and `pool`).
    pub fn row_len(&self) -> usize {
        let hidden = self.config.hidden_size as usize;
        if self.op.is_none() || self.op.as_deref() == Some("pool") {
            return hidden;
        }
        let g = self.graph();
        let out = g.outputs.first().map_or(0, |&o| g.tensors[o].len);
        let tokens = (self.batch * self.seq) as usize;
        if out % tokens == 0 { (out / tokens).max(1) } else { hidden }
    }

    /// The forward pass; the output is `batch` L2-normalised embeddings.
    fn full_graph(&self) -> Graph {
        let c = &self.config;
        let (h, ffn, heads) = (c.hidden_size, c.intermediate_size, c.num_attention_heads);
        let rows = self.batch * self.seq;
        let n = (rows * h) as usize;
        let mut g = Graph::default();
        let w = |g: &mut Graph, name: &str, len: u32| g.tensor(format!("{}{name}", self.prefix), len as usize, Data::Named(format!("{}{name}", self.prefix)));
        let ids = g.tensor("ids", self.ids.len(), Data::U32(self.ids.clone()));
        let lens = g.tensor("lens", self.lens.len(), Data::U32(self.lens.clone()));
        g.inputs.push(ids);
        let word = w(&mut g, "embeddings.word_embeddings.weight", c.vocab_size * h);
        let pos = w(&mut g, "embeddings.position_embeddings.weight", c.max_position_embeddings * h);
        let ty = w(&mut g, "embeddings.token_type_embeddings.weight", c.type_vocab_size * h);
        let e = g.computed("embedded", n);
        g.op("embed", Op::Embed { ids, word, pos, ty, y: e, rows, seq: self.seq, hidden: h });
        let mut x = layer_norm(&mut g, &w, "embeddings.LayerNorm", e, rows, c);
        for l in 0..c.num_hidden_layers {
            let p = |s: &str| format!("encoder.layer.{l}.{s}");
            // `add`: the residual, added as the layer stores its output (before the LayerNorm).
            let linear = |g: &mut Graph, name: &str, x: T, add: Option<T>, k: u32, out: u32, tag: &'static str| {
                let wt = w(g, &format!("{name}.weight"), out * k);
                let wt = g.store_as(wt, self.dtype, k as usize);
                let b = w(g, &format!("{name}.bias"), out);
                let y = g.computed(format!("{name}.out"), (rows * out) as usize);
                g.op(tag, Op::Linear { x, w: wt, b: Some(b), add, y, m: rows, k, n: out });
                y
            };
            let q = linear(&mut g, &p("attention.self.query"), x, None, h, h, "qkv");
            let k = linear(&mut g, &p("attention.self.key"), x, None, h, h, "qkv");
            let v = linear(&mut g, &p("attention.self.value"), x, None, h, h, "qkv");
            let a = g.computed(p("attention.context"), n);
            g.op("attention", Op::Attention {
                q, k, v, lens, y: a, rows, seq: self.seq, heads, kv_heads: heads, hd: h / heads, kv_len: self.seq, causal: false, pos0: 0,
            });
            let r = linear(&mut g, &p("attention.output.dense"), a, Some(x), h, h, "attn_out");
            let x1 = layer_norm(&mut g, &w, &p("attention.output.LayerNorm"), r, rows, c);
            let up = linear(&mut g, &p("intermediate.dense"), x1, None, h, ffn, "ffn_up");
            let act = g.computed(p("intermediate.gelu"), (rows * ffn) as usize);
            g.op("gelu", Op::Gelu { x: up, y: act, n: rows * ffn });
            let r2 = linear(&mut g, &p("output.dense"), act, Some(x1), ffn, h, "ffn_down");
            x = layer_norm(&mut g, &w, &p("output.LayerNorm"), r2, rows, c);
        }
        let out = g.computed("embeddings", (self.batch * h) as usize);
        g.op("pool", Op::Pool { x, lens, y: out, batch: self.batch, seq: self.seq, hidden: h });
        g.outputs = vec![out];
        g
    }

    /// Report metadata: one run embeds `batch` sentences.
    pub fn info(&self) -> CaseInfo {
        let g = self.graph();
        let c = &self.config;
        let shape = format!("{} layers, hidden {}, {} heads, {} weights", c.num_hidden_layers, c.hidden_size, c.num_attention_heads, self.dtype);
        let summary = match &self.op {
            None => format!(
                "{} sentence encoder ({shape}), {} sentence(s) padded to {} tokens, mean-pooled and L2-normalised",
                self.model, self.batch, self.seq
            ),
            Some(op) => format!("{} op `{op}` of the encoder's first layer, {} sentence(s) of {} tokens ({shape})", self.model, self.batch, self.seq),
        };
        CaseInfo {
            summary,
            dims: vec!["batch".into(), "seq".into()],
            flops: g.flops(),
            bytes: g.bytes(),
            rate: self.op.is_none().then(|| Rate { item: "sentence".into(), per_run: self.batch as f64 }),
            dispatches: Some(g.dispatches()),
        }
    }
}

/// `LayerNorm(x)` with the weights under `name`.
fn layer_norm(g: &mut Graph, w: &impl Fn(&mut Graph, &str, u32) -> T, name: &str, x: T, rows: u32, c: &BertConfig) -> T {
    let h = c.hidden_size;
    let gamma = w(g, &format!("{name}.weight"), h);
    let beta = w(g, &format!("{name}.bias"), h);
    let y = g.computed(format!("{name}.out"), (rows * h) as usize);
    g.op("layernorm", Op::Norm { x, g: gamma, b: Some(beta), y, rows, cols: h, eps: c.layer_norm_eps });
    y
}

/// Pads or cuts each sentence's ids to `seq` (keeping the final `[SEP]` when cutting, as
/// tokenizers' truncation does) and returns `(ids, lens)` for an [`EncoderCase`].
pub fn pack(sentences: &[Vec<u32>], seq: u32) -> (Vec<u32>, Vec<u32>) {
    let seq = seq as usize;
    let mut ids = Vec::with_capacity(sentences.len() * seq);
    let mut lens = Vec::with_capacity(sentences.len());
    for s in sentences {
        let mut row: Vec<u32> = s.iter().copied().take(seq).collect();
        if s.len() > seq && seq > 0 {
            row[seq - 1] = *s.last().expect("non-empty");
        }
        lens.push(row.len() as u32);
        row.resize(seq, 0);
        ids.extend(row);
    }
    (ids, lens)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packing_pads_and_cuts_keeping_sep() {
        let (ids, lens) = pack(&[vec![101, 7, 102], vec![101, 1, 2, 3, 4, 102]], 4);
        assert_eq!(ids, vec![101, 7, 102, 0, 101, 1, 2, 102]);
        assert_eq!(lens, vec![3, 4]);
    }

    #[test]
    fn q_k_and_v_run_as_one_gemm_where_together_they_fill_the_gpu() {
        let minilm = BertConfig {
            hidden_size: 384, num_attention_heads: 12, num_hidden_layers: 6, intermediate_size: 1536,
            vocab_size: 30522, max_position_embeddings: 512, type_vocab_size: 2, layer_norm_eps: 1e-12,
        };
        let gemms = |batch: u32, seq: u32| {
            let (ids, lens) = (vec![1; (batch * seq) as usize], vec![seq; batch as usize]);
            let case = EncoderCase { model: "minilm".into(), config: minilm, weights: String::new(), prefix: String::new(), batch, seq, ids, lens, dtype: Dtype::F32, op: None, texts: vec![] };
            let g = case.graph();
            let plan = g.plan(crate::program::Caps::NONE);
            let fused: Vec<Vec<&str>> = plan.iter().filter(|d| matches!(d, super::super::fuse::Dispatch::Gemms { .. })).map(|d| d.ops().iter().map(|&i| g.ops[i].0).collect()).collect();
            assert!(fused.iter().all(|tags| tags == &["qkv"; 3]), "{fused:?}");
            (fused.len(), g.dispatches())
        };
        // 8 × 128 tokens: 96 blocks of 64×64 a projection alone, 288 together; one dispatch a layer
        // instead of three (69 in all before; 57 before the GELU went into the MLP's first GEMM, 51
        // before the split FFN down's sum took the LayerNorm after it).
        assert_eq!(gemms(8, 128), (6, 45));
        // One short sentence: a matvec per row, as before; on a CPU, Q, K and V as one GEMM of
        // small blocks, and the GELU in the MLP's first.
        assert_eq!(gemms(1, 16).0, 0);
        let (ids, lens) = (vec![1; 16], vec![16]);
        let short = EncoderCase { model: "minilm".into(), config: minilm, weights: String::new(), prefix: String::new(), batch: 1, seq: 16, ids, lens, dtype: Dtype::F32, op: None, texts: vec![] }.graph();
        assert_eq!((short.dispatches(), short.dispatches_on(crate::program::Caps { cpu: true, ..crate::program::Caps::NONE })), (63, 45));
    }
}
