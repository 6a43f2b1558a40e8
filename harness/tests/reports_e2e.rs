//! End to end for statistics, baselines and reports: real runs (headless Chromium, and native
//! wgpu where no browser is needed), `harness compare` on a synthetic slowdown, `--replay`, and the
//! HTML report and `harness open` index opened in real headless Chromium through chromedriver.

mod common;

use common::*;
use serde_json::Value;
use std::path::Path;

/// A quick native run (no browser): `add` and `relu` at the quick shapes.
fn native_run(dir: &Path, extra: &[&str]) -> Value {
    let mut args = vec!["run", "--platform", "native", "--suite", "quick", "--filter", "add,relu", "--samples", "5", "--warmup", "1", "--out", dir.to_str().unwrap()];
    args.extend_from_slice(extra);
    let out = harness(&args);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    read_json(&dir.join("results.json"))
}

/// Replaces every case's samples with 30 draws around `median` ms (±3%, seeded), wall clock only.
fn with_synthetic_samples(mut results: Value, seed: u64, median: f64) -> Value {
    let mut rng = stats::rng::SplitMix64::new(seed);
    let mut next = || rng.next_f64();
    for case in results["runs"][0]["cases"].as_array_mut().unwrap() {
        let samples: Vec<Value> = (0..30).map(|_| serde_json::json!({"wallMs": median * (0.97 + 0.06 * next()), "gpuMs": null})).collect();
        case["samples"] = samples.into();
        case["gpu"] = Value::Null;
    }
    results
}

fn write(dir: &Path, results: &Value) {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join("results.json"), serde_json::to_string(results).unwrap()).unwrap();
}

#[test]
fn compare_classes_a_synthetic_slowdown_as_regressed_and_fails_the_gate() {
    let root = out_dir("compare");
    let measured = native_run(&root.join("measured"), &[]);
    write(&root.join("old"), &with_synthetic_samples(measured.clone(), 1, 1.0));
    write(&root.join("same"), &with_synthetic_samples(measured.clone(), 2, 1.0));
    write(&root.join("slow"), &with_synthetic_samples(measured, 3, 1.2));
    let dir = |n: &str| root.join(n).to_str().unwrap().to_string();

    let out = harness(&["compare", &dir("old"), &dir("slow"), "--fail-on-regression", "5", "--json"]);
    assert_eq!(out.status.code(), Some(1), "a 20% slowdown fails a 5% gate: {}", text(&out.stderr));
    let cmp: Value = serde_json::from_slice(&out.stdout).unwrap();
    for case in cmp["cases"].as_array().unwrap() {
        assert_eq!(case["change"]["class"], "regressed", "{case}");
        let pct = case["change"]["pct"].as_f64().unwrap();
        assert!((15.0..25.0).contains(&pct), "{case}");
    }

    let out = harness(&["compare", &dir("old"), &dir("same"), "--fail-on-regression", "5"]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(stdout.contains("0 regressed") && stdout.contains("regression gate passed"), "{stdout}");
    assert!(!stdout.contains("improved │") && !stdout.contains("regressed │"), "{stdout}");

    // A gate of 50% lets a 20% slowdown through; the Markdown names the regressions.
    let out = harness(&["compare", &dir("old"), &dir("slow"), "--fail-on-regression", "50", "--markdown"]);
    assert_eq!(out.status.code(), Some(0));
    assert!(text(&out.stdout).contains("**regressed**"), "{}", text(&out.stdout));

    // --out writes the new run's reports with the comparison in them.
    let out = harness(&["compare", &dir("old"), &dir("slow"), "--out", &dir("cmp")]);
    assert_eq!(out.status.code(), Some(0));
    let written = read_json(&root.join("cmp/results.json"));
    assert!(schema_errors(&written).is_empty(), "{:?}", schema_errors(&written));
    assert_eq!(written["baseline"]["cases"][0]["change"]["class"], "regressed");
    let junit = std::fs::read_to_string(root.join("cmp/junit.xml")).unwrap();
    let doc = roxmltree::Document::parse(&junit).unwrap();
    let cases = written["runs"][0]["cases"].as_array().unwrap().len().to_string();
    assert_eq!(doc.root_element().attribute("failures"), Some(cases.as_str()), "every case regressed: {junit}");

    // The same times, but the baseline measured on the H100 (its adapter as it reported itself,
    // docs/hardware): nothing is compared across the change of hardware, and the gate fails
    // saying so, rather than passing on what it never compared.
    let h100 = read_json(&workspace().join("docs/hardware/h100-native/default-results.json"));
    let mut on_gpu = read_json(&root.join("same/results.json"));
    on_gpu["runs"][0]["adapter"] = h100["runs"][0]["adapter"].clone();
    if on_gpu["runs"][0]["adapter"]["device"] == written["runs"][0]["adapter"]["device"] {
        on_gpu["runs"][0]["adapter"]["device"] = "a GPU this machine does not have".into();
    }
    write(&root.join("gpu"), &on_gpu);
    let out = harness(&["compare", &dir("gpu"), &dir("same"), "--fail-on-regression", "5", "--out", &dir("moved")]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains("wgpu/native ran on other hardware than the baseline's (baseline: NVIDIA H100 80GB HBM3 (Vulkan; driver: NVIDIA 580.159.04); now: ") && stdout.contains("REGRESSION GATE FAILED: 0 case(s)"), "{stdout}");
    let moved = read_json(&root.join("moved/results.json"));
    assert!(schema_errors(&moved).is_empty(), "{:?}", schema_errors(&moved));
    assert_eq!(moved["baseline"]["hardwareChanges"][0]["run"], "wgpu/native");
    assert!(moved["baseline"]["cases"].as_array().unwrap().iter().all(|c| c["change"].is_null() && c["note"].as_str().unwrap().starts_with("other hardware")), "{}", moved["baseline"]);
}

#[test]
fn save_baseline_then_compare_against_it_and_missing_baselines_are_named() {
    let root = out_dir("baseline-flow");
    let baselines = root.join("baselines");
    let b = baselines.to_str().unwrap();
    native_run(&root.join("first"), &["--save-baseline", "main", "--baseline-dir", b]);
    assert!(baselines.join("main/results.json").is_file());
    let second = native_run(&root.join("second"), &["--baseline", "main", "--baseline-dir", b]);
    assert!(schema_errors(&second).is_empty(), "{:?}", schema_errors(&second));
    let cmp = &second["baseline"];
    assert_eq!(cmp["name"], "main");
    assert_eq!(cmp["cases"].as_array().unwrap().len(), second["runs"][0]["cases"].as_array().unwrap().len());
    let summary = std::fs::read_to_string(root.join("second/summary.md")).unwrap();
    assert!(summary.contains("## Compared with baseline `main`"), "{summary}");

    let out = harness(&["run", "--platform", "native", "--baseline", "nope", "--baseline-dir", b]);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(err.contains("`nope`") && err.contains("main"), "the error lists the saved baselines: {err}");
    let out = harness(&["run", "--platform", "native", "--save-baseline", "../escape"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("letters, digits"), "{}", text(&out.stderr));
}

#[test]
fn replay_runs_the_same_plan_seeds_and_settings() {
    let root = out_dir("replay");
    let first = native_run(
        &root.join("first"),
        &["--seed", "7", "--target-ci", "40", "--max-time", "4", "--timeout", "30"],
    );
    let out = harness(&["run", "--replay", root.join("first").to_str().unwrap(), "--out", root.join("again").to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let again = read_json(&root.join("again/results.json"));
    let mut settings = [first["settings"].clone(), again["settings"].clone()];
    for s in &mut settings {
        s.as_object_mut().unwrap().remove("command");
    }
    assert_eq!(settings[0], settings[1]);
    assert_eq!(settings[0]["seed"], 7);
    let ids = |r: &Value| r["runs"][0]["cases"].as_array().unwrap().iter().map(|c| c["id"].clone()).collect::<Vec<_>>();
    assert_eq!(ids(&first), ids(&again));
    assert!(ids(&first).iter().all(|id| id.as_str().unwrap().ends_with("seed=7")));
    // Target CI or time budget ended every case, never the sample count.
    for case in again["runs"][0]["cases"].as_array().unwrap() {
        assert_ne!(case["stoppedBy"], "sampleCount", "{}", case["id"]);
    }

    let out = harness(&["run", "--replay", root.join("first").to_str().unwrap(), "--suite", "full"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("--replay"), "{}", text(&out.stderr));
}

/// Chromedriver's log of the page's console (`goog:loggingPrefs`), through its Selenium endpoint.
#[derive(Debug)]
struct BrowserLog;

impl fantoccini::wd::WebDriverCompatibleCommand for BrowserLog {
    fn endpoint(&self, base: &url::Url, session: Option<&str>) -> Result<url::Url, url::ParseError> {
        base.join(&format!("session/{}/se/log", session.unwrap_or_default()))
    }
    fn method_and_body(&self, _: &url::Url) -> (http::Method, Option<String>) {
        (http::Method::POST, Some(r#"{"type":"browser"}"#.into()))
    }
}

async fn js(client: &fantoccini::Client, script: &str) -> Value {
    client.execute(script, vec![]).await.unwrap_or_else(|e| panic!("{script}: {e}"))
}

#[tokio::test(flavor = "multi_thread")]
// The lock keeps browser tests apart for the whole test, awaits included, on purpose.
#[allow(clippy::await_holding_lock)]
async fn the_html_report_and_the_index_work_in_headless_chromium() {
    let _lock = BROWSER.lock().unwrap_or_else(|e| e.into_inner());
    let root = out_dir("report-in-browser");
    let runs = root.join("runs");
    let baselines = runs.join("baselines");
    let base_args = ["run", "--platform", "webgpu,wasm", "--suite", "quick", "--filter", "add,softmax", "--samples", "8", "--warmup", "2"];
    for (name, extra) in [("a", vec!["--save-baseline", "base"]), ("b", vec!["--baseline", "base"])] {
        let out_path = runs.join(name);
        let mut args: Vec<&str> = base_args.to_vec();
        args.extend(["--out", out_path.to_str().unwrap(), "--baseline-dir", baselines.to_str().unwrap()]);
        args.extend(extra);
        let out = tokio::task::block_in_place(|| harness(&args));
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    }
    let results = read_json(&runs.join("b/results.json"));
    let measured: Vec<(String, String)> = results["runs"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|r| r["cases"].as_array().unwrap().iter().map(move |c| (r["platform"].as_str().unwrap().to_string(), c["id"].as_str().unwrap().to_string())))
        .collect();
    assert_eq!(measured.len(), 8);

    let open = OpenServer::start(&runs);
    let driver = Chromedriver::start();
    let client = driver.headless(None).await;

    // The index lists the three runs (two runs and the saved baseline), each linking its report.
    client.goto(&open.url).await.unwrap();
    let links = js(&client, "return Array.from(document.querySelectorAll('#runs tbody a')).filter(a => a.textContent !== 'results.json' && a.getAttribute('href').endsWith('report.html')).map(a => a.textContent)").await;
    let mut names: Vec<&str> = links.as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
    names.sort();
    assert_eq!(names, ["a", "b", "baselines/base"]);

    client.goto(&format!("{}b/report.html", open.url)).await.unwrap();
    assert_eq!(js(&client, "return document.documentElement.getAttribute('data-ready')").await, "true", "the report's script ran to the end");
    assert_eq!(js(&client, "return window.reportErrors").await, serde_json::json!([]));
    assert_eq!(js(&client, "return performance.getEntriesByType('resource').length").await, 0, "the report fetches nothing");

    // One distribution plot per measured case and run; one bar chart per case across runs; a
    // forest plot per case compared with the baseline.
    for (_, id) in &measured {
        let count = client
            .execute("return Array.from(document.querySelectorAll('svg.dist')).filter(s => s.dataset.case === arguments[0]).length", vec![id.clone().into()])
            .await
            .unwrap();
        assert_eq!(count, 2, "{id}: one box plot in each of the two runs");
    }
    assert_eq!(js(&client, "return document.querySelectorAll('#across-table svg.bars').length").await, 4);
    let compared = results["baseline"]["cases"].as_array().unwrap().iter().filter(|c| !c["change"].is_null()).count();
    assert!(compared >= 4, "{}", results["baseline"]);
    assert_eq!(js(&client, "return document.querySelectorAll('#baseline-table svg.forest').length").await, compared);
    assert_eq!(js(&client, "return document.querySelectorAll('#baseline-table tbody tr').length").await, 8);
    assert_eq!(js(&client, "return document.querySelectorAll('svg.dist rect').length").await, 16, "box and CI band in each");

    // Clicking a header sorts the table by that column, twice reverses it.
    let medians = "return Array.from(document.querySelectorAll('#cases-run-0 tbody tr')).map(r => parseFloat(r.cells[4].dataset.sort))";
    js(&client, "document.querySelectorAll('#cases-run-0 thead th')[4].click(); return null").await;
    let up: Vec<f64> = serde_json::from_value(js(&client, medians).await).unwrap();
    assert!(up.windows(2).all(|w| w[0] <= w[1]), "ascending: {up:?}");
    js(&client, "document.querySelectorAll('#cases-run-0 thead th')[4].click(); return null").await;
    let down: Vec<f64> = serde_json::from_value(js(&client, medians).await).unwrap();
    assert!(down.windows(2).all(|w| w[0] >= w[1]), "descending: {down:?}");
    assert_ne!(up, down);

    // Typing in the filter box keeps only matching rows.
    let filter = client.find(fantoccini::Locator::Css("input[data-filter-for='cases-run-0']")).await.unwrap();
    filter.send_keys("softmax").await.unwrap();
    let shown = js(&client, "return Array.from(document.querySelectorAll('#cases-run-0 tbody tr')).filter(r => !r.hidden).map(r => r.cells[0].textContent)").await;
    assert_eq!(shown, serde_json::json!(["softmax", "softmax"]));

    // Nothing in the browser's console at error level (the page's own script or a resource).
    let log = client.issue_cmd(BrowserLog).await.expect("chromedriver returns the browser log");
    let severe: Vec<&Value> = log.as_array().map(|a| a.iter().filter(|e| e["level"] == "SEVERE").collect()).unwrap_or_default();
    assert!(severe.is_empty(), "console errors: {severe:?}");
    client.close().await.unwrap();
}
