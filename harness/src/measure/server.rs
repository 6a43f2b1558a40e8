//! The local HTTP server: serves the page bundle with cross-origin isolation headers (for precise
//! `performance.now()`), hands out the run plan, and turns what the page POSTs or streams into
//! [`PageEvent`]s for the controller. One server serves every browser of an invocation in turn;
//! each browser's run has its own token, and every API call must carry the current one: it is
//! checked (in constant time) before any body is read, and each route states its body limit.

use axum::extract::ws::{Message, WebSocket, WebSocketUpgrade};
use axum::extract::{DefaultBodyLimit, Query, Request, State};
use axum::http::{header, HeaderName, HeaderValue, StatusCode};
use axum::middleware::{self, Next};
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
use subtle::ConstantTimeEq;
use tokio::sync::{mpsc, oneshot};
use tower_http::services::ServeDir;
use tower_http::set_header::SetResponseHeaderLayer;

pub use kernels::wire::PageEvent;

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
    /// The socket listened on has no address to give the browsers.
    #[error("the server's socket has no address: {0}")]
    NoAddress(std::io::Error),
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
    /// The JavaScript engines' files ([`crate::measure::npm`]), by the URL folder (`tfjs`, `ort`)
    /// and name the page asks for: none unless a run has their platform.
    engines: Mutex<Vec<crate::measure::npm::EngineFiles>>,
}

impl AppState {
    fn slot(&self) -> std::sync::MutexGuard<'_, RunSlot> {
        self.slot.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether `given` is the current run's token; the bytes are compared in constant time, so
    /// the time of a refusal says nothing of how much of a guess was right.
    fn is_current(&self, given: Option<&str>) -> bool {
        given.is_some_and(|g| bool::from(g.as_bytes().ct_eq(self.slot().token.as_bytes())))
    }
}

/// Most bytes a JSON report of the page may have (adapter, completion latency).
pub const REPORT_BODY_LIMIT: usize = 64 << 10;
/// Most bytes an error report may have: an exception with its stack and the case's context.
pub const ERROR_BODY_LIMIT: usize = 1 << 20;
/// Most bytes a case's result may have: its output arrives as base64 in one POST (a 4096×4096
/// f32 matrix is 87 MiB of it; the largest model outputs are smaller).
pub const RESULT_BODY_LIMIT: usize = 1 << 30;

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

    /// Lets pages load an engine's files as `/{prefix}/{name}` (`/tfjs/tf-core.min.js`).
    pub fn serve_engine(&self, files: &crate::measure::npm::EngineFiles) {
        self.state.engines.lock().unwrap_or_else(|e| e.into_inner()).push(files.clone());
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

/// Starts serving `bundle_dir` and the API on `listener` ([`listen`]). Browsers load the page
/// from `public_url` when given (a remote browser cannot use 127.0.0.1), else from the address
/// listened on.
pub async fn start(listener: tokio::net::TcpListener, public_url: Option<&str>, bundle_dir: &Path) -> Result<Server, ServerError> {
    let addr = listener.local_addr().map_err(ServerError::NoAddress)?;
    let state = Arc::new(AppState {
        slot: Mutex::new(RunSlot {
            token: new_token(),
            plan: RunPlan::empty(kernels::Platform::Webgpu),
            events: None,
        }),
        weights: Mutex::new(HashMap::new()),
        clock: Mutex::new(None),
        engines: Mutex::new(Vec::new()),
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
    // Every API route answers only the current run's token, checked before the body is read.
    // Routes without a body take none: the limit of the ones that read one is stated beside them.
    let api = Router::new()
        .route("/api/plan", get(plan))
        .route("/api/adapter", post(adapter).layer(DefaultBodyLimit::max(REPORT_BODY_LIMIT)))
        .route("/api/latency", post(latency).layer(DefaultBodyLimit::max(REPORT_BODY_LIMIT)))
        .route("/api/clock", get(clock))
        .route("/api/result", post(result).layer(DefaultBodyLimit::max(RESULT_BODY_LIMIT)))
        .route("/api/error", post(error).layer(DefaultBodyLimit::max(ERROR_BODY_LIMIT)))
        .route("/api/done", post(done))
        .route("/api/events", get(events))
        .route("/api/weights", get(weights))
        .route_layer(middleware::from_fn_with_state(state.clone(), require_token));
    let mut app = Router::new().merge(api);
    for engine in crate::measure::npm::ENGINES {
        app = app.route(&format!("/{}/{{name}}", engine.dir), get(move |s, name| engine_file(s, engine, name)));
    }
    let mut app = app
        .route("/webnn-standin.js", get(webnn_stand_in))
        .fallback_service(ServeDir::new(bundle_dir))
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

/// Refuses an API request without the current run's token (`?token=`) with 403, before its body
/// is read or parsed: a stray or hostile request costs a header's worth of work.
async fn require_token(State(s): State<Arc<AppState>>, request: Request, next: Next) -> Response {
    let token = Query::<TokenQuery>::try_from_uri(request.uri()).ok().and_then(|Query(q)| q.token);
    if !s.is_current(token.as_deref()) {
        return (StatusCode::FORBIDDEN, "wrong or missing run token").into_response();
    }
    next.run(request).await
}

fn forward(state: &AppState, event: PageEvent) -> Response {
    if let Some(events) = &state.slot().events {
        let _ = events.send(event);
    }
    StatusCode::NO_CONTENT.into_response()
}

async fn plan(State(s): State<Arc<AppState>>) -> Response {
    Json(s.slot().plan.clone()).into_response()
}

#[derive(Deserialize)]
struct WeightsQuery {
    name: String,
}

async fn weights(State(s): State<Arc<AppState>>, Query(q): Query<WeightsQuery>) -> Response {
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

async fn engine_file(
    State(s): State<Arc<AppState>>,
    engine: &'static crate::measure::npm::NpmEngine,
    axum::extract::Path(name): axum::extract::Path<String>,
) -> Response {
    let path = s
        .engines
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .iter()
        .filter(|e| e.engine.dir == engine.dir)
        .flat_map(|e| e.files.iter())
        .find(|(n, _)| *n == name)
        .map(|(_, p)| p.clone());
    let Some(path) = path else {
        let (dir, platform, what) = (engine.dir, engine.platform, engine.name);
        return (StatusCode::NOT_FOUND, format!("no file `{dir}/{name}` in this run (only {platform} serves {what})")).into_response();
    };
    // A streaming compile (WebAssembly.instantiateStreaming) needs the WASM type.
    send_file(&path, if name.ends_with(".wasm") { "application/wasm" } else { "text/javascript" }).await
}

/// The WebNN stand-in the tests name in `HARNESS_WEBNN_STANDIN`; nothing otherwise.
async fn webnn_stand_in() -> Response {
    match std::env::var_os(crate::measure::webnn::STAND_IN_ENV) {
        Some(path) => send_file(std::path::Path::new(&path), "text/javascript").await,
        None => (StatusCode::NOT_FOUND, "no WebNN stand-in: only harness's tests set HARNESS_WEBNN_STANDIN").into_response(),
    }
}

async fn adapter(State(s): State<Arc<AppState>>, Json(a): Json<AdapterReport>) -> Response {
    forward(&s, PageEvent::Adapter(a))
}

async fn latency(State(s): State<Arc<AppState>>, Json(l): Json<CompletionLatency>) -> Response {
    forward(&s, PageEvent::Latency(l))
}

/// `{"steady": true|false|null}`: whether the probe sees the GPU clock settled.
async fn clock(State(s): State<Arc<AppState>>) -> Response {
    let check = s.clock.lock().unwrap_or_else(|e| e.into_inner()).clone();
    Json(serde_json::json!({ "steady": check.and_then(|c| c()) })).into_response()
}

async fn result(State(s): State<Arc<AppState>>, Json(m): Json<CaseMeasurement>) -> Response {
    forward(&s, PageEvent::Result(Box::new(m)))
}

async fn error(State(s): State<Arc<AppState>>, Json(e): Json<PageError>) -> Response {
    forward(&s, PageEvent::Error(e))
}

async fn done(State(s): State<Arc<AppState>>) -> Response {
    forward(&s, PageEvent::Done)
}

async fn events(State(s): State<Arc<AppState>>, Query(q): Query<TokenQuery>, ws: WebSocketUpgrade) -> Response {
    // require_token has checked it; the socket keeps it to stop when its run ends.
    let token = q.token.unwrap_or_default();
    ws.on_upgrade(move |socket| progress_stream(s, token, socket))
}

async fn progress_stream(state: Arc<AppState>, token: String, mut socket: WebSocket) {
    while let Some(Ok(msg)) = socket.recv().await {
        if let Message::Text(text) = msg {
            match serde_json::from_str::<Progress>(&text) {
                Ok(p) => {
                    // A socket outlives neither its run nor its token.
                    if !state.is_current(Some(&token)) {
                        break;
                    }
                    match &state.slot().events {
                        Some(events) => {
                            let _ = events.send(PageEvent::Progress(p));
                        }
                        None => break,
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
        let err = listen(addr).await.expect_err("bind must fail");
        assert!(err.to_string().contains("--port"), "{err}");
    }
}

#[cfg(test)]
mod token_tests {
    use super::*;
    use std::io::{Read, Write};

    fn status_of(addr: SocketAddr, request: &str) -> String {
        let mut s = std::net::TcpStream::connect(addr).unwrap();
        // A server that waited for a body that never comes would otherwise hang the test.
        s.set_read_timeout(Some(std::time::Duration::from_secs(30))).unwrap();
        let _ = s.write_all(request.as_bytes());
        let mut buf = Vec::new();
        let _ = s.read_to_end(&mut buf);
        String::from_utf8_lossy(&buf).lines().next().unwrap_or("").to_string()
    }

    /// A POST of `body` to `path`, its Content-Length `length` (the body may be shorter).
    fn post_of(path: &str, length: usize, body: &str) -> String {
        format!("POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: {length}\r\nConnection: close\r\n\r\n{body}")
    }

    /// A server with a run begun, its address and the run's token.
    async fn serving() -> (Server, SocketAddr, String, mpsc::UnboundedReceiver<PageEvent>) {
        let server = start(listen(([127, 0, 0, 1], 0).into()).await.unwrap(), None, Path::new(".")).await.unwrap();
        let events = server.begin_run(RunPlan::empty(kernels::Platform::Webgpu));
        let token = server.page_url().split("token=").nth(1).unwrap().to_string();
        let addr = server.addr;
        (server, addr, token, events)
    }

    /// The status lines of `requests`, sent one after the other from a blocking thread.
    async fn statuses(addr: SocketAddr, requests: Vec<String>) -> Vec<String> {
        tokio::task::spawn_blocking(move || requests.iter().map(|r| status_of(addr, r)).collect()).await.unwrap()
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn the_token_is_checked_before_any_body_is_read() {
        let (_server, addr, token, _events) = serving().await;
        let wrong_same_length: String = token.chars().map(|c| if c == '0' { '1' } else { '0' }).collect();
        let requests = vec![
            // No token, a body announced as 8 MB of which only garbage arrives: refused at once.
            post_of("/api/result", 8 << 20, "{garbage"),
            // Bad JSON with a wrong token: 403, not the parser's 400/422.
            post_of(&format!("/api/adapter?token={wrong_same_length}"), 8, "{garbage"),
            post_of(&format!("/api/error?token={}", &token[..31]), 8, "{garbage"),
            post_of(&format!("/api/latency?token={token}0"), 8, "{garbage"),
            format!("GET /api/plan?token=&token={wrong_same_length} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"),
            // The same bad JSON with the run's token reaches the parser.
            post_of(&format!("/api/adapter?token={token}"), 8, "{garbage"),
        ];
        let got = statuses(addr, requests).await;
        for status in &got[..5] {
            assert!(status.contains("403"), "{got:?}");
        }
        assert!(got[5].contains("400") || got[5].contains("422"), "{got:?}");
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn each_route_refuses_a_body_over_its_stated_limit() {
        let (_server, addr, token, _events) = serving().await;
        let over = |path: &str, limit: usize| post_of(&format!("{path}?token={token}"), limit + 1, &"x".repeat(limit + 1));
        // 4 MiB of garbage: over the error route's limit, under the result route's, which parses it.
        let big = 4 << 20;
        let requests = vec![
            over("/api/adapter", REPORT_BODY_LIMIT),
            over("/api/latency", REPORT_BODY_LIMIT),
            over("/api/error", ERROR_BODY_LIMIT),
            post_of(&format!("/api/error?token={token}"), big, &"x".repeat(big)),
            post_of(&format!("/api/result?token={token}"), big, &"x".repeat(big)),
        ];
        let got = statuses(addr, requests).await;
        for status in &got[..4] {
            assert!(status.contains("413"), "{got:?}");
        }
        assert!(got[4].contains("400") || got[4].contains("422"), "a result may be larger: {got:?}");
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn only_the_current_runs_token_is_accepted() {
        let server = start(listen(([127, 0, 0, 1], 0).into()).await.unwrap(), None, Path::new(".")).await.unwrap();
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
    /// An engine's files are served under its own folder only: onnxruntime-web's under `/ort/`,
    /// not under TensorFlow.js's `/tfjs/`.
    #[tokio::test(flavor = "multi_thread")]
    async fn an_engines_files_are_served_under_its_own_folder() {
        let bundle = tempfile::tempdir().unwrap();
        let file = bundle.path().join("ort.min.js");
        std::fs::write(&file, "// ort").unwrap();
        let server = start(listen(([127, 0, 0, 1], 0).into()).await.unwrap(), None, bundle.path()).await.unwrap();
        server.serve_engine(&crate::measure::npm::EngineFiles { engine: &crate::measure::npm::ORT, files: vec![("ort.min.js", file)] });
        let get = |path: &str| format!("GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
        let got = statuses(server.addr, vec![get("/ort/ort.min.js"), get("/tfjs/ort.min.js"), get("/ort/other.js")]).await;
        assert!(got[0].contains("200") && got[1].contains("404") && got[2].contains("404"), "{got:?}");
    }

    /// What README's "Remote browsers" states: every `/api/*` route is refused without the run's
    /// token; the page's static files (the bundle), `/tfjs/*`, `/ort/*` and `/webnn-standin.js` are served
    /// without one, since the page loads them by fixed URLs that carry no token.
    #[tokio::test(flavor = "multi_thread")]
    async fn only_the_api_is_gated_by_the_token_and_the_static_files_are_public() {
        let bundle = tempfile::tempdir().unwrap();
        std::fs::write(bundle.path().join("index.html"), "<script type=module src=main.js></script>").unwrap();
        std::fs::write(bundle.path().join("main.js"), "// page").unwrap();
        // A file two levels down, as the WASM glue is: no engine's route may shadow it.
        std::fs::create_dir(bundle.path().join("pkg")).unwrap();
        std::fs::write(bundle.path().join("pkg/page.js"), "// glue").unwrap();
        let server = start(listen(([127, 0, 0, 1], 0).into()).await.unwrap(), None, bundle.path()).await.unwrap();
        let _events = server.begin_run(RunPlan::empty(kernels::Platform::Webgpu));
        let token = server.page_url().split("token=").nth(1).unwrap().to_string();
        let get = |path: &str| format!("GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
        let gated = ["/api/plan", "/api/clock", "/api/weights?name=w", "/api/events"];
        let public = ["/", "/index.html", "/main.js", "/pkg/page.js"];
        let mut requests: Vec<String> = gated.iter().map(|p| get(p)).collect();
        requests.extend(public.iter().map(|p| get(p)));
        // Served without a token, and here absent: 404 from their handlers, not 403.
        requests.extend(["/tfjs/tf.min.js", "/ort/ort.min.js", "/webnn-standin.js"].map(get));
        requests.push(get(&format!("/api/plan?token={token}")));
        let got = statuses(server.addr, requests).await;
        for (path, status) in gated.iter().zip(&got[..4]) {
            assert!(status.contains("403"), "{path} without the token: {status}");
        }
        for (path, status) in public.iter().zip(&got[4..8]) {
            assert!(status.contains("200"), "{path} is public: {status}");
        }
        assert!(got[8..11].iter().all(|s| s.contains("404")), "{got:?}");
        assert!(got[11].contains("200"), "{got:?}");
    }
}
