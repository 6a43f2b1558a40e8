//! End to end: the real `harness` binary drives real headless Chromium (chromedriver) and Firefox
//! (geckodriver). CI installs all four (ci/setup.sh); these tests never skip there. Edge cannot be
//! installed here: its test against a stand-in endpoint says so in its name and output, and the
//! real Edge test is ignored, saying why; ci/test.sh runs it where Edge and msedgedriver are found.
//! The tests share one lock: they count browser processes, so they must not overlap.

mod common;

use common::*;
use serde_json::Value;
use std::path::PathBuf;

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
    let errors = schema_errors(&results);
    assert!(errors.is_empty(), "{}", errors.join("\n"));
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
    assert_eq!(status("selftest_lose_device"), ["deviceLost"]);
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
    // junit.xml: the wrong answer is a failure, the hang and the exception are errors.
    let junit = std::fs::read_to_string(dir.join("junit.xml")).unwrap();
    let doc = roxmltree::Document::parse(&junit).expect("junit.xml parses");
    let root = doc.root_element();
    let counts = ["tests", "failures", "errors", "skipped"].map(|a| root.attribute(a).unwrap_or("?"));
    assert_eq!(counts, ["6", "1", "3", "0"], "{junit}");
    let failure = doc.descendants().find(|n| n.has_tag_name("failure")).unwrap();
    assert_eq!(failure.parent().unwrap().attribute("name"), wrong["id"].as_str());
    assert_eq!(count_processes("chromedriver"), 0, "chromedriver left running");
}

#[test]
fn isolated_sampling_takes_one_dispatch_per_sample_in_chromium() {
    let _lock = BROWSER.lock().unwrap_or_else(|e| e.into_inner());
    let dir = out_dir("isolated");
    let out = harness(&["run", "--suite", "quick", "--filter", "add", "--samples", "3", "--sampling", "isolated", "--out", dir.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "stderr:\n{}", text(&out.stderr));
    let results = read_json(&dir.join("results.json"));
    assert!(schema_errors(&results).is_empty(), "{:?}", schema_errors(&results));
    assert_eq!(results["settings"]["sampling"], "isolated");
    for case in results["runs"][0]["cases"].as_array().unwrap() {
        assert_eq!((&case["sampling"], &case["batch"], &case["inFlight"]), (&"isolated".into(), &1.into(), &1.into()), "{case}");
    }
    let stdout = text(&out.stdout);
    assert!(stdout.contains("isolated") && stdout.contains("completion latency: submit→onSubmittedWorkDone"), "{stdout}");
    let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
    assert!(html.contains("Completion latency") && html.contains("isolated: one dispatch per sample"), "the report names the mode and the latency");
}

#[test]
fn a_stand_in_clock_probe_flags_cases_measured_below_the_runs_clock_in_chromium() {
    let _lock = BROWSER.lock().unwrap_or_else(|e| e.into_inner());
    let dir = out_dir("clock");
    // A stand-in probe, not a GPU: 2 s at 1980 MHz, 2 s at 345 MHz, and again. A fixed
    // warm-up, because the automatic one waits for the clock to reach its highest before the
    // timed samples (as on a GPU ramping up), which would leave almost every case at 1980 MHz.
    // So each of the dozen cases is timed wherever the script happens to be: some at each clock.
    // Each samples for 1.5 s, so its window holds well over the 10 probe samples a case is judged
    // from (reports::probe::MIN_FLAG_SAMPLES), even with the probe's thread slowed by a busy host.
    let out = harness_command()
        .args(["run", "--suite", "quick", "--filter", "add,sub,mul,div,relu,gelu", "--samples", "2048", "--warmup", "0", "--max-time", "1.5", "--out", dir.to_str().unwrap()])
        .env("HARNESS_PROBE_STANDIN", "1980*40,345*40")
        .output()
        .unwrap();
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "stderr:\n{stderr}");
    println!("stand-in clock probe (scripted clocks, no GPU read):\n{stdout}");
    let results = read_json(&dir.join("results.json"));
    assert!(schema_errors(&results).is_empty(), "{:?}", schema_errors(&results));
    let run = &results["runs"][0];
    assert_eq!((&run["probe"]["status"], &run["probe"]["standIn"]), (&"attached".into(), &true.into()), "{}", run["probe"]);
    let cases = run["cases"].as_array().unwrap();
    assert!(cases.iter().all(|c| c["clock"]["samples"].as_u64().unwrap() >= 1), "every case has its clocks");
    // Only a case with enough samples inside its timed window is judged; any other reads unknown.
    let judged: Vec<&Value> = cases.iter().filter(|c| c["clock"]["samples"].as_u64().unwrap() >= u64::from(reports::probe::MIN_FLAG_SAMPLES)).collect();
    assert!(judged.len() * 2 > cases.len(), "most cases sampled long enough to be judged: {cases:#?}");
    let slow = judged.iter().filter(|c| c["clock"]["smMhzMedian"].as_f64().unwrap() < 0.9 * 1980.0).count();
    assert!(slow > 0 && slow < judged.len(), "some judged cases at each scripted clock: {cases:#?}");
    let flagged = stdout.lines().filter(|l| l.starts_with("flagged") && l.contains("below 90% of the highest seen")).count();
    assert_eq!(flagged, slow, "{stdout}");
    let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
    assert!(html.contains("Measured below the clock") && html.contains("a stand-in: scripted clocks"));
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

fn case_statuses(run: &Value) -> Vec<String> {
    run["cases"].as_array().unwrap().iter().map(|c| c["status"].as_str().unwrap().to_string()).collect()
}

/// The quick suite in headless Chromium and Firefox in one invocation: every check passes (but
/// the f16 kernels where the adapter lacks shader-f16), every report is written and valid, and the
/// report splits into one folder per browser and merges back, as a CI matrix does.
/// `--nudge off`: Firefox's steady batches wait on its completion timer as it gives them, and the
/// report records the setting; nothing is nudged and no nudged latency is measured.
#[test]
fn with_nudge_off_firefoxs_steady_batches_wait_as_the_browser_gives_them() {
    let (code, results, stderr) = run_checked(
        "nudge-off",
        &["--browser", "firefox", "--suite", "quick", "--filter", "add", "--samples", "3", "--warmup", "0", "--nudge", "off"],
    );
    assert_eq!(code, Some(0), "stderr:\n{stderr}");
    assert_eq!(results["settings"]["nudge"], "off");
    let run = &results["runs"][0];
    assert!(run["completionLatency"]["workDone"].is_object() && run["completionLatency"].get("nudgedWorkDone").is_none(), "{run:#}");
    for case in run["cases"].as_array().unwrap() {
        assert_eq!((&case["status"], &case["sampling"]), (&"passed".into(), &"steady".into()), "{case:#}");
        assert!(case.get("nudges").is_none(), "{case:#}");
    }
}

#[test]
fn quick_suite_passes_every_check_in_chromium_and_firefox_in_one_invocation_then_merged_from_separate_folders() {
    let _lock = BROWSER.lock().unwrap_or_else(|e| e.into_inner());
    let dir = out_dir("both");
    let out = harness(&[
        // Ten samples, not three: a case's timed batches together span ten completion latencies
        // (`batch_target_ms`), so in Firefox three make each batch a third of a second and ten a
        // tenth; its quick suite took 138 s with three here, 105 with ten. Half a second of them
        // a case: Firefox's cases stop at the time budget after five, Chromium's mostly at ten.
        "run", "--browser", "chrome,firefox", "--suite", "quick", "--samples", "10", "--max-time", "0.5", "--warmup", "0",
        "--out", dir.to_str().unwrap(), "--json",
    ]);
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
    assert_wall_at_least_gpu(&results);

    let runs = results["runs"].as_array().unwrap();
    assert_eq!(runs.iter().map(|r| r["browser"].as_str().unwrap()).collect::<Vec<_>>(), ["chrome", "firefox"]);
    let planned = text(&harness(&["list", "--suite", "quick"]).stdout).lines().count();
    // Steady sampling is the default in both browsers: batches queued ahead of the one being
    // read, sized by the completion latency each browser measured first.
    assert_eq!(results["settings"]["sampling"], "steady");
    for run in runs {
        let browser = run["browser"].as_str().unwrap();
        assert_eq!(run["status"], "completed", "{browser}");
        assert_eq!(run["adapter"]["available"], true, "{browser}");
        assert!(run["browserInfo"]["version"].as_str().unwrap().chars().next().unwrap().is_ascii_digit(), "{browser}");
        let latency = &run["completionLatency"];
        assert!(latency["workDone"]["median"].as_f64().unwrap() > 0.0, "{browser}: {latency}");
        assert!(latency["mapAsync"]["median"].as_f64().unwrap() > 0.0, "{browser}: {latency}");
        assert_eq!(latency["samples"]["workDoneMs"].as_array().unwrap().len(), 10);
        let cases = run["cases"].as_array().unwrap();
        // Firefox reports completion on its ~100 ms poll timer: its steady batches are nudged (an
        // empty submit every few ms while one waits), and the report says how and how often.
        if browser == "firefox" {
            assert!(latency["nudgedWorkDone"]["median"].as_f64().is_some_and(|m| m > 0.0), "{latency}");
            assert_eq!(latency["samples"]["nudgedWorkDoneMs"].as_array().unwrap().len(), 10);
            let nudges: u64 = cases.iter().filter_map(|c| c["nudges"].as_u64()).sum();
            assert!(nudges > 0, "Firefox's steady batches were not nudged");
        }
        assert_eq!(cases.len(), planned, "{browser}");
        let features = run["adapter"]["features"].as_array().unwrap();
        for case in cases {
            // f16 kernels need shader-f16, which SwiftShader lacks (Firefox's lavapipe has it):
            // unsupported there, with the reason.
            if case["status"] == "unsupported" {
                assert!(case["kernel"].as_str().unwrap().ends_with("_f16") && !features.iter().any(|f| f == "shader-f16"), "{browser}: {case:#}");
                assert!(case["message"].as_str().unwrap().contains("shader-f16"), "{browser}: {case:#}");
                continue;
            }
            assert_eq!(case["status"], "passed", "{browser}: {case:#}");
            assert_eq!(case["correctness"]["passed"], true);
            assert_eq!(case["sampling"], "steady", "{browser}: {case}");
            assert!(case["batch"].as_u64().unwrap() >= 1 && case["inFlight"].as_u64().unwrap() >= u64::from(kernels::sampling::MIN_IN_FLIGHT), "{browser}: {case}");
            // Ten samples, or the time budget spent after at least five.
            let samples = case["samples"].as_array().unwrap();
            let budget_spent = case["stoppedBy"] == "maxTime" && (kernels::sampling::MIN_SAMPLES as usize..10).contains(&samples.len());
            assert!(samples.len() == 10 && case["stoppedBy"] == "sampleCount" || budget_spent, "{browser}: {case}");
            assert!(samples.iter().all(|s| s["wallMs"].as_f64().unwrap() > 0.0), "{browser}: {}", case["id"]);
            assert!(case["wall"]["median"].as_f64().unwrap() > 0.0);
        }
    }
    let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
    assert!(html.contains("<svg") && html.contains("matmul_tiled") && html.contains("Across browsers"));
    assert!(!html.contains("<script src") && !html.contains("rel=\"stylesheet"), "report.html must not fetch anything");
    assert_eq!(count_processes("geckodriver") + count_processes("chromedriver"), 0, "a driver was left running");
    // A run on a software adapter (SwiftShader, lavapipe: all there is here) is named as not
    // ranked for speed, and no speed flag names it.
    let summary = std::fs::read_to_string(dir.join("summary.md")).unwrap();
    for run in runs {
        let label = format!("{}/webgpu", run["browser"].as_str().unwrap());
        // The browser's own word, not harness's reading of the adapter's names.
        let software = run["adapter"]["isFallbackAdapter"] == true;
        assert_eq!(not_ranked(&summary).contains(&format!("{label} (")), software, "{label}:\n{summary}");
        if software {
            assert!(!summary.lines().any(|l| l.contains(&format!("{label} ")) && l.contains("× slower than the fastest")), "{label} ranked:\n{summary}");
        }
    }

    // A CI matrix writes one folder per browser: split this report and merge it back.
    let mut parts = Vec::new();
    for (i, run) in runs.iter().enumerate() {
        let part = out_dir(&format!("part{i}"));
        std::fs::create_dir_all(&part).unwrap();
        let mut single = results.clone();
        single["runs"] = Value::Array(vec![run.clone()]);
        std::fs::write(part.join("results.json"), single.to_string()).unwrap();
        parts.push(part);
    }
    let merged_dir = out_dir("merged");
    let out = harness(&["report", "merge", parts[0].to_str().unwrap(), parts[1].to_str().unwrap(), "--out", merged_dir.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let merged = read_json(&merged_dir.join("results.json"));
    assert_eq!(merged["runs"], results["runs"]);
    let summary = std::fs::read_to_string(merged_dir.join("summary.md")).unwrap();
    assert!(summary.contains("## Flagged") && summary.contains("| case | timer | chrome/webgpu | firefox/webgpu |"), "{summary}");
}

#[test]
fn a_browser_that_cannot_start_does_not_lose_the_other_browsers_results() {
    let _lock = BROWSER.lock().unwrap_or_else(|e| e.into_inner());
    let dir = out_dir("one-bad");
    let out = harness(&[
        "run", "--browser", "firefox,chrome", "--browser-path", "firefox=/no/such/firefox", "--suite", "quick",
        "--filter", "add", "--samples", "3", "--warmup", "0", "--out", dir.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let results = read_json(&dir.join("results.json"));
    let runs = results["runs"].as_array().unwrap();
    assert_eq!(runs[0]["browser"], "firefox");
    assert_eq!(runs[0]["status"], "failed");
    assert!(runs[0]["failure"].as_str().unwrap().contains("/no/such/firefox"));
    assert_eq!(runs[1]["browser"], "chrome");
    assert_eq!(case_statuses(&runs[1]), ["passed", "passed"]);
    let summary = std::fs::read_to_string(dir.join("summary.md")).unwrap();
    assert!(summary.contains("**firefox/webgpu failed:**"), "{summary}");
}

#[test]
fn webdriver_url_uses_a_chromedriver_started_by_the_test() {
    let _lock = BROWSER.lock().unwrap_or_else(|e| e.into_inner());
    let mut driver = Chromedriver::start();
    let dir = out_dir("remote");
    let url = driver.url.clone();
    let out = harness(&[
        "run", "--webdriver-url", &url, "--browser-path", "/usr/bin/chromium", "--suite", "quick", "--filter", "add",
        "--samples", "3", "--warmup", "0", "--out", dir.to_str().unwrap(),
    ]);
    let still_running = driver.process.running();
    drop(driver);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(still_running, "harness must leave a driver it did not start running");
    let run = &read_json(&dir.join("results.json"))["runs"][0];
    assert_eq!(run["driver"]["name"], "remote WebDriver");
    assert_eq!(run["driver"]["path"], url.as_str());
    assert_eq!(case_statuses(run), ["passed", "passed"]);
}

/// One real Selenium Grid (Java runs the jar) serves both browsers, then loses the Chromium it
/// started: the killed case costs one attempt and a fresh Grid session goes on. One Grid for both,
/// since starting one takes seconds.
#[test]
fn a_real_selenium_grid_runs_chromium_and_firefox_and_a_browser_killed_behind_it_costs_one_attempt() {
    let _lock = BROWSER.lock().unwrap_or_else(|e| e.into_inner());
    let grid = Grid::start();
    let dir = out_dir("grid");
    let out = harness(&[
        "run", "--webdriver-url", &grid.url, "--browser", "chrome,firefox",
        "--browser-path", "chrome=/usr/bin/chromium", "--browser-path", "firefox=/usr/bin/firefox-esr",
        // Isolated: the Grid is under test, not sampling (Firefox's steady batches of a case span
        // ten of its 100 ms completion latencies).
        "--suite", "quick", "--filter", "add,matmul_tiled,softmax", "--sampling", "isolated", "--samples", "3", "--warmup", "0",
        "--out", dir.to_str().unwrap(),
    ]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let results = read_json(&dir.join("results.json"));
    assert!(schema_errors(&results).is_empty(), "{:?}", schema_errors(&results));
    for run in results["runs"].as_array().unwrap() {
        assert_eq!(run["driver"]["name"], "remote WebDriver");
        let statuses = case_statuses(run);
        assert!(statuses.len() >= 6 && statuses.iter().all(|s| s == "passed"), "{}: {statuses:?}", run["browser"]);
        println!("{} through the Grid: {} cases passed", run["browser"], statuses.len());
    }
    check_recovered("chrome", Victim::Browser, &["--webdriver-url", &grid.url, "--browser-path", "chrome=/usr/bin/chromium"]);
    drop(grid);
    assert_browsers_and_drivers_end("the Grid's Chromium was killed and the Grid stopped");
}

#[test]
fn a_users_browser_arg_reaches_chromium_is_recorded_and_replayed() {
    let _lock = BROWSER.lock().unwrap_or_else(|e| e.into_inner());
    let dir = out_dir("browser-arg");
    let out = harness(&[
        "run", "--browser", "chrome", "--suite", "quick", "--filter", "add", "--samples", "2", "--warmup", "0",
        "--browser-arg", "chrome=--user-agent=harness-e2e-agent/1.0",
        "--browser-pref", "firefox=general.useragent.override=not-this-run",
        "--out", dir.to_str().unwrap(),
    ]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "stderr:\n{stderr}");
    assert!(
        stderr.contains("warning: --browser-pref firefox=general.useragent.override=not-this-run: firefox is not among this run's browsers"),
        "a pref for a browser not in the run is a warning:\n{stderr}"
    );
    let results = read_json(&dir.join("results.json"));
    let errors = schema_errors(&results);
    assert!(errors.is_empty(), "results.json violates its schema:\n{}", errors.join("\n"));
    let run = &results["runs"][0];
    // The page reports navigator.userAgent: Chromium was started with the user's argument.
    assert_eq!(run["adapter"]["userAgent"], "harness-e2e-agent/1.0", "{:#}", run["adapter"]);
    assert_eq!(case_statuses(run), ["passed", "passed"]);
    assert_eq!(results["settings"]["browserArgs"], serde_json::json!(["chrome=--user-agent=harness-e2e-agent/1.0"]));
    assert_eq!(results["settings"]["browserPrefs"], serde_json::json!(["firefox=general.useragent.override=not-this-run"]));
    assert_eq!(run["browserInfo"]["userFlags"], serde_json::json!(["--user-agent=harness-e2e-agent/1.0"]));
    let flags = run["browserInfo"]["flags"].as_array().unwrap();
    assert!(flags.contains(&"--enable-unsafe-webgpu".into()), "harness's own flags stay: {flags:?}");
    assert_eq!(flags.last().unwrap(), "--user-agent=harness-e2e-agent/1.0", "the user's come last: {flags:?}");
    let html = std::fs::read_to_string(dir.join("report.html")).unwrap().replace("&#x2F;", "/");
    assert!(html.contains("<dt>User flags</dt>") && html.contains("<code>--user-agent=harness-e2e-agent/1.0</code> (yours"), "report.html marks the user's flags");
    let summary = std::fs::read_to_string(dir.join("summary.md")).unwrap();
    assert!(summary.contains("User browser flags: `--browser-arg chrome=--user-agent=harness-e2e-agent/1.0`"), "{summary}");

    // --replay starts the browser with the recorded argument again.
    let again = out_dir("browser-arg-replay");
    let out = harness(&["run", "--replay", dir.to_str().unwrap(), "--out", again.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let replayed = read_json(&again.join("results.json"));
    assert_eq!(replayed["runs"][0]["adapter"]["userAgent"], "harness-e2e-agent/1.0");
    assert_eq!(replayed["settings"]["browserArgs"], results["settings"]["browserArgs"]);
    assert_eq!(count_processes("chromedriver"), 0, "chromedriver left running");
}

#[test]
fn a_users_browser_pref_reaches_firefox_and_is_recorded() {
    let _lock = BROWSER.lock().unwrap_or_else(|e| e.into_inner());
    let dir = out_dir("browser-pref");
    let out = harness(&[
        "run", "--browser", "firefox", "--suite", "quick", "--filter", "add", "--sampling", "isolated", "--samples", "2", "--warmup", "0",
        "--browser-pref", "firefox=general.useragent.override=harness-e2e-firefox/1.0",
        "--out", dir.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "stderr:\n{}", text(&out.stderr));
    let results = read_json(&dir.join("results.json"));
    assert!(schema_errors(&results).is_empty(), "{:?}", schema_errors(&results));
    let run = &results["runs"][0];
    assert_eq!(run["adapter"]["userAgent"], "harness-e2e-firefox/1.0", "{:#}", run["adapter"]);
    assert_eq!(case_statuses(run), ["passed", "passed"]);
    assert_eq!(results["settings"]["browserPrefs"], serde_json::json!(["firefox=general.useragent.override=harness-e2e-firefox/1.0"]));
    assert!(results["settings"].get("browserArgs").is_none(), "no --browser-arg, no field: {}", results["settings"]);
    assert_eq!(run["browserInfo"]["userFlags"], serde_json::json!([r#"general.useragent.override="harness-e2e-firefox/1.0""#]));
    assert_eq!(count_processes("geckodriver"), 0, "geckodriver left running");
}

/// Each Firefox session gets a fresh profile folder that starts with Firefox's startup cache (its
/// own compiled JavaScript) from an earlier session, kept after the first clean quit: results.json
/// says so, and nothing of a page is kept.
#[test]
fn firefox_profiles_start_with_the_startup_cache_an_earlier_session_kept() {
    let seeds = out_dir("profile-seeds");
    let env = [("HARNESS_PROFILE_SEEDS", seeds.to_str().unwrap())];
    let run = |name: &str| {
        let args = ["--browser", "firefox", "--suite", "quick", "--filter", "add", "--sampling", "isolated", "--samples", "2", "--warmup", "0"];
        let (code, results, stderr) = run_checked_with(name, &args, &env);
        assert_eq!(code, Some(0), "stderr:\n{stderr}");
        assert_eq!(case_statuses(&results["runs"][0]), ["passed", "passed"]);
        results["runs"][0]["browserInfo"].clone()
    };
    let first = run("seed-first");
    assert!(first.get("profileSeed").is_none(), "no seed yet: {first:#}");
    let kept: Vec<PathBuf> = std::fs::read_dir(&seeds).unwrap().map(|e| e.unwrap().path()).collect();
    assert_eq!(kept.len(), 1, "{kept:?}");
    let mut parts: Vec<String> = std::fs::read_dir(&kept[0]).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    parts.sort();
    assert_eq!(parts, ["compatibility.ini", "startupCache"], "nothing of a page is kept");
    assert!(std::fs::read_dir(kept[0].join("startupCache")).unwrap().count() > 0, "Firefox wrote its startup cache");
    let second = run("seed-second");
    let seeded = second["profileSeed"].as_str().unwrap_or_default();
    assert!(seeded.starts_with("startupCache and compatibility.ini from ") && seeded.ends_with(&*kept[0].to_string_lossy()), "{second:#}");
    assert_eq!(count_processes("geckodriver"), 0, "geckodriver left running");
}

/// A stand-in WebDriver endpoint: records each request body and refuses to make a session.
fn stand_in_webdriver() -> (String, std::sync::mpsc::Receiver<String>) {
    use std::io::{BufRead, BufReader, Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for stream in listener.incoming().take(4).flatten() {
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut len = 0;
            let mut line = String::new();
            while reader.read_line(&mut line).unwrap_or(0) > 2 {
                if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                    len = v.trim().parse().unwrap_or(0);
                }
                line.clear();
            }
            let mut body = vec![0; len];
            let _ = reader.read_exact(&mut body);
            let _ = tx.send(String::from_utf8_lossy(&body).into());
            let reply = r#"{"value":{"error":"session not created","message":"stand-in endpoint: no browser here","stacktrace":""}}"#;
            let mut stream = stream;
            let _ = write!(
                stream,
                "HTTP/1.1 500 Internal Server Error\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{reply}",
                reply.len()
            );
        }
    });
    (url, rx)
}

#[test]
fn edge_new_session_request_as_recorded_by_a_fake_stand_in_endpoint() {
    eprintln!("Edge cannot be installed on this machine: this checks the new-session request harness sends, against a stand-in WebDriver endpoint.");
    let (url, requests) = stand_in_webdriver();
    let dir = out_dir("edge-stand-in");
    let out = harness(&["run", "--browser", "edge", "--webdriver-url", &url, "--suite", "quick", "--filter", "add", "--out", dir.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("stand-in endpoint: no browser here"), "{}", text(&out.stderr));
    let body: Value = serde_json::from_str(&requests.recv_timeout(std::time::Duration::from_secs(10)).unwrap()).unwrap();
    let caps = &body["capabilities"]["alwaysMatch"];
    assert_eq!(caps["browserName"], "MicrosoftEdge", "{body:#}");
    let args: Vec<&str> = caps["ms:edgeOptions"]["args"].as_array().unwrap().iter().map(|a| a.as_str().unwrap()).collect();
    for flag in ["--headless=new", "--enable-unsafe-webgpu", "--enable-webgpu-developer-features"] {
        assert!(args.contains(&flag), "{flag} missing from {args:?}");
    }
    assert!(caps["ms:edgeOptions"].get("binary").is_none(), "a remote session names no local binary");
    let run = &read_json(&dir.join("results.json"))["runs"][0];
    assert_eq!((run["browser"].as_str(), run["status"].as_str()), (Some("edge"), Some("failed")));
}

#[test]
#[ignore = "needs Microsoft Edge and msedgedriver (not in Debian, not installed here); ci/test.sh runs it where `harness browsers` finds both"]
fn edge_quick_suite_when_msedgedriver_is_present() {
    let found = harness(&["browsers", "--json"]);
    let browsers: Value = serde_json::from_slice(&found.stdout).unwrap();
    let edge = browsers.as_array().unwrap().iter().find(|b| b["browser"] == "edge").unwrap().clone();
    assert!(
        !edge["driver"]["path"].is_null() && !edge["executable"]["path"].is_null(),
        "run only where Edge is installed: {}; {}",
        edge["executable"]["missing"],
        edge["driver"]["missing"]
    );
    let _lock = BROWSER.lock().unwrap_or_else(|e| e.into_inner());
    let dir = out_dir("edge");
    let out = harness(&["run", "--browser", "edge", "--suite", "quick", "--samples", "3", "--out", dir.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
}

/// `harness verify --json ARGS`: its exit status and report; what it logged must hold no warning.
fn verify(args: &[&str]) -> (Option<i32>, Value) {
    let mut all = vec!["verify", "--json"];
    all.extend_from_slice(args);
    let out = harness(&all);
    let stderr = text(&out.stderr);
    let report = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {stderr}"));
    assert!(!stderr.contains("WARN"), "what verify found is evidence, not a warning:\n{stderr}");
    (out.status.code(), report)
}

fn evidence_of(report: &Value, source: &str) -> String {
    report["evidence"].as_array().unwrap().iter().filter(|e| e["source"] == source).map(|e| e["finding"].to_string()).collect()
}

#[test]
fn verify_says_software_for_chromium_swiftshader_with_evidence() {
    let _lock = BROWSER.lock().unwrap_or_else(|e| e.into_inner());
    let (code, report) = verify(&["--browser", "chrome"]);
    assert_eq!(code, Some(1), "{report:#}");
    assert_eq!(report["verdict"], "software");
    assert!(evidence_of(&report, "known software adapters").contains("SwiftShader"), "{report:#}");
    assert!(evidence_of(&report, "browser GPU diagnostics").contains("SwiftShader"), "chrome://gpu was read: {report:#}");
    assert!(evidence_of(&report, "plausibility").contains("ms on the CPU in the same browser"), "{report:#}");
    assert_eq!(report["adapter"]["isFallbackAdapter"], true);
}

#[test]
fn verify_says_software_for_firefox_lavapipe_with_evidence() {
    let _lock = BROWSER.lock().unwrap_or_else(|e| e.into_inner());
    let (code, report) = verify(&["--browser", "firefox"]);
    assert_eq!(code, Some(1), "{report:#}");
    assert_eq!(report["verdict"], "software");
    // Firefox hides the adapter's name; its fallback flag and the plausibility check remain.
    let soft: Vec<&str> = report["evidence"].as_array().unwrap().iter()
        .filter(|e| e["saysSoftware"] == true).map(|e| e["source"].as_str().unwrap()).collect();
    assert!(soft.contains(&"isFallbackAdapter"), "{report:#}");
    assert!(soft.contains(&"plausibility"), "{report:#}");
    assert!(evidence_of(&report, "browser GPU diagnostics").contains("could not be read"), "{report:#}");
}

#[test]
fn doctor_on_a_machine_without_a_gpu_names_that_link_first_and_exits_1() {
    let _lock = BROWSER.lock().unwrap_or_else(|e| e.into_inner());
    let out = harness(&["doctor", "--json"]);
    let d: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&out.stderr)));
    assert_eq!(out.status.code(), Some(1), "{d:#}");
    assert_eq!(d["exit"], 1);
    let links = d["links"].as_array().unwrap();
    let first = &links[d["firstBroken"].as_u64().expect("a broken link") as usize];
    assert_eq!(first["name"], "GPU driver", "{d:#}");
    assert!(first["finding"].as_str().unwrap().contains("no hardware GPU"), "{d:#}");
    // Both browsers CI installs were started and found on software, and the native adapter is llvmpipe.
    assert_eq!(d["browsers"], serde_json::json!(["chrome", "firefox"]), "{d:#}");
    assert_eq!(d["onGpu"], serde_json::json!([]));
    let finding = |name: &str| links.iter().find(|l| l["name"].as_str().unwrap().starts_with(name)).map(|l| l["finding"].to_string()).unwrap_or_default();
    assert!(finding("Chrome/Chromium WebGPU adapter").contains("SwiftShader"), "{d:#}");
    assert!(finding("Firefox WebGPU adapter").contains("software"), "{d:#}");
    assert!(finding("native wgpu adapter").contains("llvmpipe"), "{d:#}");
    assert!(finding("Firefox timestamps and f16").contains("timestamp-query"), "{d:#}");
}

#[test]
fn verify_says_software_for_native_llvmpipe() {
    let (code, report) = verify(&["--platform", "native"]);
    assert_eq!(code, Some(1), "{report:#}");
    assert!(evidence_of(&report, "known software adapters").contains("llvmpipe"), "{report:#}");
    assert!(evidence_of(&report, "plausibility").contains("native CPU"), "{report:#}");
}

#[test]
fn wasm_and_native_platforms_pass_the_quick_suite_checks() {
    let _lock = BROWSER.lock().unwrap_or_else(|e| e.into_inner());
    let dir = out_dir("baselines");
    let out = harness(&["run", "--platform", "wasm,native", "--suite", "quick", "--samples", "3", "--warmup", "0", "--out", dir.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let results = read_json(&dir.join("results.json"));
    assert!(schema_errors(&results).is_empty(), "{:?}", schema_errors(&results));
    let runs = results["runs"].as_array().unwrap();
    assert_eq!(runs.iter().map(|r| r["platform"].as_str().unwrap()).collect::<Vec<_>>(), ["wasm", "native"]);
    for run in runs {
        let statuses = case_statuses(run);
        assert!(!statuses.is_empty() && statuses.iter().all(|s| s == "passed"), "{}: {statuses:?}", run["platform"]);
    }
    // The CPU baseline has no GPU timer; the native run reports wgpu's adapter.
    assert!(runs[0]["cases"][0]["gpu"].is_null());
    assert!(runs[1]["adapter"]["description"].as_str().unwrap().contains("Vulkan"), "{}", runs[1]["adapter"]);
    // Natively on a software adapter (llvmpipe here), its times measure the CPU: the terminal's
    // summary ranks the WASM CPU against nothing then, and says why.
    let printed = text(&out.stdout);
    let note = not_ranked(&printed);
    assert_eq!(note.contains("wgpu/native ("), runs[1]["adapter"]["isFallbackAdapter"] == true, "wgpu's own word: {printed}");
    assert!(!note.contains("wasm"), "{printed}");
}

#[test]
fn ctrl_c_or_sigterm_keeps_finished_cases_and_ends_driver_and_browser() {
    use std::io::{BufRead, BufReader};
    let _lock = BROWSER.lock().unwrap_or_else(|e| e.into_inner());
    for (signal, name) in [(libc::SIGINT, "sigint"), (libc::SIGTERM, "sigterm")] {
        let dir = out_dir(&format!("interrupt-{name}"));
        let mut child = harness_command()
            .args(["run", "--suite", "quick", "--samples", "300", "--max-time", "60", "--warmup", "0", "--out", dir.to_str().unwrap()])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        let stderr = child.stderr.take().unwrap();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
        // Interrupt once the first case has finished.
        let mut seen = Vec::new();
        while let Ok(line) = rx.recv_timeout(std::time::Duration::from_secs(120)) {
            let done = line.starts_with("PASS");
            seen.push(line);
            if done {
                break;
            }
        }
        assert!(seen.iter().any(|l| l.starts_with("PASS")), "no case finished: {seen:#?}");
        // SAFETY: signals only the child this test started.
        unsafe { libc::kill(child.id() as i32, signal) };
        let status = child.wait().unwrap();
        let rest: Vec<String> = rx.try_iter().collect();
        assert_eq!(status.code(), Some(1), "{name}: {rest:#?}");
        let run = &read_json(&dir.join("results.json"))["runs"][0];
        assert_eq!(run["status"], "failed");
        assert!(run["failure"].as_str().unwrap().contains("interrupted"), "{}", run["failure"]);
        let statuses = case_statuses(run);
        assert_eq!(statuses[0], "passed", "{statuses:?}");
        assert_eq!(statuses.last().unwrap(), "notRun", "{statuses:?}");
        assert_eq!(count_processes("chromedriver") + count_processes("chromium"), 0, "{name}: driver or browser left running");
    }
}
