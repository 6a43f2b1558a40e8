//! The history step of a measuring run: the run added to the history store, and with
//! `--fail-on-regression=history`, gated on its series' change against the runs before it.

use crate::measure::revision;
use anyhow::{Context, Result};
use history::check::History;
use history::detect::Rule;
use history::{Added, RunRecord, Store};
use std::path::Path;

/// `path` made absolute, as the store keeps it.
pub fn absolute(path: &Path) -> String {
    std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf()).display().to_string()
}

/// What a measuring run does with the history: add itself to the store at `path` (its reports in
/// `out_dir`), and with `gate`, name every series whose newest run (this one) regressed. Returns
/// whether the gate fails. A store that cannot be written loses nothing (the reports are
/// written): a warning, or with the gate on, an error.
pub fn record(path: &Path, report: &reports::RunReport, out_dir: &Path, gate: Option<u32>) -> Result<bool> {
    let branch = revision::git(Path::new("."), &["rev-parse", "--abbrev-ref", "HEAD"]).filter(|b| b != "HEAD");
    let record = RunRecord::of(report, branch);
    let added = Store::open(path).and_then(|mut store| {
        let html = out_dir.join(reports::REPORT_HTML);
        let id = store.add(&record, Some(&absolute(&out_dir.join(reports::RESULTS_JSON))), html.is_file().then(|| absolute(&html)).as_deref())?;
        Ok((store, id))
    });
    let (store, id) = match (added, gate) {
        (Ok(added), _) => added,
        (Err(e), Some(_)) => return Err(e).context("--fail-on-regression=history: the run could not be added to the history"),
        (Err(e), None) => {
            eprintln!("warning: the run was not added to the history ({e}); its reports are written. --no-history skips the history");
            return Ok(false);
        }
    };
    let id = match id {
        Added::New(id) | Added::Already(id) => id,
    };
    eprintln!("history: run {id} in {} ({} points)", path.display(), record.points.len());
    let Some(window) = gate else { return Ok(false) };
    let read = History::read(&store)?;
    let (flagged, checked) = read.changes(&Rule::with_window(window), Some(id));
    let regressed = flagged.iter().filter(|f| f.regressed()).count();
    for f in &flagged {
        eprintln!("history: {}", f.line());
    }
    eprintln!("history gate: {checked} series of this run checked against the {window} runs before it: {regressed} regressed");
    Ok(regressed > 0)
}
