//! Where a measuring run writes its reports, what it prints, and the run it completes.

use clap::Args;
use std::path::PathBuf;

/// The report folder and what goes to stdout; `--resume` writes into the folder it completes.
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Output")]
pub struct OutputArgs {
    /// Folder for results.json and report.html [default: runs/<timestamp>-<browser>].
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Print results.json to stdout instead of the summary table.
    #[arg(long)]
    pub json: bool,
    /// Complete the run in DIR that ended early (harness killed, a CI runner lost): the plan and
    /// settings its journal (results.jsonl) recorded, less the cases it already holds, written
    /// into the same folder. With every case there, it only writes the reports again.
    #[arg(long, value_name = "DIR", conflicts_with = "out")]
    pub resume: Option<PathBuf>,
    /// The history store the run is added to.
    #[command(flatten)]
    pub history: super::history::StoreArgs,
    /// Do not add the run to the history store.
    #[arg(long)]
    pub no_history: bool,
    /// With --fail-on-regression=history: the runs before this one its series are compared with.
    #[command(flatten)]
    pub window: super::history::WindowArgs,
}
