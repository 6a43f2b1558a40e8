//! The options of `harness verify`.

use super::browser::{BrowserFlagArgs, BrowserPathArgs};
use super::parse::positive_seconds;
use super::values::PlatformArg;
use crate::measure::browser::BrowserKind;
use clap::Args;
use std::path::PathBuf;

pub const AFTER_HELP: &str = "\
Any sign of software decides SOFTWARE (a disagreement is said out loud). HARDWARE needs a sign of
hardware: isFallbackAdapter false, or the plausibility matmul at least 10x faster on the adapter
than on the CPU. With neither sign the verdict is INCONCLUSIVE: say, the flag is not reported,
the name is hidden (as Firefox hides it) and the speed-up is unmeasured or 3-10x, which fits
either. Its reason names what is missing. To settle it, check where the flag is reported
(--browser chrome, or --platform native for this machine's driver), or let the matmul finish
(a longer --timeout).

Exit status: 0 hardware; 1 software; 2 unavailable (no adapter) or an error; 3 inconclusive.";

/// Options of `harness verify`.
#[derive(Debug, Args)]
pub struct VerifyArgs {
    /// Browser to check (with --platform webgpu).
    #[arg(long, value_enum, default_value = "chrome")]
    pub browser: BrowserKind,
    /// `webgpu` (in the browser) or `native` (wgpu on this machine's driver, no browser).
    #[arg(long, value_enum, default_value = "webgpu")]
    pub platform: PlatformArg,
    /// Browser and WebDriver executables, instead of searching: as `run` and `doctor` take them.
    #[command(flatten)]
    pub paths: BrowserPathArgs,
    /// Browser arguments and prefs of yours.
    #[command(flatten)]
    pub browser_flags: BrowserFlagArgs,
    /// Seconds the plausibility matmul may take on each platform.
    #[arg(long, default_value_t = 120.0, value_parser = positive_seconds)]
    pub timeout: f64,
    /// Use this prebuilt page bundle instead of building one.
    #[arg(long, env = "HARNESS_BUNDLE")]
    pub bundle: Option<PathBuf>,
    /// Print the verdict and evidence as JSON.
    #[arg(long)]
    pub json: bool,
}
