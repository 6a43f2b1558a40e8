//! `harness bench`: builds a user's bench target natively and for wasm32, lists its benches and
//! computes their references natively, then hands the cases to the pipeline `run` uses: the page
//! runs the target's WASM in place of the catalogue's, and `--platform native` runs the native
//! bench binary.

use super::{journal, pipeline_settings};
use crate::cli::bench::BenchArgs;
use crate::cli::replay;
use crate::cli::values::PlatformArg;
use crate::measure::bundle;
use crate::measure::controller::CaseLimits;
use crate::pipeline::{CaseFilter, NativeRunner, Pipeline, Planned, Serve, Settings};
use crate::plan::bench::BenchTarget;
use crate::plan::reference::References;
use anyhow::{Context, Result};
use kernels::bench::BenchKind;
use kernels::Platform;
use std::collections::HashMap;
use std::process::ExitCode;
use std::sync::Arc;

/// `bench`'s choice of cases per platform: CPU benches on wasm and native, GPU benches and the
/// roofline's probes on webgpu and native.
pub const BY_KIND: CaseFilter = CaseFilter {
    keep: |platform, case| match case.workload {
        Some(_) => platform.unsupported(case).is_none(),
        None => matches!(platform, Platform::Webgpu | Platform::Native),
    },
    skipped: "it has no benches of its kind (CPU benches run on wasm and native, GPU benches on webgpu and native)",
};

/// Builds, lists or runs the bench target `args` names.
pub async fn exec(mut args: BenchArgs) -> Result<ExitCode> {
    let journaled = journal(&args.pipeline)?;
    if let Some(j) = &journaled {
        let shown = args.pipeline.output.resume.as_ref().map(|d| d.join(crate::output::journal::JOURNAL).display().to_string()).unwrap_or_default();
        replay::apply_pipeline(&mut args.pipeline, &j.started, &shown).with_context(|| format!("resuming {shown}"))?;
    }
    let target = match &args.bench_binary {
        Some(exe) => BenchTarget::prebuilt(exe)?,
        None => {
            eprintln!("building the bench target of {} (natively, in release)…", args.manifest_path.display());
            BenchTarget::build(&args.manifest_path, args.bench.as_deref())?
        }
    };
    if args.list {
        list(&target, args.pipeline.output.json)?;
        return Ok(ExitCode::SUCCESS);
    }
    let cases = match &journaled {
        Some(j) => j.started.settings.cases.clone(),
        None if args.roofline => kernels::plan::roofline_first(kernels::Suite::Default, args.pipeline.seed, target.cases(&args.pipeline.filter)?),
        None => target.cases(&args.pipeline.filter)?,
    };
    let shared = pipeline_settings(&args.pipeline, &[PlatformArg::Webgpu, PlatformArg::Wasm], journaled)?;
    let bundle = match (args.bundle.clone(), shared.platforms.iter().any(|p| p.in_browser())) {
        (Some(dir), _) => Some(dir),
        (None, true) => {
            eprintln!("building `{}` for wasm32 (the page)…", target.name);
            let wasm = target.build_wasm()?;
            Some(bundle::assemble(&wasm, &target.target_dir.join("harness-bench").join(&target.name))?.dir)
        }
        (None, false) => None,
    };
    let references = References::new(HashMap::new(), None).with_given(target.references(&cases)?);
    let settings = Settings {
        serve: Serve { bundle, ..shared.serve.clone() },
        native: NativeRunner::BenchBinary(target.native.clone()),
        cases_for: BY_KIND,
        // A bench's page keeps the sampling it is given on every adapter: its benches are the
        // user's, and its CPU benches time the CPU by design.
        cpu_sampling: None,
        limits: CaseLimits { cpu_timeout: None, ..shared.limits },
        ..shared
    };
    let pipeline = Pipeline::prepare(settings)?;
    pipeline.run(Planned { cases, references: Arc::new(references), weights: HashMap::new() }).await
}

/// Prints the target's benches: a table, or JSON with `json`.
fn list(target: &BenchTarget, json: bool) -> Result<()> {
    if json {
        println!("{}", serde_json::to_string_pretty(&target.cases)?);
        return Ok(());
    }
    let from = target.manifest.as_deref().unwrap_or(&target.native);
    println!("{} bench(es) in `{}` ({}):", target.cases.len(), target.name, from.display());
    for b in &target.cases {
        let kind = match b.kind {
            BenchKind::Cpu => "cpu (wasm, native)",
            BenchKind::Gpu => "gpu (webgpu, native)",
        };
        let checked = if b.reference.is_some() { "checked against its reference" } else { "unchecked (no reference)" };
        println!("  {:<32} {kind:<21} {checked}", b.label());
    }
    Ok(())
}
