//! End to end: `--platform webnn` in real headless Chromium and Firefox. Neither has a WebNN
//! backend here (Debian's Chromium refuses `createContext`, Firefox has no `navigator.ml`), so the
//! real browsers show WebNN unavailable, with their own reasons, beside a WebGPU run that passes.
//! The page's WebNN runner itself (graph building, tensors, dispatch, read-back, checks) is
//! driven through a JavaScript stand-in (`webnn-standin.js`, loaded only through
//! `HARNESS_WEBNN_STANDIN`): the tests that use it say so in their names and output. It is no
//! substitute for a real backend.

mod common;
use common::*;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// Every catalogue kernel WebNN runs (kernels::webnn::graph).
const WEBNN_KERNELS: &str = "add,sub,mul,div,relu,tanh,gelu,silu,softmax,layernorm,rmsnorm,matmul,matmul_naive,matmul_tiled,matvec";

#[test]
fn webnn_beside_webgpu_in_real_chromium_and_firefox_is_unavailable_with_each_browsers_reason() {
    let args = ["--browser", "chrome,firefox", "--platform", "webgpu,webnn", "--suite", "quick", "--filter", "add,softmax", "--sampling", "isolated", "--samples", "3", "--warmup", "0"];
    let (code, results, stderr) = run_checked("webnn-unavailable", &args);
    assert_eq!(code, Some(0), "webgpu passed and an unavailable webnn is no failure:\n{stderr}");
    let runs = results["runs"].as_array().unwrap();
    let run = |browser: &str, platform: &str| runs.iter().find(|r| r["browser"] == browser && r["platform"] == platform).unwrap().clone();
    for browser in ["chrome", "firefox"] {
        assert_eq!(run(browser, "webgpu")["status"], "completed");
        let webnn = run(browser, "webnn");
        assert_eq!(webnn["status"], "unavailable", "{webnn:#}");
        assert!(webnn["cases"].as_array().unwrap().iter().all(|c| c["status"] == "unsupported"));
        assert_eq!(webnn["adapter"]["available"], false);
    }
    let chrome = run("chrome", "webnn");
    let why = chrome["unavailable"].as_str().unwrap();
    assert!(why.contains("NotSupportedError") && why.contains("WebNN is not supported on this platform"), "Chromium's own words: {why}");
    assert!(why.contains("Windows") && why.contains("macOS"), "where it would work: {why}");
    let flags = chrome["browserInfo"]["flags"].as_array().unwrap();
    assert!(flags.iter().any(|f| f == "--enable-features=WebMachineLearningNeuralNetwork"), "harness passes the flag itself: {flags:?}");
    assert!(!run("chrome", "webgpu")["browserInfo"]["flags"].as_array().unwrap().iter().any(|f| f.as_str().unwrap().contains("WebMachineLearning")), "only for webnn");
    assert!(run("firefox", "webnn")["unavailable"].as_str().unwrap().contains("navigator.ml is missing"));
    assert!(stderr.contains("webnn is unavailable in chrome: navigator.ml.createContext"), "the terminal says so:\n{stderr}");
    assert!(!stderr.contains("no WebGPU adapter"), "WebNN's absence is not WebGPU's:\n{stderr}");
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("webnn-unavailable");
    let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
    assert!(html.contains("Unavailable") && html.contains("WebNN is not supported on this platform"), "the report says so");
    assert!(std::fs::read_to_string(dir.join("summary.md")).unwrap().contains("chrome/webnn unavailable: navigator.ml.createContext"));
}

/// The stand-in, or a copy that returns a wrong value: `(path, keep the temp dir alive)`.
fn stand_in(wrong: bool) -> (PathBuf, Option<tempfile::TempDir>) {
    let original = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/webnn-standin.js");
    if !wrong {
        return (original, None);
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("webnn-standin-wrong.js");
    let text = std::fs::read_to_string(&original).unwrap();
    std::fs::write(&path, format!("{text}\nglobalThis.harnessWebnnStandInFault = 'wrong';\n")).unwrap();
    (path, Some(dir))
}

/// `harness run --platform webnn ARGS` with the stand-in in `HARNESS_WEBNN_STANDIN`.
fn run_on_stand_in(name: &str, wrong: bool, args: &[&str]) -> (Option<i32>, Value, String) {
    let _lock = BROWSER.lock().unwrap_or_else(|e| e.into_inner());
    let (script, _keep) = stand_in(wrong);
    let dir = out_dir(name);
    let out = harness_command()
        .args(["run", "--platform", "webnn", "--suite", "quick", "--samples", "3", "--warmup", "0", "--out", dir.to_str().unwrap()])
        .args(args)
        .env("HARNESS_WEBNN_STANDIN", &script)
        .output()
        .unwrap();
    let stderr = text(&out.stderr);
    let results = read_json(&dir.join("results.json"));
    let errors = schema_errors(&results);
    assert!(errors.is_empty(), "{}", errors.join("\n"));
    assert!(stderr.contains("WebNN runs on a JavaScript stand-in for tests"), "the output says it is a stand-in:\n{stderr}");
    (out.status.code(), results, stderr)
}

/// In Chromium alone: the stand-in is JavaScript, the same in either browser, and what is each
/// browser's own (its WebNN, or why it has none) is
/// `webnn_beside_webgpu_in_real_chromium_and_firefox_is_unavailable_with_each_browsers_reason`.
#[test]
fn stand_in_webnn_runs_every_webnn_kernel_through_the_page_with_checks_passing_in_chromium() {
    eprintln!("WebNN here is the tests' JavaScript stand-in (harness/tests/webnn-standin.js), not a backend");
    let (code, results, stderr) = run_on_stand_in("webnn-stand-in", false, &["--browser", "chrome", "--filter", WEBNN_KERNELS]);
    assert_eq!(code, Some(0), "{stderr}");
    let planned = text(&harness(&["list", "--suite", "quick", "--filter", WEBNN_KERNELS]).stdout).lines().count();
    for run in results["runs"].as_array().unwrap() {
        let label = run["browser"].as_str().unwrap();
        assert_eq!(run["status"], "completed", "{label}");
        assert!(run["adapter"]["description"].as_str().unwrap().contains("stand-in"), "{label}: labelled a stand-in: {:#}", run["adapter"]);
        let cases = run["cases"].as_array().unwrap();
        assert_eq!(cases.len(), planned, "{label}");
        let kernels: std::collections::BTreeSet<&str> = cases.iter().map(|c| c["kernel"].as_str().unwrap()).collect();
        assert_eq!(kernels.len(), WEBNN_KERNELS.split(',').count(), "{label}: every WebNN kernel");
        for case in cases {
            assert_eq!(case["status"], "passed", "{label}: {case:#}");
            assert_eq!(case["correctness"]["passed"], true);
            assert_eq!(case["samples"].as_array().unwrap().len(), 3);
            assert_eq!(case["timer"], "wallClock", "WebNN has no GPU timer: {case:#}");
        }
    }
}

#[test]
fn stand_in_webnn_returning_a_wrong_value_is_reported_wrong() {
    eprintln!("WebNN here is the tests' JavaScript stand-in, made to return one wrong value per output");
    let (code, results, stderr) = run_on_stand_in("webnn-stand-in-wrong", true, &["--browser", "chrome", "--filter", "add,matmul,softmax"]);
    assert_eq!(code, Some(1), "{stderr}");
    let cases = results["runs"][0]["cases"].as_array().unwrap();
    assert!(!cases.is_empty());
    for case in cases {
        assert_eq!(case["status"], "failed", "{case:#}");
        assert_eq!(case["correctness"]["mismatches"], 1, "exactly the one value the stand-in changed: {case:#}");
    }
}
