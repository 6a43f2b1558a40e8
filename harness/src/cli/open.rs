//! The options of `harness open`.

use clap::Args;
use std::path::PathBuf;

/// Options of `harness open`.
#[derive(Debug, Args)]
pub struct OpenArgs {
    /// A folder of runs (such as `runs/`), one run folder, or a trend site (`harness trend`'s
    /// folder, such as `runs/trend`).
    #[arg(default_value = "runs")]
    pub dir: PathBuf,
    /// Port to listen on [default: a free one].
    #[arg(long)]
    pub port: Option<u16>,
    /// Address to listen on; anything beyond loopback exposes the reports to the network.
    #[arg(long, default_value = "127.0.0.1")]
    pub bind: std::net::IpAddr,
}
