//! The options of `harness report …` and its subcommands.

use clap::{Args, Subcommand};
use std::path::PathBuf;

/// `harness report …`.
#[derive(Debug, Subcommand)]
pub enum ReportCommand {
    /// Merge result folders (one per browser or OS, as a CI matrix writes them) into one
    /// cross-browser report.
    Merge(MergeArgs),
}

/// Options of `harness report merge`.
#[derive(Debug, Args)]
pub struct MergeArgs {
    /// Result folders (or results.json files) to merge.
    #[arg(required = true)]
    pub inputs: Vec<PathBuf>,
    /// Folder for the merged results.json, report.html and summary.md.
    #[arg(long)]
    pub out: PathBuf,
}
