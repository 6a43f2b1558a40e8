//! Which browsers a measuring run drives and how they start: executables, WebDriver, window,
//! and the user's own browser arguments and prefs (those also for `verify`).

use crate::measure::browser::user::{self, UserArg, UserPref};
use crate::measure::browser::GpuFlags;
use clap::{Args, ValueEnum};

/// A `--browser` value: one browser, or all that are installed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum BrowserChoice {
    /// Chrome or Chromium.
    Chrome,
    /// Firefox.
    Firefox,
    /// Microsoft Edge.
    Edge,
    /// Every supported browser installed here (see `harness browsers`).
    All,
}

/// The browsers of a measuring run and how each starts.
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Browsers")]
pub struct BrowserArgs {
    /// Browsers to drive, comma-separated, one after the other (so they do not share the GPU).
    #[arg(long, value_enum, value_delimiter = ',', default_value = "chrome", conflicts_with = "resume")]
    pub browser: Vec<BrowserChoice>,
    /// Run the browser without a window (the default).
    #[arg(long, conflicts_with = "headed")]
    pub headless: bool,
    /// Show the browser window.
    #[arg(long)]
    pub headed: bool,
    /// Where the browsers and their drivers are, when not found by searching.
    #[command(flatten)]
    pub paths: BrowserPathArgs,
    /// Browser arguments and prefs of yours (with --replay or --resume, the recorded ones unless
    /// given).
    #[command(flatten)]
    pub browser_flags: BrowserFlagArgs,
    /// Use this running WebDriver endpoint or Selenium Grid instead of launching a driver.
    #[arg(long, value_name = "URL")]
    pub webdriver_url: Option<String>,
}

/// Browser and WebDriver executables given instead of searching; shared by `run`, `verify` and
/// `doctor`.
#[derive(Debug, Clone, Default, Args)]
pub struct BrowserPathArgs {
    /// Browser executable instead of searching PATH and the usual install locations; with several
    /// browsers write BROWSER=PATH (repeatable).
    #[arg(long, value_name = "[BROWSER=]PATH")]
    pub browser_path: Vec<String>,
    /// WebDriver executable (chromedriver, geckodriver, msedgedriver) instead of searching; with
    /// several browsers write BROWSER=PATH (repeatable).
    #[arg(long, value_name = "[BROWSER=]PATH")]
    pub driver_path: Vec<String>,
}

/// Browser arguments and prefs of the user's, added after harness's own; shared by `run` and
/// `verify`.
#[derive(Debug, Clone, Default, Args)]
pub struct BrowserFlagArgs {
    /// A browser command-line argument, after harness's own; repeatable. Such as
    /// chrome=--enable-features=Vulkan (a Chromium feature: yours join harness's).
    ///
    /// BROWSER= (chrome, firefox, edge) gives it to that browser only; without it every browser
    /// of the run gets it. Where a browser takes the last of a repeated switch, yours wins.
    /// Examples: `--browser-arg chrome=--enable-features=Vulkan`,
    /// `--browser-arg 'chrome=--user-agent=my agent'`, `--browser-arg firefox=-safe-mode`,
    /// `--browser-arg --lang=en` (every browser).
    #[arg(long = "browser-arg", value_name = "[BROWSER=]ARG", allow_hyphen_values = true, value_parser = user::parse_arg)]
    pub args: Vec<UserArg>,
    /// A browser pref, over harness's own; repeatable. Such as
    /// firefox=gfx.webgpu.ignore-blocklist=false.
    ///
    /// Firefox's about:config; Chrome's and Edge's profile prefs. BROWSER= (chrome, firefox,
    /// edge) gives it to that browser only; without it every browser of the run gets it. It
    /// replaces harness's pref of the same name. VALUE is a bool or number when it reads as one,
    /// else text ('"3"' for the text 3). Examples: `--browser-pref firefox=dom.webgpu.enabled=true`,
    /// `--browser-pref firefox=general.useragent.override=my-agent`,
    /// `--browser-pref chrome=download.prompt_for_download=false`.
    #[arg(long = "browser-pref", value_name = "[BROWSER=]NAME=VALUE", value_parser = user::parse_pref)]
    pub prefs: Vec<UserPref>,
    /// Chrome's and Edge's flags for a hardware GPU on Linux (Vulkan through ANGLE, the GPU
    /// blocklist and sandbox off): `auto` adds them when this machine has a GPU with its driver
    /// and the browser starts here; `on` always (a remote WebDriver on a GPU machine); `off`
    /// never.
    ///
    /// Without them headless Chromium on Linux gives WebGPU SwiftShader, a CPU. They are
    /// recorded in results.json (browserInfo.gpuFlags) and the report. Firefox needs none.
    /// `--browser-arg` still adds or overrides any of them; `harness doctor` says whether each
    /// browser reaches the GPU.
    #[arg(long, value_enum, default_value = "auto")]
    pub gpu_flags: GpuFlags,
}
