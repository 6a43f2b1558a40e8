//! End-to-end tests of models and user kernels in real headless Chromium (SwiftShader here) and
//! native wgpu (llvmpipe/lavapipe here): MiniLM with its real weights, a two-layer slice of the
//! TinyLlama-shaped decoder, the example kernel manifests, and a malformed manifest.

mod common;
use common::*;
use serde_json::Value;

/// Runs `harness run ARGS --json --out DIR` and returns the results, after checking the schema.
fn run(name: &str, args: &[&str]) -> (Option<i32>, Value, String) {
    let _lock = BROWSER.lock().unwrap_or_else(|e| e.into_inner());
    let dir = out_dir(name);
    let mut all = vec!["run", "--json", "--out", dir.to_str().unwrap()];
    all.extend_from_slice(args);
    let out = harness(&all);
    let stderr = text(&out.stderr);
    let results = read_json(&dir.join("results.json"));
    let errors = schema_errors(&results);
    assert!(errors.is_empty(), "results.json violates its schema:\n{}", errors.join("\n"));
    assert_eq!(count_processes("chromedriver"), 0, "chromedriver left running");
    (out.status.code(), results, stderr)
}

/// Every case of every run, as `(run label, case)`.
fn cases(results: &Value) -> Vec<(String, Value)> {
    let mut out = Vec::new();
    for run in results["runs"].as_array().unwrap() {
        let label = format!("{}/{}", run["browser"].as_str().unwrap(), run["platform"].as_str().unwrap());
        for case in run["cases"].as_array().unwrap() {
            out.push((label.clone(), case.clone()));
        }
    }
    out
}

#[test]
fn minilm_embeddings_in_headless_chromium_match_the_native_reference() {
    let (code, results, stderr) =
        run("minilm", &["--model", "minilm", "--batch", "5", "--seq", "16", "--samples", "1", "--warmup", "0", "--timeout", "600"]);
    assert_eq!(code, Some(0), "stderr:\n{stderr}");
    let all = cases(&results);
    assert_eq!(all.len(), 1);
    let (_, case) = &all[0];
    assert_eq!(case["status"], "passed", "{case:#}");
    let cosine = case["correctness"]["minCosine"].as_f64().unwrap();
    eprintln!("MiniLM on Chromium WebGPU: least cosine to the native f64 reference {cosine:.6}");
    assert!(cosine >= 0.999, "{cosine}");
    assert_eq!(case["throughput"]["item"], "sentence");
    assert_eq!(case["throughput"]["perRun"], 5.0);
    assert!(case["throughput"]["perSecond"].as_f64().unwrap() > 0.0);
    assert_eq!(results["settings"]["cases"][0]["workload"]["type"], "encoder");
}

#[test]
fn a_two_layer_tinyllama_slice_runs_prefill_and_decode_in_chromium_and_agrees_with_native() {
    let (code, results, stderr) = run(
        "tinyllama",
        &["--model", "tinyllama", "--layers", "2", "--context", "4", "--platform", "webgpu,native", "--samples", "1", "--warmup", "0", "--timeout", "600"],
    );
    assert_eq!(code, Some(0), "stderr:\n{stderr}");
    let all = cases(&results);
    for run in ["chrome/webgpu", "wgpu/native"] {
        let mine: Vec<&Value> = all.iter().filter(|(l, _)| l == run).map(|(_, c)| c).collect();
        assert_eq!(mine.len(), 2 + kernels::model::decoder::OPS.len(), "{run}");
        for case in &mine {
            assert_eq!(case["status"], "passed", "{run}: {case:#}");
            assert!(case["correctness"]["minCosine"].as_f64().unwrap() >= 0.999, "{run}: {}", case["id"]);
        }
        for phase in ["tinyllama.prefill/2x4/seed=1", "tinyllama.decode/2x4/seed=1"] {
            let case = mine.iter().find(|c| c["id"] == phase).unwrap_or_else(|| panic!("{run} has no {phase}"));
            assert_eq!(case["throughput"]["item"], "token");
            assert!(case["throughput"]["perSecond"].as_f64().unwrap() > 0.0);
        }
        assert!(mine.iter().any(|c| c["id"] == "tinyllama.op.attention/1x4/seed=1" && c["throughput"].is_null()));
    }
    let html = std::fs::read_to_string(std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("tinyllama/report.html")).unwrap();
    // Tera escapes the slash of `tokens/s`.
    assert!(html.contains("id=\"models-table\"") && html.contains("tokens&#x2F;s"), "the report shows model rows");
}

#[test]
fn both_example_kernel_manifests_run_in_chromium_and_natively_and_agree() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/kernels");
    let saxpy = format!("{root}/saxpy.toml");
    let histogram = format!("{root}/histogram.toml");
    let (code, results, stderr) =
        run("user-kernels", &["--kernel", &saxpy, "--kernel", &histogram, "--platform", "webgpu,native", "--samples", "3", "--warmup", "1"]);
    assert_eq!(code, Some(0), "stderr:\n{stderr}");
    let all = cases(&results);
    assert_eq!(all.len(), 4);
    for (run, case) in &all {
        assert_eq!(case["status"], "passed", "{run}: {case:#}");
        let reference = case["correctness"]["reference"].as_str().unwrap_or_default();
        assert!(reference.starts_with("native wgpu"), "{run}: compared with {reference:?}");
        assert_eq!(case["correctness"]["mismatches"], 0);
    }
    assert!(all.iter().any(|(_, c)| c["kernel"] == "histogram"));
}

#[test]
fn a_malformed_manifest_is_a_clear_error_naming_the_field() {
    let dir = out_dir("bad-manifest");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("k.wgsl"), "@group(0) @binding(0) var<storage, read_write> y: array<f32>;\n@compute @workgroup_size(64) fn main() {}\n").unwrap();
    let manifest = dir.join("bad.toml");
    std::fs::write(&manifest, "wgsl = \"k.wgsl\"\nworkgroup_size = [64]\nworkgroups = [1]\n[[buffers]]\nbinding = 0\nlen = 0\noutput = true\n").unwrap();
    let out = harness(&["run", "--kernel", manifest.to_str().unwrap()]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("bad.toml") && stderr.contains("buffers[0].len"), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}
