//! What a case runs when it is not one catalogue kernel: a transformer model's forward pass
//! (an encoder with real weights, a decoder with seeded ones), or a user's own WGSL kernel.
//! Every workload becomes one [`Program`], so the page, the native worker and the reference all
//! start from the same description.

use crate::check::CheckRule;
use crate::info::CaseInfo;
use crate::model::decoder::DecoderCase;
use crate::model::encoder::EncoderCase;
use crate::model::weights::Weights;
use crate::model::ModelError;
use crate::program::Program;
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
    /// A user's WGSL kernel from a manifest.
    User(UserKernel),
}

impl Workload {
    /// The summary, dimension names, cost model and rate of this workload.
    pub fn info(&self) -> CaseInfo {
        match self {
            Workload::Encoder(e) => e.info(),
            Workload::Decoder(d) => d.info(),
            Workload::User(u) => u.info(),
        }
    }

    /// The GPU program. `weights` are the encoder's safetensors; other workloads take none.
    /// `subgroups`: whether the device has them (see [`Graph::lower`](crate::model::graph::Graph::lower)).
    pub fn program(&self, seed: u64, weights: Option<&Weights>, subgroups: bool) -> Result<Program, ModelError> {
        match self {
            Workload::Encoder(e) => e.graph().lower(weights, subgroups),
            Workload::Decoder(d) => d.graph(seed).lower(None, subgroups),
            Workload::User(u) => Ok(u.program(seed)),
        }
    }

    /// How the output is checked against the reference.
    pub fn check(&self) -> CheckRule {
        match self {
            Workload::Encoder(e) => {
                CheckRule::Cosine { row: e.config.hidden_size as usize, min: crate::model::MIN_COSINE, tol: crate::model::tolerance(e.dtype) }
            }
            Workload::Decoder(d) => CheckRule::Cosine { row: d.row_len(), min: crate::model::MIN_COSINE, tol: d.tolerance() },
            Workload::User(u) => CheckRule::Elementwise(u.tolerance),
        }
    }

    /// The weights file this workload needs, by the key the harness serves it under.
    pub fn weights_key(&self) -> Option<&str> {
        match self {
            Workload::Encoder(e) => Some(&e.weights),
            _ => None,
        }
    }
}
