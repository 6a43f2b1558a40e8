//! One bench case, measured: the same in the page and natively.

use crate::cpu::Bencher;
use crate::gpu::GpuContext;
use crate::{Benches, Body};
use kernels::bench::BenchCase;
use kernels::gpu::Gpu;
use kernels::sampling::{now_ms, ClockGate};
use kernels::wire::{CaseMeasurement, PageError};
use kernels::{CaseSpec, RunPlan, Workload};

/// Measures `case` of `plan`: a CPU bench's closure or a GPU bench's passes (on `gpu`), by the
/// plan's sampling, with the bench's output for the check.
pub(crate) async fn run_case(
    benches: &Benches,
    gpu: Option<&mut Gpu>,
    plan: &RunPlan,
    case: &CaseSpec,
    clock: &mut impl ClockGate,
    mut on_sample: impl FnMut(u32),
) -> Result<CaseMeasurement, PageError> {
    let fail = |message: String| PageError::case(&case.id, message);
    let Some(Workload::Bench(bench)) = &case.workload else {
        // A kernel of harness's catalogue (the roofline's probes, `harness bench --roofline`): its
        // own program, timed as `harness run` times it.
        return match (gpu, case.kernel()) {
            (Some(gpu), Some(_)) => gpu.run_case(plan, case, None, clock, &mut kernels::sampling::CaseClock::start(), on_sample).await.map_err(|e| e.for_case(&case.id)),
            _ => Err(fail(format!("{}: neither a bench of this target nor a GPU kernel of harness's", case.kernel))),
        };
    };
    let registered = benches.find(bench).ok_or_else(|| fail(format!("no bench `{}` in this build of `{}`: rebuild it", bench.label(), bench.target)))?;
    let output = |values: &[f64]| CaseMeasurement::encode_bytes(&BenchCase::encode_output(values));
    match &registered.body {
        Body::Cpu(body) => {
            let mut bencher = Bencher { sampling: &plan.sampling, on_sample: &mut on_sample, measured: None };
            body(&mut bencher);
            let m = bencher.measured.ok_or_else(|| fail(format!("{}: the bench never called `Bencher::iter`", bench.label())))?;
            let mut measurement = CaseMeasurement::of_sampled(case.id.clone(), 0.0, m.sampled, output(&m.output));
            measurement.timer_resolution_ms = Some(m.resolution_ms);
            Ok(measurement)
        }
        Body::Gpu(setup) => {
            let gpu = gpu.ok_or_else(|| fail(format!("{}: a GPU bench needs a GPU adapter, and there is none", bench.label())))?;
            gpu.ready().await.map_err(|e| e.for_case(&case.id))?;
            gpu.guarded(async |gpu: &Gpu| {
                let context = GpuContext::of(gpu);
                let t0 = now_ms();
                let work = setup(context.clone()).await;
                let setup_ms = now_ms() - t0;
                let sampled = match work.submitter() {
                    Some(run) => {
                        let once = || run(context.clone());
                        gpu.measure_submitted(&bench.label(), &once, &plan.sampling, clock, on_sample).await?
                    }
                    None => gpu.measure_work(&work, &plan.sampling, clock, on_sample).await?,
                };
                let mut values = work.decode(&gpu.read_buffers(&work.output_buffers()).await?);
                values.extend(work.read_output(context).await);
                Ok(CaseMeasurement::of_sampled(case.id.clone(), setup_ms, sampled, output(&values)))
            })
            .await
            .map_err(|e| e.for_case(&case.id))
        }
    }
}

/// Every bench's reference that it gives, by its label (`name@param`).
#[cfg(not(target_arch = "wasm32"))]
pub(crate) fn references(benches: &Benches) -> impl Iterator<Item = (String, &dyn Fn() -> Vec<f64>)> {
    benches.registered.iter().filter_map(|r| r.reference.as_deref().map(|f| (r.case.label(), f)))
}
