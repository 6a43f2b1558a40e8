//! Firefox through geckodriver, in a fresh profile folder harness makes for every session (the
//! remote driver's own where the WebDriver is remote), with the prefs that turn WebGPU on; the
//! folder starts with Firefox's startup cache from an earlier session ([`super::seed`]).

use super::{BrowserFlags, BrowserSpec, LaunchOptions};
use serde_json::{json, Map, Value};

/// Firefox (ESR or release).
pub static SPEC: BrowserSpec = BrowserSpec {
    key: "firefox",
    display: "Firefox",
    browser_names: &["firefox", "firefox-esr"],
    browser_locations: &[
        "/usr/bin/firefox",
        "/usr/bin/firefox-esr",
        "/Applications/Firefox.app/Contents/MacOS/firefox",
        "C:\\Program Files\\Mozilla Firefox\\firefox.exe",
    ],
    browser_install: "`apt-get install firefox-esr`",
    driver_names: &["geckodriver"],
    driver_locations: &["/usr/local/bin/geckodriver", "/usr/bin/geckodriver"],
    driver_install: "`cargo install geckodriver --locked`",
    diagnostics_url: "about:support",
    flags,
    capabilities,
    profile_seed: &["startupCache", "compatibility.ini"],
};

fn flags(o: &LaunchOptions) -> BrowserFlags {
    let mut args = if o.headless { vec!["-headless".to_string()] } else { Vec::new() };
    // geckodriver writes its prefs into a profile given this way, and leaves the folder to us.
    if let Some(dir) = &o.profile_dir {
        args.extend(["-profile".to_string(), dir.display().to_string()]);
    }
    let prefs = vec![
        ("dom.webgpu.enabled".to_string(), json!(true)),
        // Headless and software adapters are on the blocklist; we want them, and say so in reports.
        ("gfx.webgpu.ignore-blocklist".to_string(), json!(true)),
        ("app.update.enabled".to_string(), json!(false)),
        ("datareporting.policy.dataSubmissionEnabled".to_string(), json!(false)),
    ];
    BrowserFlags { args, prefs }
}

fn capabilities(o: &LaunchOptions, flags: &BrowserFlags) -> Map<String, Value> {
    let prefs: Map<String, Value> = flags.prefs.iter().cloned().collect();
    let mut options = json!({ "args": flags.args, "prefs": prefs });
    if let Some(binary) = &o.binary {
        options["binary"] = json!(binary.display().to_string());
    }
    let mut caps = Map::new();
    caps.insert("browserName".into(), json!("firefox"));
    caps.insert("moz:firefoxOptions".into(), options);
    caps
}
