//! Transformer models as GPU programs: a model is a [`graph::Graph`] of [`op::Op`]s over named
//! tensors, lowered to WGSL dispatches ([`wgsl`]) and evaluated in f64 on the CPU ([`cpu`]) as
//! the reference. [`encoder`] builds a BERT/MiniLM encoder over real weights ([`weights`]),
//! [`decoder`] a Llama-style decoder over seeded ones or a GGUF file's ([`gguf`]), [`perception`]
//! a ViT and Whisper's audio encoder over seeded ones, [`clip`] a text and an image encoder
//! side by side.

pub mod clip;
pub mod cpu;
pub mod decoder;
pub mod encoder;
pub mod fuse;
pub mod gguf;
pub mod graph;
pub mod onnx;
pub mod op;
pub mod perception;
pub mod rope;
pub mod weights;
pub mod wgsl;

/// Least cosine similarity between a model's output rows (embeddings, hidden states) and the
/// f64 reference's for the case to pass.
pub const MIN_COSINE: f64 = 0.999;

/// How far each element of a model's output may stray from the f64 reference, beside the cosine:
/// `abs` is in units of the reference row's RMS. The bound is what tells an f32 model whose
/// weights were silently rounded to f16 (3e-4 to 3e-3 of the RMS in the tests, at a cosine above
/// 0.9999999) from a right one (1e-5 on the H100 after 22 layers). RoPE reads its cosines and
/// sines from a table computed on the CPU ([`rope`]): WGSL's own `sin` and `cos`, which SwiftShader
/// computes 2e-4 off within the spec's bounds, failed this bound on legal arithmetic. f16 and quantized weights get the same bound:
/// the reference reads them as stored (rounded, or quantized and dequantized), and activations
/// stay f32 in both.
pub fn tolerance(_dtype: crate::dtype::Dtype) -> crate::check::Tolerance {
    crate::check::Tolerance { abs: 2e-4, rel: 0.0 }
}

/// Why a model could not be built or run.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum ModelError {
    /// The weights file cannot be read in the format its first bytes claim.
    #[error("not a {format} file: {problem}")]
    BadWeights {
        /// `safetensors` or `GGUF`.
        format: &'static str,
        /// What is wrong.
        problem: String,
    },
    /// A GGUF file's metadata says it holds another model than the one asked for.
    #[error("GGUF metadata `{key}`: {problem}")]
    Metadata {
        /// The key.
        key: String,
        /// What the file says, and what was asked for.
        problem: String,
    },
    /// A tensor the model needs is missing from the weights.
    #[error("the weights have no tensor `{0}`; are they this model's (a BERT checkpoint for MiniLM, llama.cpp's names for a llama)?")]
    MissingTensor(String),
    /// A tensor has the wrong size or type.
    #[error("weights tensor `{name}`: {problem}")]
    BadTensor {
        /// The tensor.
        name: String,
        /// What is wrong with it.
        problem: String,
    },
    /// The plan names a kernel this build does not have.
    #[error("unknown kernel `{0}` (page and harness differ in version)")]
    UnknownKernel(String),
    /// The model needs weights and none were given.
    #[error("this model needs its weights (--weights DIR)")]
    NoWeights,
}
