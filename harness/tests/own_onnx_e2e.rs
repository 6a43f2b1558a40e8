//! End-to-end tests of `harness run --onnx`: small models written by the ONNX project's own Python
//! package (tests/onnx-models/make.py: an MLP, an embedding lookup with int64 ids and a mask, the
//! MLP with external data, an int8 model in the pattern onnxruntime's quantize_dynamic writes,
//! and one with an operator the reference lacks) run on onnxruntime-web's three providers in
//! headless Chromium and Firefox, each output checked against tract-onnx run natively; a
//! reference perturbed on disk fails the case, naming the output; bad input is refused before any
//! browser starts.

mod common;
use common::*;
use serde_json::Value;

fn model(name: &str) -> String {
    workspace().join("harness/tests/onnx-models").join(name).display().to_string()
}

/// `id`'s case in `run`.
fn case<'a>(run: &'a Value, id: &str) -> &'a Value {
    run["cases"].as_array().unwrap().iter().find(|c| c["id"] == id).unwrap_or_else(|| panic!("{}: no {id}", run["platform"]))
}

/// Every model on `platforms` in `browser`: each passes, but the one whose operator tract lacks,
/// which reads unchecked, naming it.
fn every_model_on(browser: &str, platforms: &str) {
    let files = ["mlp.onnx", "embed.onnx", "external.onnx", "int8.onnx", "fastgelu.onnx"].map(model).join(",");
    let (code, results, stderr) = run_checked(
        &format!("own-onnx-{browser}"),
        &["--onnx", &files, "--dim", "batch=2", "--dim", "seq=4", "--browser", browser, "--platform", platforms, "--samples", "3", "--warmup", "0", "--max-time", "1"],
    );
    assert_eq!(code, Some(0), "{stderr}");
    let runs = results["runs"].as_array().unwrap();
    assert_eq!(runs.len(), platforms.split(',').count(), "{stderr}");
    for run in runs {
        for id in ["mlp.onnx/batch=2", "embed.onnx/batch=2,seq=4", "external.onnx/batch=2", "int8.onnx/batch=2"] {
            let c = case(run, id);
            assert_eq!(c["status"], "passed", "{}: {c:#}", run["platform"]);
            assert!(c["correctness"]["reference"].as_str().is_some_and(|r| r.contains("tract-onnx")), "{c:#}");
            assert!(c["samples"].as_array().is_some_and(|s| s.len() == 3), "{c:#}");
        }
        let unchecked = case(run, "fastgelu.onnx/batch=2");
        assert_eq!(unchecked["status"], "unchecked", "{unchecked:#}");
        assert!(unchecked["message"].as_str().unwrap().contains("`com.microsoft.FastGelu`"), "{unchecked:#}");
        assert!(!unchecked["samples"].as_array().unwrap().is_empty(), "measured all the same: {unchecked:#}");
        // On WebGPU, the page's GPU timer times ORT's passes; the CPU provider has wall time only.
        if run["platform"] == "ort-wasm" {
            assert!(case(run, "mlp.onnx/batch=2")["samples"].as_array().unwrap().iter().all(|s| s["gpuMs"].is_null()));
        } else {
            assert_page_gpu_times(run, case(run, "mlp.onnx/batch=2"));
        }
    }
}

#[test]
fn own_onnx_models_run_and_pass_on_all_three_onnxruntime_web_providers_in_headless_chromium() {
    every_model_on("chrome", "ort-webgpu,ort-jsep,ort-wasm");
}

#[test]
fn own_onnx_models_run_and_pass_on_onnxruntime_web_in_headless_firefox() {
    every_model_on("firefox", "ort-webgpu,ort-wasm");
}

#[test]
fn a_perturbed_reference_fails_the_case_naming_the_output() {
    let cache = tempfile::tempdir().unwrap();
    let env = [("HARNESS_REFERENCE_CACHE", cache.path().to_str().unwrap())];
    let args = ["--onnx", &model("mlp.onnx"), "--dim", "batch=2", "--browser", "chrome", "--platform", "ort-wasm", "--samples", "2", "--warmup", "0"];
    let (code, results, stderr) = run_checked_with("own-onnx-kept", &args, &env);
    assert_eq!((code, &results["runs"][0]["cases"][0]["status"]), (Some(0), &Value::from("passed")), "{stderr}");
    // The kept reference: `logits` (2×8 values) then `hidden` (2×32); one of `hidden`'s is moved.
    let kept: Vec<_> = std::fs::read_dir(cache.path()).unwrap().map(|e| e.unwrap().path()).filter(|p| p.file_name().unwrap().to_str().unwrap().starts_with("mlp.onnx")).collect();
    assert_eq!(kept.len(), 1, "{kept:?}");
    let mut bytes = std::fs::read(&kept[0]).unwrap();
    let at = 20 * 8;
    let value = f64::from_le_bytes(bytes[at..at + 8].try_into().unwrap());
    bytes[at..at + 8].copy_from_slice(&(value + 1.0).to_le_bytes());
    std::fs::write(&kept[0], bytes).unwrap();
    let (code, results, stderr) = run_checked_with("own-onnx-perturbed", &args, &env);
    let c = &results["runs"][0]["cases"][0];
    assert_eq!((code, &c["status"]), (Some(1), &Value::from("failed")), "{stderr}");
    assert!(c["message"].as_str().unwrap().starts_with("output `hidden`"), "{c:#}");
    // Read from the disk cache, the reference still names the engine that made it.
    assert!(c["correctness"]["reference"].as_str().is_some_and(|r| r.contains("tract-onnx")), "{c:#}");
}

#[test]
fn bad_onnx_input_is_refused_before_any_browser_starts() {
    let dir = tempfile::tempdir().unwrap();
    let notes = dir.path().join("notes.onnx");
    std::fs::write(&notes, "plain text").unwrap();
    let alone = dir.path().join("external.onnx");
    std::fs::copy(model("external.onnx"), &alone).unwrap();
    let mlp = model("mlp.onnx");
    let ir14 = model("ir14.onnx");
    let cases: [(Vec<&str>, &str); 5] = [
        (vec!["--onnx", &ir14, "--dim", "batch=1"], "ONNX IR version 14, newer than onnxruntime-web"),
        (vec!["--onnx", notes.to_str().unwrap()], "not an ONNX model"),
        (vec!["--onnx", alone.to_str().unwrap(), "--dim", "batch=1"], "keep the external-data file beside the model"),
        (vec!["--onnx", &mlp, "--dim", "batch=1", "--dim", "tokens=4"], "--dim tokens: no input of"),
        (vec!["--onnx", &mlp, "--dim", "batch=1", "--input", "input_ids=0..9"], "--input input_ids: no model has an input called"),
    ];
    for (args, expected) in cases {
        let mut all = vec!["run", "--browser", "chrome", "--platform", "ort-wasm"];
        all.extend(&args);
        let out = harness(&all);
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(expected), "{args:?}: {stderr}");
        assert!(!stderr.contains("starting"), "no browser starts: {stderr}");
    }
}
