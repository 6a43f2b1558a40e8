//! Perception encoders (`--model vit`, `whisper`, or either with `:key=number,…`): an image or an
//! audio window through a transformer encoder, with seeded weights, at each batch size, then each
//! op of the first layer alone.

use super::{model_label, parse_shape, WorkloadError, Workloads};
use kernels::model::perception::{Front, PerceptionCase, PerceptionConfig, PERCEPTION_OPS, VIT_B16, WHISPER_TINY};
use kernels::{CaseSpec, Dtype, Shape, Workload};

/// What the perception encoders' cases are made of, read from `harness run`'s arguments once.
pub(super) struct Options<'a> {
    /// `--batch`: images or audio windows per run.
    pub batches: &'a [u32],
    /// `--layers`: the encoder's layers to run, where given.
    pub layers: Option<u32>,
}

/// The cases of the perception encoder `model` (as written) in `dtype` with inputs from `seed`;
/// `None` when `model` is no perception encoder.
pub(super) fn cases(model: &str, opts: &Options, seed: u64, dtype: Dtype) -> Result<Option<Workloads>, WorkloadError> {
    let Some((name, config)) = perception_config(model, opts.layers)? else { return Ok(None) };
    Ok(Some(Workloads { cases: perception_cases(&name, config, opts.batches, seed, dtype), ..Workloads::default() }))
}

/// A perception encoder's name and shape from `--model` (`vit`, `whisper`, or either with
/// `:key=number,…`), with `--layers` applied; `None` for any other model.
fn perception_config(model: &str, layers: Option<u32>) -> Result<Option<(String, PerceptionConfig)>, WorkloadError> {
    let (name, spec) = model.split_once(':').unwrap_or((model, ""));
    let default = match name {
        "vit" => VIT_B16,
        "whisper" => WHISPER_TINY,
        _ => return Ok(None),
    };
    Ok(Some((name.to_string(), vision_shape(model, spec, default, layers)?)))
}

/// `default` with the keys `spec` sets (`size`, `patch`, `channels` or `mels`, `frames`, and
/// `hidden`, `heads`, `layers`, `ffn`) and `--layers` applied, checked; `model` as written.
pub(super) fn vision_shape(model: &str, spec: &str, default: PerceptionConfig, layers: Option<u32>) -> Result<PerceptionConfig, WorkloadError> {
    let mut c = default;
    let PerceptionConfig { front, hidden, heads, layers: l, ffn } = &mut c;
    let mut common = vec![("hidden", hidden), ("heads", heads), ("layers", l), ("ffn", ffn)];
    match front {
        Front::Image { size, patch, channels } => common.extend([("size", size), ("patch", patch), ("channels", channels)]),
        Front::Audio { mels, frames } => common.extend([("mels", mels), ("frames", frames)]),
    }
    parse_shape(model, spec, &mut common)?;
    if let Some(l) = layers {
        c.layers = l;
    }
    match c.problem() {
        Some(problem) => Err(WorkloadError::BadShape { model: model.into(), problem }),
        None => Ok(c),
    }
}

/// One case per batch size, then each op of the first layer alone at the smallest.
fn perception_cases(name: &str, config: PerceptionConfig, batches: &[u32], seed: u64, dtype: Dtype) -> Vec<CaseSpec> {
    let model = model_label(name, dtype);
    let case = |batch: u32, op: Option<&str>| {
        let label = op.map_or(model.clone(), |op| format!("{model}.op.{op}"));
        let p = PerceptionCase { model: model.clone(), config, batch, dtype, op: op.map(Into::into) };
        CaseSpec::of_workload(&label, Shape(vec![batch, config.tokens()]), seed, Workload::Perception(p))
    };
    let mut cases: Vec<CaseSpec> = batches.iter().map(|&b| case(b, None)).collect();
    if let Some(&smallest) = batches.iter().min() {
        cases.extend(PERCEPTION_OPS.iter().map(|op| case(smallest, Some(op))));
    }
    cases
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::workload::{f32_twin, WorkloadArgs};

    #[test]
    fn vit_and_whisper_take_their_defaults_or_a_shape_and_rate_their_items() {
        let (name, c) = perception_config("vit", None).unwrap().unwrap();
        assert_eq!((name.as_str(), c), ("vit", VIT_B16));
        let (_, c) = perception_config("whisper:frames=200,hidden=64,heads=4", Some(1)).unwrap().unwrap();
        assert_eq!((c.front, c.hidden, c.layers, c.ffn), (Front::Audio { mels: 80, frames: 200 }, 64, 1, 1536));
        assert!(perception_config("vit:mels=3", None).unwrap_err().to_string().contains("keys: hidden, heads, layers, ffn, size, patch, channels"));
        assert!(perception_config("vit:size=30", None).unwrap_err().to_string().contains("multiple of the patch"));
        assert!(perception_config("tinyllama", None).unwrap().is_none());
        let cases = perception_cases("vit", VIT_B16, &[8, 1], 1, Dtype::F16);
        assert_eq!(cases.len(), 2 + PERCEPTION_OPS.len());
        assert_eq!(cases[0].id, "vit-f16/8x197/seed=1");
        assert!(cases.iter().any(|c| c.id == "vit-f16.op.attention/1x197/seed=1"));
        let rate = cases[0].info().unwrap().rate.unwrap();
        assert_eq!((rate.item.as_str(), rate.per_run), ("image", 8.0));
        let (dtype, twin) = f32_twin(&cases[0]).unwrap();
        assert_eq!((dtype, twin.id.as_str()), (Dtype::F16, "vit/8x197/seed=1"));
        let w = Workloads::build(&WorkloadArgs { model: vec!["whisper:frames=64,hidden=32,heads=4,layers=1,ffn=48,vit:size=32,hidden=32,heads=4,layers=1,ffn=48".into()], batch: vec![1], ..WorkloadArgs::default() }, 1).unwrap();
        let ids: Vec<&str> = w.cases.iter().map(|c| c.id.as_str()).filter(|id| !id.contains(".op.")).collect();
        assert_eq!(ids, ["whisper/1x32/seed=1", "vit/1x5/seed=1"]);
    }
}
