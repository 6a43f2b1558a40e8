//! `results.json`, the JSON writer: the model as written to disk, and read back, refusing files from
//! a newer schema.

use crate::error::{io, ReportError};
use crate::model::{RunReport, SCHEMA_VERSION};
use std::path::Path;

/// Renders `report` as `results.json` holds it: the model serialised, pretty-printed.
pub fn render(report: &RunReport) -> String {
    serde_json::to_string_pretty(report).expect("the results model always serialises")
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
