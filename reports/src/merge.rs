//! Merging the `results.json` of several report folders into one report, as a CI matrix produces
//! one folder per browser and OS.

use crate::error::ReportError;
use crate::folder::results_path;
use crate::json::read_results;
use crate::model::{RunReport, Settings};
use std::path::PathBuf;

/// Reads `results.json` from each folder and merges their runs into one report (as a CI matrix
/// produces one folder per browser and OS). Settings come from the first; the others' settings
/// must match in suite, seed and sampling mode (a steady batch's time per dispatch is not an
/// isolated dispatch's), since otherwise their cases are not comparable.
pub fn merge(dirs: &[PathBuf]) -> Result<RunReport, ReportError> {
    let mut merged: Option<RunReport> = None;
    for dir in dirs {
        let path = results_path(dir);
        let report = read_results(&path)?;
        match &mut merged {
            None => merged = Some(report),
            Some(m) => {
                let measured = |s: &Settings| format!("suite {} seed {} sampling {}", s.suite, s.seed, s.sampling.as_str());
                if measured(&m.settings) != measured(&report.settings) {
                    return Err(ReportError::Mismatch { path, found: measured(&report.settings), expected: measured(&m.settings) });
                }
                m.runs.extend(report.runs);
            }
        }
    }
    merged.ok_or(ReportError::NothingToMerge)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::folder::RESULTS_JSON;
    use std::path::Path;

    /// Parts of a CI matrix merge when they measured alike, and are refused, naming both, when
    /// they did not.
    #[test]
    fn only_runs_of_the_same_suite_seed_and_sampling_merge() {
        let dir = tempfile::tempdir().unwrap();
        let part = |name: &str, sampling: kernels::SamplingMode| {
            let mut r = read_results(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/hardware/h100-native/default-results.json")).unwrap();
            r.settings.sampling = sampling;
            let folder = dir.path().join(name);
            std::fs::create_dir_all(&folder).unwrap();
            std::fs::write(folder.join(RESULTS_JSON), serde_json::to_string(&r).unwrap()).unwrap();
            folder
        };
        let (a, b, c) = (part("a", kernels::SamplingMode::Steady), part("b", kernels::SamplingMode::Steady), part("c", kernels::SamplingMode::Isolated));
        assert_eq!(merge(&[a.clone(), b]).unwrap().runs.len(), 2);
        let e = merge(&[a, c]).unwrap_err().to_string();
        assert!(e.contains("sampling isolated, but the first report has suite default seed 1 sampling steady"), "{e}");
    }
}
