//! Launching a WebDriver (chromedriver, …) in its own process group, so that it and every browser
//! process it starts can be ended together, also on errors and Ctrl-C, and by a watchdog when
//! harness itself is killed; and with a scratch folder of its own for every temporary file it and
//! its browsers make, which the watchdog removes too.

use std::io::Read;
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Process groups of every running driver, for the emergency exit on a second Ctrl-C.
static LIVE_GROUPS: Mutex<Vec<i32>> = Mutex::new(Vec::new());

/// Why a driver could not be started.
#[derive(Debug, thiserror::Error)]
pub enum DriverError {
    /// The executable could not be started.
    #[error("could not start {path}: {source}")]
    Spawn {
        /// The driver.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// It exited before accepting connections.
    #[error("{path} exited before it was ready ({status}); its output:\n{log}")]
    Exited {
        /// The driver.
        path: PathBuf,
        /// Exit status.
        status: String,
        /// Its output.
        log: String,
    },
    /// It did not listen in time.
    #[error("{path} did not accept connections on port {port} within {secs} s")]
    NotReady {
        /// The driver.
        path: PathBuf,
        /// The port.
        port: u16,
        /// Seconds waited.
        secs: u64,
    },
}

/// A running WebDriver server; ended with its whole process group when dropped.
pub struct Driver {
    child: Child,
    watchdog: Option<Child>,
    log: PathBuf,
    /// `http://127.0.0.1:PORT`.
    pub url: String,
    /// The executable.
    pub path: PathBuf,
    /// What `--version` printed.
    pub version: String,
}

/// The first line a program prints for `--version`.
pub fn version_of(path: &Path) -> String {
    Command::new(path)
        .arg("--version")
        .stdin(Stdio::null())
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).lines().next().unwrap_or("").trim().to_string())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "unknown".into())
}

/// A port nobody listens on right now.
pub fn free_port() -> std::io::Result<u16> {
    Ok(std::net::TcpListener::bind(("127.0.0.1", 0))?.local_addr()?.port())
}

impl Driver {
    /// The process group the driver leads, which holds the browsers it starts.
    pub fn process_group(&self) -> i32 {
        self.child.id() as i32
    }

    /// Starts the driver at `path` with `--port=N` on a free port and waits until it listens.
    /// `scratch`, a folder the caller owns and removes, takes its log and, where its path is short
    /// enough ([`MAX_TEMP_FOLDER`]), is the temporary folder (`TMPDIR`) of the driver and its
    /// browsers: their profiles (geckodriver's among them) and what a killed browser leaves behind
    /// go there, not to the system's.
    pub fn launch(path: &Path, scratch: &Path) -> Result<Driver, DriverError> {
        let spawn_err = |source| DriverError::Spawn { path: path.to_path_buf(), source };
        let port = free_port().map_err(spawn_err)?;
        let log = scratch.join("driver.log");
        let output = std::fs::File::create(&log).map_err(spawn_err)?;
        let mut cmd = Command::new(path);
        if let Some(tmp) = as_temp_folder(scratch) {
            cmd.env("TMPDIR", tmp);
        }
        cmd.arg(format!("--port={port}"))
            .stdin(Stdio::null())
            .stdout(output.try_clone().map_err(spawn_err)?)
            .stderr(output);
        #[cfg(unix)]
        std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
        let child = cmd.spawn().map_err(spawn_err)?;
        LIVE_GROUPS.lock().expect("lock").push(child.id() as i32);
        let watchdog = watchdog(child.id() as i32, scratch);
        let mut driver = Driver {
            child,
            watchdog,
            log,
            url: format!("http://127.0.0.1:{port}"),
            path: path.to_path_buf(),
            version: version_of(path),
        };
        driver.wait_ready(port, Duration::from_secs(20))?;
        Ok(driver)
    }

    fn wait_ready(&mut self, port: u16, limit: Duration) -> Result<(), DriverError> {
        let start = Instant::now();
        while start.elapsed() < limit {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Err(DriverError::Exited {
                    path: self.path.clone(),
                    status: status.to_string(),
                    log: self.log_tail(20),
                });
            }
            if TcpStream::connect_timeout(&([127, 0, 0, 1], port).into(), Duration::from_millis(200)).is_ok() {
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Err(DriverError::NotReady { path: self.path.clone(), port, secs: limit.as_secs() })
    }

    /// How the driver ended (`signal: 9 (SIGKILL)`, `exit status: 1`), or `None` while it runs.
    pub fn exit_status(&mut self) -> Option<String> {
        self.child.try_wait().ok().flatten().map(|status| status.to_string())
    }

    /// The last `lines` lines the driver printed.
    pub fn log_tail(&self, lines: usize) -> String {
        let mut text = String::new();
        if let Ok(mut f) = std::fs::File::open(&self.log) {
            let _ = f.read_to_string(&mut text);
        }
        let all: Vec<&str> = text.lines().collect();
        all[all.len().saturating_sub(lines)..].join("\n")
    }

    /// Ends the driver and every process of its group (the browser included): SIGTERM, then
    /// SIGKILL after a grace period.
    pub fn stop(mut self) {
        self.terminate(Duration::from_secs(3));
    }

    /// Ends the watchdog before the driver: it must not fire at a group number that a later
    /// process may reuse.
    fn stop_watchdog(&mut self) {
        if let Some(mut w) = self.watchdog.take() {
            let _ = w.kill();
            let _ = w.wait();
        }
    }

    fn terminate(&mut self, grace: Duration) {
        self.stop_watchdog();
        let pgid = self.child.id() as i32;
        signal_group(pgid, Signal::Term);
        let start = Instant::now();
        while start.elapsed() < grace {
            if matches!(self.child.try_wait(), Ok(Some(_))) && !group_alive(pgid) {
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        signal_group(pgid, Signal::Kill);
        let _ = self.child.kill();
        let _ = self.child.wait();
        LIVE_GROUPS.lock().expect("lock").retain(|&g| g != pgid);
    }
}

impl Drop for Driver {
    fn drop(&mut self) {
        self.stop_watchdog();
        if matches!(self.child.try_wait(), Ok(None)) || group_alive(self.child.id() as i32) {
            self.terminate(Duration::from_millis(500));
        }
    }
}

/// The longest path of a folder given to a driver as its `TMPDIR`: Chromium makes its singleton's
/// Unix socket in it (`.org.chromium.Chromium.XXXXXX/SingletonSocket`, 46 bytes more), a socket's
/// path holds at most 107, and Chromium exits at start when it does not fit.
pub const MAX_TEMP_FOLDER: usize = 61;

/// `scratch`, if it can serve as a driver's temporary folder ([`MAX_TEMP_FOLDER`]).
fn as_temp_folder(scratch: &Path) -> Option<&Path> {
    let fits = scratch.as_os_str().len() <= MAX_TEMP_FOLDER;
    if !fits {
        tracing::debug!("{} is too long a path for Chromium's temporary files: the system's temporary folder keeps them", scratch.display());
    }
    fits.then_some(scratch)
}

/// A shell in a process group of its own that kills the driver's group `pgid` and removes its
/// `scratch` folder once harness is gone: it waits to read from a pipe only harness writes to,
/// which ends when harness ends however it ends (SIGKILL, out of memory), when no Ctrl-C handler
/// or destructor runs. `None` (with a warning) where no shell can be started; the driver is then
/// ended only by harness.
fn watchdog(pgid: i32, scratch: &Path) -> Option<Child> {
    if !cfg!(unix) {
        return None;
    }
    // The second after the kill lets the killed browsers' last writes land before the removal.
    let script = "read -r _; kill -s KILL -- -\"$0\" 2>/dev/null; sleep 1; rm -rf -- \"$1\"";
    let mut cmd = Command::new("sh");
    cmd.arg("-c").arg(script).arg(pgid.to_string()).arg(scratch)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    cmd.spawn().map_err(|e| tracing::warn!("no watchdog for the driver ({e}): if harness is killed, the browser may outlive it")).ok()
}

enum Signal {
    Term,
    Kill,
}

fn signal_group(pgid: i32, signal: Signal) {
    #[cfg(unix)]
    {
        let sig = match signal {
            Signal::Term => libc::SIGTERM,
            Signal::Kill => libc::SIGKILL,
        };
        // SAFETY: killpg only sends a signal; pgid is a group we created.
        unsafe {
            libc::killpg(pgid, sig);
        }
    }
    #[cfg(not(unix))]
    let _ = (pgid, signal);
}

fn group_alive(pgid: i32) -> bool {
    #[cfg(unix)]
    {
        // SAFETY: signal 0 only checks for existence.
        unsafe { libc::killpg(pgid, 0) == 0 }
    }
    #[cfg(not(unix))]
    {
        let _ = pgid;
        false
    }
}

/// Kills every driver group still running: the last resort on a second Ctrl-C.
pub fn kill_all_now() {
    for pgid in LIVE_GROUPS.lock().map(|g| g.clone()).unwrap_or_default() {
        signal_group(pgid, Signal::Kill);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_scratch_folder_is_a_temporary_folder_only_where_chromiums_socket_path_fits() {
        let typical = Path::new("/tmp/harness-AbC123");
        assert_eq!(as_temp_folder(typical), Some(typical));
        let longest = format!("/{}", "d".repeat(MAX_TEMP_FOLDER - 1));
        assert!(as_temp_folder(Path::new(&longest)).is_some());
        // The socket's path: the folder, Chromium's own folder in it, and the socket.
        assert_eq!(longest.len() + "/.org.chromium.Chromium.XXXXXX/SingletonSocket".len(), 107);
        assert_eq!(as_temp_folder(Path::new(&format!("{longest}d"))), None);
    }
}
