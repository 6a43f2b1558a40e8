//! The options of `harness compare`.

use super::gate::GateArgs;
use clap::Args;
use std::path::PathBuf;

pub const AFTER_HELP: &str = "\
OLD and NEW are each a run folder, a results.json, or the name of a baseline saved with
`harness run --save-baseline NAME` (looked up in --baseline-dir).

Examples:
  harness compare runs/20261101-120000-chrome runs/20261102-090000-chrome
  harness compare main runs/20261102-090000-chrome --fail-on-regression 5   a CI gate
  harness compare main runs/20261102-090000-chrome --out cmp/   also write reports with the comparison

A change counts when its 95% bootstrap interval excludes zero and it exceeds --noise-threshold;
otherwise the case is unchanged. Cases present in only one run are listed.

Exit status: 0 no regression beyond --fail-on-regression (or none given); 1 a regression beyond it;
2 a run could not be read.";

/// Options of `harness compare`.
#[derive(Debug, Args)]
pub struct CompareArgs {
    /// The earlier run: a folder, a results.json, or a baseline name.
    pub old: String,
    /// The later run: a folder, a results.json, or a baseline name.
    pub new: String,
    /// Baseline folder, noise threshold and regression gate.
    #[command(flatten)]
    pub gate: GateArgs,
    /// Also write NEW's reports, with the comparison, into this folder.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Print the comparison as JSON.
    #[arg(long, conflicts_with = "markdown")]
    pub json: bool,
    /// Print the comparison as Markdown (for a CI job summary).
    #[arg(long)]
    pub markdown: bool,
}
