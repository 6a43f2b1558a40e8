//! The report stage: the report files, the summary printed, and the exit status a run ends with.

use crate::output::summary;
use anyhow::{Context, Result};
use reports::RunReport;
use std::process::ExitCode;
use std::time::Instant;

/// Exit status when the run itself could not happen.
pub const EXIT_UNUSABLE: u8 = 2;

/// Derives the roofline (each run's peaks, each case's fraction of them), writes the report
/// files, then prints the summary (or, with `json`, results.json) to stdout.
pub fn write_reports(report: &mut RunReport, out_dir: &std::path::Path, json: bool) -> Result<()> {
    reports::roofline::apply(report);
    let t = Instant::now();
    let written = reports::write_all(report, out_dir)
        .with_context(|| format!("writing the reports to {}", out_dir.display()))?;
    let report_ms = t.elapsed().as_secs_f64() * 1e3;
    if json {
        println!("{}", serde_json::to_string_pretty(report)?);
    } else {
        print!("{}", summary::table(report));
        println!("report writing {report_ms:.0} ms");
        for path in &written {
            println!("wrote {}", path.display());
        }
    }
    Ok(())
}

/// 0 when every case of every run passed without a crash; 2 when nothing at all was measured;
/// 1 otherwise (a case that passed only on a retry after its browser crashed counts, and so does
/// a browser that died between cases: the crash is news).
pub fn exit_code(report: &RunReport) -> ExitCode {
    let nothing_measured = report
        .runs
        .iter()
        .all(|r| r.cases.iter().all(|c| c.samples.is_empty()) && (r.failure.is_some() || r.status == reports::RunStatus::Unavailable));
    if nothing_measured {
        ExitCode::from(EXIT_UNUSABLE)
    } else if report.runs.iter().all(|r| r.counts().all_passed() && r.failure.is_none() && !r.cases.iter().any(|c| c.saw_a_crash()) && !r.errors.iter().any(|e| e.crashed)) {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A committed run in which every case passed (H200 evidence), as a report.
    fn all_passed() -> RunReport {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/hardware/h200-perception/perception-results.json");
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
    }

    #[test]
    fn a_browser_that_died_between_cases_is_news_for_the_exit_status() {
        let mut report = all_passed();
        assert_eq!(exit_code(&report), ExitCode::SUCCESS);
        // What the controller records when a session died and no case was running.
        let error = kernels::wire::PageError { crashed: true, fatal: true, case_id: None, ..kernels::wire::PageError::case("", "Firefox crashed: geckodriver exited".into()) };
        report.runs[0].errors.push(error);
        assert_eq!(exit_code(&report), ExitCode::from(1));
    }
}
