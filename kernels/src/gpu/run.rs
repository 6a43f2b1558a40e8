//! Running one case end to end on a device: built, prepared, measured and read back (`run_case`),
//! or once as a fresh page would (`run_cold`), a lost device replaced and GPU errors caught.

use super::error::GpuError;
#[cfg(target_arch = "wasm32")]
use super::prepare::precompile_unused;
use super::timing::profile_runs;
use super::Gpu;
use crate::model::weights::Weights;
use crate::sampling::{now_ms, CaseClock, ClockGate};

impl Gpu {
    /// Runs `case` once as a fresh page would, after its weights were fetched: builds each part's
    /// program (a CLIP-shaped pair has two; its cold start says whether they load one after the
    /// other or at once), uploads it, creates its pipelines (precompiled where it says so: all at
    /// once through the browser's `createComputePipelineAsync`, while the weights upload), submits
    /// one pass of every part and reads their outputs back. The page's clock readings at the end
    /// of each phase go to `marks`; for parts loaded one after the other, `upload` ends after the
    /// time all of them spent uploading.
    pub async fn run_cold(&mut self, case: &crate::CaseSpec, weights: Option<&Weights>, marks: &mut Vec<(&'static str, f64)>) -> Result<Vec<u8>, GpuError> {
        let label = case.kernel.clone();
        let cold = case.cold.unwrap_or(crate::ColdStart { samples: 1, precompile: false, parallel: false });
        let parts = case.workload.as_ref().map(|w| w.parts(case.seed)).unwrap_or_default();
        let failed = |message: String| GpuError::Pipeline { kernel: label.clone(), message };
        if parts.is_empty() {
            return Err(failed("a cold start runs harness's models only".into()));
        }
        self.guarded(async |gpu: &Gpu| {
            let start = now_ms();
            // A part's prepared program, its time uploading, and when that ended.
            let load = async |graph: &crate::model::graph::Graph| {
                let begun = now_ms();
                let program = graph.lower(weights, gpu.caps()).map_err(|e| failed(e.to_string()))?;
                gpu.check_fits(&label, &program)?;
                let (prepared, uploaded) = gpu.prepare_timed(&label, &program, cold.precompile, false).await?;
                Ok::<_, GpuError>((prepared, uploaded - begun, uploaded))
            };
            let loaded = match cold.parallel {
                true => futures_util::future::try_join_all(parts.iter().map(load)).await?,
                false => {
                    let mut loaded = Vec::new();
                    for part in &parts {
                        loaded.push(load(part).await?);
                    }
                    loaded
                }
            };
            let uploaded = match cold.parallel {
                true => loaded.iter().map(|l| l.2).fold(start, f64::max),
                false => start + loaded.iter().map(|l| l.1).sum::<f64>(),
            };
            marks.push(("upload", uploaded));
            #[cfg(target_arch = "wasm32")]
            if cold.precompile && precompile_unused() > 0 {
                return Err(failed(format!("{} precompiled pipelines were not taken by wgpu: static/precompile.js no longer matches how wgpu creates them", precompile_unused())));
            }
            marks.push(("pipelines", now_ms()));
            let index = gpu.queue.submit(loaded.iter().map(|(prepared, ..)| gpu.encode(prepared, None, 1, None)));
            marks.push(("dispatch", now_ms()));
            gpu.wait_natively(Some(index))?;
            let outputs: Vec<(&wgpu::Buffer, u64, u64)> = loaded.iter().flat_map(|(p, ..)| p.output_buffers()).collect();
            let bytes = gpu.read_ranges(&outputs).await?;
            marks.push(("result", now_ms()));
            Ok(bytes)
        })
        .await
    }

    /// Runs one case of `plan` end to end: its program (built from `weights` for an encoder),
    /// pipelines, measurement by the sampling policy, and the output read back, ready to send.
    /// A device lost meanwhile fails the case with [`GpuError::DeviceLost`] and is replaced, so
    /// the next case runs on a fresh one; an uncaptured GPU error fails it too.
    /// `phases` is the case's clock, started as it was announced: each phase of the case ends on
    /// it as it passes (the measurement carries them).
    pub async fn run_case(
        &mut self,
        plan: &crate::RunPlan,
        case: &crate::CaseSpec,
        weights: Option<&Weights>,
        clock: &mut impl ClockGate,
        phases: &mut CaseClock,
        on_sample: impl FnMut(u32),
    ) -> Result<crate::wire::CaseMeasurement, GpuError> {
        self.ready().await?;
        if case.kernel().and_then(|k| k.fault()) == Some(crate::Fault::LoseDevice) {
            self.device.destroy();
        }
        self.guarded(async |gpu: &Gpu| {
            let program = case.program(weights, gpu.caps()).map_err(|e| GpuError::Pipeline { kernel: case.kernel.clone(), message: e.to_string() })?;
            gpu.check_fits(&case.kernel, &program)?;
            phases.mark("build");
            let (prepared, uploaded) = gpu.prepare_timed(&case.kernel, &program, false, true).await?;
            phases.mark_at("upload", uploaded);
            phases.mark("pipelines");
            let measured = gpu.measure(&prepared, &plan.sampling, clock, on_sample).await?;
            // The batches still queued behind the last timed sample are drained with the samples.
            phases.mark_at("warmup", measured.timed_span.0);
            phases.mark("samples");
            let output = crate::wire::CaseMeasurement::encode_bytes(&gpu.read_output(&prepared, &program).await?);
            phases.mark("readback");
            let profile = match plan.sampling.profile {
                true => gpu.profile(&prepared, profile_runs(&measured.samples)).await?,
                false => Vec::new(),
            };
            if plan.sampling.profile {
                phases.mark("profile");
            }
            let measurement = crate::wire::CaseMeasurement {
                phases: phases.phases(),
                dispatches: Some(program.steps.len() as u32),
                pipelines_reused: prepared.pipelines_reused,
                ..crate::wire::CaseMeasurement::of_sampled(case.id.clone(), prepared.pipeline_ms, measured, output)
            };
            let engine_profile = (!profile.is_empty()).then(|| {
                let kernel = |(i, ms): (usize, f64)| crate::wire::EngineKernel { op: program.shaders[program.steps[i].shader].label.clone(), node: program.step_name(i), ms };
                profile.into_iter().enumerate().map(kernel).collect()
            });
            Ok(crate::wire::CaseMeasurement { features: program.features.clone(), engine_profile, ..measurement })
        })
        .await
    }
}
