//! `harness open [DIR]`: serves a folder of runs over HTTP with an index page of runs (rebuilt on
//! every request, so runs finished meanwhile appear), or a trend site (`harness trend`) as it is;
//! prints the URL, and serves until Ctrl-C.

use crate::cli::open::OpenArgs;
use anyhow::{Context, Result};
use axum::extract::State;
use axum::response::{Html, IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use tower_http::services::ServeDir;

/// Serves `args.dir` until interrupted.
pub async fn exec(args: OpenArgs) -> Result<ExitCode> {
    anyhow::ensure!(
        args.dir.is_dir(),
        "{} is not a folder; give a folder of runs (harness run writes them to runs/ by default)",
        args.dir.display()
    );
    let root = Arc::new(args.dir.canonicalize().with_context(|| format!("reading {}", args.dir.display()))?);
    let listener = crate::measure::server::listen((args.bind, args.port.unwrap_or(0)).into()).await?;
    let addr = listener.local_addr()?;
    if root.join(history::trend::MARKER).is_file() {
        // A trend site (`harness trend`): its own index.html, served as it is.
        let app = Router::new().fallback_service(ServeDir::new(root.as_path()));
        println!("serving the trend site {} at http://{addr}/ (Ctrl-C to stop)", root.display());
        return serve(listener, app).await;
    }
    let found = reports::index::scan(&root).runs.len();
    let app = Router::new()
        .route("/", get(index))
        .route("/index.html", get(index))
        .fallback_service(ServeDir::new(root.as_path()))
        .with_state(root.clone());
    println!("serving {found} run(s) from {} at http://{addr}/ (Ctrl-C to stop)", root.display());
    serve(listener, app).await
}

/// Serves `app` until Ctrl-C.
async fn serve(listener: tokio::net::TcpListener, app: Router) -> Result<ExitCode> {
    axum::serve(listener, app)
        .with_graceful_shutdown(async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await?;
    Ok(ExitCode::SUCCESS)
}

async fn index(State(root): State<Arc<PathBuf>>) -> Response {
    let scan_root = root.clone();
    let page = tokio::task::spawn_blocking(move || reports::index::render(&scan_root.display().to_string(), &reports::index::scan(&scan_root))).await;
    match page.map_err(|e| e.to_string()).and_then(|r| r.map_err(|e| e.to_string())) {
        Ok(html) => Html(html).into_response(),
        Err(e) => (axum::http::StatusCode::INTERNAL_SERVER_ERROR, e).into_response(),
    }
}
