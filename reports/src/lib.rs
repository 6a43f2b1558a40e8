//! The results model harness writes (`results.json`, the contract between measuring and
//! reporting), the statistics computed from samples, and the report writers. Reports read only
//! the model, so they can be rebuilt from disk without re-running anything.

pub mod html;
pub mod model;
pub mod stats;

pub use model::*;

use std::path::{Path, PathBuf};

/// The file names a report folder holds.
pub const RESULTS_JSON: &str = "results.json";
/// The self-contained HTML report.
pub const REPORT_HTML: &str = "report.html";

/// Why a report could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// File system trouble, with the path.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// results.json is not valid for this schema version.
    #[error("{path}: not a harness results file: {source}")]
    Parse {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: serde_json::Error,
    },
    /// results.json was written by a newer harness.
    #[error("{path}: schema version {found} is newer than this harness understands ({SCHEMA_VERSION}); upgrade harness")]
    Version {
        /// The file.
        path: PathBuf,
        /// Its version.
        found: u32,
    },
    /// The HTML template failed to render.
    #[error("rendering the HTML report failed: {0}")]
    Template(String),
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> ReportError + '_ {
    move |source| ReportError::Io { path: path.to_path_buf(), source }
}

/// Writes `results.json` and `report.html` into `dir` (created if needed); returns their paths.
pub fn write_all(report: &RunReport, dir: &Path) -> Result<Vec<PathBuf>, ReportError> {
    std::fs::create_dir_all(dir).map_err(io(dir))?;
    let json = dir.join(RESULTS_JSON);
    let text = serde_json::to_string_pretty(report).expect("the results model always serialises");
    std::fs::write(&json, text).map_err(io(&json))?;
    let html = dir.join(REPORT_HTML);
    std::fs::write(&html, html::render(report)?).map_err(io(&html))?;
    Ok(vec![json, html])
}

/// Reads a `results.json`, refusing files from a newer schema.
pub fn read_results(path: &Path) -> Result<RunReport, ReportError> {
    let text = std::fs::read_to_string(path).map_err(io(path))?;
    let value: serde_json::Value =
        serde_json::from_str(&text).map_err(|source| ReportError::Parse { path: path.into(), source })?;
    let found = value.get("schemaVersion").and_then(|v| v.as_u64()).unwrap_or(0) as u32;
    if found > SCHEMA_VERSION {
        return Err(ReportError::Version { path: path.into(), found });
    }
    serde_json::from_value(value).map_err(|source| ReportError::Parse { path: path.into(), source })
}
