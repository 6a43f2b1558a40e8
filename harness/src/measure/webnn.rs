//! `--platform webnn`: what harness knows of WebNN in each browser, and the test stand-in.
//!
//! The page builds each kernel's graph with the browser's own `navigator.ml`
//! (`page/static/webnn.js`). Where a browser has no WebNN backend the run is `unavailable`, with
//! the browser's reason and what would enable it. The tests alone may point
//! `HARNESS_WEBNN_STANDIN` at a JavaScript stand-in, which the page then loads first: it drives
//! the runner end to end on a machine without a backend, and every report says it was one.

use crate::measure::browser::BrowserKind;

/// Environment variable naming the stand-in's JavaScript file; tests only.
pub const STAND_IN_ENV: &str = "HARNESS_WEBNN_STANDIN";

/// What the terminal prints when the stand-in is in use.
pub const STAND_IN_WARNING: &str =
    "HARNESS_WEBNN_STANDIN is set: WebNN runs on a JavaScript stand-in for tests, not on a WebNN backend; its numbers measure nothing";

/// Where WebNN works with `browser` (its key), and how to enable it: added to an unavailable
/// run's reason.
pub fn how_to_enable(browser: &str) -> &'static str {
    match browser {
        "firefox" => "Firefox has no WebNN (no navigator.ml); use Chrome or Edge on Windows or macOS",
        _ => {
            "WebNN needs a backend: Chrome and Edge have one on Windows (DirectML or ONNX Runtime, with \
             --enable-features=WebMachineLearningNeuralNetwork, which harness passes) and on macOS (Core ML); \
             Linux builds such as Debian's Chromium have none"
        }
    }
}

/// What `harness browsers` says of WebNN in `browser` on this machine, before trying it
/// (`harness verify` tries it).
pub fn expected(browser: BrowserKind) -> &'static str {
    match browser {
        BrowserKind::Firefox => "no (no navigator.ml)",
        BrowserKind::Chrome | BrowserKind::Edge if cfg!(any(target_os = "windows", target_os = "macos")) => {
            "behind a flag harness passes; DirectML/ONNX Runtime or Core ML"
        }
        BrowserKind::Chrome | BrowserKind::Edge => "behind a flag harness passes; no backend on Linux builds",
    }
}
