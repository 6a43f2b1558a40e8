//! Baselines and the regression gate: where baselines live and what counts as a regression
//! (shared by `run` and `compare`), and which baseline a measuring run compares with or saves.

use super::parse::non_negative_pct;
use clap::Args;
use std::path::PathBuf;

/// Where baselines live and what counts as a regression; shared by `run` and `compare`.
#[derive(Debug, Clone, Args)]
pub struct GateArgs {
    /// Folder of saved baselines (one folder per name).
    #[arg(long, env = "HARNESS_BASELINE_DIR", default_value = "runs/baselines")]
    pub baseline_dir: PathBuf,
    /// Changes smaller than this many percent are unchanged, even when the interval excludes zero.
    #[arg(long, value_name = "PCT", default_value_t = stats::change::DEFAULT_NOISE_PCT, value_parser = non_negative_pct)]
    pub noise_threshold: f64,
    /// Fail (exit status 1) when a case regressed by more than PCT percent against the
    /// baseline, or when a run was measured on other hardware than the baseline's (another
    /// adapter or CPU: nothing of it is compared, so the gate cannot pass it). `history`: fail
    /// when a series of this run regressed against the runs before it in the history
    /// (`harness history check`'s rule, over --window runs).
    #[arg(long, value_name = "PCT|history", value_parser = regression_gate)]
    pub fail_on_regression: Option<RegressionGate>,
}

/// What `--fail-on-regression` gates a run on.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum RegressionGate {
    /// A regression beyond this many percent against the baseline.
    Pct(f64),
    /// A regression against the run's history.
    History,
}

fn regression_gate(s: &str) -> Result<RegressionGate, String> {
    match s {
        "history" => Ok(RegressionGate::History),
        pct => non_negative_pct(pct).map(RegressionGate::Pct).map_err(|e| format!("{e}; or `history`, to gate on the run's history")),
    }
}

impl GateArgs {
    /// The baseline gate's percent, if that is the gate.
    pub fn regression_pct(&self) -> Option<f64> {
        match self.fail_on_regression {
            Some(RegressionGate::Pct(p)) => Some(p),
            _ => None,
        }
    }
}

/// The baseline a measuring run is compared with and the one it is saved as, under the gate.
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Baselines")]
pub struct BaselineArgs {
    /// Save this run as the baseline NAME (in --baseline-dir), replacing any of that name.
    #[arg(long, value_name = "NAME")]
    pub save_baseline: Option<String>,
    /// Compare this run with the baseline NAME (or a run folder) and put the changes in the
    /// reports.
    #[arg(long, value_name = "NAME")]
    pub baseline: Option<String>,
    /// Baseline folder, noise threshold and regression gate.
    #[command(flatten)]
    pub gate: GateArgs,
}
