//! Google Chrome and Chromium through chromedriver.

use super::{running_as_root, BrowserFlags, BrowserSpec, LaunchOptions};
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
    browser_install: "`apt-get install chromium`",
    driver_names: &["chromedriver"],
    driver_locations: &["/usr/bin/chromedriver", "/usr/lib/chromium/chromedriver", "/snap/bin/chromium.chromedriver"],
    driver_install: "`apt-get install chromium-driver`",
    diagnostics_url: "chrome://gpu",
    flags: chromium_flags,
    capabilities,
    profile_seed: &[],
};

/// The Chromium feature that exposes WebNN's `navigator.ml`.
pub const WEBNN_FEATURE: &str = "WebMachineLearningNeuralNetwork";

/// What Chromium on Linux needs to give WebGPU a hardware GPU through Vulkan, headless or not:
/// without them it falls back to SwiftShader (found by trial on the H100, docs/hardware/h100-firefox.md).
/// The features go in through [`BrowserFlags::merge`]'s rule for `--enable-features`.
pub const LINUX_GPU_FLAGS: [&str; 6] = [
    "--enable-features=Vulkan,VulkanFromANGLE,DefaultANGLEVulkan",
    "--use-vulkan=native",
    "--use-angle=vulkan",
    // Headless has no surface to present to; Vulkan must not ask for one.
    "--disable-vulkan-surface",
    "--ignore-gpu-blocklist",
    // The sandboxed GPU process cannot open NVIDIA's device files.
    "--disable-gpu-sandbox",
];

/// Dawn withholds `shader-f16` on every NVIDIA GPU under Vulkan, whatever the driver offers
/// (crbug.com/42251215: f16 conformance failures on some drivers); this toggle lifts the block.
/// harness checks every f16 output against its f64 reference, so a wrong result reads wrong.
pub const NVIDIA_F16_FLAG: &str = "--enable-dawn-features=vulkan_enable_f16_on_nvidia";

/// The flags every Chromium-based browser (Chrome, Edge) gets for a WebGPU run.
pub fn chromium_flags(o: &LaunchOptions) -> BrowserFlags {
    let mut args: Vec<String> = vec![
        "--enable-unsafe-webgpu".into(),
        // Unquantised timestamp queries (Chrome rounds them to 100 µs otherwise).
        "--enable-webgpu-developer-features".into(),
        "--no-first-run".into(),
        "--no-default-browser-check".into(),
        // Background connections only add noise, and fail on closed networks.
        "--disable-background-networking".into(),
        "--disable-component-update".into(),
        "--disable-sync".into(),
        "--disable-dev-shm-usage".into(),
    ];
    if o.headless {
        args.insert(0, "--headless=new".into());
    }
    if let Some(dir) = &o.profile_dir {
        args.push(format!("--user-data-dir={}", dir.display()));
    }
    if running_as_root() {
        args.push("--no-sandbox".into());
    }
    let mut flags = BrowserFlags { args, prefs: Vec::new() };
    if o.gpu {
        flags.merge(&BrowserFlags { args: LINUX_GPU_FLAGS.map(String::from).to_vec(), prefs: Vec::new() });
        if o.nvidia {
            flags.merge(&BrowserFlags { args: vec![NVIDIA_F16_FLAG.into()], prefs: Vec::new() });
        }
    }
    if o.webnn {
        // `navigator.ml` is behind this flag in Chromium (156 included).
        flags.merge(&BrowserFlags { args: vec![format!("--enable-features={WEBNN_FEATURE}")], prefs: Vec::new() });
    }
    flags
}

/// Capabilities of a Chromium-based browser: `browserName` plus its options object
/// (`goog:chromeOptions`, `ms:edgeOptions`) with the arguments and any profile prefs.
pub fn chromium_capabilities(browser_name: &str, options_key: &str, o: &LaunchOptions, flags: &BrowserFlags) -> Map<String, Value> {
    let mut options = json!({ "args": flags.args });
    if !flags.prefs.is_empty() {
        options["prefs"] = Value::Object(flags.prefs.iter().cloned().collect());
    }
    if let Some(binary) = &o.binary {
        options["binary"] = json!(binary.display().to_string());
    }
    let mut caps = Map::new();
    caps.insert("browserName".into(), json!(browser_name));
    caps.insert(options_key.into(), options);
    caps
}

fn capabilities(o: &LaunchOptions, flags: &BrowserFlags) -> Map<String, Value> {
    chromium_capabilities("chrome", "goog:chromeOptions", o, flags)
}
