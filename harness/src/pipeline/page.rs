//! The bundle and serve stages: the page bundle, built from the source tree or taken ready-made,
//! and the server that serves it and receives results.

use crate::measure::events::{Reporter, RunEvent};
use crate::measure::{bundle, server};
use anyhow::Result;
use std::path::PathBuf;
use std::time::Instant;

/// Builds (or takes) the page bundle and starts the server for it; returns the server and the
/// milliseconds each step took. The port is taken first: a taken one is an error at once, not
/// after a bundle build of a minute or two.
pub async fn serve_page(
    explicit_bundle: Option<PathBuf>,
    listen: std::net::SocketAddr,
    public_url: Option<&str>,
    reporter: &mut dyn Reporter,
) -> Result<(server::Server, f64, f64)> {
    let listener = server::listen(listen).await?;
    reporter.event(RunEvent::Step("building the page bundle (the first build takes a minute or two)"));
    let t = Instant::now();
    let bundle = tokio::task::spawn_blocking(move || bundle::prepare(explicit_bundle.as_deref())).await??;
    let bundle_ms = t.elapsed().as_secs_f64() * 1e3;
    tracing::info!("bundle at {} ({})", bundle.dir.display(), if bundle.rebuilt { "rebuilt" } else { "reused" });
    let t = Instant::now();
    let server = server::start(listener, public_url, &bundle.dir).await?;
    let server_ms = t.elapsed().as_secs_f64() * 1e3;
    tracing::info!("server listening on {}", server.addr);
    Ok((server, bundle_ms, server_ms))
}
