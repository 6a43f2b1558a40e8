//! Microsoft Edge through msedgedriver: Chromium underneath, so Chrome's WebGPU flags under
//! `ms:edgeOptions`.

use super::chrome::{chromium_capabilities, chromium_flags};
use super::{BrowserFlags, BrowserSpec, LaunchOptions};
use serde_json::{Map, Value};

/// Edge.
pub static SPEC: BrowserSpec = BrowserSpec {
    key: "edge",
    display: "Microsoft Edge",
    browser_names: &["microsoft-edge", "microsoft-edge-stable", "msedge"],
    browser_locations: &[
        "/usr/bin/microsoft-edge",
        "/opt/microsoft/msedge/msedge",
        "/Applications/Microsoft Edge.app/Contents/MacOS/Microsoft Edge",
        "C:\\Program Files (x86)\\Microsoft\\Edge\\Application\\msedge.exe",
        "C:\\Program Files\\Microsoft\\Edge\\Application\\msedge.exe",
    ],
    browser_install: "Microsoft's microsoft-edge-stable package (Edge is not in Debian)",
    driver_names: &["msedgedriver"],
    driver_locations: &["/usr/bin/msedgedriver", "/opt/microsoft/msedge/msedgedriver"],
    driver_install: "Microsoft's msedgedriver matching your Edge version",
    diagnostics_url: "edge://gpu",
    flags: chromium_flags,
    capabilities,
    profile_seed: &[],
};

fn capabilities(o: &LaunchOptions, flags: &BrowserFlags) -> Map<String, Value> {
    chromium_capabilities("MicrosoftEdge", "ms:edgeOptions", o, flags)
}
