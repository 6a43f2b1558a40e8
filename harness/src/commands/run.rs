//! `harness run`: plans the suite's cases (or the replayed or resumed ones), models and user
//! kernels, then hands them to the pipeline, which serves the page, drives each browser and
//! platform in turn, checks every output, writes the reports and gates on a baseline.

use super::{journal, pipeline_settings};
use crate::cli::replay;
use crate::cli::run::RunArgs;
use crate::pipeline::{CaseFilter, Pipeline, Planned, Serve, Settings, Tuning};
use crate::plan::tuning;
use crate::plan::{reference, workload};
use anyhow::{Context, Result};
use kernels::{CaseSpec, Platform};
use std::process::ExitCode;
use std::sync::Arc;

/// `run`'s choice of cases per platform: the WASM CPU baseline has the catalogue kernels only.
pub const CATALOGUE_ON_WASM: CaseFilter = CaseFilter {
    keep: |platform, case| platform != Platform::Wasm || case.workload.is_none(),
    skipped: "it runs catalogue kernels only (models and user kernels run on webgpu and native)",
};

/// The cold-start cases of `cases` (`--cold-start`): each model's whole passes, `samples` fresh
/// pages each, with pipelines created the usual way and precompiled; a model of two parts (a
/// CLIP-shaped pair) also with its parts loaded at once. Your own ONNX files (`--onnx`) run on
/// onnxruntime-web only, which creates its own pipelines: they are not precompiled.
fn cold_starts(cases: Vec<CaseSpec>, samples: u32) -> Result<Vec<CaseSpec>> {
    let passes: Vec<CaseSpec> = cases.into_iter().filter(|c| c.workload.as_ref().is_some_and(|w| w.has_cold_start())).collect();
    if passes.is_empty() {
        anyhow::bail!("--cold-start measures models: add --model minilm (or vit, whisper, tinyllama) or --onnx FILE.onnx; catalogue kernels and user kernels have no cold start");
    }
    let mut cold = Vec::new();
    for case in passes {
        let parts = case.workload.as_ref().map_or(1, |w| w.parts(case.seed).len());
        let own = matches!(case.workload, Some(kernels::Workload::Onnx(_)));
        for parallel in [false, true].into_iter().take(if parts > 1 { 2 } else { 1 }) {
            for precompile in [false, true].into_iter().take(if own { 1 } else { 2 }) {
                cold.push(case.clone().cold_start(kernels::ColdStart { samples, precompile, parallel }));
            }
        }
    }
    Ok(cold)
}

/// Runs the plan `args` describe in every browser and platform asked for.
pub async fn exec(mut args: RunArgs) -> Result<ExitCode> {
    let journaled = journal(&args.pipeline)?;
    let replayed = match (args.replay.clone(), &journaled) {
        (Some(path), _) => replay::apply(&mut args, &path).with_context(|| format!("replaying {}", path.display()))?,
        (None, Some(j)) => {
            let shown = args.pipeline.output.resume.as_ref().map(|d| d.join(crate::output::journal::JOURNAL).display().to_string()).unwrap_or_default();
            replay::apply_report(&mut args, &j.started, &shown).with_context(|| format!("resuming {shown}"))?
        }
        (None, None) => Vec::new(),
    };
    let settings = settings(&args, pipeline_settings(&args.pipeline, &[crate::cli::values::PlatformArg::Webgpu], journaled)?);
    let pipeline = Pipeline::prepare(settings)?;
    pipeline.run(plan(&args, replayed)?).await
}

/// The shared settings with `run`'s own: the suite, tuning, WebNN device, TensorFlow.js, the
/// page bundle and which cases the WASM CPU runs.
/// `sampling` with what `run`'s own flags add: `--profile`, `--gpu-timer`, `--gpu-timer-cost`.
fn measuring(args: &RunArgs, sampling: kernels::Sampling) -> kernels::Sampling {
    kernels::Sampling { profile: args.profile, gpu_timer: args.gpu_timer.into(), timer_cost: args.gpu_timer_cost, ..sampling }
}

fn settings(args: &RunArgs, shared: Settings) -> Settings {
    let tuning = match args.tune {
        true => Tuning::Tune(args.tune_cache.clone()),
        false => Tuning::Cached(args.tune_cache.clone()),
    };
    Settings {
        suite: args.suite.into(),
        webnn_device: args.webnn_device.into(),
        no_tensor_cores: args.no_tensor_cores,
        gpu_kernels: args.gpu_kernels,
        sampling: measuring(args, shared.sampling),
        cpu_sampling: shared.cpu_sampling.map(|c| measuring(args, c)),
        tfjs_dir: args.tfjs_dir.clone(),
        ort_dir: args.ort_dir.clone(),
        transformers_dir: args.transformers_dir.clone(),
        tuning,
        serve: Serve { bundle: args.bundle.clone(), ..shared.serve.clone() },
        cases_for: CATALOGUE_ON_WASM,
        ..shared
    }
}

/// The cases to run (`replayed`, else the suite's and the models' and user kernels'), each
/// tuning variant, the roofline probes first and every repeat, with their references.
fn plan(args: &RunArgs, replayed: Vec<CaseSpec>) -> Result<Planned> {
    let (suite, seed) = (args.suite.into(), args.pipeline.seed);
    let filter = &args.pipeline.filter;
    let (cases, weights) = match replayed.is_empty() {
        true => {
            let workloads = workload::Workloads::build(&args.workloads, seed)?;
            // With a model or user kernel, the suite runs only where --filter names kernels.
            let mut cases = match workloads.cases.is_empty() || !filter.is_empty() {
                true => kernels::plan::build_cases(suite, filter, seed)?,
                false => Vec::new(),
            };
            cases.extend(workloads.cases);
            (cases, workloads.weights)
        }
        false => {
            let weights = workload::Workloads::weights_for(&replayed, &args.workloads.weights)?;
            (replayed, weights)
        }
    };
    let cases = match args.tune {
        true => tuning::expand(&cases).map_err(anyhow::Error::msg)?,
        false => cases,
    };
    let cases = match args.roofline {
        true => kernels::plan::roofline_first(suite, seed, cases),
        false => cases,
    };
    let cases = kernels::plan::repeated(cases, args.repeat);
    let cases = match args.cold_start {
        // --cold-start conflicts with --replay and --resume: replayed cases keep their own.
        Some(samples) => cold_starts(cases, samples)?,
        None => cases,
    };
    let references = Arc::new(reference::References::new(weights.clone(), reference::DiskCache::from_env()));
    Ok(Planned { cases, references, weights })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::workload::{WorkloadArgs, Workloads};

    #[test]
    fn cold_starts_are_each_model_pass_twice_without_its_ops() {
        let args = WorkloadArgs { model: vec!["vit:size=32,hidden=32,heads=4,layers=1,ffn=48".into()], batch: vec![1, 2], ..WorkloadArgs::default() };
        let cases = Workloads::build(&args, 1).unwrap().cases;
        assert!(cases.iter().any(|c| c.id.contains(".op.")));
        let ids: Vec<String> = cold_starts(cases, 4).unwrap().into_iter().inspect(|c| assert_eq!(c.cold.map(|c| c.samples), Some(4))).map(|c| c.id).collect();
        assert_eq!(ids, ["vit/1x5/seed=1/cold", "vit/1x5/seed=1/cold+precompile", "vit/2x5/seed=1/cold", "vit/2x5/seed=1/cold+precompile"]);
        assert!(cold_starts(kernels::plan::build_cases(kernels::Suite::Quick, &["add".into()], 1).unwrap(), 4).is_err());
    }
}
