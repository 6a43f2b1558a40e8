//! The options of `harness list`.

use super::values::SuiteArg;
use clap::Args;

/// Options of `harness list`.
#[derive(Debug, Args)]
pub struct ListArgs {
    /// List the cases of this suite instead of the kernels.
    #[arg(long, value_enum)]
    pub suite: Option<SuiteArg>,
    /// Only kernels matching these names or globs, comma-separated, in that order; `KERNEL@SHAPE`
    /// keeps one of the suite's shapes (`matmul@13x17x19`).
    #[arg(long, value_delimiter = ',')]
    pub filter: Vec<String>,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}
