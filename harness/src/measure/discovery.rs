//! `harness browsers`: which browsers and drivers are installed, their versions, and how to get
//! the missing ones.

use crate::measure::browser::BrowserKind;
use crate::measure::driver::version_of;
use serde::Serialize;

/// One browser as found on this machine.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Found {
    /// Browser key.
    pub browser: &'static str,
    /// The browser: path and version, or how to install it.
    pub executable: Located,
    /// Its WebDriver: path and version, or how to install it.
    pub driver: Located,
    /// What is known of WebNN in it on this OS, before trying (`harness verify` tries).
    pub webnn: &'static str,
}

impl Found {
    /// True when both the browser and its driver are here.
    pub fn usable(&self) -> bool {
        self.executable.path.is_some() && self.driver.path.is_some()
    }
}

/// A program found (path, version) or not (why, and the fix).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Located {
    /// Where it is.
    pub path: Option<String>,
    /// What `--version` printed.
    pub version: Option<String>,
    /// Why it was not found, and how to install it.
    pub missing: Option<String>,
}

fn locate(found: Result<std::path::PathBuf, crate::measure::browser::FindError>) -> Located {
    match found {
        Ok(p) => Located { version: Some(version_of(&p)), path: Some(p.display().to_string()), missing: None },
        Err(e) => Located { path: None, version: None, missing: Some(e.to_string()) },
    }
}

/// Looks for every supported browser and its driver.
pub fn discover() -> Vec<Found> {
    BrowserKind::ALL
        .into_iter()
        .map(|kind| {
            let spec = kind.spec();
            Found {
                browser: spec.key,
                executable: locate(spec.find_browser(None)),
                driver: locate(spec.find_driver(None)),
                webnn: crate::measure::webnn::expected(kind),
            }
        })
        .collect()
}

/// Browsers whose executable and driver are both found, for `--browser all`.
pub fn installed() -> Vec<BrowserKind> {
    BrowserKind::ALL
        .into_iter()
        .filter(|k| k.spec().find_browser(None).is_ok() && k.spec().find_driver(None).is_ok())
        .collect()
}
