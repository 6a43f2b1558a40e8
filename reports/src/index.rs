//! The index page of a folder of runs, as `harness open` serves it: one row per results.json
//! found (the folder itself and up to two levels below, so `runs/` with `runs/baselines/NAME/`
//! works), newest first, each linking to its report.

use crate::{read_results, ReportError, RESULTS_JSON};
use serde::Serialize;
use std::path::{Path, PathBuf};

/// One run in the index.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RunEntry {
    /// Folder path relative to the served folder, `/`-separated (`.` for the folder itself).
    pub name: String,
    /// URL path of the folder, ending in `/`.
    pub href: String,
    /// When the run started.
    pub created_at: String,
    /// Suite.
    pub suite: String,
    /// `browser/platform` of each run.
    pub labels: Vec<String>,
    /// Passed cases over all runs.
    pub passed: usize,
    /// Cases not passed (wrong, timed out, error, not run; not those unsupported on their platform).
    pub not_passed: usize,
    /// The baseline comparison in a few words, or empty.
    pub baseline: String,
}

/// What a scan found: the runs, and folders whose results.json could not be read.
#[derive(Debug, Default)]
pub struct Scan {
    /// Readable runs, newest first.
    pub runs: Vec<RunEntry>,
    /// `path: reason` for each unreadable results.json.
    pub problems: Vec<String>,
}

fn candidates(root: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut level = vec![root.to_path_buf()];
    for depth in 0..3 {
        let mut next = Vec::new();
        for dir in level {
            if dir.join(RESULTS_JSON).is_file() {
                found.push(dir.clone());
            }
            if depth < 2 {
                let mut children: Vec<PathBuf> = std::fs::read_dir(&dir)
                    .into_iter()
                    .flatten()
                    .flatten()
                    .map(|e| e.path())
                    .filter(|p| p.is_dir())
                    .collect();
                children.sort();
                next.extend(children);
            }
        }
        level = next;
    }
    found
}

/// Finds the runs under `root`.
pub fn scan(root: &Path) -> Scan {
    let mut scan = Scan::default();
    for dir in candidates(root) {
        let rel = dir.strip_prefix(root).unwrap_or(&dir);
        let parts: Vec<String> = rel.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect();
        let name = if parts.is_empty() { ".".to_string() } else { parts.join("/") };
        let href = if parts.is_empty() { "./".to_string() } else { format!("{}/", parts.iter().map(|p| encode(p)).collect::<Vec<_>>().join("/")) };
        match read_results(&dir.join(RESULTS_JSON)) {
            Ok(report) => {
                let (passed, total) = report
                    .runs
                    .iter()
                    .map(|r| (r.counts().passed, r.cases.len() - r.counts().unsupported - r.counts().unchecked))
                    .fold((0, 0), |(p, t), (a, b)| (p + a, t + b));
                let baseline = report
                    .baseline
                    .as_ref()
                    .map(|b| {
                        let c = b.counts();
                        format!("vs {}: {} regressed, {} improved", b.name, c.regressed, c.improved)
                    })
                    .unwrap_or_default();
                scan.runs.push(RunEntry {
                    name,
                    href,
                    created_at: report.created_at.clone(),
                    suite: report.settings.suite.clone(),
                    labels: crate::model::labels(&report),
                    passed,
                    not_passed: total - passed,
                    baseline,
                });
            }
            Err(e) => scan.problems.push(e.to_string()),
        }
    }
    scan.runs.sort_by(|a, b| b.created_at.cmp(&a.created_at));
    scan
}

/// Percent-encodes a path segment for a URL.
fn encode(segment: &str) -> String {
    segment
        .bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' | b'+' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// Renders the index page of `scan`, titled with the folder it came from.
pub fn render(title: &str, scan: &Scan) -> Result<String, ReportError> {
    let mut context = tera::Context::new();
    context.insert("title", title);
    context.insert("runs", &scan.runs);
    context.insert("problems", &scan.problems);
    crate::template::render_template("index.html", include_str!("../templates/index.html.tera"), context)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testdata::{case, report_with};

    #[test]
    fn finds_runs_and_baselines_newest_first_and_names_unreadable_ones() {
        let root = tempfile::tempdir().unwrap();
        let mut old = report_with(vec![("chrome", vec![case("a", &[1.0], true, true)])]);
        old.created_at = "2026-01-01T00:00:00Z".into();
        let mut new = report_with(vec![("firefox", vec![case("a", &[1.0], false, true)])]);
        new.created_at = "2026-02-01T00:00:00Z".into();
        crate::write_all(&old, &root.path().join("run one")).unwrap();
        crate::write_all(&new, &root.path().join("baselines/main")).unwrap();
        std::fs::create_dir_all(root.path().join("broken")).unwrap();
        std::fs::write(root.path().join("broken").join(RESULTS_JSON), "not json").unwrap();
        let scan = scan(root.path());
        let names: Vec<&str> = scan.runs.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(names, ["baselines/main", "run one"]);
        assert_eq!(scan.runs[1].href, "run%20one/");
        assert_eq!((scan.runs[0].passed, scan.runs[0].not_passed), (0, 1));
        assert_eq!(scan.problems.len(), 1);
        let html = render("runs", &scan).unwrap();
        // Tera escapes `/` in attributes as `&#x2F;`, which browsers read back as `/`.
        assert!(html.contains(r#"<a href="run%20one&#x2F;report.html">run one</a>"#), "{html}");
    }
}
