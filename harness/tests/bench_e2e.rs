//! `harness bench` end to end: the quickstart example in headless Chromium, Firefox and natively;
//! a bench that panics, one whose output is wrong and one with no reference; a target that does
//! not compile; another wasm-bindgen; `--list`; a baseline and its gate; `--resume` after harness
//! was killed mid-bench. The bench crates are real crates built by cargo, sharing one target folder.

mod common;

use common::*;
use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::process::{Output, Stdio};

fn quickstart() -> String {
    workspace().join("examples/bench-quickstart/Cargo.toml").display().to_string()
}

fn fixture() -> String {
    workspace().join("harness/tests/bench-fixture/Cargo.toml").display().to_string()
}

/// `harness bench`, the bench crates built into one target folder, so their dependencies (wgpu
/// among them) are compiled once for every test. These tests check what `bench` does, not how
/// fast the crates run, so their release builds skip the optimizer: wgpu and naga compile several
/// times faster for both targets. (Every call must build alike, or cargo rebuilds.)
fn bench_command() -> std::process::Command {
    let mut command = harness_command();
    command.arg("bench").env("CARGO_TARGET_DIR", workspace().join("target/bench-crates")).env("CARGO_PROFILE_RELEASE_OPT_LEVEL", "0");
    command
}

/// `harness bench ARGS`, built as [`bench_command`] says.
fn bench(args: &[&str]) -> Output {
    bench_command().args(args).output().unwrap()
}

/// `harness bench --json --out DIR ARGS` with the browser lock held: the exit status, results.json
/// (checked against the schema) and stderr.
fn bench_checked(name: &str, args: &[&str]) -> (Option<i32>, Value, String) {
    let _lock = BROWSER.lock().unwrap_or_else(|e| e.into_inner());
    let dir = out_dir(name);
    let out = bench(&[&["--json", "--out", dir.to_str().unwrap()], args].concat());
    let stderr = text(&out.stderr);
    assert!(dir.join("results.json").is_file(), "no results.json; harness said:\n{stderr}");
    let results = read_json(&dir.join("results.json"));
    let errors = schema_errors(&results);
    assert!(errors.is_empty(), "results.json violates its schema:\n{}", errors.join("\n"));
    assert_no_browser_or_driver_left(name);
    (out.status.code(), results, stderr)
}

/// The status of case `id` in `run` among `all` ([`statuses`]), or `missing`.
fn status_in<'a>(all: &'a [(String, String, String)], run: &str, id: &str) -> &'a str {
    all.iter().find(|(r, i, _)| r == run && i == id).map(|(_, _, s)| s.as_str()).unwrap_or("missing")
}

/// Every case of every run, as (run, case id, status).
fn statuses(results: &Value) -> Vec<(String, String, String)> {
    let mut all = Vec::new();
    for run in results["runs"].as_array().unwrap() {
        let label = format!("{}/{}", run["browser"].as_str().unwrap(), run["platform"].as_str().unwrap());
        for c in run["cases"].as_array().unwrap() {
            all.push((label.clone(), c["id"].as_str().unwrap().to_string(), c["status"].as_str().unwrap().to_string()));
        }
    }
    all
}

#[test]
fn the_quickstart_runs_and_passes_in_chromium_firefox_and_natively() {
    let (code, results, stderr) = bench_checked(
        "bench-quickstart",
        &["--manifest-path", &quickstart(), "--browser", "chrome,firefox", "--platform", "webgpu,wasm,native", "--samples", "5", "--warmup", "1"],
    );
    let all = statuses(&results);
    for (run, id, status) in &all {
        println!("{run:<16} {id:<24} {status}");
    }
    // CPU benches as WASM in both browsers and natively, GPU benches on both WebGPUs and natively.
    let runs: Vec<&str> = all.iter().map(|(r, _, _)| r.as_str()).collect();
    for (run, cases) in [("chrome/webgpu", 3), ("chrome/wasm", 6), ("firefox/webgpu", 3), ("firefox/wasm", 6), ("wgpu/native", 9)] {
        assert_eq!(runs.iter().filter(|r| **r == run).count(), cases, "{run}: {all:#?}\n{stderr}");
    }
    assert!(all.iter().all(|(_, _, s)| s == "passed"), "{all:#?}\n{stderr}");
    assert_eq!(code, Some(0), "{stderr}");
    for run in results["runs"].as_array().unwrap() {
        for c in run["cases"].as_array().unwrap() {
            let median = c["wall"]["median"].as_f64().unwrap();
            assert!(median > 0.0, "{}: median {median}", c["id"]);
            assert!(c["correctness"]["maxAbsErr"].is_number(), "checked against the bench's reference: {}", c["correctness"]);
            // A CPU bench states how fine its clock is; a GPU bench is timed by GPU timestamps
            // where the adapter has them.
            if c["id"].as_str().unwrap().starts_with("dot/") {
                assert!(c["timerResolutionMs"].as_f64().is_some_and(|r| r > 0.0), "{}", c["id"]);
            }
        }
    }
}

#[test]
fn a_panic_is_an_error_a_wrong_output_fails_no_reference_is_unchecked_and_the_rest_pass() {
    let (code, results, stderr) = bench_checked(
        "bench-faults",
        &["--manifest-path", &fixture(), "--bench", "faults", "--browser", "chrome", "--platform", "wasm,native", "--samples", "5", "--retries", "0", "--filter", "ok,panics,wrong,unchecked"],
    );
    let all = statuses(&results);
    for run in ["chrome/wasm", "wgpu/native"] {
        let status = |id: &str| status_in(&all, run, id);
        assert_eq!([status("ok"), status("panics"), status("wrong"), status("unchecked")], ["passed", "error", "failed", "unchecked"], "{run}: {all:#?}\n{stderr}");
    }
    for run in results["runs"].as_array().unwrap() {
        let panicked = run["cases"].as_array().unwrap().iter().find(|c| c["id"] == "panics").unwrap();
        assert!(panicked["message"].as_str().unwrap().contains("deliberate panic in a bench"), "{}: {}", run["browser"], panicked["message"]);
        // A bench has no manifest: its message names the bench's own way to a reference.
        let unchecked = run["cases"].as_array().unwrap().iter().find(|c| c["id"] == "unchecked").unwrap()["message"].as_str().unwrap_or_default().to_string();
        assert!(unchecked.contains("the bench gives no `.reference(...)`") && !unchecked.contains("manifest"), "{}: {unchecked}", run["browser"]);
    }
    assert_eq!(code, Some(1), "{stderr}");
    // A shader that does not compile fails its case with the compiler's words, natively too (where
    // the failure shows first as a failed wait).
    let (_, results, stderr) = bench_checked("bench-bad-shader", &["--manifest-path", &fixture(), "--bench", "faults", "--platform", "native", "--filter", "bad-shader"]);
    let case = &results["runs"][0]["cases"][0];
    assert_eq!(case["status"], "error", "{stderr}");
    assert!(case["message"].as_str().unwrap().contains("not_defined_anywhere"), "{}", case["message"]);
}

#[test]
fn a_rejected_shader_is_named_with_the_compilers_words_and_a_shader_enabling_subgroups_runs_in_chromium() {
    let (_, results, stderr) = bench_checked(
        "bench-shaders",
        &["--manifest-path", &fixture(), "--bench", "faults", "--browser", "chrome,firefox", "--platform", "webgpu", "--filter", "bad-shader,rejected-then-panics,enables-subgroups", "--samples", "3", "--retries", "0"],
    );
    let rejected = "the browser rejected shader code:\nfixture:1:";
    for run in results["runs"].as_array().unwrap() {
        let browser = run["browser"].as_str().unwrap();
        let case = |id: &str| run["cases"].as_array().unwrap().iter().find(|c| c["id"] == id).unwrap_or_else(|| panic!("{browser}: no {id}\n{stderr}")).clone();
        let message = |id: &str| case(id)["message"].as_str().unwrap_or_default().to_string();
        // The pipeline's error says only that the module is invalid: the compiler's lines, read
        // from the module's compilation info, say why.
        assert_eq!(case("bad-shader")["status"], "error", "{browser}: {stderr}");
        assert!(message("bad-shader").contains(rejected) && message("bad-shader").contains("not_defined_anywhere"), "{browser}: {}", message("bad-shader"));
        // A framework's own panic (cubecl-wgpu's, on the pipeline's error) carries them too.
        let panicked = message("rejected-then-panics");
        assert!(panicked.contains("deliberate panic after a rejected shader") && panicked.contains(rejected) && panicked.contains("not_defined_anywhere"), "{browser}: {panicked}");
        // cubecl-wgpu writes `enable subgroups;` into its browser shaders and sums over subgroups
        // where Tint cannot prove uniform control flow: the page asks Chromium for the feature
        // (SwiftShader and GPUs have it) and turns that rule off, as naga has it natively. Where a
        // browser lacks the feature, the case names the directive it rejected.
        let subgroups = case("enables-subgroups");
        if browser == "chrome" {
            assert_eq!(subgroups["status"], "passed", "{subgroups:#}");
        } else if subgroups["status"] != "passed" {
            // Its line 2: the page put the uniformity rule's directive first.
            assert!(message("enables-subgroups").contains("the browser rejected shader code:\nfixture:2:"), "{browser}: {subgroups:#}");
        }
    }
}

#[test]
fn a_compile_error_exits_2_with_cargos_message_before_any_browser_starts() {
    let _lock = BROWSER.lock().unwrap_or_else(|e| e.into_inner());
    let dir = out_dir("bench-broken");
    let out = bench(&["--manifest-path", &fixture(), "--bench", "broken", "--browser", "chrome,firefox", "--platform", "webgpu,wasm", "--out", dir.to_str().unwrap()]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("the bench target `broken` did not compile") && stderr.contains("this_function_does_not_exist"), "{stderr}");
    assert!(!dir.exists(), "nothing ran, so nothing is written");
    assert_no_browser_or_driver_left("a bench target that does not compile");
}

#[test]
fn another_wasm_bindgen_is_refused_by_name_before_any_build() {
    let dir = tempfile::tempdir().unwrap();
    let manifest = dir.path().join("Cargo.toml");
    let harness_bench = workspace().join("harness-bench");
    std::fs::write(
        &manifest,
        format!("[package]\nname = \"mine\"\nversion = \"0.1.0\"\nedition = \"2021\"\n[workspace]\n[dev-dependencies]\nharness-bench = {{ path = {:?} }}\nwasm-bindgen = \"=0.2.100\"\n", harness_bench),
    )
    .unwrap();
    let out = bench(&["--manifest-path", manifest.to_str().unwrap()]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("asks for wasm-bindgen =0.2.100") && stderr.contains("this harness links wasm-bindgen 0.2.") && stderr.contains("cargo update -p wasm-bindgen"), "{stderr}");
    assert!(!dir.path().join("target").exists() && !dir.path().join("Cargo.lock").exists(), "cargo never ran");
}

#[test]
fn list_names_every_bench_with_its_kind_and_check() {
    let out = bench(&["--manifest-path", &fixture(), "--bench", "faults", "--list", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let listed: Value = serde_json::from_slice(&out.stdout).unwrap();
    let labels: Vec<String> = listed.as_array().unwrap().iter().map(|b| format!("{}{}", b["name"].as_str().unwrap(), b["param"].as_str().map(|p| format!("@{p}")).unwrap_or_default())).collect();
    assert_eq!(labels, ["ok", "panics", "wrong", "unchecked", "bad-shader", "rejected-then-panics", "enables-subgroups", "slow@1", "slow@2", "hangs"]);
    assert!(listed[3].get("reference").is_none() && listed[0]["reference"].is_object() && listed[0]["kind"] == "cpu");
    let table = bench(&["--manifest-path", &fixture(), "--bench", "faults", "--list"]);
    assert!(text(&table.stdout).contains("unchecked (no reference)"), "{}", text(&table.stdout));
    // The binary just built, run as a prebuilt one (a machine without a toolchain): the same list.
    let built = std::fs::read_dir(workspace().join("target/bench-crates/release/deps"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.file_name().unwrap().to_str().unwrap().starts_with("faults-") && p.extension().is_none())
        .max_by_key(|p| p.metadata().unwrap().modified().unwrap())
        .unwrap();
    let prebuilt = bench(&["--bench-binary", built.to_str().unwrap(), "--list", "--json"]);
    assert_eq!(serde_json::from_slice::<Value>(&prebuilt.stdout).unwrap(), listed, "{}", text(&prebuilt.stderr));
}

#[test]
fn a_saved_baseline_gates_a_later_bench_run() {
    let baselines = tempfile::tempdir().unwrap();
    let dir = baselines.path().to_str().unwrap();
    let common = ["--manifest-path", &fixture(), "--bench", "faults", "--platform", "native", "--filter", "ok", "--samples", "10", "--baseline-dir", dir];
    let (code, _, stderr) = bench_checked("bench-baseline-save", &[&common[..], &["--save-baseline", "before"]].concat());
    assert_eq!(code, Some(0), "{stderr}");
    let (code, results, stderr) = bench_checked("bench-baseline-gate", &[&common[..], &["--baseline", "before", "--fail-on-regression", "1000"]].concat());
    assert_eq!(code, Some(0), "{stderr}");
    let compared = &results["baseline"];
    assert_eq!(compared["name"], "before", "{compared}");
    assert!(compared.to_string().contains("\"ok\""), "the bench's case is compared with its baseline: {compared}");
}

#[test]
fn resume_after_harness_is_killed_mid_bench_runs_only_what_is_left() {
    let _lock = BROWSER.lock().unwrap_or_else(|e| e.into_inner());
    let dir = out_dir("bench-resume");
    let tmp = temp_folder();
    let mut child = bench_command()
        .args(["--manifest-path", &fixture(), "--bench", "faults", "--platform", "native", "--filter", "ok,slow@*", "--samples", "100000", "--max-time", "2"])
        .args(["--out", dir.to_str().unwrap()])
        .env("TMPDIR", tmp.path())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let lines = BufReader::new(child.stderr.take().unwrap()).lines().map_while(Result::ok);
    let mut seen = Vec::new();
    for line in lines {
        let passed = line.starts_with("PASS");
        seen.push(line);
        if passed {
            break;
        }
    }
    child.kill().unwrap(); // SIGKILL: no handler runs.
    child.wait().unwrap();
    assert!(seen.iter().any(|l| l.starts_with("PASS")), "{seen:#?}");
    // The bench process ends with harness, and its plan was never a file.
    assert_processes_end("faults-", "harness, SIGKILLed mid-bench");
    assert_temp_emptied(tmp.path(), "harness was SIGKILLed mid-bench");
    assert!(!dir.join("results.json").exists(), "killed before its reports");
    let out = bench(&["--manifest-path", &fixture(), "--bench", "faults", "--resume", dir.to_str().unwrap(), "--json"]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let results = read_json(&dir.join("results.json"));
    let all = statuses(&results);
    assert_eq!(all.iter().map(|(_, id, s)| format!("{id} {s}")).collect::<Vec<_>>(), ["ok passed", "slow@1 passed", "slow@2 passed"], "{stderr}");
    // The case finished before the kill was not run again.
    let ran_again = stderr.lines().filter(|l| l.starts_with("PASS") && l.contains(" ok ")).count();
    assert_eq!(ran_again, 0, "{stderr}");
}

#[test]
fn a_hung_bench_ends_with_a_killed_harness() {
    let _lock = BROWSER.lock().unwrap_or_else(|e| e.into_inner());
    let dir = out_dir("bench-hang");
    let mut child = bench_command()
        .args(["--manifest-path", &fixture(), "--bench", "faults", "--platform", "native", "--filter", "hangs", "--timeout", "600"])
        .args(["--out", dir.to_str().unwrap()])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The bench builds, then its process starts and takes its plan; its one case never ends.
    let stderr = child.stderr.take().unwrap();
    let said = std::thread::spawn(move || BufReader::new(stderr).lines().map_while(Result::ok).collect::<Vec<String>>());
    while count_processes("faults-") == 0 {
        assert!(matches!(child.try_wait(), Ok(None)), "harness ended before the bench ran: {:#?}", said.join());
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    std::thread::sleep(std::time::Duration::from_secs(1));
    child.kill().unwrap(); // SIGKILL: no handler runs.
    child.wait().unwrap();
    // Nothing the bench does tells it harness is gone: it ends because the kernel ends it.
    assert_processes_end("faults-", "its harness, SIGKILLed while the bench hung");
}

#[test]
fn roofline_gives_a_bench_its_fraction_of_the_peak_that_binds_it() {
    let (code, results, stderr) = bench_checked(
        "bench-roofline",
        &["--manifest-path", &quickstart(), "--platform", "native", "--roofline", "--filter", "sum/two-pass@65536", "--samples", "3", "--warmup", "1"],
    );
    assert_eq!(code, Some(0), "{stderr}");
    let cases = results["runs"][0]["cases"].as_array().unwrap();
    let ids: Vec<&str> = cases.iter().map(|c| c["id"].as_str().unwrap()).collect();
    assert!(ids.first().is_some_and(|i| i.starts_with("stream_copy/")) && ids.last() == Some(&"sum/two-pass@65536"), "the probes first: {ids:?}");
    let bench = cases.last().unwrap();
    assert!(bench["roofline"]["fraction"].as_f64().is_some_and(|f| f > 0.0), "{}", bench["roofline"]);
}

#[test]
fn work_that_submits_itself_is_timed_checked_and_refused_when_it_submits_nothing_in_chromium_firefox_and_natively() {
    let (code, results, stderr) = bench_checked(
        "bench-submits",
        &["--manifest-path", &fixture(), "--bench", "submits", "--browser", "chrome,firefox", "--platform", "webgpu,native", "--samples", "5", "--warmup", "1", "--retries", "0"],
    );
    let all = statuses(&results);
    for run in ["chrome/webgpu", "firefox/webgpu", "wgpu/native"] {
        let status = |id: &str| status_in(&all, run, id);
        let statuses = ["two-submissions", "wrong", "reads-itself", "reads-itself-wrong", "never-submits"].map(status);
        assert_eq!(statuses, ["passed", "failed", "passed", "failed", "error"], "{run}: {all:#?}\n{stderr}");
    }
    assert_eq!(code, Some(1), "{stderr}");
    for run in results["runs"].as_array().unwrap() {
        let case = |id: &str| run["cases"].as_array().unwrap().iter().find(|c| c["id"] == id).unwrap().clone();
        let never = case("never-submits");
        assert!(never["message"].as_str().unwrap().contains("submitted no command buffer") && never["message"].as_str().unwrap().contains("GpuWork::new"), "{never:#}");
        // Timed on the GPU where the adapter has timestamps: by the page's timer in a browser (two
        // command buffers a run, one pass each), between bracketing submissions natively.
        let timed = case("two-submissions");
        let timestamps = run["adapter"]["features"].as_array().is_some_and(|f| f.iter().any(|f| f == "timestamp-query"));
        let samples = timed["samples"].as_array().unwrap();
        assert_eq!(samples.iter().all(|s| s["gpuMs"].as_f64().is_some_and(|g| g > 0.0)), timestamps, "{timed:#}");
        if run["platform"] == "native" {
            assert_eq!(timed["gpuTimer"]["source"], "bracket", "{timed:#}");
        } else if timestamps {
            let t = &timed["gpuTimer"];
            assert_eq!(t["source"], "page", "{timed:#}");
            let (windows, buffers, passes) = (t["windows"].as_u64().unwrap(), t["counts"]["commandBuffers"].as_u64().unwrap(), t["counts"]["timed"].as_u64().unwrap());
            assert!(windows > 0 && buffers >= 2 * windows && passes == buffers, "two command buffers of one pass each a run: {t:#}");
            assert!(samples.iter().all(|s| s["busyMs"].as_f64().is_some_and(|b| b <= s["gpuMs"].as_f64().unwrap())), "{timed:#}");
        }
    }
}
