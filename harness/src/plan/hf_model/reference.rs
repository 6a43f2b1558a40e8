//! The reference of a Hugging Face folder's pipeline: tract-onnx runs the ONNX file natively on
//! the tokenizer's inputs ([`crate::plan::onnx::reference`]), then the pipeline's own
//! post-processing is done here, in f64: for feature-extraction, the mean of the output's rows
//! over the attention mask, L2-normalised, as transformers.js's `mean_pooling` and
//! `normalize(2, -1)` do it; for image-classification, each image's logits through softmax, every
//! label's score in label-id order (transformers.js's `softmax` and `topk` over all labels); for
//! automatic-speech-recognition, each clip's frames' logits as they are.

use crate::plan::onnx::reference as onnx;
use kernels::hf_pipeline::{HfPipeline, Task};
use kernels::own_model::{Fill, OwnModel};
use std::path::Path;

/// What made the reference, as reports name it.
pub fn engine(pipeline: &HfPipeline) -> String {
    format!("{}, then {}", onnx::ENGINE, pipeline.task.post_processing())
}

/// What the pipeline returns for `own`'s sentences or images (its ONNX file at `path`), computed
/// natively.
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
        Task::ImageClassification => {
            let (images, labels) = (own.batch() as usize, pipeline.width as usize);
            if hidden.len() != images * labels {
                return Err(format!("{}: output `{}` has {} values, not [images, labels] ({images} × {labels})", own.file, pipeline.output, hidden.len()));
            }
            Ok(softmax_rows(hidden, labels))
        }
        Task::SpeechRecognition => {
            let vocab = pipeline.width as usize;
            if vocab == 0 || hidden.len() % vocab != 0 {
                return Err(format!("{}: output `{}` has {} values, not [clips, frames, {vocab}]", own.file, pipeline.output, hidden.len()));
            }
            Ok(hidden.clone())
        }
    }
}

/// Each row of `width` of `logits` through softmax, in f64.
pub fn softmax_rows(logits: &[f64], width: usize) -> Vec<f64> {
    logits
        .chunks(width.max(1))
        .flat_map(|row| {
            let max = row.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            let exps: Vec<f64> = row.iter().map(|v| (v - max).exp()).collect();
            let sum: f64 = exps.iter().sum();
            exps.into_iter().map(move |e| e / sum)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn softmax_rows_sum_to_one_each_and_keep_their_order() {
        let scores = softmax_rows(&[0.0, 0.0, 1000.0, 1.0, 2.0, 3.0], 3);
        assert_eq!(&scores[..3], [0.0, 0.0, 1.0], "no overflow: the row's greatest is taken off first");
        let e = [1.0f64, 1.0f64.exp(), 2.0f64.exp()];
        let sum: f64 = e.iter().sum();
        for (got, want) in scores[3..].iter().zip(e.map(|v| v / sum)) {
            assert!((got - want).abs() < 1e-15, "{got} {want}");
        }
        for row in scores.chunks(3) {
            assert!((row.iter().sum::<f64>() - 1.0).abs() < 1e-12);
        }
    }
}
