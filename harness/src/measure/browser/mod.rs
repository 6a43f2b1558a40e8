//! The browsers harness drives: how to find each one and its WebDriver, and the capabilities
//! (flags and prefs as data) that give WebGPU in an automated session. One file per browser;
//! adding one is a new file and a line in [`BrowserKind::spec`].

mod chrome;
mod edge;
mod firefox;
pub mod seed;
pub mod user;

use serde_json::{Map, Value};
use std::path::{Path, PathBuf};

/// A browser harness knows how to drive.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, clap::ValueEnum, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum BrowserKind {
    /// Google Chrome or Chromium, through chromedriver.
    Chrome,
    /// Firefox, through geckodriver.
    Firefox,
    /// Microsoft Edge, through msedgedriver.
    Edge,
}

impl BrowserKind {
    /// Every browser, in the order `--browser all` runs them.
    pub const ALL: [BrowserKind; 3] = [BrowserKind::Chrome, BrowserKind::Firefox, BrowserKind::Edge];

    /// How to find and launch this browser.
    pub fn spec(self) -> &'static BrowserSpec {
        match self {
            BrowserKind::Chrome => &chrome::SPEC,
            BrowserKind::Firefox => &firefox::SPEC,
            BrowserKind::Edge => &edge::SPEC,
        }
    }
}

/// What a browser is started with: command-line arguments and preferences, kept as data so the
/// report can show them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BrowserFlags {
    /// Command-line arguments.
    pub args: Vec<String>,
    /// Preferences: Firefox's `about:config`, Chromium's profile prefs.
    pub prefs: Vec<(String, Value)>,
}

impl BrowserFlags {
    /// Arguments, then prefs as `name=value`, for the report.
    pub fn describe(&self) -> Vec<String> {
        self.args
            .iter()
            .cloned()
            .chain(self.prefs.iter().map(|(k, v)| format!("{k}={v}")))
            .collect()
    }

    /// Adds `extra` (the user's flags) after these: its arguments go last, so where a browser
    /// takes the last of a repeated switch the user's wins, and its pref of a name already set
    /// replaces the value in place.
    pub fn merge(&mut self, extra: &BrowserFlags) {
        // Chromium reads only the last of these list switches: harness's entries join the user's.
        const LISTS: [&str; 2] = ["--enable-features=", "--enable-dawn-features="];
        let mut extra = extra.clone();
        for list in LISTS {
            let Some(users) = extra.args.iter().position(|a| a.starts_with(list)) else { continue };
            let ours: Vec<String> = self.args.iter().filter_map(|a| a.strip_prefix(list)).map(str::to_string).collect();
            self.args.retain(|a| !a.starts_with(list));
            extra.args[users] = [extra.args[users].clone()].into_iter().chain(ours).collect::<Vec<_>>().join(",");
        }
        self.args.extend(extra.args);
        for (name, value) in &extra.prefs {
            match self.prefs.iter_mut().find(|(n, _)| n == name) {
                Some(pref) => pref.1 = value.clone(),
                None => self.prefs.push((name.clone(), value.clone())),
            }
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
    /// Absolute paths tried for the driver after PATH and cargo's bin folder.
    pub driver_locations: &'static [&'static str],
    /// How to install the driver.
    pub driver_install: &'static str,
    /// The browser's own GPU diagnostics page, for `harness verify`.
    pub diagnostics_url: &'static str,
    /// Browser flags for a WebGPU run.
    pub flags: fn(&LaunchOptions) -> BrowserFlags,
    /// The WebDriver capabilities for those flags.
    pub capabilities: fn(&LaunchOptions, &BrowserFlags) -> Map<String, Value>,
    /// The parts of a used profile that a fresh one starts with ([`seed::ProfileSeed`]), the
    /// build's version file last; none where a fresh profile costs little.
    pub profile_seed: &'static [&'static str],
}

/// Per-run choices that shape the browser's flags.
#[derive(Debug, Clone)]
pub struct LaunchOptions {
    /// The browser executable; `None` lets the (remote) driver choose.
    pub binary: Option<PathBuf>,
    /// Headless or windowed.
    pub headless: bool,
    /// A fresh profile folder for this run, given to the browser on its command line; `None` with
    /// a remote driver, which makes its own.
    pub profile_dir: Option<PathBuf>,
    /// The run uses WebNN: browsers that hide `navigator.ml` behind a flag get it.
    pub webnn: bool,
    /// Give the browser the flags that reach a hardware GPU (Chromium's Vulkan set on Linux);
    /// see [`GpuFlags::resolve`].
    pub gpu: bool,
    /// With `gpu`, the GPU is NVIDIA's: Chromium also gets Dawn's toggle that lifts its block
    /// on `shader-f16` there.
    pub nvidia: bool,
}

/// `--gpu-flags`: whether Chrome and Edge get the flags that reach a hardware GPU.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum GpuFlags {
    /// When this machine (Linux) has a hardware GPU and the browser is launched here.
    #[default]
    Auto,
    /// Always, also for a remote WebDriver or where no GPU was found.
    On,
    /// Never: the browser's own choice (SwiftShader on a headless Linux machine).
    Off,
}

impl GpuFlags {
    /// Whether the browser gets the GPU flags: `auto` on Linux when `host_has_gpu` and the
    /// browser is not `remote` (the flags are Chromium's answer to Linux without a display;
    /// other systems give WebGPU their GPU by default).
    pub fn resolve(self, linux: bool, host_has_gpu: bool, remote: bool) -> bool {
        match self {
            GpuFlags::Auto => linux && host_has_gpu && !remote,
            GpuFlags::On => true,
            GpuFlags::Off => false,
        }
    }
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
    #[error("{what} not found on PATH ({names}) or in the usual install locations. To install it: {install}. Or pass {flag} PATH")]
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
        let what = self.display.to_string();
        find(explicit, "--browser-path", &what, self.browser_names, self.browser_locations, self.browser_install)
    }

    /// The driver executable: `explicit`, else PATH, else cargo's bin folder, else the usual
    /// locations.
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
    let mut dirs: Vec<PathBuf> = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect())
        .unwrap_or_default();
    // `cargo install geckodriver` puts it here, which is not always on PATH.
    if let Some(cargo_home) = std::env::var_os("CARGO_HOME") {
        dirs.push(PathBuf::from(cargo_home).join("bin"));
    }
    if let Some(home) = std::env::var_os("HOME") {
        dirs.push(PathBuf::from(home).join(".cargo/bin"));
    }
    // `which` only takes executable files (and adds `.exe` on Windows).
    let search = std::env::join_paths(&dirs).ok();
    names
        .iter()
        .find_map(|n| which::which_in_global(n, search.as_ref()).ok()?.next())
        .or_else(|| locations.iter().find_map(|l| which::which(l).ok()))
        .ok_or_else(|| FindError::NotFound {
            what: what.to_string(),
            names: names.join(", "),
            install,
            flag,
        })
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

    fn options() -> LaunchOptions {
        LaunchOptions {
            binary: Some("/opt/browser".into()),
            headless: true,
            profile_dir: Some("/tmp/profile".into()),
            webnn: false,
            gpu: false,
            nvidia: false,
        }
    }

    #[test]
    fn webnn_runs_enable_chromiums_flag_and_it_joins_the_users_features() {
        let webnn = LaunchOptions { webnn: true, ..options() };
        let feature = "--enable-features=WebMachineLearningNeuralNetwork";
        assert!((BrowserKind::Chrome.spec().flags)(&webnn).args.iter().any(|a| a == feature));
        assert!(!(BrowserKind::Chrome.spec().flags)(&options()).args.iter().any(|a| a == feature), "only when asked");
        let mut flags = (BrowserKind::Chrome.spec().flags)(&webnn);
        flags.merge(&BrowserFlags { args: vec!["--enable-features=Vulkan".into()], prefs: Vec::new() });
        let features: Vec<&String> = flags.args.iter().filter(|a| a.starts_with("--enable-features=")).collect();
        assert_eq!(features, ["--enable-features=Vulkan,WebMachineLearningNeuralNetwork"], "Chromium reads only the last one");
    }

    #[test]
    fn chromium_gets_the_gpu_flags_only_on_a_gpu_host_unless_told_and_the_user_still_wins() {
        let launched = |kind: BrowserKind, choice: GpuFlags, host_gpu: bool, user: &[&str]| {
            let o = LaunchOptions { gpu: choice.resolve(true, host_gpu, false), ..options() };
            let mut flags = (kind.spec().flags)(&o);
            flags.merge(&BrowserFlags { args: user.iter().map(|a| a.to_string()).collect(), prefs: Vec::new() });
            flags.args
        };
        let vulkan = |args: &[String]| args.iter().any(|a| a == "--use-vulkan=native") && args.iter().any(|a| a.starts_with("--enable-features=") && a.contains("DefaultANGLEVulkan"));
        for kind in BrowserKind::ALL {
            let chromium = kind != BrowserKind::Firefox;
            for host_gpu in [true, false] {
                // Defaults: Chrome and Edge get them where the host has a GPU; Firefox never needs them.
                assert_eq!(vulkan(&launched(kind, GpuFlags::Auto, host_gpu, &[])), chromium && host_gpu, "{kind:?} auto gpu={host_gpu}");
                assert!(!vulkan(&launched(kind, GpuFlags::Off, host_gpu, &[])), "{kind:?} off gpu={host_gpu}");
                assert_eq!(vulkan(&launched(kind, GpuFlags::On, host_gpu, &[])), chromium, "{kind:?} on gpu={host_gpu}");
                // The user's switch comes last, so Chromium takes theirs; their features join ours.
                let args = launched(kind, GpuFlags::Auto, host_gpu, &["--use-angle=swiftshader", "--enable-features=Foo"]);
                assert_eq!(args.iter().rev().find(|a| a.starts_with("--use-angle=")).unwrap(), "--use-angle=swiftshader");
                let features: Vec<&String> = args.iter().filter(|a| a.starts_with("--enable-features=")).collect();
                assert_eq!(features.len(), 1, "{kind:?}: {args:?}");
                assert_eq!(features[0].contains("Vulkan"), chromium && host_gpu, "{kind:?}: {features:?}");
            }
        }
        // On an NVIDIA machine Dawn's f16 toggle comes with them, joined with the user's toggles.
        let o = LaunchOptions { gpu: true, nvidia: true, ..options() };
        let mut flags = (BrowserKind::Chrome.spec().flags)(&o);
        flags.merge(&BrowserFlags { args: vec!["--enable-dawn-features=dump_shaders".into()], prefs: Vec::new() });
        let dawn: Vec<&String> = flags.args.iter().filter(|a| a.starts_with("--enable-dawn-features=")).collect();
        assert_eq!(dawn, ["--enable-dawn-features=dump_shaders,vulkan_enable_f16_on_nvidia"]);
        assert!(!(BrowserKind::Chrome.spec().flags)(&LaunchOptions { gpu: false, nvidia: true, ..options() }).args.iter().any(|a| a.contains("dawn")));
        // Elsewhere than Linux, and for a remote browser, `auto` adds nothing.
        assert!(!GpuFlags::Auto.resolve(false, true, false));
        assert!(!GpuFlags::Auto.resolve(true, true, true));
        assert!(GpuFlags::On.resolve(false, false, true));
    }

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

    #[cfg(unix)]
    #[test]
    fn only_executable_files_are_found() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let plain = dir.path().join("zz-plain");
        let runnable = dir.path().join("zz-runnable");
        for (path, mode) in [(&plain, 0o644), (&runnable, 0o755)] {
            std::fs::write(path, "#!/bin/sh\n").unwrap();
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
        }
        let look = |at: &Path| find(None, "--driver-path", "zz", &["zz-no-such-driver"], &[at.to_str().unwrap()], "apt-get install zz");
        assert!(look(&plain).is_err(), "a file without the executable bit is no driver");
        assert_eq!(look(&runnable).unwrap(), runnable);
    }

    #[test]
    fn every_browser_asks_for_webgpu() {
        for kind in BrowserKind::ALL {
            let spec = kind.spec();
            let flags = (spec.flags)(&options());
            let caps = Value::Object((spec.capabilities)(&options(), &flags)).to_string();
            assert!(
                caps.contains("--enable-unsafe-webgpu") || caps.contains("dom.webgpu.enabled"),
                "{}: {caps}",
                spec.key
            );
            assert!(caps.contains("/opt/browser"), "{}: the binary is passed: {caps}", spec.key);
            assert!(caps.contains("headless"), "{}: {caps}", spec.key);
        }
    }

    #[test]
    fn firefox_gets_the_webgpu_prefs() {
        let spec = BrowserKind::Firefox.spec();
        let caps = Value::Object((spec.capabilities)(&options(), &(spec.flags)(&options())));
        let prefs = &caps["moz:firefoxOptions"]["prefs"];
        assert_eq!(prefs["dom.webgpu.enabled"], true);
        assert_eq!(prefs["gfx.webgpu.ignore-blocklist"], true);
        // In the fresh folder harness made, which a seed may have started (see `seed`).
        assert_eq!(caps["moz:firefoxOptions"]["args"], serde_json::json!(["-headless", "-profile", "/tmp/profile"]));
    }

    #[test]
    fn a_remote_session_names_no_local_paths() {
        let remote = LaunchOptions { binary: None, headless: true, profile_dir: None, webnn: false, gpu: false, nvidia: false };
        for kind in BrowserKind::ALL {
            let spec = kind.spec();
            let caps = Value::Object((spec.capabilities)(&remote, &(spec.flags)(&remote))).to_string();
            assert!(!caps.contains("binary") && !caps.contains("user-data-dir") && !caps.contains("-profile"), "{}: {caps}", spec.key);
        }
    }
}
