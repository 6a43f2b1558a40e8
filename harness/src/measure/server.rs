//! The local HTTP server: serves the page bundle with cross-origin isolation headers (for precise
//! `performance.now()`), hands out the run plan, and turns what the page POSTs or streams into
//! [`PageEvent`]s for the controller. One server serves every browser of an invocation in turn;
//! each browser's run has its own token, and every API call must carry the current one.

use axum::extract::ws::{Message, WebSocket, WebSocketUpgrade};
use axum::extract::{DefaultBodyLimit, Query, State};
use axum::http::{header, HeaderName, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use kernels::wire::{AdapterReport, CaseMeasurement, CompletionLatency, PageError, Progress};
use kernels::RunPlan;
use serde::Deserialize;
use std::net::SocketAddr;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use tokio::sync::{mpsc, oneshot};
use tower_http::services::ServeDir;
use tower_http::set_header::SetResponseHeaderLayer;

/// What the page told the server, in arrival order.
#[derive(Debug)]
pub enum PageEvent {
    /// The adapter the page got (or why it got none).
    Adapter(AdapterReport),
    /// How long the platform takes to report trivial GPU work done.
    Latency(CompletionLatency),
    /// A case started or a sample finished.
    Progress(Progress),
    /// A case's measurement.
    Result(Box<CaseMeasurement>),
    /// An exception or error.
    Error(PageError),
    /// Every case of the plan was sent.
    Done,
}

/// Why the server could not start.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    /// The port is taken.
    #[error("cannot listen on {addr}: the port is in use; pass --port with another port, or leave --port out to pick a free one")]
    PortInUse {
        /// The address.
        addr: SocketAddr,
    },
    /// Any other bind failure.
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        /// The address.
        addr: SocketAddr,
        /// The cause.
        source: std::io::Error,
    },
}

/// The browser run being served: its token, its plan, and where its events go.
struct RunSlot {
    token: String,
    plan: RunPlan,
    events: Option<mpsc::UnboundedSender<PageEvent>>,
}

/// Says whether the GPU clock has settled (`None`: no probe watches it).
pub type ClockCheck = Arc<dyn Fn() -> Option<bool> + Send + Sync>;

struct AppState {
    slot: Mutex<RunSlot>,
    /// Model weights files the page may fetch, by key.
    weights: Mutex<HashMap<String, PathBuf>>,
    /// What `/api/clock` answers from.
    clock: Mutex<Option<ClockCheck>>,
    /// TensorFlow.js's bundles, by the name the page asks for under `/tfjs/`: none unless a run
    /// has the tfjs platform.
    tfjs: Mutex<Vec<(&'static str, PathBuf)>>,
}

impl AppState {
    fn slot(&self) -> std::sync::MutexGuard<'_, RunSlot> {
        self.slot.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// A running server; stops when dropped.
pub struct Server {
    /// Where it listens.
    pub addr: SocketAddr,
    /// The base URL browsers load the page from.
    pub base_url: String,
    state: Arc<AppState>,
    shutdown: Option<oneshot::Sender<()>>,
}

impl Server {
    /// Starts serving `plan` to a new browser run under a fresh token; pages of earlier runs are
    /// refused from now on. Returns the run's page events.
    pub fn begin_run(&self, plan: RunPlan) -> mpsc::UnboundedReceiver<PageEvent> {
        let (tx, rx) = mpsc::unbounded_channel();
        *self.state.slot() = RunSlot { token: new_token(), plan, events: Some(tx) };
        rx
    }

    /// The URL that starts the current run in a browser.
    pub fn page_url(&self) -> String {
        format!("{}/?token={}", self.base_url.trim_end_matches('/'), self.state.slot().token)
    }

    /// Replaces the plan the page gets on its next load (the cases still to run).
    pub fn set_plan(&self, plan: RunPlan) {
        self.state.slot().plan = plan;
    }

    /// Lets pages ask `/api/clock` whether the GPU clock has settled, for their warm-up.
    pub fn set_clock(&self, check: ClockCheck) {
        *self.state.clock.lock().unwrap_or_else(|e| e.into_inner()) = Some(check);
    }

    /// Lets pages load TensorFlow.js's bundles as `/tfjs/{name}`.
    pub fn serve_tfjs(&self, files: &crate::measure::tfjs::TfjsFiles) {
        *self.state.tfjs.lock().unwrap_or_else(|e| e.into_inner()) = files.files.clone();
    }

    /// Lets pages fetch the weights file `path` as `/api/weights?name={key}`.
    pub fn serve_weights(&self, key: &str, path: PathBuf) {
        self.state.weights.lock().unwrap_or_else(|e| e.into_inner()).insert(key.to_string(), path);
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
    }
}

/// A random token identifying one run.
pub fn new_token() -> String {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).expect("the OS random source is available");
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Binds `addr`, naming the flag to change when the port is taken.
pub async fn listen(addr: SocketAddr) -> Result<tokio::net::TcpListener, ServerError> {
    tokio::net::TcpListener::bind(addr).await.map_err(|source| {
        if source.kind() == std::io::ErrorKind::AddrInUse {
            ServerError::PortInUse { addr }
        } else {
            ServerError::Bind { addr, source }
        }
    })
}

/// Starts serving `bundle_dir` and the API on `addr`. Browsers load the page from `public_url`
/// when given (a remote browser cannot use 127.0.0.1), else from the address listened on.
pub async fn start(addr: SocketAddr, public_url: Option<&str>, bundle_dir: &Path) -> Result<Server, ServerError> {
    let listener = listen(addr).await?;
    let addr = listener.local_addr().map_err(|source| ServerError::Bind { addr, source })?;
    let state = Arc::new(AppState {
        slot: Mutex::new(RunSlot {
            token: new_token(),
            plan: RunPlan::empty(kernels::Platform::Webgpu),
            events: None,
        }),
        weights: Mutex::new(HashMap::new()),
        clock: Mutex::new(None),
        tfjs: Mutex::new(Vec::new()),
    });
    let app = router(state.clone(), bundle_dir);
    let (shutdown, stop) = oneshot::channel::<()>();
    tokio::spawn(async move {
        let _ = axum::serve(listener, app)
            .with_graceful_shutdown(async {
                let _ = stop.await;
            })
            .await;
    });
    let base_url = public_url.map(str::to_string).unwrap_or_else(|| format!("http://{addr}"));
    Ok(Server { addr, base_url, state, shutdown: Some(shutdown) })
}

fn router(state: Arc<AppState>, bundle_dir: &Path) -> Router {
    let isolation = [
        (header::CACHE_CONTROL, "no-store"),
        (HeaderName::from_static("cross-origin-opener-policy"), "same-origin"),
        (HeaderName::from_static("cross-origin-embedder-policy"), "require-corp"),
        (HeaderName::from_static("cross-origin-resource-policy"), "same-origin"),
    ];
    let mut app = Router::new()
        .route("/api/plan", get(plan))
        .route("/api/adapter", post(adapter))
        .route("/api/latency", post(latency))
        .route("/api/clock", get(clock))
        .route("/api/result", post(result))
        .route("/api/error", post(error))
        .route("/api/done", post(done))
        .route("/api/events", get(events))
        .route("/api/weights", get(weights))
        .route("/tfjs/{name}", get(tfjs))
        .fallback_service(ServeDir::new(bundle_dir))
        // Outputs of large cases arrive as base64 in one POST.
        .layer(DefaultBodyLimit::max(1 << 30))
        .with_state(state);
    for (name, value) in isolation {
        app = app.layer(SetResponseHeaderLayer::overriding(name, HeaderValue::from_static(value)));
    }
    app
}

#[derive(Deserialize)]
struct TokenQuery {
    token: Option<String>,
}

fn authorize(state: &AppState, q: &TokenQuery) -> Result<(), (StatusCode, &'static str)> {
    if q.token.as_deref() == Some(state.slot().token.as_str()) {
        Ok(())
    } else {
        Err((StatusCode::FORBIDDEN, "wrong or missing run token"))
    }
}

fn forward(state: &AppState, q: &TokenQuery, event: PageEvent) -> Response {
    if let Err(r) = authorize(state, q) {
        return r.into_response();
    }
    if let Some(events) = &state.slot().events {
        let _ = events.send(event);
    }
    StatusCode::NO_CONTENT.into_response()
}

async fn plan(State(s): State<Arc<AppState>>, Query(q): Query<TokenQuery>) -> Response {
    if let Err(r) = authorize(&s, &q) {
        return r.into_response();
    }
    Json(s.slot().plan.clone()).into_response()
}

#[derive(Deserialize)]
struct WeightsQuery {
    token: Option<String>,
    name: String,
}

async fn weights(State(s): State<Arc<AppState>>, Query(q): Query<WeightsQuery>) -> Response {
    if let Err(r) = authorize(&s, &TokenQuery { token: q.token }) {
        return r.into_response();
    }
    let path = s.weights.lock().unwrap_or_else(|e| e.into_inner()).get(&q.name).cloned();
    let Some(path) = path else {
        return (StatusCode::NOT_FOUND, format!("no weights called `{}` in this run", q.name)).into_response();
    };
    send_file(&path, "application/octet-stream").await
}

/// The file at `path` as the answer, or why it cannot be read.
async fn send_file(path: &Path, content_type: &'static str) -> Response {
    match tokio::fs::read(path).await {
        Ok(bytes) => ([(header::CONTENT_TYPE, content_type)], bytes).into_response(),
        Err(e) => (StatusCode::INTERNAL_SERVER_ERROR, format!("{}: {e}", path.display())).into_response(),
    }
}

async fn tfjs(State(s): State<Arc<AppState>>, axum::extract::Path(name): axum::extract::Path<String>) -> Response {
    let path = s.tfjs.lock().unwrap_or_else(|e| e.into_inner()).iter().find(|(n, _)| *n == name).map(|(_, p)| p.clone());
    let Some(path) = path else {
        return (StatusCode::NOT_FOUND, format!("no TensorFlow.js file `{name}` in this run (only --platform tfjs serves them)")).into_response();
    };
    send_file(&path, "text/javascript").await
}

async fn adapter(State(s): State<Arc<AppState>>, Query(q): Query<TokenQuery>, Json(a): Json<AdapterReport>) -> Response {
    forward(&s, &q, PageEvent::Adapter(a))
}

async fn latency(State(s): State<Arc<AppState>>, Query(q): Query<TokenQuery>, Json(l): Json<CompletionLatency>) -> Response {
    forward(&s, &q, PageEvent::Latency(l))
}

/// `{"steady": true|false|null}`: whether the probe sees the GPU clock settled.
async fn clock(State(s): State<Arc<AppState>>, Query(q): Query<TokenQuery>) -> Response {
    if let Err(r) = authorize(&s, &q) {
        return r.into_response();
    }
    let check = s.clock.lock().unwrap_or_else(|e| e.into_inner()).clone();
    Json(serde_json::json!({ "steady": check.and_then(|c| c()) })).into_response()
}

async fn result(State(s): State<Arc<AppState>>, Query(q): Query<TokenQuery>, Json(m): Json<CaseMeasurement>) -> Response {
    forward(&s, &q, PageEvent::Result(Box::new(m)))
}

async fn error(State(s): State<Arc<AppState>>, Query(q): Query<TokenQuery>, Json(e): Json<PageError>) -> Response {
    forward(&s, &q, PageEvent::Error(e))
}

async fn done(State(s): State<Arc<AppState>>, Query(q): Query<TokenQuery>) -> Response {
    forward(&s, &q, PageEvent::Done)
}

async fn events(State(s): State<Arc<AppState>>, Query(q): Query<TokenQuery>, ws: WebSocketUpgrade) -> Response {
    if let Err(r) = authorize(&s, &q) {
        return r.into_response();
    }
    let token = q.token.unwrap_or_default();
    ws.on_upgrade(move |socket| progress_stream(s, token, socket))
}

async fn progress_stream(state: Arc<AppState>, token: String, mut socket: WebSocket) {
    while let Some(Ok(msg)) = socket.recv().await {
        if let Message::Text(text) = msg {
            match serde_json::from_str::<Progress>(&text) {
                Ok(p) => {
                    let slot = state.slot();
                    // A socket outlives neither its run nor its token.
                    match &slot.events {
                        Some(events) if slot.token == token => {
                            let _ = events.send(PageEvent::Progress(p));
                        }
                        _ => break,
                    }
                }
                Err(e) => tracing::warn!("ignoring a progress message the harness does not understand: {e}"),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_random_hex() {
        let (a, b) = (new_token(), new_token());
        assert_eq!(a.len(), 32);
        assert!(a.chars().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(a, b);
    }

    #[tokio::test]
    async fn a_taken_port_is_named_with_the_flag_to_change() {
        let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = taken.local_addr().unwrap();
        let err = start(addr, None, Path::new(".")).await.err().expect("bind must fail");
        assert!(err.to_string().contains("--port"), "{err}");
    }
}

#[cfg(test)]
mod token_tests {
    use super::*;
    use std::io::{Read, Write};

    fn status_of(addr: SocketAddr, request: &str) -> String {
        let mut s = std::net::TcpStream::connect(addr).unwrap();
        s.write_all(request.as_bytes()).unwrap();
        let mut buf = String::new();
        let _ = s.read_to_string(&mut buf);
        buf.lines().next().unwrap_or("").to_string()
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn only_the_current_runs_token_is_accepted() {
        let server = start(([127, 0, 0, 1], 0).into(), None, Path::new(".")).await.unwrap();
        let plan = RunPlan::empty(kernels::Platform::Webgpu);
        let mut events = server.begin_run(plan.clone());
        let old = server.page_url().split("token=").nth(1).unwrap().to_string();
        let addr = server.addr;
        let post = move |token: String| {
            tokio::task::spawn_blocking(move || {
                status_of(addr, &format!("POST /api/done?token={token} HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"))
            })
        };
        assert!(post(old.clone()).await.unwrap().contains("204"));
        assert!(matches!(events.recv().await, Some(PageEvent::Done)));
        assert!(post("forged".into()).await.unwrap().contains("403"));
        let _events = server.begin_run(plan);
        assert!(post(old).await.unwrap().contains("403"), "a finished run's token is refused");
    }
}
