//! The page GPU timer (page/static/gpu-timer.js) on real WebGPU in headless Chromium and Firefox
//! (tests/gpu-timer-page/timer.html, served by `harness open`): a pass that sets its own
//! `timestampWrites` keeps them and is counted; a window with a render pass is incomplete; more
//! passes than one of the timer's query sets holds are each timed, busy within span.

mod common;
use common::*;
use serde_json::{json, Value};
use std::process::{Command, Stdio};
use std::time::Duration;

/// A WebDriver on a free port (`chromedriver` or `geckodriver`), stopped when dropped.
fn driver(program: &str) -> (String, Group) {
    let port = free_port();
    let mut cmd = Command::new(program);
    cmd.arg(format!("--port={port}")).stdout(Stdio::null()).stderr(Stdio::null());
    let process = Group::spawn(cmd);
    wait_until(Duration::from_secs(10), || std::net::TcpStream::connect(("127.0.0.1", port)).is_ok());
    (format!("http://127.0.0.1:{port}"), process)
}

/// What the test page reports in `browser`, once it is done.
async fn page_result(browser: &str) -> Value {
    let dir = temp_folder();
    let page = workspace().join("harness/tests/gpu-timer-page/timer.html");
    std::fs::copy(&page, dir.path().join("timer.html")).unwrap();
    std::fs::copy(workspace().join("page/static/gpu-timer.js"), dir.path().join("gpu-timer.js")).unwrap();
    let open = OpenServer::start(dir.path());
    // The flags and prefs harness gives each browser for WebGPU (measure/browser/).
    let (url, _driver, caps) = match browser {
        "chrome" => {
            let (url, d) = driver("chromedriver");
            let args = ["--headless=new", "--no-sandbox", "--enable-unsafe-webgpu", "--enable-webgpu-developer-features", "--no-first-run", "--disable-dev-shm-usage", "--disable-background-networking"];
            (url, d, json!({ "goog:chromeOptions": { "args": args } }))
        }
        _ => {
            let (url, d) = driver("geckodriver");
            let prefs = json!({ "dom.webgpu.enabled": true, "gfx.webgpu.ignore-blocklist": true });
            (url, d, json!({ "moz:firefoxOptions": { "args": ["-headless"], "prefs": prefs } }))
        }
    };
    let client = fantoccini::ClientBuilder::new(hyper_util::client::legacy::connect::HttpConnector::new())
        .capabilities(caps.as_object().unwrap().clone())
        .connect(&url)
        .await
        .unwrap_or_else(|e| panic!("{browser}'s WebDriver starts it: {e}"));
    client.goto(&format!("{}timer.html", open.url)).await.unwrap();
    let mut result = Value::Null;
    for _ in 0..600 {
        result = client.execute("return window.result ?? null", vec![]).await.unwrap();
        if !result.is_null() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    client.close().await.unwrap();
    result
}

async fn check(browser: &str) {
    let r = page_result(browser).await;
    assert!(r["error"].is_null() && !r.is_null(), "{browser}: {r:#}");
    assert_eq!(r["timestamps"], true, "{browser}: the timer adds timestamp-query where the adapter has it (SwiftShader and lavapipe do): {r:#}");
    // The page's own timestamps: kept (they came back valid), counted, not timed by the timer.
    assert_eq!(r["ownKept"], true, "{browser}: {r:#}");
    let own = &r["own"];
    assert_eq!((own["ownTimestamps"].as_u64(), own["timed"].as_u64(), own["complete"].as_bool()), (Some(1), Some(1), Some(false)), "{browser}: {own:#}");
    assert_eq!(own["copies"], 2, "the page's resolve and copy are counted: {own:#}");
    // A render pass: counted, and the window is incomplete.
    let render = &r["render"];
    assert_eq!((render["renderPasses"].as_u64(), render["timed"].as_u64(), render["complete"].as_bool()), (Some(1), Some(1), Some(false)), "{browser}: {render:#}");
    // 80 passes over two encoders: every one timed, busy within span.
    let many = &r["many"];
    assert_eq!((many["timed"].as_u64(), many["invalid"].as_u64(), many["complete"].as_bool()), (Some(80), Some(0), Some(true)), "{browser}: {many:#}");
    let (busy, span) = (many["busyMs"].as_f64().unwrap(), many["spanMs"].as_f64().unwrap());
    assert!(busy > 0.0 && busy <= span, "{browser}: busy {busy} ms, span {span} ms");
}

#[tokio::test(flavor = "multi_thread")]
// The lock keeps browser tests apart for the whole test, awaits included, on purpose.
#[allow(clippy::await_holding_lock)]
async fn the_page_gpu_timer_keeps_own_timestamps_and_marks_render_passes_in_headless_chromium() {
    let _lock = BROWSER.lock().unwrap_or_else(|e| e.into_inner());
    check("chrome").await;
}

#[tokio::test(flavor = "multi_thread")]
#[allow(clippy::await_holding_lock)]
async fn the_page_gpu_timer_keeps_own_timestamps_and_marks_render_passes_in_headless_firefox() {
    let _lock = BROWSER.lock().unwrap_or_else(|e| e.into_inner());
    check("firefox").await;
}

/// `--gpu-timer page` times harness's own cases by the page timer alone, and `--gpu-timer-cost`
/// samples each again with and without it: both land in results.json (no timing is asserted).
#[test]
fn gpu_timer_page_times_harnesss_own_cases_and_measures_its_cost_in_headless_chromium() {
    let (code, results, stderr) = run_checked(
        "gpu-timer-page",
        &["--platform", "webgpu", "--suite", "quick", "--filter", "add,softmax", "--gpu-timer", "page", "--gpu-timer-cost", "--samples", "5", "--warmup", "1", "--max-time", "1"],
    );
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(results["settings"]["gpuTimer"], "page");
    let run = &results["runs"][0];
    let timestamps = run["adapter"]["features"].as_array().is_some_and(|f| f.iter().any(|f| f == "timestamp-query"));
    for case in run["cases"].as_array().unwrap() {
        let timer = &case["gpuTimer"];
        assert_eq!(timer["source"], "page", "{case:#}");
        if timestamps {
            // One pass a batch, recorded by harness: every window complete, busy and span alike.
            assert_eq!((timer["incomplete"].as_u64(), case["timer"].as_str()), (Some(0), Some("gpuTimestamp")), "{case:#}");
            let cost = &timer["cost"];
            assert!(cost["withMs"].as_f64() > Some(0.0) && cost["withoutMs"].as_f64() > Some(0.0) && cost["runs"].as_u64() > Some(0), "{case:#}");
        }
    }
}
