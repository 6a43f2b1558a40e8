//! Helpers shared by the end-to-end tests: running the harness binary, reading its results, and
//! processes (a chromedriver, `harness open`) that the test itself starts and must always end.
#![allow(dead_code)]

use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::Mutex;
use std::time::Duration;

/// Held by every test that starts a browser: some count browser processes, so they must not overlap.
pub static BROWSER: Mutex<()> = Mutex::new(());

/// Runs the harness binary to completion.
pub fn harness(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_harness"))
        .args(args)
        .output()
        .expect("the harness binary runs")
}

/// A fresh, empty folder for one test's outputs.
pub fn out_dir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// Reads a JSON file.
pub fn read_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).expect("results.json exists")).expect("valid JSON")
}

/// Runs `harness run --json --out DIR ARGS` (DIR a fresh folder called `name`) with the browser
/// lock held, checks its results.json against the schema and that no chromedriver is left, and
/// returns the exit status, the results and stderr.
pub fn run_checked(name: &str, args: &[&str]) -> (Option<i32>, Value, String) {
    let _lock = BROWSER.lock().unwrap_or_else(|e| e.into_inner());
    let dir = out_dir(name);
    let mut all = vec!["run", "--json", "--out", dir.to_str().unwrap()];
    all.extend_from_slice(args);
    let out = harness(&all);
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

/// Running processes whose name starts with `name`.
pub fn count_processes(name: &str) -> usize {
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
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_harness"));
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
