//! A CLIP-shaped pair of encoders: a text encoder (MiniLM, real weights) beside an image encoder
//! (a ViT as wide, seeded weights), run together. What makes it a model of its own is loading:
//! a multimodal app loads two encoders, one after the other or at once (`--cold-start`).

use super::encoder::EncoderCase;
use super::graph::Graph;
use super::perception::PerceptionCase;
use crate::info::{CaseInfo, Rate};
use serde::{Deserialize, Serialize};

/// Name prefixes of the two encoders' tensors in the pair's graph, as CLIP's checkpoints have them.
const PREFIXES: [&str; 2] = ["text_model.", "vision_model."];

/// A batch of sentences through the text encoder and as many images through the image encoder.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClipCase {
    /// Model name in reports (`clip`).
    pub model: String,
    /// The text encoder's case.
    pub text: EncoderCase,
    /// The image encoder's case.
    pub vision: PerceptionCase,
}

impl ClipCase {
    /// Why this pair cannot run as one case, if it cannot: both encoders' output rows are checked
    /// alike, so they must be as wide.
    pub fn problem(&self) -> Option<String> {
        let (text, vision) = (self.text.config.hidden_size, self.vision.config.hidden);
        (text != vision).then(|| format!("the image encoder's hidden {vision} must equal the text encoder's {text}, so every output row is checked alike"))
    }

    /// The two encoders' graphs, each alone: what a page loads separately.
    pub fn parts(&self, seed: u64) -> [Graph; 2] {
        [self.text.graph(), self.vision.graph(seed)]
    }

    /// Both encoders as one graph: the text encoder's outputs, then the image encoder's.
    pub fn graph(&self, seed: u64) -> Graph {
        let [text, vision] = self.parts(seed);
        Graph::union(vec![(PREFIXES[0], text), (PREFIXES[1], vision)])
    }

    /// Values per output row: a hidden state of either encoder.
    pub fn row_len(&self) -> usize {
        self.text.config.hidden_size as usize
    }

    /// Report metadata: one run encodes `batch` sentence–image pairs.
    pub fn info(&self) -> CaseInfo {
        let (text, vision) = (self.text.info(), self.vision.info());
        CaseInfo {
            summary: format!("{}: a CLIP-shaped pair, {} beside {}", self.model, text.summary, vision.summary),
            dims: vec!["batch".into(), "seq".into()],
            flops: text.flops + vision.flops,
            bytes: text.bytes + vision.bytes,
            rate: Some(Rate { item: "pair".into(), per_run: f64::from(self.text.batch) }),
            dispatches: text.dispatches.zip(vision.dispatches).map(|(a, b)| a + b),
        }
    }
}
