//! How `--platform native` cases run: the one stage a subcommand may swap, by a variant here.

use crate::measure::events::Reporter;
use crate::measure::native;
use crate::measure::probe::RunProbe;
use crate::plan::reference::References;
use kernels::RunPlan;
use reports::PlatformRun;
use std::sync::Arc;
use std::time::Duration;
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
}

impl NativeRunner {
    /// Runs `plan`'s cases natively, each within `case_timeout`, checking outputs against
    /// `references`, until done or `interrupted`.
    pub async fn run(
        &self,
        plan: &RunPlan,
        case_timeout: Duration,
        references: &Arc<References>,
        probe: &RunProbe,
        reporter: &mut dyn Reporter,
        interrupted: &mut watch::Receiver<bool>,
    ) -> PlatformRun {
        match self {
            NativeRunner::InProcess => native::run_native(plan, case_timeout, references, probe, reporter, interrupted).await,
        }
    }
}
