//! The reference of a Hugging Face folder's pipeline: tract-onnx runs the ONNX file natively on
//! the tokenizer's inputs ([`crate::plan::onnx::reference`]), then the pipeline's own
//! post-processing is done here, in f64: for feature-extraction, the mean of the output's rows
//! over the attention mask, L2-normalised, as transformers.js's `mean_pooling` and
//! `normalize(2, -1)` do it.

use crate::plan::onnx::reference as onnx;
use kernels::hf_pipeline::{HfPipeline, Task};
use kernels::own_model::{Fill, OwnModel};
use std::path::Path;

/// What made the reference, as reports name it.
pub fn engine(pipeline: &HfPipeline) -> String {
    format!("{}, then {}", onnx::ENGINE, pipeline.task.post_processing())
}

/// What the pipeline returns for `own`'s sentences (its ONNX file at `path`), computed natively.
pub fn outputs(path: &Path, own: &OwnModel, seed: u64) -> Result<Vec<f64>, String> {
    let pipeline = own.pipeline.as_ref().ok_or_else(|| format!("{} is no Hugging Face folder's", own.file))?;
    let values = onnx::each_output(path, own, seed)?;
    let hidden = own.outputs.iter().position(|o| o.name == pipeline.output).and_then(|n| values.get(n)).ok_or_else(|| format!("{}: the reference engine gave no output `{}`", own.file, pipeline.output))?;
    match pipeline.task {
        Task::FeatureExtraction => {
            // The tokenizer's mask, as the model was fed it.
            let mask: Vec<f64> = match own.inputs.iter().find(|i| i.name == "attention_mask").map(|i| &i.fill) {
                Some(Fill::Values { values }) => values.iter().map(|&m| m as f64).collect(),
                _ => return Err(format!("{}: no tokenizer's `attention_mask` to pool over", own.file)),
            };
            let (rows, width) = (pipeline.texts.len().max(1), pipeline.width as usize);
            if hidden.len() != mask.len() * width {
                return Err(format!("{}: output `{}` has {} values, not [sentences, tokens, {width}] ({})", own.file, pipeline.output, hidden.len(), mask.len() * width));
            }
            Ok(kernels::model::cpu::mean_pool(hidden, &mask, mask.len() / rows, width))
        }
    }
}
