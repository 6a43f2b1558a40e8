//! CLIP-shaped pairs (`--model clip`, or `clip:key=number,…`): MiniLM beside a ViT as wide, both
//! at once, made of the two families' pieces; MiniLM's folder is served as for MiniLM alone.

use super::minilm::{self, encoder_files, encoder_passes, weights_dir};
use super::perception::vision_shape;
use super::{model_label, parse_shape, WorkloadError, Workloads};
use kernels::model::clip::ClipCase;
use kernels::model::perception::{PerceptionCase, VIT_S16};
use kernels::{CaseSpec, Dtype, Shape, Workload};
use std::path::Path;

/// The CLIP-shaped pair's name in `--model`.
pub const CLIP: &str = "clip";

/// The cases of the CLIP-shaped pair `model` (as written) in `dtype` with inputs from `seed`,
/// its text encoder made of MiniLM's options (`layers` going to the ViT), and MiniLM's files.
pub(super) fn cases(model: &str, text: &minilm::Options, seed: u64, dtype: Dtype) -> Result<Workloads, WorkloadError> {
    let dir = weights_dir(text.dir)?;
    let cases = clip_cases(model, &dir, text, seed, dtype)?;
    Ok(Workloads { cases, weights: encoder_files(&dir).into_iter().collect() })
}

/// CLIP-shaped pairs (`clip`, or `clip:key=number,…` with ViT's keys and `text_layers`): MiniLM
/// of `dir` beside a ViT as wide (ViT-S/16's shape by default), one pair per batch size and
/// sequence length; `--layers` applies to the ViT.
fn clip_cases(model: &str, dir: &Path, opts: &minilm::Options, seed: u64, dtype: Dtype) -> Result<Vec<CaseSpec>, WorkloadError> {
    let spec = model.split_once(':').map_or("", |(_, s)| s);
    let mut text_layers = 0;
    let (texts, vision): (Vec<&str>, Vec<&str>) = spec.split(',').partition(|p| p.trim_start().starts_with("text_layers"));
    parse_shape(model, &texts.join(","), &mut [("text_layers", &mut text_layers)])?;
    let config = vision_shape(model, &vision.join(","), VIT_S16, opts.layers)?;
    let name = model_label(CLIP, dtype);
    let mut cases = Vec::new();
    for text in encoder_passes(dir, opts.batches, opts.seqs, dtype, (text_layers > 0).then_some(text_layers))? {
        let vision = PerceptionCase { model: model_label("vit", dtype), config, batch: text.batch, dtype, op: None };
        let pair = ClipCase { model: name.clone(), text, vision };
        if let Some(problem) = pair.problem() {
            return Err(WorkloadError::BadShape { model: model.into(), problem });
        }
        cases.push(CaseSpec::of_workload(&name, Shape(vec![pair.text.batch, pair.text.seq]), seed, Workload::Clip(pair)));
    }
    Ok(cases)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::workload::minilm::MINILM;
    use crate::plan::workload::WorkloadArgs;

    /// A CLIP-shaped pair: MiniLM (cut to `text_layers`) beside a ViT as wide, one case per batch
    /// and length, two parts for a cold start; a ViT of another width is refused.
    #[test]
    fn clip_pairs_minilm_with_a_vit_as_wide() {
        let args = WorkloadArgs { model: vec!["clip:size=32,patch=8,layers=1,ffn=64,text_layers=2".into()], batch: vec![1, 2], seq: vec![8], ..WorkloadArgs::default() };
        let w = Workloads::build(&args, 1).unwrap();
        let ids: Vec<&str> = w.cases.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(ids, ["clip/1x8/seed=1", "clip/2x8/seed=1"]);
        assert!(w.weights.contains_key(MINILM));
        let Some(Workload::Clip(pair)) = &w.cases[1].workload else { panic!() };
        assert_eq!((pair.text.config.num_hidden_layers, pair.vision.config.layers, pair.vision.batch), (2, 1, 2));
        assert_eq!(w.cases[1].workload.as_ref().unwrap().parts(1).len(), 2);
        let rate = w.cases[1].info().unwrap().rate.unwrap();
        assert_eq!((rate.item.as_str(), rate.per_run), ("pair", 2.0));
        let narrow = WorkloadArgs { model: vec!["clip:size=32,patch=8,hidden=64,heads=4,layers=1,ffn=64".into()], ..args };
        assert!(Workloads::build(&narrow, 1).unwrap_err().to_string().contains("must equal the text encoder's 384"));
    }
}
