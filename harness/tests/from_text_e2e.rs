//! End-to-end tests of `harness run --from-text`: MiniLM from sentences to embeddings read back,
//! each sample one call timed in phases, in headless Chromium (SwiftShader here) and Firefox
//! (lavapipe here), on harness's own WebGPU (tokenizing in the page's WASM) and on
//! transformers.js 4.3.1 (installed by `ci/setup.sh` under target/transformers), both checked
//! against the same f64 reference; a missing transformers.js is refused before any browser starts,
//! naming the command that installs it.

mod common;
use common::*;

/// One sentence from text on both platforms in `browser`: each passes its check, and each sample
/// is the sum of its call's phases, named as its engine names them.
fn from_text(browser: &str) {
    let (code, results, stderr) = run_checked(
        &format!("from-text-{browser}"),
        &[
            // One of MiniLM's six layers (real weights): SwiftShader takes seconds a call of all six.
            "--model", "minilm", "--layers", "1", "--from-text", "--no-ops", "--batch", "1", "--seq", "8", "--browser", browser,
            "--platform", "webgpu,transformers", "--samples", "2", "--warmup", "0", "--max-time", "1",
        ],
    );
    assert_eq!(code, Some(0), "stderr:\n{stderr}");
    let runs = results["runs"].as_array().unwrap();
    let platforms: Vec<&str> = runs.iter().map(|r| r["platform"].as_str().unwrap()).collect();
    assert_eq!(platforms, ["webgpu", "transformers"]);
    for run in runs {
        let platform = run["platform"].as_str().unwrap();
        let cases = run["cases"].as_array().unwrap();
        // "The quick brown fox jumps over the lazy dog." is 12 tokens with [CLS] and [SEP]; the
        // model alone at the shape asked for runs beside it, on harness's platform only.
        let ids: Vec<&str> = cases.iter().map(|c| c["id"].as_str().unwrap()).collect();
        assert_eq!(ids, ["minilm/1x8/seed=1", "minilm/1x12/seed=1/from-text"], "{platform}");
        let alone = if platform == "webgpu" { "passed" } else { "unsupported" };
        assert_eq!(cases[0]["status"], alone, "{platform}: {:#}", cases[0]);
        let case = &cases[1];
        assert_eq!(case["status"], "passed", "{platform}: {case:#}");
        assert_eq!((&case["timer"], &case["sampling"]), (&"wallClock".into(), &"isolated".into()), "{case:#}");
        if platform == "transformers" {
            assert_page_gpu_times(run, case);
        }
        let expected: &[&str] = if platform == "webgpu" { &["tokenize", "run"] } else { &["tokenize", "run", "pool"] };
        let calls = case["fromText"]["calls"].as_array().unwrap();
        let samples = case["samples"].as_array().unwrap();
        assert_eq!(calls.len(), samples.len(), "{case:#}");
        for (call, sample) in calls.iter().zip(samples) {
            let names: Vec<&str> = call.as_array().unwrap().iter().map(|p| p["name"].as_str().unwrap()).collect();
            assert_eq!(names, expected, "{platform}");
            let sum: f64 = call.as_array().unwrap().iter().map(|p| p["ms"].as_f64().unwrap()).sum();
            assert!((sum - sample["wallMs"].as_f64().unwrap()).abs() < 1e-6, "{platform}: a sample is its call's phases' sum: {case:#}");
        }
    }
    assert!(stderr.contains("/from-text") && stderr.contains("): a call tokenize "), "the terminal shows each call's phases:\n{stderr}");
}

#[test]
fn minilm_from_text_runs_on_harness_and_transformers_js_in_headless_chromium() {
    from_text("chrome");
}

#[test]
fn minilm_from_text_runs_on_harness_and_transformers_js_in_headless_firefox() {
    from_text("firefox");
}

#[test]
fn a_missing_transformers_js_names_the_command_that_installs_it_before_any_browser_starts() {
    assert_missing_engine_named(
        &["--model", "minilm", "--from-text", "--platform", "transformers"],
        "--transformers-dir",
        "npm install --prefix target/transformers --no-save --no-package-lock --ignore-scripts --omit=optional @huggingface/transformers@4.3.1",
    );
}
