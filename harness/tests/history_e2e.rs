//! End-to-end tests of the history (issue 58): `harness history import` of the committed evidence
//! (series apart by hardware and browser), two writers at once and a writer killed inside its
//! transaction (real processes on one SQLite file), a store from a newer harness refused, the
//! trend site in headless Chromium (its graphs have their points; a screenshot is kept under
//! target/test-artifacts), `run --fail-on-regression=history` in a real run in headless Chromium
//! (SwiftShader here), and `history find` narrowing a step to this repository's commits.

mod common;
use common::*;
use history::Store;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

/// `harness ARGS` with the store at `store`.
fn with_store(store: &Path, args: &[&str]) -> std::process::Output {
    harness_command().args(args).env("HARNESS_HISTORY", store).output().unwrap()
}

fn series_hardware(store: &Path) -> Vec<(String, String)> {
    let store = Store::open(store).unwrap();
    let mut pairs: Vec<(String, String)> = store.series().unwrap().into_iter().map(|s| (s.key.hardware, s.key.browser)).collect();
    pairs.sort();
    pairs.dedup();
    pairs
}

#[test]
fn the_committed_evidence_imports_its_series_apart_by_hardware_and_browser() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("history.sqlite");
    let evidence = workspace().join("docs/hardware");
    let out = with_store(&store, &["history", "import", evidence.to_str().unwrap()]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}{}", text(&out.stderr));
    let files = std::process::Command::new("find").arg(&evidence).args(["-name", "*results.json"]).output().unwrap();
    let count = text(&files.stdout).lines().count();
    assert!(stdout.contains(&format!("{count} run(s) added")) && stdout.contains(&format!("from {count} file(s)")), "every committed results.json imports: {stdout}");
    let pairs = series_hardware(&store);
    for (hardware, browser) in [("NVIDIA H100 80GB HBM3", "chrome"), ("NVIDIA H200", "chrome"), ("NVIDIA H100 80GB HBM3", "firefox"), ("NVIDIA H200", "firefox"), ("NVIDIA H200", "wgpu"), ("NVIDIA H100 80GB HBM3", "wgpu")] {
        assert!(pairs.contains(&(hardware.to_string(), browser.to_string())), "{hardware} in {browser}: {pairs:?}");
    }
    // No series names two GPUs, or a driver.
    assert!(pairs.iter().all(|(h, _)| !(h.contains("H100") && h.contains("H200")) && !h.contains("driver") && !h.contains("580.")), "{pairs:?}");
    // Runs here, on software adapters, land on series of their own: native wgpu on llvmpipe, and
    // Firefox on lavapipe, whose name Firefox hides (its fallback flag says software).
    {
        let _lock = BROWSER.lock().unwrap_or_else(|e| e.into_inner());
        for (platform, browser) in [("native", "chrome"), ("webgpu", "firefox")] {
            let out = with_store(&store, &["run", "--browser", browser, "--platform", platform, "--suite", "quick", "--filter", "add", "--samples", "2", "--warmup", "0", "--out", dir.path().join(browser).to_str().unwrap()]);
            assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        }
    }
    let here: Vec<(String, String)> = series_hardware(&store).into_iter().filter(|(h, _)| h.starts_with("software: ")).collect();
    assert_eq!(here.len(), 2, "{here:?}");
    assert!(here.iter().any(|(h, b)| h.starts_with("software: Mesa llvmpipe on ") && b == "wgpu"), "{here:?}");
    assert!(here.iter().any(|(h, b)| h.starts_with("software: an unnamed fallback adapter on ") && b == "firefox"), "{here:?}");
    // Imported again, nothing is added twice.
    let again = with_store(&store, &["history", "import", evidence.to_str().unwrap()]);
    assert!(text(&again.stdout).contains(&format!("0 run(s) added (0 points), {count} already there")), "{}", text(&again.stdout));
    // A file that is no results.json is named and skipped.
    let verify = evidence.join("h100-native/verify.json");
    let out = with_store(&store, &["history", "import", verify.to_str().unwrap()]);
    assert!(text(&out.stdout).contains("skipped") && text(&out.stdout).contains("verify.json"), "{}", text(&out.stdout));
    assert_eq!(out.status.code(), Some(2));
}

/// `n` copies of a committed run, each a run of its own (its time moved by a second a copy), in `dir`.
fn copies(dir: &Path, n: usize, tag: u32) -> Vec<PathBuf> {
    let source = std::fs::read_to_string(workspace().join("docs/hardware/h200-history/run-01-results.json")).unwrap();
    let mut value: serde_json::Value = serde_json::from_str(&source).unwrap();
    (0..n)
        .map(|i| {
            value["createdAt"] = format!("2026-11-{:02}T{:02}:{:02}:{:02}Z", 1 + tag, i / 3600, (i / 60) % 60, i % 60).into();
            let path = dir.join(format!("{tag}-{i}-results.json"));
            std::fs::write(&path, value.to_string()).unwrap();
            path
        })
        .collect()
}

#[test]
fn two_writers_at_once_fifty_times_lose_no_run_and_show_no_lock_error() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("history.sqlite");
    let files: Vec<Vec<PathBuf>> = (0..2).map(|w| copies(dir.path(), 50, w)).collect();
    // Each writer imports its 50 runs one process at a time, the two writers at once.
    let writers: Vec<_> = files
        .into_iter()
        .map(|mine| {
            let store = store.clone();
            std::thread::spawn(move || {
                let mut errors = String::new();
                for f in mine {
                    let out = harness_command().args(["history", "import", f.to_str().unwrap()]).env("HARNESS_HISTORY", &store).output().unwrap();
                    if out.status.code() != Some(0) || !text(&out.stderr).is_empty() {
                        errors.push_str(&format!("{}: {}{}\n", f.display(), text(&out.stdout), text(&out.stderr)));
                    }
                }
                errors
            })
        })
        .collect();
    for w in writers {
        let errors = w.join().unwrap();
        assert!(errors.is_empty(), "{errors}");
    }
    let store = Store::open(&store).unwrap();
    assert_eq!((store.runs().unwrap().len(), store.integrity().unwrap().as_str()), (100, "ok"));
}

#[test]
fn a_writer_killed_inside_its_transaction_leaves_the_store_as_it_was_and_a_newer_store_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("history.sqlite");
    let files = copies(dir.path(), 2, 7);
    assert_eq!(with_store(&store, &["history", "import", files[0].to_str().unwrap()]).status.code(), Some(0));
    let marker = dir.path().join("stalled");
    let mut writer = harness_command()
        .args(["history", "import", files[1].to_str().unwrap()])
        .env("HARNESS_HISTORY", &store)
        .env("HARNESS_HISTORY_STALL", &marker)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    for _ in 0..600 {
        if marker.exists() {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(marker.exists(), "the writer reached its transaction");
    writer.kill().unwrap();
    writer.wait().unwrap();
    {
        let s = Store::open(&store).unwrap();
        assert_eq!((s.runs().unwrap().len(), s.integrity().unwrap().as_str()), (1, "ok"), "the killed run is not half there");
        assert!(s.points().unwrap().iter().all(|p| p.run == s.runs().unwrap()[0].id));
    }
    let out = with_store(&store, &["history", "import", files[1].to_str().unwrap()]);
    assert!(text(&out.stdout).contains("1 run(s) added"), "the same run lands once tried again: {}", text(&out.stdout));
    // A store a newer harness wrote is refused, naming both versions.
    assert!(make_newer(&store));
    let out = with_store(&store, &["history", "check"]);
    let err = text(&out.stderr);
    assert!(out.status.code() != Some(0) && err.contains(&format!("schema version {}", history::store::SCHEMA_VERSION + 1)) && err.contains("this harness reads version"), "{err}");
}

/// Sets the store's schema version one past this harness's, as a newer harness would leave it.
fn make_newer(store: &Path) -> bool {
    let out = std::process::Command::new("python3")
        .args(["-c", &format!("import sqlite3; c = sqlite3.connect({:?}); c.execute('PRAGMA user_version = {}'); c.commit()", store.to_str().unwrap(), history::store::SCHEMA_VERSION + 1)])
        .status()
        .unwrap();
    out.success()
}

#[tokio::test(flavor = "multi_thread")]
async fn the_trend_site_loads_in_headless_chromium_and_its_graphs_have_their_points() {
    let _lock = BROWSER.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("history.sqlite");
    let runs = workspace().join("docs/hardware/h200-history");
    let site = dir.path().join("trend");
    for args in [vec!["history", "import", runs.to_str().unwrap()], vec!["trend", "--out", site.to_str().unwrap()]] {
        let out = tokio::task::block_in_place(|| with_store(&store, &args));
        assert_eq!(out.status.code(), Some(0), "{}{}", text(&out.stdout), text(&out.stderr));
    }
    let open = OpenServer::start(&site);
    let driver = Chromedriver::start();
    let client = driver.headless(Some((1200, 900))).await;
    client.goto(&open.url).await.unwrap();
    let rows = client.execute("return document.querySelectorAll('#series tbody tr').length", vec![]).await.unwrap();
    assert_eq!(rows, 60, "the index lists the 60 series");
    let href = client.execute("return document.querySelector('#series tbody a').getAttribute('href')", vec![]).await.unwrap();
    client.goto(&format!("{}{}", open.url, href.as_str().unwrap())).await.unwrap();
    let drawn = client
        .execute("return Array.from(document.querySelectorAll('svg.trend')).map(s => [s.querySelectorAll('circle.point').length, s.querySelector('polyline.line').getAttribute('points').trim().split(' ').length, s.getBoundingClientRect().height])", vec![])
        .await
        .unwrap();
    let graphs = drawn.as_array().unwrap();
    assert!(!graphs.is_empty(), "a graph per series");
    for g in graphs {
        assert_eq!((g[0].as_u64(), g[1].as_u64()), (Some(8), Some(8)), "8 runs, 8 points and the line through them: {g}");
        assert!(g[2].as_f64().unwrap() > 50.0, "drawn with a height: {g}");
    }
    let png = client.screenshot().await.unwrap();
    let artifacts = workspace().join("target/test-artifacts");
    std::fs::create_dir_all(&artifacts).unwrap();
    std::fs::write(artifacts.join("trend-case.png"), &png).unwrap();
    assert!(png.starts_with(b"\x89PNG"));
    // A point links its run's page.
    client.goto(&format!("{}run/1.html", open.url)).await.unwrap();
    let title = client.execute("return document.querySelector('h1').textContent", vec![]).await.unwrap();
    assert_eq!(title, "Run 1");
    client.close().await.unwrap();
}

#[test]
fn fail_on_regression_history_fails_a_real_run_slower_than_its_history() {
    let _lock = BROWSER.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("history.sqlite");
    let out_path = dir.path().join("first");
    let args = ["run", "--browser", "chrome", "--platform", "webgpu", "--suite", "quick", "--filter", "add*,softmax*", "--samples", "5", "--warmup", "1"];
    let run = |extra: &[&str], out: &Path| {
        let mut a: Vec<&str> = args.to_vec();
        a.extend(["--out", out.to_str().unwrap()]);
        a.extend(extra);
        with_store(&store, &a)
    };
    let first = run(&["--fail-on-regression", "history"], &out_path);
    assert_eq!(first.status.code(), Some(0), "no history yet, nothing regressed: {}", text(&first.stderr));
    assert!(text(&first.stderr).contains("history: run 1 in"), "{}", text(&first.stderr));
    // Its series are SwiftShader's here, apart from any GPU's.
    assert!(series_hardware(&store).iter().all(|(h, b)| h.starts_with("software: SwiftShader on ") && b == "chrome"), "{:?}", series_hardware(&store));
    // Six earlier runs, each twice as fast: the next real run regresses against them.
    let mut value: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(out_path.join("results.json")).unwrap()).unwrap();
    for run in value["runs"].as_array_mut().unwrap() {
        for case in run["cases"].as_array_mut().unwrap() {
            for summary in ["gpu", "wall"] {
                if let Some(s) = case.get_mut(summary).and_then(|s| s.as_object_mut()) {
                    for key in ["median", "min", "max", "q1", "q3", "mean"] {
                        if let Some(v) = s.get(key).and_then(|v| v.as_f64()) {
                            s.insert(key.into(), (v / 2.0).into());
                        }
                    }
                }
            }
        }
    }
    for i in 0..6 {
        value["createdAt"] = format!("2026-01-0{}T00:00:00Z", i + 1).into();
        let f = dir.path().join(format!("fast-{i}-results.json"));
        std::fs::write(&f, value.to_string()).unwrap();
        assert_eq!(with_store(&store, &["history", "import", f.to_str().unwrap()]).status.code(), Some(0));
    }
    let second = run(&["--fail-on-regression=history"], &dir.path().join("second"));
    let err = text(&second.stderr);
    assert_eq!(second.status.code(), Some(1), "{err}");
    assert!(err.contains("history: regressed") && err.contains("history gate:") && err.contains("regressed"), "{err}");
    // The same check, on its own.
    let check = with_store(&store, &["history", "check", "--window", "6"]);
    assert_eq!(check.status.code(), Some(1), "{}", text(&check.stdout));
    assert!(text(&check.stdout).contains("regressed +"), "{}", text(&check.stdout));
    // --no-history leaves nothing to gate on.
    let refused = run(&["--fail-on-regression", "history", "--no-history"], &dir.path().join("third"));
    assert_eq!(refused.status.code(), Some(2), "{}", text(&refused.stderr));
    assert!(text(&refused.stderr).contains("--no-history leaves out"), "{}", text(&refused.stderr));
}

#[test]
fn history_find_narrows_a_step_to_its_first_commit_and_names_the_commits_without_a_run() {
    let git = |args: &[&str]| std::process::Command::new("git").args(args).current_dir(workspace()).output().ok().filter(|o| o.status.success()).map(|o| text(&o.stdout).trim().to_string());
    // Six commits of this repository, oldest first; a shallow clone without them skips the test.
    let Some(commits) = (0..6).rev().map(|n| git(&["rev-parse", "--short=12", &format!("HEAD~{n}")])).collect::<Option<Vec<String>>>() else {
        eprintln!("skipped: this checkout lacks HEAD~5 (a shallow clone)");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("history.sqlite");
    let source = std::fs::read_to_string(workspace().join("docs/hardware/h200-history/run-01-results.json")).unwrap();
    // Runs at commits 0, 1, 2 (as they are) and 4, 5 (add/1001 twice as slow); commit 3 has no run.
    for (n, commit) in commits.iter().enumerate().filter(|(n, _)| *n != 3) {
        let mut value: serde_json::Value = serde_json::from_str(&source).unwrap();
        value["createdAt"] = format!("2026-11-20T00:00:0{n}Z").into();
        value["harness"]["gitRevision"] = commit.as_str().into();
        for case in value["runs"][0]["cases"].as_array_mut().unwrap() {
            if n >= 4 && case["id"] == "add/1001/seed=1" {
                let m = case["gpu"]["median"].as_f64().unwrap();
                case["gpu"]["median"] = (m * 2.0).into();
            }
        }
        let f = dir.path().join(format!("{n}-results.json"));
        std::fs::write(&f, value.to_string()).unwrap();
        assert_eq!(with_store(&store, &["history", "import", f.to_str().unwrap()]).status.code(), Some(0));
    }
    let repo = workspace();
    let out = with_store(&store, &["history", "find", "add/1001/seed=1", "--repo", repo.to_str().unwrap()]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}{}", text(&out.stderr));
    assert!(stdout.contains("regressed +100.0%") && stdout.contains(&format!("first seen in run 4 at {}", commits[4])), "{stdout}");
    assert!(stdout.contains(&format!("the last run before it is at {}", commits[2])), "{stdout}");
    assert!(stdout.contains(&format!("1 commit(s) between them have no run; run harness at them to narrow it further: {}", commits[3])), "{stdout}");
    // A series without a step says so; an unknown case is named, with its kernel's cases.
    let flat = with_store(&store, &["history", "find", "mul/1001/seed=1"]);
    assert!(text(&flat.stdout).contains("no step in its 5 run(s)"), "{}", text(&flat.stdout));
    let unknown = with_store(&store, &["history", "find", "add/7/seed=1"]);
    assert!(unknown.status.code() != Some(0) && text(&unknown.stderr).contains("no series of case `add/7/seed=1`") && text(&unknown.stderr).contains("add/1001/seed=1"), "{}", text(&unknown.stderr));
}
