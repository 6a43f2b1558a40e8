//! End-to-end tests of `--platform tfjs` (TensorFlow.js 4.22's WebGPU backend, installed by
//! `ci/setup.sh` under target/tfjs): beside harness's own WebGPU kernels in headless Chromium
//! (SwiftShader here) and Firefox (lavapipe here), on the same cases and checks; and a missing
//! install refused before any browser starts.

mod common;
use common::*;
use serde_json::Value;

/// The kernels TensorFlow.js has an op for, as README lists them ("Against TensorFlow.js").
const TFJS_KERNELS: [&str; 10] = ["matmul", "matmul_naive", "matmul_tiled", "add", "sub", "mul", "div", "relu", "tanh", "softmax"];

/// Runs every kernel of [`TFJS_KERNELS`], and `rmsnorm` (which TensorFlow.js has no op for), on
/// webgpu and tfjs in one run in `browser`, isolated with few samples to stay quick, and checks
/// that each kernel's cases passed their check on both platforms, that tfjs's carry their timer,
/// and that rmsnorm is unsupported on tfjs with the reason and no failure.
fn webgpu_beside_tfjs(browser: &str) {
    let filter = [&TFJS_KERNELS[..], &["rmsnorm"]].concat().join(",");
    let (code, results, stderr) = run_checked(
        &format!("tfjs-{browser}"),
        &[
            "--platform", "webgpu,tfjs", "--filter", &filter, "--suite", "quick", "--browser", browser, "--headless",
            "--sampling", "isolated", "--samples", "3", "--warmup", "1", "--max-time", "1",
        ],
    );
    assert_eq!(code, Some(0), "stderr:\n{stderr}");
    let runs = results["runs"].as_array().unwrap();
    let platforms: Vec<&str> = runs.iter().map(|r| r["platform"].as_str().unwrap()).collect();
    assert_eq!(platforms, ["webgpu", "tfjs"]);
    let cases_of = |run: &Value, kernel: &str| -> Vec<Value> { run["cases"].as_array().unwrap().iter().filter(|c| c["kernel"] == kernel).cloned().collect() };
    for kernel in TFJS_KERNELS {
        let (webgpu, tfjs) = (cases_of(&runs[0], kernel), cases_of(&runs[1], kernel));
        assert!(!tfjs.is_empty() && tfjs.len() == webgpu.len(), "{kernel}: {} webgpu and {} tfjs cases", webgpu.len(), tfjs.len());
        for (platform, case) in webgpu.iter().map(|c| ("webgpu", c)).chain(tfjs.iter().map(|c| ("tfjs", c))) {
            assert_eq!(case["status"], "passed", "{platform}: {case:#}");
            assert_eq!(case["correctness"]["mismatches"], 0, "{platform}: {case:#}");
        }
        for case in tfjs {
            assert_page_gpu_times(&runs[1], &case);
        }
    }
    assert!(runs[1]["completionLatency"].is_object(), "tfjs runs have the browser's completion latency");
    let rmsnorm = cases_of(&runs[1], "rmsnorm");
    assert!(!rmsnorm.is_empty());
    for case in rmsnorm {
        assert_eq!(case["status"], "unsupported", "{case:#}");
        assert!(case["message"].as_str().unwrap().contains("no op for `rmsnorm`"), "{case:#}");
    }
    assert!(runs[0]["cases"].as_array().unwrap().iter().all(|c| c["status"] == "passed"), "webgpu runs rmsnorm");
}

#[test]
fn tfjs_runs_beside_webgpu_in_headless_chromium() {
    webgpu_beside_tfjs("chrome");
}

#[test]
fn tfjs_runs_beside_webgpu_in_headless_firefox() {
    webgpu_beside_tfjs("firefox");
}

#[test]
fn a_missing_tfjs_install_is_a_clear_error_before_any_browser_starts() {
    let dir = out_dir("tfjs-missing");
    std::fs::create_dir_all(&dir).unwrap();
    let mark = dir.join("started");
    let fake = dir.join("fake-browser");
    std::fs::write(&fake, format!("#!/bin/sh\ntouch '{}'\n", mark.display())).unwrap();
    std::fs::set_permissions(&fake, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let fake = fake.to_str().unwrap();
    let empty = dir.join("no-tfjs");
    std::fs::create_dir_all(&empty).unwrap();
    let out = harness(&[
        "run", "--platform", "webgpu,tfjs", "--filter", "matmul", "--suite", "quick", "--tfjs-dir", empty.to_str().unwrap(),
        "--browser-path", fake, "--driver-path", fake, "--out", dir.join("out").to_str().unwrap(),
    ]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(!mark.exists(), "a browser or driver was started: {stderr}");
    for want in ["TensorFlow.js 4.22.0 is not installed", "bash ci/setup.sh", "npm install --prefix target/tfjs", "--tfjs-dir"] {
        assert!(stderr.contains(want), "`{want}` not in: {stderr}");
    }
}
