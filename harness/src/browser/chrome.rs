//! Google Chrome and Chromium through chromedriver.

use super::{running_as_root, BrowserSpec, LaunchOptions};
use serde_json::{json, Map, Value};

/// Chrome/Chromium.
pub static SPEC: BrowserSpec = BrowserSpec {
    key: "chrome",
    display: "Chrome/Chromium",
    browser_names: &["chromium", "google-chrome", "google-chrome-stable", "chromium-browser", "chrome"],
    browser_locations: &[
        "/usr/bin/chromium",
        "/usr/bin/google-chrome",
        "/opt/google/chrome/chrome",
        "/snap/bin/chromium",
        "/Applications/Google Chrome.app/Contents/MacOS/Google Chrome",
        "/Applications/Chromium.app/Contents/MacOS/Chromium",
        "C:\\Program Files\\Google\\Chrome\\Application\\chrome.exe",
        "C:\\Program Files (x86)\\Google\\Chrome\\Application\\chrome.exe",
    ],
    browser_install: "apt-get install chromium",
    driver_names: &["chromedriver"],
    driver_locations: &["/usr/bin/chromedriver", "/usr/lib/chromium/chromedriver", "/snap/bin/chromium.chromedriver"],
    driver_install: "apt-get install chromium-driver",
    flags,
    capabilities,
};

fn flags(o: &LaunchOptions) -> Vec<String> {
    let mut f: Vec<String> = vec![
        "--enable-unsafe-webgpu".into(),
        // Unquantised timestamp queries (Chrome rounds them to 100 µs otherwise).
        "--enable-webgpu-developer-features".into(),
        "--no-first-run".into(),
        "--no-default-browser-check".into(),
        // This machine's network is closed: background connections only add noise and delay.
        "--disable-background-networking".into(),
        "--disable-component-update".into(),
        "--disable-sync".into(),
        "--disable-dev-shm-usage".into(),
        format!("--user-data-dir={}", o.profile_dir.display()),
    ];
    if o.headless {
        f.insert(0, "--headless=new".into());
    }
    if running_as_root() {
        f.push("--no-sandbox".into());
    }
    f
}

fn capabilities(o: &LaunchOptions, flags: &[String]) -> Map<String, Value> {
    let mut caps = Map::new();
    caps.insert("browserName".into(), json!("chrome"));
    caps.insert(
        "goog:chromeOptions".into(),
        json!({ "binary": o.binary.display().to_string(), "args": flags }),
    );
    caps
}
