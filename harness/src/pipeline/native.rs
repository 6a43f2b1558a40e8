//! How `--platform native` cases run: the one stage a subcommand may swap, by a variant here.

use crate::measure::events::Reporter;
use crate::measure::native;
use crate::measure::probe::RunProbe;
use crate::plan::reference::References;
use kernels::RunPlan;
use reports::PlatformRun;
use crate::measure::controller::CaseLimits;
use std::path::PathBuf;
use std::sync::Arc;
use tokio::sync::watch;

/// What runs a plan's `--platform native` cases. `harness bench` adds a variant that runs the
/// user's natively built bench binary as a subprocess and reads its results; a variant is one
/// arm of [`NativeRunner::run`]. Every variant reports its run under [`native::BROWSER`] (`wgpu`),
/// the name a resumed run's journal finds it by.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum NativeRunner {
    /// harness's own worker thread, playing the page's part through native wgpu
    /// (`measure::native`).
    #[default]
    InProcess,
    /// A user's bench binary (`harness bench`), built natively, in a process of its own that is
    /// started again after a crash or a timed-out case.
    BenchBinary(PathBuf),
}

impl NativeRunner {
    /// Runs `plan`'s cases natively, each within `limits`, checking outputs against
    /// `references`, until done or `interrupted`.
    pub async fn run(
        &self,
        plan: &RunPlan,
        limits: CaseLimits,
        references: &Arc<References>,
        probe: &RunProbe,
        reporter: &mut dyn Reporter,
        interrupted: &mut watch::Receiver<bool>,
    ) -> PlatformRun {
        match self {
            NativeRunner::InProcess => native::run_native(plan, native::Worker::InProcess, limits, references, probe, reporter, interrupted).await,
            NativeRunner::BenchBinary(exe) => native::run_native(plan, native::Worker::BenchBinary(exe), limits, references, probe, reporter, interrupted).await,
        }
    }
}
