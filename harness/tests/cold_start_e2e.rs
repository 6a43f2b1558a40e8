//! End-to-end tests of `harness run --cold-start`: every sample is a new page in a fresh browser
//! profile, timed from navigation to the first output read back, in phases, and checked like a
//! steady case; in headless Chromium (SwiftShader here) and Firefox (lavapipe here), on harness's
//! own WebGPU (pipelines created the usual way, and precompiled) and on onnxruntime-web; a
//! CLIP-shaped pair's two encoders loaded one after the other, and at once.

mod common;
use common::*;
use serde_json::Value;

/// How far the phases' sum may fall short of the wall time harness saw, from the page's
/// navigation (`performance.timeOrigin`) to the result's arrival: the result's POST and the
/// server's hand-over. The two are read on different clocks (browser and harness, one machine).
const SLACK_MS: f64 = 250.0;

/// Runs `model` cold, `pages` fresh pages a case, in `browser` on harness's WebGPU and ORT's
/// execution provider `ort`, and checks every case: passed, one sample a page, the phases of its
/// engine adding up to the wall time harness saw. `suffixes`: the cold cases each pass becomes.
/// With no profile seed yet, Firefox is started once first to keep one, so that every fresh page's
/// profile starts alike; Chromium's profiles carry nothing.
fn cold_start(browser: &str, model: &str, ort: &str, pages: usize, suffixes: &[&str]) {
    let n = pages.to_string();
    let platforms = format!("webgpu,{ort}");
    let seeds = out_dir(&format!("cold-{browser}-seeds"));
    let (code, results, stderr) = run_checked_with(
        &format!("cold-{browser}"),
        &["--model", model, "--batch", "1", "--seq", "8", "--layers", "1", "--cold-start", &n, "--browser", browser, "--platform", &platforms],
        &[("HARNESS_PROFILE_SEEDS", seeds.to_str().unwrap())],
    );
    assert_eq!(code, Some(0), "stderr:\n{stderr}");
    let runs = results["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2);
    for run in runs {
        let platform = run["platform"].as_str().unwrap();
        let cases = run["cases"].as_array().unwrap();
        let ids: Vec<&str> = cases.iter().map(|c| c["id"].as_str().unwrap()).collect();
        assert!(ids.len() == suffixes.len() && ids.iter().zip(suffixes).all(|(id, s)| id.ends_with(s)), "{ids:?}");
        for case in cases {
            if platform == ort && case["id"].as_str().unwrap().contains("+precompile") {
                assert_eq!(case["status"], "unsupported", "ORT creates its own pipelines: {case:#}");
                continue;
            }
            assert_eq!(case["status"], "passed", "{platform}: {case:#}");
            check_phases(platform, case, pages);
        }
    }
    assert!(stderr.contains("first result") && stderr.contains("fresh pages"), "the terminal shows each cold start:\n{stderr}");
    let firefox = browser == "firefox";
    assert_eq!(stderr.contains("starting Firefox once to keep its startup cache"), firefox, "{stderr}");
    for run in runs {
        assert_eq!(run["browserInfo"]["profileSeed"].is_string(), firefox, "{:#}", run["browserInfo"]);
    }
}

/// A passed cold-start case: `pages` samples, each the sum of its page's phases (named as its
/// engine names them), and that sum within [`SLACK_MS`] below the wall time harness saw.
fn check_phases(platform: &str, case: &Value, pages: usize) {
    let cold = &case["coldStart"];
    let expected: &[&str] = match platform {
        "webgpu" => &["device", "fetch", "upload", "pipelines", "dispatch", "result"],
        _ => &["engine", "fetch", "onnx", "session", "dispatch", "result"],
    };
    let samples = case["samples"].as_array().unwrap();
    let measured = cold["pages"].as_array().unwrap();
    assert_eq!((samples.len(), measured.len()), (pages, pages), "{case:#}");
    assert_eq!(case["timer"], "wallClock", "{case:#}");
    assert!(case["throughput"]["perSecond"].is_null(), "a first run is no rate: {case:#}");
    assert_eq!(cold["precompile"], case["id"].as_str().unwrap().contains("+precompile"));
    for (sample, page) in samples.iter().zip(measured) {
        let phases = page["phases"].as_array().unwrap();
        let names: Vec<&str> = phases.iter().map(|p| p["name"].as_str().unwrap()).collect();
        assert_eq!(names, expected, "{platform}");
        let sum: f64 = phases.iter().map(|p| p["ms"].as_f64().unwrap()).sum();
        let first_result = sample["wallMs"].as_f64().unwrap();
        assert!((sum - first_result).abs() < 1e-6, "the sample is the phases' sum: {sum} vs {first_result}");
        let seen = page["arrivedMs"].as_f64().unwrap() - page["timeOriginMs"].as_f64().unwrap();
        assert!(seen >= sum - 5.0 && seen - sum <= SLACK_MS, "{platform}: the phases add up to {sum:.1} ms, harness saw {seen:.1} ms from navigation to the result");
    }
    let medians: Vec<&str> = cold["medianPhases"].as_array().unwrap().iter().map(|p| p["name"].as_str().unwrap()).collect();
    assert_eq!(medians, expected);
}

#[test]
fn a_clip_shaped_pair_starts_cold_in_headless_firefox_its_encoders_loaded_in_turn_and_at_once_on_webgpu_and_ort_jsep() {
    // MiniLM's real weights (one of its layers), so the fetch phase moves them, beside a small ViT
    // as wide; each pair is checked against the reference of both encoders.
    let suffixes = ["/cold", "/cold+precompile", "/cold+parallel", "/cold+precompile+parallel"];
    cold_start("firefox", "clip:size=32,patch=8,layers=1,ffn=64,text_layers=1", "ort-jsep", 1, &suffixes);
}

#[test]
fn cold_starts_in_headless_chromium_add_up_phase_by_phase_on_webgpu_precompiled_or_not_and_on_ort_webgpu() {
    cold_start("chrome", "vit:size=32,patch=8,hidden=32,heads=4,layers=1,ffn=64", "ort-webgpu", 1, &["/cold", "/cold+precompile"]);
}
