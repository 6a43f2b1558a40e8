//! Why a report could not be read or written: one error for every reader and writer of the crate.

use crate::model::SCHEMA_VERSION;
use std::path::{Path, PathBuf};

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
    /// Reports to merge measured different things.
    #[error("{path}: {found}, but the first report has {expected}; merge only runs of the same suite, seed and sampling")]
    Mismatch {
        /// The file.
        path: PathBuf,
        /// What it has.
        found: String,
        /// What the first has.
        expected: String,
    },
    /// No folder was given.
    #[error("nothing to merge: name at least one result folder")]
    NothingToMerge,
    /// The HTML template failed to render.
    #[error("rendering the HTML report failed: {0}")]
    Template(String),
}

/// Makes an I/O error on `path` a [`ReportError::Io`] that names it.
pub(crate) fn io(path: &Path) -> impl FnOnce(std::io::Error) -> ReportError + '_ {
    move |source| ReportError::Io { path: path.to_path_buf(), source }
}
