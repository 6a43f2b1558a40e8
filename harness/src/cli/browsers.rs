//! The options of `harness browsers`.

use clap::Args;

/// Options of `harness browsers`.
#[derive(Debug, Args)]
pub struct BrowsersArgs {
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}
