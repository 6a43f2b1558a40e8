//! `harness report merge`: one report from the results.json of several runs (a CI matrix's
//! browsers, each run on its own machine).

use crate::cli::report::{MergeArgs, ReportCommand};
use crate::pipeline::write_reports;
use anyhow::Result;
use std::process::ExitCode;

/// Runs a `harness report` subcommand.
pub fn exec(command: ReportCommand) -> Result<ExitCode> {
    match command {
        ReportCommand::Merge(args) => merge(args),
    }
}

fn merge(args: MergeArgs) -> Result<ExitCode> {
    let mut report = reports::merge(&args.inputs)?;
    write_reports(&mut report, &args.out, false)?;
    Ok(ExitCode::SUCCESS)
}
