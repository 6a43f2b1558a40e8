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
        // Where ORT placed the nodes, from its log: the embedding's int64 Cast falls back to the CPU.
        let placed = case(run, "embed.onnx/batch=2,seq=4")["placement"].as_array().cloned().unwrap_or_default();
        if run["platform"] == "ort-wasm" {
            assert!(placed.is_empty(), "the CPU provider has no fallback to tell: {placed:?}");
        } else {
            let cpu = placed.iter().find(|p| p["provider"] == "CPUExecutionProvider").unwrap_or_else(|| panic!("{}: {placed:?}", run["platform"]));
            assert_eq!(cpu["listed"], serde_json::json!(["Cast ()"]), "{}: {placed:?}", run["platform"]);
            let gpu = placed.iter().find(|p| p["provider"] != "CPUExecutionProvider").unwrap();
            assert!(gpu["nodes"].as_u64().unwrap() >= 4, "{placed:?}");
        }
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

/// A cold start of your own file: each sample a fresh page, from navigation to the first output
/// read back, checked, in onnxruntime-web's phases (the file and its external data fetched, no
/// ONNX written).
#[test]
fn a_cold_start_of_your_own_onnx_file_is_measured_in_fresh_pages_and_checked() {
    let args = ["--onnx", &model("external.onnx"), "--dim", "batch=2", "--cold-start", "2", "--browser", "chrome", "--platform", "ort-wasm,ort-webgpu"];
    let (code, results, stderr) = run_checked("own-onnx-cold", &args);
    assert_eq!(code, Some(0), "{stderr}");
    for run in results["runs"].as_array().unwrap() {
        let ids: Vec<&str> = run["cases"].as_array().unwrap().iter().map(|c| c["id"].as_str().unwrap()).collect();
        assert_eq!(ids, ["external.onnx/batch=2/cold"], "onnxruntime-web's pipelines are its own: nothing to precompile");
        let c = &run["cases"][0];
        assert_eq!((&c["status"], &c["timer"]), (&Value::from("passed"), &Value::from("wallClock")), "{}: {c:#}", run["platform"]);
        let pages = c["coldStart"]["pages"].as_array().unwrap();
        assert_eq!(pages.len(), 2, "{c:#}");
        for page in pages {
            let names: Vec<&str> = page["phases"].as_array().unwrap().iter().map(|p| p["name"].as_str().unwrap()).collect();
            assert_eq!(names, ["engine", "fetch", "session", "dispatch", "result"], "{c:#}");
        }
    }
}

/// Real inputs (`--inputs`) from files NumPy and the safetensors package wrote: their arrays fix
/// the dims, are converted to the inputs' types (int32 mask to int64, float64 to float32), fed to
/// the page and to the reference alike, and every output passes.
#[test]
fn given_inputs_from_numpy_and_safetensors_files_feed_the_page_and_the_reference() {
    for (name, onnx, inputs, id) in [("npz", "embed.onnx", "embed_inputs.npz", "embed.onnx/batch=3,seq=5"), ("safetensors", "mlp.onnx", "mlp_inputs.safetensors", "mlp.onnx/batch=3")] {
        let args = ["--onnx", &model(onnx), "--inputs", &model(inputs), "--browser", "chrome", "--platform", "ort-wasm,ort-webgpu", "--samples", "2"];
        let (code, results, stderr) = run_checked(&format!("own-onnx-given-{name}"), &args);
        assert_eq!(code, Some(0), "{stderr}");
        for run in results["runs"].as_array().unwrap() {
            let c = case(run, id);
            assert_eq!(c["status"], "passed", "{}: {c:#}", run["platform"]);
        }
    }
}

/// onnxruntime-web's WebNN provider: real Chromium and Firefox have no WebNN backend here, so each
/// run is unavailable with its browser's reason, its case unsupported, not failed (exit status 2:
/// nothing measured).
#[test]
fn ort_webnn_in_real_chromium_and_firefox_is_unavailable_with_each_browsers_reason() {
    let args = ["--onnx", &model("mlp.onnx"), "--dim", "batch=2", "--browser", "chrome,firefox", "--platform", "ort-webnn", "--samples", "2"];
    let (code, results, stderr) = run_checked("own-onnx-webnn-unavailable", &args);
    assert_eq!(code, Some(2), "nothing could be measured, and nothing failed:\n{stderr}");
    for run in results["runs"].as_array().unwrap() {
        assert_eq!((&run["platform"], &run["status"]), (&Value::from("ort-webnn"), &Value::from("unavailable")), "{run:#}");
        assert_eq!(run["cases"][0]["status"], "unsupported", "{run:#}");
    }
    assert!(stderr.contains("ort-webnn is unavailable in chrome: navigator.ml.createContext"), "{stderr}");
    assert!(stderr.contains("ort-webnn is unavailable in firefox: navigator.ml is missing"), "{stderr}");
}

/// The same through the tests' JavaScript WebNN stand-in (`webnn-standin.js`, no backend: it
/// measures nothing), which has no `gemm`: ORT's WebNN provider takes the graph but the fused
/// MatMul+Add, which falls back to ORT's CPU provider, and the case names it. The output is checked.
#[test]
fn ort_webnn_on_the_webnn_stand_in_passes_and_names_the_nodes_that_fell_back_to_the_cpu() {
    let standin = workspace().join("harness/tests/webnn-standin.js");
    let env = [("HARNESS_WEBNN_STANDIN", standin.to_str().unwrap())];
    let args = ["--onnx", &model("mlp.onnx"), "--dim", "batch=2", "--browser", "chrome", "--platform", "ort-webnn", "--samples", "2"];
    let (code, results, stderr) = run_checked_with("own-onnx-webnn-standin", &args, &env);
    assert_eq!(code, Some(0), "{stderr}");
    let run = &results["runs"][0];
    assert_eq!(run["adapter"]["vendor"], "stand-in", "{run:#}");
    let c = case(run, "mlp.onnx/batch=2");
    assert_eq!(c["status"], "passed", "{c:#}");
    let placed = c["placement"].as_array().unwrap();
    let on = |ep: &str| placed.iter().find(|p| p["provider"] == ep).unwrap_or_else(|| panic!("no {ep}: {placed:?}"));
    assert!(on("WebNNExecutionProvider")["nodes"].as_u64().unwrap() >= 1, "{placed:?}");
    assert_eq!(on("CPUExecutionProvider")["listed"], serde_json::json!(["Gemm (/MatMulAddFusion)"]), "{placed:?}");
    assert!(stderr.contains("1 of 3 nodes on the CPU: Gemm"), "the terminal says so:\n{stderr}");
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
    let (npz, tensors) = (model("embed_inputs.npz"), model("mlp_inputs.safetensors"));
    let cases: [(Vec<&str>, &str); 8] = [
        (vec!["--onnx", &ir14, "--dim", "batch=1"], "ONNX IR version 14, newer than onnxruntime-web"),
        (vec!["--onnx", notes.to_str().unwrap()], "not an ONNX model"),
        (vec!["--onnx", alone.to_str().unwrap(), "--dim", "batch=1"], "keep the external-data file beside the model"),
        (vec!["--onnx", &mlp, "--dim", "batch=1", "--dim", "tokens=4"], "--dim tokens: no input of"),
        (vec!["--onnx", &mlp, "--dim", "batch=1", "--input", "input_ids=0..9"], "--input input_ids: no model has an input called"),
        (vec!["--onnx", &mlp, "--inputs", &npz], "arrays `attention_mask`, `input_ids` are no inputs of the models; their inputs are: x"),
        (vec!["--onnx", &mlp, "--inputs", &tensors, "--dim", "batch=2"], "array `x` fixes `batch` at 3, --dim gives 2"),
        (vec!["--onnx", &mlp, "--inputs", &ir14], "not a .npz (numpy.savez) or .safetensors file"),
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

/// A model in float16 throughout (f16.onnx: input, weights and outputs, read back as f16 and
/// widened) is checked with the f16 bound (row cosine 0.99, 3e-2 of a row's RMS). Where the
/// device has `shader-f16` (lavapipe's, in Firefox) every provider passes; Chromium's SwiftShader
/// has none: there the CPU provider passes, the C++ WebGPU provider refuses the f16 shader by name,
/// and JSEP, which runs on without it and writes no output (all zeros), fails the check.
#[test]
fn an_f16_model_passes_the_f16_check_on_every_provider_whose_device_has_shader_f16() {
    let f16 = model("f16.onnx");
    let args = ["--onnx", &f16, "--dim", "batch=2", "--browser", "chrome,firefox", "--platform", "ort-wasm,ort-webgpu,ort-jsep", "--samples", "3", "--warmup", "0", "--max-time", "1"];
    let (code, results, stderr) = run_checked("own-onnx-f16", &args);
    let runs = results["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 6, "{stderr}");
    let mut all_passed = true;
    for run in runs {
        let who = format!("{}/{}", run["browser"], run["platform"]);
        let c = case(run, "f16.onnx/batch=2");
        let shader_f16 = run["adapter"]["features"].as_array().is_some_and(|f| f.iter().any(|f| f == "shader-f16"));
        if run["platform"] == "ort-wasm" || shader_f16 {
            assert_eq!(c["status"], "passed", "{who}: {c:#}");
            let check = &c["correctness"];
            assert_eq!((check["cosineThreshold"].as_f64(), check["tolerance"]["abs"].as_f64()), (Some(0.99), Some(3e-2)), "{who}: the f16 bound: {c:#}");
            assert_eq!(check["len"], 2 * 16 + 2 * 128, "{who}: `logits` and `hidden`: {c:#}");
            assert!(check["reference"].as_str().is_some_and(|r| r.contains("tract-onnx")), "{who}: {c:#}");
            assert_eq!(c["samples"].as_array().map(Vec::len), Some(3), "{who}: {c:#}");
        } else if run["platform"] == "ort-webgpu" {
            all_passed = false;
            assert_eq!(c["status"], "error", "{who}: {c:#}");
            assert!(c["message"].as_str().unwrap().contains("requires f16 but the device does not support it"), "{who}: {c:#}");
        } else {
            all_passed = false;
            assert_eq!(c["status"], "failed", "{who}: never passed unwritten: {c:#}");
            assert!(c["message"].as_str().unwrap().starts_with("output `logits`"), "{who}: {c:#}");
        }
    }
    assert_eq!(code, Some(if all_passed { 0 } else { 1 }), "{stderr}");
}
