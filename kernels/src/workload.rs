//! What a case runs when it is not one catalogue kernel: a transformer model's forward pass
//! (a text encoder with real weights, a decoder, an image or audio encoder with seeded ones), or
//! a user's own WGSL kernel.
//! Every workload becomes one [`Program`], so the page, the native worker and the reference all
//! start from the same description.

use crate::bench::BenchCase;
use crate::check::CheckRule;
use crate::info::CaseInfo;
use crate::model::clip::ClipCase;
use crate::model::decoder::DecoderCase;
use crate::model::encoder::EncoderCase;
use crate::model::graph::Graph;
use crate::model::perception::PerceptionCase;
use crate::model::weights::Weights;
use crate::model::ModelError;
use crate::program::Program;
use crate::own_model::OwnModel;
use crate::user::UserKernel;
use serde::{Deserialize, Serialize};

/// A case's workload beyond the kernel catalogue.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum Workload {
    /// A BERT-family encoder (MiniLM) over tokenised sentences, with weights from safetensors.
    Encoder(EncoderCase),
    /// A Llama-style decoder with seeded weights: prefill, one decode step, or one op of a layer.
    Decoder(DecoderCase),
    /// An image (ViT) or audio (Whisper) encoder with seeded weights: a batch through every layer,
    /// or one op of the first.
    Perception(PerceptionCase),
    /// A CLIP-shaped pair: a text encoder and an image encoder, side by side.
    Clip(ClipCase),
    /// A user's WGSL kernel from a manifest.
    User(UserKernel),
    /// A bench of a user's crate (`harness bench`): it runs in the user's own code, not as a
    /// program of harness's.
    Bench(BenchCase),
    /// A user's own ONNX file (`harness run --onnx`), run by onnxruntime-web.
    Onnx(OwnModel),
}

impl Workload {
    /// The summary, dimension names, cost model and rate of this workload.
    pub fn info(&self) -> CaseInfo {
        match self {
            Workload::Encoder(e) => e.info(),
            Workload::Decoder(d) => d.info(),
            Workload::Perception(p) => p.info(),
            Workload::Clip(c) => c.info(),
            Workload::User(u) => u.info(),
            Workload::Bench(b) => b.info(),
            Workload::Onnx(o) => o.info(),
        }
    }

    /// The GPU program. `weights`: the file [`weights_key`](Workload::weights_key) names, if any.
    /// `caps`: what the device offers that the lowering may use (see [`Graph::lower`](crate::model::graph::Graph::lower)).
    pub fn program(&self, seed: u64, weights: Option<&Weights>, caps: crate::program::Caps) -> Result<Program, ModelError> {
        match self {
            Workload::User(u) => Ok(u.program(seed)),
            Workload::Bench(b) => Err(ModelError::UnknownKernel(format!("{} (a bench runs in its own crate's code, not as a program of harness's)", b.label()))),
            Workload::Onnx(o) => Err(ModelError::UnknownKernel(format!("{} (an ONNX file runs on onnxruntime-web, not as a program of harness's)", o.file))),
            Workload::Encoder(e) => e.graph().lower(weights, caps),
            Workload::Decoder(d) => d.graph(seed).lower(weights, caps),
            Workload::Perception(p) => p.graph(seed).lower(None, caps),
            Workload::Clip(c) => c.graph(seed).lower(weights, caps),
        }
    }

    /// The model graph of an encoder, decoder or perception case (what [`program`](Workload::program)
    /// lowers and an ONNX export writes); `None` for a user's kernel or bench.
    pub fn graph(&self, seed: u64) -> Option<Graph> {
        match self {
            Workload::Encoder(e) => Some(e.graph()),
            Workload::Decoder(d) => Some(d.graph(seed)),
            Workload::Perception(p) => Some(p.graph(seed)),
            Workload::Clip(c) => Some(c.graph(seed)),
            Workload::User(_) | Workload::Bench(_) | Workload::Onnx(_) => None,
        }
    }

    /// Whether it is one of harness's models (what [`graph`](Workload::graph) gives a graph of).
    pub fn is_model(&self) -> bool {
        matches!(self, Workload::Encoder(_) | Workload::Decoder(_) | Workload::Perception(_) | Workload::Clip(_))
    }

    /// Whether `--cold-start` measures it: a whole pass of one of harness's models, or a user's
    /// own ONNX file (not a Hugging Face folder's pipeline).
    pub fn has_cold_start(&self) -> bool {
        (self.is_model() && !self.one_op()) || matches!(self, Workload::Onnx(o) if o.pipeline.is_none())
    }

    /// Whether it is one op of a model's layer alone (a per-op case), not a whole pass.
    pub fn one_op(&self) -> bool {
        match self {
            Workload::Encoder(e) => e.op.is_some(),
            Workload::Decoder(d) => matches!(d.phase, crate::model::decoder::Phase::Op(_) | crate::model::decoder::Phase::PrefillOp(_)),
            Workload::Perception(p) => p.op.is_some(),
            Workload::Clip(_) | Workload::User(_) | Workload::Bench(_) | Workload::Onnx(_) => false,
        }
    }

    /// The graphs a page loads one by one, or all at once, for a cold start: a CLIP-shaped pair's
    /// two encoders, or the model's one graph; empty for a user's kernel or bench.
    pub fn parts(&self, seed: u64) -> Vec<Graph> {
        match self {
            Workload::Clip(c) => c.parts(seed).into(),
            _ => self.graph(seed).into_iter().collect(),
        }
    }

    /// How the output is checked against the reference.
    pub fn check(&self) -> CheckRule {
        match self {
            Workload::Encoder(e) => {
                CheckRule::Cosine { row: e.row_len(), min: crate::model::MIN_COSINE, tol: crate::model::tolerance(e.dtype) }
            }
            Workload::Decoder(d) => CheckRule::Cosine { row: d.row_len(), min: crate::model::MIN_COSINE, tol: crate::model::tolerance(d.dtype) },
            Workload::Perception(p) => CheckRule::Cosine { row: p.row_len(), min: crate::model::MIN_COSINE, tol: crate::model::tolerance(p.dtype) },
            Workload::Clip(c) => CheckRule::Cosine { row: c.row_len(), min: crate::model::MIN_COSINE, tol: crate::model::tolerance(c.text.dtype) },
            Workload::User(u) => CheckRule::Elementwise(u.tolerance),
            Workload::Bench(b) => CheckRule::Elementwise(b.reference.unwrap_or(crate::bench::DEFAULT_TOLERANCE)),
            Workload::Onnx(o) => o.check,
        }
    }

    /// The weights file this workload needs, by the key the harness serves it under.
    pub fn weights_key(&self) -> Option<&str> {
        match self {
            Workload::Encoder(e) => Some(&e.weights),
            Workload::Clip(c) => Some(&c.text.weights),
            Workload::Decoder(d) => d.weights.as_deref(),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dtype::Dtype;
    use crate::model::decoder::{LlamaConfig, Phase};

    #[test]
    fn an_f32_model_whose_weights_were_rounded_to_f16_fails_its_check() {
        // Its cosine is above 0.9999999, so only the per-element bound can catch it.
        let config = LlamaConfig { hidden: 64, heads: 8, kv_heads: 2, ffn: 96, layers: 2 };
        for (phase, ctx) in [(Phase::Decode, 4), (Phase::Prefill, 5), (Phase::Op("gate_up".into()), 4)] {
            let f32_case = DecoderCase { model: "test".into(), config, phase, ctx, dtype: Dtype::F32, weights: None };
            let rounded = DecoderCase { dtype: Dtype::F16, ..f32_case.clone() }.graph(3).evaluate(None).unwrap();
            let rule = Workload::Decoder(f32_case.clone()).check();
            let v = crate::check::check(&rounded, &f32_case.graph(3).evaluate(None).unwrap(), rule);
            assert!(!v.passed && v.min_cosine.unwrap() > 0.9999999, "{:?}: {v:?}", f32_case.phase);
        }
    }
}
