//! A report folder: the files it holds, written all at once, and where its `results.json` is.

use crate::error::{io, ReportError};
use crate::model::RunReport;
use crate::{html, json, junit, markdown};
use std::path::{Path, PathBuf};

/// The file names a report folder holds.
pub const RESULTS_JSON: &str = "results.json";
/// The self-contained HTML report.
pub const REPORT_HTML: &str = "report.html";
/// The Markdown summary for CI job summaries.
pub const SUMMARY_MD: &str = "summary.md";
/// JUnit XML for CI test reporters.
pub const JUNIT_XML: &str = "junit.xml";

/// Writes `results.json`, `report.html`, `summary.md` and `junit.xml` into `dir` (created if
/// needed); returns their paths.
pub fn write_all(report: &RunReport, dir: &Path) -> Result<Vec<PathBuf>, ReportError> {
    std::fs::create_dir_all(dir).map_err(io(dir))?;
    let json = dir.join(RESULTS_JSON);
    std::fs::write(&json, json::render(report)).map_err(io(&json))?;
    let html = dir.join(REPORT_HTML);
    std::fs::write(&html, html::render(report)?).map_err(io(&html))?;
    let md = dir.join(SUMMARY_MD);
    std::fs::write(&md, markdown::render(report)).map_err(io(&md))?;
    let junit = dir.join(JUNIT_XML);
    std::fs::write(&junit, junit::render(report)).map_err(io(&junit))?;
    Ok(vec![json, html, md, junit])
}

/// The results file a path names: `path` itself, or the `results.json` in it when it is a folder.
pub fn results_path(path: &Path) -> PathBuf {
    if path.is_dir() {
        path.join(RESULTS_JSON)
    } else {
        path.to_path_buf()
    }
}
