//! The browsers harness drives: how to find each one and its WebDriver, and the capabilities
//! (flags as data) that give WebGPU in an automated session. One file per browser.

mod chrome;

use clap::ValueEnum;
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};

/// A browser harness knows how to drive.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum BrowserKind {
    /// Google Chrome or Chromium, through chromedriver.
    Chrome,
}

impl BrowserKind {
    /// How to find and launch this browser.
    pub fn spec(self) -> &'static BrowserSpec {
        match self {
            BrowserKind::Chrome => &chrome::SPEC,
        }
    }
}

/// Where a browser and its driver live, and how to ask for WebGPU.
pub struct BrowserSpec {
    /// Key used on the command line and in reports.
    pub key: &'static str,
    /// Human name.
    pub display: &'static str,
    /// Executable names searched on PATH, best first.
    pub browser_names: &'static [&'static str],
    /// Absolute paths tried after PATH (Linux, macOS, Windows install locations).
    pub browser_locations: &'static [&'static str],
    /// How to install the browser.
    pub browser_install: &'static str,
    /// WebDriver executable names searched on PATH.
    pub driver_names: &'static [&'static str],
    /// Absolute paths tried for the driver after PATH.
    pub driver_locations: &'static [&'static str],
    /// How to install the driver.
    pub driver_install: &'static str,
    /// Browser flags for a WebGPU run.
    pub flags: fn(&LaunchOptions) -> Vec<String>,
    /// The WebDriver capabilities for those flags.
    pub capabilities: fn(&LaunchOptions, &[String]) -> Map<String, Value>,
}

/// Per-run choices that shape the browser's flags.
#[derive(Debug, Clone)]
pub struct LaunchOptions {
    /// The browser executable.
    pub binary: PathBuf,
    /// Headless or windowed.
    pub headless: bool,
    /// A fresh profile folder for this run.
    pub profile_dir: PathBuf,
}

/// Why a browser or driver could not be found.
#[derive(Debug, thiserror::Error)]
pub enum FindError {
    /// An explicit path does not exist.
    #[error("{flag} {path}: no such file")]
    NoSuchPath {
        /// `--browser-path` or `--driver-path`.
        flag: &'static str,
        /// The path given.
        path: PathBuf,
    },
    /// Nothing found on PATH or in the usual places.
    #[error("{what} not found on PATH ({names}) or in the usual install locations; install it with `{install}` or pass {flag}")]
    NotFound {
        /// What was looked for.
        what: String,
        /// Names searched.
        names: String,
        /// The install command.
        install: &'static str,
        /// The flag that overrides the search.
        flag: &'static str,
    },
}

impl BrowserSpec {
    /// The browser executable: `explicit`, else PATH, else the usual locations.
    pub fn find_browser(&self, explicit: Option<&Path>) -> Result<PathBuf, FindError> {
        find(explicit, "--browser-path", self.display, self.browser_names, self.browser_locations, self.browser_install)
    }

    /// The driver executable: `explicit`, else PATH, else the usual locations.
    pub fn find_driver(&self, explicit: Option<&Path>) -> Result<PathBuf, FindError> {
        let what = format!("{} (the {} WebDriver)", self.driver_names[0], self.display);
        find(explicit, "--driver-path", &what, self.driver_names, self.driver_locations, self.driver_install)
    }
}

fn find(
    explicit: Option<&Path>,
    flag: &'static str,
    what: &str,
    names: &[&str],
    locations: &[&str],
    install: &'static str,
) -> Result<PathBuf, FindError> {
    if let Some(p) = explicit {
        return if p.exists() {
            Ok(p.to_path_buf())
        } else {
            Err(FindError::NoSuchPath { flag, path: p.to_path_buf() })
        };
    }
    let on_path = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .unwrap_or_default();
    names
        .iter()
        .flat_map(|n| on_path.iter().map(move |dir| dir.join(exe(n))))
        .chain(locations.iter().map(PathBuf::from))
        .find(|p| p.is_file())
        .ok_or_else(|| FindError::NotFound {
            what: what.to_string(),
            names: names.join(", "),
            install,
            flag,
        })
}

fn exe(name: &str) -> String {
    if cfg!(windows) {
        format!("{name}.exe")
    } else {
        name.to_string()
    }
}

/// Whether this process runs as root, where Chromium refuses to start without `--no-sandbox`.
pub fn running_as_root() -> bool {
    #[cfg(unix)]
    {
        // SAFETY: geteuid has no preconditions and cannot fail.
        unsafe { libc::geteuid() == 0 }
    }
    #[cfg(not(unix))]
    {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_explicit_path_names_the_flag() {
        let e = BrowserKind::Chrome.spec().find_browser(Some(Path::new("/no/such/chrome"))).unwrap_err();
        assert_eq!(e.to_string(), "--browser-path /no/such/chrome: no such file");
    }

    #[test]
    fn not_found_says_how_to_install() {
        let e = find(None, "--driver-path", "zzdriver", &["zz-no-such-driver"], &[], "apt-get install zz").unwrap_err();
        let s = e.to_string();
        assert!(s.contains("apt-get install zz") && s.contains("--driver-path"), "{s}");
    }
}
