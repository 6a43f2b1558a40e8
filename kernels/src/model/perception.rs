//! Perception encoders with seeded weights: a ViT (images, ViT-B/16's shape by default) and
//! Whisper's audio encoder (log-mel spectrograms, Whisper-tiny's shape). Each is a front end that
//! turns its input into token rows, then the same pre-norm transformer layers (LayerNorm,
//! multi-head self-attention, LayerNorm, a GELU MLP, each with its residual) and a final
//! LayerNorm; the output is every token's final hidden state.
//!
//! - Image: the patches are gathered as rows ([`Op::Patches`]) so that the patch embedding (a
//!   conv2d whose stride is its kernel) is one GEMM; a class token goes first, then position
//!   embeddings are added.
//! - Audio: two conv1d of kernel 3 (the second of stride 2, halving the frames), each an
//!   [`Op::Unfold`] and a GEMM followed by GELU; then Whisper's fixed sinusoidal positions.

use super::graph::{Data, Graph};
use super::op::{Op, T};
use crate::dtype::Dtype;
use crate::info::{CaseInfo, Rate};
use serde::{Deserialize, Serialize};

/// What an encoder's input is and how it becomes tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", tag = "kind")]
pub enum Front {
    /// `channels × size × size` images cut into `patch × patch` patches, a class token first.
    Image {
        /// Pixels a side.
        size: u32,
        /// Pixels a patch side.
        patch: u32,
        /// Colour channels.
        channels: u32,
    },
    /// `mels × frames` log-mel spectrograms, [`FRAMES_PER_SECOND`] frames a second.
    Audio {
        /// Mel bins.
        mels: u32,
        /// Frames (Whisper's 30 s window is 3000).
        frames: u32,
    },
}

/// Spectrogram frames a second of audio (Whisper's 10 ms hop).
pub const FRAMES_PER_SECOND: u32 = 100;

/// The shape of a perception encoder.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PerceptionConfig {
    /// The input and its front end.
    pub front: Front,
    /// Width of every token vector.
    pub hidden: u32,
    /// Attention heads.
    pub heads: u32,
    /// Encoder layers.
    pub layers: u32,
    /// Width of the MLP.
    pub ffn: u32,
}

/// ViT-B/16 at 224×224: 196 patches and a class token, 12 layers of width 768.
pub const VIT_B16: PerceptionConfig = PerceptionConfig { front: Front::Image { size: 224, patch: 16, channels: 3 }, hidden: 768, heads: 12, layers: 12, ffn: 3072 };

/// ViT-S/16 at 224×224: ViT-B/16's patches and tokens, 12 layers of width 384 (the image encoder
/// of the CLIP-shaped pair, as wide as MiniLM).
pub const VIT_S16: PerceptionConfig = PerceptionConfig { front: Front::Image { size: 224, patch: 16, channels: 3 }, hidden: 384, heads: 6, layers: 12, ffn: 1536 };

/// Whisper-tiny's encoder over a 30 s window: 80 mel bins × 3000 frames, 1500 tokens after the
/// convolutions, 4 layers of width 384.
pub const WHISPER_TINY: PerceptionConfig = PerceptionConfig { front: Front::Audio { mels: 80, frames: 3000 }, hidden: 384, heads: 6, layers: 4, ffn: 1536 };

/// LayerNorm epsilon (both models').
const EPS: f32 = 1e-5;

impl PerceptionConfig {
    /// Why this configuration cannot run, if it cannot.
    pub fn problem(&self) -> Option<String> {
        let PerceptionConfig { hidden, heads, layers, ffn, .. } = *self;
        let front = match self.front {
            Front::Image { size, patch, channels } => [size, patch, channels],
            Front::Audio { mels, frames } => [mels, frames, 1],
        };
        if [hidden, heads, layers, ffn].iter().chain(&front).any(|&v| v == 0) {
            return Some("every size must be positive".into());
        }
        if hidden % heads != 0 {
            return Some(format!("hidden {hidden} must split into {heads} heads"));
        }
        if let Front::Image { size, patch, .. } = self.front {
            if size % patch != 0 {
                return Some(format!("image size {size} must be a multiple of the patch {patch}"));
            }
        }
        let max = super::wgsl::MAX_KEYS;
        (self.tokens() > max).then(|| format!("{} tokens an item; attention holds at most {max}", self.tokens()))
    }

    /// Tokens an item becomes.
    pub fn tokens(&self) -> u32 {
        match self.front {
            Front::Image { size, patch, .. } => (size / patch.max(1)).pow(2) + 1,
            Front::Audio { frames, .. } => Op::unfolded_len(Op::unfolded_len(frames, 3, 1, 1), 3, 2, 1),
        }
    }
}

/// The ops of a pass, in order, each a per-op case of its own (`vit.op.attention`): `embed` is
/// the front end (patches and their GEMM; or both convolutions with their GELUs).
pub const PERCEPTION_OPS: [&str; 9] = ["embed", "positions", "layernorm", "qkv", "attention", "attn_out", "ffn_up", "gelu", "ffn_down"];

/// One perception case: `batch` images or spectrograms through the encoder.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PerceptionCase {
    /// Model name in reports (`vit`, `whisper`).
    pub model: String,
    /// The model's shape.
    pub config: PerceptionConfig,
    /// Images or spectrograms a run.
    pub batch: u32,
    /// How the linear layers' weights are stored (activations stay f32).
    #[serde(default)]
    pub dtype: Dtype,
    /// One op of the pass alone (the first layer's), timed by itself; `None`: the whole pass.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub op: Option<String>,
}

impl PerceptionCase {
    /// The run's graph; weights and inputs come from `seed`.
    pub fn graph(&self, seed: u64) -> Graph {
        let full = self.full_graph(seed);
        match &self.op {
            Some(tag) => full.only(tag),
            None => full,
        }
    }

    /// Values per output row: a hidden state (an MLP row for the MLP's own ops).
    pub fn row_len(&self) -> usize {
        let hidden = self.config.hidden as usize;
        let Some(_) = &self.op else { return hidden };
        let g = self.graph(0);
        let out = g.outputs.first().map_or(0, |&o| g.tensors[o].len);
        let rows = (self.batch * self.config.tokens()) as usize;
        if out % rows == 0 && out > 0 { out / rows } else { hidden }
    }

    fn full_graph(&self, seed: u64) -> Graph {
        let c = self.config;
        let (h, batch) = (c.hidden, self.batch);
        let mut g = Graph { seed, ..Graph::default() };
        // Weights uniform in ±1/√fan_in keep activations near unit scale, as trained ones are.
        let linear = |g: &mut Graph, tag: &'static str, x: T, name: &str, add: Option<T>, [m, k, n]: [u32; 3], bias: bool| {
            let a = 1.0 / (k as f32).sqrt();
            let w = g.seeded(format!("{name}.weight"), (n * k) as usize, -a, a);
            let w = g.store_as(w, self.dtype, k as usize);
            let b = bias.then(|| g.seeded(format!("{name}.bias"), n as usize, -0.1, 0.1));
            let y = g.computed(format!("{name}.out"), (m * n) as usize);
            g.op(tag, Op::Linear { x, w, b, add, y, m, k, n });
            y
        };
        let gelu = |g: &mut Graph, tag: &'static str, x: T, name: String, n: u32| {
            let y = g.computed(name, n as usize);
            g.op(tag, Op::Gelu { x, y, n });
            y
        };
        let tokens = c.tokens();
        let rows = batch * tokens;
        let names = Names::of(&c.front);
        let x = match c.front {
            Front::Image { size, patch, channels } => {
                let (per, k) = ((size / patch).pow(2), channels * patch * patch);
                let image = g.seeded("pixel_values", (batch * channels * size * size) as usize, -1.0, 1.0);
                g.inputs.push(image);
                let cols = g.computed("patches", (batch * per * k) as usize);
                g.op("embed", Op::Patches { x: image, y: cols, batch, channels, size, patch });
                let e = linear(&mut g, "embed", cols, "embeddings.patch_embeddings.projection", None, [batch * per, k, h], true);
                let cls = g.seeded("embeddings.cls_token", h as usize, -1.0, 1.0);
                let pos = g.seeded("embeddings.position_embeddings", (tokens * h) as usize, -0.5, 0.5);
                let y = g.computed("embeddings", (rows * h) as usize);
                g.op("positions", Op::Positions { x: e, pos, cls: Some(cls), y, batch, seq: per, hidden: h });
                y
            }
            Front::Audio { mels, frames } => {
                let mel = g.seeded("input_features", (batch * mels * frames) as usize, -1.0, 1.0);
                g.inputs.push(mel);
                let conv = |g: &mut Graph, x: T, name: &str, [channels, len, stride]: [u32; 3], channels_last: bool| {
                    let out_len = Op::unfolded_len(len, 3, stride, 1);
                    let cols = g.computed(format!("{name}.unfolded"), (batch * out_len * channels * 3) as usize);
                    g.op("embed", Op::Unfold { x, y: cols, batch, channels, len, kernel: 3, stride, pad: 1, channels_last });
                    let y = linear(g, "embed", cols, name, None, [batch * out_len, channels * 3, h], true);
                    (gelu(g, "embed", y, format!("{name}.gelu"), batch * out_len * h), out_len)
                };
                let (x, len) = conv(&mut g, mel, "conv1", [mels, frames, 1], false);
                let (x, len) = conv(&mut g, x, "conv2", [h, len, 2], true);
                let pos = g.tensor("embed_positions.weight", (len * h) as usize, Data::F32(sinusoids(len, h)));
                let y = g.computed("embeddings", (rows * h) as usize);
                g.op("positions", Op::Positions { x, pos, cls: None, y, batch, seq: len, hidden: h });
                y
            }
        };
        let norm = |g: &mut Graph, x: T, name: String| {
            let gain = g.seeded(format!("{name}.weight"), h as usize, 0.8, 1.2);
            let bias = g.seeded(format!("{name}.bias"), h as usize, -0.1, 0.1);
            let y = g.computed(format!("{name}.out"), (rows * h) as usize);
            g.op("layernorm", Op::Norm { x, g: gain, b: Some(bias), y, rows, cols: h, eps: EPS });
            y
        };
        let lens = g.tensor("lens", batch as usize, Data::U32(vec![tokens; batch as usize]));
        let mut x = x;
        for l in 0..c.layers {
            let p = |s: &str| format!("{}{l}.{s}", names.layer);
            let hn = norm(&mut g, x, p(names.norm1));
            let q = linear(&mut g, "qkv", hn, &p(names.q), None, [rows, h, h], true);
            // Whisper's key projection has no bias.
            let k = linear(&mut g, "qkv", hn, &p(names.k), None, [rows, h, h], names.k_bias);
            let v = linear(&mut g, "qkv", hn, &p(names.v), None, [rows, h, h], true);
            let a = g.computed(p("attention"), (rows * h) as usize);
            g.op("attention", Op::Attention {
                q, k, v, lens, y: a, rows, seq: tokens, heads: c.heads, kv_heads: c.heads, hd: h / c.heads, kv_len: tokens, causal: false, pos0: 0,
            });
            let x1 = linear(&mut g, "attn_out", a, &p(names.o), Some(x), [rows, h, h], true);
            let hn = norm(&mut g, x1, p(names.norm2));
            let up = linear(&mut g, "ffn_up", hn, &p(names.up), None, [rows, h, c.ffn], true);
            let act = gelu(&mut g, "gelu", up, p("gelu"), rows * c.ffn);
            x = linear(&mut g, "ffn_down", act, &p(names.down), Some(x1), [rows, c.ffn, h], true);
        }
        let out = norm(&mut g, x, names.last.into());
        g.outputs = vec![out];
        g
    }

    /// Report metadata: one run encodes `batch` images, or `batch` windows of audio.
    pub fn info(&self) -> CaseInfo {
        let g = self.graph(0);
        let c = self.config;
        let shape = format!("{} layers, hidden {}, {} heads, MLP {}, seeded weights in {}", c.layers, c.hidden, c.heads, c.ffn, self.dtype);
        let (input, item, per_item) = match c.front {
            Front::Image { size, patch, channels } => (format!("{size}×{size}×{channels} image(s) in {patch}×{patch} patches"), "image", 1.0),
            Front::Audio { mels, frames } => (format!("{mels}×{frames} log-mel spectrogram(s) through two conv1d"), "audio second", f64::from(frames) / f64::from(FRAMES_PER_SECOND)),
        };
        let summary = match &self.op {
            None => format!("{} encoder ({shape}): {} {input}, {} tokens each", self.model, self.batch, c.tokens()),
            Some(op) => format!("{} op `{op}` of the encoder's first layer, {} {input} ({shape})", self.model, self.batch),
        };
        CaseInfo {
            summary,
            dims: vec!["batch".into(), "tokens".into()],
            flops: g.flops(),
            bytes: g.bytes(),
            rate: self.op.is_none().then(|| Rate { item: item.into(), per_run: f64::from(self.batch) * per_item }),
            dispatches: Some(g.dispatches()),
        }
    }
}

/// The tensor names of each model, as Hugging Face's checkpoints have them.
struct Names {
    layer: &'static str,
    norm1: &'static str,
    q: &'static str,
    k: &'static str,
    k_bias: bool,
    v: &'static str,
    o: &'static str,
    norm2: &'static str,
    up: &'static str,
    down: &'static str,
    last: &'static str,
}

impl Names {
    fn of(front: &Front) -> Names {
        match front {
            Front::Image { .. } => Names {
                layer: "encoder.layer.",
                norm1: "layernorm_before",
                q: "attention.attention.query",
                k: "attention.attention.key",
                k_bias: true,
                v: "attention.attention.value",
                o: "attention.output.dense",
                norm2: "layernorm_after",
                up: "intermediate.dense",
                down: "output.dense",
                last: "layernorm",
            },
            Front::Audio { .. } => Names {
                layer: "layers.",
                norm1: "self_attn_layer_norm",
                q: "self_attn.q_proj",
                k: "self_attn.k_proj",
                k_bias: false,
                v: "self_attn.v_proj",
                o: "self_attn.out_proj",
                norm2: "final_layer_norm",
                up: "fc1",
                down: "fc2",
                last: "layer_norm",
            },
        }
    }
}

/// Whisper's positions: `length × channels`, sines of `channels/2` timescales from 1 to 10⁴,
/// then their cosines (`sinusoids` in openai/whisper's model.py).
fn sinusoids(length: u32, channels: u32) -> Vec<f32> {
    let half = (channels / 2) as usize;
    let step = (10_000f64).ln() / (half.max(2) - 1) as f64;
    let mut out = Vec::with_capacity((length * channels) as usize);
    for t in 0..length as usize {
        let scaled = |i: usize| t as f64 * (-step * i as f64).exp();
        out.extend((0..half).map(|i| scaled(i).sin() as f32));
        out.extend((0..half).map(|i| scaled(i).cos() as f32));
        out.extend(std::iter::repeat_n(0.0, channels as usize - 2 * half));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tiny(front: Front) -> PerceptionCase {
        let config = PerceptionConfig { front, hidden: 32, heads: 4, layers: 2, ffn: 48 };
        PerceptionCase { model: "test".into(), config, batch: 2, dtype: Dtype::F32, op: None }
    }

    #[test]
    fn a_union_of_graphs_computes_what_its_parts_compute_alone_under_prefixed_names() {
        let (vit, whisper) = (tiny(Front::Image { size: 16, patch: 8, channels: 3 }), tiny(Front::Audio { mels: 8, frames: 16 }));
        let parts = [vit.graph(5), whisper.graph(5)];
        let alone: Vec<f64> = parts.iter().flat_map(|g| g.evaluate(None).unwrap()).collect();
        let union = Graph::union(vec![("vision_model.", parts[0].clone()), ("audio_model.", parts[1].clone())]);
        assert_eq!(union.evaluate(None).unwrap(), alone, "seeded tensors keep their streams");
        assert_eq!((union.inputs.len(), union.outputs.len()), (2, 2));
        assert!(union.tensors[union.inputs[1]].name.starts_with("audio_model."));
        assert_eq!(union.dispatches(), parts[0].dispatches() + parts[1].dispatches());
        assert!(union.lower(None, crate::program::Caps::NONE).is_ok());
    }

    #[test]
    fn the_default_shapes_are_vit_b16_and_whisper_tiny() {
        assert_eq!((VIT_B16.problem(), VIT_B16.tokens()), (None, 197));
        assert_eq!((WHISPER_TINY.problem(), WHISPER_TINY.tokens()), (None, 1500));
        let bad = PerceptionConfig { front: Front::Image { size: 30, patch: 16, channels: 3 }, ..VIT_B16 };
        assert!(bad.problem().unwrap().contains("multiple of the patch"));
        let long = PerceptionConfig { front: Front::Audio { mels: 80, frames: 5000 }, ..WHISPER_TINY };
        assert!(long.problem().unwrap().contains("2500 tokens"), "{:?}", long.problem());
    }

    #[test]
    fn q_k_and_v_run_as_one_gemm() {
        let gemms = |config: PerceptionConfig, batch: u32| {
            let g = PerceptionCase { model: "test".into(), config, batch, dtype: Dtype::F32, op: None }.graph(1);
            g.plan(crate::program::Caps::NONE).iter().filter(|d| matches!(d, super::super::fuse::Dispatch::Gemms { ops } if ops.len() == 3)).count()
        };
        // Whisper-tiny's key projection has no bias: it joins with zeros for one.
        assert_eq!((gemms(WHISPER_TINY, 1), gemms(WHISPER_TINY, 8)), (4, 4));
        // ViT-B/16 at batch 1: 144 blocks of 64×64 together, K split in 3 (as each alone).
        assert_eq!((gemms(VIT_B16, 1), gemms(VIT_B16, 8)), (12, 12));
        // The browsers' end-to-end test's Whisper: 2 × 144 rows of 64.
        let small = PerceptionConfig { front: Front::Audio { mels: 16, frames: 288 }, hidden: 64, heads: 4, layers: 1, ffn: 64 };
        assert_eq!(gemms(small, 2), 1);
    }

    #[test]
    fn every_gelu_is_stored_by_the_gemm_before_it() {
        let fused = |config: PerceptionConfig, batch: u32| {
            let g = PerceptionCase { model: "test".into(), config, batch, dtype: Dtype::F32, op: None }.graph(1);
            let gelus = g.ops.iter().filter(|(_, op)| matches!(op, Op::Gelu { .. })).count();
            let activated: Vec<(&str, &str)> = g.plan(crate::program::Caps::NONE).iter().filter_map(|d| match *d {
                super::super::fuse::Dispatch::Activated { linear, gelu } => Some((g.ops[linear].0, g.ops[gelu].0)),
                _ => None,
            }).collect();
            (gelus, activated.len(), activated.iter().filter(|&&tags| tags == ("ffn_up", "gelu")).count(), g.dispatches())
        };
        // Whisper's two convolutions (as GEMMs over unfolded frames) and each layer's MLP; ViT's
        // MLPs, K whole at batch 8 and split at batch 1 (the split's sum takes the GELU).
        assert_eq!(fused(WHISPER_TINY, 1), (6, 6, 4, 39));
        assert_eq!(fused(VIT_B16, 8), (12, 12, 12, 89));
        assert_eq!(fused(VIT_B16, 1), (12, 12, 12, 113));
    }

    #[test]
    fn with_tensor_cores_every_vec4_gemm_runs_on_them_in_the_same_dispatches() {
        use crate::catalog::matmul::subgroup_matrix::FEATURE;
        use crate::program::{Caps, Program};
        for (config, batch) in [(WHISPER_TINY, 1), (VIT_B16, 8), (VIT_B16, 1)] {
            let g = PerceptionCase { model: "test".into(), config, batch, dtype: Dtype::F32, op: None }.graph(1);
            let plain = g.lower(None, Caps::NONE).unwrap();
            let tensor = g.lower(None, Caps { subgroup_matrix: true, ..Caps::NONE }).unwrap();
            let label = |p: &Program, i: usize| p.shaders[p.steps[i].shader].label.clone();
            let on = |p: &Program| (0..p.steps.len()).filter(|&i| label(p, i).contains(" on subgroup matrices")).collect::<Vec<_>>();
            let blocked = (0..plain.steps.len()).filter(|&i| ["matmul bm64-bn64-bk16-tm4-tn4-v4", "matmul bm32-bn32-bk16-tm4-tn4-v4"].iter().any(|b| label(&plain, i).contains(b))).collect::<Vec<_>>();
            assert!(!blocked.is_empty() && on(&tensor) == blocked, "{batch}: {:?} of {blocked:?}", on(&tensor));
            assert!(on(&plain).is_empty());
            // The same dispatches and bindings; a GEMM's grid changes only with its block.
            assert_eq!(tensor.steps.len(), plain.steps.len());
            for (i, (a, b)) in tensor.steps.iter().zip(&plain.steps).enumerate() {
                assert_eq!(a.bindings.len(), b.bindings.len(), "{batch}: {}", label(&tensor, i));
                let same_grid = !blocked.contains(&i) || label(&tensor, i).contains("64x64") && label(&plain, i).contains("bm64-bn64");
                assert!(!same_grid || a.workgroups == b.workgroups, "{batch}: {} {:?} {:?}", label(&tensor, i), a.workgroups, b.workgroups);
                if !blocked.contains(&i) {
                    assert_eq!(label(&tensor, i), label(&plain, i));
                }
            }
            let count = |block: &str| on(&tensor).iter().filter(|&&i| label(&tensor, i).contains(block)).count();
            // In 128×128 blocks (chunks of K included: subgroup_matrix::large): Whisper at batch 1, its
            // first convolution (72 blocks), QKV (108) and FFN down (36 in 6 chunks); ViT-B/16 at
            // batch 8, the patch embedding and every projection (QKV 234 blocks, FFN up 312, the
            // 768-wide ones 78 in 3 chunks); at batch 1 QKV alone (36 in 3 chunks).
            assert_eq!(count("128x128"), match (config.hidden, batch) { (384, 1) => 1 + 4 + 4, (768, 8) => 1 + 4 * 12, _ => 12 }, "{batch}");
            // Whisper's attention output at batch 1 (32×32 blocks plain) in 64×64 blocks.
            let from_small = blocked.iter().filter(|&&i| label(&plain, i).contains("bm32-bn32")).count();
            assert_eq!(from_small, if (config.hidden, batch) == (384, 1) { 4 } else { 0 }, "{batch}");
            assert_eq!(count("128x128") + count("64x64"), blocked.len());
            assert!(tensor.features.iter().any(|f| f == FEATURE) && tensor.features.iter().any(|f| f == "shader-f16"));
            assert!(!plain.features.iter().any(|f| f == FEATURE));
        }
    }

    #[test]
    fn a_split_gemms_sum_normalizes_the_residual_stream_after_it() {
        let normed = |config: PerceptionConfig, batch: u32| {
            let g = PerceptionCase { model: "test".into(), config, batch, dtype: Dtype::F32, op: None }.graph(1);
            let mut linears = std::collections::BTreeMap::new();
            for d in g.plan(crate::program::Caps::NONE) {
                if let super::super::fuse::Dispatch::Normed { linear, norm } = d {
                    assert!(matches!(g.ops[norm].1, Op::Norm { .. }), "{:?}", g.ops[norm]);
                    *linears.entry(g.ops[linear].0).or_insert(0) += 1;
                }
            }
            linears.into_iter().collect::<Vec<_>>()
        };
        // ViT-B/16's attention output and FFN down (both split at batch 1 and 8) before each
        // LayerNorm but the first; Whisper's FFN down at batch 1 (its 384-deep attention output
        // never splits), nothing at batch 8, where no layer splits.
        assert_eq!(normed(VIT_B16, 1), [("attn_out", 12), ("ffn_down", 12)]);
        assert_eq!(normed(VIT_B16, 8), [("attn_out", 12), ("ffn_down", 12)]);
        assert_eq!(normed(WHISPER_TINY, 1), [("ffn_down", 4)]);
        assert_eq!(normed(WHISPER_TINY, 8), []);
    }

    #[test]
    fn a_pass_outputs_every_token_s_hidden_state_and_rates_its_items() {
        let vit = tiny(Front::Image { size: 8, patch: 4, channels: 3 });
        let out = vit.graph(1).evaluate(None).unwrap();
        assert_eq!(out.len(), 2 * 5 * 32);
        assert!(out.iter().all(|v| v.is_finite()));
        assert_eq!(vit.info().rate.unwrap().per_run, 2.0);
        let whisper = tiny(Front::Audio { mels: 6, frames: 20 });
        assert_eq!(whisper.config.tokens(), 10);
        assert_eq!(whisper.graph(1).evaluate(None).unwrap().len(), 2 * 10 * 32);
        let rate = whisper.info().rate.unwrap();
        assert_eq!((rate.item.as_str(), rate.per_run), ("audio second", 0.4));
    }

    #[test]
    fn every_op_tag_slices_to_a_runnable_graph() {
        for front in [Front::Image { size: 8, patch: 4, channels: 3 }, Front::Audio { mels: 6, frames: 20 }] {
            for op in PERCEPTION_OPS {
                let case = PerceptionCase { op: Some(op.into()), ..tiny(front) };
                let g = case.graph(1);
                assert!(!g.ops.is_empty(), "{front:?} {op}");
                let out = g.evaluate(None).unwrap();
                assert!(!out.is_empty() && out.iter().all(|v| v.is_finite()), "{front:?} {op}");
                assert_eq!(out.len() % case.row_len(), 0, "{front:?} {op}");
            }
        }
    }

    /// The front ends' gathers by hand: a patch's columns run over channel, then row, then
    /// column of the patch; a convolution's window is zero-padded at both ends.
    #[test]
    fn patches_and_windows_gather_what_a_convolution_reads() {
        let mut v = vec![(0..2 * 4 * 4).map(f64::from).collect::<Vec<f64>>(), Vec::new()];
        super::super::cpu::eval(&Op::Patches { x: 0, y: 1, batch: 1, channels: 2, size: 4, patch: 2 }, &mut v);
        // Patch (0, 1) is row 1: channel 0's pixels (0,2),(0,3),(1,2),(1,3), then channel 1's.
        assert_eq!(v[1][8..16], [2.0, 3.0, 6.0, 7.0, 18.0, 19.0, 22.0, 23.0]);
        let mut v = vec![vec![1.0, 2.0, 3.0, 4.0, 5.0], Vec::new()];
        super::super::cpu::eval(&Op::Unfold { x: 0, y: 1, batch: 1, channels: 1, len: 5, kernel: 3, stride: 2, pad: 1, channels_last: false }, &mut v);
        assert_eq!(v[1], [0.0, 1.0, 2.0, 2.0, 3.0, 4.0, 4.0, 5.0, 0.0]);
        assert_eq!(sinusoids(2, 4), [0.0, 0.0, 1.0, 1.0, 1.0f64.sin() as f32, 1e-4f64.sin() as f32, 1.0f64.cos() as f32, 1e-4f64.cos() as f32]);
    }
}
