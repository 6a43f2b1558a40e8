//! Saved baselines: a run stored under a name (`--save-baseline NAME`) in the baseline folder, and
//! the lookup that lets `--baseline` and `harness compare` take a name, a run folder or a
//! results.json alike.

use reports::{RunReport, RESULTS_JSON};
use std::path::{Path, PathBuf};

/// Why a baseline could not be saved or found.
#[derive(Debug, thiserror::Error)]
pub enum BaselineError {
    /// The name would not make a plain folder name.
    #[error("baseline name `{0}`: use letters, digits, `.`, `_` and `-` only (such as `main` or `v1.2`)")]
    BadName(String),
    /// Nothing by that name or path.
    #[error("no run folder, results.json or baseline called `{spec}`; {known}")]
    NotFound {
        /// What was asked for.
        spec: String,
        /// The baselines there are.
        known: String,
    },
    /// Reading or writing failed.
    #[error(transparent)]
    Report(#[from] reports::ReportError),
}

/// Where baselines live and what counts as a regression (`--baseline-dir`, `--noise-threshold`,
/// `--fail-on-regression`), as `run` and `compare` apply them.
#[derive(Debug, Clone, PartialEq)]
pub struct Gate {
    /// Folder of saved baselines, one folder per name.
    pub dir: PathBuf,
    /// Changes smaller than this many percent are unchanged, even when the interval excludes zero.
    pub noise_pct: f64,
    /// A regression beyond this many percent fails the gate; `None`: nothing fails it.
    pub fail_on_regression_pct: Option<f64>,
}

impl Gate {
    /// Compares `new` with the baseline `old`, called `name`, under these settings.
    pub fn compare(&self, name: &str, old: &RunReport, new: &RunReport) -> reports::baseline::BaselineComparison {
        reports::baseline::BaselineComparison::new(name, old, new, self.noise_pct, self.fail_on_regression_pct)
    }
}

/// Checks that `name` is usable as a baseline name.
pub fn check_name(name: &str) -> Result<(), BaselineError> {
    let ok = !name.is_empty()
        && !name.starts_with('.')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
    if ok {
        Ok(())
    } else {
        Err(BaselineError::BadName(name.to_string()))
    }
}

/// Stores `report` as baseline `name` in `dir` (its results.json and reports), replacing any
/// earlier one; returns the folder.
pub fn save(report: &RunReport, dir: &Path, name: &str) -> Result<PathBuf, BaselineError> {
    check_name(name)?;
    let folder = dir.join(name);
    let stored = RunReport { baseline: None, ..report.clone() };
    reports::write_all(&stored, &folder)?;
    Ok(folder)
}

/// The names of the baselines saved in `dir`.
pub fn list(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.path().join(RESULTS_JSON).is_file())
        .filter_map(|e| e.file_name().into_string().ok())
        .collect();
    names.sort();
    names
}

/// Reads the run `spec` names: a results.json, a folder holding one, or a baseline in `dir`.
pub fn load(spec: &str, dir: &Path) -> Result<RunReport, BaselineError> {
    let candidates = [reports::results_path(Path::new(spec)), dir.join(spec).join(RESULTS_JSON)];
    match candidates.iter().find(|p| p.is_file()) {
        Some(found) => Ok(reports::read_results(found)?),
        None => {
            let names = list(dir);
            let known = if names.is_empty() {
                format!("{} holds no baselines yet (save one with `harness run --save-baseline NAME`)", dir.display())
            } else {
                format!("baselines in {}: {}", dir.display(), names.join(", "))
            };
            Err(BaselineError::NotFound { spec: spec.to_string(), known })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_plain_folder_names() {
        assert!(check_name("main").is_ok() && check_name("v1.2_rc-3").is_ok());
        for bad in ["", "../x", "a/b", ".hidden", "sp ace"] {
            assert!(check_name(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_missing_baseline_lists_the_saved_ones() {
        let dir = tempfile::tempdir().unwrap();
        let e = load("nope", dir.path()).unwrap_err().to_string();
        assert!(e.contains("no baselines yet") && e.contains("--save-baseline"), "{e}");
        std::fs::create_dir_all(dir.path().join("main")).unwrap();
        std::fs::write(dir.path().join("main").join(RESULTS_JSON), "{}").unwrap();
        let e = load("nope", dir.path()).unwrap_err().to_string();
        assert!(e.contains("baselines in") && e.contains("main"), "{e}");
    }
}
