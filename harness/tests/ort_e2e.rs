//! End-to-end tests of `--platform ort` (onnxruntime-web 1.30, installed by `ci/setup.sh` under
//! target/ort): both of its WebGPU execution providers run the ONNX file harness writes of each
//! model case, in headless Chromium (SwiftShader here) and Firefox (lavapipe here), and pass the
//! same f64 check as harness's own WebGPU run; a missing install is refused before any browser
//! starts, naming the command that installs it.

mod common;
use common::*;

/// The small ViT and Whisper encoders of [`models_on_ort`], with their case ids.
const VIT_AND_WHISPER: (&str, [&str; 2]) = (
    ",vit:size=32,patch=8,hidden=32,heads=4,layers=1,ffn=64,whisper:mels=16,frames=64,hidden=32,heads=4,layers=1,ffn=64",
    ["vit/2x17/seed=1", "whisper/2x32/seed=1"],
);

/// MiniLM (real weights, the first of its layers, two sentences of 8 tokens: its six layers are
/// one graph six times over, and SwiftShader takes seconds a pass), with `more` models (and their
/// case ids), whole passes, on both ORT execution providers in `browser` (harness's own WebGPU runs
/// of the same models are workloads_e2e's).
fn models_on_ort(browser: &str, more: (&str, &[&str])) {
    let models = format!("minilm{}", more.0);
    let (code, results, stderr) = run_checked(
        &format!("ort-{browser}"),
        &[
            "--model", &models,
            "--no-ops", "--batch", "2", "--seq", "8", "--layers", "1", "--browser", browser, "--platform", "ort",
            // Steady sampling keeps batches in flight: ORT's session must get its runs one at a time.
            "--samples", "3", "--warmup", "0", "--max-time", "1",
        ],
    );
    assert_eq!(code, Some(0), "stderr:\n{stderr}");
    let runs = results["runs"].as_array().unwrap();
    let platforms: Vec<&str> = runs.iter().map(|r| r["platform"].as_str().unwrap()).collect();
    assert_eq!(platforms, ["ort-webgpu", "ort-jsep"]);
    for run in runs {
        // Behind Firefox's completion timer ORT's steady batches are nudged as harness's own are.
        let nudges: u64 = run["cases"].as_array().unwrap().iter().filter_map(|c| c["nudges"].as_u64()).sum();
        if browser == "firefox" {
            assert!(nudges > 0 && run["completionLatency"]["nudgedWorkDone"].is_object(), "{}: not nudged", run["platform"]);
        }
        let ids: Vec<&str> = run["cases"].as_array().unwrap().iter().map(|c| c["id"].as_str().unwrap()).collect();
        let expected: Vec<&str> = ["minilm/2x8/seed=1"].into_iter().chain(more.1.iter().copied()).collect();
        assert_eq!(ids, expected, "{}", run["platform"]);
        for case in run["cases"].as_array().unwrap() {
            assert_eq!(case["status"], "passed", "{}: {case:#}", run["platform"]);
            let cosine = case["correctness"]["minCosine"].as_f64().unwrap_or_else(|| panic!("no cosine: {case:#}"));
            assert!(cosine >= kernels::model::MIN_COSINE, "{case:#}");
            // ORT's GPU time comes from the page's GPU timer, around the passes ORT records itself;
            // its dispatch count is unknown.
            assert_page_gpu_times(run, case);
            assert!(case["throughput"]["dispatchesPerRun"].is_null(), "{case:#}");
            // JSEP's own per-kernel GPU profile where the adapter has timestamps; the C++ provider has none.
            let timestamps = run["adapter"]["features"].as_array().is_some_and(|f| f.iter().any(|f| f == "timestamp-query"));
            let profile = &case["engineProfile"];
            assert_eq!(profile.is_object(), timestamps && run["platform"] == "ort-jsep", "{}: {case:#}", run["platform"]);
            if let Some(ops) = profile["byOp"].as_array() {
                assert!(ops.iter().any(|o| o["op"] == "MatMul") && profile["gpuMs"].as_f64().unwrap() > 0.0, "{profile:#}");
            }
        }
    }
}

#[test]
fn onnxruntime_web_runs_minilm_vit_and_whisper_with_both_execution_providers_in_headless_chromium() {
    models_on_ort("chrome", (VIT_AND_WHISPER.0, &VIT_AND_WHISPER.1));
}

/// In Firefox, MiniLM alone: the ONNX files of ViT and Whisper are harness's, checked in Chromium;
/// what is Firefox's own is that both providers run in it, nudged behind its completion timer.
#[test]
fn onnxruntime_web_runs_minilm_with_both_execution_providers_in_headless_firefox_nudged() {
    models_on_ort("firefox", ("", &[]));
}

#[test]
fn a_missing_onnxruntime_web_names_the_command_that_installs_it_before_any_browser_starts() {
    assert_missing_engine_named(
        &["--model", "vit:size=32,patch=8,hidden=32,heads=4,layers=1,ffn=64", "--no-ops", "--platform", "ort-jsep"],
        "--ort-dir",
        "npm install --prefix target/ort --no-save --no-package-lock onnxruntime-web@1.30.0",
    );
}
