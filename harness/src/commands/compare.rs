//! `harness compare OLD NEW`: the change of every case between two runs or baselines, gated by
//! the thresholds of `--fail-on-regression`.

use super::gate;
use crate::cli::compare::CompareArgs;
use crate::output::summary;
use crate::plan::baseline;
use anyhow::{Context, Result};
use std::process::ExitCode;

/// Compares `args.new` with `args.old`; exit status 1 when the gate fails.
pub fn exec(args: CompareArgs) -> Result<ExitCode> {
    anyhow::ensure!(
        args.gate.fail_on_regression != Some(crate::cli::gate::RegressionGate::History),
        "--fail-on-regression=history gates a run on its history (harness run); harness compare compares two runs: give a percent, such as --fail-on-regression 5"
    );
    let old = baseline::load(&args.old, &args.gate.baseline_dir)?;
    let mut new = baseline::load(&args.new, &args.gate.baseline_dir)?;
    let cmp = gate(&args.gate).compare(&args.old, &old, &new);
    if args.json {
        println!("{}", serde_json::to_string_pretty(&cmp)?);
    } else if args.markdown {
        print!("{}", reports::markdown::baseline_section(&cmp));
    } else {
        print!("{}", summary::baseline_table(&cmp));
    }
    let fails = cmp.gate_fails();
    if let Some(out) = &args.out {
        new.baseline = Some(cmp);
        let written = reports::write_all(&new, out).with_context(|| format!("writing the reports to {}", out.display()))?;
        if !args.json && !args.markdown {
            for path in written {
                println!("wrote {}", path.display());
            }
        }
    }
    Ok(if fails { ExitCode::from(1) } else { ExitCode::SUCCESS })
}
