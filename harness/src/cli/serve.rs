//! Where the server that serves the page and receives results listens, and how a browser
//! reaches it.

use clap::Args;

/// The server's address, port and public URL.
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Server")]
pub struct ServeArgs {
    /// Address the server listens on; anything beyond loopback exposes it to the network.
    #[arg(long, default_value = "127.0.0.1")]
    pub bind: std::net::IpAddr,
    /// The server's URL as the browser must use it (for a remote browser), such as
    /// http://my-host:8000 [default: http://BIND:PORT].
    #[arg(long, value_name = "URL")]
    pub public_url: Option<String>,
    /// Port of the server that serves the page and receives results [default: a free one].
    #[arg(long)]
    pub port: Option<u16>,
}
