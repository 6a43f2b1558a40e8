//! End-to-end tests of runs that meet a dying browser or driver: real headless Chromium and
//! Firefox, the browser's main process or its WebDriver SIGKILLed mid-run. The killed case is
//! `crashed`, then run again in a fresh session with the rest; nothing finished is lost; the exit
//! status says a crash happened; no process is left behind.

mod common;
use common::*;
use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// Processes whose name starts with `name`, and the name of each one's parent.
fn processes(name: &str) -> Vec<(i32, String)> {
    let comm = |pid: &str| std::fs::read_to_string(format!("/proc/{pid}/comm")).map(|c| c.trim().to_string()).unwrap_or_default();
    let Ok(entries) = std::fs::read_dir("/proc") else { return Vec::new() };
    entries
        .flatten()
        .filter_map(|e| {
            let pid: i32 = e.file_name().to_str()?.parse().ok()?;
            // The parent is the fourth field of /proc/PID/stat, after the name in parentheses.
            let stat = std::fs::read_to_string(e.path().join("stat")).ok()?;
            let parent = stat.rsplit_once(')')?.1.split_whitespace().nth(1)?.to_string();
            comm(&pid.to_string()).starts_with(name).then(|| (pid, comm(&parent)))
        })
        .collect()
}

/// What a test kills: the browser's main process (the one its WebDriver started, not its GPU,
/// renderer or content children), or the WebDriver.
#[derive(Debug, Clone, Copy)]
enum Victim {
    Browser,
    Driver,
}

/// The pids of `victim` for `browser` (`chrome` or `firefox`).
fn victims(browser: &str, victim: Victim) -> Vec<i32> {
    let (browser, driver) = if browser == "chrome" { ("chromium", "chromedriver") } else { ("firefox", "geckodriver") };
    let found = match victim {
        Victim::Browser => processes(browser).into_iter().filter(|(_, parent)| parent.starts_with(driver)).collect(),
        Victim::Driver => processes(driver),
    };
    found.into_iter().map(|(pid, _)| pid).collect()
}

/// Runs a dozen quick cases of about a second each in `browser`, SIGKILLs `victim` once the second
/// case has passed, and returns the exit status, results.json and what harness printed.
fn run_and_kill(browser: &str, victim: Victim) -> (Option<i32>, Value, Vec<String>) {
    let dir = out_dir(&format!("crash-{browser}-{victim:?}"));
    let mut child = Command::new(env!("CARGO_BIN_EXE_harness"))
        .args(["run", "--browser", browser, "--suite", "quick", "--filter", "add,sub,mul,div,relu,gelu"])
        .args(["--samples", "1000", "--max-time", "1", "--warmup", "0", "--out", dir.to_str().unwrap()])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (tx, rx) = mpsc::channel();
    let stderr = child.stderr.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let mut seen = Vec::new();
    while let Ok(line) = rx.recv_timeout(Duration::from_secs(180)) {
        seen.push(line);
        if seen.iter().filter(|l| l.starts_with("PASS")).count() == 2 {
            break;
        }
    }
    let pids = victims(browser, victim);
    assert!(!pids.is_empty(), "no {victim:?} of {browser} to kill; harness said: {seen:#?}");
    for pid in &pids {
        // SAFETY: signals processes of the run this test started.
        unsafe { libc::kill(*pid, libc::SIGKILL) };
    }
    println!("{browser}: SIGKILLed its {victim:?} ({pids:?}) after two cases had passed");
    let status = child.wait().unwrap();
    seen.extend(rx.try_iter());
    (status.code(), read_json(&dir.join("results.json")), seen)
}

fn check_recovered(browser: &str, victim: Victim) {
    let (code, results, printed) = run_and_kill(browser, victim);
    assert!(schema_errors(&results).is_empty(), "{:?}", schema_errors(&results));
    let run = &results["runs"][0];
    let cases = run["cases"].as_array().unwrap();
    let crashed: Vec<&Value> = cases.iter().filter(|c| c["earlierAttempts"].as_array().is_some_and(|a| a.iter().any(|a| a["status"] == "crashed"))).collect();
    // The case that was running when the process died: crashed, then run again, and passed.
    assert_eq!(crashed.len(), 1, "{browser} {victim:?}: {cases:#?}\n{printed:#?}");
    let attempt = &crashed[0]["earlierAttempts"][0];
    assert!(attempt["message"].as_str().unwrap().contains("WebDriver"), "{attempt}");
    println!("{browser} {victim:?}: {} crashed: {}", crashed[0]["id"], attempt["message"]);
    // Nothing finished is lost and every remaining case was measured, in a fresh session.
    let statuses: Vec<&str> = cases.iter().map(|c| c["status"].as_str().unwrap()).collect();
    assert!(statuses.iter().all(|s| *s == "passed"), "{browser} {victim:?}: {statuses:?}\n{printed:#?}");
    assert_eq!(run["status"], "completed", "{}", run["failure"]);
    assert!(run["errors"].as_array().unwrap().iter().any(|e| e["message"].as_str().unwrap().contains("crashed")), "{}", run["errors"]);
    assert!(printed.iter().any(|l| l.contains("fresh session")), "{printed:#?}");
    // The crash is news even though the retry passed.
    assert_eq!(code, Some(1), "{printed:#?}");
    for name in ["chromedriver", "chromium", "geckodriver", "firefox"] {
        assert_eq!(count_processes(name), 0, "{name} left running after {browser} {victim:?}");
    }
}

#[test]
fn a_killed_chromium_or_chromedriver_costs_one_attempt_and_the_run_goes_on_in_a_fresh_session() {
    let _lock = BROWSER.lock().unwrap_or_else(|e| e.into_inner());
    check_recovered("chrome", Victim::Browser);
    check_recovered("chrome", Victim::Driver);
}

#[test]
fn a_killed_firefox_or_geckodriver_costs_one_attempt_and_the_run_goes_on_in_a_fresh_session() {
    let _lock = BROWSER.lock().unwrap_or_else(|e| e.into_inner());
    check_recovered("firefox", Victim::Browser);
    check_recovered("firefox", Victim::Driver);
}

#[test]
// Named so that its thread's name (a process name where the test runs on the main thread) does
// not start with a browser's, which the process checks count.
fn three_crashes_in_a_row_give_up_chromium_and_firefox_still_runs() {
    let _lock = BROWSER.lock().unwrap_or_else(|e| e.into_inner());
    let dir = out_dir("crash-every-session");
    // Cases of at least 5 s each, so no case finishes in a Chromium that lives 2 s.
    let mut child = Command::new(env!("CARGO_BIN_EXE_harness"))
        .args(["run", "--browser", "chrome,firefox", "--suite", "quick", "--filter", "add"])
        .args(["--samples", "100000", "--max-time", "5", "--warmup", "0", "--out", dir.to_str().unwrap()])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let printed = std::thread::spawn(move || BufReader::new(stderr).lines().map_while(Result::ok).collect::<Vec<String>>());
    // Kill every Chromium main process 2 s after it appears, until harness ends.
    let mut first_seen = std::collections::HashMap::new();
    let mut killed = 0;
    while matches!(child.try_wait(), Ok(None)) {
        for pid in victims("chrome", Victim::Browser) {
            let seen = *first_seen.entry(pid).or_insert_with(std::time::Instant::now);
            if seen.elapsed() > Duration::from_secs(2) {
                // SAFETY: signals a Chromium of the run this test started.
                unsafe { libc::kill(pid, libc::SIGKILL) };
                first_seen.remove(&pid);
                killed += 1;
            }
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let code = child.wait().unwrap().code();
    let printed = printed.join().unwrap();
    println!("killed Chromium {killed} times");
    let results = read_json(&dir.join("results.json"));
    assert!(schema_errors(&results).is_empty(), "{:?}", schema_errors(&results));
    let (chrome, firefox) = (&results["runs"][0], &results["runs"][1]);
    assert_eq!(chrome["status"], "failed", "{printed:#?}");
    let failure = chrome["failure"].as_str().unwrap();
    assert!(failure.contains("crashed 3 times in a row"), "{failure}");
    println!("chrome: {failure}");
    assert_eq!(killed, 3, "one kill per session: {printed:#?}");
    // Its cases are crashed or never reached; none passed or is lost.
    for case in chrome["cases"].as_array().unwrap() {
        assert!(case["status"] == "crashed" || case["status"] == "notRun", "{case}");
    }
    assert_eq!(firefox["status"], "completed", "{}", firefox["failure"]);
    assert!(firefox["cases"].as_array().unwrap().iter().all(|c| c["status"] == "passed"), "{firefox}");
    assert_eq!(code, Some(1));
    for name in ["chromedriver", "chromium", "geckodriver", "firefox"] {
        assert_eq!(count_processes(name), 0, "{name} left running");
    }
}
