//! End to end: the real `harness` binary drives real headless Chromium through chromedriver.
//! CI installs both (ci/setup.sh); these tests never skip there.
//! The tests share one lock: they count browser processes, so they must not overlap.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Mutex;

static BROWSER: Mutex<()> = Mutex::new(());

fn harness(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_harness"))
        .args(args)
        .output()
        .expect("the harness binary runs")
}

fn out_dir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn read_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).expect("results.json exists")).expect("valid JSON")
}

fn schema_errors(results: &Value) -> Vec<String> {
    let schema_path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../reports/schema/results.schema.json");
    let schema: Value = serde_json::from_str(&std::fs::read_to_string(schema_path).unwrap()).unwrap();
    let validator = jsonschema::validator_for(&schema).expect("the schema compiles");
    validator.iter_errors(results).map(|e| format!("{} at {}", e, e.instance_path())).collect()
}

fn count_processes(name: &str) -> usize {
    let Ok(entries) = std::fs::read_dir("/proc") else { return 0 };
    entries
        .flatten()
        .filter(|e| {
            std::fs::read_to_string(e.path().join("comm"))
                .map(|c| c.trim().starts_with(name))
                .unwrap_or(false)
        })
        .count()
}

fn text(o: &[u8]) -> String {
    String::from_utf8_lossy(o).to_string()
}

#[test]
fn quick_suite_passes_every_check_in_headless_chromium() {
    let _lock = BROWSER.lock().unwrap_or_else(|e| e.into_inner());
    let dir = out_dir("quick");
    let out = harness(&["run", "--suite", "quick", "--samples", "5", "--warmup", "1", "--out", dir.to_str().unwrap(), "--json"]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "stderr:\n{stderr}");

    let results = read_json(&dir.join("results.json"));
    let errors = schema_errors(&results);
    assert!(errors.is_empty(), "results.json violates its schema:\n{}", errors.join("\n"));
    let mut broken = results.clone();
    broken["runs"][0]["cases"][0]["status"] = "great".into();
    assert!(!schema_errors(&broken).is_empty(), "the schema check must be able to fail");
    // --json prints the same document on stdout.
    let printed: Value = serde_json::from_slice(&out.stdout).expect("--json prints JSON");
    assert_eq!(printed, results);

    let run = &results["runs"][0];
    assert_eq!(run["status"], "completed");
    assert_eq!(run["adapter"]["available"], true);
    assert!(run["browserInfo"]["version"].as_str().unwrap().chars().next().unwrap().is_ascii_digit());
    let cases = run["cases"].as_array().unwrap();
    let planned = harness(&["list", "--suite", "quick"]);
    assert_eq!(cases.len(), text(&planned.stdout).lines().count());
    for case in cases {
        assert_eq!(case["status"], "passed", "{case:#}");
        assert_eq!(case["correctness"]["passed"], true);
        let samples = case["samples"].as_array().unwrap();
        assert_eq!(samples.len(), 5, "{}", case["id"]);
        for s in samples {
            assert!(s["wallMs"].as_f64().unwrap() > 0.0, "{}: {s}", case["id"]);
        }
        assert!(case["wall"]["median"].as_f64().unwrap() > 0.0);
    }

    let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
    assert!(html.contains("<svg") && html.contains("matmul_tiled"));
    assert!(!html.contains("<script src") && !html.contains("<link"), "report.html must not fetch anything");
    assert_eq!(count_processes("chromedriver"), 0, "chromedriver left running");
}

#[test]
fn wrong_answers_hangs_and_exceptions_are_reported_and_the_run_goes_on() {
    let _lock = BROWSER.lock().unwrap_or_else(|e| e.into_inner());
    let dir = out_dir("faults");
    let out = harness(&[
        "run", "--suite", "quick", "--samples", "3", "--warmup", "0", "--timeout", "5",
        "--filter", "selftest_*,add", "--out", dir.to_str().unwrap(),
    ]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "stderr:\n{stderr}");

    let results = read_json(&dir.join("results.json"));
    assert!(schema_errors(&results).is_empty());
    let run = &results["runs"][0];
    let status = |kernel: &str| -> Vec<String> {
        run["cases"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["kernel"] == kernel)
            .map(|c| c["status"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(status("selftest_wrong"), ["failed"]);
    assert_eq!(status("selftest_hang"), ["timedOut"]);
    assert_eq!(status("selftest_throw"), ["error"]);
    // Cases after the hang and the exception still ran.
    assert_eq!(status("add"), ["passed", "passed"]);

    let wrong = run["cases"].as_array().unwrap().iter().find(|c| c["kernel"] == "selftest_wrong").unwrap();
    assert_eq!(wrong["correctness"]["mismatches"], 5);
    assert!(wrong["samples"].as_array().unwrap().len() == 3, "a wrong kernel keeps its timings");

    let error = &run["errors"][0];
    assert!(error["message"].as_str().unwrap().contains("deliberate exception"));
    assert!(error["stack"].as_str().unwrap().contains("at "), "the JS stack is kept");
    assert!(stderr.contains("deliberate exception") && stderr.contains("page.js"), "stack in the terminal:\n{stderr}");
    let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
    assert!(html.contains("deliberate exception") && html.contains("timedOut"));
    assert_eq!(count_processes("chromedriver"), 0, "chromedriver left running");
}

#[test]
fn a_missing_browser_is_a_clear_error() {
    let _lock = BROWSER.lock().unwrap_or_else(|e| e.into_inner());
    let dir = out_dir("missing");
    let out = harness(&["run", "--suite", "quick", "--browser-path", "/no/such/chromium", "--out", dir.to_str().unwrap()]);
    let stderr = text(&out.stderr) + &text(&out.stdout);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("--browser-path /no/such/chromium: no such file"), "{stderr}");
    // The failure is in the report too.
    let results = read_json(&dir.join("results.json"));
    assert_eq!(results["runs"][0]["status"], "failed");
    assert_eq!(count_processes("chromedriver"), 0);
}

#[test]
fn a_browser_that_cannot_start_leaves_no_process_behind() {
    let _lock = BROWSER.lock().unwrap_or_else(|e| e.into_inner());
    let dir = out_dir("false-browser");
    // chromedriver starts, but the "browser" exits at once.
    let out = harness(&["run", "--suite", "quick", "--browser-path", "/bin/false", "--out", dir.to_str().unwrap()]);
    let stderr = text(&out.stderr) + &text(&out.stdout);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("could not start"), "{stderr}");
    assert_eq!(count_processes("chromedriver"), 0, "chromedriver left running");
    assert_eq!(count_processes("chromium"), 0, "chromium left running");
}
